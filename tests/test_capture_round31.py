"""Session 31's fixes of fuzz round 12's capture and route defects (docs/hostile-inputs.md, round 12).

1. A capture body too large to parse under an address-space limit is the one error line, not a
   crash: orjson 3.13.0 segfaults (exit 139) when an allocation fails while it parses, so every
   parse of more than 1 MiB checks the room left under RLIMIT_AS first (``ensure_room``). Run for
   real in a subprocess whose address space is limited as in ``tests/test_capture_memory.py``.
2. A route the log's replay envelope contradicts is unknown, whatever API the envelope names (one
   dsh-audit has no renderer for included): never "a known route with no wire format", whose hint
   says no option renders it, though ``--adapter`` does.
3. A captured request whose DSH session header names a session of the logs is that session's, its
   body unreadable or not: it pairs (verdict ``different``, the note says why its body is no
   request body), never ``foreign``; ``redact`` counts no such record "of another session".
"""

from __future__ import annotations

import base64
import gzip
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from _cli import chat_log, invoke, short_salt
from test_piai_images import reply

from dsh_audit.session import open_session
from dsh_audit.testing import LogBuilder

needs_proc = pytest.mark.skipif(not Path("/proc/self/statm").exists(),
                                reason="the address-space limit is measured from /proc (Linux)")

# -- 1. a body orjson cannot parse in the address space left -----------------------------------------

#: Run the CLI with its address space (``argv[1]`` ``AS``; ``DATA``: its data segment) limited to its
#: size once imported plus ``argv[2]`` bytes.
LIMITED = textwrap.dedent("""
    import resource, sys

    limit, headroom = sys.argv.pop(1), int(sys.argv.pop(1))
    from dsh_audit.cli import main

    field = {"AS": "VmSize:", "DATA": "VmData:"}[limit]
    with open("/proc/self/status", encoding="ascii") as status:
        size = next(int(line.split()[1]) * 1024 for line in status if line.startswith(field))
    which = getattr(resource, "RLIMIT_" + limit)
    resource.setrlimit(which, (size + headroom, size + headroom))
    sys.argv[0] = "dsh-audit"
    main()
""")
#: orjson needs about 140 MiB for the body below: with this room left and no check, it crashed in
#: each case below (exit 139; with 80 MiB, or 160 MiB, its allocation failed cleanly: exit 2)
SMALL = 120 << 20
MESSAGES = 200_000  # a 6 MB body: {"role": "user", "content": "a"} 200,000 times
TOO_LARGE = "the capture does not fit in memory (hint: compare a smaller capture, e.g. one session's requests)"


def _limited(headroom: int, *args: str, limit: str = "AS") -> tuple[int, str, list[str]]:
    done = subprocess.run([sys.executable, "-c", LIMITED, limit, str(headroom), *args], capture_output=True,
                          text=True, timeout=60)
    return done.returncode, done.stdout, done.stderr.splitlines()


def _big_body() -> bytes:
    return json.dumps({"model": "deepseek-v4-flash",
                       "messages": [{"role": "user", "content": "a"}] * MESSAGES}).encode()


def _big_capture(tmp_path: Path, kind: str) -> Path:
    """A capture of session s1 whose one body holds MESSAGES messages: a wire.jsonl or a body folder."""
    if kind == "wire-jsonl":
        wire = tmp_path / "wire.jsonl"
        record = {"method": "POST", "path": "/chat/completions", "headers": {"x-deepseek-harness-session-id": "s1"},
                  "body": _big_body().decode()}
        wire.write_text(json.dumps(record) + "\n", encoding="utf-8")
        return wire
    folder = tmp_path / "bodies"
    folder.mkdir()
    (folder / "1.json").write_bytes(_big_body())
    return folder


