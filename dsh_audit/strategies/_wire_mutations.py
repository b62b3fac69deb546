"""Wire-body mutations: one targeted fault in a DeepSeek chat-completions body.

Each is a change some layer between DSH's log and the provider could make (a proxy, a plugin, a
second serialiser), and each costs prefix-cache hits: an edited message, reordered tools, a
re-keyed tool schema, a timestamp in the system prompt, a dropped ``reasoning_content``,
re-serialised tool arguments, string content sent as blocks. The expected detection is the
:mod:`dsh_audit.diff` difference (change and JSON path) against the body the log implies, and,
for a captured body whose previous request the log says it extends, the attribution cause
``unrecorded_mutation``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import Any

from hypothesis import reject
from hypothesis import strategies as st

from ..jsjson import stringify
from ._model import Expected, GeneratedSession, MutatedBody, MutatedCapture, Mutation
from ._options import InvalidStrategyArgument, check_kinds

__all__ = ["WIRE_MUTATIONS", "body_mutations", "mutated_bodies", "mutated_captures"]

#: Every wire mutation kind, sorted.
WIRE_MUTATIONS = ("drop-reasoning-content", "edit-message", "reorder-tools", "reserialise-tool-arguments",
                  "string-vs-blocks", "system-timestamp", "tool-schema-key-order")
_TIMESTAMP = "\nCurrent time: 2026-05-01T09:30:00Z"


def _parse(body: bytes) -> dict[str, Any]:
    try:
        value = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise InvalidStrategyArgument("body is not JSON", hint="pass a chat-completions request body") from None
    if not isinstance(value, dict) or not isinstance(value.get("messages"), list):
        raise InvalidStrategyArgument("body has no messages array", hint="pass a chat-completions request body")
    if stringify(value).encode("utf-8") != body:
        raise InvalidStrategyArgument("body is not in JSON.stringify form (spacing, escapes or number spelling "
                                      "differ), so re-serialising it would change more than the fault",
                                      hint="pass the bytes as dsh_audit.wire.render produces them")
    return value


def _reserialised(text: str) -> str | None:
    try:
        parsed = json.loads(text)
    except ValueError:
        return None
    for candidate in (stringify(parsed), json.dumps(parsed, ensure_ascii=False), json.dumps(parsed, indent=1)):
        if candidate != text:
            return candidate
    return None


def _sites(body: dict[str, Any], kind: str, limit: int) -> list[Any]:
    """Where ``kind`` applies: message indexes below ``limit``, tool indexes, or call positions."""
    messages = body["messages"][:limit]
    tools: list[Any] = body["tools"] if isinstance(body.get("tools"), list) else []
    text = [i for i, m in enumerate(messages) if isinstance(m, dict) and isinstance(m.get("content"), str)]
    if kind == "edit-message":
        return [i for i in text if messages[i].get("role") != "system"]
    if kind == "string-vs-blocks":
        return [i for i in text if messages[i].get("role") == "user"]
    if kind == "system-timestamp":
        return [0] if 0 in text and messages[0].get("role") == "system" else []
    if kind == "drop-reasoning-content":
        return [i for i, m in enumerate(messages) if isinstance(m, dict) and "reasoning_content" in m]
    if kind == "reserialise-tool-arguments":
        return [(i, j, new) for i, m in enumerate(messages) if isinstance(m, dict)
                for j, call in enumerate(m.get("tool_calls") or [])
                if (new := _reserialised(str(call.get("function", {}).get("arguments", "")))) is not None]
    if kind == "reorder-tools":
        return [i for i in range(len(tools) - 1) if stringify(tools[i]) != stringify(tools[i + 1])]
    return [i for i, t in enumerate(tools) if isinstance(t, dict) and isinstance(t.get("function"), dict)
            and isinstance(t["function"].get("parameters"), dict) and len(t["function"]["parameters"]) >= 2]


def _apply(body: dict[str, Any], kind: str, site: Any) -> tuple[str, Expected]:
    """Mutate ``body`` in place; returns the description and the diff expectation."""
    messages = body["messages"]
    if kind == "edit-message":
        messages[site]["content"] += " (edited)"
        return f"message {site} content edited", Expected("diff", "changed", f"messages[{site}].content")
    if kind == "string-vs-blocks":
        messages[site]["content"] = [{"type": "text", "text": messages[site]["content"]}]
        return f"message {site} content sent as blocks", Expected("diff", "type", f"messages[{site}].content")
    if kind == "system-timestamp":
        messages[0]["content"] += _TIMESTAMP
        return "timestamp appended to the system prompt", Expected("diff", "changed", "messages[0].content")
    if kind == "drop-reasoning-content":
        del messages[site]["reasoning_content"]
        return f"message {site} reasoning_content dropped", Expected(
            "diff", "removed", f"messages[{site}].reasoning_content")
    if kind == "reserialise-tool-arguments":
        i, j, new = site
        messages[i]["tool_calls"][j]["function"]["arguments"] = new
        return f"message {i} tool call {j} arguments re-serialised", Expected(
            "diff", "changed", f"messages[{i}].tool_calls[{j}].function.arguments")
    tools = body["tools"]
    if kind == "reorder-tools":
        tools[site], tools[site + 1] = tools[site + 1], tools[site]
        return f"tools {site} and {site + 1} swapped", Expected("diff", "moved", "tools")
    function = tools[site]["function"]
    function["parameters"] = dict(reversed(list(function["parameters"].items())))
    return f"tool {site} parameters keys reversed", Expected(
        "diff", "key order", f"tools[{site}].function.parameters")


def body_mutations(body: bytes, *, kinds: Sequence[str] = WIRE_MUTATIONS,
                   messages_before: int | None = None) -> st.SearchStrategy[MutatedBody]:
    """One targeted fault in ``body``, a DeepSeek chat-completions body in ``JSON.stringify`` form.

    Args:
        body: the body bytes (as :func:`dsh_audit.wire.render` writes them).
        kinds: the mutation kinds to choose from (see :data:`WIRE_MUTATIONS`); those that do not
            apply to this body (no reasoning, fewer than two tools, ...) are left out.
        messages_before: only mutate messages with an index below this (tools are always
            eligible); None: any message.

    Raises:
        InvalidStrategyArgument: the body is not JSON.stringify-form JSON with messages, or none
            of ``kinds`` applies to it.

    Example:
        >>> body = b'{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}'
        >>> from hypothesis import find
        >>> find(body_mutations(body, kinds=["string-vs-blocks"]), lambda m: True).body
        b'{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"stream":true}'
    """
    chosen = check_kinds("kinds", kinds, WIRE_MUTATIONS)
    parsed = _parse(body)
    limit = len(parsed["messages"]) if messages_before is None else messages_before
    options = [(kind, site) for kind in chosen for site in _sites(parsed, kind, limit)]
    if not options:
        raise InvalidStrategyArgument(f"none of kinds={list(chosen)} applies to this body",
                                      hint="add reasoning, tool calls or tools to the body, or allow other kinds")

    def build(option: tuple[str, Any]) -> MutatedBody:
        kind, site = option
        mutated = copy.deepcopy(parsed)
        description, expected = _apply(mutated, kind, site)
        return MutatedBody(body, stringify(mutated).encode("utf-8"), Mutation(kind, "wire", description, (expected,)))

    return st.sampled_from(options).map(build)


def _default_sessions() -> st.SearchStrategy[GeneratedSession]:
    from ._sessions import sessions

    return sessions(turns=(1, 3), max_steps=3, tools=3, reasoning=True, prunes=0, compactions=0, forks=0)


def _rendered(session: GeneratedSession) -> tuple[list[Any], list[bytes | None]]:
    """The session's requests and DeepSeek bodies (None for compaction calls)."""
    import tempfile

    import dsh_audit

    from ..wire import render

    with tempfile.TemporaryDirectory() as folder:
        requests = dsh_audit.requests(dsh_audit.load(session.write(folder)))
    cache: dict[str, Any] = {}
    bodies = [render(r, renderer_cache=cache).body if r.kind != "compaction" else None for r in requests]
    return requests, bodies


