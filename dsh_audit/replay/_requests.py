"""Request enumeration (spec §7.3): every dispatched attempt and every auxiliary call of a log.

One pass over the events keeps three folds (surface, header, latest ``request/context``). An
attempt starts at the first ``assistant/chunk`` of its ``(turn, step)`` after ``step/start`` or
after the previous attempt's ``finish``; its messages and header are what the log held just
before that chunk. Retries inside a step are further attempts of the same step, and only a failed
finish (``error`` or ``aborted``, the only ones DSH's ``AgentLoop.step`` retries) has one: chunks of a step
after any other finish are noted, not a request, inside the step or after its end. As DSH's rule
(``request-reconstruction.spec.ts`` THEOREM: the first chunk of the step's turn/step anywhere) has
it, a step/end ends only the step it names, and a step that ended without a chunk still gets its
request at its first chunk found later; so does the retry of a step whose last attempt failed (or was
still streaming) when its step/end came: a chunk of that step after the failed finish is its next attempt,
the log as it stands before that chunk (DSH's ``AgentLoop.step`` re-derives messages and header for each
retry). A header whose system or tools is null, which DSH's fold
throws on, refuses every request after it (DSH builds none). A
``compaction/summary`` with ``llmStreamCall: true`` is one compaction call; a
``session/title-llm-request`` is one title call; a ``web/deepseek-search-llm-request`` is one search
call (its literal body is logged). Steps below a child's ``seedLength`` were copied
from the parent and are not this log's requests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from .._json import as_object
from .._show import shown, typed
from ..errors import ReplayError
from ..jsjson import sha256_hex
from ..log import Event, SessionLog
from ._derive import derive_event_message
from ._header import canonical_header, unfoldable_field, unfoldable_words
from ._model import Digest, ReplayResult, Request, RequestTime, request_of
from ._surface import SurfaceFold, _is_seq

__all__ = ["iter_requests", "replay", "surface_refusal"]

#: What each surface fault DSH refuses (``_surface.py``'s words) needs, and validate's rules of it.
_SURFACE_FIXES = (
    ("invalid replace surfaceOp", 'write a replace as {"op":"replace","start":SEQ,"end":SEQ}, those members only, '
     "start and end the seqs of surface nodes", "DSH303"),
    ("invalid surfaceOp", 'write surfaceOp "append" or {"op":"replace","start":SEQ,"end":SEQ}', "DSH303"),
    ("requires a surfaceOp", 'write surfaceOp "append" on each user/message, assistant/message and tool/result',
     "DSH302"),
    ("not surface-eligible", "only user/message, assistant/message and tool/result carry surfaceOp and "
     "sourceEventSeqs", "DSH301"),
    ("surface replace:", "replace only nodes on the surface now, start not after end", "DSH304, DSH305"),
    ("sourceEventSeqs", "cite each earlier source event once, in an array", "DSH307-DSH309"),
    ("tool/result", "a tool/result replace rewrites the content of one current tool/result", "DSH306"),
)


#: The event types :meth:`_Replayer.on_event` reads besides the surface fold's.
_FOLDED = frozenset({"step/start", "step/end", "turn/start", "turn/end", "assistant/message", "request/header",
                     "request/context", "compaction/start", "compaction/end", "compaction/summary",
                     "web/deepseek-search-llm-request", "session/title-llm-request"})


class _Pending:
    """A loop attempt still being read: its Request fields, completed as its records arrive.

    Built into a frozen :class:`Request` once, when it is yielded, instead of copying the
    dataclass for every usage, finish and message record.
    """

    __slots__ = ("fields", "first_chunk_seq", "kind", "step_start_seq")

    def __init__(self, **fields: Any) -> None:
        self.fields = fields
        # read for every request as it is settled, and never changed: attributes, not lookups
        self.kind, self.step_start_seq = fields["kind"], fields["step_start_seq"]
        self.first_chunk_seq = fields["first_chunk_seq"]

    def __getattr__(self, name: str) -> Any:
        try:
            return self.fields[name]
        except KeyError:
            raise AttributeError(name) from None

    def build(self, index: int) -> Request:
        return request_of(index, self.fields)


def surface_refusal(event: Event, said: str) -> tuple[str, str]:
    """The message and hint of ``event``, whose surface operation DSH refuses with ``said``: DSH's
    words (``Session.fromRestore`` calls each event of the log it loads a seed event, and its index
    the seq), with the surfaceOp the log wrote when its shape is the fault, and the fix.

    Example:
        >>> from dsh_audit.log import Event
        >>> event = Event(type="user/message", seq=2, time=0, data={}, line=4, surface_op="add")
        >>> message, hint = surface_refusal(event, 'session event "user/message" carries an invalid surfaceOp')
        >>> message.split(": ", 2)[2]
        'surfaceOp is a string "add", not "append" or a replace'
        >>> hint.split("; ")[1]
        '`dsh-audit validate FILE` lists every surface fault (DSH303)'
    """
    words = said.removeprefix(f'session event "{event.type}" ')  # DSH's fixed words, not the type's
    found = next((fault for fault in _SURFACE_FIXES if fault[0] in words), None)
    fix, rules = found[1:] if found else ("the surface operation does not fit the surface at this point",
                                          "DSH301-DSH311")
    if found and found[0] == "invalid replace surfaceOp" and isinstance(event.surface_op, dict):
        said += f": {_replace_fault(event.surface_op)}"
    elif rules == "DSH303":
        said += f": surfaceOp is {typed(event.surface_op)}, not \"append\" or a replace"
    return (f"invalid seed event at index {event.seq}: {said}",
            f"{fix}; `dsh-audit validate FILE` lists every surface fault ({rules}); DSH calls each event of the "
            "log it loads a seed event")


def _replace_fault(op: dict[str, Any]) -> str:
    """What keeps the object surfaceOp ``op`` from being the replace DSH reads: exactly
    ``{"op":"replace","start":SEQ,"end":SEQ}``, start and end seqs (``_surface._is_seq``).

    Example:
        >>> _replace_fault({"op": "replace", "start": 1, "end": "x"})
        'surfaceOp {"op":"replace","start":1,"end":"x"} is a replace whose end is a string "x", not a seq'
        >>> _replace_fault({"op": "append"})
        'surfaceOp {"op":"append"} has op "append", not "replace"'
        >>> _replace_fault({"op": "replace", "end": 2})
        'surfaceOp {"op":"replace","end":2} is a replace with no start'
        >>> _replace_fault({"op": "replace", "start": 1, "end": 2, "x": 0})
        'surfaceOp {"op":"replace","start":1,"end":2,"x":0} is a replace with a member "x" besides op, start and end'
    """
    if op.get("op") != "replace":
        return f'surfaceOp {shown(op)} has {"op " + shown(op["op"]) if "op" in op else "no op"}, not "replace"'
    for key in ("start", "end"):
        if key not in op:
            return f"surfaceOp {shown(op)} is a replace with no {key}"
        if not _is_seq(op[key]):
            return f"surfaceOp {shown(op)} is a replace whose {key} is {typed(op[key])}, not a seq"
    other = next((key for key in op if key not in ("op", "start", "end")), None)
    return (f"surfaceOp {shown(op)} is a replace with a member {shown(other)} besides op, start and end"
            if other is not None else f"surfaceOp is {typed(op)}")  # (DSH reads such a replace)


def _failed(reason: Any) -> bool:
    """Whether a finish chunk's reason is one DSH may retry (``error`` or ``aborted``, agent.ts ``step``)."""
    return isinstance(reason, dict) and reason.get("kind") in ("error", "aborted")


