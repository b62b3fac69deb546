"""The first and last ``timestamp`` of another agent's log (Claude Code, Codex), read from its two
ends without importing it: what ``--since``/``--until`` select by (as :func:`dsh_audit.log.time_span`
does for a DSH log)."""

from __future__ import annotations

import os

from ..log import open_regular, parse_json
from ._model import iso_seconds

__all__ = ["record_span"]

#: Lines read from either end for a record with a time, before the log has to be imported.
_ENDS = 64
_BLOCK = 64 << 10  # the first backward read of its end; each further one twice as large, up to _ENDS lines


def record_span(log: str | os.PathLike[str]) -> tuple[float, float] | None:
    """The ``timestamp`` of the first and of the last record that has one, of a Claude Code
    transcript or a Codex rollout, read from its first and last lines (:data:`_ENDS` at most at
    either end; a torn last line is skipped); None when neither end has one (import the log for
    its times then). Raises what :func:`dsh_audit.log.open_regular` raises for a file that cannot
    be read."""
    with open_regular(os.fspath(log)) as handle:
        first = next((t for _, raw in zip(range(_ENDS), handle) if (t := _record_time(raw)) is not None), None)
        if first is None:
            return None
        end = handle.seek(0, os.SEEK_END)
        block = _BLOCK
        while True:
            start = max(0, end - block)
            handle.seek(start)
            lines = handle.read(end - start).split(b"\n")[1 if start else 0:]  # the first may be cut
            last = next((t for raw in reversed(lines[-_ENDS:]) if (t := _record_time(raw)) is not None), None)
            if last is not None or start == 0 or len(lines) > _ENDS:
                return None if last is None else (min(first, last), max(first, last))
            block *= 2


def _record_time(raw: bytes) -> float | None:
    """The ``timestamp`` of one record line in seconds since the epoch, as the importers read it
    (:func:`~._model.iso_seconds`); None when the line is not a record with one."""
    try:
        record = parse_json(raw)
    except ValueError:
        return None
    return iso_seconds(record.get("timestamp")) if isinstance(record, dict) else None


