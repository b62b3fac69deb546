"""``dsh-audit breaks`` and ``dsh-audit explain``: prefix-cache breaks and their causes."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .._lazy import LazyModule
from ..attribution import (SessionAttribution, Transition, attribute_opened, attribute_paths, format_transition,
                           refuse_imported)
from ..capture import capture_for
from ..errors import DshAuditError
from ..log import discover
from ..session import Failure, GroupResult, Headers, Session, open_group
from ..report import dumps_line
from ..report.terminal import (Amount, fit_lines, listing_format, page_listing, print_table, progress_callback,
                               rows_fit, short_ids)
from ._common import EXIT_BAD_INPUT, EXIT_FINDINGS, EXIT_OK, echo, echo_caveats, echo_error, echo_warning
from ._logs import file_size, log_progress, newest_first, one_log, selected_logs, session_paths
from ._one_request import RequestCommand, no_such_request, request_position
from ._options import (accounting_option, adapter_option, attachments_option, capture_option, engine_options,
                       jobs_option, json_option, lenient_option, listing_options, openai_zdr_option, pager_option,
                       prices_option, routes_option, stated_zdr)
from ._output import session_title
from ._priced import run_priced
from ._when import time_options

if TYPE_CHECKING:
    from .. import cache
    from ..cache import CacheVerdict, PriceBook

__all__ = ["breaks_command", "explain_command"]


if not TYPE_CHECKING:
    # ``breaks`` without --accounting reads no cache accounting and loads none (start-up, issue 11);
    # ``explain`` and ``breaks --accounting`` read it through this name
    cache = LazyModule("dsh_audit.cache")

#: ``breaks``'s columns without --accounting, and the ones it leaves out first on a narrow terminal.
_PLAIN_COLUMNS = ("#", "vs", "relation", "verdict", "cause", "fields", "evidence seqs", "first divergence")
_PLAIN_DROPPABLE = ("first divergence", "relation")

# With --accounting: "lost tokens (cost)", what the request lost of the cache, as `cache` judged it (usage's column).
_COLUMNS = ("#", "vs", "relation", "verdict", "cause", "lost tokens (cost)", "fields", "evidence seqs",
            "first divergence")
# In CSV the lost tokens and what they cost are two plain columns, as in `usage`.
_CSV_LOST = ("lost tokens", "lost cost")
# Left out, in this order, while a narrow terminal cannot show the table with whole words
# (`explain` shows them all for one request): what a break cost stays.
_DROPPABLE = ("first divergence", "relation", "evidence seqs")


@dataclass(frozen=True, slots=True)
class _Lost:
    """What a request lost of the prefix cache, as ``dsh-audit cache`` judged it (its
    :class:`~dsh_audit.cache.CacheVerdict`): the cache reads it should have had and did not
    (``tokens``, every cause: the timeline's "lost"), and what they cost over cache reads at the
    request's rate (``cost``, the verdict's ``lost_cost``; $0 when it lost none, whatever its
    price, by the one rule of every view). None when not known, ``unknown`` then says why: its
    cache reads were not logged (tokens and cost), or no rate prices it (cost). A sum of losses
    (:func:`_total`) over requests some of whose are not known is a lower bound (``bound``)."""

    tokens: int | None
    cost: float | None
    unknown: str | None = None
    bound: bool = False  # a total's: the cost of a request that owes some is not known

    @classmethod
    def of(cls, verdict: CacheVerdict | None, missing: str | None = None) -> _Lost:
        """The loss of the request ``verdict`` judged; ``missing``: why it has none."""
        if verdict is None:
            return cls(None, None, missing or "its cache was not accounted")
        if verdict.lost_unknown:  # a break whose cache reads were not logged: cache says why
            return cls(None, None, verdict.unpriced)
        tokens = sum(verdict.lost.values())
        owes = int(tokens > 0)
        priced = verdict.lost_cost is not None
        cost = cache.Costs.known(verdict.lost_cost or 0.0, requests=1, unpriced=int(not priced), owing=owes,
                           owing_unpriced=owes * (not priced))
        return cls(tokens, cost, None if cost is not None else verdict.unpriced or "no rate prices it")

    @property
    def text(self) -> str:
        """``8927 ($0.0241)``; ``0`` when it lost none; ``?`` when the tokens are not known, ``$?``
        the cost."""
        if self.tokens is None:
            return "?"
        if not self.tokens and not self.bound:
            return "0"
        return f"{self.tokens} ({self.cost_text})"

    @property
    def cost_text(self) -> str:
        """The cost as people read it: ``$0.0241``, ``≥$0.0241`` (a lower bound), ``$?`` (unknown)."""
        return "$?" if self.cost is None else ("≥" if self.bound else "") + cache.Costs.text(self.cost)

    def cells(self, *, csv: bool) -> tuple[object, ...]:
        """The table's one cell ``N ($x)``, or CSV's two exact ones (empty when not known)."""
        if not csv:
            return (self.text,)
        return (Amount(self.tokens, "?" if self.tokens is None else str(self.tokens)),
                Amount(self.cost, self.cost_text))

    def to_json(self) -> dict[str, Any]:
        return {"lost_tokens": self.tokens, "lost_cost_usd": self.cost, "unpriced": self.unknown}

    def sentence(self) -> str:
        """``explain``'s line: what the break cost."""
        if self.tokens is None:
            return f"  cost: unknown ({self.unknown})"
        if not self.tokens:
            return "  cost: $0, it lost no cache read it could have had (as `cache` counts them)"
        why = f" ({self.unknown})" if self.cost is None else ""
        return (f"  cost: {self.tokens} token(s) it should have read from the cache and did not (as `cache` "
                f"counts them), {self.cost_text}{why} over cache reads at its rate")


