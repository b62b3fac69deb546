"""What DSH refuses in one event of a log, in its words, and the order it checks its rules in.

DSH validates a whole log before it uses any of it (spec §1.3-§1.8); the reader streams, so it
keeps every refusal it meets as a :class:`Candidate` and reports the one DSH would report first:
the lowest stage, and within a stage the earliest position.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import CorruptLogError, DshAuditError, UnsupportedFormatError
from ._shapes import envelope_error, message_shape_error
from ._types import KNOWN_EVENT_TYPES

__all__ = ["META", "SEED", "UPGRADE", "Candidate", "event_refusal", "retired_refusal"]


# Failure stages in the order DSH checks them; a lower stage wins over a higher one anywhere.
SCAN, HEADER_DELTA, MODE_SET, FALLBACK, UPGRADE, UNKNOWN, META, SEED = range(8)


@dataclass(slots=True)
class Candidate:
    stage: int
    position: int
    error: DshAuditError

    def key(self) -> tuple[int, int]:
        return (self.stage, self.position)


def retired_refusal(raw: Any, *, sid: str, path: str, line: int) -> tuple[int, DshAuditError] | None:
    """The refusal of a legacy shape retired before format v0 was frozen (a header delta, a
    ``mode/set``, a fallback request header) that ``raw`` is, with its stage; None for any other."""
    seq = raw["seq"]
    etype = raw.get("type")
    data = raw.get("data")
    if etype == "request/header-delta":
        return HEADER_DELTA, UnsupportedFormatError(
            f'session "{sid}" contains unsupported legacy request/header-delta event at seq {seq}',
            path=path, line=line, seq=seq,
            hint="header deltas were retired before format v0 was frozen; DSH cannot load this log")
    if etype == "mode/set":
        return MODE_SET, UnsupportedFormatError(
            f'session "{sid}" contains unsupported legacy mode/set event at seq {seq}',
            path=path, line=line, seq=seq, hint="mode/set was retired; DSH cannot load this log")
    if etype == "request/header" and isinstance(data, dict) and data.get("reason") == "fallback":
        return FALLBACK, UnsupportedFormatError(
            f'session "{sid}" contains unsupported legacy request/header reason "fallback" at seq {seq}',
            path=path, line=line, seq=seq, hint="fallback headers were retired; DSH cannot load this log")
    return None


def event_refusal(event: dict[str, Any], seq: int, known: frozenset[str], *, sid: str, path: str,
                  line: int) -> tuple[int, DshAuditError] | None:
    """The first refusal, with its stage, of an upgraded ``event`` (at ``seq``), in DSH's order:
    its message shape, a type not in ``known`` and not marked ignorable, then its envelope."""
    shape = message_shape_error(event)
    if shape:
        return UPGRADE, CorruptLogError(f"session event at seq {seq} {shape}", path=path, line=line, seq=seq)
    etype = event.get("type")
    if isinstance(etype, str) and etype not in known and event.get("ignorable") is not True:
        return UNKNOWN, UnsupportedFormatError(
            f'session "{sid}" contains event type "{etype}" (seq {seq}) unknown to this harness and not marked ignorable',
            path=path, line=line, seq=seq, hint=_unknown_type_hint(etype))
    envelope = envelope_error(event)
    if envelope:
        subject, problem = envelope
        return SEED, CorruptLogError(f"seed {subject} at index {seq} {problem}", path=path, line=line, seq=seq,
                                     hint=_ENVELOPE_HINTS.get(problem))
    return None


#: what DSH requires, for an envelope problem whose words do not say it (DSH's
#: ``assertAdapterDefaults``, packages/core/session/src/index.ts)
_ENVELOPE_HINTS = {
    "has invalid adapterDefaults": 'DSH accepts adapterDefaults only as an object whose keys are "reasoningEffort" '
                                   'or "maxTokens", each true and each set in the header\'s config',
}


def _unknown_type_hint(etype: str) -> str:
    import difflib

    close = difflib.get_close_matches(etype, sorted(KNOWN_EVENT_TYPES), n=1)
    if close:
        return f"did you mean '{close[0]}'? A writer can mark plugin events \"ignorable\": true"
    return 'a writer can mark plugin events "ignorable": true so readers may skip them'
