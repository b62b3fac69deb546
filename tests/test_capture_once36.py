"""A capture given with ``--capture`` to a view that prices from it and compares with it (``usage``,
``cache``, ``check``) is read once and aligned once: ``check`` prices by the pairings of its
comparison (:meth:`dsh_audit.gate._compare.CaptureCompare.priced`), ``usage`` and ``cache`` attribute
with the capture their pricing read and aligned (:func:`dsh_audit.cache.given_capture`). Opens are
counted with an audit hook in a subprocess, as ``tests/test_opens.py`` counts a log's, and calls to
:func:`dsh_audit.capture.align` with a profile hook (every module's name for it is the one function)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
SCENARIO = CORPUS / "live" / "f-fork"

_COUNTER = textwrap.dedent("""
    import json, os, sys
    from click.testing import CliRunner
    from dsh_audit.cli import cli

    from dsh_audit.capture import _align

    capture = os.path.realpath(sys.argv[2])
    counts = {}
    current = [None]
    aligning = _align.align.__code__

    def hook(event, args):
        if event == "open" and current[0] and isinstance(args[0], (str, bytes)):
            if os.path.realpath(os.fsdecode(args[0])) == capture:
                counts[current[0]]["opens"] += 1

    def profile(frame, event, arg):
        if event == "call" and frame.f_code is aligning and current[0]:
            counts[current[0]]["aligns"] += 1

    sys.addaudithook(hook)
    for name, argv in json.loads(sys.argv[1]):
        counts[name] = {"opens": 0, "aligns": 0}
        current[0] = name
        sys.setprofile(profile)
        result = CliRunner().invoke(cli, argv)
        sys.setprofile(None)
        current[0] = None
        counts[name]["exit"] = result.exit_code
    print(json.dumps(counts))
""")


def _har(wire: Path, target: Path) -> None:
    """``wire`` (a wire.jsonl) as a HAR file: each record an entry, its response the entry's content text."""
    entries = []
    for record in map(json.loads, wire.read_text(encoding="utf-8").splitlines()):
        response = record.get("response")
        entries.append({"startedDateTime": record.get("time") or "2026-12-06T10:00:00Z", "request": {
            "method": record["method"], "url": "https://api.example.com" + record["path"],
            "headers": [{"name": k, "value": v} for k, v in record["headers"].items()],
            "postData": {"mimeType": "application/json", "text": record["body"]}},
            "response": {"status": 200, "content": {"mimeType": "application/json", "text": json.dumps(response)}}})
    target.write_text(json.dumps({"log": {"version": "1.2", "entries": entries}}), encoding="utf-8")


@pytest.mark.skipif(not SCENARIO.is_dir(), reason="../shared/corpus is absent")
@pytest.mark.parametrize("name", ["wire.jsonl", "capture.har"])
def test_priced_and_compared_capture_is_read_once_and_aligned_once(tmp_path: Path, name: str) -> None:
    capture = tmp_path / name
    if name.endswith(".har"):
        _har(SCENARIO / "wire.jsonl", capture)
    else:
        shutil.copyfile(SCENARIO / "wire.jsonl", capture)
    logs = sorted(str(p) for p in (SCENARIO / "session-logs").glob("*.jsonl"))
    given = ["--capture", str(capture)]
    commands = [(name, [name, "--json", *logs, *given]) for name in ("usage", "cache", "check")]
    out = subprocess.run([sys.executable, "-c", _COUNTER, json.dumps(commands), str(capture)], capture_output=True,
                         text=True, check=True).stdout
    once = {"opens": 1, "aligns": 1, "exit": 0}
    assert json.loads(out) == {"usage": once, "cache": once, "check": once}


@pytest.mark.skipif(not SCENARIO.is_dir(), reason="../shared/corpus is absent")
def test_a_torn_capture_priced_is_still_refused_where_it_was(tmp_path: Path) -> None:
    """The read pricing made says a torn tail (it prices the whole records); attribution, to which a
    torn tail is malformed input, reads the file again for its error rather than take that read."""
    from dsh_audit.cache._captured_usage import given_capture
    from dsh_audit.capture import session_captures
    from dsh_audit.errors import CaptureError
    from dsh_audit.session import open_session

    capture = tmp_path / "wire.jsonl"
    capture.write_bytes((SCENARIO / "wire.jsonl").read_bytes() + b'{"method": "PO')
    sessions = [open_session(p) for p in sorted((SCENARIO / "session-logs").glob("*.jsonl"))]
    aligned = given_capture(sessions, capture)
    assert aligned is not None and len(aligned.said) == 1 and "torn tail" in aligned.said[0]
    failed: dict[str, CaptureError] = {}
    assert session_captures(sessions, aligned, failed=failed) == ({}, {})  # it stands for its file
    assert sorted(failed) == sorted(s.id for s in sessions)
    assert {str(e) for e in failed.values()} == {f"{capture}: line {len(capture.read_bytes().splitlines())}: "
                                                 "not a JSON record (Unterminated string starting at: line 1 column 12 "
                                                 "(char 11)) (hint: a wire.jsonl capture has one JSON object per line)"}
    # without a torn tail, the read and its alignment are taken as they are
    capture.write_bytes((SCENARIO / "wire.jsonl").read_bytes())
    aligned = given_capture(sessions, capture)
    assert aligned is not None and aligned.said == ()
    bodies, files = session_captures(sessions, aligned)
    assert sorted(bodies) == sorted(files) == sorted(s.id for s in sessions)
    assert set(files.values()) == {capture} and bodies == session_captures(sessions, capture)[0]
