"""``dsh-audit validate``: the conformance checker's command line."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import click

from .._version import __version__
from ..errors import MalformedRecordError, UsageError
from ..report import dumps_line, dumps_pretty, validation_sarif
from ..report.terminal import listing_format, print_table, progress_callback
from ..validate import Finding, format_summary, format_text, select_rules, validate_paths
from ._common import EXIT_BAD_INPUT, EXIT_FINDINGS, EXIT_OK, echo_error, echo_lines, echo_summary
from ._logs import guard_evidence, selected_logs, session_paths
from ._options import engine_options, jobs_option, lenient_option, listing_options
from ._output import STDOUT, output_help, write_output
from ._when import time_options

__all__ = ["validate_command"]

_COLUMNS = ("path", "line", "seq", "rule", "severity", "message", "hint")
_FORMATS_HELP = ("json is what --json prints; table (the default) is one `path:line: seq N: RULE severity: "
                 "message (hint)` line per finding")


@click.command("validate")
@click.argument("paths", nargs=-1, type=click.Path(readable=False))
@listing_options(formats_help=_FORMATS_HELP)
@click.option("--sarif", "sarif_path", metavar="FILE", type=click.Path(),
              help=output_help("the findings as SARIF 2.1.0 too"))
@click.option("--rule", "rules", multiple=True, metavar="ID",
              help="Report only this rule (repeatable; a prefix such as DSH3 selects a family).")
@click.option("--ignore", "ignored", multiple=True, metavar="ID",
              help="Do not report this rule (repeatable; prefixes allowed).")
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too, not only on errors.")
@lenient_option
@jobs_option
@time_options
@engine_options
def validate_command(paths: tuple[str, ...], as_json: bool, sarif_path: str | None, rules: tuple[str, ...],
                     ignored: tuple[str, ...], strict: bool, lenient: bool, max_version: int, jobs: int,
                     since: float | None, until: float | None, engine: str, scheduler: str | None) -> int:
    """Check session logs against the conformance rules and report every finding.

    PATHS are log files, session folders, a sessions root (default $DSH_HOME/sessions), or a
    session id, a unique id prefix or `latest` (looked up there). Unlike `requests`, which stops at
    the refusal DSH reports, this lists every violation with its rule id (docs/rules.md),
    file:line, seq and a fix hint, and checks a child log against its parent when both are given.
    Exit status: 0 no error finding, 1 error findings (or warnings with --strict), 2 bad usage,
    an unreadable path, or another agent's log (Claude Code, Codex: `requests`, `show`, `cache`
    and `usage` read those). With --json, one object per finding, then always a last one:
    {"type": "summary", "passed", "counts" by severity, "files", "rules": findings by rule}, and
    with --ignore "ignored": how many findings it hid (the text summary says so on stderr).
    --format csv or markdown lists the findings as one table (path, line, seq, rule, severity,
    message, hint); the default lists one `path:line: seq N: RULE severity: message` line each.

    \b
    Example:
        dsh-audit validate ~/.dsh/sessions --sarif findings.sarif --ignore DSH505
        dsh-audit validate ~/.dsh/sessions --since 7d --jobs 0
    """
    select_rules(rules, ignored)  # unknown ids are a usage error before any file is read
    _one_stdout(sarif_path, as_json=as_json)
    paths = session_paths(paths)  # a session id, id prefix or latest looked up once
    logs = selected_logs(paths, since, until)
    if sarif_path is not None:  # the logs found again only for an output to guard (review B 45)
        # never a log it reads; it reads no pyproject.toml, so its report may replace one
        guard_evidence(paths, sarif_path, option="--sarif", what="SARIF report", settings=False)
    with progress_callback(len(logs), label="validate") as report_progress:
        # the rules --rule chooses (only their checks run), selected below: --ignore counts what
        # it hides, and DSH202 finds another agent's log, refused whatever --rule says
        found = validate_paths(logs, rules=(*rules, "DSH202") if rules else None, lenient=lenient,
                               max_version=max_version, jobs=jobs, engine=engine, scheduler=scheduler,
                               progress=report_progress)
    refused = _foreign(found)
    for error in refused:  # one line each; the other files' findings are still reported
        echo_error(error)
    found = [f for f in found if f.path not in {error.path for error in refused}]
    files = len(logs) - len(refused)
    chosen, kept = select_rules(rules, ()), select_rules(rules, ignored)
    findings = [f for f in found if f.rule in kept]
    hidden: Counter[str] = Counter()
    for f in found:
        if f.rule in chosen and f.rule not in kept:
            hidden[f.rule] += f.lines  # a folded run's lines, each one
    failing = {"error", "warning"} if strict else {"error"}
    passed = not refused and not any(f.severity in failing for f in findings)
    if as_json:
        for finding in findings:
            click.echo(dumps_line(finding.to_json()))
    else:
        if listing_format() != "table":
            print_table("findings", _COLUMNS, (_cells(finding) for finding in findings))
        elif sarif_path != STDOUT:  # with --sarif -, stdout is the SARIF document alone
            echo_lines(format_text(findings))
        if files or not refused:  # every file refused as bad input: its error says all, no "0 file(s)" summary
            echo_summary(format_summary(findings, files=files), err=True)
            if ignored:
                echo_summary(_hidden_text(hidden), err=True)
    if sarif_path is not None:
        # written as `check --sarif` writes its report (report.format_sarif): one JSON writer
        write_output(sarif_path, dumps_pretty(validation_sarif(findings, tool_version=__version__)) + "\n",
                     what="the SARIF report")
    if as_json:  # last, once every output is written: a run that fails there has no summary
        summary = _summary(findings, files=files, passed=passed)
        if ignored:
            summary["ignored"] = sum(hidden.values())
        click.echo(dumps_line(summary))
    return EXIT_BAD_INPUT if refused else EXIT_OK if passed else EXIT_FINDINGS


def _one_stdout(sarif_path: str | None, *, as_json: bool) -> None:
    """Refuse ``--sarif -`` beside a listing in a machine format (``--json``, ``--format csv`` or
    ``markdown``): stdout holds one output."""
    chosen = listing_format()
    if sarif_path == STDOUT and chosen != "table":
        typed = "--json" if as_json else f"--format {chosen}"
        raise UsageError(f"only one output can go to stdout, not {typed} and --sarif -",
                         hint=f"give --sarif a FILE name, or leave out {typed}")


def _cells(finding: Finding) -> tuple[object, ...]:
    """A finding's row in the ``--format csv`` or ``markdown`` table (:data:`_COLUMNS`)."""
    return (finding.path, "-" if finding.line is None else finding.line, "-" if finding.seq is None else finding.seq,
            finding.rule, finding.severity, finding.message, finding.hint or "")


