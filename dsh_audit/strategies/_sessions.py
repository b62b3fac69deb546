"""``sessions()``: a hypothesis strategy for valid DSH v0 logs, with their ground truth.

A draw first plans the session (turns, steps per turn, which step gets which feature), then plays
the plan on a :class:`~dsh_audit.testing.LogBuilder`, which writes what DSH's agent loop writes
(spec §7.1-§7.2, §9). Every feature the plan places is recorded as a :class:`Happening` with the
seqs it produced, so tests can check replay and attribution against what really happened.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import reject
from hypothesis import strategies as st

from ..jsjson import stringify
from ..testing import LogBuilder, ToolCall, tool_schema
from ._model import GeneratedSession, Happening
from ._options import InvalidStrategyArgument, check_bool, check_count, check_range

__all__ = ["HEADER_CHANGE_KINDS", "TOOL_SCHEMAS", "sessions"]

#: The tool schemas a generated header draws from (in this order).
TOOL_SCHEMAS = (
    tool_schema("read", "Read a text file from the workspace.", {"path": {"type": "string"}}),
    tool_schema("glob", "List files matching a glob pattern.", {"pattern": {"type": "string"}}),
    tool_schema("bash", "Run a shell command.", {"command": {"type": "string"}, "timeout": {"type": "integer"}}),
    tool_schema("grep", "Search file contents.", {"pattern": {"type": "string"}, "path": {"type": "string"}}),
    tool_schema("edit", "Replace text in a file.", {"path": {"type": "string"}, "old": {"type": "string"},
                                                   "new": {"type": "string"}}),
)
#: What a generated header change turns. ``tools-*`` and ``tool-key-order`` need two tools.
HEADER_CHANGE_KINDS = ("model", "reasoningEffort", "system-timestamp", "tools-reorder", "tools-subset",
                       "tool-key-order", "maxTokens", "temperature")
_PROMPT_FIELDS = frozenset({"provider", "model", "reasoningEffort", "system", "tools"})
_MODELS = ("deepseek-v4-flash", "deepseek-v4-pro")
_EFFORTS = ("high", "max", "low", "off")
_SNAPSHOT = {"kind": "plugin", "plugin": "@deepseek-ai/dsh-system-prompt", "form": "snapshot"}
_SYSTEM = "You are a coding agent. Answer briefly."

# JSON- and UTF-16-unfriendly characters are welcome (quotes, escapes, U+2028, astral), surrogates not.
_TEXT = st.text(st.characters(codec="utf-8"), min_size=1, max_size=16)
_WORDS = st.sampled_from(["ok", "Done.", "Reading it.", "é\"\\\u2028😀", "line\nbreak", "tab\there"])
_SHORT = st.one_of(_WORDS, _TEXT)


@dataclass
class _Plan:
    steps: list[int]
    changes: dict[int, str] = field(default_factory=dict)        # step index -> change kind
    compactions: dict[int, bool] = field(default_factory=dict)   # step index -> manual?
    prunes: set[int] = field(default_factory=set)                # step index (pre-step)
    retries: dict[int, int] = field(default_factory=dict)        # step index -> failed attempts
    resumes: set[int] = field(default_factory=set)               # turn number starting a new process
    resume_changes: dict[int, str] = field(default_factory=dict)
    forks: set[int] = field(default_factory=set)                 # after this turn


@dataclass(frozen=True)
class _Options:
    turns: tuple[int, int]
    max_steps: int
    tools: int
    reasoning: bool | None
    runtime_context: bool | None
    packed: bool | None
    retries: tuple[int, int]
    compactions: tuple[int, int]
    prunes: tuple[int, int]
    header_changes: tuple[int, int]
    resumes: tuple[int, int]
    forks: tuple[int, int]
    session_id: str


def _changed_fields(before: dict[str, Any], after: dict[str, Any]) -> tuple[str, ...]:
    """The header fields that differ, compared the simplest way (JSON text), in prompt order."""
    a, b = before.get("config") or {}, after.get("config") or {}
    fields = [k for k in ("provider", "model", "reasoningEffort", "maxTokens", "temperature", "stop")
              if stringify(a.get(k)) != stringify(b.get(k))]
    fields += [k for k in ("system", "tools") if stringify(before.get(k)) != stringify(after.get(k))]
    return tuple(fields)


def _change_kinds(tools: int) -> list[str]:
    return [k for k in HEADER_CHANGE_KINDS if tools >= 2 or not k.startswith("tool")]


def _plan(draw: Any, o: _Options) -> _Plan:
    turns = draw(st.integers(*o.turns))
    turns = max(turns, o.resumes[0] + 1, o.forks[0])
    steps = [draw(st.integers(1, o.max_steps)) for _ in range(turns)]
    need = max(o.compactions[0], o.prunes[0], o.header_changes[0]) + 1
    if o.prunes[0]:
        steps[0] = max(steps[0], 2)  # a tool call to prune
        need += 1
    while sum(steps) < need:
        short = [i for i, n in enumerate(steps) if n < o.max_steps]
        if short:
            steps[short[-1]] += 1
        else:
            steps.append(o.max_steps)
    plan = _Plan(steps)
    slots = list(range(1, sum(steps)))
    firsts = {sum(steps[:t]) for t in range(1, len(steps))}  # first step of turns 2..n

    def pick(lo_hi: tuple[int, int], pool: list[int]) -> list[int]:
        count = draw(st.integers(min(lo_hi[0], len(pool)), min(lo_hi[1], len(pool))))
        return draw(st.lists(st.sampled_from(pool), min_size=count, max_size=count, unique=True)) if count else []

    for i in pick(o.header_changes, slots):
        plan.changes[i] = draw(st.sampled_from(_change_kinds(o.tools)))
    for i in pick(o.compactions, slots):
        plan.compactions[i] = i in firsts and draw(st.booleans())
    plan.prunes = set(pick(o.prunes, [s for s in slots if s >= 1]))
    for i in draw(st.lists(st.integers(0, sum(steps) - 1), min_size=o.retries[0], max_size=o.retries[1])):
        plan.retries[i] = plan.retries.get(i, 0) + 1
    plan.resumes = set(pick(o.resumes, list(range(2, len(steps) + 1))))
    for turn in plan.resumes:
        # Not where the turn's first step changes the header too: two changes of one kind (the
        # model toggled twice) would cancel, and the log would show no change at all.
        if sum(steps[:turn - 1]) not in plan.changes and draw(st.booleans()):
            plan.resume_changes[turn] = draw(st.sampled_from(_change_kinds(o.tools)))
    plan.forks = set(pick(o.forks, list(range(1, len(steps) + 1))))
    return plan


class _Player:
    """Plays a plan on a builder and records the ground truth."""

    def __init__(self, draw: Any, o: _Options, plan: _Plan) -> None:
        self.draw, self.o, self.plan = draw, o, plan
        self.tools = [dict(t) for t in TOOL_SCHEMAS[:o.tools]]
        self.b = LogBuilder(session_id=o.session_id, system=_SYSTEM, tools=self.tools,
                            id_seed=f"{o.session_id}:{draw(st.integers(0, 9))}")
        self.truth: list[Happening] = []
        self.children: list[GeneratedSession] = []
        self.logged: dict[str, Any] | None = None
        self.last_chunk = -1
        self.pruned: set[int] = set()
        self.stamp = 0
        self.step_index = 0
        self.missed_prunes = 0

    # -- header changes -------------------------------------------------------------------

    def change(self, kind: str) -> None:
        b, config = self.b, self.b.proposal["config"]
        if kind == "model":
            b.configure(model=_MODELS[1 - _MODELS.index(config["model"])] if config["model"] in _MODELS else _MODELS[0])
        elif kind == "reasoningEffort":
            b.configure(reasoning_effort=self.draw(st.sampled_from([e for e in _EFFORTS
                                                                     if e != config.get("reasoningEffort")])))
        elif kind == "system-timestamp":
            self.stamp += 1
            b.configure(system=f"{_SYSTEM}\n\nCurrent time: 2026-05-{self.stamp:02d}T09:30:00Z")
        elif kind == "tools-reorder":
            b.configure(tools=list(reversed(b.proposal.get("tools") or self.tools)))
        elif kind == "tools-subset":
            current = b.proposal.get("tools") or []
            b.configure(tools=current[:-1] if len(current) == len(self.tools) else self.tools)
        elif kind == "tool-key-order":
            current = [dict(t) for t in b.proposal.get("tools") or []]
            index = self.draw(st.integers(0, len(current) - 1))
            current[index]["parameters"] = dict(reversed(list(current[index]["parameters"].items())))
            b.configure(tools=current)
        elif kind == "maxTokens":
            b.configure(max_tokens=32768 if config.get("maxTokens") == 65536 else 65536)
        else:
            b.configure(temperature=None if "temperature" in config else 0.5)

    def note_headers(self, since: int) -> None:
        for seq in range(since, self.b.next_seq):
            event = self.b.event(seq)
            if event["type"] != "request/header":
                continue
            header, reason = event["data"]["header"], event["data"]["reason"]
            fields = _changed_fields(self.logged, header) if self.logged is not None else ()
            self.truth.append(Happening("header", seq, (seq,), reason, fields, bool(_PROMPT_FIELDS & set(fields))))
            self.logged = header

    # -- maintenance ----------------------------------------------------------------------

    def compaction(self, *, manual: bool) -> None:
        b = self.b
        surface = b.surface
        keeps = [k for k in range(len(surface)) if k == 0 or b.event(surface[len(surface) - k])["type"] != "tool/result"]
        keep = self.draw(st.sampled_from(keeps))
        since = b.next_seq
        checkpoint = b.compaction(self.draw(_SHORT), keep=keep, command=manual)
        written = list(range(since, b.next_seq))
        evidence = tuple(s for s in written if b.event(s)["type"].startswith("compaction/") or s == checkpoint)
        shadowed = b.event(checkpoint)["surfaceOp"]
        self.truth.append(Happening("compaction", checkpoint, evidence, "manual" if manual else "auto",
                                    prompt_affecting=True, detail={"start": shadowed["start"], "end": shadowed["end"]}))

    def prune(self) -> bool:
        b = self.b
        results = [s for s in b.surface if b.event(s)["type"] == "tool/result" and s not in self.pruned]
        if not results:
            return False
        target = self.draw(st.sampled_from(results))
        replacement = b.prune(target)
        self.pruned.add(replacement)
        sent = target < self.last_chunk
        self.truth.append(Happening("prune", replacement, (replacement - 1, replacement), prompt_affecting=sent,
                                    detail={"target": target, "sent": sent}))
        return True

    # -- steps ----------------------------------------------------------------------------

    def attempt_reasoning(self) -> str | None:
        wanted = self.o.reasoning if self.o.reasoning is not None else self.draw(st.booleans())
        return self.draw(_SHORT) if wanted else None

    def step(self, last: bool) -> None:
        b, draw, i = self.b, self.draw, self.step_index
        b.start_step()
        context = self.o.runtime_context if self.o.runtime_context is not None else draw(st.booleans())
        if context:
            self.stamp += 1
            seq = b.user(f"Runtime context #{self.stamp}: workspace-write.", source=_SNAPSHOT)
            self.truth.append(Happening("runtime-context", seq, (seq,)))
        if i in self.plan.changes:
            self.change(self.plan.changes[i])
        for _ in range(self.plan.retries.get(i, 0)):
            since = b.next_seq
            reply = b.retry(code=draw(st.sampled_from(["SERVER", "TRANSPORT", "RATE_LIMIT"])),
                            partial_text=draw(st.one_of(st.none(), _SHORT)))
            self.note_headers(since)
            self.last_chunk = reply.chunk_seqs[0]
            self.truth.append(Happening("retry", reply.chunk_seqs[-1], reply.chunk_seqs))
        since = b.next_seq
        names = [t["name"] for t in b.proposal.get("tools") or []]
        calls = [] if last or not names else [
            ToolCall(draw(st.sampled_from(names)), {"path": draw(_SHORT)})
            for _ in range(draw(st.integers(1, 2)))]
        reply = b.assistant(None if calls and draw(st.booleans()) else draw(_SHORT),
                            reasoning=self.attempt_reasoning(), tool_calls=calls,
                            delta_size=draw(st.integers(2, 8)))
        self.note_headers(since)
        self.last_chunk = reply.chunk_seqs[0]
        for call_id in reply.call_ids:
            b.tool_result(call_id, draw(st.one_of(_SHORT, st.just(""), st.text(min_size=40, max_size=80))) or "(no output)",
                          is_error=draw(st.booleans()))
        b.end_step()
        self.step_index += 1

    def pre_step(self) -> None:
        i = self.step_index
        if i in self.plan.prunes:
            self.missed_prunes += 1
        if self.missed_prunes and self.prune():
            self.missed_prunes -= 1
        if i in self.plan.compactions and not self.plan.compactions[i]:
            self.compaction(manual=False)

    def turn(self, number: int) -> None:
        b, i = self.b, self.step_index
        if number in self.plan.resumes:
            seq = b.resume()
            self.truth.append(Happening("resume", seq, (seq,)))
            if number in self.plan.resume_changes:
                self.change(self.plan.resume_changes[number])
        if self.plan.compactions.get(i):
            self.compaction(manual=True)
        b.start_turn(self.draw(_SHORT))
        steps = self.plan.steps[number - 1]
        for s in range(steps):
            if self.step_index > 0:
                self.pre_step()
            self.step(last=s == steps - 1)
        b.end_turn()
        if number in self.plan.forks:
            self.fork(number)

    def fork(self, number: int) -> None:
        boundary = self.b.next_seq - 1
        child = self.b.fork(session_id=f"{self.o.session_id}-fork-{number}", boundary=boundary)
        with child.turn(self.draw(_SHORT)):
            with child.step():
                child.assistant(self.draw(_SHORT), reasoning=self.attempt_reasoning())
        header = next(s for s in range(boundary + 1, child.next_seq) if child.event(s)["type"] == "request/header")
        truth = (Happening("resume", boundary + 1, (boundary + 1,)),
                 Happening("header", header, (header,), "resume"))
        self.children.append(GeneratedSession(child, truth, self.o.packed if self.o.packed is not None else True))
        self.truth.append(Happening("fork", boundary, (boundary,), detail={"child": child.session_id}))

    def play(self) -> GeneratedSession:
        for number in range(1, len(self.plan.steps) + 1):
            self.turn(number)
        prunes = len(self.happenings("prune"))
        if prunes < self.o.prunes[0]:
            reject()  # every tool result was compacted away before a planned prune: rare
        packed = self.o.packed if self.o.packed is not None else self.draw(st.booleans())
        children = tuple(GeneratedSession(c.builder, c.truth, packed) for c in self.children)
        return GeneratedSession(self.b, tuple(sorted(self.truth, key=lambda h: h.seq)), packed, children)

    def happenings(self, kind: str) -> list[Happening]:
        return [h for h in self.truth if h.kind == kind]


def sessions(*, turns: int | tuple[int, int] = (1, 3), max_steps: int = 3, tools: int = 3,
             reasoning: bool | None = None, retries: int | tuple[int, int] = 1,
             compactions: int | tuple[int, int] = 1, prunes: int | tuple[int, int] = 1,
             header_changes: int | tuple[int, int] = 2, resumes: int | tuple[int, int] = 1,
             runtime_context: bool | None = None, packed: bool | None = None,
             forks: int | tuple[int, int] = 0, session_id: str = "gen-session") -> st.SearchStrategy[GeneratedSession]:
    """Valid DSH v0 session logs, built by :class:`~dsh_audit.testing.LogBuilder`, with ground truth.

    Each draw plans turns and steps, then writes them as DSH's agent loop would: the prompt and
    any runtime-context snapshot at ``step/start``, a header snapshot when one is owed (reason
    ``initial``, ``change`` or ``resume``), streamed replies with reasoning, tool calls answered
    by results in model order, failed attempts retried inside the step, pruned tool results and
    automatic compactions before a step, manual ``/compact`` between turns, resumes
    (``session/end-seed``) and fork children seeded with a finished turn.

    Counts (``retries`` ... ``forks``) are an int *n* (between 0 and *n* of them) or a
    ``(min, max)`` pair; ``turns`` is an int (exactly) or a pair. Booleans ``reasoning`` and
    ``runtime_context`` say always (True), never (False) or sometimes (None); ``packed`` chooses
    the default file encoding (None: drawn). All arguments are checked when the strategy is
    created and raise :class:`InvalidStrategyArgument`.

    Args:
        turns: how many turns.
        max_steps: the most steps a turn takes (its last step answers without tool calls).
        tools: how many tool schemas the header carries (0-5); with none, no tool calls.
        reasoning: whether replies carry a reasoning block.
        retries: failed attempts, each retried inside its step.
        compactions: summary compactions (automatic before a step, or manual between turns).
        prunes: tool results pruned before a step.
        header_changes: header changes before an attempt (model, effort, a timestamp in the
            system prompt, tools reordered or dropped, a schema's key order, max tokens,
            temperature); a header change needs ``tools >= 2`` for the tool kinds.
        resumes: new processes over the log between turns (``session/end-seed``, then a
            ``resume`` header, sometimes with a change).
        runtime_context: whether steps append a runtime-context snapshot message.
        packed: default encoding of :meth:`GeneratedSession.write` (packed chunk rows or not).
        forks: fork children, each seeded with the log through a ``turn/end`` and answering one turn.
        session_id: the header id (children get ``<id>-fork-<turn>``).

    Returns:
        A strategy of :class:`GeneratedSession`.

    Example:
        >>> from hypothesis import given
        >>> from dsh_audit.strategies import sessions
        >>> @given(sessions(turns=2, compactions=(1, 1)))
        ... def test_compaction_is_logged(session):
        ...     assert session.happenings("compaction")
        >>> test_compaction_is_logged()
    """
    steps_max = check_range("max_steps", max_steps, low=1, high=20)[0]
    tools_n = check_range("tools", tools, high=len(TOOL_SCHEMAS))[0]
    o = _Options(
        turns=check_range("turns", turns, low=1, high=50), max_steps=steps_max, tools=tools_n,
        reasoning=check_bool("reasoning", reasoning, optional=True),
        runtime_context=check_bool("runtime_context", runtime_context, optional=True),
        packed=check_bool("packed", packed, optional=True), retries=check_count("retries", retries),
        compactions=check_count("compactions", compactions), prunes=check_count("prunes", prunes),
        header_changes=check_count("header_changes", header_changes), resumes=check_count("resumes", resumes),
        forks=check_count("forks", forks), session_id=session_id)
    if not isinstance(session_id, str) or not session_id:
        raise InvalidStrategyArgument(f"session_id={session_id!r}: expected a non-empty string")
    room = o.turns[1] * steps_max - 1
    for name in ("compactions", "prunes", "header_changes"):
        if getattr(o, name)[0] > room:
            raise InvalidStrategyArgument(f"{name}={getattr(o, name)!r}: at most {room} fit in {o.turns[1]} turn(s) "
                                          f"of at most {steps_max} step(s) (one per step after the first)")
    if o.prunes[0] and (tools_n == 0 or steps_max < 2):
        raise InvalidStrategyArgument(f"prunes={prunes!r}: pruning needs tool results, so tools >= 1 and max_steps >= 2")
    if o.resumes[0] > o.turns[1] - 1:
        raise InvalidStrategyArgument(f"resumes={resumes!r}: resumes happen between turns, at most {o.turns[1] - 1} "
                                      f"with turns={turns!r}")
    if o.forks[0] > o.turns[1]:
        raise InvalidStrategyArgument(f"forks={forks!r}: one fork per finished turn, at most {o.turns[1]}")

    @st.composite
    def _draw(draw: Any) -> GeneratedSession:
        return _Player(draw, o, _plan(draw, o)).play()

    return _draw()
