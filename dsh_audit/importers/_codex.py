"""Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) as requests.

What the format is (public sources read for this module; nothing copied): openai/codex
``codex-rs/protocol/src/protocol.rs`` (``RolloutLine {timestamp, type, payload}`` with
``RolloutItem`` = ``session_meta`` | ``response_item`` | ``compacted`` | ``turn_context`` |
``event_msg``; ``SessionMeta {id, cwd, cli_version, model_provider, base_instructions,
forked_from_id, source}``; ``CompactedItem {message, replacement_history?}``; ``TokenCountEvent
{info: TokenUsageInfo?, rate_limits}`` with ``TokenUsageInfo {total_token_usage,
last_token_usage, model_context_window}`` and ``TokenUsage {input_tokens, cached_input_tokens,
output_tokens, reasoning_output_tokens, total_tokens}``), ``codex-rs/protocol/src/models.rs``
(``ResponseItem``: ``message``, ``reasoning``, ``function_call``, ``function_call_output``,
``custom_tool_call``, ``local_shell_call``, ``web_search_call``, ``compaction``...),
``codex-rs/codex-api/src/sse/responses.rs`` (``input_tokens`` is the Responses API's, which
*includes* cached tokens; ``cached_input_tokens`` = ``input_tokens_details.cached_tokens``) and
``codex-rs/core`` (``Session::update_rate_limits`` re-sends ``token_count`` with unchanged info;
``compact.rs`` rebuilds history after a compaction).

Mapping. Codex resends the whole history on every request, so request *k*'s ``messages`` are the
``response_item`` records logged before its first output item (assistant message, reasoning or a
tool call): user and developer messages, earlier responses, tool outputs. Consecutive output items
of one response form one assistant message (``reasoning`` summary text → ``reasoning`` block with
its ``encryptedContent``; ``function_call`` → ``tool-call`` with ``call_id`` and the raw
``arguments``); ``function_call_output`` → a tool-result message. A request ends at the first
``token_count`` whose cumulative ``total_token_usage`` moved (repeats from rate-limit updates and
estimates are skipped; a damaged ``token_count`` still ends the open request, its usage not logged,
said in a warning with its line); its ``last_token_usage`` gives ``usage``: ``inputTokens`` =
``input_tokens - cached_input_tokens``, ``cacheReadTokens`` = ``cached_input_tokens``,
``outputTokens`` = ``output_tokens`` (reasoning included, as DeepSeek's), ``reasoningTokens`` =
``reasoning_output_tokens``; Codex has no cache-write bucket. ``header`` is
``{config:{provider: model_provider or 'openai', model, reasoningEffort?}, system?}`` from
``session_meta``/``turn_context`` (``system`` = ``base_instructions.text`` when logged). A
``compacted`` record replaces the history (``replacement_history`` when present, else the earlier
user prompts plus the summary, an approximation); the call that produced the summary becomes a
``compaction`` request and the next request cites ``extra["event"] = "compaction"``. A repeated
``session_meta`` marks a resume; ``forked_from_id`` a fork. A ``session_meta`` id that is not a
string refuses the rollout (file:line), as DSH refuses such a header id.

What the format cannot tell: the tool schemas (never logged); the system prompt of versions that do
not log ``base_instructions``; the summarisation prompt of a compaction; the finish reason (inferred
from the output items); failed attempts and retries (no ``token_count``); the exact history after a
compaction without ``replacement_history``; and which part of a forked rollout was copied.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

from .._show import typed
from .._usage_rule import MAX_SAFE, MAX_TOKENS, count_of
from ..errors import MalformedRecordError
from ..replay import Digest, Request
from ._base import ImporterBase
from ..log import every_record_damaged
from ._model import NOT_LOGGED, ImportedSession, iso_seconds, line_warning, read_jsonl
from ._responses import TOOL_CALLS, History, is_output, responses_usage

__all__ = ["import_codex"]

FORMAT = "codex"
_BASE_NOTES = ("codex logs no tool schemas: headers hold provider, model, effort and (when logged) the "
               "base instructions only",
               "codex logs no finish reason: finish is inferred from the response's output items")
#: The agent, and what its rollout does not record of a request it sent (docs/importers.md, "What
#: Codex rollouts cannot tell"): why ``render`` writes DSH's request for it, not Codex's.
UNRECORDED = ("Codex", "no tool schemas, no system prompt in versions that do not log base_instructions, and "
              "not the request body it sent")


class _Importer(ImporterBase):
    format = FORMAT

    def __init__(self, path: str) -> None:
        super().__init__(path, _BASE_NOTES)
        self.requests: list[Request] = []
        self.session_id: str | None = None
        self.cwd: str | None = None
        self.created: float | None = None
        self.provider = "openai"
        self.model: str | None = None
        self.effort: str | None = None
        self.system: str | None = None
        self.header: dict[str, Any] | None = None
        self.header_seq: int | None = None
        self.header_reason: str | None = None
        self.history = History(self.provider)
        self.open: dict[str, Any] | None = None
        self.total: Any = None
        self.last: Any = None  # the last_token_usage of the last call
        #: a damaged token_count taken as a repeat: its line, time and the warning to give (None: said),
        #: and the usage and what it was priced from (:meth:`on_token_count`) where it may be a call
        self.unsure: tuple[int, float | None, str | None, Any, Any] | None = None
        self.lost = False  # the last total was missing or damaged (total_moved)
        self.disagrees = False  # the last total moved by other than its last_token_usage (total_moved)
        self.difference: dict[str, Any] | None = None  # then the usage it is priced from (disagreed)
        #: the warning of a disagreeing event held back (:meth:`disputed`): its index, line and text as a call
        self.reword: tuple[int, int, str] | None = None
        #: the last warning of how a call is priced (its usage damaged, or its total disputed): its index, line
        #: and what it says is done, reworded if the event resent whole gives the call its usage (:meth:`relogged`)
        self.unlogged: tuple[int, int, str] | None = None
        self.unkept: Any = None  # the whole total of the event that disagreed, until the next token_count
        #: request index -> the last_token_usage it was priced from with its total not kept, since the
        #: last whole total (what a later total must have risen by: :meth:`total_moved`)
        self.priced: dict[int, Any] = {}
        self.info: Any = None  # the last token_count's info (a repeat of it word for word is said once)
        self.counted = False  # a token_count held info: Codex writes it null only before its first usage
        self.turn = 0
        self.step = 0
        self.meta_count = 0
        self.event: dict[str, Any] | None = None
        self.closed_at_line: int | None = None  # the last request closed with nothing logged after it
        self.last_time: float | None = None
        self.usable = False  # a record with a payload object was read

    # -- header -----------------------------------------------------------------------------
    def set_header(self, line: int, *, resume: bool = False) -> None:
        if self.model is None:
            return  # session_meta names no model: the first turn_context starts the header
        config: dict[str, Any] = {"provider": self.provider, "model": self.model}
        if self.effort is not None:
            config["reasoningEffort"] = self.effort
        header: dict[str, Any] = {"config": config}
        if self.system:
            header["system"] = self.system
        if header != self.header or resume:
            reason = "initial" if self.header is None else "resume" if resume else "change"
            self.header, self.header_seq, self.header_reason = header, line, reason

    def on_session_meta(self, line: int, meta: dict[str, Any]) -> None:
        self.meta_count += 1
        meta_id = _meta_id(self.path, line, meta.get("id"))  # every one checked: a resume's too
        self.session_id = self.session_id or meta_id
        self.cwd = self.cwd or meta.get("cwd")
        self.provider = meta.get("model_provider") or self.provider
        self.history.provider = self.provider
        instructions = meta.get("base_instructions")
        if isinstance(instructions, dict) and isinstance(instructions.get("text"), str):
            self.system = instructions["text"]
        elif isinstance(meta.get("instructions"), str):
            self.system = meta["instructions"]
        if self.meta_count > 1:
            self.event = {"event": "resume", "event_seq": line}
        elif meta.get("forked_from_id"):
            self.event = {"event": "fork", "event_seq": line, "forked_from": meta["forked_from_id"]}
        self.set_header(line, resume=self.meta_count > 1)

    def on_turn_context(self, line: int, context: dict[str, Any]) -> None:
        self.model = context.get("model") or self.model
        self.effort = context.get("effort") if "effort" in context else self.effort
        self.cwd = self.cwd or context.get("cwd")
        self.set_header(line)

    # -- requests ---------------------------------------------------------------------------
    def begin(self, line: int) -> None:
        self.open = {"messages": tuple(self.history.messages), "seqs": tuple(self.history.seqs),
                     "first": line, "sent": self.last_time, "outputs": [], "header": self.header,
                     "header_seq": self.header_seq, "header_reason": self.header_reason}

    def close(self, line: int, usage: dict[str, Any] | None, done: float | None, *, answered: bool = True) -> None:
        if self.open is None:
            return
        current, self.open = self.open, None
        self.history.run = None
        self.step += 1
        outputs = current["outputs"]
        finish = {"kind": "tool-calls"} if any(k in TOOL_CALLS for k in outputs) else \
            {"kind": "stop"} if "message" in outputs else None
        extra: dict[str, Any] = {"format": FORMAT, "response_seqs": current.get("lines", []),
                                 "time": {"sent": current["sent"], "done": done}}
        if not answered:
            extra["unanswered"] = True
        else:
            extra["token_count_seq"] = line
        if self.event is not None:
            extra.update(self.event)
            self.event = None
        messages = current["messages"]
        self.requests.append(Request(
            index=len(self.requests), kind="loop", session_id=self.session_id or "", turn=self.turn or None,
            step=self.step, attempt=1, step_start_seq=current["seqs"][-1] if current["seqs"] else None,
            first_chunk_seq=current["first"], header=current["header"], header_seq=current["header_seq"],
            header_reason=current["header_reason"], messages=messages, message_seqs=current["seqs"],
            digest=Digest(self.digest(messages)),
            context={"provider": self.provider, "model": (current["header"] or {}).get("config", {}).get("model")},
            usage=usage, finish=finish, extra=extra,
        ))
        self.closed_at_line, self.unsure = line, None

    def on_response_item(self, line: int, payload: dict[str, Any]) -> None:
        if is_output(payload):
            if self.open is None:
                self.begin(line)
            assert self.open is not None
            self.open["outputs"].append(payload.get("type"))
            self.open.setdefault("lines", []).append(line)
        self.history.add(payload, line, self.model)
        self.unsure = None
        if is_output(payload):  # a new call began; an input item (a tool's output) leaves the last one closed
            self.closed_at_line = None

    def on_token_count(self, line: int, info: Any, time: float | None) -> None:
        """End the open request (or a call with no output item logged, a compaction's) at a
        ``token_count`` whose cumulative total moved. Where the total cannot tell (missing or
        damaged: :func:`_total_fault`), the open request still ends here, and with none open the event is
        a call unless it repeats the last ``last_token_usage``: a damaged event neither merges two
        calls nor splits one, and is said in a warning naming its line.

        The one rule (fuzz 30a): Codex only ever adds a call's ``last_token_usage`` to its total,
        so a whole total is the last whole one (a repeat) or that plus its own ``last_token_usage``
        (one call), in numbers; the first total is judged against its own call's (it holds every
        count that one does, and at least as many: a forked or resumed rollout's may hold more).
        Anything else is damage wherever it is (the first call's too), said once, its total never
        kept; the whole event resent after it is recognised by the same sum however many input items
        (a tool's output) were logged between, and repeats the call already made, never a new one (a
        compaction's too). A missing total alone is unsaid (the call is priced from its
        ``last_token_usage``); a missing ``last_token_usage`` is said where it ends a call, as there
        the usage is lost. A total that moved by other than its ``last_token_usage`` with none open
        is a call only if a compacted record follows, as a damaged one (fuzz 33: a later event
        copied in after a tool's output was a fifth call, priced past the log's own final total)."""
        if info is None and not self.counted:
            return  # a rate-limit update before the first call (Codex's info is null only then)
        if info == self.info and self.open is None:
            self.repeated(line, info, time)
            return  # the last event word for word (a rate-limit update): judged and said once
        self.info, self.counted = info, True
        warned = len(self.warnings)
        said = not isinstance(info, dict)
        if said:
            self.damaged(line, f"token_count info is {typed(info)}, not an object", _UNSURE)
            info = {}
        total, last = info.get("total_token_usage"), info.get("last_token_usage")
        previous, unkept, self.unkept = self.total, self.unkept, None
        if unkept is not None and total == unkept and last == self.last:
            self.unkept = unkept  # the event that disagreed, repeated word for word (a rate-limit update)
            return
        if self.open is None and self.lost and self.resends(previous, total, last, unkept=unkept):
            self.last, self.lost, self.disagrees, self.total, self.priced = last, False, False, total, {}
            usage = self.usage(line, responses_usage(last))
            if self.unsure is not None:  # a call if a compacted record follows: its usage if so
                self.unsure = (*self.unsure[:3], usage, None)
            else:
                self.requests[-1] = replace(self.requests[-1], usage=usage)
                self.relogged(line, usage)
            return  # the event a damaged one ended its call with, resent whole: that call's usage
        after_loss = self.lost
        moved = self.total_moved(line, total, last)
        known = isinstance(last, dict)  # none: a damaged event (info "x", {}) that cannot tell a call
        if moved is False or (moved is None and self.open is None and (last == self.last or not known)):
            if moved is None and not known:
                unsaid = None if len(self.warnings) > warned else f"{_no_last(info, last)}: {_RESENT}"
                self.unsure = (line, time, unsaid, None, None)  # a call if a compacted record follows (on_compacted)
            return  # a repeat sent with a rate-limit update, or a context estimate
        self.last = last
        usage = None
        if self.disagrees:
            usage = None if self.difference is None else self.usage(line, responses_usage(self.difference))
        elif known:
            given = len(self.warnings)
            usage = self.usage(line, responses_usage(last))
            self.unlogged = (given, line, NOT_LOGGED) if len(self.warnings) > given else self.unlogged
        elif not known and "last_token_usage" in info:
            self.damaged(line, _no_last(info, last), _UNPRICED)
        elif not known and not said:  # info {}: the usage is lost where a call ends, never silently
            self.damaged(line, _no_last(info, last), _RESENT)
        priced = (self.difference if self.disagrees else last if known else None) or _A_CALL
        unsure = after_loss or moved is None or self.disagrees  # fuzz 33 D2: a later event copied in
        if unsure and self.held():  # after a tool's output, a fifth call
            self.unsure = (line, time, None, usage, priced)  # the last call's event resent damaged, or a
            return  # compaction's call: a call only if a compacted record follows (fuzz 43: a fifth call)
        self.end(line, usage, time, priced)

    def relogged(self, line: int, usage: dict[str, Any] | None) -> None:
        """Reword the warning of how the last call is priced (not logged: its ``last_token_usage``
        damaged, as its total; or from the totals' difference) once the event resent whole on ``line``
        gives it its usage: the warning says what is done (session 44: "treated as not logged", or
        "priced from the totals' difference", though the resend priced it)."""
        ended = self.requests[-1].extra.get("token_count_seq")
        if usage is None or self.unlogged is None or self.unlogged[1] != ended:
            return
        index, _, then = self.unlogged
        self.warnings[index] = self.warnings[index].replace(
            then, f"its call's usage is the one the event resent whole on line {line} logs")
        self.unlogged = None

    def held(self) -> bool:
        """Whether a ``token_count`` that cannot tell a call (after a damaged one, or moved by other
        than its ``last_token_usage``) is held back: none open and no output item since the last call
        closed, so it is a call only if a compacted record follows (:meth:`on_compacted`)."""
        return self.open is None and self.closed_at_line is not None

    def repeated(self, line: int, info: Any, time: float | None) -> None:
        """Take a ``token_count`` that repeats the last one word for word, none open, as a repeat
        (a rate-limit update), unsaid: its damage was said once (fuzz 43: twice). Where the first
        ended the call before it and neither tells a call (no whole total, no ``last_token_usage``
        object), it may end a compaction's call: said only if a compacted record follows
        (:meth:`on_compacted`), as the first was."""
        ended = self.unsure is None and self.lost and self.requests and self.requests[-1].extra["response_seqs"]
        if not ended or isinstance(info, dict) and isinstance(info.get("last_token_usage"), dict):
            return
        why = (f"{_no_last(info, info.get('last_token_usage'))}: {_RESENT}" if isinstance(info, dict)
               else f"token_count info is {typed(info)}, not an object: {_UNSURE}")
        self.unsure = (line, time, why, None, None)

    def end(self, line: int, usage: dict[str, Any] | None, time: float | None, priced: Any) -> None:
        """End the call a ``token_count`` ends (the open one, or one with no output item logged),
        keeping what it was priced from while its total is not kept (:meth:`earlier`)."""
        if self.lost and priced is not None:  # its total not kept: a later whole one holds it too
            self.priced[len(self.requests)] = priced
        if self.open is None:
            self.begin(line)
        self.close(line, usage, time)

    def resends(self, previous: Any, total: Any, last: Any, *, unkept: Any) -> bool:
        """Whether a ``token_count`` with none open, after a damaged one, is the one a damaged event
        ended the last call with, resent whole: no output item was logged since that call closed (a
        tool's output may be: Codex resends after it), and either that event held this very total,
        not kept as its ``last_token_usage`` disagreed (``unkept``: :meth:`disagreed`) and this one's
        holds (:func:`_holds_call`), or the call has no usage or one priced with its total not kept
        (the event held no ``info`` object, no total, a damaged one, or a damaged count of the first
        call's ``last_token_usage``) and this whole total is the last whole one (``previous``) plus
        this ``last_token_usage`` (:func:`_one_call`). Told before the total is judged (fuzz 43: it
        was held to less than a call as one after a loss, and the resend became a new call)."""
        if self.closed_at_line is None or not self.requests:
            return False
        if unkept is not None and total == unkept:
            return _holds_call(previous, total, last)
        ended = (self.requests[-1].usage is None or len(self.requests) - 1 in self.priced) if self.unsure is None \
            else self.unsure[3] is None or self.unsure[4] is not None
        return ended and _total_fault(total, previous, last) is None and _one_call(previous, total, last)

    def total_moved(self, line: int, total: Any, last: Any) -> bool | None:
        """Whether a ``token_count``'s cumulative ``total_token_usage`` moved since the last whole
        one; None when it cannot tell: the total is missing or damaged (:func:`_total_fault`, said
        in a warning; a missing one is unsaid), or follows such a total. A damaged total is never
        kept: the same event resent whole after it is compared with the last whole total, so it is
        a repeat, not a new priced call; one that moved after it cannot tell either, as the damaged
        event may have ended a call the next one repeats whole, or repeated one it follows.

        A whole total that moved by other than its ``last_token_usage`` (``disagrees``: say a
        ``last_token_usage`` replaced by the cumulative total) did move: the event is a call, said in
        a warning, and its total is not kept either (:meth:`disagreed`). After a damaged total the
        call it ends may follow another unseen one, so its ``last_token_usage`` is held to less: at
        most what the total rose by since the last whole one, less the ``last_token_usage`` of each
        call priced since (:meth:`earlier`; fuzz 43: a damaged first total, then a
        ``last_token_usage`` made the total, was priced from it, silently: +54 %)."""
        previous, after_loss = self.total, self.lost
        fault = None if total is None else _total_fault(total, previous, last)
        self.disagrees = (fault is None and total is not None and total != previous
                          and isinstance(last, dict) and all(_number(count) for count in last.values())
                          and (last.get("input_tokens") == 0  # no prompt sent: no call (fuzz 43: $0, unsaid)
                               or not (_holds_call(previous, total, last, self.earlier(last)) if after_loss
                                       else _adds_up(previous, total, last))))
        if self.disagrees:  # damaged last counts (a string, null) are said as usage, not here
            self.lost = True
            return self.disagreed(line, previous, total, after_loss=after_loss)
        self.lost = total is None or fault is not None
        if fault is not None:
            self.damaged(line, f"token_count total_token_usage {fault}", _UNSURE)
        if self.lost:
            return None
        self.total, self.priced = total, {}
        if total == previous:
            return False
        return None if after_loss else True

    def earlier(self, last: Any) -> list[Any]:
        """The ``last_token_usage`` of each call priced since the last whole total with its own total
        not kept (damaged), which a whole total after it holds as well as its own call's: all but the
        last call's where this event may be that call's, resent (none open since it closed, and the
        same ``last_token_usage``)."""
        repeat = len(self.requests) - 1 if self.open is None and last == self.last else None
        return [usage for index, usage in self.priced.items() if index != repeat]

    def disagreed(self, line: int, previous: Any, total: Any, *, after_loss: bool) -> bool:
        """Warn of a total that moved by other than its ``last_token_usage``, and keep the usage
        the call it ends is priced from (``self.difference``): the totals' difference after a
        whole total, as Codex makes each total the last plus the call's usage, a total is checked
        against the last (it only adds up, by no more than a call holds) while the
        ``last_token_usage`` is not, and the session's sum then stays Codex's own total, as a
        Codex user reads it; with none before (a forked or resumed rollout's first total may hold
        earlier calls) nothing tells the call's usage: unpriced, said. Either way the total is not
        kept, so the event resent whole after it is a repeat (and gives an unpriced call its usage).
        After a damaged total (``after_loss``) the difference may hold the damaged event's call
        too, and the ``last_token_usage`` is more than it: the call is unpriced, said once, as where
        a damaged event loses a call's usage (fuzz 30a: it was priced from that
        ``last_token_usage``, the cumulative total, silently)."""
        self.unkept = total
        if after_loss:
            self.difference = None
            self.disputed(line, "token_count last_token_usage holds more than total_token_usage rose by since the "
                                "last whole total, less the calls priced since (Codex adds each call's to it)", _RESENT)
            return True
        self.difference = {key: count - previous[key] for key, count in total.items()} \
            if isinstance(previous, dict) else None
        then = ("the call it ends is priced from the totals' difference" if self.difference is not None
                else _RESENT)
        self.disputed(line, "token_count total_token_usage moved by other than its last_token_usage "
                            "(Codex adds each call's to it)", then)
        return True

    def disputed(self, line: int, why: str, then: str) -> None:
        """Warn of a total that moved by other than its ``last_token_usage`` saying what is done:
        ``then`` where it ends a call; where it is held back (:meth:`held`) it adds none (session 44:
        an event copied in after a tool's output was said priced, though nothing was), reworded to
        ``then`` if a compacted record follows and makes it the summarising call (``self.reword``)."""
        if not self.held():
            if then != _RESENT:  # "priced from the totals' difference": untrue once a resend prices it
                self.unlogged = (len(self.warnings), line, then)
            self.damaged(line, why, then)
            return
        self.reword = (len(self.warnings), line, f"{why}: {then}")
        self.damaged(line, why, f"{_HELD}{then})")

    def damaged(self, line: int, why: str, then: str) -> None:
        """Warn of a damaged ``token_count`` (``file:line: why: then``, as a damaged line's)."""
        self.warn(line, f"{why}: {then}")

    def on_compacted(self, line: int, payload: dict[str, Any]) -> None:
        if self.unsure is not None and self.open is None:  # a damaged token_count ended the summarising call
            line_ended, time, unsaid, usage, priced = self.unsure
            if unsaid is not None:  # info {}: the summarising call's usage is lost, never silently
                self.warn(line_ended, unsaid)
            if self.reword is not None and self.reword[1] == line_ended:  # said held back: now a call
                self.warnings[self.reword[0]] = line_warning(self.path, line_ended, self.reword[2])
            self.end(line_ended, usage, time, priced)
        last = self.requests[-1] if self.requests else None
        if self.closed_at_line is not None and last is not None and not last.extra["response_seqs"]:
            # the summarisation call: answered (token_count) with no output item logged
            self.requests[-1] = replace(last, kind="compaction")
            self.notes["a compaction request's messages lack the summarisation prompt Codex appends "
                       "to them (it is not logged)"] = None
        replacement = payload.get("replacement_history")
        fresh = History(self.provider)
        if isinstance(replacement, list):
            for item in replacement:
                if isinstance(item, dict):
                    fresh.add(item, line, self.model)
        else:
            self.notes["a compacted record without replacement_history: the history after it is "
                       "approximated as the earlier user prompts plus the summary"] = None
            for message, seq in zip(self.history.messages, self.history.seqs):
                if message["source"] == {"kind": "user"}:
                    fresh.messages.append(message)
                    fresh.seqs.append(seq)
            fresh.messages.append({"id": fresh.new_id(line), "role": "user",
                                   "content": [{"type": "text", "text": str(payload.get("message", ""))}],
                                   "source": {"kind": "plugin", "plugin": "compact"}})
            fresh.seqs.append(line)
        summary = str(payload.get("message", ""))
        for message in fresh.messages:
            if message["content"] and message["content"][0].get("text") == summary and message["role"] == "user":
                message["source"] = {"kind": "plugin", "plugin": "compact"}
        fresh.skipped = self.history.skipped
        self.history = fresh
        self.event = {"event": "compaction", "event_seq": line}

    def on_event(self, line: int, payload: dict[str, Any], time: float | None) -> None:
        kind = payload.get("type")
        if kind == "token_count":
            self.on_token_count(line, payload.get("info"), time)
        elif kind == "user_message":
            self.turn += 1
            self.step = 0
        elif kind == "thread_rolled_back":
            self.notes[f"line {line}: thread_rolled_back is not applied; later prompts may still show "
                       "the rolled-back turns"] = None

    def run(self) -> ImportedSession:
        damaged: list[int] = []  # lines not JSON objects, and records with no payload object
        for line, record in read_jsonl(self.path, self.warnings, damaged):
            time = iso_seconds(record.get("timestamp"))
            if self.created is None and time is not None:
                self.created = time
            kind, payload = record.get("type"), record.get("payload")
            if not isinstance(payload, dict):
                damaged.append(line)
                continue
            self.usable = True
            if kind == "session_meta":
                self.on_session_meta(line, payload)
            elif kind == "turn_context":
                self.on_turn_context(line, payload)
            elif kind == "response_item":
                self.on_response_item(line, payload)
            elif kind == "event_msg":
                self.on_event(line, payload, time)
            elif kind == "compacted":
                self.on_compacted(line, payload)
            if time is not None:
                self.last_time = time
        if not self.usable and damaged:  # said as what it is, not as an empty session
            raise every_record_damaged(FORMAT, self.path, lines=sorted(damaged),
                                       why="not a JSON object with a payload object")
        if self.open is not None:
            self.notes["the last response has no token_count: its request has no usage"] = None
            self.close(self.open["first"], None, None, answered=False)
        if self.history.skipped:
            self.notes["response items not sent to the model or not understood, left out: "
                       + ", ".join(sorted(self.history.skipped))] = None
        sid = self.session_id or os.path.basename(self.path).removesuffix(".jsonl")
        requests = tuple(r if r.session_id else replace(r, session_id=sid) for r in self.requests)
        return self.session(sid, requests, cwd=self.cwd, created=self.created)


#: The least a call priced with no usage adds to a later whole total: it sent a prompt.
_A_CALL = {"input_tokens": 1}
#: What the warning of a token_count that ends a call with no last_token_usage says is done.
_RESENT = "the call it ends is kept with no usage (the event resent whole right after gives it its usage)"
#: What the warning of a token_count whose call's usage nothing logged tells says is done.
_UNPRICED = "the call it ends is kept with no usage"
#: What the warning of a token_count held back (:meth:`_Importer.held`) says is done, before what is done
#: if a compacted record follows it.
_HELD = "it adds no call unless a compacted record follows it (then "
#: What the warning of a token_count whose total cannot tell a call from a repeat says is done.
_UNSURE = ("the open request ends here (the event resent whole right after gives it its usage); with none "
           "open it is a call unless it repeats the last last_token_usage or has none, or a compacted "
           "record follows it")


def _no_last(info: dict[str, Any], last: Any) -> str:
    """What a ``token_count`` whose ``last_token_usage`` is no object says of it."""
    if "last_token_usage" not in info:
        return "token_count info has no last_token_usage"
    return f"token_count last_token_usage is {typed(last)}, not an object"


def _total_fault(total: Any, previous: Any, last: Any = None) -> str | None:
    """Why a ``total_token_usage`` is damaged, or None: it is no object, lost a count the last
    whole total had (:func:`_lost_count`; the first total, a count its own call's ``last``
    holds, so the first call's is judged too), gained one it did not hold (Codex writes every count of
    ``TokenUsage``, always), one is no count by the project's rule (:func:`~dsh_audit._usage_rule.count_of`,
    bounded by a safe integer: ``1.5`` or ``-1``, fuzz 43; the first total's too, its own call's count
    damaged as well or not, as it would be the base later calls are priced against), a count went
    down (a cumulative count only adds up), or one rose by more than one call can hold
    (:data:`~dsh_audit._usage_rule.MAX_TOKENS`; the first total is not judged so: its
    ``last_token_usage``, the same call's, is). Every such total is alike: not kept, never compared
    with the next.

    Example:
        >>> _total_fault("x", None), _total_fault({"input_tokens": 2}, {"input_tokens": 3})
        ('is a string "x", not an object', 'went down (it only adds up)')
        >>> _total_fault({"input_tokens": 10**12}, {"input_tokens": 3000})
        'input_tokens rose by 999,999,997,000 at once, past the 1,000,000,000 tokens a call holds'
        >>> _total_fault({"input_tokens": 10**12}, None) is None
        True
        >>> _total_fault({"input_tokens": 3, "new_tokens": 0}, {"input_tokens": 3})
        'gained new_tokens, which the last total did not hold'
        >>> _total_fault({"input_tokens": None}, None, {"input_tokens": 3000})
        'input_tokens is null, not a number'
        >>> _total_fault({"input_tokens": 3000, "cached_input_tokens": 1.5}, {"input_tokens": 3000})
        'cached_input_tokens is a number 1.5, not a count'
    """
    if not isinstance(total, dict):
        return f"is {typed(total)}, not an object"
    before = previous if isinstance(previous, dict) else {}
    own = before or (last if isinstance(last, dict) else {})  # the first total: its own call's
    lost = _lost_count(total, own)
    if lost is not None:
        return lost
    wrong = next((key for key, count in total.items() if count_of(count, most=MAX_SAFE) is None), None)
    if wrong is not None:  # a cumulative count is one by DSH's rule (validate's), bounded by a safe integer,
        # the first total's too, whatever its own call's holds (session 44: a first -5 was kept, a base)
        return f"{wrong} is {typed(total[wrong])}, not a count"
    gained = [key for key in total if before and key not in before]
    if gained:
        return f"gained {gained[0]}, which the last total did not hold"
    if any(_lower(total.get(key), before.get(key)) for key in total):
        return "went down (it only adds up)"
    for key, count in total.items():
        rise = count - before[key] if _number(count) and _number(before.get(key)) else 0
        if rise > MAX_TOKENS:
            return f"{key} rose by {rise:,} at once, past the {MAX_TOKENS:,} tokens a call holds"
    return None


def _one_call(previous: Any, total: Any, last: Any) -> bool:
    """Whether ``total`` is the whole total ``previous`` (none before the first call) plus one call,
    ``last`` (its ``last_token_usage``), in every count: Codex adds each call's usage to its total,
    so a call after another unseen one (a compaction's, after the damaged event) adds more.

    Example:
        >>> before, last = {"input_tokens": 3000}, {"input_tokens": 3100}
        >>> _one_call(before, {"input_tokens": 6100}, last), _one_call(before, {"input_tokens": 9300}, last)
        (True, False)
        >>> _one_call(None, {"input_tokens": 3100}, last), _one_call(before, {}, last), _one_call(before, last, "x")
        (True, False, False)
    """
    if not isinstance(total, dict) or not total or not isinstance(last, dict):
        return False
    before = previous if isinstance(previous, dict) else {}
    return all(_number(count) and _number(last.get(key)) and _number(before.get(key, 0))
               and count == before.get(key, 0) + last[key] for key, count in total.items())


def _adds_up(previous: Any, total: Any, last: Any) -> bool:
    """Whether a whole ``total`` that moved holds its own call's ``last``: the last whole total
    plus it (:func:`_one_call`), or with none before, at least it in every count (a forked or
    resumed rollout's first total may hold calls made before it; never fewer than its own), by no
    more than a call holds (:data:`~dsh_audit._usage_rule.MAX_TOKENS`: else every later whole
    total would seem to go down).

    Example:
        >>> last = {"input_tokens": 3000}
        >>> _adds_up(None, {"input_tokens": 9000}, last), _adds_up(None, {"input_tokens": 1}, last)
        (True, False)
        >>> _adds_up(None, {"input_tokens": 10**12}, last)
        False
        >>> _adds_up({"input_tokens": 3000}, {"input_tokens": 3000}, {"input_tokens": 3000})
        False
    """
    if previous is not None:
        return _one_call(previous, total, last)
    return all(_number(count) and _number(last.get(key)) and 0 <= count - last[key] <= MAX_TOKENS
               for key, count in total.items())


def _holds_call(previous: Any, total: Any, last: Any, earlier: list[Any] | None = None) -> bool:
    """Whether a whole ``total`` after a damaged one rose since the last whole total (``previous``;
    none before the first call) by at least its own call's ``last`` plus the ``last_token_usage``
    of each call priced since (``earlier``) in every count: the damaged event may have ended a call
    in between, which adds more, but never less than these. A ``last`` that is no object holds no
    call (as for :func:`_one_call`).

    Example:
        >>> before, total = {"input_tokens": 3000}, {"input_tokens": 9300}
        >>> _holds_call(before, total, {"input_tokens": 3200}), _holds_call(before, total, total)
        (True, False)
        >>> _holds_call(None, total, total), _holds_call(before, total, {"input_tokens": "9300"})
        (True, False)
        >>> _holds_call(None, total, total, [{"input_tokens": 3000}]), _holds_call(before, total, None)
        (False, False)
    """
    if not isinstance(total, dict) or not isinstance(last, dict):
        return False
    before = previous if isinstance(previous, dict) else {}
    priced = [usage for usage in earlier or () if isinstance(usage, dict)]
    return all(_number(count) and _number(last.get(key)) and _number(before.get(key, 0))
               and count - before.get(key, 0) >= last[key] + sum(_count(usage.get(key)) for usage in priced)
               for key, count in total.items())


def _count(value: Any) -> int | float:
    """A count, or 0 for what is none (a damaged count prices nothing, so it is not held)."""
    return value if _number(value) else 0


def _lower(count: Any, before: Any) -> bool:
    """Whether a cumulative count went down (counts that are not numbers are not compared)."""
    return _number(count) and _number(before) and count < before


def _lost_count(total: dict[str, Any], previous: dict[str, Any]) -> str | None:
    """What a total says of a count the last total held as a number and it no longer does (Codex
    writes every ``TokenUsage`` count, always a number), or None: such a total can neither be
    compared nor taken as a new call, as a count gone missing is not a count that moved.

    Example:
        >>> _lost_count({"output_tokens": 40}, {"input_tokens": 3000, "output_tokens": 40})
        'lacks input_tokens'
        >>> _lost_count({"input_tokens": "12"}, {"input_tokens": 3000})
        'input_tokens is a string "12", not a number'
        >>> _lost_count({"input_tokens": 3001}, {"input_tokens": 3000}) is None
        True
    """
    for key, before in previous.items():
        if not _number(before) or _number(total.get(key)):
            continue
        return f"lacks {key}" if key not in total else f"{key} is {typed(total[key])}, not a number"
    return None


def _number(value: Any) -> bool:
    """Whether a count is a number (a boolean is not)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _meta_id(path: str, line: int, value: Any) -> str | None:
    """A ``session_meta`` id, refused when not a string, as DSH's reader refuses a header id: Codex
    writes a uuid there (its ``ThreadId``, which it reads back only from a string), and every view
    names the session by it, so a number or list would name it differently in each.

    Raises:
        MalformedRecordError: the id is a number, boolean, array or object.
    """
    if value is None or isinstance(value, str):
        return value or None
    raise MalformedRecordError(f"session_meta id is {typed(value)}, not a string", path=path, line=line,
                               hint="Codex writes the session's uuid there as a string: the rollout is damaged; "
                                    "fix the id or move the file out of the folder read")


def import_codex(path: str | os.PathLike[str]) -> ImportedSession:
    """Map one Codex CLI rollout onto requests (one per model call).

    Args:
        path: a ``rollout-<time>-<uuid>.jsonl`` file.

    Raises:
        UnreadableError: the file cannot be opened.
        MalformedRecordError: no record of it can be read (every line damaged: not JSON, or a
            record with no payload object), said with how many and the first; or a
            ``session_meta`` id is not a string.

    Example:
        >>> session = import_codex("tests/data/importers/codex/rollout.jsonl")  # doctest: +SKIP
        >>> [r.kind for r in session.requests]  # doctest: +SKIP
        ['loop', 'loop', 'compaction', 'loop']
    """
    return _Importer(os.fspath(path)).run()
