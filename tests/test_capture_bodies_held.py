"""A capture is never held whole: ``wire.jsonl``, HAR and body-folder captures keep, per request,
where its body is (read again by offset: a line, a HAR entry, a file), its digest and size and what
pairing reads of it; a body is read again only where a request is compared (``diff``, ``check``) or
rewritten (``redact --capture``).

The counts below are of the loader's re-reads (a counter on it), exact: a foreign capture, or one
nothing pairs, is never read again; each paired capture is read once.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli import invoke
from _golden import CORPUS

from dsh_audit.capture import CaptureRead, load_capture, read_capture
from dsh_audit.capture import _reading
from dsh_audit.errors import CaptureError

SCENARIO = CORPUS / "live" / "b-tools"
pytestmark = pytest.mark.skipif(not SCENARIO.is_dir(), reason="../shared/corpus is absent")
COPIES = 3  # the session's 9 requests, then twice more as sent by two other sessions (foreign)
PAIRED = 9


def _log() -> Path:
    return next((SCENARIO / "session-logs").glob("*.jsonl"))


def _wire(tmp_path: Path) -> Path:
    """The scenario's capture, then COPIES - 1 copies of it whose session header names other sessions."""
    records = [json.loads(line) for line in (SCENARIO / "wire.jsonl").read_text(encoding="utf-8").splitlines()]
    lines = [json.dumps(r) for r in records]
    for copy in range(1, COPIES):
        for record in records:
            headers = {**record["headers"], "x-deepseek-harness-session-id": f"session-other-{copy}"}
            lines.append(json.dumps({**record, "headers": headers}))
    wire = tmp_path / "wire.jsonl"
    wire.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return wire


def _har_file(tmp_path: Path) -> Path:
    """The capture of :func:`_wire` as a HAR file, each record an entry."""
    records = [json.loads(line) for line in _wire(tmp_path).read_text(encoding="utf-8").splitlines()]
    har = tmp_path / "capture.har"
    har.write_text(json.dumps({"log": {"version": "1.2", "entries": [
        {"request": {"method": "POST", "url": "http://127.0.0.1" + r["path"],
                     "headers": [{"name": k, "value": v} for k, v in r["headers"].items()],
                     "postData": {"mimeType": "application/json", "text": r["body"]}}} for r in records]}}),
        encoding="utf-8")
    return har


def _made(tmp_path: Path, kind: str) -> Path:
    return {"wire-jsonl": _wire, "body-folder": _folder, "har": _har_file}[kind](tmp_path)


def _folder(tmp_path: Path) -> Path:
    """The capture of :func:`_wire` as a folder of bodies with sidecars."""
    folder = tmp_path / "bodies"
    folder.mkdir()
    for number, line in enumerate(_wire(tmp_path).read_text(encoding="utf-8").splitlines(), start=1):
        record = json.loads(line)
        (folder / f"{number}.json").write_text(record["body"], encoding="utf-8")
        (folder / f"{number}.meta.json").write_text(json.dumps({"method": record["method"], "path": record["path"],
                                                                "headers": record["headers"]}), encoding="utf-8")
    return folder


