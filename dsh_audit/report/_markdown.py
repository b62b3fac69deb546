"""The Markdown report of ``dsh-audit check``, sized for a GitHub Actions step summary.

GitHub renders a step summary as GitHub-flavoured Markdown with HTML allowed and caps it at
1 MiB, so every piece of log text is escaped (``<``, ``>``, ``&``, ``|``, backticks and other
Markdown punctuation) and the lists are cut at :data:`MAX_ROWS` rows with a note.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from .terminal import terminal_text

__all__ = ["MAX_ROWS", "format_markdown"]

MAX_ROWS = 200
_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~])")


def _md(text: object) -> str:
    """Escape text for a Markdown table cell or list item (no HTML, no Markdown, one line): shown
    with :func:`~dsh_audit.report.terminal.terminal_text` first, so that a control, C1 or bidi
    character, a lone surrogate or a line break from a log is its escape, not a terminal's command
    (``check --markdown -`` writes to the terminal)."""
    value = terminal_text(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _SPECIAL.sub(r"\\\1", value)


def _ratio(check: Any) -> str:
    report = check.cache
    ratio = report.ratio(report.actual_total) if report is not None else None
    return "n/a" if ratio is None else f"{ratio:.1%}"


#: The counts of a session's priced summary the cost cell says: its unpriced requests, the breaks
#: that lost an unknown amount, and the breaks that lost tokens no price was known for.
_COUNTS = ("unpriced_requests", "lost_unknown_requests", "break_unpriced")


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _cost(cost: tuple[float | None, str], breaks: tuple[float | None, str], counts: dict[str, int]) -> str:
    """What sessions cost and what their breaks cost (each as :meth:`dsh_audit.gate.SessionCheck.amount`
    gives it: ``≥$x`` when a request that owes it is unpriced, ``$?`` when it is unknown; a break
    cost none of the breaks' requests could price is ``(breaks $?)``, never left out), and of
    ``counts`` (:data:`_COUNTS`) the unpriced requests beside, and the breaks that lost an unknown
    amount; the break cost is left out when no break lost a token (nor has an unknown loss)."""
    unpriced, unknown = counts["unpriced_requests"], counts["lost_unknown_requests"]
    if cost[0] is None:  # nothing priced: unknown, never $0
        return f"$? ({unpriced} unpriced)" if unpriced else "n/a"
    lost, shown = breaks
    said = (f" (breaks {_md(shown)}" + (f", {unknown} lost an unknown amount" if unknown else "") + ")"
            if lost is None or lost or counts["break_unpriced"] else "")
    return _md(cost[1]) + said + (f" ({unpriced} unpriced)" if unpriced else "")


def _costs(check: Any) -> list[str]:
    """A session's money cells: its cost (and its breaks'), with no cache, all off-peak; ``n/a``
    when it was not priced (its log could not be read)."""
    summary = getattr(check.cache, "cost", None) if check.cache is not None else None
    cost = check.amount("cost")
    if cost is None or not isinstance(summary, dict):
        return ["n/a"] * 3
    return [_cost(cost, check.amount("break"), {key: _count(summary.get(key)) for key in _COUNTS}),
            *(_md(check.amount(name)[1]) for name in ("no_cache", "off_peak"))]


def _total_costs(result: Any) -> list[str]:
    """The money cells of the totals row: every log's priced requests summed by the one rule
    (:meth:`dsh_audit.gate.CheckResult.total`; a lower bound when a log could not be read)."""
    summaries = [s.cache.cost for s in result.sessions if s.cache is not None and isinstance(s.cache.cost, dict)]
    counts = {key: sum(_count(c.get(key)) for c in summaries) for key in _COUNTS}
    return [_cost(result.total("cost"), result.total("break"), counts),
            *(_md(result.total(name)[1]) for name in ("no_cache", "off_peak"))]


def _capture(check: Any) -> str:
    if check.capture_path is None:
        return "none"
    rows = [r for r in check.captures if not r.pairing.retry]
    same = sum(1 for r in rows if r.verdict == "identical")
    return f"{same}/{len(rows)} identical"


def _breaks(check: Any) -> int:
    return sum(1 for t in check.transitions if t.verdict == "break")


def _session_rows(result: Any) -> list[str]:
    """The sessions' table, up to :data:`MAX_ROWS` of them, and a totals row of every session."""
    lines = ["| status | log | session | requests | capture | breaks | hit ratio | cost | no cache | off-peak "
             "| findings |",
             "|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|"]
    for check in result.sessions[:MAX_ROWS]:
        status = "❌ fail" if check.failed else "✅ pass"
        lines.append(f"| {status} | {_md(check.path)} | {_md(check.session_id or '-')} | {len(check.requests)} | "
                     f"{_md(_capture(check))} | {_breaks(check)} | {_ratio(check)} | {' | '.join(_costs(check))} | "
                     f"{len(check.findings)} |")
    lines.append(f"| **total** | {len(result.sessions)} log(s) | | {result.request_count} | | "
                 f"{sum(_breaks(check) for check in result.sessions)} | | {' | '.join(_total_costs(result))} | "
                 f"{len(result.findings)} |")
    if len(result.sessions) > MAX_ROWS:
        lines.append(f"\n_{len(result.sessions) - MAX_ROWS} more log(s) not shown (in the total); see the JSON "
                     "report._")
    return lines


