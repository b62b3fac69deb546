"""Released log format versions v0-v4, read into one model: the v0 event shapes.

The replay code works on v0 shapes (spec ``dsh-format-versions.md``). Later versions are brought
down to them in memory, event by event, without renumbering anything:

* v1 is v0 with its legacy shapes already normalised (same physical layout).
* v2+ headers carry ``isSeeded`` instead of ``seedLength``: the inherited count is the seq of the
  last ``session/end-seed`` with ``data.inherited: true``, which the reader learns when it meets it.
* v2+ ``sourceEventSeqs`` may hold ``[start, end]`` pairs for runs of three or more; they are
  expanded (v0 files from 0.1.2-alpha write them too).
* v2+ has no ``assistant/chunk``: ``assistant/message.data.stream`` and ``assistant/attempt``
  carry each attempt's stream; replay treats those events as the attempt's output. A message
  with ``stream: []`` had no model call of its own (v1->v2 gives it to messages citing no chunk).
* v3+ replace operations use ``startSeq``/``endSeq``; they become ``start``/``end``.
* v3+ keeps the system prompt as ``system/message`` surface nodes; replay takes the head node's
  text as the request's ``system`` (as v0's ``header.system``) and keeps later system nodes inline.
* v4 tool results are ``role: 'tool'`` messages; they become the v0 user message holding one
  ``tool-result`` block. v4 producer-owned source kinds get their v0 ``plugin`` form back.

Every conversion is counted in ``SessionLog.upgrades`` so a report can say what was changed.

A header whose ``version`` says 2-4 over a body written by an older writer (a hand-edited header,
a port that bumped the number only) is refused at its first record of the older layout
(:func:`body_mismatch`): DSH dispatches on the header's version alone (format-versions §4), so
its v2+ codec refuses a packed row ("lacks required field seq") and its native admission an
``assistant/chunk`` or a message without ``stream``. Naming the header as the cause, once, says
more than the cascade of per-record refusals that would follow.
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = [
    "BODY_CUE_TYPES",
    "LATEST_VERSION",
    "SUPPORTED_VERSIONS",
    "BodyMismatch",
    "body_mismatch",
    "canonical_generation",
    "known_types",
    "log_file_name",
    "to_v0_shapes",
]

SUPPORTED_VERSIONS = (0, 1, 2, 3, 4)
LATEST_VERSION = 4

# Known event types per version: the generated ``KNOWN_SESSION_EVENT_TYPES`` of the newest public
# tree writing that version (a later same-version build knows at least as much). Sources, as
# repo@commit:path (known-event-types.ts = packages/core/session/src/known-event-types.ts):
# v1 (51): rc.8's 48 + _V0_EXTRA; LunFengChen/deepseek-harness@9348c8ef:known-event-types.ts (last v0/v1
#   tree; = tag dsh-v0.1.2-alpha.1..rc.1, 54 roots in 686f6c61/harness-helmcode@c5d85052:
#   docs/persistence-changes/releases/README.md).
# v2 (53): harness-helmcode@c5d85052:docs/persistence-changes/historical-formats/v2.md (tag
#   dsh-v0.1.3-alpha.2; alpha.1 lacked the two feedback/message-* types, cyg720@7ef20bad).
# v3 (58): harness-helmcode v3.md (PR #4320 initial tree, 57) + workspace/changes, which the v3-writer
#   tree LunFengChen@a077afb6:known-event-types.ts knows (accepted 2026-09-14 as a same-version root).
# v4 (60): LunFengChen@103e8703:known-event-types.ts and quockhangluong1012@05219c58:
#   docs/persistence-changes/historical-formats/v4.md (59) + subagent/catalog-unknown, known by
#   0217po/deepseek-harness@17a52a8f:known-event-types.ts (one variant of 2026-09-20-unknown-child-catalog).
_V0_EXTRA = {  # late v0 (0.1.2) vocabulary beyond rc.8's list
    "model/selection", "session-log-deepseek/delivery-accepted", "subagent/model-selection-policy",
}
_V2_EXTRA = {"assistant/attempt", "feedback/message-put", "feedback/message-delete"}
_V2_REMOVED = {"assistant/chunk"}
_V3_EXTRA = {"system/message", "image/offload", "deliverables/presented", "subagent/catalog",
             "tool/ptc-dispatch-start", "tool/ptc-dispatch", "workspace/changes"}
_V3_REMOVED = {"tool/code-dispatch-start", "tool/code-dispatch"}
_V4_EXTRA = {"developer/message", "subagent/catalog-unknown"}

# v4 producer-owned source kinds and the v0-v3 plugin name they came from (format-versions §7.4).
_V4_SOURCE_KINDS = {
    "compact-checkpoint": "compact",
    "ptc-mode": "tools-ptc",
    "compact-basic": "dsh-compaction-basic",
    "system-prompt": "@deepseek-ai/dsh-system-prompt",
    "runtime-context": "@deepseek-ai/dsh-system-prompt",
}
# Plugin names v3->v4 keeps as the kind (LunFengChen@103e8703:packages/session/session-format-v3-to-v4/
# src/sources.ts lists 25), minus the ones rc.8 already wrote as direct kinds (agent-instructions,
# session-reference, team-message, skill-invocation, skill-catalog, coordinator, subagent-report,
# subagent-settled): v3->v4 leaves a direct kind as it is, so those stay direct here too.
_V4_SAME_NAME = {"goal", "webhook", "agent-message", "model-selection", "plan-mode", "time-context",
                 "tmux-context", "user-approval", "repeat-tool-reminder", "tool-cordis", "cordis-host-runner",
                 "tool-goal", "tool-jobs", "hooks-codex", "hooks-claude-code", "schedule",
                 "dsh-session-title-llm"}
_CORE_KINDS = {"user", "model", "tool", "plugin"}


def known_types(version: int, rc8_types: frozenset[str]) -> frozenset[str]:
    """The event types a reader of ``version`` knows (rc.8's list for v0, as DSH 0.1.0-rc.8 reads).

    v1-v4 follow the generated lists cited above ``_V0_EXTRA``: 51, 53, 58 and 60 types.
    """
    if version == 0:
        return rc8_types
    types = set(rc8_types) | _V0_EXTRA
    if version >= 2:
        types = (types | _V2_EXTRA) - _V2_REMOVED
    if version >= 3:
        types = (types | _V3_EXTRA) - _V3_REMOVED
    if version >= 4:
        types |= _V4_EXTRA
    return frozenset(types)


def canonical_generation(name: str) -> int | None:
    """The generation a file name denotes (``session.jsonl`` 0, ``session.v4.jsonl.zstd`` 4), else None."""
    stem = name[: -len(".zstd")] if name.endswith(".zstd") else name
    if stem == "session.jsonl":
        return 0
    if stem.startswith("session.v") and stem.endswith(".jsonl"):
        number = stem[len("session.v"): -len(".jsonl")]
        if number.isdigit() and number[0] != "0":
            return int(number)
    return None


def log_file_name(version: int, *, compressed: bool) -> str:
    """The file name DSH (v0) or a released later generation (``session.vN.jsonl``) uses.

    The inverse of :func:`canonical_generation`, kept beside it so the two cannot drift.
    """
    stem = "session.jsonl" if version == 0 else f"session.v{version}.jsonl"
    return stem + (".zstd" if compressed else "")


def _expand_ranges(seqs: Any) -> Any:
    if not isinstance(seqs, list) or not any(isinstance(s, list) for s in seqs):
        return seqs
    out: list[Any] = []
    for item in seqs:
        if isinstance(item, list) and len(item) == 2 and all(isinstance(x, int) for x in item) and item[0] <= item[1]:
            out.extend(range(item[0], item[1] + 1))
        else:
            out.append(item)
    return out


def _source_to_v0(source: Any) -> Any:
    if not isinstance(source, dict):
        return source
    kind = source.get("kind")
    if not isinstance(kind, str) or kind in _CORE_KINDS:
        return source
    if kind in _V4_SOURCE_KINDS:
        plugin = _V4_SOURCE_KINDS[kind]
    elif kind.startswith("plugin:"):
        plugin = kind[len("plugin:"):]
    elif kind in _V4_SAME_NAME:
        plugin = kind
    else:
        return source  # a direct kind v0-v3 also wrote (agent-instructions, session-reference, ...)
    rest = {k: v for k, v in source.items() if k != "kind"}
    return {"kind": "plugin", "plugin": plugin, **rest}


def _tool_message_to_v0(message: Any) -> Any:
    if not isinstance(message, dict) or message.get("role") != "tool":
        return message
    block: dict[str, Any] = {"type": "tool-result", "toolCallId": message.get("toolCallId"),
                             "content": message.get("content")}
    if "isError" in message:
        block["isError"] = message["isError"]
    for key, value in message.items():
        if key.startswith("plugin:result:"):
            block[key[len("plugin:result:"):]] = value
    out: dict[str, Any] = {}
    for key, value in message.items():
        if key in ("toolCallId", "isError") or key.startswith("plugin:result:"):
            continue
        if key == "role":
            out["role"] = "user"
        elif key == "content":
            out["content"] = [block]
        elif key.startswith("plugin:message:"):
            out[key[len("plugin:message:"):]] = value
        else:
            out[key] = value
    return out


def _message_to_v0(message: Any, version: int) -> Any:
    if not isinstance(message, dict):
        return message
    if version >= 4:
        message = _tool_message_to_v0(message)
        source = _source_to_v0(message.get("source"))
        if source is not message.get("source"):
            message = {**message, "source": source}
    return message


def to_v0_shapes(event: dict[str, Any], version: int, notes: list[str]) -> dict[str, Any]:
    """Bring one raw event of ``version`` (1-4) to v0 shapes; appends a note per change kind."""
    out = event
    seqs = event.get("sourceEventSeqs")
    expanded = _expand_ranges(seqs)
    if expanded is not seqs:
        out = {**out, "sourceEventSeqs": expanded}
        notes.append("sourceEventSeqs ranges expanded")
    if version < 3:
        return out
    op = out.get("surfaceOp")
    if isinstance(op, dict) and "startSeq" in op:
        out = {**out, "surfaceOp": {"op": op.get("op"), "start": op.get("startSeq"), "end": op.get("endSeq")}}
        notes.append("v3 replace startSeq/endSeq -> start/end")
    if version < 4:
        return out
    etype = out.get("type")
    data = out.get("data")
    if etype == "user/message" and isinstance(data, dict):
        converted = _message_to_v0(data, version)
        if converted is not data:
            out = {**out, "data": converted}
            notes.append("v4 producer source -> v0 plugin source")
    elif etype == "session/title-llm-request" and isinstance(data, dict) and isinstance(data.get("messages"), list):
        messages = [_message_to_v0(m, version) for m in data["messages"]]
        if any(a is not b for a, b in zip(messages, data["messages"])):
            out = {**out, "data": {**data, "messages": messages}}
            notes.append("v4 producer source -> v0 plugin source")
    elif etype in ("tool/result", "assistant/message", "system/message", "developer/message") \
            and isinstance(data, dict):
        message = data.get("message")
        converted = _message_to_v0(message, version)
        if converted is not message:
            out = {**out, "data": {**data, "message": converted}}
            notes.append("v4 tool-role result -> v0 tool-result block" if etype == "tool/result"
                         else "v4 producer source -> v0 plugin source")
    return out


#: The record types :func:`body_mismatch` may find out of place: a reader asks it of no others.
BODY_CUE_TYPES = frozenset({"text-chunks", "reasoning-chunks", "tool-call-chunks", "assistant/chunk",
                            "assistant/message", "user/message", "tool/result", "request/header"})
_PACKED_ROWS = frozenset({"text-chunks", "reasoning-chunks", "tool-call-chunks"})


class BodyMismatch(NamedTuple):
    """A record the header's ``version`` does not have: ``record`` says what it is, ``newest`` the
    newest version whose writers write it (every older one does too), ``instead`` what ``version``
    writes in its place. ``newest`` is a number so that validate need not parse :attr:`written`."""

    version: int
    record: str
    newest: int
    instead: str

    @property
    def written(self) -> str:
        """The versions that write the record, as the messages say them (``"0 or 1"``, ``"0-2"``)."""
        return "0 or 1" if self.newest == 1 else f"0-{self.newest}"

    def message(self) -> str:
        """The one-line refusal, for the reader's error and validate's DSH114."""
        return (f"header version {self.version} does not fit this record: {self.record} is written only by "
                f"version {self.written} ({self.instead})")

    def hint(self) -> str:
        """What to do: the header is what is wrong, not the record."""
        return (f"the header says version {self.version} but the body is written as version {self.written}: "
                f"fix the header's version (and the file name's generation), or validate it with "
                f"`dsh-audit validate FILE`")


def body_mismatch(record: Any, version: int) -> BodyMismatch | None:
    """Whether raw ``record`` (one line's JSON value, a packed row undecoded) belongs to an older
    body than a ``version`` header declares; None when it fits (or is for the other rules to judge).

    Cues (format-versions §4-§6): v2+ has no packed rows, no ``assistant/chunk``, a ``stream`` in
    every ``assistant/message`` and no ``sourceEventSeqs`` on it; v3+ has no ``header.system`` in
    ``request/header`` and no ``start``/``end`` replace ops; v4 writes tool results as
    ``role: 'tool'`` messages and no ``plugin`` source kind (§6.5).

    Example:
        >>> body_mismatch({"type": "text-chunks", "seq0": 4}, 2).record
        'a packed text-chunks row'
        >>> body_mismatch({"type": "assistant/chunk", "seq": 4}, 1) is None
        True
    """
    if version < 2 or type(record) is not dict:
        return None
    etype = record.get("type")
    if type(etype) is not str or etype not in BODY_CUE_TYPES:
        return None
    data = record.get("data")
    if etype in _PACKED_ROWS:
        return BodyMismatch(version, f"a packed {etype} row", 1, "v2+ writes one event per line")
    if etype == "assistant/chunk":
        return BodyMismatch(version, "an assistant/chunk event", 1,
                            "v2+ keeps the chunks in data.stream")
    if etype == "assistant/message" and isinstance(data, dict) and "stream" not in data:
        return BodyMismatch(version, "an assistant/message without data.stream", 1,
                            "v2+ requires it")
    if etype == "assistant/message" and "sourceEventSeqs" in record:
        return BodyMismatch(version, "an assistant/message citing sourceEventSeqs", 1,
                            "v2+ drops the chunk citations")
    return _v3_mismatch(record, etype, data, version) if version >= 3 else None


def _v3_mismatch(record: dict[str, Any], etype: str, data: Any, version: int) -> BodyMismatch | None:
    """:func:`body_mismatch`'s cues of a v3 or v4 header."""
    op = record.get("surfaceOp")
    if isinstance(op, dict) and op.get("op") == "replace" and "startSeq" not in op and "start" in op:
        return BodyMismatch(version, f"a {etype} replace with start/end", 2, "v3+ writes startSeq/endSeq")
    header = data.get("header") if isinstance(data, dict) else None
    if etype == "request/header" and isinstance(header, dict) and "system" in header:
        return BodyMismatch(version, "a request/header carrying header.system", 2,
                            "v3+ keeps the system prompt as system/message events")
    if version < 4 or not isinstance(data, dict):
        return None
    message = data if etype == "user/message" else data.get("message")
    if etype == "tool/result" and isinstance(message, dict) and message.get("role") == "user":
        return BodyMismatch(version, "a tool/result whose message has role user", 3,
                            "v4 writes tool results as role tool messages")
    source = message.get("source") if isinstance(message, dict) else None
    if isinstance(source, dict) and source.get("kind") == "plugin":
        return BodyMismatch(version, f"a {etype} whose source kind is plugin", 3,
                            "v4 names the producer as the kind")
    return None
