"""The Markdown report of ``dsh-audit check``, sized for a GitHub Actions step summary.

GitHub renders a step summary as GitHub-flavoured Markdown with HTML allowed and refuses one over
1 MiB (it then shows none of it), so every piece of log text is escaped (``<``, ``>``, ``&``,
``|``, backticks and other Markdown punctuation; text GitHub would autolink, a URL, a code span:
:func:`~dsh_audit.report._safe_text.markdown_inline`) and cut (a path or message in its middle, at
:data:`MAX_TEXT` characters; a session id to its shortest unique prefix of at least :data:`ID_WIDTH`
characters (past a leading ``session-``), by the rule of every table's ids,
:func:`~dsh_audit.report.terminal.id_prefixes`, one holding a UUID at the end of a group, and a
``…`` whenever it was cut: :func:`_id_names`; an id is never cut in its middle, however long),
and the lists are cut at :data:`MAX_ROWS` rows, or sooner so that the whole summary stays
within :data:`MAX_BYTES` bytes of UTF-8, with a note saying how many more the JSON report holds.
The head and the totals row always stay.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from ..gate import tally
from ._fit_text import id_prefixes
from ._html_sessions import _headline
from ._safe_text import markdown_inline, terminal_text

__all__ = ["ID_WIDTH", "MAX_BYTES", "MAX_ROWS", "MAX_TEXT", "format_markdown"]

#: The most rows of each list (logs, failing findings, other findings).
MAX_ROWS = 200
#: The most bytes (UTF-8) of the summary: GitHub refuses a step summary over 1 MiB (1,048,576 bytes).
MAX_BYTES = 1_000_000
#: The most characters of a piece of text a cell shows (a message, hint and price note: five times as many).
MAX_TEXT = 200
#: The fewest characters (past ``session-``) of an id cut to its shortest unique prefix
#: (:func:`~dsh_audit.report.terminal.id_prefixes`, whose tables keep 8).
ID_WIDTH = 64
_CUT = "…"
#: The room kept for each list's heading and its "more not shown" note (numbers and fixed words).
_NOTE_ROOM = 256


def _md(text: object, *, limit: int = MAX_TEXT, cell: bool = False) -> str:
    """Text for a Markdown table cell (``cell``) or list item (no HTML, no Markdown, no link, one
    line): cut in its middle to ``limit`` characters around a ``…`` first, then shown with
    :func:`~dsh_audit.report._safe_text.markdown_inline`, the one Markdown escaper (through
    :func:`~dsh_audit.report.terminal.terminal_text`, so that a control, C1 or bidi character, a
    lone surrogate or a line break from a log is its escape, never cut in two, not a terminal's
    command: ``check --markdown -`` writes to the terminal; a URL a code span)."""
    return markdown_inline(_cut(text if isinstance(text, str) else str(text), limit), cell=cell)


def _cut(value: str, limit: int) -> str:
    """``value`` cut in its middle to ``limit`` characters around a ``…`` (:func:`_md`)."""
    if len(value) > limit:
        head = (limit - 1) // 2
        value = value[:head] + _CUT + value[len(value) - (limit - 1 - head):]
    return value


def _id_names(ids: Sequence[str]) -> dict[str, str]:
    """Each of ``ids`` as the summary shows it: as every table cuts one
    (:func:`~dsh_audit.report.terminal.id_prefixes`), with :data:`ID_WIDTH` characters of room and
    the same ``…`` whatever stdout can write, a ``…`` too after a UUID's group (a table's caption
    says its ids are prefixes; a summary has no caption, and a cut id must look cut). Never cut in
    its middle (:func:`_md` cuts other text so): a middle cut names no session.

    Example:
        >>> uuid = "86ef2d28-6e7a-4b1c-9d2e-0123456789ab"
        >>> names = _id_names(["y" * 70 + "-" + uuid, "s-1"])
        >>> names["y" * 70 + "-" + uuid] == "y" * 70 + "-86ef2d28…", names["s-1"]
        (True, 's-1')
    """
    # a UUID's cut is a bare prefix; a cut marked by the rule ends with its "…"
    return {whole: shown + _CUT if shown != whole and whole.startswith(shown) else shown
            for whole, shown in id_prefixes(ids, least=ID_WIDTH, mark=_CUT).items()}


def _size(lines: Iterable[str]) -> int:
    """The bytes ``lines`` take in the summary, each with its line break."""
    return sum(len(line.encode("utf-8", "surrogatepass")) + 1 for line in lines)


def _take(lines: Iterable[str], room: int) -> tuple[list[str], int]:
    """The first of ``lines`` that fit ``room`` bytes together, and the room left."""
    taken: list[str] = []
    for line in lines:
        size = _size([line])
        if size > room:
            break
        taken.append(line)
        room -= size
    return taken, room


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
        return _md("$?") + f" ({unpriced} unpriced)" if unpriced else "n/a"
    lost, shown = breaks
    said = (f" (breaks {_md(shown)}" + (f", {unknown} lost an unknown amount" if unknown else "") + ")"
            if lost is None or lost or counts["break_unpriced"] else "")
    return _md(cost[1]) + said + (f" ({unpriced} unpriced)" if unpriced else "")


def _costs(check: Any) -> list[str]:
    """A session's money cells: its cost (and its breaks'), with no cache, all off-peak (a log with
    one rate all day at its cost, as every view sums it, so the rows add up to the total); ``n/a``
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


