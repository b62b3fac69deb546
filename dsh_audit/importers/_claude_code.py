"""Claude Code transcripts (``~/.claude/projects/<project>/<session-uuid>.jsonl``) as requests.

What the format is (public descriptions read for this module; nothing copied):

* neilberkman/ccrider ``research/schema.md`` and microsoft/amplifier
  ``ai_working/claude_code_logging/session_format_specification.md``: one JSON record per line;
  ``type`` is ``user``, ``assistant``, ``system``, ``summary``, ``file-history-snapshot`` (and
  newer bookkeeping types); conversation records carry ``uuid``, ``parentUuid``, ``sessionId``,
  ``timestamp``, ``isSidechain``, ``cwd`` and ``message`` (``{role, content}``; assistant
  messages add ``id``, ``model``, ``stop_reason`` and ``usage``). Records form a tree through
  ``parentUuid`` (edits and "redo" branch it); ``/compact`` writes a ``system`` record with
  ``subtype: "compact_boundary"``, ``parentUuid: null``, ``logicalParentUuid`` and
  ``compactMetadata {trigger, preTokens}``, followed by a ``user`` record with
  ``isCompactSummary: true`` holding the summary.
* Issue threads ccusage/ccusage#985, michellzappa/headroom#28,
  jhlee0409/claude-code-history-viewer#283 and junhoyeo/tokscale#563: one API response is written
  as several ``assistant`` records, one per content block, sharing ``message.id`` (``requestId``
  is sometimes absent) and repeating ``usage``; an early record may carry a partial output count.
* Anthropic Messages usage: ``input_tokens`` excludes ``cache_read_input_tokens`` and
  ``cache_creation_input_tokens`` (Anthropic prompt-caching docs; DSH's pi-ai mapping relies on the
  same fact, spec §5.6).

Mapping. One :class:`Request` per distinct ``message.id`` of non-synthetic assistant records, in
file order (a record whose ``message.id`` is no string: per ``requestId``, said in a warning). Its
``messages`` are the conversation records on the ``parentUuid`` chain that leads
to the response's first record (back to the root or to a compact boundary): user records become
user messages (``tool_result`` blocks become DSH tool-result messages, source ``{kind:'tool'}``),
consecutive assistant records of one response become one assistant message (``thinking`` →
``reasoning``, ``tool_use`` → ``tool-call`` with ``JSON.stringify(input)`` as ``arguments``).
``usage`` comes from the response's last record: ``inputTokens`` = ``input_tokens``,
``cacheReadTokens`` = ``cache_read_input_tokens``, ``cacheWriteTokens`` =
``cache_creation_input_tokens`` (each when the record has it), ``outputTokens`` =
``output_tokens``. ``header`` is ``{config:{provider:'anthropic', model}}``. A compaction is cited
on the first request after its boundary as ``extra["event"] = "compaction"`` with ``event_seq``
(the boundary's line) and ``compaction`` (its metadata); records copied from another session id
set ``extra["copied_from"]`` and the first request after them gets ``extra["event"] = "resume"``.
Every request carries the file's session id, the one every view names the session by; a sidechain
(subagent) request names its conversation in ``extra["conversation"]`` (``<session>/agent-<agentId>``,
or ``<session>/sidechain-<root line>``), and its turns and steps are counted in it. The session's
title is the one Claude Code's ``/resume`` shows (:func:`_title`): a ``/rename``'s ``custom-title``
record, else the ``summary`` record of the conversation's leaf (``leafUuid``).

What the format cannot tell: the system prompt and the tool schemas (never logged, so ``header``
has no ``system``/``tools`` and a header change there is invisible); the exact prompt (Claude Code
adds reminders, attachments and ``cache_control`` markers it does not all log, so ``messages``
are the conversation as logged, not the bytes sent); the summarisation call of a compaction and
failed attempts (no assistant record); the reasoning effort / thinking budget; and anything
about another session file the log continues.
"""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._show import typed
from ..replay import Digest, Request
from ._anthropic import anthropic_usage, content_block, result_content
from ._base import ImporterBase
from ..log import every_record_damaged
from ._model import ImportedSession, iso_seconds, read_jsonl, tool_result_message

__all__ = ["import_claude_code"]

