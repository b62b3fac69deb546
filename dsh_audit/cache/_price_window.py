"""The peak window of a send time: a provider table's windows (peak hours and days at a UTC
offset, holidays off-peak all day), the wall clock they are read at, and the caveat of a year a
window's holiday list does not cover (:meth:`dsh_audit.cache.PriceBook.caveat`).

A window's ``holidays`` (each exactly ``YYYY-MM-DD``, a date of the window's own wall clock) are
off-peak all day; the list covers the years its dates fall in. A request in another year is
still priced, by the weekday rule alone (a holiday of that year at the peak rate), and the
caveat says so (:func:`_caveat`), once per provider table and year.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from typing import ClassVar

__all__ = ["OFF_PEAK", "PEAK", "STANDARD", "utc_moment"]

#: The windows a request is priced in: ``standard`` when its provider has no peak window in force
#: (one rate all day), no send time is logged, or the request is unpriced.
PEAK, OFF_PEAK, STANDARD = "peak", "off-peak", "standard"
#: Seconds a memoised peak-window answer keeps clear of the edges of the span it holds over
#: (:meth:`_Window.span`): a send time that near an edge is judged afresh.
_EDGE = 1e-3
_EPOCH_DAY = date(1970, 1, 1)
#: The days of 400 Gregorian years: the calendar, weekdays too, repeats after them.
_CYCLE_DAYS = 146_097


@dataclass(frozen=True, slots=True)
class _Clock:
    """A send time's wall clock at a window's offset (:func:`_wall_clock`): its local day (days
    since 1970-01-01), the minute of that day, the weekday (Monday 0), the date as a holiday is
    written (``YYYY-MM-DD``; ``10000-01-01`` past year 9999) and its year."""

    day: int
    minute: int
    weekday: int
    date: str
    year: int


def _wall_clock(when: float, offset: int) -> _Clock | None:
    """The wall clock ``offset`` minutes east of UTC at the send time ``when``; None when ``when``
    is outside the years 1-9999 in UTC (:func:`utc_moment`: a time no command can show, which no
    window's calendar places). The clock is counted in seconds, not read from a ``datetime``, so a
    local date past year 9999 or before year 1 (9999-12-31T23:59:59Z at +08:00 is 10000-01-01 at
    07:59:59) is placed like any other; rounded to the microsecond, half to even, as
    ``datetime.fromtimestamp`` reads a time.

    Example:
        >>> _wall_clock(253402300799.0, 480)  # 9999-12-31T23:59:59Z at +08:00: a Saturday
        _Clock(day=2932897, minute=479, weekday=5, date='10000-01-01', year=10000)
        >>> _wall_clock(-62135596800.0, -300).date, _wall_clock(253402300800.0, 0)  # year 0 local; past 9999 UTC
        ('0000-12-31', None)
    """
    if utc_moment(when) is None:
        return None
    fraction, whole = math.modf(when + offset * 60)
    micro = round(fraction * 1e6)
    seconds = int(whole) + (micro >= 1_000_000) - (micro < 0)
    day, second = divmod(seconds, 86400)
    cycles, inside = divmod(day, _CYCLE_DAYS)
    local = _EPOCH_DAY + timedelta(days=inside)
    year = local.year + 400 * cycles
    return _Clock(day, second // 60, local.weekday(), f"{year:04d}-{local.month:02d}-{local.day:02d}", year)


@dataclass(frozen=True, slots=True)
class _Window:
    start: float
    offset: int  # minutes east of UTC
    hours: tuple[tuple[int, int], ...]  # [start, end) minutes of the local day
    days: frozenset[int]
    holidays: frozenset[str]
    #: The years the holiday list covers: those its dates fall in (none without holidays).
    years: frozenset[int] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "years", frozenset(int(day[:4]) for day in self.holidays))

    def at(self, when: float) -> str:
        clock = _wall_clock(when, self.offset)
        if clock is None:  # a log time past year 9999 in UTC (JavaScript dates reach year 275760)
            return STANDARD
        if clock.weekday not in self.days or clock.date in self.holidays:
            return OFF_PEAK
        return PEAK if any(a <= clock.minute < b for a, b in self.hours) else OFF_PEAK

    def span(self, when: float) -> tuple[float, float]:
        """Send times around ``when`` that :meth:`at` answers alike for (``start <= t < end``):
        ``when``'s local day between the two peak-hour edges around it, less :data:`_EDGE` at
        each end (the wall clock is read rounded to the microsecond); empty when it cannot be read.

        Example:
            >>> w = _Window(0.0, 480, ((540, 720),), frozenset(range(5)), frozenset())
            >>> w.at(1796209398.0), w.span(1796209398.0)  # a Wednesday, 19:03 at +08:00: from 12:00 to midnight
            ('off-peak', (1796184000.001, 1796227199.999))
        """
        clock = _wall_clock(when, self.offset)
        if clock is None:
            return 0.0, 0.0
        midnight = clock.day * 86400 - self.offset * 60  # the local day's start, as a send time
        edges = (0, 24 * 60, *(edge for hours in self.hours for edge in hours))
        start = max(edge for edge in edges if edge <= clock.minute)
        end = min(edge for edge in edges if edge > clock.minute)
        return midnight + start * 60 + _EDGE, midnight + end * 60 - _EDGE

    def unknown_year(self, when: float) -> int | None:
        """The year of ``when``'s local date when the window has holidays and their list does not
        cover that year (:meth:`at` then prices it by the weekday rule alone), else None.

        Example:
            >>> w = _Window(0.0, 480, ((540, 720),), frozenset(range(5)), frozenset({"2026-10-01"}))
            >>> w.years, w.unknown_year(1798732799.0), w.unknown_year(1798732800.0)  # 2026-12-31 15:59:59, 16:00 UTC
            (frozenset({2026}), None, 2027)
        """
        if not self.holidays:
            return None
        clock = _wall_clock(when, self.offset)
        return None if clock is None or clock.year in self.years else clock.year


class _Caveat(str):
    """A caveat's text (:meth:`PriceBook.caveat`): a note, not a warning. Its ``level`` is
    ``"note"``, as :class:`dsh_audit.session.RouteNote`'s, so a command that says warnings once per
    run (the CLI's ``echo_warning``) says it as ``note: TEXT``, once.

    Example:
        >>> text = _Caveat("the deepseek price table lists no holidays of 2028")
        >>> text.level, text == str(text)
        ('note', True)
    """

    __slots__ = ()
    level: ClassVar[str] = "note"


def _caveat(table: str, window: _Window, year: int) -> _Caveat:
    """What a request of ``year`` priced at the peak rate by ``window`` of ``table`` could not know."""
    covered = ", ".join(str(y) for y in sorted(window.years))
    return _Caveat(f"the {table} price table lists no holidays of {year} (its holiday list covers {covered}): "
                   f"requests of {year} are priced by the weekday rule alone, a public holiday at the peak rate; "
                   f'give the holidays of {year} with --prices FILE (the "holidays" of the {table} window)')


def utc_moment(seconds: float) -> datetime | None:
    """``seconds`` since the epoch as an aware UTC datetime, or None outside the years 1-9999
    that ``datetime`` holds (a log's time may be any JavaScript date, up to year 275760)."""
    try:
        return datetime.fromtimestamp(seconds, timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None


def _iso(when: float) -> str:
    moment = utc_moment(when)
    return f"{when:g} s after the epoch" if moment is None else moment.isoformat().replace("+00:00", "Z")
