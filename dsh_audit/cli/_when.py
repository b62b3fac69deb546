"""The time window of every command that selects sessions: ``--since WHEN`` and ``--until WHEN``,
read by :func:`parse_when`, and the refusal of a window that holds no moment.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ..errors import DshAuditError, UsageError
from ._given import give_way

__all__ = ["check_window", "parse_when", "request_window_options", "time_options", "window_options", "window_text"]


def window_text(since: float | None, until: float | None) -> str:
    from ..cache import iso_utc, parse_instant

    end_of_9999 = parse_instant("9999-12-31", end=True)  # past datetime's range: the reader's own value

    def iso(moment: float) -> str:
        if moment == end_of_9999:  # --until 9999-12-31: that whole day, up to its end
            return "10000-01-01T00:00:00Z (the end of 9999-12-31)"
        return iso_utc(moment) or f"{moment:.6g} s after the epoch (outside the years 1-9999)"

    return " ".join(f"{name} {iso(moment)}" for name, moment in (("--since", since), ("--until", until))
                    if moment is not None)


_WINDOW_HINT = ("--until WHEN ends the window, and a date there includes that whole day: give a --since before it, "
                "or swap the two")


def check_window(since: float | None, until: float | None) -> None:
    """Refuse a ``--since/--until`` window that holds no moment: the one check of every command.

    Raises:
        UsageError: ``since`` is at or after ``until``.
    """
    if since is not None and until is not None and since >= until:
        raise UsageError(_empty_window(since, until)("--since", "--until"), hint=_WINDOW_HINT)


def _empty_window(since: float, until: float) -> Callable[[str, str], str]:
    """The sentence refusing the empty window ``[since, until)``, given how each bound was given."""
    return lambda first, second: f"{first} must be before {second}: {window_text(since, until)} is an empty window"


#: How much of an unreadable WHEN an error quotes (a line, not a page of digits).
_SHOWN = 60
_WHEN_HINT = ("give a date (2026-11-01), today or yesterday (UTC days), a date-time (2026-11-01T08:30, or with an "
              "offset such as +01:00 or Z; UTC when none) or an age such as 90s, 30m, 12h, 7d or 2w")


def parse_when(text: str, *, option: str = "--since", end: bool = False) -> float:
    """The moment ``text`` names, in seconds since the epoch: the one reader of ``--since`` and
    ``--until`` on every command. An age back from now (``90s``, ``30m``, ``12h``, ``7d``, ``2w``), a
    date (UTC midnight; with ``end``, the next midnight, so ``--until 2026-12-01`` includes that
    day) or a date-time ``YYYY-MM-DDTHH:MM[:SS[.fff]]`` (UTC unless it ends in ``Z`` or ``+HH:MM``):
    :func:`~dsh_audit.cache.parse_instant` reads all but the age, and refuses every other spelling.

    Raises:
        UsageError: ``text`` is none of these, or names a moment out of range.

    Example:
        >>> parse_when("2026-12-01"), parse_when("2026-12-01", end=True) - parse_when("2026-12-01")
        (1796083200.0, 86400.0)
    """
    from ..fleet import parse_since

    try:
        return parse_since(text, end=end)
    except (DshAuditError, OverflowError, OSError, ValueError):
        shown = repr(text) if len(text) <= _SHOWN else f"{text[:_SHOWN]!r}... ({len(text)} characters)"
        raise UsageError(f"cannot read {option} {shown}", hint=_WHEN_HINT) from None


def _parse_when(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    if value is None:
        return None
    option = f"--{param.name}"
    try:
        moment = parse_when(value, option=option, end=param.name == "until")
    except DshAuditError as exc:
        raise click.BadParameter(f"{exc.message} ({exc.hint})", ctx=ctx, param=param) from None
    other_name = "until" if param.name == "since" else "since"
    other = ctx.params.get(other_name)
    if not isinstance(other, float):
        return moment
    # the other bound, read first: an empty window is refused here, unless one bound came from its
    # variable and the other was typed (the typed one wins: give_way)
    since, until = (moment, other) if param.name == "since" else (other, moment)
    if since >= until:
        dropped = give_way("since", "until", typed=("--since", "--until"), clash=_empty_window(since, until),
                           hint=_WINDOW_HINT)
        if dropped == param.name:
            return None
        ctx.params[other_name] = None
    return moment



#: The forms of a moment every ``--since/--until`` takes, as the options' help names them.
_WHEN_FORMS = ("a date (2026-11-01, UTC), today or yesterday (UTC days), a date-time (2026-11-01T08:30, UTC "
               "unless it has an offset), or an age such as 24h, 7d or 2w")


def window_options(what: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--since WHEN`` and ``--until WHEN`` (``since``, ``until``: seconds since the epoch, or
    None), whose help says what they keep: ``what`` ("sessions active", "requests sent")."""

    def options(func: Callable[..., Any]) -> Callable[..., Any]:
        func = click.option("--until", metavar="WHEN", default=None, callback=_parse_when,
                            help=f"Only {what} before WHEN, by the log's own timestamps (a date includes that "
                                 "whole day); same forms as --since.")(func)
        return click.option("--since", metavar="WHEN", default=None, callback=_parse_when,
                            help=f"Only {what} at or after WHEN, by the log's own timestamps (not the file's "
                                 f"mtime): {_WHEN_FORMS}.")(func)

    return options


#: ``--since/--until`` of a listing: the sessions active in the window.
time_options = window_options("sessions active")
#: ``--since/--until`` of a command that sums the requests sent in the window (``usage``, ``stats``).
request_window_options = window_options("requests sent")
