"""Session 46 (issue 14 §5, issue 11 item 3): the report's breaks by cause say what ``stats`` says.

The page's table gives, per cause, the breaks, the reusable cache reads of the breaks that lost
tokens to it (a break's whole base under each cause it lost to: what the tokens lost are measured
from), the tokens they lost and what that cost. ``stats`` gave other numbers for the same logs where
a request that is no break lost tokens to a shortfall (``write_not_landed``, ``cold_ttl``): its
breaks by cause summed every request's losses beside "0 breaks". Both now give the breaks' losses,
and ``stats``' cost by cause every request's.

The browser test uses the run's headless Chromium (``tests/conftest.py``'s ``browser`` fixture).
"""

from __future__ import annotations

import json
from pathlib import Path

from _cli import invoke
from test_html32 import _cells
from test_html_round3 import _many_breaks, _page, cold_break

from dsh_audit.cache import Costs


def _cold_break(path: Path) -> Path:
    return cold_break(path, "s-cold")


def test_the_pages_breaks_by_cause_are_stats_breaks_by_cause(tmp_path, monkeypatch, capsys, browser) -> None:
    logs = [_many_breaks(tmp_path / "m" / "session.jsonl"), _cold_break(tmp_path / "c" / "session.jsonl")]
    db = tmp_path / "i.sqlite"
    assert invoke(monkeypatch, capsys, "index", "--db", str(db), *map(str, logs))[0] == 0
    code, out, _ = invoke(monkeypatch, capsys, "stats", "--db", str(db), "--json")
    assert code == 0
    stats = json.loads(out)
    cost = {c["cause"]: c["break_cost_usd"] for c in stats["cost_by_cause"]}
    told = [[c["cause"], str(c["attribution_breaks"]), str(c["reusable_cache_read"]), str(c["lost_tokens"]),
             Costs.text(cost.get(c["cause"], 0.0))] for c in stats["by_cause"]]
    # the breaks' losses by cause, each beside the base of the breaks that lost to it (6 x 1152 header changes and
    # one of 1024 of a base 4096; the cold cache took 3072 of that break's 4096; 7 prunes lost nothing)
    assert told == [["write_not_landed", "0", "5760", "5760", "$0.0017"],
                    ["cold_ttl", "0", "4096", "3072", "$0.0005"],
                    ["header_change", "7", "5248", "2176", "$0.0005"],
                    ["prune", "7", "0", "0", "$0.0000"]]
    # every request's losses stay in the cost by cause: write_not_landed lost 6840 of 13440 in all
    assert {c["cause"]: (c["reusable_cache_read"], c["lost_tokens"]) for c in stats["cost_by_cause"]} == {
        "write_not_landed": (13440, 6840), "cold_ttl": (4096, 3072), "header_change": (5248, 2176)}
    page = _page(tmp_path, "r.html", logs)
    browser.get(page.as_uri())
    rows = _cells(browser, "#totals table.break-causes tr")
    # the base column says whose base it is: the breaks that lost tokens to the cause (not the prunes beside it)
    assert rows[0] == ["break cause", "breaks", "reusable of breaks that lost", "tokens lost", "cost", "lost nothing"]
    assert [row[:5] for row in rows[1:]] == told
    assert [row[5] for row in rows[1:]] == ["0", "0", "0", "7"]  # lost nothing: the seven prunes
