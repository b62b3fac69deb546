"""The forensics page's summary as static HTML (:mod:`._html`), for a reader with no script: a
browser with JavaScript off, a text browser, or the file opened as text.

It sits in a ``<noscript>`` block before the page's data, so a browser that runs the script never
shows it twice, and says the page's headline, its totals (cost, hit ratio, breaks by cause, lost
tokens and their cost, the findings) and its session list (in the script's order, failing first,
children under their parent). Everything here is drawn from the very values the script reads (the
page's head and each log's head, before they are encoded: nothing is computed twice), and every
text is escaped: a log's text shows as itself with a control or bidi character as its escape
(:func:`~dsh_audit.report.terminal.terminal_text`, as the terminal shows it), and ``&``, ``<`` and
``>`` as entities, so no text of a log is markup, nor can it end the ``<noscript>`` block.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..cache import Costs
from ._safe_text import terminal_text

__all__ = ["NOSCRIPT_STYLE", "NO_LOG", "static_summary"]

#: What a page of no log says, with the script and without it.
NO_LOG = ("No log to check: the paths hold no DSH session log, or none was active in the --since/--until window. "
          "Nothing was checked, so nothing passed or failed (dsh-audit check exits 2 on the same paths).")

#: Hides the boxes only the script fills (the search bar, the timeline and the drill-down) when it cannot run.
NOSCRIPT_STYLE = "<noscript><style>#search-bar,main{display:none}</style></noscript>\n"


def _escaped(text: str) -> str:
    """Text as HTML holds it (the page's title, a caveat): ``&``, ``<`` and ``>`` as entities."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _text(value: object) -> str:
    """A value as inert HTML text: its control, bidi and invisible characters as their escapes
    (:func:`terminal_text`), then ``&``, ``<`` and ``>`` as entities.

    Example:
        >>> _text("</noscript><b>x\\u202e</b> & more")
        '&lt;/noscript&gt;&lt;b&gt;x\\\\u202e&lt;/b&gt; &amp; more'
    """
    return _escaped(terminal_text(value))


def _count(value: Any) -> str:
    """A count as the script's ``fmt`` writes it and the CLI's tables print it (``1234``: no thousands
    separator, :func:`~dsh_audit.report._cells.table_cell`); anything else as text."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else _text(value)


def _ratio(value: Any) -> str:
    return f"{100 * value:.1f}%" if isinstance(value, (int, float)) and not isinstance(value, bool) else "n/a"


def _cost(cost: Any) -> str:
    """A log's cost as the script's session list says it (``costUsd``), by the one rule
    (:meth:`Costs.shown`): ``$x``, ``≥$x`` when some requests are unpriced, ``$?`` when none was
    priced; ``n/a`` when the log was not priced (no cost, or none and no request unpriced).

    Example:
        >>> [_cost({"requests": 2, "cost_usd": {"total": 0.25}, "unpriced_requests": n}) for n in (0, 1)]
        ['$0.2500', '≥$0.2500']
        >>> _cost({"requests": 2, "cost_usd": None, "unpriced_requests": 2}), _cost(None)
        ('$?', 'n/a')
    """
    if not isinstance(cost, Mapping):
        return "n/a"
    total = (cost.get("cost_usd") or {}).get("total")
    unpriced = _number(cost.get("unpriced_requests"))
    known = total if isinstance(total, (int, float)) and not isinstance(total, bool) else None
    if known is None and not unpriced:
        return "n/a"
    return Costs.shown(known, requests=_number(cost.get("requests")), unpriced=unpriced)


def _number(value: Any) -> int:
    """A count of the page's data, 0 when it holds none."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _causes(by_cause: Mapping[str, Any]) -> str:
    """Breaks by cause as the script says them: ``header_change 5, prune 1``."""
    return ", ".join(f"{_text(cause)} {_count(n)}" for cause, n in by_cause.items())


def _row(key: str, name: str, value: str) -> str:
    return f'<tr data-key="{key}"><th>{name}</th><td>{value}</td></tr>\n'


def _table(cls: str, header: Sequence[tuple[str, str]], rows: Iterable[Sequence[str]]) -> str:
    """A table of already escaped cells, a row a line (for the file read as text); ``header``: each
    column's name (the page's own words) and its cells' class (``num``, ``key``: kept on one line)."""
    head = "".join(f"<th>{name}</th>" for name, _ in header)
    tags = [f'<td class="{c}">' if c else "<td>" for _, c in header]
    body = "".join("<tr>" + "".join(f"{tag}{cell}</td>" for tag, cell in zip(tags, row, strict=True)) + "</tr>\n"
                   for row in rows)
    return f'<table class="{cls}">\n<tr>{head}</tr>\n{body}</table>\n'


def _headline(data: Mapping[str, Any]) -> str:
    """The page's verdict and its counts, as the script's header says them."""
    headline, counts = data["headline"], data["counts"]
    cls = {"passed": "pass", "failed": "failed"}.get(headline["state"], "nothing")
    tail = f"policy {_text(data['policy'])} \u00b7 {_text(data['tool'])}"
    if data["sessions"]:
        tail = (f"{len(data['sessions'])} log(s) \u00b7 {_count(counts['error'])} error(s), "
                f"{_count(counts['warning'])} warning(s), {_count(counts['info'])} info, "
                f"{_count(counts['failing'])} failing \u00b7 " + tail)
    return f'<p><span class="{cls}">{_text(headline["text"])}</span> <span class="muted">\u00b7 {tail}</span></p>\n'


def _lost(row: Mapping[str, Any], reusable: Any = ...) -> str:
    """Lost tokens, the ``reusable`` cache reads they are measured from (``?`` when unknown, None: no
    request logged its cache reads; nothing when not given) and their cost, as the script's totals say
    them (``lostText``)."""
    base = (f" of {_count(reusable)} reusable" if isinstance(reusable, int) else " of ? reusable" if reusable is None
            else "")
    return (_count(row["lost_tokens"]) + ("+?" if row.get("lost_unknown_requests") else "") + base
            + f" ({_text(row['shown']['lost'])})")


def _totals(totals: Mapping[str, Any], failing: Any) -> str:
    """The totals of the page's logs: ``usage --json``'s total, the cache's hit ratio and breaks by
    cause, and the failing findings; then the breaks by cause with what they lost."""
    x, cache = totals["total"], totals.get("cache") or {}
    unpriced = ", ".join(f"{_count(n)} {_text(why)}" for why, n in (totals.get("unpriced") or {}).items())
    failed = totals.get("logs_failed")
    title = f"Totals of the {_count(totals['sessions'])} session(s) read" + (
        f"; {_count(failed)} log(s) not read, left out of every sum (lower bounds)" if failed else "")
    causes = _causes(cache.get("breaks_by_cause") or {})
    rows = [_row("requests", "requests", _count(x["requests"])), _row("cost", "cost", _text(x["shown"]["cost"])),
            _row("no-cache", "without cache", _text(x["shown"]["no_cache"])),
            _row("off-peak", "all off-peak", _text(x["shown"]["off_peak"])),
            _row("lost", "lost tokens (cost)", _lost(x, cache.get("reusable"))), _row("break-cost", "breaks cost", _text(x["shown"]["break"])),
            _row("unpriced", "unpriced requests",
                 _count(x["unpriced_requests"]) + (f" ({unpriced})" if unpriced else ""))]
    if cache:
        read, prompt = ("?" if cache[key] is None else _count(cache[key]) for key in ("cache_read", "prompt_tokens"))
        rows += [_row("hit", "hit ratio", f"{_ratio(cache['hit_ratio'])} ({read} of {prompt} prompt tokens)"),
                 _row("breaks", "breaks", _count(cache["breaks"]) + (f" ({causes})" if causes else ""))]
    rows.append(_row("failing", "failing findings", _count(failing)))
    return f"<h2>{title}</h2>\n<table class=\"totals\">\n{''.join(rows)}</table>\n" + _break_causes(cache)


def _break_causes(cache: Mapping[str, Any]) -> str:
    """The breaks by cause, as the script's table of the totals says them (``breakCauses``)."""
    summary = cache.get("break_summary") or []
    if not summary:
        return ""
    rows = [(_text(c["cause"]), _count(c["count"]), "?" if c.get("pot") is None else _count(c["pot"]),
             _count(c["lost"]) + (f" + ? ({_count(c['unknown'])} unknown)" if c["unknown"] else ""),
             _cause_cost(c), _count(_nothing(c))) for c in summary]
    # the base of the breaks that lost tokens to the cause (a break's whole base), as the header says
    return _table("break-causes", (("break cause", ""), ("breaks", "num"), ("reusable of breaks that lost", "num"),
                                   ("tokens lost", "num"), ("cost", "num"), ("lost nothing", "num")), rows)


def _nothing(cause: Mapping[str, Any]) -> int:
    """How many breaks of a cause lost nothing (a log's overview lists their requests, the totals count them)."""
    return cause["nothing"] if isinstance(cause["nothing"], int) else len(cause["nothing"])


def _cause_cost(cause: Mapping[str, Any]) -> str:
    """What a cause's breaks lost, by the one rule (:meth:`Costs.shown`): owed by those that lost
    tokens or an unknown amount, unknown for those unpriced or whose loss is unknown, so ``≥$x``
    when some of them are, ``$?`` when all are (as the totals' break cost says), never an exact
    ``$x`` beside an unknown loss.

    Example:
        >>> [_cause_cost({"count": 2, "cost": 0.5, "nothing": 0, "unpriced": u, "unknown": x}) for u, x in
        ...  ((0, 0), (1, 0), (0, 1), (1, 1))]
        ['$0.5000', '≥$0.5000', '≥$0.5000', '$?']
    """
    unknown = cause["unpriced"] + cause["unknown"]
    return Costs.shown(cause["cost"], requests=cause["count"], unpriced=unknown,
                       owing=cause["count"] - _nothing(cause), owing_unpriced=unknown)


#: The session list's columns and their cells' classes.
_COLUMNS = (("verdict", ""), ("session", ""), ("id", "key"), ("project", ""), ("requests", "num"), ("cost", "num"),
            ("breaks", ""))


def _relation(family: Mapping[str, Any]) -> str:
    """A child's relation as the script's list says it: ``fork at seq 12``, ``subagent``, and its
    parent's id when the parent is not on the page (else the child is listed right under it)."""
    return (_text(family["relation"]) + (f" of {_text(family['parent_id'])}" if family["parent"] is None else "")
            + (f" at seq {_text(family['seed'])}" if family["seed"] is not None else ""))


def _session(head: Mapping[str, Any], depth: int) -> list[str]:
    """A log's row of the list: its verdict, title (a child: its relation, under its parent),
    short id, project, requests, cost and breaks; a log that could not be read: its error."""
    o, family = head["overview"], head.get("family")
    name = _text(o["title"] or head["session_id"] or head["path"])
    if family:
        name = "\u21b3 " * min(depth, 6) + name + f' <span class="muted">({_relation(family)})</span>'
    verdict = (f'<span class="failed">\u2716 {_text(head["verdict"])}</span>' if head["failed"]
               else f"\u2714 {_text(head['verdict'])}")
    if head["error"] is not None and not o["requests"]:
        why = "could not be read" if head.get("unreadable") else "refused"  # a refusal is DSH's (exit 1)
        name += f'<br><span class="failed">{why}: {_text(head["error"])}</span>'
        return [verdict, name, _text(head["short_id"] or "no id"), _text(head["project"] or "no project"), "-", "n/a",
                "-"]
    unexplained = f"; {_count(head['unexplained'])} unexplained" if head.get("unexplained") else ""
    causes = _causes(o["breaks_by_cause"])
    return [verdict, name, _text(head["short_id"] or "no id"), _text(head["project"] or "no project"),
            _count(o["requests"]), _cost(o["cost"]),
            _count(len(o["break_details"])) + (f" ({causes}{unexplained})" if causes else unexplained)]


def static_summary(data: Mapping[str, Any], sessions: Sequence[Mapping[str, Any]]) -> str:
    """The page's summary without its script: ``data``, the page's head (its ``sessions`` key
    aside, :func:`._html._data_chunks`), and ``sessions``, each log's head, in the page's order of
    logs (their ``order`` says the list's).

    Example:
        >>> page = {"headline": {"state": "none", "text": "no log to check"}, "counts": {}, "policy": "defaults",
        ...         "tool": "dsh-audit 1", "sessions": []}
        >>> html = static_summary(page, [])
        >>> print(html[html.index("<p>"):html.index("<p class")])
        <p><span class="nothing">no log to check</span> <span class="muted">\u00b7 policy defaults \u00b7 dsh-audit 1</span></p>
        <BLANKLINE>
    """
    parts = ['<noscript><section id="static-summary" aria-label="summary of the page without JavaScript">\n',
             _headline({**data, "sessions": sessions})]
    if not sessions:
        parts.append(f'<p class="muted">{_text(NO_LOG)}</p>\n')
    else:
        parts += ['<p class="muted">JavaScript is off: this is the page\'s summary. Its timelines and each '
                  "request's drill-down need JavaScript; in a terminal, dsh-audit check, explain and show "
                  "say the same.</p>\n",
                  _totals(data["totals"], data["counts"]["failing"]),
                  f"<h2>Sessions ({len(sessions)})</h2>\n",
                  _table("session-list", _COLUMNS, (_session(sessions[k], depth) for k, depth in data["order"]))]
    parts.append("</section></noscript>\n")
    return "".join(parts)
