"""Compaction adjacency and brackets: the ``compaction/*`` contract (DSH320-DSH327).

Sources (DSH 0.1.0-rc.8): the event contract in ``packages/compaction/compaction/src/types.ts``
(L17-32: the summary is immediately followed by the ``user/message`` replace of its range;
L72-88: a prune is immediately followed by its replacement), the writer in
``packages/compaction/compaction-basic/src/region.ts`` (``commitCompactionBody``: summary, then the
checkpoint replace, synchronously), the checkpoint source in ``.../compaction/src/checkpoint.ts``
and the bracket checks of DSH's compaction invariant (``.../compaction/src/invariant.ts``: one open
bracket at a time, matching ids and ``sourceCommandId``, the owner turn, a stale bracket cleared by
``session/end-seed``). That invariant is a runtime check: DSH loads a log that breaks any of
these, so they are warnings (an unclosed bracket at the end of the log is a crash fact: info).
The spec is ``dsh-log-format.md`` §2 (compaction rows) and §9.1-§9.3.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._json import as_object
from ..log import Event
from ..replay import Replacement
from .._show import member, shown
from ._sink import Sink

__all__ = ["CompactionCheck"]


@dataclass
class _Open:
    compaction_id: Any
    command_id: Any
    turn: Any
    seq: int
    summarized: bool = False


@dataclass
class _Owed:
    """What the event right after a summary or prune must be."""

    kind: str  # "compaction/summary" or "compaction/prune"
    seq: int
    range: Any
    seqs: Any
    compaction_id: Any = None


def _is_checkpoint(event: Event) -> bool:
    if event.type != "user/message" or not isinstance(event.surface_op, dict):
        return False
    source = as_object(as_object(event.data).get("source"))
    return source.get("kind") == "plugin" and source.get("plugin") == "compact"


def _range_of(seqs: Any) -> dict[str, Any] | None:
    if isinstance(seqs, list) and seqs:
        return {"start": seqs[0], "end": seqs[-1]}
    return None


class CompactionCheck:
    """Folds events in order and reports the compaction rules DSH320-DSH327."""

    def __init__(self, sink: Sink) -> None:
        self.sink = sink
        self.open: _Open | None = None
        self.owed: _Owed | None = None
        self.open_turn: Any = None
        self.event: Event | None = None

    def add(self, rule: str, message: str) -> None:
        assert self.event is not None
        self.sink.add(rule, message, line=self.event.line, seq=self.event.seq)

    def apply(self, event: Event, replacement: Replacement | None, *, surface_ok: bool) -> None:
        """Check one admitted event; ``replacement`` is what the surface fold shadowed for it."""
        self.event = event
        data = as_object(event.data)
        owed, self.owed = self.owed, None
        checkpoint = _is_checkpoint(event)
        if owed is not None:
            self.check_owed(owed, event, replacement, surface_ok=surface_ok)
        elif checkpoint and (self.open is None or not self.open.summarized):
            # (after a summary of the open bracket, a late checkpoint is DSH320's finding)
            self.add("DSH322", "compaction checkpoint replace does not follow a compaction/summary")
        if checkpoint:
            self.check_in_bracket("compaction checkpoint", as_object(data.get("source")))
        etype = event.type
        if etype == "turn/start" or etype == "turn/end":
            if self.open is not None:
                self.add("DSH327", f"{etype} crosses the open compaction {shown(self.open.compaction_id)} "
                         f"(compaction/start seq {self.open.seq})")
            self.open_turn = data.get("turn") if etype == "turn/start" else None
        elif etype == "session/end-seed":
            self.open = None  # DSH treats an inherited unclosed bracket as stale
        elif etype == "compaction/start":
            self.on_start(event, data)
        elif etype == "compaction/summary":
            self.on_summary(event, data)
        elif etype == "compaction/end":
            self.on_end(data)
        elif etype == "compaction/prune":
            self.owed = _Owed(etype, event.seq, data.get("shadowedRange"), data.get("shadowedSeqs"))
            self.check_range_shape(data)

    def refused(self) -> None:
        """An event the admission refused: whether it met an obligation is unknowable."""
        self.owed = None

    def finish(self) -> None:
        """End of the log: an owed replacement and an unclosed bracket."""
        if self.owed is not None:
            rule = "DSH320" if self.owed.kind == "compaction/summary" else "DSH323"
            self.sink.add(rule, f"the log ends right after the {self.owed.kind} at seq {self.owed.seq}; its "
                          "surface replace is missing")
        if self.open is not None:
            self.sink.add("DSH326", f"log ends inside compaction {shown(self.open.compaction_id)} "
                          f"(compaction/start seq {self.open.seq} has no compaction/end)")

    # -- adjacency --------------------------------------------------------------------------------

    def check_owed(self, owed: _Owed, event: Event, replacement: Replacement | None, *, surface_ok: bool) -> None:
        summary = owed.kind == "compaction/summary"
        carrier = "user/message" if summary else "tool/result"
        adjacency, mismatch = ("DSH320", "DSH321") if summary else ("DSH323", "DSH324")
        if event.type != carrier or not isinstance(event.surface_op, dict):
            self.add(adjacency, f"{event.type} follows the {owed.kind} at seq {owed.seq}; its {carrier} "
                     "surface replace must come immediately after it")
            return
        if summary:
            source = as_object(as_object(event.data).get("source"))
            if not _is_checkpoint(event) or source.get("compactionId") != owed.compaction_id:
                self.add("DSH322", f"replace after compaction/summary seq {owed.seq} has source "
                         f"{shown(member(event.data, 'source'))}; expected kind plugin, plugin compact, "
                         f"compactionId {shown(owed.compaction_id)}")
        op = event.surface_op
        declared = {"start": op.get("start"), "end": op.get("end")}
        if declared != owed.range:
            self.add(mismatch, f"replace range {shown(declared)} is not the {owed.kind} shadowedRange "
                     f"{shown(owed.range)}")
        elif surface_ok and replacement is not None and list(replacement.shadowed_seqs) != owed.seqs:
            self.add(mismatch, f"replace shadows {shown(list(replacement.shadowed_seqs))}, not the {owed.kind} "
                     f"shadowedSeqs {shown(owed.seqs)}")

    def check_range_shape(self, data: dict[str, Any]) -> None:
        seqs, declared = data.get("shadowedSeqs"), data.get("shadowedRange")
        if _range_of(seqs) is None or _range_of(seqs) != declared:
            rule = "DSH321" if self.event is not None and self.event.type == "compaction/summary" else "DSH324"
            self.add(rule, f"shadowedRange {shown(member(data, 'shadowedRange'))} must be the first and last of a "
                     f"non-empty shadowedSeqs {shown(member(data, 'shadowedSeqs'))}")

    # -- brackets -----------------------------------------------------------------------------------

    def check_in_bracket(self, what: str, data: dict[str, Any]) -> bool:
        """Whether ``data`` (a summary, end or checkpoint source) belongs to the open bracket."""
        cid = data.get("compactionId")
        if self.open is None:
            self.add("DSH325", f"{what} {shown(cid)} has no open compaction/start")
            return False
        if cid != self.open.compaction_id:
            self.add("DSH325", f"{what} id {shown(cid)} does not match the open compaction/start id "
                     f"{shown(self.open.compaction_id)} (seq {self.open.seq})")
            return False
        if member(data, "sourceCommandId") != self.open.command_id:
            self.add("DSH325", f"{what} sourceCommandId {shown(member(data, 'sourceCommandId'))} does not match "
                     f"compaction/start's {shown(self.open.command_id)}")
        return True

    def check_owner(self, etype: str, owner: Any) -> None:
        if owner is None and self.open_turn is not None:
            self.add("DSH327", f"{etype} is standalone (turn null) but turn {shown(self.open_turn)} is open")
        elif owner is not None and owner != self.open_turn:
            self.add("DSH327", f"{etype} names turn {shown(owner)} but the open turn is {shown(self.open_turn)}")

    def on_start(self, event: Event, data: dict[str, Any]) -> None:
        if self.open is not None:
            self.add("DSH325", f"compaction/start while compaction {shown(self.open.compaction_id)} (seq "
                     f"{self.open.seq}) has no compaction/end")
        self.check_owner("compaction/start", data.get("turn"))
        self.open = _Open(data.get("compactionId"), member(data, "sourceCommandId"), data.get("turn"), event.seq)

    def on_summary(self, event: Event, data: dict[str, Any]) -> None:
        self.owed = _Owed("compaction/summary", event.seq, data.get("shadowedRange"), data.get("shadowedSeqs"),
                          data.get("compactionId"))
        self.check_range_shape(data)
        if self.check_in_bracket("compaction/summary", data) and self.open is not None:
            if self.open.summarized:
                self.add("DSH325", f"second compaction/summary in compaction {shown(self.open.compaction_id)}")
            self.open.summarized = True

    def on_end(self, data: dict[str, Any]) -> None:
        """Check an end against the open bracket, then close it (even a mismatched one: no cascade)."""
        if self.check_in_bracket("compaction/end", data) and self.open is not None:
            if data.get("turn") != self.open.turn:
                self.add("DSH327", f"compaction/end owner {shown(member(data, 'turn'))} is not compaction/start's "
                         f"{shown(self.open.turn)}")
            else:
                self.check_owner("compaction/end", self.open.turn)
            if "error" not in data and not self.open.summarized:
                self.add("DSH325", f"compaction/end without error but compaction {shown(self.open.compaction_id)} "
                         "has no compaction/summary")
        self.open = None