def _breaks(check: Any) -> int:
    return sum(1 for t in check.transitions if t.verdict == "break")


_TABLE_HEAD = ("| status | log | session | requests | capture | breaks | hit ratio | cost | no cache | off-peak "
               "| findings |", "|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|")


#: A log's status cell (:attr:`dsh_audit.gate.SessionCheck.status`): one that could not be read passes nothing.
_STATUS = {"failed": "❌ fail", "unreadable": "⚠️ unread", "ok": "✅ pass"}


def _session_row(check: Any, ids: dict[str, str]) -> str:
    """A log's row of the sessions' table (``ids``: each session id as the summary shows it, :func:`_id_names`)."""
    status = _STATUS[check.status]
    shown = markdown_inline(ids.get(check.session_id or "", "-"), cell=True)  # never cut again (_id_names)
    return (f"| {status} | {_md(check.path, cell=True)} | {shown} | "
            f"{len(check.requests)} | {_md(check.capture_cell, cell=True)} | {_breaks(check)} | {_ratio(check)} | {' | '.join(_costs(check))} | "
            f"{check.finding_count} |")


def _total_row(result: Any) -> str:
    return (f"| **total** | {len(result.sessions)} log(s) | | {result.request_count} | | "
            f"{sum(_breaks(check) for check in result.sessions)} | | {' | '.join(_total_costs(result))} | "
            f"{result.finding_count} |")


def _session_rows(result: Any, room: int) -> tuple[list[str], int]:
    """The sessions' table, as many of them as :data:`MAX_ROWS` and ``room`` bytes allow, a totals
    row of every session, and the room left."""
    ids = _id_names([check.session_id for check in result.sessions if check.session_id])
    rows, room = _take((_session_row(check, ids) for check in result.sessions[:MAX_ROWS]), room)
    more = len(result.sessions) - len(rows)
    note = [f"\n_{more} more log(s) not shown (in the total); see the JSON report._"] if more else []
    return [*_TABLE_HEAD, *rows, _total_row(result), *note], room


def _code_span(text: str) -> str:
    """``text`` (a command a hint names) as a Markdown code span, inert: fenced by one backtick more
    than its longest run of them (CommonMark), with a space each side when it starts or ends with one."""
    value = terminal_text(text)
    fence = "`" * (1 + max((len(run) for run in re.findall("`+", value)), default=0))
    pad = " " if value[:1] == "`" or value[-1:] == "`" else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def _hint_md(hint: str, commands: Iterable[str] = ()) -> str:
    """A finding's hint in Markdown (cut as :func:`_md` cuts it): each of ``commands``, those our
    hint templates put between backticks (:attr:`dsh_audit.gate.Finding.commands`), as a code span
    GitHub shows as code, where the template put it: the last place the hint holds it between
    backticks (a template names its command after any text from a log, and a log's path in a
    command is a quoted shell word). Every other character is inert as :func:`_md` makes it: a
    backtick from a log opens no span, nor does a folder named like a command.

    Example:
        >>> _hint_md("run `dsh-audit cache` for the requests that missed and why", ["dsh-audit cache"])
        'run `dsh-audit cache` for the requests that missed and why'
        >>> _hint_md("declare it in a`b `dsh-audit x`/c", ["dsh-audit cache"])
        'declare it in a\\\\`b \\\\`dsh-audit x\\\\`/c'
    """
    value = _cut(hint, 5 * MAX_TEXT)
    spans = sorted((at, command) for command in set(commands) if (at := value.rfind(f"`{command}`")) >= 0)
    parts: list[str] = []
    done = 0
    for at, command in spans:
        if at >= done:  # spans of two commands never overlap in a template's hint
            parts += [markdown_inline(value[done:at]) if at > done else "", _code_span(command)]
            done = at + len(command) + 2
    return "".join(parts) + (markdown_inline(value[done:]) if done < len(value) else "")


def _finding_line(finding: Any) -> str:
    """A finding's list item, its hint (what to do, with the policy key or command it names) a
    nested item under it."""
    where = finding.path + (f":{finding.line}" if finding.line is not None else "")
    extra = "".join(part for part in (f" seq {finding.seq}" if finding.seq is not None else "",
                                      f" request {finding.request}" if finding.request is not None else ""))
    hint, commands = getattr(finding, "hint", None), getattr(finding, "commands", ())
    mark = " (baselined)" if getattr(finding, "baselined", False) else ""
    return (f"- **{finding.rule}** {finding.severity}{mark}: {_md(finding.message, limit=5 * MAX_TEXT)} — "
            f"{_md(where)}{_md(extra)}" + (f"\n  - hint: {_hint_md(hint, commands)}" if hint else ""))


