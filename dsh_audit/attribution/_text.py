"""Plain-text explanation of one transition (``dsh-audit explain``): pure, no terminal styling."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..jsjson import stringify
from ._model import Evidence, FieldChange, Transition

__all__ = ["format_transition"]

_DATA_CHARS = 300
# A newline in a log's text (a session id, a tool's name) as the CLI's one escaping function shows it
# (:func:`dsh_audit.report.terminal.terminal_text`, which this layer does not import: the report imports
# it): the text's lines are its own, and `explain` splits it there, so a log's newline must not start one.
_NEWLINE = "\\u000a"
# What a thinking state of None says: no effort, so DSH's native adapter sends no ``thinking``.
_NOT_SENT = "not sent (effort unset)"


def _where(t: Transition) -> str:
    """The request's kind and place, as `requests` shows it: ``loop, turn 5 step 1 attempt 1``, a
    compaction call (no step) ``compaction, turn 9, no step``, a title call its kind alone.

    Example:
        >>> from dsh_audit.attribution import Transition
        >>> _where(Transition("s", 10, None, None, "first", "first", None, kind="compaction", turn=9))
        'compaction, turn 9, no step'
    """
    if t.turn is None and t.step is None:
        return t.kind
    turn = "no turn" if t.turn is None else f"turn {t.turn}"
    if t.step is None:
        return f"{t.kind}, {turn}, no step"
    return f"{t.kind}, {turn} step {t.step} attempt {t.attempt}"


def _value(value: Any) -> str:
    text = stringify(value)
    return text if len(text) <= 80 else text[:80] + "…"


def _tool_name(name: Any) -> str:
    """A tool's name as the log spells it (a log may name a tool with a number, or with none)."""
    return name if isinstance(name, str) else stringify(name)


def _field(change: FieldChange) -> list[str]:
    effect = "prompt" if change.prompt_affecting else "not prompt content"
    detail = change.detail or {}
    if change.field == "system":
        lines = [f"  system: {change.before} → {change.after} chars ({effect})"]
        return lines + [f"      {line}" for line in detail.get("diff", [])]
    if change.field == "tools" and "added" in detail:
        bits = [f"{key} {', '.join(map(_tool_name, detail[key]))}" for key in ("added", "removed", "schema_changed")
                if detail[key]]
        if detail.get("reordered"):
            bits.append("reordered")
        return [f"  tools: {len(change.before)} → {len(change.after)} ({'; '.join(bits)}) ({effect})"]
    line = f"  {change.field}: {_value(change.before)} → {_value(change.after)} ({effect})"
    if "thinking" in detail or "route" in detail:  # an effort change (:func:`on_route`)
        line += _effort(detail, change.before, change.after)
    return [line]


def _wire_side(change: dict[str, Any], side: str) -> str:
    return _value(change[side]) if side in change else "(absent)"


def _wire_path(path: Any) -> str:
    """A body parameter's dotted path, its member name as the body spells it, JSON-escaped (a
    captured body's member name may hold a newline or a control character)."""
    text = stringify(path)[1:-1] if isinstance(path, str) else stringify(path)
    return text if len(text) <= 80 else text[:80] + "…"