FORMAT = "claude-code"
_SYNTHETIC = "<synthetic>"
_BASE_NOTES = (
    "claude-code logs no system prompt and no tool schemas: headers hold provider and model only",
    "claude-code messages are the conversation as logged (parentUuid chain), not the exact prompt "
    "sent: reminders, attachments and cache_control markers are not all logged",
)
#: The agent, and what its transcript does not record of a request it sent (docs/importers.md,
#: "What Claude Code logs cannot tell"): why ``render`` writes DSH's request for it, not Claude Code's.
UNRECORDED = ("Claude Code", "no system prompt, no tool schemas, and not the exact prompt: system reminders, "
              "attachments and cache_control markers are not all logged")
_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool-calls", "max_tokens": "max-tokens"}

Line = tuple[int, dict[str, Any]]


def _message(record: dict[str, Any]) -> dict[str, Any]:
    message = record.get("message")
    return message if isinstance(message, dict) else {}


def _group_key(line: int, record: dict[str, Any]) -> str:
    """The response a record belongs to: its ``message.id``; where that is no string, its
    ``requestId`` (the API request it answered, one per response too), else its own line."""
    response_id = _message(record).get("id")
    if isinstance(response_id, str) and response_id:
        return response_id
    request_id = record.get("requestId")
    return f"request:{request_id}" if isinstance(request_id, str) and request_id else f"line:{line}"


def _is_boundary(record: dict[str, Any]) -> bool:
    return record.get("type") == "system" and record.get("subtype") == "compact_boundary"


def _is_prompt(record: dict[str, Any]) -> bool:
    """A user record a person typed (not a tool result, meta notice or compaction summary)."""
    if record.get("type") != "user" or record.get("isMeta") or record.get("isCompactSummary"):
        return False
    content = _message(record).get("content")
    if isinstance(content, list):
        return not any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    return isinstance(content, str)


@dataclass
class _Prompt:
    """One conversation's current chain and its projection, units marking where re-projection starts."""

    chain: list[Line] = field(default_factory=list)
    pos: dict[Any, int] = field(default_factory=dict)
    unit_starts: list[int] = field(default_factory=list)
    unit_counts: list[int] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    seqs: list[int] = field(default_factory=list)