def mutated_bodies(*, kinds: Sequence[str] = WIRE_MUTATIONS,
                   sessions: st.SearchStrategy[GeneratedSession] | None = None) -> st.SearchStrategy[MutatedBody]:
    """A rendered loop request body of a generated session, with one fault from ``kinds``.

    Args:
        kinds: see :data:`WIRE_MUTATIONS`.
        sessions: where the logs come from (default: up to three turns with tools and reasoning).

    Example:
        >>> from hypothesis import given, settings
        >>> from dsh_audit.diff import diff_bodies
        >>> @settings(max_examples=3)
        ... @given(mutated_bodies(kinds=["drop-reasoning-content"]))
        ... def test_diff_sees_it(item):
        ...     assert diff_bodies(item.original, item.body).verdict == "different"
        >>> test_diff_sees_it()
    """
    chosen = check_kinds("kinds", kinds, WIRE_MUTATIONS)
    source = sessions if sessions is not None else _default_sessions()

    @st.composite
    def draw_one(draw: Any) -> MutatedBody:
        _, bodies = _rendered(draw(source))
        usable = [b for b in bodies if b is not None and any(_sites(json.loads(b), k, 1 << 30) for k in chosen)]
        if not usable:
            reject()
        item: MutatedBody = draw(body_mutations(draw(st.sampled_from(usable)), kinds=chosen))
        return item

    return draw_one()


