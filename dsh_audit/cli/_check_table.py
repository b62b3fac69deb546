"""``dsh-audit check``'s listing: a table of the logs checked, each a row, then the findings and the verdict."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import PurePath

from ..gate import CheckResult, SessionCheck, group_findings
from ..report.terminal import (Amount, fit_lines, listing_format, print_status, print_table, rows_fit, short_ids,
                               terminal_text, title_width)
from ._common import echo

__all__ = ["print_check"]

_COLUMNS = ("status", "log", "session", "requests", "capture", "breaks", "hit ratio", "cost", "findings")
# In CSV the cost's unpriced count stands beside it (the cost a plain number, a lower bound when it
# is not 0), and "hit ratio" is the ratio itself, from 0 to 1, as `sessions` and `stats` CSV give it.
_CSV_COLUMNS = (*_COLUMNS[:-1], "unpriced", "findings")
# Left out, in this order, while a narrow terminal cannot show the table with whole words (the
# session id names the log, as `show` and `sessions` take it; --json and --format csv keep every column).
_DROPPABLE = ("log", "capture", "hit ratio", "cost")
# When two logs listed share a session id (copies, fixtures; or have none), the id tells their rows
# apart no more: "log" stays, shown on a narrow terminal as the end of its path no other listed log's
# path ends with (:func:`_path_ends`), and the others go first.
_DROPPABLE_SHARED = _DROPPABLE[1:]
_SHORT_NOTE = "session: shortest unique prefix of its id (--json for whole ids)"
_PATH_NOTE = "log: the end of its path no other log listed ends with (--json for whole paths)"
# The table's short form, tried before a column with a value is left out (print_table).
_SHORT_HEADERS = {"requests": "reqs", "hit ratio": "hit"}
_IDS = ("session",)
_TABLE_LIMIT = 50

def _row(check: SessionCheck, *, csv: bool = False) -> tuple[object, ...]:
    """A log's cells: its cost as ``$x``, ``≥$x`` (some requests unpriced) or ``$?`` (none priced),
    ``-`` when it was not priced; in CSV (``csv``) the exact amount and its unpriced count beside."""
    rows = [r for r in check.captures if not r.pairing.retry]
    capture = "none" if check.capture_path is None else f"{sum(r.verdict == 'identical' for r in rows)}/{len(rows)} identical"
    report = check.cache
    ratio = report.ratio(report.actual_total) if report is not None else None
    cost = check.amount("cost")
    summary = getattr(report, "cost", None) if report is not None else None
    unpriced = summary.get("unpriced_requests") if isinstance(summary, dict) else None
    return ("FAIL" if check.failed else "ok", check.path, check.session_id or "-", len(check.requests), capture,
            sum(t.verdict == "break" for t in check.transitions), Amount(ratio, "n/a" if ratio is None else f"{ratio:.1%}"),
            Amount(None, "-") if cost is None else Amount(*cost),
            *((Amount(unpriced, "-" if unpriced is None else str(unpriced)),) if csv else ()), len(check.findings))


def _fits(rows: Sequence[tuple[object, ...]], *, shared: bool = False) -> bool:
    """Whether whole session ids leave the table on one line a log, on the terminal, as
    :func:`print_table` lays it out (:func:`rows_fit`): no column left out but "log" (the first
    to go; kept, its paths may be cut or wrapped); when logs share an id (``shared``), every
    column kept, "log" with its whole paths."""
    if shared:
        return rows_fit(_COLUMNS, rows, droppable=_DROPPABLE_SHARED, spare=(), short=_SHORT_HEADERS, ids=_IDS)
    return rows_fit(_COLUMNS, rows, droppable=_DROPPABLE, spare=("log",), short=_SHORT_HEADERS, ids=_IDS)


def _path_ends(paths: Sequence[str]) -> list[str]:
    """Each of ``paths`` as its shortest end, in whole parts, that the same number of last parts of
    no other of them is (the whole path when none is shorter: a file listed twice).

    Example:
        >>> _path_ends(["/r/a/x/session.jsonl", "/r/b/x/session.jsonl", "/r/c/y.jsonl", "y.jsonl"])
        ['a/x/session.jsonl', 'b/x/session.jsonl', 'c/y.jsonl', 'y.jsonl']
    """
    parts = [PurePath(path).parts for path in paths]
    found: list[str | None] = [None] * len(paths)
    for n in range(1, max((len(p) for p in parts), default=0) + 1):
        ends = Counter(p[-n:] for p in parts)
        for k, mine in enumerate(parts):
            if found[k] is None and (ends[mine[-n:]] == 1 or n >= len(mine)):
                found[k] = str(PurePath(*mine[-n:]))
    return [end if end is not None else path for end, path in zip(found, paths)]


def _narrowed(rows: list[tuple[object, ...]], shown: Sequence[SessionCheck]
              ) -> tuple[list[tuple[object, ...]], tuple[str, ...], list[str]]:
    """The table's rows on a terminal, the columns it may leave out and the captions that say how
    its cells were shortened: when whole ids do not fit (:func:`_fits`), each id as its shortest
    unique prefix (as `sessions` shows ids on a narrow terminal) and, when two logs share an id,
    each path as its distinguishing end (:func:`_path_ends`), "log" then kept: a row is always told
    from the others."""
    shared = len({s.session_id for s in shown}) < len(shown)
    droppable = _DROPPABLE_SHARED if shared else _DROPPABLE
    if _fits(rows, shared=shared):
        return rows, droppable, []
    names = short_ids(s.session_id for s in shown if s.session_id)
    paths = _path_ends([s.path for s in shown]) if shared else [s.path for s in shown]
    captions = [_SHORT_NOTE] if any(names[i] != i for i in names) else []
    captions += [_PATH_NOTE] if shared and paths != [s.path for s in shown] else []
    return ([(row[0], path, names.get(s.session_id or "", "-"), *row[3:]) for row, s, path in zip(rows, shown, paths)],
            droppable, captions)


def _wrap_width() -> int | None:
    """The width the findings' lines wrap to under the table: a terminal's (a pager's), or
    ``COLUMNS`` when piped, as the table's; None, each line whole, when piped with no ``COLUMNS``
    (a CI log: a line per finding, for grep) and beside a CSV or Markdown listing."""
    return title_width() if listing_format() == "table" else None


def print_check(result: CheckResult) -> None:
    """The run's table of logs (on a narrow terminal shortened as :func:`_narrowed` says; the
    failing logs alone past :data:`_TABLE_LIMIT`), then its findings and its verdict."""
    shown = result.sessions if len(result.sessions) <= _TABLE_LIMIT else [s for s in result.sessions if s.failed]
    if shown:
        csv = listing_format() == "csv"
        rows = [_row(s, csv=csv) for s in shown]
        captions = [] if len(shown) == len(result.sessions) else [
            f"{len(result.sessions) - len(shown)} passing log(s) not listed"]
        droppable: tuple[str, ...] = _DROPPABLE
        least = None
        if listing_format() == "table":
            rows, droppable, shortened = _narrowed(rows, shown)
            captions += shortened
            # a log's path (its distinguishing end, when ids do not tell logs apart) whole, or left out:
            # a path cut in its middle cannot be copied, and two cut alike would read the same
            least = {"log": max(len(terminal_text(str(row[1]))) for row in rows)}
        print_table("dsh-audit check", _CSV_COLUMNS if csv else _COLUMNS, rows, caption="; ".join(captions) or None,
                    droppable=droppable, short=_SHORT_HEADERS, ids=_IDS, least=least)
    width = _wrap_width()
    for group in group_findings(f for f in result.findings if f.fails or f.severity != "info"):
        for line in [group.format()] if width is None else fit_lines(group.format(), width):
            echo(line)
    counts = result.counts()
    baselined = "" if result.baseline is None else f", {counts['baselined']} baselined"
    status = (f"{'PASSED' if result.passed else 'FAILED'}: {len(result.sessions)} log(s), {result.request_count} "
              f"request(s), {counts['error']} error(s), {counts['warning']} warning(s), {counts['info']} info, "
              f"{counts['failing']} failing{baselined} (policy: {result.policy.source})")
    # wrapped here, at spaces, as the findings are: rich's own wrap would end a line with its space
    for line in [status] if width is None else fit_lines(status, width, hanging=0):
        print_status(line, ok=result.passed)
