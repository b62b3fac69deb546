"""Admitting one stored event: envelope, refusals, legacy upgrades, shapes, surface fold.

These are the checks DSH runs when it loads a log (spec §1.5, §1.7, §3); each failure DSH would
refuse the log for is an error here. Where the project already has the check it is reused:
``message_shape_error`` and ``adapter_defaults_error`` (log/_records.py), ``upgrade_event``
(log/_upgrade.py), ``to_v0_shapes`` and ``known_types`` (log/_versions.py), ``SurfaceFold``
(replay/_surface.py, atomic: a refused event leaves the surface unchanged, so we go on).

In a session's own read (``check``, ``report``), replay folds the reader's events into this fold
(``LineValidator.shared_fold``): the event the fold was last given (``SurfaceFold.last``), when it
was made from the stored event being admitted, is the reader's, and is not checked again. The
reader yields an event only when DSH refuses nothing of it (envelope, retired shapes, upgrade,
message shape, unknown type not marked ignorable, request header defaults), so only what it lets
through is left to say (an unknown ignorable type), and the fold's verdict is read, not made again
(``last_replacement``, ``last_refusal``). An event upgraded or brought to v0 shapes (new data) is
admitted here as before, for its DSH505 finding; the rules fold themselves what replay did not
(chunks, which it does not fold, and what follows a refusal that stopped it).
"""

from __future__ import annotations

from typing import Any

from ..errors import ReplayError
from ..log import (
    Event,
    Malformed,
    MessageIds,
    adapter_defaults_error,
    is_plain_chunk,
    is_safe_int,
    message_shape_error,
    new_event,
    to_v0_shapes,
    upgrade_event,
)
from ..replay import Replacement, SurfaceFold, unfoldable_field, unfoldable_words
from .._show import missing_or, shown
from ._sink import Sink

__all__ = ["Admitter"]

_ENVELOPE_KEYS = frozenset({"type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs", "ignorable"})
_RETIRED = {"request/header-delta": "DSH501", "mode/set": "DSH502"}
_ROUTE_RULES = {"lacks provider/model": "DSH221", "has an invalid reasoningEffort": "DSH222",
                "has invalid adapterDefaults": "DSH223"}
# ReplayError texts of the surface fold (DSH's own wording) -> rule; first match wins.
_SURFACE_RULES = (
    ("is not surface-eligible", "DSH301"),
    ("requires a surfaceOp", "DSH302"),
    ("invalid replace surfaceOp", "DSH303"),
    ("invalid surfaceOp", "DSH303"),
    ("must include every shadowed", "DSH305"),
    ("surface replace:", "DSH304"),
    ("tool/result surface replacement", "DSH306"),
    ("must not contain duplicates", "DSH308"),
    ("must reference earlier events", "DSH309"),
    ("sourceEventSeqs", "DSH307"),
)


def surface_rule(message: str) -> str:
    """The rule a surface-fold refusal belongs to."""
    return next((rule for text, rule in _SURFACE_RULES if text in message), "DSH303")


