"""``dsh-audit check`` (the CI gate) and ``dsh-audit report`` (the HTML forensics page)."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .. import report as reports
from ..cache import load_prices
from ..errors import DshAuditError, UsageError
from ..gate import CheckResult, RequestRecorder, find_capture, group_findings, load_policy, run_check, tally
from ..log import ProtectedInputs
from ..report import SessionPages, iter_html
from ..report.terminal import listing, listing_format, page_listing, paging, progress_callback
from ._check_files import (_distinct_reports, _format_flag, _format_target, _markdown_is_step_summary,
                           _no_old_json_file, _step_summary, _step_summary_target)
from ._check_options import (_baseline, _baseline_options, _one_baseline, _policy_option, _protect_baseline,
                             _session_options, _typed_adapter, _with_baseline)
from ._check_table import print_check
from ._priced import echo_capture_use
from ._common import (EXIT_BAD_INPUT, EXIT_FINDINGS, EXIT_OK, echo_caveats, echo_error, echo_note,
                      echo_warning,
                      warned_of)
from ._logs import evidence_logs, newest_first, selected_logs, session_paths
from ._options import capture_option, listing_options, stated_zdr
from ._output import STDOUT, echo_written, output_help, stdout_target, write_output
from ._output_guard import guard_output

if TYPE_CHECKING:
    from ..cache import PriceBook

# check's formatters are read through the package's lazy names (``reports.iter_junit``) when their
# report is written, so a run loads only those it writes (issue 11: start-up).
__all__ = ["check_command", "report_command"]

_FORMAT_FLAGS = ("--json", "--format json", "--format markdown")  # report options that take no FILE
# --format csv's listing is stdout's too: a report FILE of '-' beside it is refused as beside --json
_CSV_FLAG = "--format csv"
# Every command's --json keeps stderr for notes and warnings: with it, check says nothing else for
# people (the report holds the verdict); any other report on stdout leaves them on stderr.
_JSON_FLAGS = ("--json", "--format json")


def _run(paths: Sequence[str], *, capture: str | None, policy: Any, lenient: bool, max_version: int, jobs: int,
         engine: str, scheduler: str | None, routes: str | None, prices_path: str | None, openai_zdr: bool | None,
         outline: bool = False, record: Callable[[], RequestRecorder] | None = None,
         lean: bool = False, refused: list[DshAuditError] | None = None) -> tuple[CheckResult, PriceBook]:
    """:func:`dsh_audit.gate.run_check` with a progress bar on a terminal, and the price table it
    priced with: loaded once, here (a bad price file or pyproject.toml value is one error before
    any log is read), holding the caveats of its prices after the run; ``refused`` collects
    another agent's logs found in a folder, left out (:func:`_echo_refused`)."""
    prices = load_prices(prices_path)
    zdr = stated_zdr(openai_zdr)
    with progress_callback(max(2, len(paths)), label="checking") as report:
        result = run_check(paths, captures=capture, policy=policy, lenient=lenient, max_version=max_version,
                           progress=report, jobs=jobs, engine=engine, scheduler=scheduler, routes=routes,
                           outline=outline, record=record, lean=lean, prices=prices, zero_data_retention=zdr,
                           refused=refused)
    return result, prices


def _echo_refused(refused: Sequence[DshAuditError]) -> None:
    """Each Claude Code or Codex log found in a folder of PATHS, which check and report left out
    (they read DSH logs only), as one ``error:`` line in the words ``validate`` and ``breaks`` refuse
    it (which commands import it): the other logs' reports are written and the run exits 2, as
    theirs does. One named as a PATH is refused before any report is written."""
    for error in refused:
        echo_error(error)


def _named(refused: Sequence[DshAuditError], paths: Sequence[str]) -> None:
    """Refuse another agent's log that is itself one of ``paths`` (not found in a folder), as
    every command that reads DSH logs only refuses it: no report is written.

    Raises:
        DshAuditError: the first such log's refusal.
    """
    named = {os.fspath(Path(path)) for path in paths if not os.path.isdir(path)}
    for error in refused:
        if error.path in named:
            raise error


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


def _write(path: str | None, text: str | Iterable[str], *, what: str) -> None:
    write_output(path, text, what=f"the {what}")


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


@click.command("check")
@click.argument("paths", nargs=-1, type=click.Path(readable=False))
@capture_option
@_policy_option
@click.option("--junit", "junit_path", metavar="FILE", type=click.Path(),
              help=output_help("a JUnit XML report"))
@click.option("--sarif", "sarif_path", metavar="FILE", type=click.Path(),
              help=output_help("a SARIF 2.1.0 report"))
@click.option("--json-report", "json_path", metavar="FILE", type=click.Path(),
              help=output_help("the JSON report (docs/report-schema.json)"))