def _total(losses: Sequence[_Lost]) -> _Lost:
    """The listed requests' losses summed by the one rule for money some have no price for
    (:meth:`Costs.known`): the tokens over those that know theirs (None when none does); the cost
    over the priced ones, a lower bound (``bound``) when one that lost tokens, or may have, has no
    price for them, None when none of those has."""
    known = [lost.tokens for lost in losses if lost.tokens is not None]
    owing = [lost for lost in losses if lost.tokens is None or lost.tokens > 0]
    unpriced = sum(lost.cost is None for lost in owing)
    cost = cache.Costs.known(cache.usd_total(lost.cost or 0.0 for lost in losses), requests=len(losses),
                       unpriced=sum(lost.cost is None for lost in losses), owing=len(owing), owing_unpriced=unpriced)
    return _Lost(sum(known) if known else None, cost,
                 "a listed request's loss is not known" if unpriced else None, bound=bool(unpriced))


@dataclass(frozen=True, slots=True)
class _Attributed:
    """One log's attribution, with the cache verdict ``dsh-audit cache`` gives each request it lists
    (its request index -> verdict), made in the same read; ``missing``: why a request has none (its
    cache was not accounted)."""

    attribution: SessionAttribution
    verdicts: dict[int, CacheVerdict] = field(default_factory=dict)
    missing: str | None = None

    def lost(self, t: Transition) -> _Lost:
        return _Lost.of(self.verdicts.get(t.request), self.missing)


