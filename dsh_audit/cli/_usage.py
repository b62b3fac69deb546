"""``dsh-audit usage``: what sessions cost, by session, turn, day, model, peak window or request."""

from __future__ import annotations

from functools import partial

import click

from ..cache import USAGE_GROUPS, SessionLedger, UsageRow, ledger_group, load_prices, usage_table
from ..errors import DshAuditError
from ..report import dumps_line
from ..report.terminal import print_table, progress_callback
from ..session import Failure, GroupResult, routes_from, run_groups
from ._common import (EXIT_BAD_INPUT, EXIT_OK, echo_error, echo_warning, engine_options, jobs_option, lenient_option,
                      listing_options, prices_option, routes_option, selected_logs, since_option, until_option)

__all__ = ["usage_command"]

_COLUMNS = ("{by}", "requests", "cache miss", "cache read", "cache write", "output", "cost", "no cache",
            "off-peak", "lost tokens (cost)", "unpriced")
# Left out, in this order, while a narrow terminal cannot show the table with whole words.
_DROPPABLE = ("unpriced", "cache write", "off-peak", "no cache")


def _usd(value: float) -> str:
    return f"${value:.4f}"


def _row(row: UsageRow, *, tier: bool) -> tuple[object, ...]:
    t = row.tokens
    tiers = (f">{row.tier:,}" if row.tier is not None else "",) if tier else ()
    return (row.key, row.requests, t.cache_miss, t.cache_read, t.cache_write, t.output, _usd(row.cost.total), *tiers,
            _usd(row.no_cache_cost), _usd(row.off_peak_cost),
            f"{row.lost_tokens} ({_usd(row.lost_cost)})" if row.lost_tokens else "", row.unpriced or "")


@click.command("usage")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--by", type=click.Choice(USAGE_GROUPS), default="session", show_default=True,
              help="Group requests by session, turn, day (UTC), model, peak window or request.")
@since_option
@until_option
@prices_option
@click.option("--no-breaks", is_flag=True, help="Skip cache accounting: no cost of breaks, faster.")
@listing_options
@routes_option
@lenient_option
@jobs_option
@engine_options
def usage_command(paths: tuple[str, ...], by: str, since: float | None, until: float | None,
                  prices_path: str | None, no_breaks: bool, as_json: bool, routes: str | None, lenient: bool,
                  max_version: int, jobs: int, engine: str, scheduler: str | None) -> int:
    """What sessions cost: tokens and USD by session, turn, day, model, window or request.

    Every request is priced at the rate for its model on its date and in its window (DeepSeek's
    peak / off-peak hours), with what it would have cost with no cache, what it would have cost
    off-peak, and what the cache breaks lost (their extra cache-miss tokens at the request's rate).
    A model the price table does not know is counted as unpriced, never as free. With no PATHS,
    the sessions under $DSH_HOME/sessions are read. --since and --until keep the requests the log
    says were sent in that window. By request, a `tier` column shows the prompt size above which a
    long-context tier's rates priced the whole request (only when one did).

    \b
    Example:
        dsh-audit usage ~/.dsh/sessions --by day
        dsh-audit usage session.jsonl --by request --json | jq .total.cost_usd
    """
    try:
        prices = load_prices(prices_path)
        routes_from(routes)  # a bad route file is one error, before any log is read
        logs = selected_logs(paths, None)
    except DshAuditError as exc:
        echo_error(exc)
        return EXIT_BAD_INPUT
    status = EXIT_OK
    task = partial(ledger_group, prices=prices, lenient=lenient, max_version=max_version, breaks=not no_breaks,
                   routes=routes)
    ledgers: list[SessionLedger] = []
    warnings: dict[str, tuple[str, ...]] = {}

    def keep_warnings(result: GroupResult[SessionLedger]) -> None:
        warnings.update(result.route_warnings)

    with progress_callback(len(logs), label="usage") as report_progress:
        found = run_groups(logs, task, jobs=jobs, engine=engine, scheduler=scheduler, progress=report_progress,
                           on_group=keep_warnings)
        for log, item in zip(logs, found):
            for warning in warnings.get(str(log), ()):
                echo_warning(warning)
            if isinstance(item, Failure):
                echo_error(item.error)
                status = EXIT_BAD_INPUT
            else:
                ledgers.append(item)
    table = usage_table(ledgers, by=by, since=since, until=until)
    if as_json:
        click.echo(dumps_line(table.to_json()))
        return status
    # A request billed at a long-context tier shows its threshold; no such request, no column.
    tier = any(r.tier is not None for r in table.rows)
    columns = [c.format(by=by) for c in _COLUMNS]
    if tier:
        columns.insert(columns.index("cost") + 1, "tier")
    print_table(f"usage by {by}", columns, [*(_row(r, tier=tier) for r in table.rows), _row(table.total, tier=tier)],
                droppable=_DROPPABLE,
                caption=f"{table.sessions} session(s); USD per {prices.per:,} tokens from the price table "
                        f"({', '.join(prices.files)}); check your contract"
                        + ("; tier: prompt tokens above which long-context rates priced the whole request"
                           if tier else ""))
    for reason, count in table.unpriced.items():
        echo_warning(f"{count} request(s) unpriced: {reason}")
    return status


COMMANDS = [usage_command]
