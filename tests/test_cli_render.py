"""``dsh-audit render``: exact bytes on stdout, exit codes 0 / 2 through the real CLI edge."""

from __future__ import annotations

import hashlib
import json
import sys

import pytest

from _terminal import read_terminal
from dsh_audit.cli import cli
from dsh_audit.cli._common import run_guarded

from _golden import CORPUS

SCENARIO = CORPUS / "live" / "e-compaction"
pytestmark = pytest.mark.skipif(not SCENARIO.is_dir(), reason="../shared/corpus is absent")


def run(monkeypatch, capsysbinary, *args):
    monkeypatch.setattr(sys, "argv", ["dsh-audit", "render", *map(str, args)])
    code = run_guarded(cli)
    out = capsysbinary.readouterr()
    return code, out.out, out.err.decode("utf-8")


@pytest.fixture()
def log():
    return next((SCENARIO / "session-logs").glob("*.jsonl"))


@pytest.fixture()
def captured():
    return [json.loads(line) for line in (SCENARIO / "wire.jsonl").read_text().splitlines()]


def test_render_writes_the_captured_body(monkeypatch, capsysbinary, log, captured):
    code, out, err = run(monkeypatch, capsysbinary, log, 1)
    assert (code, err) == (0, "")
    assert out == captured[0]["body"].encode("utf-8")
    assert hashlib.sha256(out).hexdigest() == captured[0]["body_sha256"]


def test_render_headers(monkeypatch, capsysbinary, log, captured):
    code, out, _ = run(monkeypatch, capsysbinary, log, 0, "--headers", "--harness-version", "1.2.3")
    head, body = out.split(b"\n\n", 1)
    assert code == 0
    assert head.decode().splitlines() == [
        "POST /chat/completions", "content-type: application/json", "accept: text/event-stream",
        "user-agent: deepseek-harness/1.2.3 (+https://github.com/deepseek-ai/deepseek-harness)",
        f"x-deepseek-harness-session-id: {captured[1]['headers']['x-deepseek-harness-session-id']}"]
    assert body == captured[1]["body"].encode("utf-8")  # request 0 is the title call


def test_compaction_needs_and_takes_the_instruction(monkeypatch, capsysbinary, log, captured, tmp_path):
    code, out, err = run(monkeypatch, capsysbinary, log, 7)
    assert (code, out) == (2, b"")
    assert "compaction instruction" in err and "--compaction-instruction" in err
    record = next(r for r in captured if r["kind"] == "compaction")
    instruction = tmp_path / "instruction.txt"
    instruction.write_text(json.loads(record["body"])["messages"][-1]["content"], encoding="utf-8")
    code, out, _ = run(monkeypatch, capsysbinary, log, 7, "--compaction-instruction", instruction)
    assert code == 0 and out == record["body"].encode("utf-8")


def test_bad_index_and_missing_adapter_exit_2(monkeypatch, capsysbinary, log):
    code, out, err = run(monkeypatch, capsysbinary, log, 99)
    assert (code, out) == (2, b"") and "request 99 does not exist: the log has 9 request(s)" in err
    code, _, err = run(monkeypatch, capsysbinary, log, 1, "--adapter", "nope")
    assert code == 2 and "nope" in err


def test_render_to_a_terminal_shows_what_a_terminal_would_act_on_escaped(tmp_path):
    """The exact body goes to a pipe or a file; a terminal gets C1 controls and bidi overrides from
    the log (JSON.stringify leaves them raw) escaped, and a note saying how to get the bytes."""
    import os
    import pty
    import subprocess

    from dsh_audit.testing import LogBuilder

    b = LogBuilder(session_id="tty")
    with b.turn("right-to-left \u202e then CSI \u009b31m"):
        with b.step():
            b.assistant("ok")
    log = b.write_jsonl(tmp_path / "session.jsonl")
    piped = subprocess.run([sys.executable, "-m", "dsh_audit", "render", str(log), "0"], capture_output=True,
                           check=True).stdout
    assert "\u202e".encode() in piped and "\u009b".encode() in piped  # the exact bytes
    main, child = pty.openpty()
    with subprocess.Popen([sys.executable, "-m", "dsh_audit", "render", str(log), "0"], stdout=child,
                          stderr=subprocess.PIPE, env={**os.environ, "DSH_AUDIT_PAGER": ""}) as process:  # no pager
        os.close(child)
        written = read_terminal(main)
        err = process.stderr.read().decode() if process.stderr else ""
    os.close(main)
    shown = written.decode().replace("\r\n", "\n")
    assert shown == piped.decode().replace("\u202e", "\\u202e").replace("\u009b", "\\u009b") + "\n"
    assert err == ("note: stdout is a terminal: characters it would act on are shown escaped; pipe or redirect "
                   "the output for the exact body bytes\n")


def test_render_headers_writes_each_header_byte_the_wire_carries(monkeypatch, capsysbinary, tmp_path):
    """fetch sends a header value one byte per character (latin-1, a ByteString), trimmed of HTTP
    whitespace: a pipe gets those bytes, not UTF-8; a C1 control stays escaped as in all of render's
    output, and a terminal gets the characters as text (pi-ai 0.82.1 sent ``s\\xe9ssion``, ``\\xe9t\\xe9``)."""
    from dsh_audit.cli._render import _header_block
    from dsh_audit.testing import LogBuilder

    b = LogBuilder(session_id="s\u00e9ssion ", provider="openai", model="gpt-5", reasoning_effort=None,
                   max_tokens=None, context_window=None)
    with b.turn("Hi."):
        with b.step():
            b.assistant("Hello.")
    with b.turn("Again."):
        with b.step():
            b.assistant("Yes.")
    log = b.write_jsonl(tmp_path / "s.jsonl")
    routes = tmp_path / "routes.json"
    routes.write_text(json.dumps({"providers": {"openai": {"headers": {"X-Team": "\t\u00e9t\u00e9\u0085 "}}}}))
    code, out, err = run(monkeypatch, capsysbinary, log, 0, "--headers", "--routes", routes, "--adapter", "responses")
    assert (code, err) == (0, "")
    assert out.split(b"\n\n", 1)[0].split(b"\n") == [
        b"POST /v1/responses", b"accept: application/json", b"x-stainless-retry-count: 0", b"x-stainless-lang: js",
        b"x-stainless-package-version: 6.26.0", b"x-stainless-os: Linux", b"x-stainless-arch: x64",
        b"x-stainless-runtime: node", b"x-stainless-runtime-version: v24.19.0", b"session_id: s\xe9ssion",
        b"x-client-request-id: s\xe9ssion", b"x-team: \xe9t\xe9\\u0085",
        b"user-agent: deepseek-harness/0.1.0-rc.8 (+https://github.com/deepseek-ai/deepseek-harness)",
        b"content-type: application/json"]
    assert b'"prompt_cache_key":"s\xc3\xa9ssion "' in out  # the body is UTF-8 (and keeps the space)
    assert _header_block("POST", "/v1/x", (("x-team", "\u00e9t\u00e9\u0085"),), terminal=True) == \
        "POST /v1/x\nx-team: \u00e9t\u00e9\\u0085\n\n"