def _account_group(paths: Sequence[str | os.PathLike[str]], *, lenient: bool, max_version: int, routes: str | None,
                   capture: str | None, prices: PriceBook, zero_data_retention: bool | None,
                   every: bool) -> GroupResult[_Attributed]:
    """Attribute a group of neighbouring logs as ``breaks`` always did (:func:`dsh_audit.attribution.attribute_group`:
    each log read once, a child with its parent, compared with its capture) and account each one's
    prefix cache on the same read by ``cache``'s own functions: :func:`dsh_audit.cache.account_alone`
    for a log read while it is replayed, else :func:`dsh_audit.cache.accounted` over the opened
    group and the transitions just found. The verdicts are ``cache``'s, not a second reckoning.
    Keeps the verdicts of the breaks (``every``: of every request). A task of
    :func:`dsh_audit.session.run_groups`."""
    headers = Headers(lenient=lenient, max_version=max_version)
    transitions: list[Transition] = []
    listed: set[int] = set()
    verdicts: dict[int, CacheVerdict] = {}

    def transition(found: Transition) -> None:
        transitions.append(found)
        if every or found.is_break:
            listed.add(found.request)

    def judged(_request: Any, verdict: CacheVerdict, _entry: Any) -> None:
        if verdict.index in listed:  # a request is judged once its transition is known
            verdicts[verdict.index] = verdict

    streamed = cache.account_alone(paths, headers, prices=prices, routes=routes, capture=capture,
                                   zero_data_retention=zero_data_retention, keep=False,
                                   on_transition=transition, on_judged=judged)
    if streamed is not None:  # a log given alone that is no fork or subagent child and has no capture
        first = streamed.items[0]
        one = first if isinstance(first, Failure) else _Attributed(
            SessionAttribution(first[0].session_id, first[0].path, tuple(sorted(transitions, key=lambda t: t.request))),
            verdicts)
        return GroupResult([one], streamed.orphans, streamed.ids, streamed.route_warnings)
    group = open_group(paths, lenient=lenient, max_version=max_version, routes=routes, headers=headers)
    found = attribute_opened(group, capture=capture)  # a capture that cannot be read: its logs' Failure
    items: list[_Attributed | Failure] = []
    for item, report in cache.accounted(group, found=found, prices=prices, zero_data_retention=zero_data_retention):
        attribution = found.get(item.path) if isinstance(item, Session) and not item.imported else None
        if not isinstance(attribution, SessionAttribution):  # unread, imported, or its capture unreadable
            refused = attribution if isinstance(attribution, Failure) else refuse_imported(item)
            items.append(refused)  # type: ignore[arg-type]
            continue
        if isinstance(report, DshAuditError):  # the breaks stand without it
            items.append(_Attributed(attribution, missing=f"its cache was not accounted: {report.message}"))
            continue
        shown = {t.request for t in attribution.transitions if every or t.is_break}
        judged_here = report.verdicts if report is not None else ()
        items.append(_Attributed(attribution, {v.index: v for v in judged_here if v.index in shown}))
    return GroupResult.of(group, items)


def _attribute(logs: Sequence[Path | str], *, lenient: bool, max_version: int, routes: str | None,
               capture: str | None, prices: PriceBook | None, zero_data_retention: bool | None = None,
               every: bool = False, jobs: int = 1, engine: str = "local", scheduler: str | None = None,
               progress: Callable[[int, int], None] | None = None) -> tuple[list[_Attributed], list[Failure]]:
    """Every log attributed as :func:`dsh_audit.attribution.attribute_paths` attributes it, with the
    cache verdicts of the requests listed (:func:`_account_group`; ``prices`` None: none, the
    attribution alone, as ``breaks`` without --accounting reads it), each log's route-file warnings
    printed once (before its results: they say which window the bodies were rendered with), and
    then the caveats of the prices (:func:`echo_caveats`)."""
    warnings: dict[str, tuple[str, ...]] = {}

    def keep_warnings(result: GroupResult[Any]) -> None:
        warnings.update(result.route_warnings)

    if prices is None:
        found, failures = attribute_paths(logs, lenient=lenient, max_version=max_version, jobs=jobs, engine=engine,
                                          scheduler=scheduler, progress=progress, routes=routes,
                                          on_group=keep_warnings, capture=capture)
        attributed = [_Attributed(attribution) for attribution in found]
    else:
        task = partial(_account_group, lenient=lenient, max_version=max_version, routes=routes,
                       capture=os.fspath(capture) if capture is not None else None, prices=prices,
                       zero_data_retention=zero_data_retention, every=every)
        ordered = run_priced(discover(list(logs)), task, prices=prices, jobs=jobs, engine=engine,
                             scheduler=scheduler, progress=progress, on_group=keep_warnings)
        attributed = [a for a in ordered if isinstance(a, _Attributed)]
        failures = [f for f in ordered if isinstance(f, Failure)]
    for path in logs:
        for warning in warnings.get(os.fspath(path), ()):
            echo_warning(warning)
    if prices is not None:
        echo_caveats(prices)
    return attributed, failures