def _foreign(findings: Sequence[Finding]) -> list[MalformedRecordError]:
    """Another agent's logs (Claude Code, Codex) among those checked, refused as `check` refuses
    one (saying what it is and which commands read it) rather than with a DSH202 error finding:
    one error per such log, in the findings' order, with its DSH202 finding's message and hint
    (the finding names the format: the file is not read again). The run exits 2 (bad input wins),
    once the other logs' findings are reported.
    """
    return [MalformedRecordError(finding.message, path=finding.path, line=1, hint=finding.hint)
            for finding in findings if finding.foreign is not None]


def _hidden_text(hidden: Counter[str]) -> str:
    """The line after the text summary with --ignore: how many findings it hid, by rule.

    Example:
        >>> _hidden_text(Counter({"DSH505": 3, "DSH401": 1})), _hidden_text(Counter())
        ('--ignore hid 4 finding(s): DSH401 x1, DSH505 x3', '--ignore hid 0 finding(s)')
    """
    rules = ", ".join(f"{rule} x{n}" for rule, n in sorted(hidden.items()))
    return f"--ignore hid {sum(hidden.values())} finding(s)" + (f": {rules}" if rules else "")


def _summary(findings: Sequence[Finding], *, files: int, passed: bool) -> dict[str, Any]:
    """The ``--json`` stream's last object, after one per finding (as `watch` ends its stream):
    ``type`` summary, whether the run passed (exit 0), the findings by severity (as `check`'s
    JSON report counts them), the files read and the findings by rule.

    Example:
        >>> _summary([], files=2, passed=True)
        {'type': 'summary', 'passed': True, 'counts': {'error': 0, 'warning': 0, 'info': 0}, 'files': 2, 'rules': {}}
    """
    severities: Counter[str] = Counter()
    rules: Counter[str] = Counter()
    for f in findings:  # a folded run's finding counts each of its lines (Finding.lines)
        severities[f.severity] += f.lines
        rules[f.rule] += f.lines
    return {"type": "summary", "passed": passed,
            "counts": {severity: severities[severity] for severity in ("error", "warning", "info")},
            "files": files, "rules": dict(sorted(rules.items()))}


COMMANDS = [validate_command]