@pytest.fixture
def rereads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every body read again from a capture file (the loaders' re-readers, counted)."""
    seen: list[str] = []
    for reader in (_reading._RecordBody, _reading._FileBody):
        original = reader.__call__

        def counted(self: object, original: object = original) -> bytes:
            seen.append(repr(self))
            return original(self)  # type: ignore[operator, no-any-return]

        monkeypatch.setattr(reader, "__call__", counted)
    return seen


@pytest.mark.parametrize("kind", ["wire-jsonl", "body-folder", "har"])
def test_a_loaded_capture_holds_no_body(tmp_path: Path, kind: str) -> None:
    capture = _made(tmp_path, kind)
    loaded = load_capture(capture)
    expected = [json.loads(line)["body"].encode() for line in _wire(tmp_path).read_text(encoding="utf-8").splitlines()]
    assert len(loaded) == PAIRED * COPIES
    assert [c.held for c in loaded] == [None] * len(loaded)
    assert [c.body for c in loaded] == expected  # read again, byte for byte
    assert [c.size for c in loaded] == [len(b) for b in expected]


def test_a_har_document_handed_over_holds_no_body(tmp_path: Path) -> None:
    """The document ``read_capture`` hands over (``redact --capture`` rewrites it) keeps no body text."""
    read: CaptureRead = read_capture(_har_file(tmp_path))
    assert [c.held for c in read.requests] == [None] * (PAIRED * COPIES)
    assert read.records[0]["log"]["version"] == "1.2"
    assert [e["request"]["postData"]["text"] for e in read.records[0]["log"]["entries"]] == [None] * (PAIRED * COPIES)


@pytest.mark.parametrize("kind", ["wire-jsonl", "body-folder", "har"])
@pytest.mark.parametrize("command", ["diff", "check"])
def test_only_paired_bodies_are_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str], rereads: list[str], kind: str,
                                           command: str) -> None:
    capture = _made(tmp_path, kind)
    code, out, err = invoke(monkeypatch, capsys, command, str(_log()), "--capture", str(capture), "--json")
    priced = ["note: 1 request(s) priced from the capture's usage (their log holds none)"]  # check prices, diff not
    assert (code, err) == (0, priced if command == "check" and kind == "wire-jsonl" else [])
    if command == "diff":
        rows = [json.loads(line) for line in out.splitlines()]
        assert [r["verdict"] for r in rows] == ["identical"] * PAIRED + ["foreign"] * (PAIRED * (COPIES - 1))
    # each paired body once (diff compares it; check compares it, and attribution takes the same bytes)
    assert len(rereads) == PAIRED * (1 if command == "diff" else CHECK_READS), rereads


#: How often ``check`` reads each paired body: the comparison, and the captured bodies attribution compares.
CHECK_READS = 2


@pytest.mark.parametrize("kind", ["wire-jsonl", "body-folder"])
def test_redact_reads_each_body_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str], rereads: list[str], kind: str) -> None:
    capture = _wire(tmp_path) if kind == "wire-jsonl" else _folder(tmp_path)
    out = tmp_path / "out" / "redacted.jsonl"
    out.parent.mkdir()
    code, _, err = invoke(monkeypatch, capsys, "redact", str(_log()), "-o", str(out), "--capture", str(capture),
                          "--any-capture", "--salt", "s")
    assert code == 0, err
    # every record is rewritten, its body read when it is; each paired one is also compared with the
    # original log's request and the redacted log's (the verdicts redact proves)
    assert len(rereads) == PAIRED * COPIES + 2 * PAIRED, rereads


def test_a_body_changed_after_loading_is_one_error(tmp_path: Path) -> None:
    """A body read again is the body loaded (its digest), or the one-line error; the records here
    have no body_sha256, which the loader checks too."""
    wire = tmp_path / "wire.jsonl"
    records = [{"method": "POST", "path": "/chat/completions", "body": json.dumps({"messages": [text]})}
               for text in ("one", "two")]
    wire.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    loaded = load_capture(wire)
    wire.write_text(wire.read_text(encoding="utf-8").replace("two", "TWO"), encoding="utf-8")
    assert loaded[0].body == records[0]["body"].encode()
    with pytest.raises(CaptureError) as caught:
        loaded[1].body
    assert str(caught.value) == (f"{wire}: line 2: the body changed since the capture was read "
                                 "(hint: compare a capture no one is writing to)")


def test_at_most_a_few_capture_files_stay_open(tmp_path: Path) -> None:
    """Each wire.jsonl keeps its descriptor for its bodies to be read again, but only the
    _OPEN_CAPTURES read last do (thousands of logs, each with its own capture, hold their rows at
    once): the others are opened again when read."""
    captures = []
    for number in range(_reading._OPEN_CAPTURES + 4):
        wire = tmp_path / f"{number}.jsonl"
        wire.write_text(json.dumps({"method": "POST", "path": "/chat/completions", "body": f'{{"n": {number}}}'})
                        + "\n", encoding="utf-8")
        captures.append(load_capture(wire)[0])
    assert [c.body for c in captures] == [f'{{"n": {n}}}'.encode() for n in range(len(captures))]
    assert [c.body for c in reversed(captures)][-1] == b'{"n": 0}'  # closed, then opened again
    assert len([c for c in captures if c.reread.file.fd is not None]) == _reading._OPEN_CAPTURES  # type: ignore[union-attr]