def _capture_size(capture: Path | None) -> int:
    """The bytes of a capture (a file, or a folder of body files: theirs); 0 for none or one that
    cannot be looked at (attribution says why)."""
    if capture is None:
        return 0
    try:
        if capture.is_dir():
            return sum(file_size(item) for item in capture.iterdir() if item.is_file())
    except OSError:
        return 0
    return file_size(capture)


def _divergence(t: Transition) -> str:
    d = t.first_divergence
    if d is None:
        return ""
    text = d.segment + (f" msg {d.message_index}" if d.message_index is not None else "")
    if d.offset is not None:
        text += f" @{d.offset}"
    if d.body_offset is not None:
        text += f" body@{d.body_offset}"
    return text


def _row(t: Transition, lost: _Lost | None, *, csv: bool = False,
         names: dict[str, str] | None = None) -> tuple[object, ...]:
    """A table row; ``lost`` None: without the lost column (``breaks`` without --accounting); ``names``:
    a parent's session id as the "vs" cell shows it (:func:`_short_parents`), else whole."""
    # a number (CSV: plain, empty when there is none), or text when it is a parent's request
    previous: object = Amount(t.previous, "-" if t.previous is None else str(t.previous))
    if t.previous is not None and t.previous_session_id not in (None, t.session_id):
        parent = t.previous_session_id or ""
        previous = f"{t.previous} ({(names or {}).get(parent, parent)})"
    cause = (t.cause or "") + (f" +{','.join(t.other_causes)}" if t.other_causes else "")
    cost = () if lost is None else lost.cells(csv=csv)
    return (t.request, previous, t.relation, t.verdict, cause, *cost, ", ".join(t.field_names),
            " ".join(map(str, t.evidence_seqs)), _divergence(t))


def _total_row(losses: Sequence[_Lost]) -> tuple[object, ...]:
    """The table's last row: ``total`` (under "cause", beside the sum: "#" stays a column of
    numbers, as narrow as they are) and what the listed requests lost (:func:`_total`)."""
    return ("", "", "", "", "total", *_total(losses).cells(csv=False), "", "", "")


def _caption(losses: Sequence[_Lost]) -> str | None:
    """What the table's lost column leaves unsaid: which losses are not known, and why."""
    notes = []
    unknown = sum(lost.tokens is None for lost in losses)
    if unknown:
        notes.append(f"?: {unknown} request(s) logged no cache reads, left out of the total")
    if any(lost.tokens and lost.cost is None for lost in losses):
        notes.append("$?: no rate prices it (--json: unpriced says why), ≥$: a lower bound")
    return "; ".join(notes) or None


def _json_row(path: str | None, t: Transition, lost: _Lost | None) -> dict[str, Any]:
    """A ``breaks --json`` row: the log's path first (as in `cache`, `sessions` and `check`: two
    files may hold one session id), the transition's JSON, ``unexplained`` after its causes:
    whether it is a break the log does not explain (:attr:`Transition.is_unexplained`, as
    ``--fail-on unexplained``, `cache` and `check` count them), and last what the request lost of
    the cache (:meth:`_Lost.to_json`; ``lost`` None: not priced, no such keys)."""
    row: dict[str, Any] = {"path": path}
    for key, value in t.to_json().items():
        row[key] = value
        if key == "other_causes":
            row["unexplained"] = t.is_unexplained
    row.setdefault("unexplained", t.is_unexplained)
    if lost is not None:
        row.update(lost.to_json())
    return row