class Admitter:
    """Turns stored events into :class:`Event` values, reporting what DSH's loader refuses."""

    def __init__(self, sink: Sink, *, session_id: str, version: int, known: frozenset[str]) -> None:
        self.sink = sink
        self.sid = session_id
        self.version = version
        self.known = known
        self.fold = SurfaceFold()
        self.message_ids = MessageIds()
        self.surface_ok = True  # whether the fold accepted the last admitted event
        self.replacement: Replacement | None = None  # what the last admitted event shadowed, if anything
        self._chunks_known = "assistant/chunk" in known

    def plain_chunk(self, value: dict[str, Any]) -> bool:
        """Whether ``value`` is an ``assistant/chunk`` event :meth:`admit` would admit without a
        finding and without touching the surface: a plain chunk (:func:`is_plain_chunk`: no
        surfaceOp or sourceEventSeqs, so the fold leaves it alone; no upgrade or v0 shape applies to
        it) of a type this version knows. True records it as admitted; False means :meth:`admit`
        must check it.
        """
        return is_plain_chunk(value) and self.takes_chunk()

    def takes_chunk(self) -> bool:
        """:meth:`plain_chunk` of an event the caller found a plain chunk already (it checks each
        event once): whether this version knows chunks. True records it as admitted."""
        if not self._chunks_known:
            return False
        self.surface_ok, self.replacement = True, None
        return True

    def admit(self, line: int, value: dict[str, Any]) -> Event | None:
        """Check one event, ``value``, stored on line ``line`` (no ``RawEvent`` is made of the two
        for it: most events come without one); return it for the structure rules, or None when it
        cannot be used."""
        given = self.fold.last  # replay's, when it shares the fold: the reader's event
        if (given is not None and given.line == line and given.seq == value["seq"]
                and given.data is value.get("data") and given.type == value.get("type")
                and type(value["seq"]) is int and type(value.get("time")) is int):
            # The reader's own event for this stored one, unchanged by any upgrade or shape change
            # (those make new data): everything but the fold and an ignorable type is settled.
            return self._admitted(given)
        seq = int(value["seq"])
        if not self._envelope(value, line, seq):
            return None
        if self.version >= 1:
            value = to_v0_shapes(value, self.version, [])
        etype = value["type"]
        if etype in _RETIRED:
            self.sink.add(_RETIRED[etype], f"retired {etype} event", line=line, seq=seq)
            return None
        data = value["data"]
        if etype == "request/header" and isinstance(data, dict) and data.get("reason") == "fallback":
            self.sink.add("DSH503", 'request/header with retired reason "fallback"', line=line, seq=seq)
        try:
            value, upgrade = upgrade_event(value, self.sid, self.message_ids)
        except Malformed as exc:
            self.sink.add("DSH504", str(exc), line=line, seq=seq)
            return None
        if upgrade:
            self.sink.add("DSH505", f"{upgrade} upgraded in memory", line=line, seq=seq)
        etype, data = value["type"], value["data"]
        shape = message_shape_error(value)
        if shape:
            self.sink.add("DSH120", f"{etype} {shape}", line=line, seq=seq)
            return None
        unknown = etype not in self.known
        if unknown and value.get("ignorable") is not True:
            self.sink.add("DSH506", f"event type {shown(etype)} is unknown to this reader and not marked ignorable",
                          line=line, seq=seq)
            return None
        if unknown:
            self._ignored(etype, line, seq)
        if etype == "request/header":
            header = data.get("header") if isinstance(data, dict) else None
            problem = adapter_defaults_error(header if isinstance(header, dict) else {})
            if problem:
                self.sink.add(_ROUTE_RULES[problem], f"request/header {problem}", line=line, seq=seq)
                return None
        event = new_event(seq, etype, value.get("time", 0), data, line, value.get("surfaceOp"),
                          value.get("sourceEventSeqs"), value.get("ignorable") is True)  # Event(...), faster
        return self._fold(event, unknown)

    def _admitted(self, event: Event) -> Event | None:
        """:meth:`admit` of an event the reader admitted: an unknown type is ignorable (else the
        reader refuses it), so only DSH507 and the fold can find anything."""
        unknown = event.type not in self.known
        if unknown:
            self._ignored(event.type, event.line, event.seq)
        return self._fold(event, unknown)

    def _ignored(self, etype: str, line: int, seq: int) -> None:
        self.sink.add("DSH507", f"unknown event type {shown(etype)} is marked ignorable and skipped",
                      line=line, seq=seq)

    def _fold(self, event: Event, unknown: bool) -> Event | None:
        """Keep the message id of ``event`` (upgrades read it) and fold it into the surface."""
        etype, data = event.type, event.data
        if etype in ("user/message", "assistant/message", "tool/result"):
            self.message_ids[event.seq] = (data if etype == "user/message" else data["message"])["id"]
        elif etype == "request/header":
            self._unfoldable(event)
        fold = self.fold
        last = fold.last
        if last is not None and last.seq == event.seq:
            # replay folded it into this fold, which it shares (``LineValidator.shared_fold``)
            self.replacement, refusal = fold.last_replacement, fold.last_refusal
        else:
            try:
                self.replacement, refusal = fold.apply(event), None
            except ReplayError as exc:
                self.replacement, refusal = None, exc.message
        self.surface_ok = refusal is None
        if refusal is not None:
            self.sink.add(surface_rule(refusal), refusal, line=event.line, seq=event.seq)
        return None if unknown else event

    def _unfoldable(self, event: Event) -> None:
        """DSH227: a header DSH loads but cannot fold (``canonicalHeader`` throws on a null system or
        tools), so DSH builds no request after it; replay refuses those requests with the same words."""
        header = event.data.get("header")
        field = unfoldable_field(header) if isinstance(header, dict) else None
        if field is not None:
            self.sink.add("DSH227", unfoldable_words(field), line=event.line, seq=event.seq)

    def _envelope(self, value: dict[str, Any], line: int, seq: int) -> bool:
        if not _ENVELOPE_KEYS.issuperset(value):  # a set pass; the names only for the finding
            extra = sorted(k for k in value if k not in _ENVELOPE_KEYS)
            self.sink.add("DSH110", f"unknown envelope key(s) {', '.join(extra)}", line=line, seq=seq)
        if not is_safe_int(value.get("time")):
            self.sink.add("DSH111", missing_or(value, "time", "is not a safe integer", owner="event"),
                          line=line, seq=seq)
        if "ignorable" in value and value["ignorable"] is not True:
            self.sink.add("DSH113", f"ignorable is {shown(value['ignorable'])}, not true", line=line, seq=seq)
        if not isinstance(value.get("type"), str):
            self.sink.add("DSH112", missing_or(value, "type", "is not a string", owner="event"), line=line, seq=seq)
            return False
        if "data" not in value:
            self.sink.add("DSH112", "event has no data", line=line, seq=seq)
            return False
        return True