@click.option("--markdown", "markdown_path", metavar="FILE", type=click.Path(),
              help=output_help("a Markdown summary"))
@_baseline_options
@listing_options(formats_help="json (--json) prints the JSON report on one line (--json-report - indents it), markdown the "
                              "Markdown summary (--markdown -; the table, findings and verdict then on stderr); csv "
                              "puts the findings and the verdict on stderr",
                 json_help="The JSON report (docs/report-schema.json) on stdout as JSON lines, as every "
                           "--json: one compact object on one line (--json-report - writes it indented)")
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
    does (a log DSH refuses, such as one with a bad header, is finding DSH801, which fails under the
    default policy), 2 on bad input or usage (a log that cannot be opened or read at all too, such
    as a FIFO or a file without read permission: its row fails, every report is written), and when
    there is nothing to check (no log under PATHS, or none
    in the --since/--until window: a gate that checked nothing does not pass). The last line says
    PASSED, FAILED, or INCOMPLETE when none fails but a Claude Code or Codex log found in a folder
    was not checked, or a log could not be read (its DSH801 passing: fail-on-refusal = false)
    (exit 2; an error line, the JSON, SARIF and JUnit reports and the HTML page name
    each, the last line and the Markdown summary count them). The table, and every report of the run,
    lists the logs newest
    first by the log file's modification time when no PATH is given (equal ones by path; ordering
    reads no log), else the PATHS in the order given, each one's logs by path (`sessions` orders by
    the logs' own timestamps).

    Columns: "status" ok, or FAIL when a finding on the log, or on the capture found beside it that
    cannot be read, fails the gate; "log" its path (whole;
    on a narrow terminal its number, each named under the table, "log 1: PATH", the path whole;
    one log: "log: PATH" instead of the column); "session" its session id; "requests" ("reqs" on a
    narrow terminal) the LLM
    requests it implies; "capture" "none" when no capture was given or found for it, "unreadable"
    when the one found beside it cannot be read (the capture's DSH802 says why), else
    "N/M identical": N of its M requests (retries aside) rebuilt byte for byte as captured;
    "breaks" ("brks" on a narrow terminal) its prefix-cache breaks; "hit ratio" ("hit" on a
    narrow terminal) the share of prompt tokens read from the cache (--format csv: the ratio from 0
    to 1); "cost" what the session cost at list prices ("≥$x" a lower bound when some requests
    could not be priced, "$?" when none could; --format csv: the amount, with "unpriced", the count
    of requests that could not be priced, beside); "findings" ("finds" on a narrow terminal) its
    findings of every severity, info too (a run of one finding on consecutive lines, listed once,
    counts each line, as `validate` counts it), each listed under the table, the failing ones first (an
    info finding said alike of several logs once, last: "DSH810 info: 2 logs (a.jsonl, b.jsonl): no
    capture ..."; the gate fails on those the policy names; the run's last line counts them by
    severity). A narrow terminal shows
    each session id as its shortest unique prefix, as `sessions` shows it (session-86ef2d28, a
    UUID's cut at a group's end; session-sample-co…, any other's with "…": `show` takes either;
    the caption says so), before it heads a column in its short words ("reqs", "brks", "hit",
    "finds"), then each log as its number, and leaves out
    "capture", then "hit ratio", then "cost"; never "log": a log's path is never cut.

    A baseline file the policy
    names that does not exist yet is not read when --json-report writes it: that run writes the
    first baseline. With GITHUB_STEP_SUMMARY set, the Markdown summary is appended
    to it (once, when --markdown names that file too: the earlier steps' summaries are kept). A
    report FILE of '-' (one report at most) or --format markdown puts the report on stdout, and the
    table, the findings and the verdict on stderr, not while paged (--json: the JSON report
    alone, on one line as JSON lines, notes on stderr).

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
        stdout = _format_target(flag, option, typed[option])
        if typed[option] != STDOUT:  # its '-' stays, refused beside the flag as every report's '-' is
            typed.pop(option)
        json_path, markdown_path = (stdout, markdown_path) if fmt == "json" else (json_path, stdout)
        typed[flag] = stdout
    named = {name if name in _FORMAT_FLAGS else f"{name} {path}": path for name, path in typed.items()}
    listed = {_CSV_FLAG: STDOUT} if fmt == "csv" else {}
    piped = stdout_target({**named, **listed})
    _distinct_reports(typed)
    given, paths = paths, session_paths(paths)
    protected = _protected(paths, capture, policy_path, routes, prices_path)
    # it may replace the baseline it was given (docs/ci.md)
    guard_output(protected, json_path, option="--json-report", what="JSON report")
    policy = _typed_adapter(load_policy(policy_path), adapter)
    baseline_path, no_baseline = _one_baseline(baseline_path, no_baseline)
    _protect_baseline(protected, baseline_path, off=no_baseline, policy=policy)
    for option, target, what in (("--junit", junit_path, "JUnit report"), ("--sarif", sarif_path, "SARIF report"),
                                 ("--markdown", markdown_path, "Markdown summary")):
        guard_output(protected, target, option=option, what=what)
    summary = _step_summary_target()
    if summary is not None and protected.input_at(summary) is not None:  # else a failed append is a warning
        raise UsageError(f"the GITHUB_STEP_SUMMARY would overwrite the input {protected.input_at(summary)}",
                         path=summary, hint="point GITHUB_STEP_SUMMARY at another file")
    baseline = _baseline(baseline_path, off=no_baseline, policy=policy, writes=json_path)
    refused: list[DshAuditError] = []
    result, prices = _run(_in_window(paths, since, until, gate=True), capture=capture, policy=policy,
                          lenient=lenient, max_version=max_version, jobs=jobs, engine=engine, scheduler=scheduler,
                          routes=routes, prices_path=prices_path, openai_zdr=openai_zdr, outline=True,
                          lean=True,  # no report of check shows a request's messages, verdict or extension
                          refused=refused)
    _named(refused, paths)
    if refused and not result.sessions:  # only other agents' logs: nothing checked, no report (as no log)
        _echo_refused(refused)
        return EXIT_BAD_INPUT
    result = _with_baseline(_in_order(result, paths if given else ()), baseline)  # no PATHS: newest first
    _echo_discovered(result, windowed=since is not None or until is not None)
    for check in result.sessions:  # a log not a line of which could be read: said as every command says it
        if check.unreadable and check.error is not None:
            echo_error(check.error)
    _echo_refused(refused)
    echo_caveats(prices)  # what the table could not know of the costs the reports show
    markdown = reports.format_markdown(result)  # with the caveats of the prices it shows
    # each report made only when asked for; JUnit's one testcase per request is written as made
    if junit_path is not None:
        _write(junit_path, reports.iter_junit(result), what="JUnit report")
    if sarif_path is not None:
        _write(sarif_path, reports.format_sarif(result, base=os.getcwd()), what="SARIF report")
    if json_path is not None:
        _write(json_path, _json_report(result, line=fmt == "json"), what="JSON report")
    if fmt == "markdown":
        page_listing()  # the summary is this run's listing: paged on a terminal like any other
    if _markdown_is_step_summary(markdown_path):
        echo_note(f"--markdown {markdown_path} is GITHUB_STEP_SUMMARY: the summary is appended to it once, "
                  "after the earlier steps' summaries")
    else:
        _write(markdown_path, markdown, what="Markdown summary")
    _step_summary(markdown)
    if piped in (None, _CSV_FLAG):
        print_check(result, after=result.not_checked_said())
    elif piped not in _JSON_FLAGS and not paging():  # a pager owns the terminal: no line under it
        _print_check_on_stderr(result, after=result.not_checked_said())
    # a log that cannot be read is bad input, as a folder that cannot be read is (issue 15): exit 2,
    # though its row fails and every report is written
    return EXIT_BAD_INPUT if refused or result.unreadable else EXIT_OK if result.passed else EXIT_FINDINGS


def _json_report(result: CheckResult, *, line: bool) -> str:
    """The JSON report: as one line of compact JSON for --json (``line``: stdout is JSON lines
    there, as every command's --json, issue 14 B3), indented in a file (--json-report FILE or -)."""
    return reports.dumps_line(reports.report_object(result)) + "\n" if line else reports.format_json(result)


def _print_check_on_stderr(result: CheckResult, *, after: str = "") -> None:
    """What check prints for people (its table, findings and verdict) on stderr, as a table, while
    stdout holds a report (``--sarif -``, ``--markdown -``): a CI log still shows the verdict, as
    ``--format csv`` puts its findings and verdict on stderr (:func:`listing_line`); no pager."""
    with listing("table", pager=False), contextlib.redirect_stdout(sys.stderr):
        print_check(result, after=after)


#: The most hints ``report`` says of its failing findings (:func:`_echo_hints`); `check` says every one.
_HINTS_SAID = 3


def _echo_hints(result: CheckResult) -> None:
    """The way forward from ``report``'s failing findings, on stderr: each distinct hint `check`
    gives them (a route the log does not describe: ``--routes FILE``), with how many findings of
    which rules in how many logs it settles; at most :data:`_HINTS_SAID`, then how many more
    `check` says. A log that could not be read is left to its error line, which has its hint, and
    a hint a warning of the run said already (a capture found that cannot be read) is not said again."""
    said: dict[str, tuple[int, dict[str, None], set[str]]] = {}
    refused = {c.path for c in result.sessions if c.error is not None}
    for group in group_findings(f for f in result.failing if f.path not in refused):
        first = group.findings[0]
        if first.hint and not warned_of(first.hint):
            count, rules, logs = said.setdefault(first.hint, (0, {}, set()))
            rules[first.rule] = None
            logs.add(first.path)
            said[first.hint] = (count + tally(group.findings), rules, logs)
    for hint, (count, rules, logs) in list(said.items())[:_HINTS_SAID]:
        echo_note(f"{count} failing finding(s) ({', '.join(rules)}, {len(logs)} log(s)); hint: {hint}")
    if len(said) > _HINTS_SAID:
        echo_note(f"{len(said) - _HINTS_SAID} more hint(s): `dsh-audit check` with the same options says each")


@click.command("report")
@click.argument("paths", nargs=-1, type=click.Path(readable=False))
@capture_option
@_policy_option
@click.option("-o", "--output", metavar="FILE", type=click.Path(), default="dsh-audit-report.html",
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
    baseline accepts shown as baselined. Exit 0 when written, however many findings fail (use
    `check` to gate; a folder or --since/--until window with no log gives a page with none, and a
    note), 1 when DSH refuses a log (a bad header) and its refusal fails under the policy (its
    DSH801 or DSH802 fails, as in check; with fail-on-refusal = false it passes: 0), 2 on bad
    input or usage, a log that cannot be opened or read at all too (a FIFO, a file without read
    permission), or a Claude Code or Codex log found in a folder (not checked); a refused or
    unreadable log is an error entry of the page, which is still written, and its error is printed.
    The line that says what was written ends with the page's verdict in its words
    ("check passed: 5 explained break(s)"). After it, a
    note on stderr gives each hint `check` gives the failing findings (a route the log does not
    describe: --routes FILE), with how many findings it settles.

    \b
    Example:
        dsh-audit report ~/.dsh/sessions/--home-me-proj--/session-1 -o report.html
    """
    paths = session_paths(paths)
    protected = _protected(paths, capture, policy_path, routes, prices_path)
    policy = _typed_adapter(load_policy(policy_path), adapter)
    baseline_path, no_baseline = _one_baseline(baseline_path, no_baseline)
    _protect_baseline(protected, baseline_path, off=no_baseline, policy=policy)
    guard_output(protected, output, option="-o", what="HTML report")
    baseline = _baseline(baseline_path, off=no_baseline, policy=policy)
    logs = _in_window(paths, since, until, gate=False)  # nothing in the window or the folders: an empty page
    refused: list[DshAuditError] = []
    # a log checked while it is replayed has its page data made as it goes (spooled to a temporary file)
    result, prices = _run(logs, capture=capture, policy=policy, lenient=lenient, max_version=max_version, jobs=jobs,
                          engine=engine, scheduler=scheduler, routes=routes, prices_path=prices_path,
                          openai_zdr=openai_zdr, record=SessionPages(), refused=refused) if logs else \
        (CheckResult(sessions=(), findings=(), policy=policy), load_prices(prices_path))
    _named(refused, paths)
    result = _with_baseline(result, baseline)  # as check judges: the page's verdicts are check's
    _echo_discovered(result, windowed=True)
    # the table the check priced with (its caveats on the page)
    _write(output, iter_html(result, prices=prices), what="HTML report")
    echo_caveats(prices)
    said = f": {len(result.sessions)} log(s), {result.request_count} request(s), {reports.verdict_words(result)}"
    echo_written(output, said)  # said on stderr when the page went to stdout; a file's path whole
    _echo_hints(result)
    for check in result.sessions:  # on the page as an error entry; said here as every describing command says it
        if check.error is not None:
            echo_error(check.error)
    _echo_refused(refused)
    return _report_exit(result, others=bool(refused))


def _report_exit(result: CheckResult, *, others: bool) -> int:
    """``report``'s exit code, by check's rule for a log's refusal (docs/ci.md): 2 when a log could
    not be opened or read at all (:attr:`~dsh_audit.gate.CheckResult.unreadable`: a FIFO, no read
    permission) or a Claude Code or Codex log found in a folder was left out (``others``), as check
    exits 2; else 1 when DSH refuses a log (a bad header, a log that cannot be replayed: an error
    entry of the page) and its refusal fails under the policy (its ``DSH801``/``DSH802`` finding
    fails: :attr:`~dsh_audit.gate.SessionCheck.refusal_fails`), as check fails on it; else 0,
    a refusal the policy passes (``fail-on-refusal = false``) too, however many other findings
    fail (``check`` gates on those)."""
    if result.unreadable or others:
        return EXIT_BAD_INPUT
    return EXIT_FINDINGS if any(check.refusal_fails for check in result.sessions) else EXIT_OK


COMMANDS = [check_command, report_command]
