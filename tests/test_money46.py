"""Every money amount is summed exactly, as whole nano-dollars, and rounded once, when it is read
(issue 11, session 46): the cost, the cost with no cache, off-peak, what the lost cache reads and the
breaks cost, per cause, a long-context tier's cost, and the running costs of ``watch``.

Before, only the cost by bucket was kept exact; the other amounts were rounded to the nano-dollar
after every request, which past about $2M a group drifts (a float there cannot hold every
nano-dollar), so a hundred requests summed to a figure other than what their tokens are priced at
together. Each test below fails on that code with the figure given in its docstring.
"""

from __future__ import annotations

import random
from decimal import ROUND_HALF_EVEN, Decimal, localcontext

from dsh_audit.cache import Costs, ExactSum, Priced, Tokens, usd_cost, usd_total
from dsh_audit.cache._money import nanos_usd, usd_nanos
from dsh_audit.cache._sums import CostSums
from dsh_audit.fleet._costs import Ledger

#: A request of 987,654,321 tokens at $53.21 per million: $52553.08642041, a whole number of
#: nano-dollars; a hundred of them come to what 98,765,432,100 tokens cost at that rate.
TOKENS, RATE, PER = 987_654_321, 53.21, 1_000_000
ONE = usd_cost(TOKENS, RATE, PER)
HUNDRED = usd_cost(100 * TOKENS, RATE, PER)


def test_the_amounts_of_the_example_are_whole_nano_dollars() -> None:
    assert (ONE, HUNDRED) == (52553.08642041, 5255308.642041)
    assert (usd_nanos(ONE), usd_nanos(HUNDRED)) == (52553086420410, 5255308642041000)


def _request(sums: CostSums, amount: float) -> None:
    sums.add_request(tokens=Tokens(TOKENS), cost=Costs(amount), no_cache=amount, off_peak=amount, lost={"prune": 1},
                     lost_cost={"prune": amount}, is_break=True, unpriced=None, window="peak")


def test_a_hundred_requests_sum_to_what_their_tokens_cost_together() -> None:
    """Before: the cost with no cache, off-peak, lost and in breaks each $5255308.642041007."""
    sums = Costs.sums()
    for _ in range(100):
        _request(sums, ONE)
    summary = sums.summary()
    assert summary["cost_usd"] == {"cache_miss": HUNDRED, "cache_read": 0.0, "cache_write": 0.0, "output": 0.0,
                                   "total": HUNDRED}
    assert (summary["no_cache_cost_usd"], summary["off_peak_cost_usd"], summary["break_cost_usd"],
            sums.known("lost"), summary["lost_cost_usd_by_cause"], sums.causes()) == (
        5255308.642041, 5255308.642041, 5255308.642041, 5255308.642041, {"prune": 5255308.642041},
        {"prune": (100, 5255308.642041, 5255308.642041)})
    assert (sums.no_cache_cost, sums.off_peak_cost, sums.lost_cost, sums.break_cost) == (HUNDRED,) * 4
    assert [sums.shown(name) for name in ("cost", "no_cache", "off_peak", "lost", "break", "cache_miss")] == [
        "$5255308.6420"] * 6


def test_groups_merged_are_the_requests_summed_one_by_one() -> None:
    """Ten groups of ten (``usage``'s rows and their total). Before: $5255308.642041007 each again."""
    total = Costs.sums()
    for _ in range(10):
        group = Costs.sums()
        for _ in range(10):
            _request(group, ONE)
        total.merge(group)
    assert (total.known("no_cache"), total.known("off_peak"), total.known("lost"), total.known("break"),
            total.known("cost")) == (HUNDRED,) * 5
    assert total.causes() == {"prune": (100, HUNDRED, HUNDRED)}


def test_priced_sums_are_exact() -> None:
    """Before: $5255308.642041007 (one by one) and $5255308.642041 (of many)."""
    one_by_one = Priced()
    for _ in range(100):
        one_by_one = one_by_one.add(ONE, priced=True)
    assert one_by_one.known == HUNDRED
    assert one_by_one == Priced(HUNDRED, 100, 0, 100, 0) == Priced(requests=100, owing=100, nanos=5255308642041000)
    twice = Priced.of_many([one_by_one, one_by_one])
    assert (twice.usd, (one_by_one + one_by_one).usd, twice.nanos) == (10510617.284082, 10510617.284082,
                                                                       10510617284082000)