def _short_parents(listed: Sequence[Transition], columns: Sequence[str], rows: list[tuple[object, ...]],
                   droppable: Sequence[str]) -> tuple[dict[str, str] | None, str | None]:
    """Each parent's session id as its shortest unique prefix among the log's own and its
    parents' (:func:`short_ids`: ``session-70444d8d``, which `show` and `explain` accept), and the
    caption saying so, when the table would not fit the terminal with whole ids (as `sessions`
    and `usage` shorten theirs); None, None when it would, or outside a table."""
    parents = {t.previous_session_id for t in listed if t.previous_session_id not in (None, t.session_id)}
    if not parents or listing_format() != "table" or rows_fit(columns, rows, droppable=droppable):
        return None, None
    names = short_ids([*(p for p in parents if p), *(t.session_id for t in listed)])
    return names, "vs: a parent's session id as its shortest unique prefix (--json for whole ids)"


def _print_breaks(item: _Attributed, transitions: Iterable[Transition], *, cost: bool) -> None:
    """One log's table: a row per listed transition, then (``cost``) the total of what they lost."""
    listed = list(transitions)
    attribution = item.attribution
    title = session_title(attribution.path or "-", attribution.session_id)
    if not cost:
        rows = [_row(t, None) for t in listed]
        names, short = _short_parents(listed, _PLAIN_COLUMNS, rows, _PLAIN_DROPPABLE)
        if names is not None:
            rows = [_row(t, None, names=names) for t in listed]
        print_table(title, _PLAIN_COLUMNS, rows, droppable=_PLAIN_DROPPABLE, caption=short)
        return
    losses = [item.lost(t) for t in listed]
    csv = listing_format() == "csv"
    columns = list(_COLUMNS)
    if csv:
        at = columns.index("lost tokens (cost)")
        columns[at:at + 1] = _CSV_LOST
    rows = [_row(t, lost, csv=csv) for t, lost in zip(listed, losses)]
    names, short = _short_parents(listed, columns, rows, _DROPPABLE)
    if names is not None:
        rows = [_row(t, lost, csv=csv, names=names) for t, lost in zip(listed, losses)]
    if not csv:  # CSV holds the JSON's rows, and the JSON has no total
        rows.append(_total_row(losses))
    caption = "; ".join(text for text in (None if csv else _caption(losses), short) if text) or None
    print_table(title, columns, rows, droppable=_DROPPABLE, caption=caption)


@click.command("breaks")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--all", "show_all", is_flag=True,
              help="List every request's transition (extensions, cache-safe changes), not only breaks.")
@listing_options
@accounting_option(default=False, gives="what each break cost (the cache reads it lost, priced) and a total "
                   "row come from it; implied by --prices and --openai-zdr", alias="--cost")
@prices_option
@openai_zdr_option
@capture_option
@adapter_option(expose=False)
@routes_option
@attachments_option
@lenient_option
@click.option("--fail-on", type=click.Choice(["unexplained", "any", "never"]), default="unexplained",
              show_default=True,
              help="Which listed breaks make the exit code 1: those without an explanation (as `cache` "
                   "and `check` count them), any break, or none.")
