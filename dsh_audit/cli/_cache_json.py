"""``dsh-audit cache --json``: each session's object on one line, its timeline written as it is
made (:func:`write_json`), from the report's verdicts or from the entries spooled while a log was
judged (:class:`Timelines`)."""

from __future__ import annotations

from itertools import islice

import click

from .._spool import LineSpool
from ..cache import CacheVerdict, SessionCacheReport
from ..report import dumps_line

__all__ = ["Timelines", "write_json"]


class Timelines:
    """Each log's timeline entries, as JSON, spooled as its verdicts are judged
    (:class:`~dsh_audit._spool.LineSpool`): a log accounted while it is replayed keeps no
    verdict, and its line is written from here."""

    def __init__(self) -> None:
        self._spools: dict[str, LineSpool] = {}

    def add(self, path: str, verdict: CacheVerdict) -> None:
        spool = self._spools.get(path)
        if spool is None:
            spool = self._spools[path] = LineSpool()
        spool.append(dumps_line(verdict.to_json()))

    def pop(self, path: str) -> LineSpool | None:
        """The log's entries, in judging order, read once (None: none were spooled)."""
        return self._spools.pop(path, None)

    def discard(self, path: str) -> None:
        spool = self._spools.pop(path, None)
        if spool is not None:
            spool.close()


def write_json(report: SessionCacheReport, spooled: LineSpool | None = None, batch: int = 512) -> None:
    """``dumps_line(report.to_json())`` and a newline, written as it is made: the timeline (one
    entry per request, the bulk of a long session's line) a batch of entries at a time, never
    the whole line in memory, from the report's verdicts or, when they were not kept, from
    ``spooled`` (:class:`Timelines`). The same bytes (``timeline`` is the object's last key)."""
    head = dumps_line(report.to_json(timeline=False))
    click.echo(head[:-1] + ',"timeline":[', nl=False)
    if spooled is not None and report.verdicts:
        spooled.close()  # the report kept its verdicts
    entries = iter(spooled) if spooled is not None and not report.verdicts else (dumps_line(v.to_json())
                                                                                  for v in report.verdicts)
    first = True
    for chunk in iter(lambda: list(islice(entries, batch)), []):
        click.echo(("" if first else ",") + ",".join(chunk), nl=False)
        first = False
    click.echo("]}")

