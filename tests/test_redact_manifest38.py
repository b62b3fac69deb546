"""Session 38, fuzz round 20, defect 7: ``redact --check`` passed a manifest that named a capture it held no
diff verdicts for ("OK: every verdict ... matches", exit 0). A manifest inconsistent with itself (a capture
without diff verdicts, diff verdicts without a capture, an unrendered count its diff verdicts cannot hold, a
digest no verdicts have) is refused in one line naming the manifest and the key, exit 2 (bad input), as the
unrendered requests without diff verdicts already were; no JSON value in any key gives a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _cli import chat_log, invoke

REFUSED = "error: r.jsonl.manifest.json: not a dsh-audit redaction manifest"
TAMPERED = (" (hint: the manifest was edited or damaged after `dsh-audit redact` wrote it: ask the sender for the "
            "bundle again, or redact the log again with `dsh-audit redact LOG -o FILE`)")
OK = ("requests: match (1 request(s))\nbreaks: match (1 request(s), 0 break(s))\ncache: match (1 request(s))\n"
      "OK: every verdict of r.jsonl matches its manifest\n")
DIFF = {"count": 3, "digest": "sha256:" + "0" * 64}  # diff verdicts as redact records them (never compared here)


@pytest.fixture
def bundle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Path:
    """The manifest of ``r.jsonl``, a redacted one-turn chat log without a capture, in the current folder."""
    log = chat_log(tmp_path / "in" / "session.jsonl", "s-manifest38")
    monkeypatch.chdir(tmp_path)
    assert invoke(monkeypatch, capsys, "redact", str(log), "-o", "r.jsonl", "--salt", "m38")[0] == 0
    assert invoke(monkeypatch, capsys, "redact", "--check", "r.jsonl") == (0, OK, [])
    return tmp_path / "r.jsonl.manifest.json"


def _edit(manifest: Path, **changes: Any) -> None:
    data = json.loads(manifest.read_text("utf-8"))
    for key, value in changes.items():
        if value is ...:
            del data[key]
        else:
            data[key] = value
    manifest.write_text(json.dumps(data), "utf-8")


def _verdicts(manifest: Path, **changes: Any) -> dict[str, Any]:
    verdicts: dict[str, Any] = json.loads(manifest.read_text("utf-8"))["verdicts"]
    return {**verdicts, **changes}


@pytest.mark.parametrize("capture", ["wire.jsonl", "r.jsonl", "/etc/passwd", "../x.wire.jsonl", ""])
def test_a_capture_named_without_diff_verdicts_is_refused(bundle: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str], capture: str) -> None:
    _edit(bundle, capture=capture)
    assert invoke(monkeypatch, capsys, "redact", "--check", "r.jsonl") == (
        2, "", [REFUSED + ": it names a capture but no diff verdicts" + TAMPERED])


@pytest.mark.parametrize("capture", [None, ...])
def test_diff_verdicts_without_a_capture_are_refused_with_a_hint(bundle: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str],
                                                                 capture: object) -> None:
    _edit(bundle, capture=capture, verdicts=_verdicts(bundle, diff=DIFF))
    assert invoke(monkeypatch, capsys, "redact", "--check", "r.jsonl") == (
        2, "", [REFUSED + ": it records diff verdicts but names no capture" + TAMPERED])


@pytest.mark.parametrize(("changes", "why"), [
    ({"capture": 5}, ": its capture is not a file name"),
    ({"capture": False}, ": its capture is not a file name"),
    ({"capture": ["r.jsonl.wire.jsonl"]}, ": its capture is not a file name"),
    ({"capture": {"name": "w"}, "verdicts": "diff"}, ": its capture is not a file name"),
    ({"routes": True, "route_file": 7}, ": its route_file is not a file name"),
    ({"routes": True, "route_file": ["r.jsonl.routes.yml"]}, ": its route_file is not a file name"),
    ({"route_file": "r.jsonl.routes.yml"}, ": it names a route_file but its routes is false"),
    ({"routes": None}, ": its routes is neither true nor false"),
    ({"routes": "true"}, ": its routes is neither true nor false"),
    ({"parent": 5}, ": its parent is not a session id"),
    ({"parent": ""}, ": its parent is not a session id"),
    ({"parent": {"log": "/etc/passwd"}}, ": its parent is not a session id"),
    ({"salt": "s3cret"}, ": its salt is neither random nor given"),  # session 42: its kind and id, never the salt
    ({"salt_id": "s3cret"}, ": its salt_id is not a scrypt: digest"),
    ({"salt_id": 7}, ": its salt_id is not a scrypt: digest"),
    ({"salt_id": "scrypt:" + "0" * 31}, ": its salt_id is not a scrypt: digest"),  # session 42b: scrypt
    ({"salt_id": "blake2b:" + "0" * 32}, ": its salt_id is not a scrypt: digest"),  # review E: no dsh-audit wrote one
    ({"key_derivation": 3}, ": its key_derivation is none of 1, 2"),  # issue 17: 2 (scrypt); absent: 1 (older)
    ({"key_derivation": True}, ": its key_derivation is none of 1, 2"),
    ({"verdicts": None}, ": its verdicts are not an object of verdict categories"),
    ({"verdicts": [1, 2]}, ": its verdicts are not an object of verdict categories"),
    ({"unrendered": None}, ": its unrendered is not an object of a count and requests"),
    ({"unrendered": [0]}, ": its unrendered is not an object of a count and requests"),
])
def test_a_key_of_another_type_is_refused_by_name(bundle: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str], changes: dict[str, Any],
                                                  why: str) -> None:
    if changes.get("verdicts") == "diff":  # a capture's bundle: its diff verdicts beside it
        changes["verdicts"] = _verdicts(bundle, diff=DIFF)
    _edit(bundle, **changes)
    assert invoke(monkeypatch, capsys, "redact", "--check", "r.jsonl") == (2, "", [REFUSED + why + TAMPERED])


@pytest.mark.parametrize(("category", "verdict", "why"), [
    ("requests", None, ": its requests verdicts are not an object of a count and a digest"),
    ("cache", [1, "sha256:"], ": its cache verdicts are not an object of a count and a digest"),
    ("extra\x1b[2J", {"count": 1, "digest": "sha256:" + "0" * 64},
     ": its verdicts hold a category none of requests, breaks, cache, diff"),
    ("requests", {"count": 1, "digest": "sha256:abc"}, ": its requests verdicts' digest is not a sha256: digest"),
    ("breaks", {"count": 1, "digest": "SHA256:" + "A" * 64}, ": its breaks verdicts' digest is not a sha256: digest"),
    ("cache", {"count": 1, "digest": "sha256:" + "0" * 64 + "\n"},
     ": its cache verdicts' digest is not a sha256: digest"),
    ("cache", {"count": 1, "digest": "x" * (1 << 20)}, ": its cache verdicts' digest is not a sha256: digest"),
])
def test_a_verdict_no_redaction_records_is_refused(bundle: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str], category: str, verdict: object,
                                                   why: str) -> None:
    _edit(bundle, verdicts=_verdicts(bundle, **{category: verdict}))
    assert invoke(monkeypatch, capsys, "redact", "--check", "r.jsonl") == (2, "", [REFUSED + why + TAMPERED])


@pytest.mark.parametrize(("unrendered", "why"), [
    ({"count": 4, "requests": [0, 1, 2, None]}, ": its unrendered count 4 is more than its diff verdicts' count 3"),
    ({"count": 4}, ": its unrendered count 4 is more than its diff verdicts' count 3"),
    ({"count": 1, "requests": ["\x1b]0;x\x07"]}, ": its unrendered requests are not request indexes"),
    ({"count": 2, "requests": [1.0, -1]}, ": its unrendered requests are not request indexes"),
    ({"count": 1, "requests": [True]}, ": its unrendered requests are not request indexes"),
    ({"count": 1, "requests": [1, 2]}, ": its unrendered count is not the number of unrendered requests it lists"),
])
def test_unrendered_requests_their_diff_verdicts_cannot_hold_are_refused(
        bundle: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], unrendered: object,
        why: str) -> None:
    _edit(bundle, capture="r.jsonl.wire.jsonl", verdicts=_verdicts(bundle, diff=DIFF), unrendered=unrendered)
    assert invoke(monkeypatch, capsys, "redact", "--check", "r.jsonl") == (2, "", [REFUSED + why + TAMPERED])


def test_a_digest_or_log_the_bundle_disagrees_with_fails_or_is_refused(
        bundle: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A well-formed digest the verdicts do not have is a verdict that differs (exit 1); a format version or
    compression the log does not have is refused (exit 2)."""
    original = bundle.read_text("utf-8")
    _edit(bundle, verdicts=_verdicts(bundle, breaks={"count": 1, "digest": "sha256:" + "f" * 64}))
    assert invoke(monkeypatch, capsys, "redact", "--check", "r.jsonl") == (1, (
        "requests: match (1 request(s))\nbreaks: MISMATCH (1 request(s), 0 break(s))\ncache: match (1 request(s))\n"
        "FAILED: breaks verdicts differ from the manifest of r.jsonl\n"), [])
    bundle.write_text(original, "utf-8")
    _edit(bundle, compression="zstd")
    assert invoke(monkeypatch, capsys, "redact", "--check", "r.jsonl") == (2, "", [
        "error: r.jsonl.manifest.json: the manifest records a log of format v0, zstd, and the log is format v0, "
        "plain (hint: check the log the manifest was written with: redact records the format version and "
        "compression of the copy it writes)"])


