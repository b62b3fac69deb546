"""The forensics page of ``dsh-audit report``: one self-contained HTML file.

No network and no CDN: the CSS and the script are inline (:mod:`._html_assets`). Log text never
becomes markup: every value travels as JSON inside ``<script type="application/json">`` with
``<``, ``>`` and ``&`` written as ``\\u003c``, ``\\u003e``, ``\\u0026`` (so no ``</script>`` can
end the block), and the page script renders it with ``textContent`` only.

A reader with no script (JavaScript off, a text browser, the file read as text) gets the page's
headline, totals and session list as static HTML in a ``<noscript>`` block before the data
(:mod:`._html_static`), drawn from the same heads the data holds, every text escaped.

Size: each distinct message is stored once per session (keyed by the seq behind it, checked by
value; messages without a seq by identity, then by their JSON text). A request does not list its
messages: it names a base request (the previous agent-loop request, whose history it extends) and
the positions where its own list differs from the base's (appended messages, a pruned message
replaced in place), so the page grows with the distinct messages, not requests x history. The
script assembles a request's history only when the request is opened (or searched), and
:func:`iter_html` yields the page in pieces so the command writes it without building one string.

Each request's record is encoded as it comes (:class:`._html_page.SessionPage`; its texts and their
store: :mod:`._html_texts`). For a log that ``check`` reads as it is replayed (no fork or subagent
child, no capture: ``run_check(record=SessionPages())``), that happens while the log is replayed,
the texts go to a temporary file and no request is kept; a request's findings, known only at the
end of the read, are added when the page is written. The page is the same byte for byte as the one
made from the whole session's requests. The other logs' records are encoded when the page is begun,
their texts to temporary files too (:func:`_session_page`): every log's head is known before the
page's data, for its static summary, and no log's texts are kept in memory.

Cost comes from the cache ledger (:func:`dsh_audit.cache.price_entry` per request, the session's
``cost`` summary that ``cache --json`` prints, its ``off_peak_cost_usd`` the figure
``usage --json`` gives, a one-rate request's at its cost), never recomputed here; the breaks by cause
(:func:`._html_sessions._break_summary`) add up the breaks' own figures. The page's ``totals``
(shown atop a page of several logs) are ``usage --json``'s for the same logs, made by
:func:`dsh_audit.cache.usage_table` from the same priced entries (:func:`_totals`; a page keeps its
requests' entries for them, as ``usage``'s ledgers do), and their ``cache``: the page-wide hit ratio
and breaks by cause, ``stats``' for the same logs (:func:`._html_sessions._page_cache`). A header change's ``explain`` lines are
:func:`dsh_audit.attribution.format_transition`'s (:func:`._html_page._field_lines`). Each log has
a deep-link ``anchor`` (:func:`._html_sessions._anchors`: its session id when unique).

The session list of a multi-session page is ordered by :mod:`._html_sessions` (``order``:
``[position, depth]`` pairs): failing sessions first, then those with unexplained breaks, then the
rest, newest first within each group, every fork or subagent child right under its parent (a family
ranks by its worst member, so a failing child is never buried). Nothing is read again: everything
is what ``check`` found (a log's project is its header's ``cwd``, whole, as ``dsh-audit sessions``
shows it: a drive or server kept); a child's parent is its header's ``parentSession`` (a fork:
with ``seedLength``), the parent attribution compares its first request with, and a log's first and
last activity are its own timestamps (:meth:`dsh_audit.session.Session.span`, the dates ``dsh-audit
sessions`` shows).

The page's ``headline`` (:func:`._html_sessions._headline`) says what failed, by cause, counted as
``check --json-report`` counts the failing findings, then what did not fail (``check failed: 6
unrendered request(s) · 10 explained break(s)``); a page of no log says there was none to check,
neither passed nor failed (``report`` still exits 0 then: it describes)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from .._listing import billed_model_text
from .._version import __version__
from ..cache import PriceBook, SessionLedger, UsageRow, iso_utc, load_prices, price_entry, usage_tables
from ._html_assets import CSS, SCRIPT
from ._html_page import SessionPage, SessionPages
from ._html_sessions import _anchors, _headline, _lineage, _order, _overview, _page_cache, _unexplained, _verdict
from ._html_static import NOSCRIPT_STYLE, _escaped, static_summary
from ._html_texts import _script_json
from .terminal import short_ids, terminal_text

__all__ = ["build_report_data", "format_html", "iter_html", "verdict_words"]

#: About how many characters :func:`iter_html` joins into one piece of a session's lists.
_PIECE = 1 << 16


def _priced(check: Any, prices: PriceBook) -> list[Any]:
    """Each request's priced ledger entry: as the page of a log checked while it was replayed
    kept them, else (its requests are in memory) priced now, by its cache verdict."""
    if isinstance(check.record, SessionPage):
        return check.record.entries
    verdicts = {v.index: v for v in check.cache.verdicts} if check.cache is not None else {}
    captured = check.captured_usage  # --capture: what prices a request whose log holds no usage
    return [price_entry(r, prices, verdicts.get(r.index), captured=captured.get(r.index)) for r in check.requests]


def _session_page(check: Any, entries: Sequence[Any], spool: SessionPages) -> SessionPage:
    """The page a log's records are read from: the one ``check`` kept while it replayed the log,
    else (its requests are in memory) one made now, its texts in ``spool``'s temporary files, so
    the pages of all the logs can be made before any is written (their heads go into the page's
    static summary, :mod:`._html_static`) and keep no text in memory."""
    if isinstance(check.record, SessionPage):
        return check.record
    page = spool()
    transitions = {t.request: t for t in check.transitions}
    verdicts = {v.index: v for v in check.cache.verdicts} if check.cache is not None else {}
    rows: dict[int, Any] = {}
    for row in check.captures:
        if row.request is not None and not row.pairing.retry:
            rows.setdefault(row.request.index, row)
    for r, entry in zip(check.requests, entries, strict=True):
        page.add(r, transitions.get(r.index), verdicts.get(r.index), entry, row=rows.get(r.index))
    return page


class _Session:
    """A log's part of the page: its head (what the session list and the overview say, read by the
    script and by the static summary alike), its page of records and its findings by request."""

    __slots__ = ("about", "head", "page")

    def __init__(self, check: Any, page: SessionPage, place: dict[str, Any]) -> None:
        self.page = page
        self.about = check.findings_by_request()
        self.head = {"path": check.path, "session_id": check.session_id, "capture": check.capture_path,
                     "error": check.error, "failed": check.failed, "findings": [f.to_json() for f in check.log_findings],
                     "unreadable": check.unreadable,  # its error: no line read (exit 2), else a refusal (DSH801/802)
                     "overview": _overview(check, page, self.about), "verdict": _verdict(check),
                     "unexplained": _unexplained(check), "family": place["family"],
                     "activity": [iso_utc(place["first"]), iso_utc(place["last"])],
                     "anchor": place["anchor"], "short_id": place["short_id"], "project": check.cwd or None}

    def chunks(self) -> Iterator[str]:
        """The log's data: its head, then its messages' seqs, headers, messages and requests."""
        page = self.page
        yield _script_json(self.head)[:-1] + ',"mseq":['  # the head's last key: each message's seq
        yield from _listed(page.messages.seqs())
        yield '],"headers":[' + ",".join(page.headers.texts) + '],"messages":['
        yield from _listed(page.messages)
        yield '],"requests":['
        yield from _listed(page.requests(self.about))
        yield "]}"


def _listed(texts: Iterable[str]) -> Iterator[str]:
    """``texts`` separated by commas, in pieces that each end with the text taking them to
    :data:`_PIECE` characters (the last may be shorter): a few hundred writes for a long session,
    not one per message."""
    batch: list[str] = []
    size = 0
    sep = ""
    for text in texts:
        batch.append(text)
        size += len(text)
        if size >= _PIECE:
            yield sep + ",".join(batch)
            batch, size, sep = [], 0, ","
    if batch:
        yield sep + ",".join(batch)


def _entries(result: Any, prices: PriceBook) -> list[list[Any]]:
    """Each log's priced ledger entries (:func:`_priced`), in the order of ``result.sessions``."""
    return [_priced(check, prices) for check in result.sessions]