class _Importer(ImporterBase):
    format = FORMAT

    def __init__(self, path: str) -> None:
        super().__init__(path, _BASE_NOTES)
        damaged: list[int] = []  # lines not JSON objects
        self.records: list[Line] = list(read_jsonl(path, self.warnings, damaged))
        _some_turn_read(path, self.records, damaged)
        self.by_uuid: dict[str, Line] = {}
        for line, record in self.records:
            uuid = record.get("uuid")
            if isinstance(uuid, str):
                self.by_uuid.setdefault(uuid, (line, record))
        self.session_id = self._session_id()
        self._users: dict[int, list[dict[str, Any]]] = {}
        self._assistants: dict[tuple[int, ...], dict[str, Any] | None] = {}
        self.used_boundaries: set[int] = set()
        self.copied_seen = False
        self.id_warned = False

    def _session_id(self) -> str:
        stem = Path(self.path).name.removesuffix(".jsonl")
        ids = [r["sessionId"] for _, r in self.records if isinstance(r.get("sessionId"), str)]
        return stem if stem in ids or not ids else ids[-1]

    # -- projection -------------------------------------------------------------------------
    def user_messages(self, line: int, record: dict[str, Any]) -> list[dict[str, Any]]:
        cached = self._users.get(line)
        if cached is not None:
            return cached
        uuid: str = record["uuid"] if isinstance(record.get("uuid"), str) else f"line-{line}"
        source: dict[str, Any] = {"kind": "user"}
        if record.get("isCompactSummary"):
            source = {"kind": "plugin", "plugin": "compact"}
        elif record.get("isMeta"):
            source = {"kind": "plugin", "plugin": "claude-code", "form": "notice"}
        content = _message(record).get("content")
        out: list[dict[str, Any]] = []
        pending: list[dict[str, Any]] = []

        def new_id() -> str:
            return uuid if not out else f"{uuid}:{len(out)}"

        def flush() -> None:
            if pending:
                out.append({"id": new_id(), "role": "user", "content": list(pending), "source": source})
                pending.clear()

        for block in content if isinstance(content, list) else [{"type": "text", "text": content or ""}]:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                flush()
                out.append(tool_result_message(new_id(), str(block.get("tool_use_id", "")),
                                               result_content(block.get("content")),
                                               is_error=bool(block.get("is_error"))))
            else:
                pending.append(content_block(block))
        flush()
        self._users[line] = out
        return out

    def assistant_message(self, part: list[Line]) -> dict[str, Any] | None:
        key = tuple(line for line, _ in part)
        if key in self._assistants:
            return self._assistants[key]
        first = part[0][1]
        model = _message(first).get("model")
        raw: list[Any] = []
        for _, record in part:
            content = _message(record).get("content")
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
            if len(blocks) >= len(raw) and blocks[: len(raw)] == raw:
                raw = list(blocks)  # a cumulative snapshot of the response so far
            else:
                raw.extend(blocks)
        message = None
        if model != _SYNTHETIC and raw:
            message = {"id": first.get("uuid") or f"line-{part[0][0]}", "role": "assistant",
                       "content": [content_block(b) for b in raw],
                       "source": {"kind": "model", "provider": "anthropic", "model": model}}
        self._assistants[key] = message
        return message

    def prompt(self, parent: Any, at_line: int, state: _Prompt) -> None:
        """Move ``state`` to the chain ending at ``parent``, re-projecting only what changed.

        The chain runs from the root (or the last compact boundary) down to ``parent``. Walking up
        stops at the first record the previous chain of this conversation holds, so a prompt that
        extends the previous one costs only its new records.
        """
        fresh: list[Line] = []
        shared, seen, uuid = -1, set(), parent
        while isinstance(uuid, str) and uuid not in seen:
            if uuid in state.pos:
                shared = state.pos[uuid]
                break
            seen.add(uuid)
            item = self.by_uuid.get(uuid)
            if item is None:
                self.notes[f"line {at_line}: parent record {uuid} is not in this file; the prompt "
                           "starts after the gap"] = None
                break
            fresh.append(item)
            if _is_boundary(item[1]):
                break
            uuid = item[1].get("parentUuid")
        unit = bisect.bisect_right(state.unit_starts, shared) - 1 if shared >= 0 else -1
        cut = state.unit_starts[unit] if unit >= 0 else 0
        for _line, record in state.chain[shared + 1:]:
            state.pos.pop(record.get("uuid"), None)
        del state.chain[shared + 1:]
        kept = state.unit_counts[unit] if unit >= 0 else 0
        del state.unit_starts[max(unit, 0):], state.unit_counts[max(unit, 0):]
        del state.messages[kept:], state.seqs[kept:]
        for item in reversed(fresh):
            state.pos[item[1].get("uuid")] = len(state.chain)
            state.chain.append(item)
        self.project(state, cut)

    def project(self, state: _Prompt, i: int) -> None:
        chain = state.chain
        while i < len(chain):
            line, record = chain[i]
            state.unit_starts.append(i)
            state.unit_counts.append(len(state.messages))
            if record.get("type") == "assistant":
                key, j = _group_key(line, record), i + 1
                while j < len(chain) and chain[j][1].get("type") == "assistant" and \
                        _group_key(*chain[j]) == key:
                    j += 1
                message = self.assistant_message(chain[i:j])
                if message is not None:
                    state.messages.append(message)
                    state.seqs.append(line)
                i = j
                continue
            if record.get("type") == "user":
                for message in self.user_messages(line, record):
                    state.messages.append(message)
                    state.seqs.append(line)
            i += 1

    # -- requests ---------------------------------------------------------------------------
    def groups(self) -> list[list[Line]]:
        found: dict[str, list[Line]] = {}
        for line, record in self.records:
            if record.get("type") == "assistant" and _message(record):
                found.setdefault(_group_key(line, record), []).append((line, record))
                self.mistyped_id(line, _message(record).get("id"))
        synthetic = [g for g in found.values() if _message(g[0][1]).get("model") == _SYNTHETIC]
        if synthetic:
            self.notes[f"{len(synthetic)} synthetic assistant record(s) (model <synthetic>: API error "
                       "texts, placeholders) are not model calls and are left out of prompts"] = None
        return [g for g in found.values() if _message(g[0][1]).get("model") != _SYNTHETIC]

    def mistyped_id(self, line: int, response_id: Any) -> None:
        """Warn once of a ``message.id`` that is not a string (``file:line``): its records are
        grouped into responses by ``requestId`` instead (:func:`_group_key`)."""
        if response_id is None or isinstance(response_id, str) or self.id_warned:
            return
        self.id_warned = True
        self.warn(line, f"message.id is {typed(response_id)}, not a string: assistant records are grouped into "
                  "responses by requestId (else one per record)")

    def conversation(self, record: dict[str, Any], chain: list[Line], line: int) -> str:
        if not record.get("isSidechain"):
            return self.session_id
        agent = record.get("agentId")
        if isinstance(agent, str) and agent:
            return f"{self.session_id}/agent-{agent}"
        root = chain[0][0] if chain else line
        return f"{self.session_id}/sidechain-{root}"

    def extra(self, group: list[Line], chain: list[Line]) -> dict[str, Any]:
        """``Request.extra``: ids, response lines, times, and the compaction or resume it follows."""
        first, last = group[0][1], group[-1][1]
        extra: dict[str, Any] = {"format": FORMAT, "response_id": _message(first).get("id"),
                                 "response_seqs": [line for line, _ in group]}
        request_id = last.get("requestId") or first.get("requestId")
        if isinstance(request_id, str):
            extra["request_id"] = request_id
        if first.get("isSidechain"):
            extra["sidechain"] = True
        origin = first.get("sessionId")
        if isinstance(origin, str) and origin != self.session_id:
            extra["copied_from"] = origin
            self.copied_seen = True
        elif self.copied_seen:
            extra["event"], extra["event_seq"] = "resume", group[0][0]
            self.copied_seen = False
        if chain and _is_boundary(chain[0][1]) and chain[0][0] not in self.used_boundaries:
            self.used_boundaries.add(chain[0][0])
            extra["event"], extra["event_seq"] = "compaction", chain[0][0]
            extra["compaction"] = chain[0][1].get("compactMetadata")
            self.notes["claude-code does not log the summarisation call of a compaction; its "
                       "boundary is cited on the next request"] = None
        sent = iso_seconds(chain[-1][1].get("timestamp")) if chain else None
        extra["time"] = {"sent": sent, "done": iso_seconds(last.get("timestamp"))}
        return extra

    def run(self) -> ImportedSession:
        prompts: dict[str, list[int]] = {}
        for line, record in self.records:
            if _is_prompt(record):
                prompts.setdefault(self.conversation(record, [(line, record)], line), []).append(line)
        state_of: dict[str, dict[str, Any]] = {}
        prompts_by_agent: dict[tuple[bool, Any], _Prompt] = {}
        requests: list[Request] = []
        for group in self.groups():
            first_line, first = group[0]
            last = group[-1][1]
            state = prompts_by_agent.setdefault((bool(first.get("isSidechain")), first.get("agentId")), _Prompt())
            self.prompt(first.get("parentUuid"), first_line, state)
            chain, messages, seqs = state.chain, state.messages, state.seqs
            sid = self.conversation(first, chain, first_line)
            conv = state_of.setdefault(sid, {"model": None, "header_seq": None, "turn": None, "step": 0})
            turn = bisect.bisect_left(prompts.get(sid, []), first_line) or None
            conv["step"] = conv["step"] + 1 if turn == conv["turn"] else 1
            conv["turn"] = turn
            model = _message(first).get("model")
            reason = "initial" if conv["header_seq"] is None else "change" if model != conv["model"] else None
            if reason is not None:
                conv["model"], conv["header_seq"], conv["reason"] = model, first_line, reason
            extra = self.extra(group, chain)
            if sid != self.session_id:
                extra["conversation"] = sid
            stop = _message(last).get("stop_reason")
            finish = {"kind": _FINISH.get(stop, "stop")} if isinstance(stop, str) else None
            message_tuple = tuple(messages)
            requests.append(Request(
                index=len(requests), kind="loop", session_id=self.session_id, turn=turn, step=conv["step"],
                attempt=1, step_start_seq=chain[-1][0] if chain else None, first_chunk_seq=first_line,
                header={"config": {"provider": "anthropic", "model": model}}, header_seq=conv["header_seq"],
                header_reason=conv["reason"], messages=message_tuple, message_seqs=tuple(seqs),
                digest=Digest(self.digest(message_tuple)), context={"provider": "anthropic", "model": model},
                usage=self.usage(group[-1][0], anthropic_usage(_message(last).get("usage"))), finish=finish, extra=extra,
            ))
        created = next((iso_seconds(r.get("timestamp")) for _, r in self.records if r.get("timestamp")), None)
        cwd = next((r["cwd"] for _, r in self.records if isinstance(r.get("cwd"), str)), None)
        return self.session(self.session_id, tuple(requests), cwd=cwd, created=created,
                            title=_title(self.records, self.by_uuid))


