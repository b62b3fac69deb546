"""``LogBuilder``: write valid DSH v0 session logs from Python, deterministically.

The builder plays the agent loop's part (spec §7.1): it writes the events DSH writes, in DSH's
order and key order, and keeps the folds a writer needs (surface nodes, the header the log holds,
the loop instance's header obligation, pending tool calls). Ids come from a counter, times from a
fixed clock, so the same calls always give the same bytes.

Example:
    >>> from dsh_audit.testing import LogBuilder, ToolCall
    >>> b = LogBuilder(session_id="s-1", cwd="/work/demo")
    >>> with b.turn("What is in a.txt?"):
    ...     with b.step():
    ...         reply = b.assistant("Reading it.", tool_calls=[ToolCall("read", {"path": "a.txt"})])
    ...         _ = b.tool_result(reply.call_ids[0], "hello")
    ...     with b.step():
    ...         _ = b.assistant("It says hello.")
    >>> [e["type"] for e in b.events][:4]
    ['agent/inbox/spliced', 'turn/start', 'agent/inbox/spliced', 'step/start']
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from . import _parts as P
from ._maintenance import MaintenanceMixin
from ._output import OutputMixin
from ._replies import ReplyMixin

__all__ = ["LogBuilder"]

_KEEP: Any = object()


class LogBuilder(OutputMixin, MaintenanceMixin, ReplyMixin):
    """Build one DSH v0 session log event by event.

    Args:
        session_id: the header ``id``.
        cwd: the header ``cwd`` (absolute), or None for a session without one.
        created_at: header ``createdAt``; the clock starts here.
        provider: first header's provider.
        model: first header's model.
        system: first header's system prompt ("" for none).
        tools: first header's tool schemas.
        reasoning_effort: first header's ``reasoningEffort`` (None for none).
        max_tokens: first header's ``maxTokens`` (None for none).
        adapter_defaults: first header's ``adapterDefaults`` markers.
        context_window: the ``contextWindow`` written in ``request/context`` (None omits it).
        clock_step_ms: how far the clock moves per event.
        parent_session, seed_length, origin, delegation_depth, agent_preset: header lineage fields.
        id_seed: seeds message ids and call ids (defaults to ``session_id``).
    """

    def __init__(self, *, session_id: str = "session-0001", cwd: str | None = "/home/dev/project",
                 created_at: int = 1_800_000_000_000, provider: str = P.DEFAULT_PROVIDER,
                 model: str = P.DEFAULT_MODEL, system: str = "You are a helpful coding agent.",
                 tools: Sequence[dict[str, Any]] = (), reasoning_effort: str | None = "high",
                 max_tokens: int | None = 65536, adapter_defaults: dict[str, bool] | None = None,
                 context_window: int | None = 1_000_000, clock_step_ms: int = 1,
                 parent_session: str | None = None, seed_length: int | None = None,
                 origin: str | None = None, delegation_depth: int = 0, agent_preset: str | None = None,
                 id_seed: str | None = None) -> None:
        self.session_id = session_id
        self.cwd = cwd
        self.created_at = created_at
        self.lineage = {"parentSession": parent_session, "seedLength": seed_length, "origin": origin}
        self.delegation_depth = delegation_depth
        self.agent_preset = agent_preset
        self.context_window = context_window
        self.clock = P.Clock(created_at, clock_step_ms)
        self.ids = P.Ids(id_seed or session_id)
        self._events = []
        self._batch_ends = []
        self._surface = []
        self._proposal = P.canonical({
            "config": P.request_config(provider, model, reasoning_effort, None, max_tokens, None),
            "adapterDefaults": adapter_defaults or {}, "system": system, "tools": list(tools)})
        self._logged_header = None
        self._instance_header = False
        self._context = None
        self._turn = 0
        self._turn_open = False
        self._step = 0
        self._step_open = False
        self._queued = []
        self._calls = {}
        self._attempts = 0

    # -- reading back -----------------------------------------------------------------------

    @property
    def events(self) -> list[dict[str, Any]]:
        """A deep copy of every event written so far (envelopes in DSH key order)."""
        return copy.deepcopy(self._events)

    @property
    def proposal(self) -> dict[str, Any]:
        """A deep copy of the canonical header the next attempt will use (see :meth:`configure`)."""
        return copy.deepcopy(self._proposal)

    @property
    def surface(self) -> tuple[int, ...]:
        """The current surface nodes (seqs), as the surface fold leaves them (spec §3)."""
        return tuple(self._surface)

    @property
    def next_seq(self) -> int:
        return len(self._events)

    # -- low level --------------------------------------------------------------------------

    def append(self, etype: str, data: Any, *, source_event_seqs: Sequence[int] | None = None,
               surface_op: Any = None, time: int | None = None) -> int:
        """Append one raw event (any type) and fold it into the surface; returns its seq."""
        seq = len(self._events)
        event: dict[str, Any] = {"type": etype, "seq": seq, "time": self.clock.tick() if time is None else time,
                                 "data": data}
        if source_event_seqs is not None:
            event["sourceEventSeqs"] = list(source_event_seqs)
        if surface_op is not None:
            event["surfaceOp"] = surface_op
            if surface_op == "append":
                self._surface.append(seq)
            else:
                first = self._surface.index(surface_op["start"])
                last = self._surface.index(surface_op["end"])
                self._surface[first:last + 1] = [seq]
        self._events.append(event)
        return seq

    def flush(self) -> None:
        """End the current write batch (one zstd frame; chunk runs never pack across it)."""
        if len(self._events) and (not self._batch_ends or self._batch_ends[-1] != len(self._events)):
            self._batch_ends.append(len(self._events))

    def event(self, seq: int) -> dict[str, Any]:
        return self._events[seq]

    # -- turns and steps --------------------------------------------------------------------

    def start_turn(self, prompt: str | list[dict[str, Any]] | None = None, *,
                   source: dict[str, Any] | None = None) -> int:
        """Queue ``prompt`` in the inbox, write ``turn/start`` and the inbox claim; returns the turn.

        The prompt becomes a ``user/message`` at the turn's first :meth:`start_step`.
        """
        if self._turn_open:
            raise ValueError(f"turn {self._turn} is still open")
        message = None
        if prompt is not None:
            message = P.user_message(prompt, source or {"kind": "user"}, self.ids.next())
            self.append("agent/inbox/spliced", {"target": "next-turn", "start": 0, "inserted": [message]})
        self._turn += 1
        self._turn_open = True
        self._step = 0
        self.append("turn/start", {"turn": self._turn})
        if message is not None:
            self.append("agent/inbox/spliced", {"target": "next-turn", "start": 0, "removedCount": 1,
                                                "inserted": []})
            self._queued.append(message)
        return self._turn

    def end_turn(self, reason: str | dict[str, Any] = "completed") -> int:
        """Close an open step, write ``turn/end {reason}`` and end the write batch."""
        self._require_turn()
        if self._step_open:
            self.end_step()
        kind = {"kind": reason} if isinstance(reason, str) else reason
        seq = self.append("turn/end", {"turn": self._turn, "reason": kind})
        self._turn_open = False
        self.flush()
        return seq

    def start_step(self) -> int:
        """Write ``step/start`` and the step's entered messages (the queued prompt first)."""
        self._require_turn()
        if self._step_open:
            raise ValueError(f"step {self._turn}/{self._step} is still open")
        self._step += 1
        self._step_open = True
        self._attempts = 0
        seq = self.append("step/start", {"turn": self._turn, "step": self._step})
        for message in self._queued:
            self.append("user/message", message, surface_op="append")
        self._queued.clear()
        return seq

    def end_step(self) -> int:
        self._require_step()
        self._step_open = False
        return self.append("step/end", {"turn": self._turn, "step": self._step})

    @contextmanager
    def turn(self, prompt: str | list[dict[str, Any]] | None = None, *,
             source: dict[str, Any] | None = None, reason: str | dict[str, Any] = "completed") -> Iterator[int]:
        """``start_turn`` … ``end_turn`` around a block; yields the turn number."""
        number = self.start_turn(prompt, source=source)
        yield number
        if self._turn_open and self._turn == number:
            self.end_turn(reason)

    @contextmanager
    def step(self) -> Iterator[int]:
        """``start_step`` … ``end_step`` around a block; yields the step number."""
        self.start_step()
        yield self._step
        if self._step_open:
            self.end_step()

    def user(self, text: str | list[dict[str, Any]], *, source: dict[str, Any] | None = None) -> int:
        """Append a ``user/message`` to the surface now (e.g. a runtime-context snapshot)."""
        return self.append("user/message", P.user_message(text, source or {"kind": "user"}, self.ids.next()),
                           surface_op="append")

    # -- headers ----------------------------------------------------------------------------

    def configure(self, *, provider: Any = _KEEP, model: Any = _KEEP, reasoning_effort: Any = _KEEP,
                  temperature: Any = _KEEP, max_tokens: Any = _KEEP, stop: Any = _KEEP,
                  adapter_defaults: Any = _KEEP, system: Any = _KEEP, tools: Any = _KEEP) -> None:
        """Change the header the next attempt will use; None removes an optional field.

        Nothing is written until an attempt (or :meth:`header`) needs the header.
        """
        old = self._proposal["config"]

        def pick(new: Any, key: str) -> Any:
            return old.get(key) if new is _KEEP else new

        config = P.request_config(pick(provider, "provider"), pick(model, "model"), pick(reasoning_effort, "reasoningEffort"),
                         pick(temperature, "temperature"), pick(max_tokens, "maxTokens"), pick(stop, "stop"))
        self._proposal = P.canonical({
            "config": config,
            "adapterDefaults": self._proposal.get("adapterDefaults", {}) if adapter_defaults is _KEEP else adapter_defaults or {},
            "system": self._proposal.get("system", "") if system is _KEEP else system or "",
            "tools": self._proposal.get("tools", []) if tools is _KEEP else list(tools or []),
        })

    def header(self, **changes: Any) -> int | None:
        """:meth:`configure`, then write ``request/header`` now if one is owed; returns its seq.

        The reason is computed as the loop does (spec §6.3): the loop instance's first header is
        ``initial`` (log has none) or ``resume``; a later one is written, as ``change``, only when
        it differs from the log's latest header.
        """
        if changes:
            self.configure(**changes)
        return self._write_header()

    def _write_header(self) -> int | None:
        header = copy.deepcopy(self._proposal)
        if not self._instance_header:
            reason = "initial" if self._logged_header is None else "resume"
        elif not P.headers_equal(self._logged_header, header):
            reason = "change"
        else:
            return None
        self._instance_header = True
        self._logged_header = header
        return self.append("request/header", {"header": header, "reason": reason})

    def context(self, *, context_window: Any = _KEEP) -> int | None:
        """Write ``request/context {provider, model, contextWindow?}`` now if it changed (spec §6.3).

        Attempts write it automatically; call this to change ``context_window`` (None omits it) or
        to place the event yourself. Returns its seq, or None when nothing changed.
        """
        if context_window is not _KEEP:
            self.context_window = context_window
        return self._write_context()

    def _write_context(self) -> int | None:
        config = self._proposal["config"]
        context = {"provider": config["provider"], "model": config["model"]}
        if self.context_window is not None:
            context["contextWindow"] = self.context_window
        if context == self._context:
            return None
        self._context = context
        return self.append("request/context", context)

    def _before_attempt(self) -> None:
        self._require_step()
        self._write_header()
        self._write_context()
        self.flush()  # the checkpoint policy flushes before dispatch
        self._attempts += 1

    def _require_turn(self) -> None:
        if not self._turn_open:
            raise ValueError("no open turn: call start_turn() first")

    def _require_step(self) -> None:
        if not self._step_open:
            raise ValueError("no open step: call start_step() first")