@jobs_option
@time_options
@engine_options
def breaks_command(paths: tuple[str, ...], show_all: bool, as_json: bool, accounting: bool, prices_path: str | None,
                   openai_zdr: bool | None, capture: str | None, fail_on: str, routes: str | None, lenient: bool,
                   max_version: int, jobs: int, since: float | None, until: float | None, engine: str,
                   scheduler: str | None) -> int:
    """List every prefix-cache break between consecutive requests, with its cause and evidence.

    PATHS may be log files, session folders, a sessions root (default $DSH_HOME/sessions), or a
    session id, a unique id prefix or `latest` (looked up there). The logs are listed newest first
    by the log file's modification time when no PATH is given (equal ones by path; ordering reads
    no log), else the PATHS in the order given, each one's logs by path (`sessions` orders by the
    logs' own timestamps). Each request is compared with the one whose cache it could reuse: the previous loop step, the
    attempt it retries, the parent request of a fork or subagent child (the parent log is found
    beside the child), the loop request a compaction call summarises, the previous title or
    web-search call. A break names its cause (header_change, compaction, prune, plugin_replace,
    resume, fork, subagent, retry, title_input, search_input, unexplained, unrecorded_mutation), the
    header fields that changed, the log seqs that prove it and where the prompts first differ.
    A log with a capture (--capture, or a wire.jsonl found beside it, as `check` finds it) is
    compared with what was sent too: captured bodies that break the prefix where the log records
    nothing are an unrecorded_mutation break.

    Columns: "#" the request (the INDEX of `requests`); "vs" the request it is compared with (with
    its session id when that is a parent's: its shortest unique prefix, which `show` and `explain`
    accept, when the table would not fit with the whole id, as the caption says); "relation" how the two relate (step, retry, resume,
    fork, subagent, compaction_call...); "verdict" break (with --all also first, extension,
    cache_safe_change);
    "cause" the cause (+ any other at the same request); "fields" the header fields that changed;
    "evidence seqs" the log seqs that prove it; "first divergence" where the prompts first differ
    (the segment, the message index, "@N" the byte offset in the segment, "body@N" in the
    rendered body). A narrow terminal leaves out a column with no value in any row, then "first
    divergence", then "relation".

    With --accounting (implied by --prices and --openai-zdr), what each break cost too: it reads the
    log's cache accounting as well, so it takes as long as `cache`. A column "lost tokens (cost)"
    after "cause": the cache reads the request should have had and did not, and what they cost
    over cache reads at its rate (the "lost" of its row in `cache`'s timeline, every cause, priced
    as `cache` prices it; "?" when its cache reads were not logged, "$?" when no rate prices it,
    never $0 for unknown; in --format csv two columns, "lost tokens" and "lost cost"); a last row,
    "total" (under "cause"), summing what the listed requests lost ("≥$": a lower bound, a
    request's cost unknown; not in --format csv, whose rows are the JSON's); a narrow terminal
    then leaves out "evidence seqs" after "relation" (`explain` shows them all).

    With --json, one object per listed transition: "path" the log it is from, its session id,
    request, cause and evidence, and "unexplained" true for a break the log does not explain
    (cause unexplained or unrecorded_mutation, as --fail-on unexplained counts them); with --accounting
    also "lost_tokens", "lost_cost_usd" (null when not known) and "unpriced" (why they are not
    known, else null).

    Exit 0 when every break is explained, 1 when a break is unexplained (--fail-on any: when any
    break is listed), 2 on bad input.

    \b
    Example:
        dsh-audit breaks --json | jq 'select(.unexplained)'
        dsh-audit breaks --since 7d --jobs 0
    """
    given = session_paths(paths)
    logs = newest_first(selected_logs(given, since, until), given if paths else ())  # the documented listing order (newest_first)
    if not logs:
        return EXIT_OK
    with_cost = accounting or prices_path is not None or openai_zdr is not None
    prices: PriceBook | None = None
    zdr: bool | None = None
    if with_cost:
        try:
            prices = cache.load_prices(prices_path)  # a bad price file is one error, before any log is read
            zdr = stated_zdr(openai_zdr)  # and so is a bad pyproject.toml value
        except DshAuditError as exc:
            echo_error(exc)
            return EXIT_BAD_INPUT
    with progress_callback(len(logs), label="breaks") as report_progress:
        attributed, failures = _attribute(logs, lenient=lenient, max_version=max_version, jobs=jobs,
                                          engine=engine, scheduler=scheduler, progress=report_progress,
                                          routes=routes, capture=capture, prices=prices, zero_data_retention=zdr,
                                          every=show_all)
    status = EXIT_OK
    for outcome in failures:
        for warning in outcome.warnings:
            echo_warning(warning)
        assert outcome.error is not None
        echo_error(outcome.error)
        status = EXIT_BAD_INPUT
    found = failing = False
    for item in attributed:
        attribution = item.attribution
        rows = [t for t in attribution.transitions if show_all or t.verdict == "break"]
        found = found or any(t.verdict == "break" for t in rows)
        failing = failing or any(t.is_break and (fail_on == "any" or t.is_unexplained)
                                 for t in rows if fail_on != "never")
        if as_json:
            for t in rows:
                click.echo(dumps_line(_json_row(attribution.path, t, item.lost(t) if with_cost else None)))
        elif rows:
            _print_breaks(item, rows, cost=with_cost)
    if not as_json and not found and attributed:  # nothing to say when every log failed
        echo("no prefix-cache breaks")
    if status == EXIT_OK and failing:
        status = EXIT_FINDINGS
    return status


