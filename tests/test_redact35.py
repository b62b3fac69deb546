"""Session 35: ``redact --capture`` opens and reads the capture file once.

The capture loader (:func:`dsh_audit.capture.read_capture`) sniffs its format (the loaders' own
predicates, :data:`dsh_audit.capture.LOADERS`) and reads it once, handing back the captured requests
the verdicts compare and each parsed record (its body left out), from which redact rewrites the
capture record by record. Earlier in this session redact opened the file itself to sniff and rewrite
it, and the loader opened it once more (2 opens); before that a third open sniffed the format alone,
and the file was read whole into memory (and split into lines) beside the loaded requests. Counted with an audit hook on ``open``, in a subprocess so the hook does
not outlive the test, as ``tests/test_opens.py`` counts a log's opens.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _cli import chat_log

from dsh_audit.capture import load_capture
from dsh_audit.session import open_session, route_renderer

_COUNTER = textwrap.dedent("""
    import json, os, sys
    from click.testing import CliRunner
    from dsh_audit.cli import cli

    runs = []
    watched = [None]

    def hook(event, args):
        if event == "open" and watched[0] and isinstance(args[0], (str, bytes)):
            if os.path.realpath(os.fsdecode(args[0])) == watched[0]:
                runs[-1]["opens"] += 1

    sys.addaudithook(hook)
    for capture, argv in json.loads(sys.argv[1]):
        runs.append({"opens": 0})
        watched[0] = os.path.realpath(capture)
        result = CliRunner().invoke(cli, argv)
        watched[0] = None
        runs[-1].update(exit=result.exit_code, output=result.output)
    print(json.dumps(runs))
""")


def _opens(*runs: tuple[Path, list[str]]) -> list[dict[str, object]]:
    """Each run's opens of its capture, exit code and output: ``dsh-audit ARGV`` for each
    ``(capture, argv)`` of ``runs``, in turn, in one subprocess (one start for them all)."""
    jobs = json.dumps([(str(capture), argv) for capture, argv in runs])
    out = subprocess.run([sys.executable, "-c", _COUNTER, jobs], capture_output=True, text=True, check=True).stdout
    result: list[dict[str, object]] = json.loads(out)
    return result


def _session_and_capture(tmp_path: Path, fmt: str) -> tuple[Path, Path]:
    """A one-request log and a capture of its request's rendered body (with an auth header), as a
    ``wire.jsonl`` or a HAR file, in a folder of its own (beside the log or in the folder above it, the
    capture would also be peeked at as a possible child log, as ``breaks`` peeks at the files there)."""
    log = chat_log(tmp_path / "logs" / "in" / "session.jsonl", "opened-once")
    session = open_session(log)
    body = route_renderer([session])(session.requests[0], {}).decode("utf-8")
    (tmp_path / "cap").mkdir()
    headers = {"authorization": "Bearer sk-proj-Zq7Lm2Xv9Pw4Zq7Lm2Xv9Pw4", "content-type": "application/json"}
    if fmt == "wire-jsonl":
        capture = tmp_path / "cap" / "wire.jsonl"
        capture.write_text(json.dumps({"method": "POST", "path": "/chat/completions", "headers": headers,
                                       "body": body}) + "\n", encoding="utf-8")
    else:
        capture = tmp_path / "cap" / "capture.har"
        request = {"method": "POST", "url": "https://api.deepseek.com/chat/completions",
                   "headers": [{"name": k, "value": v} for k, v in headers.items()], "postData": {"text": body}}
        capture.write_text(json.dumps({"log": {"version": "1.2", "entries": [{"request": request}]}}), encoding="utf-8")
    return log, capture


def _crlf(tmp_path: Path) -> tuple[Path, Path]:
    """A one-request log and its capture as a ``wire.jsonl`` holding the record twice, CRLF line
    ends and blank lines around them."""
    log, capture = _session_and_capture(tmp_path, "wire-jsonl")
    record = capture.read_bytes().rstrip(b"\n")
    crlf = tmp_path / "cap" / "crlf.wire.jsonl"
    crlf.write_bytes(b"\n" + record + b"\r\n\r\n" + record + b"\r\n")
    return log, crlf


@pytest.fixture(scope="module")
def redacted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, dict[str, object]]]:
    """Each case's output log and its run (:func:`_opens`): ``redact LOG -o OUT --capture C --salt s``
    of a ``wire.jsonl``, a HAR file and a CRLF ``wire.jsonl``, each in a folder of its own, counted in
    one subprocess."""
    cases = {}
    for case in ("wire-jsonl", "har", "crlf"):
        folder = tmp_path_factory.mktemp(case)
        log, capture = _crlf(folder) if case == "crlf" else _session_and_capture(folder, case)
        out = folder / "out" / "session.jsonl"
        out.parent.mkdir()
        cases[case] = (out, capture, ["redact", str(log), "-o", str(out), "--capture", str(capture), "--salt", "s"])
    runs = _opens(*((capture, argv) for _, capture, argv in cases.values()))
    return {case: (out, run) for (case, (out, _, _)), run in zip(cases.items(), runs)}


@pytest.mark.parametrize("fmt", ["wire-jsonl", "har"])
def test_redact_opens_the_capture_once(redacted: dict[str, tuple[Path, dict[str, object]]], fmt: str) -> None:
    out, result = redacted[fmt]
    # the loader's one open, sniffed and read there: a read of redact's own, or a separate sniff, fails here
    assert (result["opens"], result["exit"]) == (1, 0), result["output"]
    # a wire.jsonl lands where the views find a log's capture, a HAR as OUTPUT.<its name>
    written = out.parent / ("wire.jsonl" if fmt == "wire-jsonl" else "session.jsonl.capture.har")
    (redacted_capture,) = load_capture(written)
    assert "authorization" not in redacted_capture.headers and b"sk-proj-" not in written.read_bytes()


def test_a_wire_jsonl_is_rewritten_record_by_record_with_its_blank_lines_and_crlf_left_out(
        redacted: dict[str, tuple[Path, dict[str, object]]]) -> None:
    out, result = redacted["crlf"]
    assert (result["opens"], result["exit"]) == (1, 0), result["output"]
    lines = (out.parent / "session.jsonl.crlf.wire.jsonl").read_bytes().split(b"\n")
    # each record one line of its own, as the loader counts them (blank lines and CRs are no records)
    assert len(lines) == 3 and lines[0] == lines[1] and lines[2] == b""
    assert [c.position for c in load_capture(out.parent / "session.jsonl.crlf.wire.jsonl")] == [0, 1]
