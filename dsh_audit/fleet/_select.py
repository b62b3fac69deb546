"""Choosing logs by modification time: ``--since 2026-11-01`` or ``--since 7d``."""

from __future__ import annotations

import math
import os
import re
import time
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from ..errors import UsageError
from ..log import discover

__all__ = ["modified_since", "parse_since", "select_logs"]

_RELATIVE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$", re.ASCII)
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_since(text: str, *, now: float | None = None, end: bool = False) -> float:
    """The moment ``text`` names, in seconds since the epoch.

    Args:
        text: a duration back from now (``90s``, ``30m``, ``12h``, ``7d``, ``2w``, ASCII digits), or a
            date or date-time as :func:`dsh_audit.cache.parse_instant` reads them, the one reader of
            dates (``2026-11-01``, ``2026-11-01T08:30``, ``2026-11-01T08:30:00+01:00``; UTC unless an
            offset is given; no other ISO spelling).
        now: the present, in seconds since the epoch (default: the clock).
        end: a date means the end of that day (``--until``), not its start.

    Raises:
        UsageError: ``text`` is neither, or an age too long for a float (400 digits of weeks).

    Example:
        >>> parse_since("7d", now=1_000_000.0), parse_since("2026-12-01")
        (395200.0, 1796083200.0)
    """
    match = _RELATIVE.match(text)
    if match:
        current = time.time() if now is None else now
        then = current - float(match.group(1)) * _SECONDS[match.group(2)]
        if not math.isfinite(then):  # infinity: no date, and no moment later code can floor
            raise UsageError(f"cannot read --since {text!r}: the age is too long",
                             hint="give an age such as 90s, 30m, 12h, 7d or 2w, or a date")
        return then
    from ..cache import parse_instant  # here: an age, all most commands take, needs none of the price code

    return parse_instant(text, end=end, now=now)


def modified_since(paths: Iterable[str | os.PathLike[str]], since: float) -> list[Path]:
    """The paths modified at or after ``since`` (seconds since the epoch), in the order given.

    A path that cannot be stat'ed is kept, so that the run reports why it cannot be read.

    Example:
        >>> modified_since([], 0.0)
        []
    """
    kept: list[Path] = []
    for item in paths:
        path = Path(item)
        try:
            if path.stat().st_mtime < since:
                continue
        except OSError:
            pass
        kept.append(path)
    return kept


def select_logs(paths: Iterable[str | os.PathLike[str]] | None, *, since: float | None = None,
                notes: list[str] | None = None) -> list[Path]:
    """Discover the session logs under ``paths`` and keep those modified at or after ``since``.

    Args:
        paths: files or folders (see :func:`dsh_audit.log.discover`); None or empty: the default
            sessions root.
        since: seconds since the epoch (see :func:`parse_since`); None keeps every log.
        notes: collects discovery notes and how many logs ``since`` left out.

    Raises:
        UnreadableError: a path does not exist or holds no log.
    """
    logs = discover(list(paths) if paths else None, notes=notes)
    if since is None:
        return logs
    kept = modified_since(logs, since)
    if notes is not None and len(kept) < len(logs):
        moment = datetime.fromtimestamp(since).isoformat(timespec="seconds")
        notes.append(f"--since {moment}: {len(logs) - len(kept)} of {len(logs)} log(s) modified earlier left out")
    return kept
