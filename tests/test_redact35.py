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

    watched = os.path.realpath(sys.argv[1])
    opened = []

    def hook(event, args):
        if event == "open" and isinstance(args[0], (str, bytes)):
            if os.path.realpath(os.fsdecode(args[0])) == watched:
                opened.append(event)

    sys.addaudithook(hook)
    result = CliRunner().invoke(cli, sys.argv[2:])
    print(json.dumps({"opens": len(opened), "exit": result.exit_code, "output": result.output}))
""")


def _opens(capture: Path, argv: list[str]) -> dict[str, object]:
    out = subprocess.run([sys.executable, "-c", _COUNTER, str(capture), *argv], capture_output=True, text=True,
                         check=True).stdout
    result: dict[str, object] = json.loads(out)
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


@pytest.mark.parametrize("fmt", ["wire-jsonl", "har"])
def test_redact_opens_the_capture_once(tmp_path: Path, fmt: str) -> None:
    log, capture = _session_and_capture(tmp_path, fmt)
    out = tmp_path / "out" / "session.jsonl"
    out.parent.mkdir()
    result = _opens(capture, ["redact", str(log), "-o", str(out), "--capture", str(capture), "--salt", "s"])
    # the loader's one open, sniffed and read there: a read of redact's own, or a separate sniff, fails here
    assert (result["opens"], result["exit"]) == (1, 0), result["output"]
    # a wire.jsonl lands where the views find a log's capture, a HAR as OUTPUT.<its name>
    written = out.parent / ("wire.jsonl" if capture.name == "wire.jsonl" else f"session.jsonl.{capture.name}")
    (redacted,) = load_capture(written)
    assert "authorization" not in redacted.headers and b"sk-proj-" not in written.read_bytes()


def test_a_wire_jsonl_is_rewritten_record_by_record_with_its_blank_lines_and_crlf_left_out(tmp_path: Path) -> None:
    log, capture = _session_and_capture(tmp_path, "wire-jsonl")
    record = capture.read_bytes().rstrip(b"\n")
    crlf = tmp_path / "cap" / "crlf.wire.jsonl"
    crlf.write_bytes(b"\n" + record + b"\r\n\r\n" + record + b"\r\n")
    out = tmp_path / "out" / "session.jsonl"
    out.parent.mkdir()
    result = _opens(crlf, ["redact", str(log), "-o", str(out), "--capture", str(crlf), "--salt", "s"])
    assert (result["opens"], result["exit"]) == (1, 0), result["output"]
    lines = (out.parent / "session.jsonl.crlf.wire.jsonl").read_bytes().split(b"\n")
    # each record one line of its own, as the loader counts them (blank lines and CRs are no records)
    assert len(lines) == 3 and lines[0] == lines[1] and lines[2] == b""
    assert [c.position for c in load_capture(out.parent / "session.jsonl.crlf.wire.jsonl")] == [0, 1]