def _findings(title: str, findings: list[Any], room: int, *, folded: bool) -> tuple[list[str], int]:
    """A list of findings, as many as :data:`MAX_ROWS` and ``room`` bytes allow, and the room left;
    its title counts them as the heading's counts do (a folded run of lines, each line: its item
    says the run), the note under it the items not shown."""
    if not findings:
        return [], room
    body, room = _take((_finding_line(f) for f in findings[:MAX_ROWS]), room)
    if len(findings) > len(body):
        body.append(f"- _{len(findings) - len(body)} more not shown; see the JSON report._")
    count = tally(findings)
    if folded:
        return ["", f"<details><summary>{title} ({count})</summary>", "", *body, "", "</details>"], room
    return ["", f"### {title} ({count})", "", *body], room


def _notes(caveats: Sequence[str], room: int) -> tuple[list[str], int]:
    """The price notes, each a ``Note:`` line after an empty one, as many as ``room`` bytes allow
    (they come first, as they qualify the totals, within a tenth of the summary: a log's times
    spread over many years cannot push its rows out), and the room left."""
    said, room = _take((f"\nNote: {_md(text, limit=5 * MAX_TEXT)}" for text in caveats), room)
    more = len(caveats) - len(said)
    return [*said, *([f"\n_{more} more note(s) not shown; check prints each on stderr._"] if more else [])], room


def _verdict_head(result: Any) -> str:
    """The heading's verdict in the page's words (:func:`~dsh_audit.report._html_sessions._headline`,
    the one wording of a run's verdict), marked by its state: ``✅ passed: 5 explained break(s)``,
    ``❌ failed: 6 unrendered request(s) · 10 explained break(s)`` (and the logs left out), or when
    every checked log passed but some were left out (:attr:`~dsh_audit.gate.CheckResult.not_checked`)
    or could not be read (:attr:`~dsh_audit.gate.CheckResult.unread_passing`), ``⚠️ incomplete: no
    breaks; 1 log(s) could not be read (exit 2)``: a summary never says ``passed`` over breaks it
    does not name."""
    headline = _headline(result)
    mark = _MARKS.get(headline["state"])
    words = headline["text"].removeprefix("check ")
    return words if mark is None else f"{mark} {words}"


#: The mark of each state of the page's headline in the Markdown heading; ``none`` (no log) has none.
_MARKS = {"passed": "✅", "failed": "❌", "incomplete": "⚠️"}


def _head(result: Any) -> list[str]:
    """The summary's heading and its counts; the heading says the logs of another agent left out
    as check's verdict line says them (:meth:`dsh_audit.gate.CheckResult.not_checked_said`): the run
    exits 2 for them, and a PR's summary must not read as a clean pass (``⚠️ incomplete: 3 explained
    break(s); 2 log(s) of another agent not checked (exit 2)``)."""
    counts = result.counts()
    head = _verdict_head(result)
    baselined = "" if "baselined" not in counts else f", {counts['baselined']} baselined"
    return [f"## dsh-audit check: {head}", "",
            f"{len(result.sessions)} log(s), {result.request_count} request(s); findings: {counts['error']} error(s), "
            f"{counts['warning']} warning(s), {counts['info']} info; {counts['failing']} failing{baselined} "
            f"(policy: {_md(result.policy.source)}).", *(f"{note}." for note in result.baseline_said()), ""]


def format_markdown(result: Any, *, caveats: Sequence[str] | None = None) -> str:
    """The Markdown summary of a :class:`dsh_audit.gate.CheckResult`: a row per log (hit ratio,
    cost and what its breaks cost, with no cache, all off-peak) and a totals row; ``caveats``: what
    the price table could not know of the costs it shows (default: the result's own,
    :attr:`~dsh_audit.gate.CheckResult.caveats`), each a ``Note:`` line under the sessions'
    table, escaped as every other text is. At most :data:`MAX_BYTES` bytes: the notes (within a
    tenth of it), then the rows of the logs, then of the failing findings, then of the others
    fill the room the head and the totals row leave.

    Example:
        >>> format_markdown(result).splitlines()[0]  # doctest: +SKIP
        '## dsh-audit check: ✅ passed: 5 explained break(s)'
    """
    head = _head(result)
    room = MAX_BYTES - _size([*head, *_TABLE_HEAD, _total_row(result)]) - 4 * _NOTE_ROOM
    notes, left = _notes(getattr(result, "caveats", ()) if caveats is None else caveats, min(room, MAX_BYTES // 10))
    room -= min(room, MAX_BYTES // 10) - left
    table, room = _session_rows(result, room)
    failing, room = _findings("Failing findings", list(result.failing), room, folded=False)
    others, room = _findings("Other findings", [f for f in result.findings if not f.fails], room, folded=True)
    return "\n".join([*head, *table, *notes, *failing, *others]) + "\n"