def _title(records: list[Line], by_uuid: dict[str, Line]) -> str | None:
    """The session's title, as Claude Code names it in ``/resume``: the last ``custom-title``
    record's ``customTitle`` (a ``/rename``), else the ``summary`` of its conversation. Claude Code
    writes a ``{"type": "summary", "summary", "leafUuid"}`` record per conversation leaf it titled
    (several in a file that branched, or that a resume copied), so the title is the summary of the
    file's last main-conversation record or, when that leaf has none yet, of the nearest record
    before it on its ``parentUuid`` chain (across a compaction, by its ``logicalParentUuid``). A
    summary of another branch names another conversation: None then (as with no summary); the
    last record of a leaf wins. Kept as logged: every view escapes a title as it shows it."""
    renamed = [record["customTitle"] for _, record in records
               if record.get("type") == "custom-title" and _text(record.get("customTitle"))]
    if renamed:
        return str(renamed[-1])
    summaries = {record["leafUuid"]: record["summary"] for _, record in records
                 if record.get("type") == "summary" and isinstance(record.get("leafUuid"), str)
                 and _text(record.get("summary"))}
    leaf = next((record for _, record in reversed(records) if record.get("type") in ("user", "assistant")
                 and not record.get("isSidechain") and isinstance(record.get("uuid"), str)), None)
    seen: set[str] = set()
    while summaries and leaf is not None and leaf["uuid"] not in seen:
        if leaf["uuid"] in summaries:
            return str(summaries[leaf["uuid"]])
        seen.add(leaf["uuid"])
        parent = leaf.get("logicalParentUuid" if _is_boundary(leaf) else "parentUuid")
        leaf = by_uuid[parent][1] if isinstance(parent, str) and parent in by_uuid else None
    return None