def _parts(result: Any, priced: list[list[Any]]) -> tuple[dict[str, Any], list[_Session]]:
    """The page's head (its data but the logs') and each log's part (``priced``: each log's priced
    entries, :func:`_entries`, dropped here once its page has them)."""
    lineage = _lineage(result.sessions)
    names = short_ids(c.session_id for c in result.sessions if c.session_id)
    for place, anchor, check in zip(lineage, _anchors(result.sessions), result.sessions, strict=True):
        place["anchor"] = anchor
        place["short_id"] = names.get(check.session_id) if check.session_id else None
    # a log that could not be read has no ledger, as usage has none of it: its totals are lower bounds
    ledgers = [SessionLedger(check.path, check.session_id or "", tuple(entries))
               for check, entries in zip(result.sessions, priced, strict=True) if check.error is None]
    failed = sum(check.error is not None for check in result.sessions)
    head = {"tool": f"dsh-audit {__version__}", "passed": result.passed, "headline": _headline(result),
            "not_checked": [{"path": path, "reason": why} for path, why in getattr(result, "not_checked", ())],
            "counts": result.counts(), "policy": _policy(result), "unattached": [f.to_json() for f in result.unattached],
            "order": _order(result.sessions, lineage),
            "totals": {**_totals(ledgers, failed), "cache": _page_cache(result.sessions)}}
    del ledgers
    spool = SessionPages()
    sessions = []
    for k, check in enumerate(result.sessions):
        sessions.append(_Session(check, _session_page(check, priced[k], spool), lineage[k]))
        priced[k] = []  # a log's entries go once its page has them
    return head, sessions