#: Values of every JSON type, none of them what redact writes in a key the check reads.
VALUES: list[object] = [None, -1, 1.5, True, "", "\x1b[2J[red]" + "x" * (1 << 20), [], {}, {"a": [{"b": None}]}]
#: The keys the check reads, and where (a verdict's count and digest inside its category).
READ = ["tool", "format_version", "compression", "log", "capture", "routes", "route_file", "unrendered", "parent",
        "verdicts", "verdicts.requests", "verdicts.requests.count", "verdicts.requests.digest"]
#: A name of no file is written as null in these.
NULLABLE = {"capture", "route_file", "parent"}


#: Every key above and three the check does not read, in two halves (a test each, so that each is quick).
KEYS = [*READ, "version", "kept", "secrets"]


@pytest.mark.parametrize("keys", [KEYS[:8], KEYS[8:]], ids=["first", "second"])
def test_no_json_value_in_any_key_gives_a_traceback(bundle: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str], keys: list[str]) -> None:
    original = json.loads(bundle.read_text("utf-8"))
    seen: dict[tuple[str, int], tuple[int, int]] = {}
    for key in keys:
        for at, value in enumerate(VALUES):
            data = json.loads(json.dumps(original))
            *outer, last = key.split(".")
            place = data
            for part in outer:
                place = place[part]
            place[last] = value
            bundle.write_text(json.dumps(data), "utf-8")
            code, out, err = invoke(monkeypatch, capsys, "redact", "--check", "r.jsonl")
            seen[key, at] = code, len(err)
            if code == 0:
                assert (out, err) == (OK, []), (key, at)
            else:
                assert out == "" and len(err) == 1 and err[0].startswith("error: r.jsonl.manifest.json: "), (key, at)
                assert "Traceback" not in err[0] and "\x1b" not in err[0], (key, at)
    # every key the check reads refuses each value (but null where it names no file); the others are not read
    assert {k for k, (code, _) in seen.items() if code == 0} == (
        {(key, 0) for key in NULLABLE & set(keys)} | {(key, at) for key in {"version", "kept", "secrets"} & set(keys)
                                                      for at in range(len(VALUES))})
    assert {code for code, _ in seen.values()} == {0, 2}
