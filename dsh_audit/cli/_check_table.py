"""``dsh-audit check``'s listing: a table of the logs checked, each a row, then the findings and the verdict."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from ..gate import CheckResult, Finding, SessionCheck, group_findings
from ..report.terminal import (Amount, fit_lines, id_prefixes, listing_format, print_status, print_table, rows_fit,
                               short_ids, terminal_text, title_width)
from ._common import echo
from ._output import COUNT_SHORT
from ._table_ids import id_caption, id_cell, id_names, widest

__all__ = ["print_check"]

_COLUMNS = ("status", "log", "session", "requests", "capture", "breaks", "hit ratio", "cost", "findings")
# In CSV the cost's unpriced count stands beside it (the cost a plain number, a lower bound when it
# is not 0), and "hit ratio" is the ratio itself, from 0 to 1, as `sessions` and `stats` CSV give it.
_CSV_COLUMNS = (*_COLUMNS[:-1], "unpriced", "findings")
# Left out, in this order, while a narrow terminal cannot show the table with whole words (--json and
# --format csv keep every column). "log" is never left out: a row is always told from the others, and
# its log's path is never cut (:func:`_narrowed`: whole, or a number and the whole path on its own line).
_DROPPABLE = ("capture", "hit ratio", "cost")
# The table's short form (:func:`print_table`'s ``short``): `sessions`' words, and the counts' headers
# shortened to their cells' width, so that 80 columns show the capture's verdict (a 4-log run too)
# before a narrow terminal leaves a column out.
_SHORT = {**COUNT_SHORT, "breaks": "brks", "findings": "finds"}
_SHORT_NOTE = id_caption("session", whose="its id")
_TABLE_LIMIT = 50
# Under the table only the verdict starts a line with its word: a path on a line of its own and
# every wrapped line's rest are indented (a folder named "FAILED: 9 log(s), …" reads as no verdict).
_INDENT = "  "
_VERDICTS = ("PASSED", "FAILED", "INCOMPLETE")
# A log's status cell (:attr:`SessionCheck.status`): "unread" no wider than its header, and no pass.
_STATUS = {"failed": "FAIL", "unreadable": "unread", "ok": "ok"}

def _row(check: SessionCheck, *, csv: bool = False) -> tuple[object, ...]:
    """A log's cells: its cost as ``$x``, ``≥$x`` (some requests unpriced) or ``$?`` (none priced),
    ``-`` when it was not priced; in CSV (``csv``) the exact amount and its unpriced count beside."""
    report = check.cache
    ratio = report.ratio(report.actual_total) if report is not None else None
    cost = check.amount("cost")
    summary = getattr(report, "cost", None) if report is not None else None
    unpriced = summary.get("unpriced_requests") if isinstance(summary, dict) else None
    return (_STATUS[check.status], check.path, id_cell(check.session_id), len(check.requests), check.capture_cell,
            sum(t.verdict == "break" for t in check.transitions), Amount(ratio, "n/a" if ratio is None else f"{ratio:.1%}"),
            Amount(None, "-") if cost is None else Amount(*cost),
            *((Amount(unpriced, "-" if unpriced is None else str(unpriced)),) if csv else ()), check.finding_count)


def _fits(columns: Sequence[str], rows: Sequence[tuple[object, ...]], *, short: bool = True) -> bool:
    """Whether the table shows every cell of ``rows`` whole, each on one line, on the terminal, as
    :func:`print_table` lays it out (:func:`rows_fit`): no column with a value left out; without
    ``short``, with every header in its own words too (none in :data:`_SHORT`'s short form)."""
    return rows_fit(columns, rows, droppable=_DROPPABLE, spare=(), short=_SHORT if short else None)


#: A layout's rows, their captions and whether every header shows in its own words there
#: (:func:`_fits` without ``short``, measured once: :func:`print_check` hands print_table no short form then).
_Laid = tuple[list[tuple[object, ...]], list[str], bool]


def _narrowed(rows: list[tuple[object, ...]], shown: Sequence[SessionCheck]) -> tuple[
        tuple[str, ...], list[tuple[object, ...]], list[str], list[tuple[str, str]], dict[str, str] | None]:
    """The table's columns and rows on a terminal, the captions that say how its cells were
    shortened, the logs it names by number (``("log 1:", PATH)``), each said under it, and the
    short headers print_table may use (None when every header fits in its own words). The
    first that shows every cell whole (:func:`_fits`): the rows as they are; each session id as
    its shortest unique prefix (:func:`id_prefixes`, as every table cuts one; the caption says
    so, and `show` takes it); each log as its
    number, 1 up (one log: no "log" column), the ids whole; both. The headers keep their own words
    while the ids are cut (``requests``, not ``reqs``): an id is shortened before a header is (the
    first two tried with whole headers only). Each numbered log is named under
    the table, ``log 1: PATH`` (one log: ``log: PATH``), its path whole, on a line of its own when
    the terminal is narrower: a path cut cannot be copied, and two cut alike would read the same.
    Failing all, both, the table leaving out what it must of :data:`_DROPPABLE` (:func:`_last`)."""
    prefixed = _with_ids(rows, shown, id_names((s.session_id for s in shown), id_prefixes))
    columns: tuple[str, ...] = _COLUMNS
    found = _fitting(columns, lambda cut: list(cut), rows, prefixed)
    paths: list[tuple[str, str]] = []
    if found is None and len(shown) == 1:  # the one log: named under the table, no column of numbers for it
        columns = (_COLUMNS[0], *_COLUMNS[2:])
        paths = [("log:", shown[0].path)]
        found = _fitting(columns, one := lambda cut: [(row[0], *row[2:]) for row in cut], rows, prefixed)
        found = found or _last(columns, one, prefixed, rows, shown)
    elif found is None:
        paths = [(f"log {k}:", s.path) for k, s in enumerate(shown, 1)]
        found = _fitting(columns, numbered := lambda cut: [(row[0], str(k), *row[2:]) for k, row in enumerate(cut, 1)],
                         rows, prefixed)
        found = found or _last(columns, numbered, prefixed, rows, shown)
    laid, captions, whole = found
    return columns, laid, captions, paths, None if whole else _SHORT


def _fitting(columns: tuple[str, ...], arrange: Callable[[Sequence[tuple[object, ...]]], list[tuple[object, ...]]],
             rows: Sequence[tuple[object, ...]], prefixed: tuple[list[tuple[object, ...]], list[str]]) -> _Laid | None:
    """The rows (``arrange``d: as they are, logs numbered, or no log column), their captions and
    whether the headers are whole in the first layout that shows every cell whole (:func:`_fits`):
    the ids whole under whole headers, else each id its shortest unique prefix (``prefixed``, with
    its caption) under whole headers, then under short ones (:data:`_SHORT`: a header is shortened
    after an id is); None when none does."""
    if _fits(columns, whole := arrange(rows), short=False):
        return whole, [], True
    cut = arrange(prefixed[0])
    if _fits(columns, cut, short=False):
        return cut, prefixed[1], True
    return (cut, prefixed[1], False) if _fits(columns, cut) else None


def _with_ids(rows: Sequence[tuple[object, ...]], shown: Sequence[SessionCheck], names: dict[str, str]
              ) -> tuple[list[tuple[object, ...]], list[str]]:
    """``rows`` with each session id as ``names`` shows it, and the caption saying so when one is shortened."""
    cut = [(*row[:2], id_cell(s.session_id, names), *row[3:]) for row, s in zip(rows, shown)]
    return cut, [_SHORT_NOTE] if any(names[i] != i for i in names) else []


def _last(columns: tuple[str, ...], arrange: Callable[[Sequence[tuple[object, ...]]], list[tuple[object, ...]]],
          prefixed: tuple[list[tuple[object, ...]], list[str]], rows: Sequence[tuple[object, ...]],
          shown: Sequence[SessionCheck]) -> _Laid:
    """The rows (``arrange``d: logs numbered, or no log column) when no layout shows every cell
    whole: ``prefixed`` (the ``rows`` with each id its shortest unique prefix, and their caption,
    as :func:`_narrowed` made them) while that leaves a table (columns left out; not under whole
    headers, as :func:`_fitting` found), else, a block of lines a row with a line's room for an id,
    each id whole but for a UUID's cut (as `sessions` shows such a block: :func:`short_ids`)."""
    short, captions = prefixed
    arranged = arrange(short)
    if rows_fit(columns, arranged, droppable=_DROPPABLE, spare=_DROPPABLE, short=_SHORT):
        return arranged, captions, False
    short, captions = _with_ids(rows, shown, id_names((s.session_id for s in shown), short_ids))
    arranged = arrange(short)
    return arranged, captions, _fits(columns, arranged, short=False)


def _wrap_width() -> int | None:
    """The width the findings' lines wrap to under the table: a terminal's (a pager's), or
    ``COLUMNS`` when piped, as the table's; None, each line whole, when piped with no ``COLUMNS``
    (a CI log: a line per finding, for grep) and beside a CSV or Markdown listing."""
    return title_width() if listing_format() == "table" else None


def _alike(finding: Finding) -> tuple[str, str, str | None] | None:
    """What an info finding that passes says of a whole log (no line, seq nor request: DSH810, no
    capture), to say it once for every log it is said of; None for any other finding."""
    if finding.severity != "info" or finding.fails or finding.line is not None or finding.seq is not None \
            or finding.request is not None:
        return None
    return finding.verdict, finding.message, finding.hint


#: The most logs a merged info line names (past it, how many, and where the table says which).
_NAMED_LOGS = 3


def _listed(findings: Sequence[Finding], *, nones: int = 0) -> list[str]:
    """The lines under the table: every finding the "findings" column counts, info too, as the
    Markdown summary and the HTML report list them (a new-user tour: "finds 1" with nothing listed
    sent the reader to --json), the failing ones first and the merged info lines last, in the
    Markdown summary's order (a line a log, first, buried the failures among them). The same of
    several requests of a log is one line (:func:`group_findings`); an info finding that passes said
    alike of several logs is one line counting them, naming them when there are few
    (:data:`_NAMED_LOGS`), else sending the reader to the "capture" column only when it says
    exactly which (``nones``: the logs it shows with none; 0 when it is not shown for every log).

    Example:
        >>> none = [Finding("DSH810", "info", "no capture", f"{name}.jsonl", hint="pass --capture") for name in "abcd"]
        >>> for line in _listed([none[0], Finding("DSH811", "error", "differs", "a.jsonl", fails=True), none[1]]):
        ...     print(line)
        a.jsonl: DSH811 error (fails the gate: capture-fail): differs
        DSH810 info: 2 logs (a.jsonl, b.jsonl): no capture (hint: pass --capture)
        >>> print(*_listed(none, nones=4), *_listed(none, nones=5), sep="\\n")
        DSH810 info: 4 logs (the capture column says which): no capture (hint: pass --capture)
        DSH810 info: 4 logs: no capture (hint: pass --capture)
        >>> _listed(none[:1])
        ['a.jsonl: DSH810 info: no capture (hint: pass --capture)']
    """
    logs: dict[tuple[str, str, str | None], list[str]] = {}
    for finding in findings:
        key = _alike(finding)
        if key is not None:
            logs.setdefault(key, []).append(finding.path)
    failing: list[str] = []
    passing: list[str] = []
    for group in group_findings(findings):
        key = _alike(group.findings[0]) if len(group.findings) == 1 else None
        if key is None or len(logs[key]) == 1:
            (failing if any(f.fails for f in group.findings) else passing).append(group.format())
    return [*failing, *passing, *(_merged(key, paths, nones) for key, paths in logs.items() if len(paths) > 1)]


def _unforged(finding: Finding) -> Finding:
    """``finding`` with its path as ``./PATH`` when it starts with a verdict's word (a folder named
    ``FAILED: 9 log(s), …``): its line under the table, at column 0, would read as the verdict; the
    same file, a path still copied as it is (one starting so is relative).

    Example:
        >>> _unforged(Finding("DSH810", "info", "no capture", "FAILED: 9 log(s)/a.jsonl")).path
        './FAILED: 9 log(s)/a.jsonl'
        >>> _unforged(Finding("DSH810", "info", "no capture", "logs/a.jsonl")).path
        'logs/a.jsonl'
    """
    if not finding.path.startswith(_VERDICTS):
        return finding
    return replace(finding, path=f"./{finding.path}")


def _merged(key: tuple[str, str, str | None], paths: Sequence[str], nones: int) -> str:
    """The one line of an info finding said alike of the logs at ``paths`` (:func:`_listed`)."""
    verdict, message, hint = key
    which = (f" ({', '.join(paths)})" if len(paths) <= _NAMED_LOGS
             else " (the capture column says which)" if len(paths) == nones else "")
    return f"{verdict}: {len(paths)} logs{which}: {message}" + (f" (hint: {hint})" if hint else "")


def _capture_shown(columns: Sequence[str], rows: Sequence[tuple[object, ...]], short: dict[str, str] | None) -> bool:
    """Whether the table shows its "capture" column: always in CSV and Markdown, on a terminal when
    it lays the rows out on a line each without leaving it out (:func:`rows_fit`; else it may have
    gone, and no line under the table sends the reader to it)."""
    return listing_format() != "table" or "capture" in columns and rows_fit(
        columns, rows, droppable=_DROPPABLE, spare=[c for c in _DROPPABLE if c != "capture"], short=short)


def print_check(result: CheckResult, *, after: str = "") -> None:
    """The run's table of logs (on a narrow terminal shortened as :func:`_narrowed` says; the
    failing and unread logs alone past :data:`_TABLE_LIMIT`), then its findings and its verdict, ``after``
    ending it (what the run left out: another agent's logs, which no finding counts)."""
    shown = (result.sessions if len(result.sessions) <= _TABLE_LIMIT
             else [s for s in result.sessions if s.status != "ok"])
    width = _wrap_width()
    nones = 0  # the logs the capture column shows with none, when it is shown for every log
    if shown:
        csv = listing_format() == "csv"
        rows = [_row(s, csv=csv) for s in shown]
        captions = [] if len(shown) == len(result.sessions) else [
            f"{len(result.sessions) - len(shown)} passing log(s) not listed"]
        columns: tuple[str, ...] = _CSV_COLUMNS if csv else _COLUMNS
        least, paths = None, list[tuple[str, str]]()
        short: dict[str, str] | None = _SHORT
        if listing_format() == "table":
            columns, rows, shortened, paths, short = _narrowed(rows, shown)  # whole headers when they fit
            captions += shortened
            # a log's path whole (else its number, the path whole under the table): never cut
            # an id as wide as its widest (a middle cut names no session): a column is left out for it first
            least = {"session": widest(row[2] for row in rows),
                     **({"log": widest(row[1] for row in rows)} if "log" in columns else {})}
        if len(shown) == len(result.sessions) and _capture_shown(columns, rows, short):
            nones = sum(s.capture_cell == "none" for s in shown)  # an unreadable one is no DSH810 "none"
        print_table("dsh-audit check", columns, rows, caption="; ".join(captions) or None,
                    droppable=_DROPPABLE, short=short, least=least, ids=("session",))
        for name, path in paths:  # "log 1: PATH", else "log 1:" and the path whole on a line of its own, indented
            line = f"{name} {path}"
            for said in [line] if width is None or len(terminal_text(line)) <= width else [name, _INDENT + path]:
                echo(said)
    # a log's path or message escaped whole: a newline in it breaks no line; a path wider than the
    # line stands whole on its own (the terminal wraps it): folded at a "/", it is copied as two
    whole = {terminal_text(f.path) for f in result.findings if f.path}
    for said in _listed([_unforged(f) for f in result.findings], nones=nones):
        for line in [said] if width is None else fit_lines(terminal_text(said), width, whole=whole):
            echo(line)
    counts = result.counts()
    baselined = "" if result.baseline is None else f", {counts['baselined']} baselined"
    status = (f"{result.verdict}: {len(result.sessions)} log(s), {result.request_count} "
              f"request(s), {counts['error']} error(s), {counts['warning']} warning(s), {counts['info']} info, "
              f"{counts['failing']} failing{baselined} (policy: {result.policy.source}){after}")
    # wrapped here, at spaces, as the findings are (its rest indented as theirs: only the verdict
    # starts a line with its word): rich's own wrap would end a line with its space
    for line in [status] if width is None else fit_lines(terminal_text(status), width, hanging=len(_INDENT)):
        print_status(line, ok=result.verdict == "PASSED")