def _data_chunks(head: dict[str, Any], sessions: list[_Session]) -> Iterator[str]:
    """The page's data (:func:`_parts`); each log's part is dropped once written."""
    yield _script_json(head)[:-1] + ',"sessions":['
    sessions.reverse()
    while sessions:
        yield from sessions.pop().chunks()
        if sessions:
            yield ","
    yield "]}"


def _policy(result: Any) -> str:
    """What the page's header says judged the check: the policy, and the baseline applied with
    the findings it accepts (``pyproject.toml; baseline b.json: 3 baselined``), as check's summary
    counts them."""
    baseline = getattr(result, "baseline", None)
    if baseline is None:
        return str(result.policy.source)
    return f"{result.policy.source}; baseline {baseline}: {result.counts()['baselined']} baselined"


#: The amounts of a row of :func:`_totals`, as ``usage`` names them (:meth:`dsh_audit.cache.UsageRow.shown`).
_AMOUNTS = ("cost", "no_cache", "off_peak", "lost", "break")


def _totals(ledgers: Sequence[SessionLedger], failed: int = 0) -> dict[str, Any]:
    """What the page's logs add up to, as ``dsh-audit usage --json`` gives it for the same logs
    (every request of each log that was read, whatever the ``--since`` window that chose the logs):
    :func:`dsh_audit.cache.usage_tables` of their priced requests, its ``total`` and its rows
    ``by_model`` and ``by_day``, each row its ``usage --json`` object and ``shown``, its key and each
    amount as ``usage`` shows them (``$x``, a lower bound ``≥$x``, unknown ``$?``: :meth:`UsageRow.shown`);
    ``logs_failed``, the ``failed`` logs the check could not read, left out of every sum: the
    total's amounts are then lower bounds (``cost_complete`` false, ``≥$x``), as ``usage``'s are.

    Example:
        >>> _totals([])["total"]["shown"]
        {'key': 'total', 'cost': '$0.0000', 'no_cache': '$0.0000', 'off_peak': '$0.0000', 'lost': '$0.0000', 'break': '$0.0000'}
        >>> _totals([], 1)["total"]["shown"]["cost"], _totals([], 1)["total"]["cost_complete"]
        ('≥$0.0000', False)
    """
    by_model, by_day = usage_tables(ledgers, by=("model", "day"))  # one pass, one total
    return {"sessions": by_model.sessions, "logs_failed": failed, "total": _usage_row(by_model.total, failed=failed),
            "by_model": [_usage_row(r) for r in by_model.rows], "by_day": [_usage_row(r) for r in by_day.rows],
            "unpriced": by_model.unpriced}