@needs_proc
@pytest.mark.parametrize(("kind", "command", "limit"), [
    ("wire-jsonl", "diff", "AS"), ("body", "diff", "AS"), ("body", "check", "AS"),
    ("body", "diff", "DATA"),  # ulimit -d: the same crash without the check
])
def test_a_body_too_large_to_parse_in_the_room_left_is_one_line(tmp_path: Path, kind: str, command: str,
                                                                limit: str) -> None:
    log = chat_log(tmp_path / "session-1" / "session.jsonl", "s1")
    capture = _big_capture(tmp_path, kind)
    assert _limited(SMALL, command, str(log), "--capture", str(capture), limit=limit) == (
        2, "", [f"error: {capture}: {TOO_LARGE}"])


@needs_proc
def test_a_big_body_that_fits_is_read(tmp_path: Path) -> None:
    """The check asks for the room orjson needs, it does not refuse big bodies: a 2 MB body (a JSON
    string: paired by its session header, ``different``, and cheap to compare) is read with twice
    the room. (The room left is the limit less the address space mapped, freed memory the allocator
    keeps included: the check errs towards refusing.)"""
    log = chat_log(tmp_path / "session-1" / "session.jsonl", "s1")
    wire = tmp_path / "wire.jsonl"
    record = {"method": "POST", "path": "/chat/completions", "headers": {"x-deepseek-harness-session-id": "s1"},
              "body": json.dumps("a" * 2_000_000)}
    wire.write_text(json.dumps(record) + "\n", encoding="utf-8")
    code, out, err = _limited(2 * SMALL, "diff", str(log), "--capture", str(wire), "--json")
    assert (code, err, [(row["verdict"], row["note"]) for row in map(json.loads, out.splitlines())]) == (1, [], [
        ("different", "session header and order; captured body is a JSON string, not a request object")])


# -- 2. an envelope contradicting the catalog on an API dsh-audit does not render --------------------

def _contradicted(path: Path, api: str) -> Path:
    """A one-turn pi-ai chat on provider ``openai``, model ``gpt-4o`` (catalog: openai-responses),
    whose replay envelope names ``api``."""
    b = LogBuilder(session_id="s-pi", provider="openai", model="gpt-4o", system="Sys.", tools=[],
                   reasoning_effort=None, max_tokens=1000, adapter_defaults={"maxTokens": True})
    with b.turn("Hi."), b.step():
        reply(b, "openai", "gpt-4o", api, "Hello.")
    b.write_jsonl(path, packed=False)
    return path


_UNKNOWN = ("request 0 cannot be rendered: unknown route: provider 'openai': pi-ai's replay envelope at seq {seq} "
            "shows api '{api}' but pi-ai's catalog says 'openai-responses'; pass --routes FILE with the route "
            "configuration DSH had, or --adapter (hint: pass --routes FILE with the route configuration DSH had, "
            "or force a wire format with --adapter deepseek|anthropic|openai|responses)")


@pytest.mark.parametrize("api", ["bedrock-converse-stream", "google-vertex", "__proto__", ""])
def test_a_contradicted_route_on_an_api_without_renderer_is_unknown(api: str, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    log = _contradicted(tmp_path / "s" / "session.jsonl", api)
    seq = next(e["seq"] for e in map(json.loads, log.read_text("utf-8").splitlines())
               if e.get("type") == "assistant/message")
    assert invoke(monkeypatch, capsys, "render", str(log), "0") == (
        2, "", [f"error: {log}:7 seq 5: " + _UNKNOWN.format(seq=seq, api=api)])
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "0", "--adapter", "responses")
    assert (code, err, json.loads(out)["model"]) == (0, [], "gpt-4o")  # what the hint offers works
    route = open_session(log).route(open_session(log).requests[0])
    assert (route.adapter, route.api, route.contradicted, route.no_wire_format) == (None, api, True, False)


# -- 3. captures of this session whose body is not a request body -----------------------------------

def _wire(tmp_path: Path, records: list[dict[str, Any]]) -> Path:
    wire = tmp_path / "wire.jsonl"
    wire.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return wire