def _finding_line(finding: Any) -> str:
    """A finding's list item, its hint (what to do, with the policy key or command it names) a
    nested item under it."""
    where = finding.path + (f":{finding.line}" if finding.line is not None else "")
    extra = "".join(part for part in (f" seq {finding.seq}" if finding.seq is not None else "",
                                      f" request {finding.request}" if finding.request is not None else ""))
    hint = getattr(finding, "hint", None)
    mark = " (baselined)" if getattr(finding, "baselined", False) else ""
    return (f"- **{finding.rule}** {finding.severity}{mark}: {_md(finding.message)} — {_md(where)}{_md(extra)}"
            + (f"\n  - hint: {_md(hint)}" if hint else ""))


def _findings(title: str, findings: list[Any], *, folded: bool) -> list[str]:
    if not findings:
        return []
    body = [_finding_line(f) for f in findings[:MAX_ROWS]]
    if len(findings) > MAX_ROWS:
        body.append(f"- _{len(findings) - MAX_ROWS} more not shown; see the JSON report._")
    if folded:
        return ["", f"<details><summary>{title} ({len(findings)})</summary>", "", *body, "", "</details>"]
    return ["", f"### {title} ({len(findings)})", "", *body]


def format_markdown(result: Any, *, caveats: Sequence[str] | None = None) -> str:
    """The Markdown summary of a :class:`dsh_audit.gate.CheckResult`: a row per log (hit ratio,
    cost and what its breaks cost, with no cache, all off-peak) and a totals row; ``caveats``: what
    the price table could not know of the costs it shows (default: the result's own,
    :attr:`~dsh_audit.gate.CheckResult.caveats`), each a ``Note:`` line under the sessions'
    table, escaped as every other text is.

    Example:
        >>> format_markdown(result).splitlines()[0]  # doctest: +SKIP
        '## dsh-audit check: ✅ passed'
    """
    counts = result.counts()
    head = "✅ passed" if result.passed else "❌ failed"
    baselined = "" if "baselined" not in counts else f", {counts['baselined']} baselined"
    gone = getattr(result, "baseline_gone", 0)
    unchecked = getattr(result, "baseline_unchecked", 0)
    lines = [f"## dsh-audit check: {head}", "",
             f"{len(result.sessions)} log(s), {result.request_count} request(s); findings: {counts['error']} error(s), "
             f"{counts['warning']} warning(s), {counts['info']} info; {counts['failing']} failing{baselined} "
             f"(policy: {_md(result.policy.source)}).", *([f"{gone} baseline finding(s) no longer occur."] if gone else []),
             *([f"{unchecked} baseline finding(s) are of sessions not checked."] if unchecked else []),
             "", *_session_rows(result)]
    said = getattr(result, "caveats", ()) if caveats is None else caveats
    lines += [line for text in said for line in ("", f"Note: {_md(text)}")]
    lines += _findings("Failing findings", list(result.failing), folded=False)
    lines += _findings("Other findings", [f for f in result.findings if not f.fails], folded=True)
    return "\n".join(lines) + "\n"