@click.command("explain", cls=RequestCommand)
@click.argument("path", type=click.Path())
@click.argument("index", type=int)
@json_option
@prices_option
@openai_zdr_option
@capture_option
@adapter_option(expose=False)
@routes_option
@attachments_option
@lenient_option
@pager_option("the answer")
def explain_command(path: str, index: int, as_json: bool, prices_path: str | None, openai_zdr: bool | None,
                    capture: str | None, routes: str | None, lenient: bool, max_version: int) -> int:
    """Say why request INDEX of one log did or did not reuse the previous request's cache.

    INDEX is the '#' column of `dsh-audit requests`; a negative INDEX counts from the end (-1 is
    the last request, -2 the one before) and may come before or after PATH. The answer names the
    request it is compared with, the verdict, the cause, the changed header fields and quotes the evidence events
    (type, seq and the data that matters). A log with a capture (--capture, or a wire.jsonl found
    beside it, as `check` finds it) is compared with what was sent too, as `breaks` compares it.
    A break says what it cost: the cache reads its request should have had and did not, and what
    they cost over cache reads at its rate, as `cache` counts them (--prices, --openai-zdr); with
    --json, "lost_tokens", "lost_cost_usd" (null when not known) and "unpriced" (why, else null)
    for any request.

    \b
    Example:
        dsh-audit explain ~/.dsh/sessions/--home-me-proj--/session-1 8
        dsh-audit explain latest -1
    """
    logs = [one_log(path)]
    prices = cache.load_prices(prices_path)  # a bad price file is one error, before the log is read
    zdr = stated_zdr(openai_zdr)
    # The bar's work: the log's bytes, then, with a capture, loading it and comparing each request's
    # captured body with the one before (as much again as the capture, as `diff` weighs it). The
    # comparison reports nothing as it goes: the bar waits below 100% until it is done.
    compared = 2 * _capture_size(capture_for(logs[0], capture))
    with log_progress(logs, label="explain", extra=compared) as advance:
        attributed, failures = _attribute(logs, lenient=lenient, max_version=max_version, routes=routes,
                                          capture=capture, prices=prices, zero_data_retention=zdr, every=True)
        advance(compared)
    for outcome in failures:
        for warning in outcome.warnings:
            echo_warning(warning)
        assert outcome.error is not None
        raise outcome.error
    item = attributed[0]
    attribution = item.attribution
    requests = sorted(t.request for t in attribution.transitions)
    position = request_position(index, len(requests))
    try:
        transition = attribution.transition(index if position is None or index >= 0 else requests[position])
    except KeyError:
        raise no_such_request(index, len(requests), logs[0]) from None
    lost = item.lost(transition)
    if as_json:
        page_listing()
        click.echo(dumps_line({**transition.to_json(), **lost.to_json()}))
    else:
        added = [lost.sentence()] if transition.is_break else []
        for line in fit_lines(format_transition(transition, added=added)):  # the first line starts the pager
            echo(line)
    return EXIT_OK


COMMANDS = [breaks_command, explain_command]