def _effort(detail: dict[str, Any], before: Any = None, after: Any = None) -> str:
    """What an effort change does: DeepSeek's ``thinking`` (its native route); the reasoning
    parameters of the two bodies on another route; or, no body at hand, reasoning on or off as
    DSH asks, with no claim about the route's wire form (:func:`~._header_diff.on_route`). An
    effort ``before`` → ``after`` that keeps thinking on says the efforts, not "enabled → enabled".

    Example:
        >>> _effort({"thinking": ["enabled", "disabled"]})
        '; thinking enabled → disabled'
        >>> _effort({"thinking": ["enabled", None]})
        '; thinking enabled → not sent (effort unset)'
        >>> _effort({"thinking": ["enabled", "enabled"]}, "high", "max")
        '; thinking stays enabled, at effort "high" → "max"'
        >>> _effort({"route": "responses", "wire": [{"path": "reasoning.effort", "before": "high", "after": "low"}]})
        '; on the wire: reasoning.effort "high" → "low"'
        >>> _effort({"route": None, "reasoning": [None, "off"]})
        '; reasoning default → off (route unknown, no body rendered to show its wire form)'
    """
    if "route" not in detail:
        thinking = [_NOT_SENT if state is None else state for state in detail["thinking"]]
        if thinking[0] == thinking[1]:
            return f"; thinking stays {thinking[0]}, at effort {_value(before)} → {_value(after)}"
        return f"; thinking {thinking[0]} → {thinking[1]}"
    wire = detail.get("wire")
    if wire is not None:
        if not wire:
            return "; on the wire: no reasoning parameter changed"
        return "; on the wire: " + "; ".join(
            f"{_wire_path(c.get('path'))} {_wire_side(c, 'before')} → {_wire_side(c, 'after')}" for c in wire)
    states = ["default" if state is None else state for state in detail.get("reasoning") or (None, None)]
    route = "route unknown" if detail["route"] is None else f"adapter {_tool_name(detail['route'])}"
    return f"; reasoning {states[0]} → {states[1]} ({route}, no body rendered to show its wire form)"


def _evidence(item: Evidence) -> str:
    data = stringify(item.data)
    if len(data) > _DATA_CHARS:
        data = data[:_DATA_CHARS] + "…"
    where = f"{item.session_id} " if item.session_id else ""
    return f"  {where}seq {item.seq} {item.type} {data}"


def format_transition(t: Transition, *, added: Sequence[str] = ()) -> str:
    """Say why request ``t.request`` did or did not reuse the cache, quoting the evidence;
    ``added``: further lines another view says of the request (``explain``: what a break cost),
    shown after the sentence that explains it.

    Example:
        >>> from dsh_audit.attribution import Transition
        >>> print(format_transition(Transition("s", 0, None, None, "first", "first", None)))
        request 0 (loop) of session s: first
          nothing before it in its conversation: no cache to reuse
    """
    head = f"request {t.request} ({_where(t)}) of session {t.session_id}: {t.verdict}"
    if t.verdict == "first":
        lines = [head, "  nothing before it in its conversation: no cache to reuse", *added]
        return _joined(lines + [f"  note: {n}" for n in t.notes])
    other = "" if t.previous_session_id in (None, t.session_id) else f" of session {t.previous_session_id}"
    cause = f", cause {t.cause}" if t.cause else ""
    also = f" (also: {', '.join(t.other_causes)})" if t.other_causes else ""
    lines = [f"{head}{cause}{also}",
             f"  compared with request {t.previous}{other} ({t.relation}); {t.common_messages} leading "
             "message(s) shared",
             f"  {t.detail}", *added]
    if t.first_divergence is not None:
        d = t.first_divergence
        where = d.segment + (f", message {d.message_index}" if d.message_index is not None else "")
        if d.offset is not None:
            where += f", byte {d.offset} of the segment"
        if d.body_offset is not None:
            where += f", byte {d.body_offset} of the body"
        lines.append(f"  first divergence: {where}")
    if t.fields:
        lines.append("fields:")
        for change in t.fields:
            lines.extend(_field(change))
    if t.evidence:
        lines.append("evidence:")
        lines.extend(_evidence(e) for e in t.evidence)
    if t.context:
        lines.append("context:")
        lines.extend(_evidence(e) for e in t.context)
    lines.extend(f"  note: {n}" for n in t.notes)
    return _joined(lines)


def _joined(lines: Sequence[str]) -> str:
    """``lines`` as one text, a newline of a log's text in one of them escaped (:data:`_NEWLINE`).

    Example:
        >>> print(_joined(["request 0 of session s-x\\nPASSED: forged", "  note"]))
        request 0 of session s-x\\u000aPASSED: forged
          note
    """
    return "\n".join(line.replace("\n", _NEWLINE) for line in lines)
