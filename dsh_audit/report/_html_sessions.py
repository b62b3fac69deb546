"""The session list of the forensics page (:mod:`._html`): each log's overview and verdict in
words, its deep-link anchor, its project, its parent and time span, and the order of the list.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from ..cache import CacheTotals, iso_utc, usd_total
from ..gate import tally
from ..jsjson import has_surrogate
from ._html_page import BreakLoss, SessionPage, _break_lost


def _overview(check: Any, page: SessionPage, about: Mapping[int, Sequence[Any]]) -> dict[str, Any]:
    """The session's summary: the same numbers as ``check``'s table and ``cache --json``
    (``about``: the findings by request, which say which breaks fail)."""
    report = check.cache
    breaks = _break_details(check, page.breaks, about)
    return {"title": check.title,
            "models": list(page.models),
            "requests": page.count, "breaks": len(breaks), "break_details": [_detail(b) for b in breaks],
            "breaks_by_cause": _by_cause(breaks), "break_summary": _break_summary(breaks),
            "hit_ratio": report.ratio(report.actual_total) if report is not None else None,
            "prompt_tokens": report.known_sum(report.prompt_total) if report is not None else None,
            "cache_read": report.known_sum(report.actual_total) if report is not None else None,
            "cost": report.cost if report is not None else None,
            "first": iso_utc(page.span.first), "last": iso_utc(page.span.last)}


def _break_details(check: Any, lost: Mapping[int, BreakLoss],
                   about: Mapping[int, Sequence[Any]]) -> list[dict[str, Any]]:
    """The session's breaks (its transitions whose verdict is ``break``), each with its request
    ``i``, ``cause``, what it ``lost`` and its ``cost`` (``lost``: by request, as the page kept them,
    :attr:`SessionPage.breaks`; unknown, None, for a break with no cache verdict), the reusable cache
    reads that is measured from (``pot``, as a request's record names them), what it lost to each
    cause and what that cost (``by_cause`` and ``cost_by_cause``: :func:`._html_page._by_cause`;
    not in the page's data) and whether it
    ``fails`` (a failing finding of its request: the red of the page's legend; else the orange of a
    break the policy allows, as its marker on the timeline is drawn); ``about``: the findings by request."""
    breaks: list[dict[str, Any]] = []
    for t in check.transitions:
        if t.verdict == "break":
            tokens, cost, reusable, by_cause, costs = lost.get(t.request, (None, None, None, None, None))
            breaks.append({"i": t.request, "cause": t.cause, "lost": tokens, "cost": cost, "pot": reusable,
                           "by_cause": by_cause, "cost_by_cause": costs,
                           "fails": any(f.fails for f in about.get(t.request, ()))})
    return breaks


def _detail(brk: Mapping[str, Any]) -> dict[str, Any]:
    """A break as the page's data gives it: without its losses by cause, which only the summary
    (:func:`_break_summary`) reads."""
    return {key: value for key, value in brk.items() if key not in ("by_cause", "cost_by_cause")}


def _by_cause(breaks: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """How many ``breaks`` each cause has (``?``: none), by cause."""
    return dict(sorted(Counter(b["cause"] or "?" for b in breaks).items()))


def _kept_losses(check: Any) -> Mapping[int, BreakLoss]:
    """What each break of a log lost, by request (:func:`._html_page._lost`): as its page kept them
    when it was checked while replayed, else from its cache verdicts (its requests are in memory)."""
    if isinstance(check.record, SessionPage):
        return check.record.breaks
    verdicts = {v.index: v for v in check.cache.verdicts} if check.cache is not None else {}
    return {t.request: _break_lost(verdicts[t.request]) for t in check.transitions
            if t.verdict == "break" and t.request in verdicts}


def _page_cache(sessions: Sequence[Any]) -> dict[str, Any]:
    """The cache figures of the page's logs together (the totals atop a page of several): the
    prompt tokens and cache reads of each log's cache report summed (``cache --json``'s
    ``prompt_tokens`` and ``actual_cache_read``; a log that could not be read has none; None, unknown
    as ``stats`` has them, when no request logged both: :meth:`CacheTotals.known_of`), their
    ``hit_ratio`` (None when no prompt token was measured), as ``stats`` gives it for the same logs,
    the reusable cache reads the tokens lost are measured from (``reusable``: ``cache --json``'s
    ``reusable_cache_read`` summed; None, unknown as ``stats`` has it, when no request logged its
    cache read: review C of session 45, F7),
    and the breaks, by cause (``breaks_by_cause``, as each log's ``cache --json`` and ``stats``'
    ``attribution_breaks`` count them) and with what they lost (``break_summary``, as a log's
    overview says it: :func:`_break_summary`, ``nothing`` then the count of the breaks that lost
    nothing, whose requests are each log's own)."""
    prompt = read = reusable = requests = known = logged = 0
    breaks: list[dict[str, Any]] = []
    for check in sessions:
        report = check.cache
        if report is not None:
            prompt, read = prompt + report.prompt_total, read + report.actual_total
            reusable, logged = reusable + report.potential_total, logged + report.known_count + report.sizeless_count
            requests, known = requests + report.request_count, known + report.known_count
        breaks += _break_details(check, _kept_losses(check), {})
    summary = [{**row, "nothing": len(row["nothing"])} for row in _break_summary(breaks)]
    return {"prompt_tokens": CacheTotals.known_of(prompt, requests=requests, known=known),
            "cache_read": CacheTotals.known_of(read, requests=requests, known=known),
            "hit_ratio": read / prompt if prompt else None,
            "reusable": reusable if logged or not requests else None,
            "breaks": len(breaks), "breaks_by_cause": _by_cause(breaks), "break_summary": summary}


def _break_summary(breaks: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the breaks lost, by cause, most tokens lost first, as ``stats``' by_cause and
    cost_by_cause's "of which breaks" give them (review C of session 45, F5: a break that also went
    cold lost the rest to ``cold_ttl``, which is no break's cause): ``count``, the breaks of the
    cause; the tokens ``lost`` to it by the breaks (each break's ``by_cause``), of ``pot`` (the
    reusable cache reads of the breaks that lost tokens to it, a break's whole base, as ``stats``
    sums a cause's ``reusable_cache_read``), and their ``cost`` (``cost_by_cause``; the causes add
    up to the breaks' cost); ``nothing`` (the requests of the cause's breaks that lost no token),
    ``unknown`` (its breaks with no cache verdict, or whose cache reads were not logged: lost
    unknown) and ``unpriced`` (breaks that lost tokens to it at no known price: ``cost`` is then a
    lower bound).

    Example:
        >>> _break_summary([{"i": 3, "cause": "prune", "lost": 0, "by_cause": {}, "cost_by_cause": {}, "pot": 40},
        ...                 {"i": 5, "cause": "prune", "lost": 10, "by_cause": {"prune": 4, "cold_ttl": 6},
        ...                  "cost_by_cause": {"prune": 0.2, "cold_ttl": 0.3}, "pot": 30},
        ...                 {"i": 7, "cause": None, "lost": None, "by_cause": None, "cost_by_cause": None, "pot": 8}])
        ... # doctest: +NORMALIZE_WHITESPACE
        [{'cause': 'cold_ttl', 'count': 0, 'lost': 6, 'pot': 30, 'cost': 0.3, 'nothing': [], 'unknown': 0,
          'unpriced': 0},
         {'cause': 'prune', 'count': 2, 'lost': 4, 'pot': 30, 'cost': 0.2, 'nothing': [3], 'unknown': 0,
          'unpriced': 0},
         {'cause': '?', 'count': 1, 'lost': 0, 'pot': 0, 'cost': 0.0, 'nothing': [], 'unknown': 1, 'unpriced': 0}]
    """
    rows: dict[str, dict[str, Any]] = {}
    costs: dict[str, list[float]] = {}

    def row(cause: str) -> dict[str, Any]:
        return rows.setdefault(cause, {"cause": cause, "count": 0, "lost": 0, "pot": 0, "cost": 0.0, "nothing": [],
                                       "unknown": 0, "unpriced": 0})

    for b in breaks:
        own = row(b["cause"] or "?")
        own["count"] += 1
        if b["by_cause"] is None:
            own["unknown"] += 1
            continue
        if not b["lost"]:
            own["nothing"].append(b["i"])
        for cause, tokens in b["by_cause"].items():
            _add_loss(row(cause), costs.setdefault(cause, []), tokens, b["pot"],
                      None if b["cost_by_cause"] is None else b["cost_by_cause"].get(cause, 0.0))
    for cause, summed in rows.items():
        summed["cost"] = usd_total(costs.get(cause, ()))  # exact nano-dollar sums, as every view sums money
    return sorted(rows.values(), key=lambda r: (-r["lost"], -r["count"], r["cause"]))


def _add_loss(row: dict[str, Any], costs: list[float], tokens: int, reusable: int | None, cost: float | None) -> None:
    """One break's loss to ``row``'s cause: its tokens, its reusable reads (what they are measured
    from, unknown once one is) and its cost (``unpriced`` when it has none)."""
    if not tokens:
        return
    row["lost"] += tokens
    row["pot"] = None if row["pot"] is None or reusable is None else row["pot"] + reusable
    if cost is None:
        row["unpriced"] += 1
    else:
        costs.append(cost)


def _unexplained(check: Any) -> int:
    """Breaks the log does not explain, as ``breaks --fail-on unexplained``, check's DSH821 and the
    ``cache`` classification count them (:attr:`dsh_audit.attribution.Transition.is_unexplained`)."""
    return sum(1 for t in check.transitions if t.is_unexplained)


def _verdict(check: Any) -> str:
    """The session's verdict in words: what failed, by cause, as the page's headline says it
    (:func:`_failed_by_cause`), ``failed: 2 unrendered request(s)``, or ``passed: 5 explained
    break(s)``; the findings a baseline accepts (``check --baseline``) counted as check counts
    them, ``passed: 1 baselined finding(s), ...`` (``failed: 1 different request(s), 1 baselined``).

    Example:
        >>> class F:
        ...     def __init__(self, rule, fails): self.rule, self.fails, self.baselined, self.lines = rule, fails, not fails, 1
        >>> class C:
        ...     failed, transitions, error, refusal_passes = True, (), None, False
        ...     findings = (F("DSH815", True), F("DSH815", True), F("DSH811", False))
        >>> _verdict(C())
        'failed: 2 unrendered request(s), 1 baselined'

    The capture found beside the log that cannot be read fails it too (its DSH802, the log's
    ``capture_refusal``): counted as that capture, ``failed: 1 unreadable capture(s)``. A log DSH
    refuses (its DSH801: a bad header) fails as ``failed: 1 refused log(s)``, one not a line of
    which could be read (a FIFO, no read permission) as ``failed: 1 unreadable log(s)``
    (:data:`_FAILED_AS`); such a log, its refusal failing nothing (its
    :attr:`~dsh_audit.gate.SessionCheck.status` ``unreadable``), passed nothing: the run is
    incomplete for it, ``incomplete: could not be read (exit 2)``. A log DSH refuses whose refusal
    the policy passes (``fail-on-refusal = false``, its rule ignored or baselined) is named, never
    a bare ``passed: no breaks`` (:attr:`~dsh_audit.gate.SessionCheck.refusal_passes`): ``passed: 1
    refused log(s) passing by policy``.
    """
    refusal = getattr(check, "capture_refusal", None)
    capture = () if refusal is None else (refusal,)
    findings = (*check.findings, *capture)
    baselined = tally(f for f in findings if f.baselined)
    refused = int(check.refusal_passes)
    if check.failed:
        unread = (check.path,) if getattr(check, "unreadable", False) else ()
        causes = _failed_by_cause(findings, captures=capture, unread=unread)[1]
        return "failed: " + ", ".join([*causes, *([f"{baselined} baselined"] if baselined else []),
                                       *([f"{refused} {_REFUSED_PASSING}"] if refused else [])])
    if check.status == "unreadable":
        return "incomplete: could not be read (exit 2)"
    return "passed: " + (", ".join(_passing(check.transitions, baselined=baselined, refused=refused)) or "no breaks")


#: What a log DSH refuses counts when its refusal fails nothing
#: (:attr:`~dsh_audit.gate.SessionCheck.refusal_passes`), in the page's headline and a session's
#: verdict: it passed no check, so it is named, never ``no breaks``.
_REFUSED_PASSING = "refused log(s) passing by policy"


def _passing(transitions: Iterable[Any], *, baselined: int, failed: Mapping[str, int] | None = None,
             refused: int = 0) -> list[str]:
    """What did not fail, in words: the ``baselined`` findings, the explained breaks and the
    unexplained ones the policy allows, leaving out the breaks ``failed`` counts (failing findings
    by rule: ``DSH821``, an unexplained break; ``DSH822``, a cause the policy does not allow), then
    the ``refused`` logs whose refusal the policy passes (:attr:`~dsh_audit.gate.SessionCheck.refusal_passes`)."""
    failed = failed or {}
    breaks = unexplained = 0
    for t in transitions:
        if t.verdict == "break":
            breaks += 1
            unexplained += t.is_unexplained
    explained = breaks - unexplained - failed.get("DSH822", 0)
    unexplained -= failed.get("DSH821", 0)
    parts = [f"{baselined} baselined finding(s)"] if baselined else []
    parts += [f"{explained} explained break(s)"] if explained else []
    if unexplained:
        parts.append(f"{unexplained} unexplained break(s) the policy allows")
    return parts + ([f"{refused} {_REFUSED_PASSING}"] if refused else [])


#: What a failing finding of a ``check`` rule counts, in the page's headline and a session's
#: verdict; a validation rule's (``DSH1xx``-``DSH7xx``) is a ``validation finding``. A DSH801 is a
#: log DSH refuses (a bad header: a finding, exit 1, its why the log's error entry), unless not a
#: line of its log could be opened or read (:data:`_UNREADABLE`: bad input, exit 2), as the exit code splits them.
_FAILED_AS = {"DSH801": "refused log(s)", "DSH802": "log(s) that cannot be replayed",
              "DSH810": "log(s) with no capture", "DSH811": "different request(s)",
              "DSH812": "equivalent request(s)", "DSH813": "unmatched request(s)",
              "DSH814": "unexplained capture(s)", "DSH815": "unrendered request(s)",
              "DSH821": "unexplained break(s)", "DSH822": "break(s) of a cause the policy does not allow",
              "DSH831": "log(s) below the cache-hit ratio bound",
              "DSH832": "log(s) whose cache-hit ratio cannot be measured"}
#: What the DSH802 of a capture found beside logs counts (the run's finding, at the capture): its
#: logs were replayed, checked without it, so it is no log that cannot be replayed.
_CAPTURE_REFUSAL = "unreadable capture(s)"
#: What the DSH801 of a log not a line of which could be read counts (a FIFO, a dangling link, no
#: read permission: :attr:`~dsh_audit.gate.SessionCheck.unreadable`, the run's exit 2).
_UNREADABLE = "unreadable log(s)"


def _failed_by_cause(findings: Iterable[Any], *, captures: Collection[Any] = (),
                     unread: Collection[str] = ()) -> tuple[Counter[str], list[str]]:
    """The failing ones of ``findings``, counted as ``check --json-report`` counts them: by rule,
    and in words by cause (:data:`_FAILED_AS`), the page's headline and each session's verdict; a
    DSH802 among ``captures`` (the run's findings of no log) is a capture's (:data:`_CAPTURE_REFUSAL`),
    a DSH801 at a path of ``unread`` (the logs not a line of which could be read,
    :attr:`~dsh_audit.gate.CheckResult.unreadable`) an unreadable log's (:data:`_UNREADABLE`), not a refused one's.
    A folded run of lines (:attr:`dsh_audit.gate.Finding.lines`) counts each, as the counts do.

    Example:
        >>> class F:
        ...     def __init__(self, rule): self.rule, self.fails, self.lines = rule, True, 1
        >>> _failed_by_cause([F("DSH815"), F("DSH203"), F("DSH815"), F("DSH101")])
        (Counter({'DSH815': 2, 'DSH101': 1, 'DSH203': 1}), ['2 validation finding(s)', '2 unrendered request(s)'])
        >>> capture = F("DSH802")
        >>> _failed_by_cause([F("DSH802"), capture], captures=[capture])[1]
        ['1 log(s) that cannot be replayed', '1 unreadable capture(s)']
        >>> refused, fifo = F("DSH801"), F("DSH801")
        >>> refused.path, fifo.path = "a.jsonl", "b.jsonl"
        >>> _failed_by_cause([refused, fifo], unread={"b.jsonl"})[1]
        ['1 refused log(s)', '1 unreadable log(s)']
    """
    failing = sorted((f for f in findings if f.fails), key=lambda f: f.rule)
    words: Counter[str] = Counter()
    rules: Counter[str] = Counter()
    for f in failing:
        if f.rule == "DSH802" and any(f is c for c in captures):
            said = _CAPTURE_REFUSAL
        elif f.rule == "DSH801" and f.path in unread:
            said = _UNREADABLE
        else:
            said = _FAILED_AS.get(f.rule, "validation finding(s)")
        words[said] += f.lines
        rules[f.rule] += f.lines
    return rules, [f"{n} {what}" for what, n in words.items()]


def _headline(result: Any) -> dict[str, str]:
    """The page's verdict in words (``state``: ``passed``, ``failed``, ``incomplete`` when every
    checked log passed but logs of another agent were left out or logs could not be read, their
    refusals passing (the run exits 2 for them: :attr:`~dsh_audit.gate.CheckResult.verdict`), or
    ``none`` when there was no log to check: a page that checked nothing neither passes nor fails):
    what failed, by cause (:func:`_failed_by_cause`), then what did not fail (:func:`_passing`, the
    logs DSH refused whose refusal the policy passes named:
    :attr:`~dsh_audit.gate.SessionCheck.refusal_passes`; ``no breaks``, or
    ``no log read`` when every log was refused or could not be read), e.g. ``check failed: 6
    unrendered request(s) · 10 explained break(s)``, ``check passed: 10 explained break(s)``,
    ``check passed: 1 refused log(s) passing by policy``; then the logs
    left out, in check's words (:meth:`~dsh_audit.gate.CheckResult.not_checked_said`).

    Example:
        >>> class R:
        ...     sessions, findings, baselined, passed = (), (), (), True
        ...     def not_checked_said(self): return ""
        >>> _headline(R())
        {'state': 'none', 'text': 'no log to check'}
    """
    left = result.not_checked_said()
    if not result.sessions:
        return {"state": "incomplete" if left else "none", "text": "no log to check" + left}
    unread = getattr(result, "unreadable", ())
    failed, parts = _failed_by_cause(result.findings, captures=getattr(result, "unattached", ()), unread=set(unread))
    parts += _passing((t for c in result.sessions for t in c.transitions), failed=failed,
                      baselined=tally(result.baselined), refused=sum(c.refusal_passes for c in result.sessions))
    state = "failed" if not result.passed else "incomplete" if left else "passed"
    read = any(c.error is None for c in result.sessions)  # "no breaks" of no log read says nothing
    said = " \u00b7 ".join(parts) or ("no breaks" if read else "no log read")
    return {"state": state, "text": f"check {state}: {said}{left}"}


def _family(check: Any) -> tuple[str, str, int | None] | None:
    """``(parent id, relation, seed)`` of a fork or subagent child: its header's ``parentSession``,
    a fork's ``seedLength`` (as attribution pairs its first request with the parent's)."""
    if check.parent_id is None:
        return None
    return (check.parent_id, "fork", check.seed_length) if check.seed_length else (check.parent_id, "subagent", None)


def _anchors(sessions: Sequence[Any]) -> list[str]:
    """Each log's deep-link key (``#<key>/request-N`` on the page, the key URL-escaped): its session
    id when no other log of the page has it, so a link stays valid whatever else the page lists;
    else the id and its rank among the files of that id by path (``id~2``: the same key in a report
    that lists those files in another order), and ``log-K`` (its position) for a log with no id.
    An id no URL can hold (a lone surrogate) is written with ``\\udXXX`` escapes and ranked, so
    that its link is never the page's fallback ``#session-K``, which another log's id may be.

    Example:
        >>> class C:
        ...     def __init__(self, session_id, path="x"): self.session_id, self.path = session_id, path
        >>> _anchors([C("a", "z"), C("b"), C("a", "y"), C(None), C("a~1")])
        ['a~2', 'b', 'a~1~', 'log-3', 'a~1']
    """
    files: dict[str, list[int]] = {}
    for k, check in enumerate(sessions):
        if check.session_id:
            files.setdefault(check.session_id, []).append(k)
    rank: dict[int, int] = {}
    for found in files.values():
        for n, k in enumerate(sorted(found, key=lambda k: (str(sessions[k].path), k)), 1):
            rank[k] = n
    taken = set(files)
    # a log whose id is its own key: the only file of its id, and an id a URL can hold
    own = [bool(c.session_id) and len(files[c.session_id]) == 1 and not has_surrogate(c.session_id) for c in sessions]
    keys: list[str] = []
    for k, check in enumerate(sessions):
        sid = check.session_id
        if own[k] or not sid:
            keys.append(sid if own[k] else f"log-{k}")
            continue
        shown = sid.encode("utf-8", "backslashreplace").decode("utf-8")  # a lone surrogate as \udXXX
        keys.append(f"{shown}~{rank[k]}")
    # a key made here may be another log's id or key (``a~1`` above): its ``~`` grows until unique
    for k, key in enumerate(keys):
        if own[k]:
            continue
        while key in taken:
            key += "~"
        taken.add(key)
        keys[k] = key
    return keys


def _lineage(sessions: Sequence[Any]) -> list[dict[str, Any]]:
    """Each log's parent (``None`` for a root) and time span, from what ``check`` found (no file is read)."""
    first_at: dict[str, int] = {}
    for k, check in enumerate(sessions):
        if check.session_id is not None:
            first_at.setdefault(check.session_id, k)
    found: list[dict[str, Any]] = []
    for check in sessions:
        first, last = check.first_time, check.last_time
        related = _family(check)
        family = None
        if related is not None and related[0] != check.session_id:
            family = {"parent_id": related[0], "relation": related[1], "seed": related[2],
                      "parent": first_at.get(related[0])}
        found.append({"family": family, "first": first, "last": last})
    return found


def _order(sessions: Sequence[Any], lineage: Sequence[dict[str, Any]]) -> list[list[int]]:
    """The session list: ``[position, depth]`` pairs, failing-first, children under their parent."""
    count = len(sessions)
    parent = [(x["family"] or {}).get("parent") for x in lineage]
    children: list[list[int]] = [[] for _ in range(count)]
    for k, p in enumerate(parent):
        if p is not None:
            children[p].append(k)
    # Every log has at most one parent, so logs no root reaches lie on a cycle of parents (a
    # hostile header): the first of each such cycle becomes a root.
    reached = [False] * count
    roots: list[int] = []

    def reach(root: int) -> None:
        stack = [root]
        while stack:
            k = stack.pop()
            if not reached[k]:
                reached[k] = True
                stack.extend(children[k])

    for k in range(count):
        if parent[k] is None:
            roots.append(k)
            reach(k)
    for k in range(count):
        if not reached[k]:
            roots.append(k)
            reach(k)
    own = [0 if c.failed else 1 if _unexplained(c) else 2 for c in sessions]
    rank = own[:]
    ordered: list[int] = []  # parents before children
    seen = [False] * count
    stack = list(roots)
    while stack:
        k = stack.pop()
        if not seen[k]:
            seen[k] = True
            ordered.append(k)
            stack.extend(children[k])
    for k in reversed(ordered):  # a family ranks by its worst member
        for c in children[k]:
            if seen[c] and parent[c] == k:
                rank[k] = min(rank[k], rank[c])

    def key(k: int) -> tuple[int, float, str, int]:
        last = lineage[k]["last"]
        return rank[k], -(last if last is not None else float("-inf")), sessions[k].path, k

    out: list[list[int]] = []
    placed = [False] * count
    pending = [(k, 0) for k in sorted(roots, key=key, reverse=True)]
    while pending:
        k, depth = pending.pop()
        if placed[k]:
            continue
        placed[k] = True
        out.append([k, depth])
        pending.extend((c, depth + 1) for c in sorted(children[k], key=key, reverse=True) if not placed[c])
    return out
