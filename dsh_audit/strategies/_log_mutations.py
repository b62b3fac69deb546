"""Log mutations: one targeted fault in a generated log's events, and the rule that must catch it.

* ``seq-gap``: from one event on, every seq is one too high (spec §1.3: ``events[i].seq == i``);
  a later ``turn/end`` makes it fatal, so the validator reports ``DSH107`` and loading refuses
  the log with ``CorruptLogError``.
* ``bad-replace-range``: a surface replace names a start that is not a current surface node
  (a log-only event) or, for a range of several nodes, start and end swapped: ``DSH304``, and
  replay refuses the log with ``ReplayError``.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from hypothesis import reject
from hypothesis import strategies as st

from ._model import Expected, GeneratedSession, MutatedLog, Mutation
from ._options import InvalidStrategyArgument, check_kinds

__all__ = ["LOG_MUTATIONS", "log_mutations", "mutated_logs"]

#: Every log mutation kind, sorted.
LOG_MUTATIONS = ("bad-replace-range", "seq-gap")


def _surfaces(events: list[dict[str, Any]]) -> dict[int, list[int]]:
    """The surface just before each replace event, by the replace's position."""
    surface: list[int] = []
    before: dict[int, list[int]] = {}
    for position, event in enumerate(events):
        op = event.get("surfaceOp")
        if op == "append":
            surface.append(event["seq"])
        elif isinstance(op, dict):
            before[position] = list(surface)
            first, last = surface.index(op["start"]), surface.index(op["end"])
            surface[first:last + 1] = [event["seq"]]
    return before


def _sites(events: list[dict[str, Any]], kind: str) -> list[Any]:
    if kind == "seq-gap":
        last_end = max((i for i, e in enumerate(events) if e["type"] == "turn/end"), default=-1)
        return list(range(1, last_end))
    sites = []
    for position, surface in _surfaces(events).items():
        op = events[position]["surfaceOp"]
        outside = [e["seq"] for e in events[:position] if e["seq"] not in surface and "surfaceOp" not in e]
        if outside:
            sites.append((position, "start", outside[-1]))
        if op["start"] != op["end"]:
            sites.append((position, "swap", None))
    return sites


def _apply(events: list[dict[str, Any]], kind: str, site: Any) -> Mutation:
    if kind == "seq-gap":
        for event in events[site:]:
            event["seq"] += 1
        seq = events[site]["seq"]
        return Mutation(kind, "log", f"seq {seq - 1} skipped: events from position {site} are numbered one too high",
                        (Expected("validate", "DSH107", seq), Expected("load", "CorruptLogError")))
    position, how, value = site
    event = events[position]
    op = dict(event["surfaceOp"])
    if how == "start":
        op["start"] = value
        text = f"seq {event['seq']} replace starts at log-only seq {value}"
    else:
        op["start"], op["end"] = op["end"], op["start"]
        text = f"seq {event['seq']} replace range has start and end swapped"
    event["surfaceOp"] = op
    return Mutation(kind, "log", text, (Expected("validate", "DSH304", event["seq"]), Expected("load", "ReplayError")))


def log_mutations(session: GeneratedSession, *,
                  kinds: Sequence[str] = LOG_MUTATIONS) -> st.SearchStrategy[MutatedLog]:
    """One targeted fault in ``session``'s events (written unpacked, so a seq gap stays visible).

    Args:
        session: a generated session (see :func:`~dsh_audit.strategies.sessions`).
        kinds: the mutation kinds to choose from (see :data:`LOG_MUTATIONS`).

    Raises:
        InvalidStrategyArgument: none of ``kinds`` applies (``bad-replace-range`` needs a
            compaction or prune; ``seq-gap`` a ``turn/end`` after the second event).

    Example:
        >>> from dsh_audit.strategies import sessions
        >>> from hypothesis import given, settings, strategies as st
        >>> @settings(max_examples=3)
        ... @given(sessions(turns=2, compactions=(1, 1)), st.data())
        ... def test_replace_faults(session, data):
        ...     item = data.draw(log_mutations(session, kinds=["bad-replace-range"]))
        ...     assert [e.code for e in item.mutation.expected] == ["DSH304", "ReplayError"]
        >>> test_replace_faults()
    """
    chosen = check_kinds("kinds", kinds, LOG_MUTATIONS)
    events = session.events
    options = [(kind, site) for kind in chosen for site in _sites(events, kind)]
    if not options:
        raise InvalidStrategyArgument(f"none of kinds={list(chosen)} applies to {session!r}",
                                      hint="bad-replace-range needs a compaction or prune in the log")

    def build(option: tuple[str, Any]) -> MutatedLog:
        mutated = copy.deepcopy(events)
        mutation = _apply(mutated, *option)
        return MutatedLog(session, session.header_record, tuple(mutated), mutation)

    return st.sampled_from(options).map(build)


def mutated_logs(*, kinds: Sequence[str] = LOG_MUTATIONS,
                 sessions: st.SearchStrategy[GeneratedSession] | None = None) -> st.SearchStrategy[MutatedLog]:
    """A generated log with one fault from ``kinds`` (default sessions have a compaction or prune).

    Example:
        >>> from hypothesis import given, settings
        >>> @settings(max_examples=3)
        ... @given(mutated_logs(kinds=["seq-gap"]))
        ... def test_gaps(item):
        ...     assert [e.code for e in item.mutation.expected] == ["DSH107", "CorruptLogError"]
        >>> test_gaps()
    """
    chosen = check_kinds("kinds", kinds, LOG_MUTATIONS)
    if sessions is None:
        from ._sessions import sessions as make

        source = make(turns=(2, 3), compactions=(1, 2), prunes=1, forks=0)
    else:
        source = sessions

    @st.composite
    def draw_one(draw: Any) -> MutatedLog:
        session = draw(source)
        if not any(_sites(session.events, kind) for kind in chosen):
            reject()
        item: MutatedLog = draw(log_mutations(session, kinds=chosen))
        return item

    return draw_one()
