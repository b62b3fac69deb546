"""``dsh-audit cache``: expected versus actual prefix-cache reads, per session and per request."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import click

from ..cache import CacheVerdict, Costs, SessionCacheReport, Tokens, cache_group, load_prices
from ..errors import DshAuditError
from ..runner import in_process
from ..session import Failure, GroupResult
from ..report.terminal import About, Amount, fit_lines, listing_format, print_table, progress_callback, short_needed, \
    terminal_text, value_cut
from ._common import EXIT_BAD_INPUT, EXIT_FINDINGS, EXIT_OK, echo, echo_caveats, echo_error, echo_warning
from ._logs import newest_first, selected_logs, session_paths
from ._options import (
    adapter_option,
    attachments_option,
    attribution_option,
    breaks_fail,
    capture_option,
    engine_options,
    fail_on_option,
    jobs_option,
    listing_options,
    lenient_option,
    openai_zdr_option,
    prices_option,
    routes_option,
    stated_zdr,
)
from ._cache_json import Timelines, write_json as _write_json  # the name tests/test_cache.py reads
from ._output import (CAPTURED_MARK, PLACE_COLUMN, PLACE_LEGEND, PLACE_SHORT, captured_count as _marked, place_text,
                      session_heading)
from ._priced import echo_capture_use, run_priced
from ._when import time_options

__all__ = ["cache_command"]

# "reusable": what the conversation's previous request left in the cache; "lost" is measured from it.
_COLUMNS = ("#", "kind", PLACE_COLUMN, "prompt", "reusable", "expected", "actual", "classification", "lost")
#: --format csv's column of dsh-audit's own estimate of a prompt the log gives no size for (its
#: "prompt" cell then empty: a CSV count is a plain number or empty, never "~N").
_CSV_ESTIMATED = "prompt (estimated)"
#: The caption of :data:`CAPTURED_MARK` (``--capture``: the request's log holds no usage, the
#: provider's usage in the captured response to its send priced it and judged its cache); --format
#: csv says it in a column.
_CAPTURED_NOTE = (f"{CAPTURED_MARK}: the capture's usage (the log holds none), which priced the request and "
                  "judged its cache")
#: The caption of a report whose verdicts were judged on the log alone (made without the capture's
#: usage: its requests priced from it are then ``usage_unknown``).
_PRICED_NOTE = f"{CAPTURED_MARK}: the capture's usage, which priced it (the log holds none: usage_unknown)"
_CSV_SOURCE = "usage source"
#: The timeline's lesser columns, left out in this order on a narrow terminal (the caption names
#: them) before a classification wraps or the table turns into a block of lines a request: what
#: "lost" is measured from (the summary totals it), the prompt's size, and the request's kind (its
#: place still tells a compaction, "N/-", and a call of no turn, "-"). A narrower terminal never
#: shows one a wider one left out (print_table's ``wrap_last``: fuzz 32 D5).
_DROPPABLE = ("reusable", "prompt", "kind")
#: A classification is kept on one line (columns are left out before it wraps, print_table's
#: ``least``): the verdict and its cause in brackets are the row a user looks for. Wider than the
#: longest label, "break_unexplained (unrecorded_mutation)".
_LEAST = {"classification": 64}


#: What the summary's two costs of lost tokens cover (the same words in docs/cache-accounting.md):
#: every lost token, by every cause, and the part of it lost to breaks.
_LOST_COST = "(all causes: breaks and other shortfalls)"
_BREAK_COST = "(the part of the cost lost that breaks caused)"


def _ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _pairs(mapping: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in mapping.items()) or "none"


def _shown(report: SessionCacheReport, amount: float | None, *, owed: str | None = None) -> str:
    """An amount of the session's ledger by the one rule (:meth:`Costs.shown`): ``≥$x`` when a
    request that owes it is unpriced, ``$?`` when none that owes it was priced; ``owed``
    (``lost``, ``break``) names an amount only the requests that lost tokens owe (the ledger's
    ``{owed}_requests`` and ``{owed}_unpriced``: ``$0.0000`` when none lost a token), else every
    request owes it. A break that lost an unknown amount (its cache reads were not logged) owes
    one: never ``$0.0000`` then, ``≥$x`` or ``$?``."""
    cost = report.cost or {}
    unpriced = cost.get("unpriced_requests")
    owing: dict[str, int] = {}
    if owed is not None:
        requests, owing_unpriced = cost.get(f"{owed}_requests"), cost.get(f"{owed}_unpriced")
        if isinstance(requests, int) and isinstance(owing_unpriced, int):
            owing = {"owing": requests, "owing_unpriced": owing_unpriced}
        elif report.lost_unknown:  # no ledger: the cache totals say who owes it
            owing = dict(zip(("owing", "owing_unpriced"), report.totals.lost_owing))
        if not owing.get("owing") and not any(report.lost_by_cause.values()) and not report.lost_unknown:
            return Costs.text(0.0)
    return Costs.shown(amount, requests=report.request_count, unpriced=unpriced if isinstance(unpriced, int) else 0,
                       **owing)


def _ttls(report: SessionCacheReport) -> dict[str, str]:
    """Provider family -> the cache TTLs its requests used, when a body asked for a retention
    (``cacheRetention: long``: Anthropic's 1-hour TTL; OpenAI's ``prompt_cache_retention``): each
    with its retention's name, the rule's default beside them when other requests used it
    (``300s, 3600s (1h)``); a family whose requests asked for none is left out (its rule's TTL)."""
    seen: dict[str, dict[tuple[float, str | None], None]] = {}
    for verdict in report.verdicts:
        rule = report.rules.get(verdict.family)
        if rule is None:
            continue
        ttl = rule["ttl_seconds"] if verdict.ttl_seconds is None else verdict.ttl_seconds
        seen.setdefault(verdict.family, {})[(ttl, verdict.cache_retention)] = None
    return {family: ", ".join(f"{ttl:g}s" + (f" ({name})" if name else "") for ttl, name in sorted(
                found, key=lambda pair: (pair[0], pair[1] or "")))
            for family, found in seen.items() if any(name for _, name in found)}


def _minimums(report: SessionCacheReport) -> dict[str, str]:
    """Provider family -> the minimum cacheable prefix its requests were judged with, by model
    (:attr:`~dsh_audit.cache.CacheTotals.minimums_by_model`, which ``--json`` gives as
    ``min_cacheable_tokens_by_model``): one number when every model has the same (``4096`` for a
    session of claude-opus-4-5 alone, not the family's default 1024), else each with its models
    (``1024 for claude-sonnet-4-5, 4096 for claude-opus-4-5``), in the order the requests first
    used them; a family with no request is left out."""
    shown = {}
    for family, models in report.totals.minimums_by_model.items():
        found: dict[int, list[str]] = {}
        for model, minimum in models.items():
            found.setdefault(minimum, []).append(model)
        shown[family] = str(next(iter(found))) if len(found) == 1 else \
            ", ".join(f"{minimum} for {', '.join(names)}" for minimum, names in found.items())
    return shown


def _breaks(report: SessionCacheReport) -> str:
    if report.imported:
        dropped = report.classification_counts.get("break_unattributed", 0)
        return ("breaks n/a (an imported log: break attribution needs a DSH log)"
                + (f"; {dropped} cache drop(s) with no cause known (break_unattributed below)" if dropped else ""))
    return f"breaks {report.break_count} by cause: {_pairs(report.breaks_by_cause)}"


def _rates_note(files: Sequence[str]) -> str:
    """Where the rates of a price table came from (:attr:`PriceBook.files`), for the cost line:
    the packaged list prices alone, or the files that overrode or extended them.

    Example:
        >>> _rates_note(["packaged"]), _rates_note(["packaged", "contract.json"])
        ('list prices, check your contract', 'rates from contract.json over the packaged list prices')
    """
    given = [name for name in files if name != "packaged"]
    return f"rates from {', '.join(given)} over the packaged list prices" if given else \
        "list prices, check your contract"


def _summary(report: SessionCacheReport, rates: str = "list prices, check your contract") -> str:
    """The session's summary, one fact a line (``fit_lines`` wraps a long one at its spaces);
    ``rates`` says where the rates came from (:func:`_rates_note`)."""
    cost = "n/a" if report.lost_cost is None and report.cost is None and not report.lost_unknown else \
        _shown(report, report.lost_cost, owed="lost")
    ttls, minimums = _ttls(report), _minimums(report)
    rules = "; ".join(f"{name} unit {r['unit_tokens']} min {minimums.get(name, r['min_cacheable_tokens'])} "
                      f"ttl {ttls.get(name) or format(r['ttl_seconds'], 'g') + 's'} "
                      f"({r['source'].split(' ')[0].rstrip(',;')}, {r['retrieved']})"
                      for name, r in report.rules.items())
    return (f"requests {report.request_count} ({_measured(report)}); prompt tokens of those "
            f"{_known(report, report.prompt_total)}\n"
            f"cache read actual {_known(report, report.actual_total)} ({_ratio(report.ratio(report.actual_total))}) "
            f"vs expected {_known(report, report.expected_total)} ({_ratio(report.ratio(report.expected_total))})\n"
            f"{_breaks(report)}\n"
            f"tokens lost (of {'?' if report.reusable_known is None else report.reusable_known} reusable): "
            f"{_pairs(report.lost_by_cause)}"
            f"{_unknown(report)}; cost lost {cost} {_LOST_COST}\n"
            f"{_cost(report, terminal_text(rates))}"  # a log's model, a rates file's name: a line each, escaped
            f"tokens: {report.token_method}\nrules: {terminal_text(rules) if rules else 'none'}"
            + ("" if report.attribution else "\nno attribution: breaks are unattributed"))


def _known(report: SessionCacheReport, tokens: int) -> str:
    """A sum over the requests whose cache read and prompt size were logged, as ``stats`` shows it:
    ``?`` when none did (``--json``: null, :meth:`SessionCacheReport.known_sum`), never 0."""
    known = report.known_sum(tokens)
    return "?" if known is None else str(known)


def _unknown(report: SessionCacheReport) -> str:
    """What the tokens lost leave out: the breaks whose cache reads were not logged, which lost an
    unknown amount ("?" in the timeline's "lost"), never 0; "" when there are none."""
    count = report.lost_unknown
    return f"; ? in {count} break(s) whose cache reads were not logged" if count else ""


def _measured(report: SessionCacheReport) -> str:
    """Which requests the hit ratios are measured over: those whose cache read and prompt size
    were logged, and how many whose cache read was logged without a prompt size were left out
    (their reads are no share of a prompt it counts).

    Example:
        >>> from dsh_audit.cache import CacheTotals
        >>> report = SessionCacheReport("s.jsonl", "s", (), "", {}, False, totals=CacheTotals())
        >>> _measured(report)
        '0 with cache reads and prompt logged'
    """
    text = f"{report.known_count} with cache reads and prompt logged"
    if report.captured_count:
        text += f" ({report.captured_count} of them by the capture, {CAPTURED_MARK} below)"
    if report.sizeless_count:
        text += (f"; {report.sizeless_count} more with cache reads ({report.sizeless_read}) but no prompt size, "
                 "left out of the ratios")
    return text


def _cost(report: SessionCacheReport, rates: str = "list prices, check your contract") -> str:
    """The session's cost lines (rates by model, date and window; ``rates`` says where they came
    from: :func:`_rates_note`)."""
    cost = report.cost
    if cost is None:
        return ""
    unpriced = sum(cost["unpriced"].values())
    buckets = cost["cost_usd"]
    parts = "" if buckets is None else " (" + ", ".join(
        f"{name} {_shown(report, buckets[key])}" for name, key in (
            ("cache miss", "cache_miss"), ("cache read", "cache_read"), ("cache write", "cache_write"),
            ("output", "output"))) + ")"
    return (f"session cost {_shown(report, None if buckets is None else buckets['total'])}{parts}\n"
            f"with no cache {_shown(report, cost['no_cache_cost_usd'])}; "
            # what it would have cost off-peak (a one-rate provider's requests at their cost)
            + f"all off-peak {_shown(report, cost['off_peak_cost_usd'])}; "
            + f"breaks cost {_shown(report, cost['break_cost_usd'], owed='break')} {_BREAK_COST}"
            + (f"; {report.lost_unknown} break(s) lost an unknown amount" if report.lost_unknown else "")
            + (f"; {unpriced} request(s) unpriced" if unpriced else "")
            + (" (≥$: a sum over the priced ones only)" if 0 < unpriced < report.request_count else "")
            + f" ({rates})\n")


def _row(verdict: CacheVerdict, *, csv: bool = False, captured: Tokens | None = None) -> tuple[object, ...]:
    """A timeline row. A count not known is ``?`` in a table and an empty cell in CSV (``csv``),
    where every count is a plain number: a prompt size the log lacks is there an empty "prompt"
    beside dsh-audit's estimate in "prompt (estimated)" (the table's ``~N``), and a request that
    lost nothing has "lost" 0 (the table's empty cell). A request priced from the capture
    (``captured``: its tokens; or its verdict's ``usage_source`` ``capture``: judged from them)
    shows the capture's prompt and cache reads marked (:data:`CAPTURED_MARK`; CSV: plain, with
    "capture" in its "usage source" column), beside its verdict, judged from them as any other's."""
    where = place_text(verdict.turn, verdict.step, verdict.attempt)
    by_capture = verdict.usage_source == "capture" or captured is not None
    estimated = verdict.prompt_tokens is None and not by_capture
    label = verdict.classification + (f" ({verdict.cause})" if verdict.cause and verdict.cause not in
                                      verdict.classification else "")
    if verdict.usage_source == "capture" and verdict.prompt_tokens is not None and verdict.actual is not None:
        prompt, actual = _marked(verdict.prompt_tokens), _marked(verdict.actual)  # the counts it was judged by
    elif captured is not None:
        prompt, actual = _marked(captured.prompt), _marked(captured.cache_read)
    else:
        prompt = Amount(verdict.prompt_tokens, str(verdict.prompt_tokens) if not estimated
                        else f"~{verdict.counted_tokens}")
        actual = Amount(verdict.actual, "?" if verdict.actual is None else str(verdict.actual))
    lost = None if verdict.lost_unknown else sum(verdict.lost.values())
    logged = verdict.actual is not None or verdict.prompt_tokens is not None
    source = "capture" if by_capture else "log" if logged else ""
    return (verdict.index, verdict.kind, where, prompt, *((verdict.counted_tokens if estimated else "",) if csv else ()),
            verdict.potential, verdict.expected, actual, label, Amount(lost, "?" if lost is None else str(lost or "")),
            *((source,) if csv else ()))


def _timeline(report: SessionCacheReport, csv: bool) -> list[tuple[object, ...]]:
    """The rows of the report's timeline (:func:`_row`)."""
    captured = report.captured_usage
    return [_row(verdict, csv=csv, captured=captured.get(verdict.index)) for verdict in report.verdicts]


def _tables(reports: Sequence[SessionCacheReport | Failure]) -> tuple[dict[int, list[tuple[object, ...]]], bool]:
    """The timelines of a run's tables (by the identity of their report) and whether they are all
    drawn in their short form (``t/s/a``): one of them needs it (:func:`short_needed`, which
    measures each table's cells once for print_table), so that no run switches headers from one
    table to the next, as `requests` does."""
    timelines = {id(report): _timeline(report, False) for report in reports if not isinstance(report, Failure)}
    in_short = any(short_needed(_COLUMNS, rows, droppable=_DROPPABLE, short=PLACE_SHORT, least=_LEAST,
                                wrap_last=True)
                   for rows in timelines.values())
    return timelines, in_short


def _captured_note(report: SessionCacheReport) -> str | None:
    """The timeline's caption of the :data:`CAPTURED_MARK`: what the capture's usage did (None: it
    gave no request's)."""
    if not report.captured_usage and not report.captured_count:
        return None
    return _CAPTURED_NOTE if report.captured_count else _PRICED_NOTE


def _columns(csv: bool) -> tuple[str, ...]:
    """The timeline's columns: :data:`_COLUMNS`, in CSV with "prompt (estimated)" after "prompt"
    and "usage source" last (``log``, ``capture``, or empty: neither gave the request's usage)."""
    if not csv:
        return _COLUMNS
    at = _COLUMNS.index("prompt") + 1
    return (*_COLUMNS[:at], _CSV_ESTIMATED, *_COLUMNS[at:], _CSV_SOURCE)


def _timeline_title(report: SessionCacheReport) -> str:
    """The timeline table's title: ``timeline`` under the session's heading on a terminal; in
    Markdown, whose tables each have their title as a heading, which session and file it is (CSV
    gives them in its ``log`` and ``session`` columns: :class:`About`)."""
    if listing_format() == "table":
        return "timeline"
    return f"timeline of session {value_cut(report.session_id)} ({report.path})"


def _sessions(paths: tuple[str, ...], since: float | None, until: float | None) -> list[Path]:
    """The logs to account, in the order of :func:`newest_first`: with no PATHS newest first, as
    `sessions` lists them; else those of each of the PATHS in the order given, each one's by path."""
    given = session_paths(paths)
    return newest_first(selected_logs(given, since, until), given if paths else ())


@click.command("cache")
@click.argument("paths", nargs=-1, type=click.Path(readable=False))
@listing_options
@lenient_option
@click.option("--unit", type=int, default=None,
              help="DeepSeek cache unit in tokens (rules default 128; 64 per the 2024 documentation).")
@click.option("--tokenizer", type=click.Choice(["auto", "exact", "estimate"]), default="auto", show_default=True,
              help="Count tokens with the DeepSeek V4 tokenizer (extra 'tokenizer') or estimate bytes/4.")
@click.option("--no-wire", is_flag=True, help="Compare the log's JSON instead of rendered wire bodies.")
@attribution_option("each break is counted break_unattributed")
@prices_option
@capture_option
@adapter_option(expose=False)
@routes_option
@attachments_option
@openai_zdr_option
@fail_on_option
@jobs_option
@time_options
@engine_options
def cache_command(paths: tuple[str, ...], as_json: bool, lenient: bool, max_version: int, unit: int | None,
                  tokenizer: str, no_wire: bool, no_attribution: bool, prices_path: str | None, capture: str | None,
                  routes: str | None, openai_zdr: bool | None, fail_on: str, jobs: int, since: float | None,
                  until: float | None, engine: str, scheduler: str | None) -> int:
    """Compare each request's logged cache reads with what the provider rules predict.

    For every session: requests, actual and expected cache-hit ratio, breaks by cause, tokens lost,
    what the session cost (with no cache; all off-peak, a provider's with one rate all day at its
    cost) and what its breaks cost, and a timeline with each request's classification: as_expected,
    break_explained / break_unexplained / break_unattributed, cold_ttl, best_effort_miss,
    write_not_landed, below_minimum or usage_unknown. With no PATHS, the sessions under
    $DSH_HOME/sessions are read, newest first by the log file's modification time; the logs of PATHS are
    listed in the order the PATHS were given, each one's by path (the same on every checkout).

    The hit ratios are cache reads over prompt tokens, both over the same requests: those whose
    cache read and prompt size were logged; a request that logged its cache read and no prompt
    size (a usage without a valid inputTokens) is left out of both, and the first line says how
    many were (--json: usage_known_without_prompt, cache_read_without_prompt). When none logged both,
    the prompt tokens and the actual and expected reads are unknown: "?" (--json: null), never 0, as
    `stats` and `sessions` give them. "tokens lost" counts
    the reusable reads that were billed instead as cache writes or misses, by cause: breaks and
    every other shortfall (cold_ttl, write_not_landed, best_effort_miss). "cost lost" is what all
    of them cost over cache reads ("all causes: breaks and other shortfalls"); "breaks
    cost" is the part of it lost to breaks alone ("the part of the cost lost that breaks
    caused"), so never more (docs/cache-accounting.md).

    Timeline columns: "#" the request's index; "kind" loop, title, compaction or search;
    "turn/step/attempt" where it was sent ("N/-": a compaction of turn N, "-": no turn; "t/s/a" on
    a narrow terminal); "prompt" the
    logged prompt tokens (input + cache read + cache write), or "~N" when the log has no prompt
    size for it: N is then dsh-audit's own estimate (--tokenizer), never counted in a sum
    (--format csv: an empty "prompt" and N in a "prompt (estimated)" column);
    "reusable" the cache reads the conversation's previous request left in the cache (what "lost"
    is measured from); "expected" the cache reads the provider's rules predict (a prefix still in
    its TTL, written, in whole cache units); "actual" the logged cache reads ("?": not logged,
    never 0); "classification" the verdict, with its cause in brackets; "lost" the reusable tokens
    that were not read (empty: none; "?" on a break whose cache reads were not logged: unknown). A
    narrow terminal leaves out "reusable", then "prompt", then "kind" (the caption names them)
    before a classification wraps or a request takes a block of lines. In --format csv every count
    is a plain number (a "lost" of none: 0) and an unknown one empty.
    With --capture, a request whose log holds no usage (a title call, a torn tail) is priced and
    judged from the capture's usage of the response to its send: its prompt and cache reads show
    marked "*" ("175*", as "~" marks an estimate; a caption says so), its classification is
    judged from them as any other's, and it counts in every sum and ratio (the first line says how
    many did; --json: "usage_source": "capture" in its timeline row); --format csv gives them
    plain, and its last column, "usage source", says whose usage each request's counts are: log,
    capture, or empty (neither's). A request whose log holds a usage is judged from the log's,
    whatever the capture says (a note says how many the capture contradicts).

    Breaks are those `breaks` lists: a log with a capture
    (--capture, or a wire.jsonl found beside it, as `check` finds it) is compared with what was sent
    too. An amount over unpriced requests is a lower bound, "≥$0.0123", or "$?" when none was
    priced (--json: null, with unpriced_requests and cost_complete); an imported log has no break
    count ("breaks n/a", null). The "rules" line gives each provider rule's TTL as the requests
    used it: a retention their bodies asked for is named beside its TTL ("ttl 3600s (1h)" for
    cacheRetention: long), and the minimum cacheable prefix of each model when the session's
    models differ ("min 1024 for claude-sonnet-4-5, 4096 for claude-opus-4-5"; --json: each rule's
    min_cacheable_tokens_by_model, model -> minimum, beside min_cacheable_tokens, the family's
    default). In --format csv and markdown each timeline is titled with its session and file.

    Exit 0 when every break is explained, 1 when a break is unexplained (break_unexplained; --fail-on
    any: when any request is a break, break_unattributed too; --fail-on never: not for a break), 2
    on bad input: as `breaks --fail-on` exits on the same logs. With --no-attribution no break is
    unexplained (each is break_unattributed): only --fail-on any fails on one.

    \b
    Example:
        dsh-audit cache ~/.dsh/sessions --unit 64 --json | jq .actual_hit_ratio
        dsh-audit cache --since 7d --jobs 2
        dsh-audit cache latest --fail-on any --format json
    """
    status = EXIT_OK
    try:
        logs = _sessions(paths, since, until)
    except DshAuditError as exc:
        echo_error(exc)
        return EXIT_BAD_INPUT
    try:
        prices = load_prices(prices_path)  # a bad price file is one error, before any log is read
        zdr = stated_zdr(openai_zdr)  # and so is a bad pyproject.toml value
    except DshAuditError as exc:
        echo_error(exc)
        return EXIT_BAD_INPUT
    spools = Timelines() if as_json and in_process(jobs, engine, len(logs)) else None
    task = partial(cache_group, lenient=lenient, max_version=max_version, attribution=not no_attribution,
                   unit=unit, tokenizer=tokenizer, wire=not no_wire, prices=prices, routes=routes, capture=capture,
                   on_verdict=spools.add if spools is not None else None, zero_data_retention=zdr)
    warnings: dict[str, tuple[str, ...]] = {}
    costs: list[dict[str, Any] | None] = []  # what --capture did to them is said after them

    def keep_warnings(result: GroupResult[SessionCacheReport]) -> None:
        warnings.update(result.route_warnings)

    with progress_callback(len(logs), label="cache") as report_progress:
        reports = run_priced([str(log) for log in logs], task, prices=prices, jobs=jobs, engine=engine,
                             scheduler=scheduler, progress=report_progress, on_group=keep_warnings)
        timelines, in_short = _tables(reports) if not as_json and listing_format() == "table" else ({}, None)
        for log, report in zip(logs, reports):
            for warning in warnings.get(str(log), ()):
                echo_warning(warning)
            if isinstance(report, Failure):
                echo_error(report.error)
                status = EXIT_BAD_INPUT
                if spools is not None:
                    spools.discard(str(log))
                continue
            if as_json:
                _write_json(report, spools.pop(report.path) if spools is not None else None)
            else:
                # the heading's lines whole, the summary wrapped
                for line in [*session_heading(str(report.path), report.session_id),
                             *fit_lines(_summary(report, _rates_note(prices.files)))]:
                    echo(line)
                csv = listing_format() == "csv"
                rows = timelines.pop(id(report)) if id(report) in timelines else _timeline(report, csv)
                print_table(_timeline_title(report), _columns(csv), rows,
                            about=About(report.path, report.session_id, "timeline"), short=PLACE_SHORT,
                            legend=PLACE_LEGEND, caption=_captured_note(report), droppable=_DROPPABLE,
                            least=_LEAST, in_short=in_short, wrap_last=True)
            if status == EXIT_OK and breaks_fail(fail_on, breaks=report.break_count,
                                                 unexplained=report.classification_counts.get("break_unexplained", 0)):
                status = EXIT_FINDINGS
            costs.append(report.cost)
    echo_capture_use(costs)
    echo_caveats(prices)  # on stderr in both modes: the caveats of the costs above
    return status


COMMANDS = [cache_command]