def _usage_row(row: UsageRow, *, failed: int = 0) -> dict[str, Any]:
    """A row of :func:`_totals`: its ``usage --json`` object (:meth:`UsageRow.to_json`; ``failed``:
    the logs a total left out) and ``shown``, its key and each amount as ``usage`` shows them (a model
    the price table bills with the other names its requests logged: :func:`billed_model_text`)."""
    key = billed_model_text(row.key, row.logged_models) if row.models is not None else row.key
    return {**row.to_json(failed=failed),
            "shown": {"key": key, **{name: row.shown(name, bound=bool(failed)) for name in _AMOUNTS}}}


def verdict_words(result: Any) -> str:
    """The run's verdict in the page's words, its headline's text (:func:`._html_sessions._headline`):
    ``check passed: 5 explained break(s)``, ``check failed: 6 unrendered request(s) · 10 explained
    break(s)``, ``check incomplete: no breaks; 1 log(s) could not be read (exit 2)``, ``no log to
    check``. The one wording of a verdict: ``report``'s ``wrote`` line says it, and the Markdown
    summary's heading (:func:`._markdown._verdict_head`), so no summary says ``passed`` over breaks
    it does not name."""
    return _headline(result)["text"]


def build_report_data(result: Any, *, prices: PriceBook | None = None) -> dict[str, Any]:
    """The JSON value the page script renders (sessions, requests, findings, ``totals``; no markup)."""
    priced = _entries(result, prices if prices is not None else load_prices())
    value: dict[str, Any] = json.loads("".join(_data_chunks(*_parts(result, priced))))
    return value


def _caveat_lines(caveats: Iterable[str]) -> str:
    """The summary's lines for what the price table could not know of the page's costs
    (:meth:`dsh_audit.cache.PriceBook.caveats`), one ``note:`` each, as the commands say them: a
    price table's name is the user's (or a checked-out repository's ``pyproject.toml``'s) text,
    so a control, C1 or bidi character is shown as its escape
    (:func:`~dsh_audit.report.terminal.terminal_text`), as the terminal and Markdown show it.

    Example:
        >>> _caveat_lines(["the deepseek price table lists no holidays of 2028 (a < b)"])
        '<p class="muted caveat">note: the deepseek price table lists no holidays of 2028 (a &lt; b)</p>'
        >>> _caveat_lines(["the x\u202e\x1b price table"])
        '<p class="muted caveat">note: the x\\\\u202e\\\\u001b price table</p>'
    """
    return "".join(f'<p class="muted caveat">note: {_escaped(terminal_text(text))}</p>' for text in caveats)


