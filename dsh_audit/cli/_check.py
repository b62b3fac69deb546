"""``dsh-audit check`` (the CI gate) and ``dsh-audit report`` (the HTML forensics page)."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

import click

from .. import report as reports
from ..cache import load_prices
from ..errors import UsageError
from ..gate import CheckResult, RequestRecorder, SessionCheck, find_capture, group_findings, load_policy, run_check
from ..log import ProtectedInputs
from ..report import SessionPages, iter_html
from ..report.terminal import (Amount, fit_lines, listing_format, page_listing, print_status, print_table,
                               progress_callback, rows_fit, short_ids, title_width)
from ._check_files import (_distinct_reports, _format_flag, _format_target, _markdown_is_step_summary,
                           _no_old_json_file, _step_summary, _step_summary_target)
from ._check_options import (_baseline, _baseline_options, _one_baseline, _policy_option, _protect_baseline,
                             _session_options, _typed_adapter, _with_baseline)
from ._priced import echo_capture_use
from ._common import EXIT_BAD_INPUT, EXIT_FINDINGS, EXIT_OK, echo, echo_caveats, echo_error, echo_note, echo_warning
from ._logs import evidence_logs, newest_first, selected_logs, session_paths
from ._options import capture_option, listing_options, stated_zdr
from ._output import STDOUT, output_help, stdout_target, write_output

if TYPE_CHECKING:
    from ..cache import PriceBook

# check's formatters are read through the package's lazy names (``reports.iter_junit``) when their
# report is written, so a run loads only those it writes (issue 11: start-up).
__all__ = ["check_command", "report_command"]

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
# The room the "log" column keeps while another column can be left out, when logs share an id.
_PATH_ROOM = 32
_PATH_NOTE = "log: the end of its path no other log listed ends with (--json for whole paths)"
# The table's short form, tried before a column with a value is left out (print_table).
_SHORT_HEADERS = {"requests": "reqs", "hit ratio": "hit"}
_IDS = ("session",)
_TABLE_LIMIT = 50
_FORMAT_FLAGS = ("--json", "--format json", "--format markdown")  # report options that take no FILE


def _run(paths: Sequence[str], *, capture: str | None, policy: Any, lenient: bool, max_version: int, jobs: int,
         engine: str, scheduler: str | None, routes: str | None, prices_path: str | None, openai_zdr: bool | None,
         outline: bool = False, record: Callable[[], RequestRecorder] | None = None,
         lean: bool = False) -> tuple[CheckResult, PriceBook]:
    """:func:`dsh_audit.gate.run_check` with a progress bar on a terminal, and the price table it
    priced with: loaded once, here (a bad price file or pyproject.toml value is one error before
    any log is read), holding the caveats of its prices after the run."""
    prices = load_prices(prices_path)
    zdr = stated_zdr(openai_zdr)
    with progress_callback(max(2, len(paths)), label="checking") as report:
        result = run_check(paths, captures=capture, policy=policy, lenient=lenient, max_version=max_version,
                           progress=report, jobs=jobs, engine=engine, scheduler=scheduler, routes=routes,
                           outline=outline, record=record, lean=lean, prices=prices, zero_data_retention=zdr)
    return result, prices


def _in_window(paths: Sequence[str], since: float | None, until: float | None, *, gate: bool) -> Sequence[str]:
    """``paths`` as given when no window is set and ``gate`` (a folder without logs is then
    :func:`dsh_audit.gate.run_check`'s error), else the logs under them whose own timestamps fall
    in ``[since, until)`` (:func:`selected_logs`, which notes on stderr what it left out).

    Raises:
        UsageError: ``gate`` and the window leaves no log (a gate that checked nothing does not pass).
    """
    if gate and since is None and until is None:
        return paths
    return [str(log) for log in selected_logs(paths, since, until, gate=gate)]


def _protected(paths: Sequence[str], *inputs: str | None) -> ProtectedInputs:
    """Every log under ``paths`` (:func:`evidence_logs`), the captures beside them and the other
    ``inputs``: never written."""
    logs = evidence_logs(paths)
    return ProtectedInputs.of(logs, files=[*inputs, *(find_capture(log) for log in logs)])


def _echo_discovered(result: CheckResult, *, windowed: bool) -> None:
    """Discovery's notes (which file of a session was read) on stderr, unless a window was set
    (``windowed``: :func:`selected_logs` printed them then); then the run's warnings and what the
    capture priced, as usage and cache say it."""
    for note in () if windowed else result.discovered:
        echo_note(note)
    for warning in result.warnings:
        echo_warning(warning)
    echo_capture_use(getattr(s.cache, "cost", None) for s in result.sessions)


def _write(path: str | None, text: str | Iterable[str]) -> None:
    write_output(path, text, what="report")


def _guard(protected: ProtectedInputs, path: str | None, *, what: str) -> None:
    if path != STDOUT:
        protected.guard(path, what=what)


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


def _in_order(result: CheckResult, given: Sequence[str]) -> CheckResult:
    """``result`` with its logs, and their findings, in the order of :func:`newest_first`, the
    order of every output of the run (the table, CSV, the JSON report, Markdown, JUnit, SARIF):
    with no PATHS (``given`` empty) newest first by the log file's modification time, else those
    of each of the PATHS ``given`` in the order given, each one's by path. Findings of no log
    (captures no log explains) stay last."""
    by_log = {Path(check.path): check for check in result.sessions}
    if len(by_log) != len(result.sessions):  # one file checked twice: the order found
        return result
    sessions = tuple(by_log[log] for log in newest_first(by_log, given))
    return replace(result, sessions=sessions,
                   findings=(*(f for check in sessions for f in check.findings), *result.unattached))


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


def _print(result: CheckResult) -> None:
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
            # a log's distinguishing path end whole while a column can go for it (their ids do not tell them apart)
            least = None if "log" in droppable else {"log": _PATH_ROOM}
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


@click.command("check")
@click.argument("paths", nargs=-1, type=click.Path(readable=False))
@capture_option
@_policy_option
@click.option("--junit", "junit_path", metavar="FILE", type=click.Path(dir_okay=False),
              help=output_help("a JUnit XML report"))
@click.option("--sarif", "sarif_path", metavar="FILE", type=click.Path(dir_okay=False),
              help=output_help("a SARIF 2.1.0 report"))
@click.option("--json-report", "json_path", metavar="FILE", type=click.Path(dir_okay=False),
              help=output_help("the JSON report (docs/report-schema.json)"))
@click.option("--markdown", "markdown_path", metavar="FILE", type=click.Path(dir_okay=False),
              help=output_help("a Markdown summary"))
@_baseline_options
@listing_options(formats_help="json (--json) prints the JSON report (as --json-report -), markdown the "
                              "Markdown summary (--markdown -); csv puts the findings and the verdict on stderr",
                 json_help="The JSON report (docs/report-schema.json) on stdout: one indented JSON object, "
                           "as --json-report - writes it")
@_session_options
def check_command(paths: tuple[str, ...], capture: str | None, policy_path: str | None, junit_path: str | None,
                  sarif_path: str | None, json_path: str | None, markdown_path: str | None,
                  baseline_path: str | None, no_baseline: bool, as_json: bool,
                  adapter: str, routes: str | None, prices_path: str | None, openai_zdr: bool | None, lenient: bool,
                  max_version: int, jobs: int, since: float | None, until: float | None, engine: str,
                  scheduler: str | None) -> int:
    """Gate a build on session logs: validate, rebuild, compare, attribute, account.

    Every log under PATHS (default $DSH_HOME/sessions; a session id, a unique id prefix or
    `latest` is looked up there; --since/--until keep those active in a window, by the logs' own
    timestamps) is validated, its requests are rebuilt and compared byte for byte with
    a capture (--capture, or a wire.jsonl found beside the log), every prefix-cache break is
    attributed and cache reads are accounted for. The policy (--policy, or [tool.dsh-audit] in
    pyproject.toml; see docs/ci.md) says which findings fail. Exit 0 when none fails, 1 when one
    does, 2 on bad input or usage, and when there is nothing to check (no log under PATHS, or none
    in the --since/--until window: a gate that checked nothing does not pass). The table, and every
    report of the run, lists the logs newest
    first by the log file's modification time when no PATH is given (equal ones by path; ordering
    reads no log), else the PATHS in the order given, each one's logs by path (`sessions` orders by
    the logs' own timestamps). Its "hit ratio" is the share of prompt tokens read from the cache
    (--format csv: the ratio from 0 to 1), "cost" what the session cost at list prices ("≥$x" a lower
    bound when some requests could not be priced, "$?" when none could; --format csv: the amount,
    its unpriced count beside); a narrow terminal shows each session id as its shortest unique prefix and
    leaves out "log", then "capture", then "hit ratio", then "cost" (when two logs listed share a session
    id, "log" stays, each path shown as the end that tells it from the others'). A baseline file the policy
    names that does not exist yet is not read when --json-report writes it: that run writes the
    first baseline. With GITHUB_STEP_SUMMARY set, the Markdown summary is appended
    to it (once, when --markdown names that file too: the earlier steps' summaries are kept). A report FILE of '-' goes to stdout instead of the table (one report at most).

    \b
    Example:
        dsh-audit check recorded/ --sarif dsh.sarif --junit dsh-junit.xml
        dsh-audit check recorded/ --json | jq .counts
    """
    fmt = listing_format()
    if as_json:
        _no_old_json_file(paths)
    typed = {"--junit": junit_path, "--sarif": sarif_path, "--json-report": json_path, "--markdown": markdown_path}
    if fmt in ("json", "markdown"):
        flag = _format_flag(fmt)
        option = "--json-report" if fmt == "json" else "--markdown"
        stdout = _format_target(flag, option, typed.pop(option))
        json_path, markdown_path = (stdout, markdown_path) if fmt == "json" else (json_path, stdout)
        typed[flag] = stdout
    piped = stdout_target({name if name in _FORMAT_FLAGS else f"{name} {path}": path for name, path in typed.items()})
    _distinct_reports(typed)
    given, paths = paths, session_paths(paths)
    protected = _protected(paths, capture, policy_path, routes, prices_path)
    _guard(protected, json_path, what="JSON report")  # it may replace the baseline it was given (docs/ci.md)
    policy = _typed_adapter(load_policy(policy_path), adapter)
    baseline_path, no_baseline = _one_baseline(baseline_path, no_baseline)
    _protect_baseline(protected, baseline_path, off=no_baseline, policy=policy)
    for target, what in ((junit_path, "JUnit report"), (sarif_path, "SARIF report"),
                         (markdown_path, "Markdown summary")):
        _guard(protected, target, what=what)
    summary = _step_summary_target()
    if summary is not None and protected.input_at(summary) is not None:  # else a failed append is a warning
        raise UsageError(f"the GITHUB_STEP_SUMMARY would overwrite the input {protected.input_at(summary)}",
                         path=summary, hint="write it to another path")
    baseline = _baseline(baseline_path, off=no_baseline, policy=policy, writes=json_path)
    result, prices = _run(_in_window(paths, since, until, gate=True), capture=capture, policy=policy,
                          lenient=lenient, max_version=max_version, jobs=jobs, engine=engine, scheduler=scheduler,
                          routes=routes, prices_path=prices_path, openai_zdr=openai_zdr, outline=True,
                          lean=True)  # no report of check shows a request's messages, verdict or extension
    result = _with_baseline(_in_order(result, paths if given else ()), baseline)  # no PATHS: newest first
    _echo_discovered(result, windowed=since is not None or until is not None)
    for check in result.sessions:  # a log not a line of which could be read: said as every command says it
        if check.unreadable and check.error is not None:
            echo_error(check.error)
    echo_caveats(prices)  # what the table could not know of the costs the reports show
    markdown = reports.format_markdown(result)  # with the caveats of the prices it shows
    # each report made only when asked for; JUnit's one testcase per request is written as made
    if junit_path is not None:
        _write(junit_path, reports.iter_junit(result))
    if sarif_path is not None:
        _write(sarif_path, reports.format_sarif(result, base=os.getcwd()))
    if json_path is not None:
        _write(json_path, reports.format_json(result))
    if fmt == "markdown":
        page_listing()  # the summary is this run's listing: paged on a terminal like any other
    if _markdown_is_step_summary(markdown_path):
        echo_note(f"--markdown {markdown_path} is GITHUB_STEP_SUMMARY: the summary is appended to it once, "
                  "after the earlier steps' summaries")
    else:
        _write(markdown_path, markdown)
    _step_summary(markdown)
    if piped is None:
        _print(result)
    return EXIT_OK if result.passed else EXIT_FINDINGS


def _verdict(result: CheckResult) -> str:
    """What ``report`` says the check of its page found, in check's words (``check passed``, ``1
    failing finding(s)``, and with a baseline ``, 3 baselined``)."""
    if not result.sessions:
        return "no log to check"
    baselined = "" if result.baseline is None else f", {len(result.baselined)} baselined"
    return ("check passed" if result.passed else f"{len(result.failing)} failing finding(s)") + baselined


@click.command("report")
@click.argument("paths", nargs=-1, type=click.Path(readable=False))
@capture_option
@_policy_option
@click.option("-o", "--output", metavar="FILE", type=click.Path(dir_okay=False), default="dsh-audit-report.html",
              show_default=True, help=output_help("the HTML page"))
@_baseline_options
@_session_options
def report_command(paths: tuple[str, ...], capture: str | None, policy_path: str | None, output: str,
                   baseline_path: str | None, no_baseline: bool, adapter: str, routes: str | None,
                   prices_path: str | None, openai_zdr: bool | None, lenient: bool, max_version: int, jobs: int,
                   since: float | None, until: float | None, engine: str, scheduler: str | None) -> int:
    """Write one self-contained HTML forensics page for session logs (default $DSH_HOME/sessions;
    --since/--until keep those active in a window, by the logs' own timestamps).

    PATHS may be log files, session folders, a sessions root, or a session id, a unique id prefix
    or `latest` (looked up under $DSH_HOME/sessions).

    The page (no network, no external files) shows each log's summary (models, requests, breaks
    by cause, cache-hit ratio, what the session and its breaks cost), its request timeline with
    bars for prompt size, expected and actual cache reads, marks every prefix-cache break with
    its cause and evidence events, filters requests by the text of their messages, and opens any
    request: its cost, messages, header, the diff against the previous request and against the
    captured body. PAGE.html#request-N and #break-N open request N. Findings are judged as `check`
    judges them: by the policy and its baseline (--baseline, --no-baseline), the findings the
    baseline accepts shown as baselined. Exit 0 when written (use
    `check` to gate; a folder or --since/--until window with no log gives a page with none, and a
    note), 2 on bad input or when a log cannot be read (the page is still written, with that
    log's error in it, and the error is printed).

    \b
    Example:
        dsh-audit report ~/.dsh/sessions/--home-me-proj--/session-1 -o report.html
    """
    paths = session_paths(paths)
    protected = _protected(paths, capture, policy_path, routes, prices_path)
    policy = _typed_adapter(load_policy(policy_path), adapter)
    baseline_path, no_baseline = _one_baseline(baseline_path, no_baseline)
    _protect_baseline(protected, baseline_path, off=no_baseline, policy=policy)
    _guard(protected, output, what="HTML report")
    baseline = _baseline(baseline_path, off=no_baseline, policy=policy)
    logs = _in_window(paths, since, until, gate=False)  # nothing in the window or the folders: an empty page
    # a log checked while it is replayed has its page data made as it goes (spooled to a temporary file)
    result, prices = _run(logs, capture=capture, policy=policy, lenient=lenient, max_version=max_version, jobs=jobs,
                          engine=engine, scheduler=scheduler, routes=routes, prices_path=prices_path,
                          openai_zdr=openai_zdr, record=SessionPages()) if logs else \
        (CheckResult(sessions=(), findings=(), policy=policy), load_prices(prices_path))
    result = _with_baseline(result, baseline)  # as check judges: the page's verdicts are check's
    _echo_discovered(result, windowed=True)
    _write(output, iter_html(result, prices=prices))  # the table the check priced with (its caveats on the page)
    echo_caveats(prices)
    echo(f"wrote {'stdout' if output == STDOUT else output}: {len(result.sessions)} log(s), "
         f"{result.request_count} request(s), "
         f"{_verdict(result)}", err=output == STDOUT)
    refused = [c.error for c in result.sessions if c.error is not None]
    for error in refused:  # on the page as an error entry; said here as every describing command says it
        echo_error(error)
    return EXIT_BAD_INPUT if refused else EXIT_OK


COMMANDS = [check_command, report_command]
