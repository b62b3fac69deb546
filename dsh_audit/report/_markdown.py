"""The Markdown report of ``dsh-audit check``, sized for a GitHub Actions step summary.

GitHub renders a step summary as GitHub-flavoured Markdown with HTML allowed and caps it at
1 MiB, so every piece of log text is escaped (``<``, ``>``, ``&``, ``|``, backticks and other
Markdown punctuation) and the lists are cut at :data:`MAX_ROWS` rows with a note.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..cache import Costs
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


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _cost(check: Any) -> str:
    """What the session cost, and what its breaks cost (the cache ledger's summary), by the one
    rule (:meth:`~dsh_audit.cache.Costs.shown`): ``≥$x`` when a request that owes it is unpriced,
    ``$?`` when it is unknown (a break cost none of the breaks' requests could price is
    ``(breaks $?)``, never left out), the unpriced count beside."""
    cost = getattr(check.cache, "cost", None) if check.cache is not None else None
    if not isinstance(cost, dict):
        return "n/a"
    total = (cost.get("cost_usd") or {}).get("total")
    unpriced = _count(cost.get("unpriced_requests")) or 0
    requests = _count(cost.get("requests")) or 0
    if not isinstance(total, (int, float)):  # nothing priced: unknown, never $0
        return f"$? ({unpriced} unpriced)" if unpriced else "n/a"
    lost = cost.get("break_cost_usd")
    owing, owing_unpriced = _count(cost.get("break_requests")), _count(cost.get("break_unpriced"))
    shown = Costs.shown(lost if isinstance(lost, (int, float)) else None, requests=requests, unpriced=unpriced,
                        owing=owing, owing_unpriced=owing_unpriced)
    unknown = _count(cost.get("lost_unknown_requests")) or 0
    breaks = (f" (breaks {_md(shown)}" + (f", {unknown} lost an unknown amount" if unknown else "") + ")"
              if lost or owing_unpriced else "")
    return (_md(Costs.shown(total, requests=requests, unpriced=unpriced)) + breaks
            + (f" ({unpriced} unpriced)" if unpriced else ""))


def _capture(check: Any) -> str:
    if check.capture_path is None:
        return "none"
    rows = [r for r in check.captures if not r.pairing.retry]
    same = sum(1 for r in rows if r.verdict == "identical")
    return f"{same}/{len(rows)} identical"


def _session_rows(result: Any) -> list[str]:
    lines = ["| status | log | session | requests | capture | breaks | cache hit | cost | findings |",
             "|---|---|---|---:|---|---:|---:|---:|---:|"]
    for check in result.sessions[:MAX_ROWS]:
        status = "❌ fail" if check.failed else "✅ pass"
        breaks = sum(1 for t in check.transitions if t.verdict == "break")
        lines.append(f"| {status} | {_md(check.path)} | {_md(check.session_id or '-')} | {len(check.requests)} | "
                     f"{_md(_capture(check))} | {breaks} | {_ratio(check)} | {_cost(check)} | {len(check.findings)} |")
    if len(result.sessions) > MAX_ROWS:
        lines.append(f"\n_{len(result.sessions) - MAX_ROWS} more log(s) not shown; see the JSON report._")
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


def format_markdown(result: Any, *, caveats: Sequence[str] = ()) -> str:
    """The Markdown summary of a :class:`dsh_audit.gate.CheckResult`; ``caveats``: what the price
    table could not know of the costs it shows (:meth:`dsh_audit.cache.PriceBook.caveats_met` of
    the table the check priced with), each a ``Note:`` line under the sessions' table, escaped as
    every other text is.

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
             "", *_session_rows(result), *(line for text in caveats for line in ("", f"Note: {_md(text)}"))]
    lines += _findings("Failing findings", list(result.failing), folded=False)
    lines += _findings("Other findings", [f for f in result.findings if not f.fails], folded=True)
    return "\n".join(lines) + "\n"