def _not_checked_lines(result: Any) -> str:
    """The page's lines for the logs of another agent the check left out
    (:attr:`~dsh_audit.gate.CheckResult.not_checked`: the run exits 2 for them), one ``not
    checked:`` each under the headline, static (with or without the script), the file's name and
    why escaped as every log text is (:func:`~dsh_audit.report.terminal.terminal_text`).

    Example:
        >>> class R: not_checked = (("c/x\x1b<b>.jsonl", "this is a codex session, not a DSH log"),)
        >>> _not_checked_lines(R())
        '<p class="muted caveat">not checked: c/x\\\\u001b&lt;b&gt;.jsonl: this is a codex session, not a DSH log</p>'
    """
    return "".join(f'<p class="muted caveat">not checked: {_escaped(terminal_text(path))}: '
                   f"{_escaped(terminal_text(why))}</p>" for path, why in getattr(result, "not_checked", ()))


def iter_html(result: Any, *, title: str = "dsh-audit report", prices: PriceBook | None = None) -> Iterator[str]:
    """The page of :func:`format_html` in pieces (a session's messages and requests some 64 KiB at a
    time: :func:`_listed`). The summary says, a line each, the caveats of the prices of the page's
    requests (:meth:`dsh_audit.cache.PriceBook.caveats`: a year the table's holiday list does not cover).
    Before the data, the page's headline, totals and session list are static HTML for a reader with
    no script (:func:`._html_static.static_summary`, from the heads the data then holds)."""
    prices = prices if prices is not None else load_prices()
    priced = _entries(result, prices)
    caveats = _caveat_lines(prices.caveats(entry for entries in priced for entry in entries))
    caveats = _not_checked_lines(result) + caveats  # under the headline, before what the prices could not know
    head, sessions = _parts(result, priced)
    yield (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{_escaped(title)}</title>\n<style>{CSS}</style>\n{NOSCRIPT_STYLE}</head>\n<body>\n"
        f"<header id=\"top\"><h1 id=\"title\">dsh-audit report</h1><div id=\"summary\"></div>{caveats}</header>\n"
    )
    yield static_summary(head, [part.head for part in sessions])
    yield (
        "<section id=\"totals\" aria-label=\"totals of the sessions on this page\" hidden></section>\n"
        "<div id=\"search-bar\"><input id=\"search\" type=\"search\" placeholder=\"search sessions and messages\" "
        "aria-label=\"search the sessions and the requests' messages\" autocomplete=\"off\">"
        "<span id=\"search-count\" class=\"muted\"></span><span id=\"session-count\" class=\"muted\"></span></div>\n"
        "<nav id=\"sessions\" aria-label=\"sessions\" hidden></nav>\n"
        "<main><section id=\"session\"><h2 id=\"session-title\"></h2><div id=\"session-info\"></div>"
        "<div id=\"overview\"></div>"
        "<div id=\"legend\"></div><div id=\"pager\"></div><div id=\"timeline\" class=\"timeline\" role=\"list\"></div>"
        "<div id=\"log-findings\"></div></section>\n"
        "<section id=\"detail\" aria-live=\"polite\"><p class=\"muted\">Click a request or a break marker.</p>"
        "</section></main>\n"
        "<script type=\"application/json\" id=\"dsh-data\">"
    )
    yield from _data_chunks(head, sessions)
    yield f"</script>\n<script>{SCRIPT}</script>\n</body>\n</html>\n"


def format_html(result: Any, *, title: str = "dsh-audit report", prices: PriceBook | None = None) -> str:
    """The self-contained HTML forensics page of a :class:`dsh_audit.gate.CheckResult`.

    ``title`` is the page title (escaped); the data is embedded as JSON and rendered by the
    inline script with ``textContent`` only; its summary is also escaped static HTML, in a
    ``<noscript>`` block for a reader with JavaScript off. ``prices`` prices the requests of the logs ``check``
    read whole (a fork or subagent child, a log with a capture; default: the packaged table and
    ``pyproject.toml``'s): pass the table the check priced with (``--prices``) so they and the
    page's totals are what ``usage --prices`` gives. :func:`iter_html` gives the same page in pieces.
    """
    return "".join(iter_html(result, title=title, prices=prices))