def _scalar(value: Any) -> bool:
    """Whether a logged turn or step number can key a dict (a JSON object or array cannot)."""
    return value is None or isinstance(value, (int, float, str))


class _Replayer:
    def __init__(self, log: SessionLog, result: ReplayResult, fold: SurfaceFold | None = None) -> None:
        self.log = log
        self.result = result
        self.sid = log.header.id
        self.seed_pending = log.header.is_seeded and log.seed_length is None  # v2+: cut learnt later
        self.fold = fold if fold is not None else SurfaceFold()
        self.header: dict[str, Any] | None = None
        self.header_seq: int | None = None
        self.header_reason: str | None = None
        #: the first request/header DSH cannot fold (system or tools null), and which field: sticky, as
        #: DSH folds every header of a request's prefix (``foldRequestHeader``)
        self.unfoldable: tuple[Event, str] | None = None
        self.context: dict[str, Any] | None = None
        self.index = 0
        self.step: tuple[Any, Any, int] | None = None  # turn, step (as logged), step/start seq
        self.step_key: tuple[Any, Any] | None = None  # its turn and step
        self.step_has_chunk = False
        # Steps that ended without a chunk, by (turn, step): their skipped_steps note; and the attempts
        # of such steps whose chunks came after all, still being read (:meth:`late_chunk`).
        self.unanswered: dict[tuple[Any, Any], dict[str, Any]] = {}
        self.late: dict[tuple[Any, Any], _Pending] = {}
        # A step whose next chunk after its end is a retry (a finished late attempt's, or a failed one's, step):
        # step/start seq, the retry's number; one that ended while its attempt still streamed: step/start seq,
        # that attempt's number (already listed).
        self.late_retry: dict[tuple[Any, Any], tuple[int, int]] = {}
        self.late_tail: dict[tuple[Any, Any], tuple[int, int]] = {}
        self.last_finish: Any = None  # the reason of the open step's last finish chunk
        self.answered = False  # that finish is one DSH does not retry: the step sends no more requests
        self.unanswered_found = False  # a late attempt is among done_attempts
        # Loop attempts under way: usage, finish and message_usage are filled in as they arrive.
        self.open_attempt: _Pending | None = None
        self.done_attempts: list[_Pending] = []
        self.attempt_count = 0
        self.turn_open = False
        self.compaction_header: tuple[dict[str, Any] | None, int | None, str | None] | None = None
        self.compaction_turn: Any = None
        # The event before the one being read (a request is sent after the records DSH flushes just
        # before dispatch, spec §7.2) and the time of the one being read, in seconds (:meth:`clock`).
        self.prev: Event | None = None
        self.now: float = 0.0

    def sent_time(self) -> RequestTime:
        """Sent after the previous event, not yet answered."""
        return RequestTime(self.prev.time / 1000 if self.prev is not None else self.now, None)

    def snapshot(self) -> tuple[Sequence[dict[str, Any]], Sequence[int], Digest]:
        """The messages before the next attempt (without a v3+ system head), their seqs, and
        their digest, computed when read."""
        messages, seqs = self.fold.messages(), self.fold.message_seqs()
        start = 0
        if self.system_head() is not None and seqs and seqs[0] == self.fold.nodes[0]:
            start = 1
            messages, seqs = messages.tail(1), seqs.tail(1)
        return messages, seqs, Digest(partial(self.fold.prefix_digest(start).digest, start + len(messages)))

    def system_head(self) -> Event | None:
        """v3+: the surface head when it is a system/message (the system prompt's home)."""
        if not self.fold.nodes:
            return None
        head = self.fold.node_events[self.fold.nodes[0]]
        return head if head.type == "system/message" else None

    def effective_header(self) -> dict[str, Any] | None:
        """The header in force, with a v3+ system head's text as ``system`` (v0's place for it)."""
        head = self.system_head()
        if head is None or self.header is None:
            return self.header
        message = head.data.get("message") or {}
        text = "".join(b.get("text", "") for b in message.get("content") or [] if isinstance(b, dict)
                       and b.get("type") == "text")
        return canonical_header({**self.header, "system": text})

    @property
    def seed_length(self) -> int:
        return self.log.seed_length or 0

    def refuse_unbuildable(self, kind: str, seq: int) -> None:
        """Raise when a request (first record at ``seq``) follows a header DSH cannot fold: DSH loads
        the log, but its ``canonicalHeader`` throws on the null field, so it never sends this request.
        A refusal DSH's loader makes anywhere in the log still comes first (:meth:`SessionLog.fail`)."""
        if self.unfoldable is None:
            return
        header, field = self.unfoldable
        self.log.fail(ReplayError(
            f"{unfoldable_words(field)}, so the {kind} request at seq {seq} was never sent",
            path=self.log.path, line=header.line, seq=header.seq,
            hint=f"write {field} as {'a string' if field == 'system' else 'an array of tool schemas'} or leave it "
                 "out; no option builds the request (--lenient adapts session headers only); `dsh-audit validate "
                 "FILE` lists every such header (rule DSH227)"))

    def new_attempt(self, event: Event, step_start: tuple[Any, Any, int], *, late: int = 0) -> _Pending:
        """The next loop attempt of the step, as the log stands before ``event`` (its first record);
        ``late``: the first attempt of a step that ended before it (:meth:`late_chunk`)."""
        if self.unfoldable is not None and step_start[2] >= self.seed_length:
            self.refuse_unbuildable("loop", event.seq)
        self.attempt_count += not late
        messages, seqs, digest = self.snapshot()
        turn, step, step_start_seq = step_start
        return _Pending(
            kind="loop", session_id=self.sid, turn=turn, step=step,
            step_start_seq=step_start_seq, first_chunk_seq=event.seq, header=self.effective_header(),
            header_seq=self.header_seq, header_reason=self.header_reason, messages=messages,
            message_seqs=seqs, digest=digest, context=self.context, time=self.sent_time(),
            attempt=late or self.attempt_count,
        )

    def flush(self) -> list[_Pending]:
        if self.open_attempt is not None:
            self.done_attempts.append(self.open_attempt)
            self.open_attempt = None
        seed_length = self.seed_length
        done = [attempt for attempt in self.done_attempts
                if attempt.step_start_seq is None or attempt.step_start_seq >= seed_length]
        self.done_attempts = []
        if self.unanswered_found:  # a late attempt goes where its step/start is, as DSH lists requests
            done.sort(key=lambda attempt: attempt.step_start_seq or 0)
            self.unanswered_found = False
        return done

    def end_step(self) -> list[_Pending]:
        if self.step is not None and not self.step_has_chunk and self.step[2] >= self.seed_length:
            note = {"turn": self.step[0], "step": self.step[1], "step_start_seq": self.step[2],
                    "note": "request without recorded response"}
            self.result.skipped_steps.append(note)
            if _scalar(self.step[0]) and _scalar(self.step[1]):
                self.unanswered[(self.step[0], self.step[1])] = note
        elif self.step is not None and self.step_has_chunk and _scalar(self.step[0]) and _scalar(self.step[1]):
            self.keep_for_retry((self.step[0], self.step[1]), self.step[2])
        done = self.flush()
        self.step = self.step_key = None
        self.step_has_chunk = False
        self.attempt_count = 0
        self.last_finish = None
        self.answered = False
        return done

    def keep_for_retry(self, key: tuple[Any, Any], step_start_seq: int) -> None:
        """Remember an ending step whose chunks may go on after its step/end: one whose attempt is still
        streaming (:meth:`tail_chunk` reads the rest), or whose last attempt failed, the only finish DSH
        retries (``AgentLoop.step`` in agent-loop/src/agent.ts: an ``error`` or ``aborted`` finish goes to
        ``agent/request-error``, whose ``retry`` loops to a new request; any other finish ends the step).
        Only those are kept, so a long log holds no entry per step."""
        if self.open_attempt is not None:
            self.late_tail[key] = (step_start_seq, self.attempt_count)
        elif _failed(self.last_finish):
            self.late_retry[key] = (step_start_seq, self.attempt_count + 1)

    def clock(self, event: Event, prev: Event | None) -> None:
        """Set the times :meth:`sent_time` and an answer read: ``event``'s and the one before it
        (``prev``), set only where a record needs them (most chunks need none)."""
        self.now = event.time / 1000
        self.prev = prev

    def on_chunk(self, event: Event, prev: Event | None) -> None:
        """Fold one ``assistant/chunk`` (``prev``: the event before it, for :meth:`clock`)."""
        data = event.data
        try:
            key = (data.get("turn"), data.get("step"))
        except AttributeError:  # data is no JSON object (of JSON values only an object has get): no members
            data, key = {}, (None, None)
        if key != self.step_key:  # JSON holds no NaN
            self.clock(event, prev)
            self.late_chunk(event, key[0], key[1], data.get("chunk"))
            return
        attempt = self.open_attempt
        if attempt is None:  # (an open attempt is one of this step's chunks: step_has_chunk is set)
            self.step_has_chunk = True
            if self.answered:  # the step is over (AgentLoop.step returned): no retry, whatever follows
                self.stray_chunk(event, key[0], key[1], f"after its finish {shown(self.last_finish)}, which DSH does "
                                                        "not retry")
                return
            self.clock(event, prev)
            attempt = self.open_attempt = self.new_attempt(event, (*key, self.step[2]))  # type: ignore[index]
        chunk = data.get("chunk")
        try:
            ctype = chunk.get("type")
        except AttributeError:  # a chunk that is no object is neither a usage nor a finish
            return
        if ctype == "usage":
            attempt.fields["usage"] = chunk.get("usage")
        elif ctype == "finish":
            fields = attempt.fields
            fields["finish"] = self.last_finish = chunk.get("reason")
            fields["time"] = RequestTime(fields["time"].sent, event.time / 1000)
            self.done_attempts.append(attempt)
            self.open_attempt = None
            self.answered = not _failed(self.last_finish)

    def stray_chunk(self, event: Event, turn: Any, step: Any, where: str) -> None:
        """Note a chunk that is no request: DSH sends one per attempt, and a step's next attempt only
        after a failed finish (:func:`_failed`)."""
        self.result.notes.append(f"seq {event.seq}: assistant/chunk for turn {turn} step {step} {where}; "
                                 "not a loop request")

    def late_chunk(self, event: Event, turn: Any, step: Any, chunk: Any) -> None:
        """A chunk outside the open step. DSH's rule finds a step's request at the first chunk of its
        turn/step anywhere in the log (``request-reconstruction.spec.ts`` THEOREM), so the chunks of a
        step that ended without one (after its own step/end, or after the next step/start) are its
        request, as the log stands before the first of them; any other is noted, not a request."""
        key, keyed = (turn, step), _scalar(turn) and _scalar(step)
        if keyed and key in self.late_tail:
            self.tail_chunk(event, key, chunk)
            return
        attempt = (self.late.get(key) or self.late_attempt(event, key)) if keyed else None
        if attempt is None:
            self.stray_chunk(event, turn, step, "outside its step/start")
            return
        ctype = chunk.get("type") if isinstance(chunk, dict) else None
        if ctype == "usage":
            attempt.fields["usage"] = chunk.get("usage")
        elif ctype == "finish":
            attempt.fields.update(finish=chunk.get("reason"), time=RequestTime(attempt.fields["time"].sent, self.now))
            del self.late[key]
            if _failed(chunk.get("reason")):  # else the step is over: its later chunks are noted
                self.late_retry[key] = (attempt.fields["step_start_seq"], attempt.fields["attempt"] + 1)

    def tail_chunk(self, event: Event, key: tuple[Any, Any], chunk: Any) -> None:
        """A chunk of an attempt that was still streaming when its step ended: the attempt is listed
        already (at its step/end), so its usage or finish here is noted, not counted; after a failed
        finish the step's next chunk is its retry (:meth:`keep_for_retry`)."""
        step_start_seq, number = self.late_tail[key]
        ctype = chunk.get("type") if isinstance(chunk, dict) else None
        if ctype in ("usage", "finish"):
            self.result.notes.append(f"seq {event.seq}: the {ctype} of turn {key[0]} step {key[1]} attempt {number} "
                                     "comes after its step/end; that request is listed without it")
        if ctype == "finish":
            del self.late_tail[key]
            if _failed(chunk.get("reason")):
                self.late_retry[key] = (step_start_seq, number + 1)

    def late_attempt(self, event: Event, key: tuple[Any, Any]) -> _Pending | None:
        """The first attempt of a step that ended without a chunk, or the next one of such a step
        after its failed finish (numbered as :meth:`on_chunk` numbers retries); None for any other chunk."""
        retry = self.late_retry.pop(key, None)
        if retry is None:
            note = self.unanswered.pop(key, None)
            if note is None:
                return None
            self.result.skipped_steps.remove(note)
            retry = (note["step_start_seq"], 1)
        attempt = self.late[key] = self.new_attempt(event, (*key, retry[0]), late=retry[1])
        self.done_attempts.append(attempt)
        self.unanswered_found = True
        return attempt

    def on_assistant_message(self, event: Event) -> None:
        data = event.data
        key = (data.get("turn"), data.get("step"))
        for i in range(len(self.done_attempts) - 1, -1, -1):
            fields = self.done_attempts[i].fields
            if (fields["turn"], fields["step"]) == key:
                fields["message_usage"] = data.get("usage")
                return

    def aux_compaction(self, event: Event) -> Request | None:
        data = event.data
        if not isinstance(data, dict) or data.get("llmStreamCall") is not True:
            return None
        if event.seq < self.seed_length:
            return None
        self.refuse_unbuildable("compaction", event.seq)  # DSH's summarizer reads the folded header too
        region = []
        seqs = []
        shadowed = data.get("shadowedSeqs")
        for seq in shadowed if isinstance(shadowed, list) else []:
            node = self.fold.node_events.get(seq) if isinstance(seq, int) else None
            message = derive_event_message(node) if node is not None else None
            if message is not None:
                region.append(message)
                seqs.append(seq)
        header, header_seq, reason = self.compaction_header or (self.effective_header(), self.header_seq, self.header_reason)
        messages = tuple(region)
        request = Request(
            index=-1, kind="compaction", session_id=self.sid, turn=self.compaction_turn, step=None,
            attempt=1, step_start_seq=None, first_chunk_seq=event.seq, header=header, header_seq=header_seq,
            header_reason=reason, messages=messages, message_seqs=tuple(seqs),
            digest=Digest(partial(sha256_hex, messages)), context=self.context,
            usage=data.get("usage"), time=RequestTime(self.sent_time().sent, self.now), extra={
                "compactionId": data.get("compactionId"), "provider": data.get("provider"),
                "model": data.get("model"), "maxTokens": data.get("maxTokens"),
                "instruction": "not logged: DSH appends its fixed COMPACTION_INSTRUCTION user message",
            })
        return request

    def aux_title(self, event: Event) -> Request | None:
        data = event.data
        if not isinstance(data, dict) or event.seq < self.seed_length:
            return None
        route = as_object(data.get("route"))
        messages = tuple(data["messages"]) if isinstance(data.get("messages"), list) else ()
        if not all(isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), list)
                   for m in messages):
            # The reader checks the shape of surface messages only; a title call's are copied as logged.
            self.result.notes.append(f"seq {event.seq}: {event.type} holds a message that is not "
                                     "{role, content: [...]}; the title call is not listed")
            return None
        # As logged when present, "" and null included: DSH's title call (generateSessionTitleWithLlm in
        # session-title-llm/src/index.ts) passes system and maxTokens straight to ctx.llm.stream, not through
        # canonicalHeader's .length rule, and the adapters test only `!== undefined` (llm-deepseek
        # serializeRequest: a {role:"system"} message, "max_tokens"; llm-pi-ai piContext: systemPrompt).
        config: dict[str, Any] = {"provider": route.get("provider"), "model": route.get("model")}
        if "maxTokens" in data:
            config["maxTokens"] = data["maxTokens"]
        header = canonical_header({"config": config})
        if "system" in data:
            header["system"] = data["system"]
        request = Request(
            index=-1, kind="title", session_id=self.sid, turn=None, step=None, attempt=1,
            step_start_seq=None, first_chunk_seq=event.seq, header=header, header_seq=None,
            header_reason=None, messages=messages, message_seqs=(),
            digest=Digest(partial(sha256_hex, messages)),
            context=None, time=RequestTime(self.now, self.now), extra={"titleProvider": data.get("titleProvider"), "messageSeqs": data.get("messageSeqs")})
        return request

    def aux_search(self, event: Event) -> Request | None:
        """``web/deepseek-search-llm-request``: the literal body DSH sent to the search endpoint."""
        data = event.data
        if not isinstance(data, dict) or not isinstance(data.get("body"), dict) or event.seq < self.seed_length:
            return None
        body = data["body"]
        given = body.get("messages")
        messages = tuple(m for m in given if isinstance(m, dict)) if isinstance(given, list) else ()
        config = {"provider": "deepseek-web-search", "model": body.get("model")}
        return Request(
            index=-1, kind="search", session_id=self.sid, turn=None, step=None, attempt=1,
            step_start_seq=None, first_chunk_seq=event.seq, header=canonical_header({"config": config}),
            header_seq=None, header_reason=None, messages=messages, message_seqs=(),
            digest=Digest(partial(sha256_hex, messages)),
            context=None, time=RequestTime(self.sent_time().sent, self.now), extra={"endpoint": data.get("endpoint"), "apiVersion": data.get("apiVersion"),
                                 "body": body})

    def on_stream_attempt(self, event: Event) -> None:
        """v2+: ``assistant/attempt`` and ``assistant/message`` carry their attempt's stream."""
        data = as_object(event.data)
        if self.step is None or (data.get("turn"), data.get("step")) != (self.step[0], self.step[1]):
            self.result.notes.append(f"seq {event.seq}: {event.type} outside its step; not a loop request")
            return
        self.step_has_chunk = True
        attempt = self.new_attempt(event, self.step)
        usage = finish = None
        for record in data.get("stream") or []:
            chunk = record.get("chunk") if isinstance(record, dict) and record.get("type") == "chunk" else None
            if isinstance(chunk, dict) and chunk.get("type") == "usage":
                usage = chunk.get("usage")
            elif isinstance(chunk, dict) and chunk.get("type") == "finish":
                finish = chunk.get("reason")
        message_usage = data.get("usage") if event.type == "assistant/message" else None
        attempt.fields.update(usage=usage, finish=finish, message_usage=message_usage)
        self.done_attempts.append(attempt)

    def on_event(self, event: Event, prev: Event | None) -> Sequence[Request | _Pending]:
        """Fold one event but a chunk (:meth:`iter_requests` hands those to :meth:`on_chunk` itself);
        return the requests it completes (mostly none: no generator per event). ``prev``: the event
        before it (:meth:`clock`)."""
        etype = event.type
        self.now = event.time / 1000
        self.prev = prev
        streamed = etype == "assistant/message" and isinstance(event.data, dict) and bool(event.data.get("stream"))
        if etype == "assistant/attempt" or streamed:
            self.on_stream_attempt(event)
        try:
            self.fold.apply(event)
        except ReplayError as exc:
            message, hint = surface_refusal(event, exc.message)
            self.log.fail(type(exc)(message, path=self.log.path, line=event.line, seq=event.seq, hint=hint),
                          seq=event.seq)
        if etype not in _FOLDED:  # most events but chunks (tool calls and results, user messages): the surface's only
            return ()
        if etype == "step/start":
            done = self.end_step()
            data = as_object(event.data)  # DSH loads any data shape here
            self.step = (data.get("turn"), data.get("step"), event.seq)
            self.step_key = self.step[:2]
            return done
        if etype == "step/end":
            # only the step it names: one naming another (validate's DSH405) leaves the open step's
            # chunks to come (DSH finds a step's request wherever its first chunk is)
            current = self.step
            data = as_object(event.data)
            named = (data.get("turn"), data.get("step"))
            if current is not None and named != (None, None) and named != (current[0], current[1]):
                return ()  # a step/end naming nothing ends the open step, as before (DSH always names it)
            return self.end_step()
        if etype == "turn/start":
            self.turn_open = True
        elif etype == "turn/end":
            done = self.end_step()
            self.turn_open = False
            return done
        elif etype == "assistant/message" and not streamed:  # v0/v1, or a v2+ message with stream: []
            self.on_assistant_message(event)
        elif etype == "request/header":
            header = event.data.get("header") or {}
            self.header = canonical_header(header)
            if self.unfoldable is None and (field := unfoldable_field(header)) is not None:
                self.unfoldable = (event, field)
            self.header_seq = event.seq
            self.header_reason = event.data.get("reason")
        elif etype == "request/context":
            self.context = event.data
        elif etype == "compaction/start":
            self.compaction_header = (self.effective_header(), self.header_seq, self.header_reason)
            self.compaction_turn = event.data.get("turn") if isinstance(event.data, dict) else None
        elif etype == "compaction/end":
            self.compaction_header = None
        else:
            request = (self.aux_compaction(event) if etype == "compaction/summary"
                       else self.aux_search(event) if etype == "web/deepseek-search-llm-request"
                       else self.aux_title(event) if etype == "session/title-llm-request" else None)
            if request is not None:
                return (request,)
        return ()


