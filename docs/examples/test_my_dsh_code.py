"""Property-test your own DSH-format code with dsh_audit.strategies (runnable example).

Two pieces of "your" code are tested here against dsh-audit as the reference:

* ``my_write_log``: a JSONL writer for DSH v0 events (say, a proxy that re-writes logs);
* ``my_wire_messages``: a serialiser of DSH messages into DeepSeek chat-completions messages.

Run it with ``pytest docs/examples/test_my_dsh_code.py``; dsh-audit's own suite runs it too.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings

import dsh_audit
from dsh_audit.strategies import sessions
from dsh_audit.wire import render


def my_write_log(header: dict, events: list[dict]) -> bytes:
    """Your writer: one compact JSON value per line, header first (DSH writes JSON.stringify)."""
    return "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n"
                   for r in [header, *events]).encode("utf-8")


def my_wire_messages(request) -> list[dict]:
    """Your serialiser: the DeepSeek ``messages`` array of one loop request."""
    out = [{"role": "system", "content": request.header["system"]}] if "system" in request.header else []
    for message in request.messages:
        blocks = message["content"]
        text = "".join(b["text"] for b in blocks if b["type"] == "text")
        if message["role"] == "assistant":
            wire = {"role": "assistant", "content": text}
            reasoning = "".join(b["text"] for b in blocks if b["type"] == "reasoning")
            if reasoning:
                wire["reasoning_content"] = reasoning
            calls = [{"id": b["id"], "type": "function", "function": {"name": b["name"], "arguments": b["arguments"]}}
                     for b in blocks if b["type"] == "tool-call"]
            if calls:
                wire["tool_calls"] = calls
            out.append(wire)
            continue
        results = [b for b in blocks if b["type"] == "tool-result"]
        if text or not results:
            out.append({"role": "user", "content": text})
        for result in results:
            content = "".join(b["text"] for b in result["content"] if b["type"] == "text")
            out.append({"role": "tool", "tool_call_id": result["toolCallId"], "content": content or "(no output)"})
    return out


def _requests(path: Path):
    return dsh_audit.requests(dsh_audit.load(path))


@settings(max_examples=20)
@given(sessions(turns=(1, 3), compactions=1, prunes=1, header_changes=2, resumes=1))
def test_my_writer_keeps_every_request(session):
    with tempfile.TemporaryDirectory() as folder:
        reference = _requests(session.write(folder))
        mine = Path(folder) / "mine.jsonl"
        mine.write_bytes(my_write_log(session.header_record, session.events))
        assert [r.to_json() for r in _requests(mine)] == [r.to_json() for r in reference]
        # stronger: byte-identical to what DSH writes unpacked
        assert mine.read_bytes() == session.log_bytes(packed=False)


@settings(max_examples=20)
@given(sessions(turns=(1, 3), reasoning=None, header_changes=2))
def test_my_serialiser_matches_dsh_bytes(session):
    with tempfile.TemporaryDirectory() as folder:
        requests = [r for r in _requests(session.write(folder)) if r.kind == "loop"]
    for request in requests:
        body = json.loads(render(request).body)
        assert my_wire_messages(request) == body["messages"]
