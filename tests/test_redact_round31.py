"""Redaction round 31 (issues 15 and 17, fuzz round 11): the redacted copy writes what a terminal
would act on (C1 controls, DEL, bidi controls) as ``\\uXXXX``; a parent id holding a lone surrogate
is written escaped in the manifest; a plain copy of the parent beside the output is no redaction of
it; a captured body's strings under a key the wire formats use for no content stay, any other (a
DSH-only structural name, a tool's free-form input) is content; a ``tool/result``'s ``meta`` is
content."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

import dsh_audit.redact
from _cli import chat_log, invoke, short_salt
from dsh_audit.redact import CONTENT_KEYS, HEADER_KEYS, Placeholders, Redactor
from dsh_audit.redact._bodies import redact_body
from dsh_audit.redact._response import redact_response_text
from dsh_audit.testing import LogBuilder, ToolCall

# What a terminal or an editor acts on that JSON.stringify writes raw: DEL, C1 controls, bidi controls.
ACTIVE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
SECRET = "Project Nightingale merger with Acme"
WORDS = ("Nightingale", "Acme", "merger")


def _lines(log: LogBuilder, path: Path, replace: tuple[str, str] = ("", "")) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(line + "\n" for line in log.lines(packed=False))
    path.write_text(text.replace(*replace) if replace[0] else text, encoding="utf-8")
    return path


# -- 1. the redacted copy writes C1 controls, DEL and bidi controls escaped -------------------------


def test_a_redacted_copy_writes_c1_del_and_bidi_controls_as_escapes(tmp_path, monkeypatch, capsys):
    session_id = "sid-\x9b\u202e\u2066\x7f\u200e\u061c-x"
    log = chat_log(tmp_path / "r1" / "session.jsonl", session_id)
    text = log.read_text(encoding="utf-8").replace('"Hi"', json.dumps("\x85\u202a" + "é" * 400, ensure_ascii=False))
    log.write_text(text, encoding="utf-8")
    out = tmp_path / "r1" / "out.jsonl"
    code, stdout, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(out), "--salt", "s")
    assert (code, err, stdout.splitlines()[-3:]) == (0, [short_salt("s")], [
        "verdicts of requests, breaks, cache: unchanged",
                                                             f"a recipient verifies it with: dsh-audit redact --check {out}",
                                                             f"and audits it with: dsh-audit check {out}"])
    data = out.read_bytes().decode("utf-8")
    assert ACTIVE.findall(data) == []
    header = data.split("\n", 1)[0]
    assert '"id":"sid-\\u009b\\u202e\\u2066\\u007f\\u200e\\u061c-x"' in header
    assert json.loads(header)["id"] == session_id  # the same value, written inert
    # the placeholders of the 402 non-ASCII characters read back as two- and three-byte characters still
    users = [json.loads(line) for line in data.splitlines() if line.startswith('{"type":"user/message"')]
    (replaced,) = [block["text"] for u in users for block in u["data"]["content"]]
    assert len(replaced) == 402 and replaced != "\x85\u202a" + "é" * 400
    assert [len(c.encode("utf-8")) for c in replaced] == [2, 3] + [2] * 400
    code, stdout, err = invoke(monkeypatch, capsys, "redact", "--check", str(out))
    assert (code, err, stdout.splitlines()[-1:]) == (0, [], [f"OK: every verdict of {out} matches its manifest"])


def test_redacted_to_stdout_writes_them_escaped_too(tmp_path, monkeypatch, capsys):
    log = chat_log(tmp_path / "r1" / "session.jsonl", "sid-\x9b\u2067-x")
    code, stdout, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", "-", "--salt", "s")
    assert (code, err[-1:]) == (0, ["verdicts of requests, breaks, cache: unchanged"])
    assert ACTIVE.findall(stdout) == [] and '"id":"sid-\\u009b\\u2067-x"' in stdout.split("\n", 1)[0]


# -- 2. and 3. a child's parent: a lone surrogate in its id; a plain copy of it beside the output -----


def _family(folder: Path, parent_id: str) -> tuple[Path, Path]:
    """A parent log and its subagent child ``child-1`` in ``folder``; the parent's id written as its
    JSON escape (a lone surrogate cannot be UTF-8)."""
    parent = LogBuilder(session_id="session-PARENT")
    with parent.turn("Hi"), parent.step():
        parent.assistant("Hello")
    child = parent.fork(session_id="child-1")
    with child.turn("Sub"), child.step():
        child.assistant("Done")
    escaped = ("session-PARENT", json.dumps(parent_id)[1:-1])
    return _lines(parent, folder / "parent.jsonl", escaped), _lines(child, folder / "child.jsonl", escaped)


def test_a_child_whose_parent_id_holds_a_lone_surrogate_is_redacted_with_its_manifest(tmp_path, monkeypatch, capsys):
    parent, child = _family(tmp_path / "logs", "session-p\ud800x")
    out = tmp_path / "out"
    out.mkdir()
    code, _, err = invoke(monkeypatch, capsys, "redact", str(parent), "-o", str(out / "parent.jsonl"), "--salt", "s")
    assert (code, err) == (0, [short_salt("s")])
    code, stdout, err = invoke(monkeypatch, capsys, "redact", str(child), "-o", str(out / "child.jsonl"), "--salt", "s")
    assert (code, stdout.splitlines()[-3]) == (0, "verdicts of requests, breaks, cache: unchanged")
    assert err == [f"note: verdicts compared with the parent session session-p\\ud800x on both sides: {parent} and "
                   f"its redaction {out / 'parent.jsonl'}", short_salt("s")]
    manifest = (out / "child.jsonl.manifest.json").read_text(encoding="utf-8")
    assert '\n  "parent": "session-p\\ud800x",\n' in manifest
    assert json.loads(manifest)["parent"] == "session-p\ud800x"
    code, stdout, err = invoke(monkeypatch, capsys, "redact", "--check", str(out / "child.jsonl"))
    assert (code, err) == (0, [])
    assert stdout == ("requests: match (1 request(s))\nbreaks: match (1 request(s), 0 break(s))\n"
                      f"cache: match (1 request(s))\nOK: every verdict of {out / 'child.jsonl'} matches its manifest\n")


def test_a_plain_copy_of_the_parent_beside_the_output_is_no_redaction_of_it(tmp_path, monkeypatch, capsys):
    parent, child = _family(tmp_path / "logs", "session-p3")
    out = tmp_path / "out"
    out.mkdir()
    shutil.copy(parent, out / "parent-backup.jsonl")
    code, stdout, err = invoke(monkeypatch, capsys, "redact", str(child), "-o", str(out / "child.jsonl"), "--salt", "s")
    assert (code, stdout) == (2, "")
    assert err == [
        f"error: {child}: the parent session's log beside the output, {out / 'parent-backup.jsonl'}, is no redaction "
        "of it (no parent-backup.jsonl.manifest.json beside it), and no redaction of the parent lies beside the output "
        "(hint: move that copy away and redact the parent first, then this child with its -o beside the parent's "
        "(where breaks finds a parent), both with one salt you give (--salt S or DSH_AUDIT_REDACT_SALT=S), not the "
        "default random one; or pass --alone to compare this child's verdicts without its parent)"]
    assert sorted(p.name for p in out.iterdir()) == ["parent-backup.jsonl"]  # nothing written
    # the parent's redaction beside it (its manifest tells it) is taken
    (out / "parent-backup.jsonl").unlink()
    code, _, err = invoke(monkeypatch, capsys, "redact", str(parent), "-o", str(out / "parent.jsonl"), "--salt", "s")
    assert (code, err) == (0, [short_salt("s")])
    code, stdout, _ = invoke(monkeypatch, capsys, "redact", str(child), "-o", str(out / "child.jsonl"), "--salt", "s")
    assert (code, stdout.splitlines()[-3]) == (0, "verdicts of requests, breaks, cache: unchanged")


# -- 4. a captured body: only the wire formats' own non-content keys stay ---------------------------


def _strings(value: Any, path: tuple[Any, ...] = ()) -> dict[tuple[Any, ...], str]:
    if isinstance(value, str):
        return {path: value}
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    return {p: s for k, v in items for p, s in _strings(v, (*path, k)).items()}


def _kept(before: Any, after: Any) -> dict[tuple[Any, ...], str]:
    """The strings of ``before`` that ``after`` holds unchanged at their place (all of the same length)."""
    old, new = _strings(before), _strings(after)
    assert list(old) == list(new) and [len(v) for v in old.values()] == [len(v) for v in new.values()]
    return {path: value for path, value in old.items() if new[path] == value}


ANTHROPIC = {
    "model": "claude-sonnet-4-5", "max_tokens": 100,
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": SECRET}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "notify",
                                           "input": {"mode": SECRET, "type": "Acme memo", "name": "Nightingale",
                                                     "id": "merger-42", "status": "merger"}}]}],
    "tools": [{"name": "notify", "input_schema": {"type": "object", "properties": {
        "input": {"type": "string"}}, "required": ["input"]}}]}
OPENAI = {
    "model": "gpt-5", "reasoning_effort": "low", "tool_choice": "auto",
    "messages": [{"role": "user", "content": SECRET, "kind": "Nightingale", "source": "Acme"},
                 {"role": "assistant", "content": None, "tool_calls": [
                     {"id": "call_1", "type": "function",
                      "function": {"name": "notify", "arguments": '{"q": "Acme"}'}}]},
                 {"role": "tool", "tool_call_id": "call_1", "content": "done"}],
    "metadata": {"target": SECRET, "action": "merger"}}
DEEPSEEK = {
    "model": "deepseek-chat", "thinking": {"type": "enabled"},
    "messages": [{"role": "user", "content": "Hi", "what": SECRET, "lang": "Acme"}],
    "response_format": {"type": "json_object"}, "plugin": "Nightingale"}
GOOGLE = {
    "contents": [{"role": "model", "parts": [{"functionCall": {"name": "notify", "args": {"type": SECRET}}}]},
                 {"role": "user", "parts": [{"functionResponse": {"name": "notify", "response": {"status": "Acme"}}}]}],
    "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}}}


@pytest.mark.parametrize(("body", "kept"), [
    (ANTHROPIC, {("model",): "claude-sonnet-4-5", ("messages", 0, "role"): "user",
                 ("messages", 0, "content", 0, "type"): "text", ("messages", 1, "role"): "assistant",
                 ("messages", 1, "content", 0, "type"): "tool_use", ("messages", 1, "content", 0, "id"): "toolu_1",
                 ("messages", 1, "content", 0, "name"): "notify", ("tools", 0, "name"): "notify",
                 ("tools", 0, "input_schema", "type"): "object",
                 ("tools", 0, "input_schema", "properties", "input", "type"): "string"}),
    (OPENAI, {("model",): "gpt-5", ("reasoning_effort",): "low", ("tool_choice",): "auto",
              ("messages", 0, "role"): "user", ("messages", 1, "role"): "assistant",
              ("messages", 1, "tool_calls", 0, "id"): "call_1", ("messages", 1, "tool_calls", 0, "type"): "function",
              ("messages", 1, "tool_calls", 0, "function", "name"): "notify", ("messages", 2, "role"): "tool",
              ("messages", 2, "tool_call_id"): "call_1"}),
    (DEEPSEEK, {("model",): "deepseek-chat", ("thinking", "type"): "enabled", ("messages", 0, "role"): "user",
                ("response_format", "type"): "json_object"}),
    (GOOGLE, {("contents", 0, "role"): "model", ("contents", 0, "parts", 0, "functionCall", "name"): "notify",
              ("contents", 1, "role"): "user", ("contents", 1, "parts", 0, "functionResponse", "name"): "notify",
              ("toolConfig", "functionCallingConfig", "mode"): "AUTO"}),
], ids=["anthropic", "openai", "deepseek", "google"])
def test_a_captured_body_keeps_only_the_wire_formats_non_content_strings(body, kept):
    redactor = Redactor(Placeholders(b"salt"))
    text = json.dumps(body)
    out = redact_body(text.encode("utf-8"), redactor, {}, {}).decode("utf-8")
    assert len(out) == len(text)
    assert _kept(body, json.loads(out)) == kept
    assert [word for word in WORDS if word in out] == []


def test_a_captured_response_keeps_only_the_wire_formats_non_content_strings():
    redactor = Redactor(Placeholders(b"salt"))
    response = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "notify",
                             "input": {"kind": SECRET, "code": "Acme"}}], "stop_reason": "tool_use"}
    out = json.loads(redact_response_text(json.dumps(response), redactor))
    assert _kept(response, out) == {("id",): "msg_1", ("type",): "message", ("role",): "assistant",
                                    ("model",): "claude-sonnet-4-5", ("content", 0, "type"): "tool_use",
                                    ("content", 0, "id"): "toolu_1", ("content", 0, "name"): "notify"}
    events = "".join(f"data: {json.dumps(e)}\n\n" for e in (
        {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t", "name": "n",
                                                                        "input": {"source": SECRET}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{}"}}))
    redacted = redact_response_text(events, redactor)
    assert len(redacted) == len(events) and [word for word in WORDS if word in redacted] == []
    assert '"content_block": {"type": "tool_use", "id": "t", "name": "n", "input": {"source": "' in redacted


def test_another_sessions_capture_loses_the_content_under_structural_names(tmp_path, monkeypatch, capsys):
    log = chat_log(tmp_path / "in" / "s.jsonl", "session-c")
    body = json.dumps({**ANTHROPIC, "model": "claude-\x9b\u202e"}, ensure_ascii=False)
    wire = tmp_path / "in" / "wire.jsonl"
    wire.write_text(json.dumps({"seq": 0, "method": "POST", "path": "/v1/messages", "body": body,
                                "headers": {"x-api-key": "sk-ant-api03-" + "A1b2C3d4" * 10}}) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    code, stdout, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(out / "s.jsonl"), "--salt", "s",
                               "--capture", str(wire), "--any-capture")
    assert (code, stdout.splitlines()[-3]) == (0, "verdicts of requests, breaks, cache, diff: unchanged")
    assert err == ["note: 1 of 1 captured request(s) match none of the log's requests: they are redacted as content, "
                   "and prove nothing about this log", short_salt("s")]
    written = (out / "wire.jsonl").read_text(encoding="utf-8")
    assert [word for word in WORDS if word in written] == [] and ACTIVE.findall(written) == []
    record = json.loads(written)
    assert list(record) == ["seq", "method", "path", "body", "headers"] and record["headers"] == {}
    redacted = json.loads(record["body"])
    assert _kept({**ANTHROPIC, "model": "claude-\x9b\u202e"}, redacted) == {
        ("model",): "claude-\x9b\u202e", ("messages", 0, "role"): "user", ("messages", 0, "content", 0, "type"): "text",
        ("messages", 1, "role"): "assistant", ("messages", 1, "content", 0, "type"): "tool_use",
        ("messages", 1, "content", 0, "id"): "toolu_1", ("messages", 1, "content", 0, "name"): "notify",
        ("tools", 0, "name"): "notify", ("tools", 0, "input_schema", "type"): "object",
        ("tools", 0, "input_schema", "properties", "input", "type"): "string"}


def test_a_secret_under_a_kept_wire_key_still_goes():
    redactor = Redactor(Placeholders(b"salt"))
    key = "sk-ant-api03-" + "A1b2C3d4" * 10
    out = redact_body(json.dumps({"model": key}).encode("utf-8"), redactor, {}, {}).decode("utf-8")
    assert key[13:] not in out and dict(redactor.secrets) == {"anthropic_api_key": 1}


# -- 5. a tool result's meta is content ------------------------------------------------------------


def test_a_tool_results_meta_is_content_whatever_its_members_are_named():
    redactor = Redactor(Placeholders(b"salt"))
    meta = {"kind": "diff", "status": SECRET, "shape": "Acme", "lang": "py", "path": "/srv/acme/plans.md",
            "items": [{"id": "Nightingale", "type": "merger"}], "lines": 4}
    record = {"type": "tool/result", "seq": 3, "time": 1, "data": {
        "turn": 1, "step": 1, "meta": meta, "error": {"name": "AbortError", "code": "ABORTED_BEFORE_DISPATCH"},
        "message": {"role": "user", "id": "m1", "source": {"kind": "tool", "callId": "c1"},
                    "content": [{"type": "tool-result", "toolCallId": "c1", "isError": False,
                                 "content": [{"type": "text", "text": "ok"}]}]}}}
    out = redactor.record(record)
    assert _kept(meta, out["data"]["meta"]) == {}
    assert out["data"]["meta"]["path"].count("/") == 3 and out["data"]["meta"]["lines"] == 4
    assert {k: v for k, v in out["data"].items() if k not in ("meta", "message")} == {
        "turn": 1, "step": 1, "error": {"name": "AbortError", "code": "ABORTED_BEFORE_DISPATCH"}}
    assert out["data"]["message"]["source"] == {"kind": "tool", "callId": "c1"}
    # elsewhere a member named meta (a tool schema's property) is no content root
    schema = {"type": "system/message", "seq": 1, "time": 1, "data": {"meta": {"type": "object"}}}
    assert redactor.record(schema) == schema


def test_a_secret_in_a_tool_results_meta_goes_and_is_counted(tmp_path, monkeypatch, capsys):
    key = "sk-ant-api03-" + "A1b2C3d4" * 10
    b = LogBuilder(session_id="session-meta")
    with b.turn("Read it"), b.step():
        reply = b.assistant(tool_calls=[ToolCall("read", {"path": "/srv/x"})])
        b.tool_result(reply.call_ids[0], "ok", meta={"kind": "Nightingale", "token": key, "lang": "Acme"})
    log = b.write_jsonl(tmp_path / "in" / "s.jsonl", packed=False)
    out = tmp_path / "o.jsonl"
    code, stdout, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(out), "--salt", "s")
    assert (code, err) == (0, [short_salt("s")])
    assert stdout.splitlines()[-4:] == ["secrets removed: anthropic_api_key 1 (1 occurrence(s))",
                                        "verdicts of requests, breaks, cache: unchanged",
                                        f"a recipient verifies it with: dsh-audit redact --check {out}",
                                        f"and audits it with: dsh-audit check {out}"]
    data = out.read_text(encoding="utf-8")
    assert [word for word in (*WORDS, key[13:]) if word in data] == []


# -- 6. the lists the documentation names are public -----------------------------------------------


def test_the_content_and_header_keys_are_public():
    assert {"CONTENT_KEYS", "HEADER_KEYS"} <= set(dsh_audit.redact.__all__)
    assert CONTENT_KEYS == frozenset({"arguments", "details"})
    assert HEADER_KEYS == frozenset({"agentPreset", "createdAt", "delegationDepth", "id", "origin", "parentSession",
                                     "seedLength", "type", "version"})


# -- 7. placeholders by table: the same bytes as before ---------------------------------------------


def test_placeholders_made_by_table_are_those_of_the_class_search():
    p = Placeholders(b"salt")  # values made by the code before round 31 (a class searched per byte), but for
    # session 37's: two-byte characters move among leads C3..DF (C2 alone), U+2028 and U+0085 (no line breaks
    # without ``lines``, and acting) are drawn as their stand-ins
    assert p.plain("héllo wörld\n/x\\y \u20ac\U0001F600") == "X\u07db21P>7\u01fa00g\n/K\\a)\u6fc9\U0002118c"
    assert p.plain("  \u3000 lead\ttab", blank=True) == "  \u3000 6nnT\x082lj"
    assert p.plain("a\nb\u2028c\x85d", lines=False) == "Q\x0cc\ua24c9\xafb"