def test_costs_added_up_as_watch_adds_them_are_exact() -> None:
    """``watch`` keeps its running cost by bucket as ``Costs + Costs``. Before: $5255308.642041007 a bucket."""
    running = Costs()
    for _ in range(100):
        running = running + Costs(ONE, ONE, ONE, ONE)
    assert running.to_json() == {"cache_miss": HUNDRED, "cache_read": HUNDRED, "cache_write": HUNDRED,
                                 "output": HUNDRED, "total": 21021234.568164}
    assert Costs.of_many([Costs(ONE, output=ONE)] * 100) == Costs(HUNDRED, output=HUNDRED)


def test_a_sum_of_amounts_past_the_float_nano_dollar_is_exact() -> None:
    """$4044526.028518994 + $2130952.373933589 is $6175478.402452583; before, $6175478.402452582 (the
    floats' own errors, summed exactly, then rounded)."""
    amounts = (4044526.028518994, 2130952.373933589)
    assert usd_total(amounts) == 6175478.402452583 == nanos_usd(4044526028518994 + 2130952373933589)
    exact = ExactSum()
    for amount in amounts:
        exact.add(amount)
    assert exact.usd() == 6175478.402452583
    assert exact.nanos == 6175478402452583


def test_the_fleet_ledger_sums_every_amount_exactly() -> None:
    """``stats``' ledger of the index's ``costs`` rows, a long-context tier's cost too. Before: the
    no-cache, off-peak, lost and break cost $5255308.642041007, the tier's $5255308.642041."""
    ledger = Ledger()
    row = (272_000, None, "gpt-5.4", 1, TOKENS, 0, 0, 0, 0, ONE, 0.0, 0.0, 0.0, ONE, ONE, "peak")
    for _ in range(100):
        ledger.add(row, {"prune": 1}, {"prune": ONE})
    cost = ledger.to_json()
    assert {key: cost[key] for key in ("cost_usd", "no_cache_cost_usd", "off_peak_cost_usd", "lost_cost_usd",
                                       "break_cost_usd", "tier_requests", "tier_cost_usd")} == {
        "cost_usd": {"cache_miss": HUNDRED, "cache_read": 0.0, "cache_write": 0.0, "output": 0.0, "total": HUNDRED},
        "no_cache_cost_usd": HUNDRED, "off_peak_cost_usd": HUNDRED, "lost_cost_usd": HUNDRED,
        "break_cost_usd": HUNDRED, "tier_requests": 100, "tier_cost_usd": HUNDRED}


def _rounded(value: float) -> int:
    """``value`` x 1e9 rounded half to even, in decimal."""
    with localcontext() as context:
        context.prec = 400
        return int((Decimal(value) * 10**9).quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


def test_an_amount_in_nano_dollars_is_rounded_as_round_rounds() -> None:
    """Of any float, the nearest nano-dollar, half to even (ties exactly: 2**-10 USD is 976562.5
    nano-dollars), and read back as ``round(value, 9)`` reads it."""
    picked = random.Random(46)
    values = [2.0**-10, -(2.0**-10), 3 * 2.0**-10, 0.0, -0.0, 1e-10, 5e-10, 1e200, -1e200, 2.0**20, 4e6 + 0.5e-9]
    for _ in range(2000):
        scale = picked.choice((1e-9, 1e-3, 1.0, 1e5, 2.0**20, 5e6, 1e12, 1e18))
        values += [picked.uniform(-scale, scale), picked.randrange(-10**16, 10**16) / 1e9,
                   (picked.randrange(0, 10**15) + 0.5) / 1e9, picked.randrange(0, 2**40) / 2**40]
    for value in values:
        assert usd_nanos(value) == _rounded(value), value
        if abs(value) < 1e15:
            assert nanos_usd(usd_nanos(value)) == round(value, 9), value
    # the float 5e-10 is a little above half a nano-dollar
    assert [usd_nanos(v) for v in (2.0**-10, 3 * 2.0**-10, -(2.0**-10), 1e-10, 5e-10)] == [976562, 2929688, -976562,
                                                                                          0, 1]