def mutated_captures(*, kinds: Sequence[str] = WIRE_MUTATIONS,
                     sessions: st.SearchStrategy[GeneratedSession] | None = None) -> st.SearchStrategy[MutatedCapture]:
    """Captured bodies of a generated session, one of them mutated inside its cached prefix.

    The mutated request is a loop request whose previous loop request it extends by the ground
    truth (nothing prompt-affecting was generated between them), and the fault lies in the
    messages both bodies share (or in the tools), so attribution must report
    ``unrecorded_mutation`` for it, and the diff the fault's difference.

    Example:
        >>> from hypothesis import given, settings
        >>> @settings(max_examples=3)
        ... @given(mutated_captures(kinds=["edit-message"]))
        ... def test_expectations(item):
        ...     assert [e.code for e in item.mutation.expected] == ["changed", "unrecorded_mutation"]
        >>> test_expectations()
    """
    chosen = check_kinds("kinds", kinds, WIRE_MUTATIONS)
    source = sessions if sessions is not None else _default_sessions()

    @st.composite
    def draw_one(draw: Any) -> MutatedCapture:
        session = draw(source)
        requests, bodies = _rendered(session)
        loops = sorted((r for r in requests if r.kind == "loop"), key=lambda r: r.first_chunk_seq)
        candidates = []
        for prev, cur in zip(loops, loops[1:]):
            breaking = [h for h in session.truth if prev.first_chunk_seq < h.seq < cur.first_chunk_seq
                        and (h.prompt_affecting or h.kind in ("compaction", "prune"))]
            limit = len(json.loads(bodies[prev.index] or b"{}").get("messages", []))
            parsed = json.loads(bodies[cur.index] or b"{}")
            if not breaking and any(_sites(parsed, k, limit) for k in chosen):
                candidates.append((cur.index, limit))
        if not candidates:
            reject()
        index, limit = draw(st.sampled_from(candidates))
        body = bodies[index]
        assert body is not None
        item = draw(body_mutations(body, kinds=chosen, messages_before=limit))
        mutation = item.mutation
        expected = (*mutation.expected, Expected("attribution", "unrecorded_mutation", index))
        item = MutatedBody(item.original, item.body, Mutation(mutation.kind, "wire", mutation.description, expected))
        return MutatedCapture(session, tuple(bodies), index, item)

    return draw_one()