def _text(value: Any) -> bool:
    """Whether a title field holds one: a string with more than blanks."""
    return isinstance(value, str) and bool(value.strip())


def _some_turn_read(path: str, records: list[Line], damaged: list[int]) -> None:
    """Refuse a transcript none of whose user or assistant records could be read, some damaged:
    lines not JSON objects (``damaged``), or records with no message object. It is said as what
    it is, a damaged transcript, not imported as an empty session.

    Raises:
        MalformedRecordError: the damaged lines' count and the first.
    """
    turns = [(line, record) for line, record in records if record.get("type") in ("user", "assistant")]
    if any(isinstance(record.get("message"), dict) for _, record in turns):
        return
    damaged = sorted([*damaged, *(line for line, _ in turns)])
    if damaged:
        raise every_record_damaged(FORMAT, path, lines=damaged, records="user or assistant record",
                                   why="not a JSON object or with no message object")


def import_claude_code(path: str | os.PathLike[str]) -> ImportedSession:
    """Map one Claude Code transcript onto requests (one per model call).

    Args:
        path: a ``<session-uuid>.jsonl`` (or subagent ``agent-<id>.jsonl``) transcript.

    Raises:
        UnreadableError: the file cannot be opened.
        MalformedRecordError: no user or assistant record of it can be read, some damaged (not
            JSON, or with no message object), said with how many and the first.

    Example:
        >>> session = import_claude_code("tests/data/importers/claude-code/x.jsonl")  # doctest: +SKIP
        >>> [r.usage["cacheReadTokens"] for r in session.requests]  # doctest: +SKIP
        [0, 2048, 2304]
    """
    return _Importer(os.fspath(path)).run()