def _record(body: Any, session: str | None = "s1") -> dict[str, Any]:
    record: dict[str, Any] = {"method": "POST", "path": "/chat/completions",
                              "headers": {} if session is None else {"x-deepseek-harness-session-id": session}}
    if isinstance(body, bytes):  # bytes that are no UTF-8 text, stored as a capture writer stores them
        record["body_base64"] = base64.b64encode(body).decode()
    elif body is not ...:
        record["body"] = body
    return record


def _rows(out: str) -> list[tuple[Any, ...]]:
    return [(row["index"], row["kind"], row["verdict"], row["capture_position"], row["note"], row["first_offset"],
             row["differences"]) for row in map(json.loads, out.splitlines())]


_PAIRED = "session header and order; "


@pytest.mark.parametrize(("body", "note"), [
    ("not json {", "captured body is not JSON: Expecting value: line 1 column 1 (char 0)"),
    ("\x1b]0;x\x07", "captured body is not JSON: Expecting value: line 1 column 1 (char 0)"),
    (None, "the captured request has no body"),
    (..., "the captured request has no body"),
    ("[1]", "captured body is a JSON array, not a request object"),
    ("null", "captured body is JSON null, not a request object"),
    ('{"model": "deepseek-v4-flash"}', "captured body is a JSON object without messages"),
    # Python's codec text is no note (fuzz 24): said in dsh-audit's words, gzip data by what it is
    (b'{"a": "caf\xe9"}', "captured body is not UTF-8 text (byte 0xe9 at offset 10)"),
    (gzip.compress(b"{}", mtime=0), "captured body is gzip data its headers do not name (no Content-Encoding: gzip)"),
])
def test_an_unreadable_body_of_this_session_is_paired_different(body: Any, note: str, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Paired with the session's request, ``different``: nothing to compare (no offset, no differences)."""
    log = chat_log(tmp_path / "session-1" / "session.jsonl", "s1")
    wire = _wire(tmp_path, [_record(body)])
    code, out, err = invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(wire), "--json")
    assert (code, err, _rows(out)) == (1, [], [(0, "loop", "different", 0, _PAIRED + note, None, [])])
    code, out, err = invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(wire))
    assert (code, err, out.splitlines()[-1]) == (
        1, [], "1 request(s): 0 identical, 1 different; 0 capture(s) unexplained, 0 foreign: FAILED")


def test_unreadable_bodies_pair_after_readable_ones_and_name_their_session(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """One request, four unreadable captures: of this session (paired), of this session again (no
    request left: unmatched), of another session (foreign, by that session), with no session header
    (not an LLM call)."""
    log = chat_log(tmp_path / "session-1" / "session.jsonl", "s1")
    wire = _wire(tmp_path, [_record("x"), _record("y"), _record("z", "s2"), _record("w", None)])
    code, out, err = invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(wire), "--json")
    why = "captured body is not JSON: Expecting value: line 1 column 1 (char 0)"
    assert (code, err) == (1, [])
    assert _rows(out) == [
        (0, "loop", "different", 0, _PAIRED + why, None, []),
        (None, "other", "unmatched", 1, f"no rebuilt request of session s1 left for POST /chat/completions; {why}",
         None, []),
        (None, "other", "foreign", 2, "foreign: session s2 is not among the logs given", None, []),
        (None, "other", "foreign", 3, "not an LLM call (kind other)", None, []),
    ]


def test_redact_counts_no_unreadable_body_of_this_session_as_another_sessions(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    log = chat_log(tmp_path / "session-1" / "session.jsonl", "s1")
    wire = _wire(tmp_path, [_record("x"), _record("y"), _record("z", "s2"), _record("w", None)])
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    code, out, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(out_dir / "o.jsonl"), "--salt", "s",
                            "--capture", str(wire))
    assert (code, err) == (0, [
        "note: 3 of 4 captured request(s) match none of the log's requests (1 of another session, 1 not LLM "
        "call(s)): they are redacted as content, and prove nothing about this log", short_salt("s")])
    assert out.splitlines()[-3] == "verdicts of requests, breaks, cache, diff: unchanged"