def iter_requests(log: SessionLog, result: ReplayResult | None = None, *,
                  observe: Callable[[Event], None] | None = None,
                  fold: SurfaceFold | None = None) -> Iterator[Request]:
    """Yield every request of ``log`` in log order (auxiliary calls where they were made).

    Loop attempts are yielded when their step ends, so a compaction or title call made during a
    step can come before that step's attempts in the stream; ``index`` follows yield order.
    Raises the error DSH would give if the log is refused (see :class:`dsh_audit.log.SessionLog`).

    ``observe`` is called with every event before replay uses it, so other folds (evidence for
    attribution, a validator) share this one read of the log. Packed chunk rows arrive collapsed
    to their first member (see :meth:`SessionLog.events`). ``fold``, a fresh surface fold that the
    validation rules of the same read share (:meth:`dsh_audit.validate.LineValidator.shared_fold`),
    is the one replay folds the events into: the rules take them from it, not admitting them again.
    """
    result = result if result is not None else ReplayResult()
    replayer = _Replayer(log, result, fold)
    pending: list[Request | _Pending] = []  # v2+ seeded logs: held until the inherited cut is known
    index = 0

    def settle(requests: Iterable[Request | _Pending]) -> Iterator[Request]:
        nonlocal index
        for request in requests:
            if replayer.seed_pending and log.seed_length is None:
                pending.append(request)
                continue
            for ready in [*pending, request]:
                if ready.kind == "loop" and ready.step_start_seq is not None and ready.step_start_seq < replayer.seed_length:
                    continue
                if ready.kind != "loop" and ready.first_chunk_seq < replayer.seed_length:
                    continue
                yield ready.build(index) if isinstance(ready, _Pending) else replace(ready, index=index)
                index += 1
            pending.clear()

    on_event, on_chunk = replayer.on_event, replayer.on_chunk
    prev: Event | None = None
    for event in log.events(collapse_rows=True):
        if observe is not None:
            observe(event)
        if event.type == "assistant/chunk":  # on_event's chunk branch, taken here: most events are chunks
            on_chunk(event, prev)
        elif done := on_event(event, prev):
            yield from settle(done)
        prev = event
    yield from settle(replayer.end_step())
    if pending:
        result.notes.append("log is marked seeded but has no inherited session/end-seed; "
                            "every request is listed as this log's own")
        replayer.seed_pending = False
        yield from settle(iter(()))
        for request in pending:
            yield request.build(index) if isinstance(request, _Pending) else replace(request, index=index)
            index += 1
    result.event_count = log.event_count
    result.open_turn = replayer.turn_open


def replay(log: SessionLog) -> tuple[list[Request], ReplayResult]:
    """Replay a whole log into a list of requests and the replay's side findings."""
    result = ReplayResult()
    return list(iter_requests(log, result)), result
