"""What each break cost, in ``breaks`` and ``explain`` (issue 13), and the totals rows of ``breaks``
and ``requests`` (issue 14): the lost tokens and their cost are the ones ``cache`` judged for the
request (its timeline's ``lost`` and ``lost_cost``), priced with ``--prices``; unknown is ``?``,
``$?`` or null with a reason, never 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli import invoke, mixed_home

from dsh_audit.testing import LogBuilder

#: A dollar per cache-miss token for deepseek-v4-flash, nothing for reads and output.
GATEWAY = ('[providers.deepseek.models.deepseek-v4-flash]\ncache_miss = 1000000.0\ncache_read = 0.0\n'
           'output = 0.0\nsource = "our gateway"\n')


def _lines(out: str) -> list[str]:
    """Output lines; a heading whose path (a long tmp_path) leaves no room on its line for the
    session id, which then has a line of its own, is joined back to one ``PATH  session ID`` line."""
    lines = [line.rstrip() for line in out.splitlines()]
    if len(lines) > 1 and lines[1].startswith("session ") and "  session " not in lines[0]:
        lines[:2] = [f"{lines[0]}  {lines[1]}"]
    return lines


def _cache(run, *args: str) -> dict[int, dict[str, object]]:
    code, out, err = run("cache", "--json", *args)
    assert err == []
    (report,) = map(json.loads, out.splitlines())
    return {v["index"]: v for v in report["timeline"]}


def _breaks(run, *args: str) -> list[dict[str, object]]:
    code, out, err = run("breaks", "--json", "--cost", *args)
    assert (code, err) == (0, [])
    return list(map(json.loads, out.splitlines()))


def test_each_break_costs_what_cache_judged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """s-mixed: a system-prompt change loses the 1920 tokens the previous request cached, at
    deepseek-v4-flash's cache-miss rate minus its cache-read rate; the switch to local-coder (no
    price) lost nothing, so it cost $0 whatever its price."""
    mixed_home(tmp_path, monkeypatch, columns=80)

    def run(*args: str) -> tuple[int, str, list[str]]:
        return invoke(monkeypatch, capsys, *args)

    rows = _breaks(run)
    assert [(r["request"], r["cause"], r["lost_tokens"], r["lost_cost_usd"], r["unpriced_reason"]) for r in rows] == [
        (2, "header_change", 1920, 0.00056448, None), (4, "header_change", 0, 0, None)]
    assert list(rows[0])[-3:] == ["lost_tokens", "lost_cost_usd", "unpriced_reason"]  # after the transition's keys
    timeline = _cache(run)
    assert sum(timeline[2]["lost_tokens_by_cause"].values()) == rows[0]["lost_tokens"]  # type: ignore[union-attr]
    assert timeline[2]["lost_cost_usd"] == rows[0]["lost_cost_usd"]

    code, out, err = run("breaks", "--cost")
    log = tmp_path / "sessions" / "--p--" / "s-mixed" / "session.jsonl"
    assert (code, err) == (0, [])
    assert _lines(out)[0].endswith("/s-mixed/session.jsonl  session s-mixed")
    assert _lines(out)[1:] == [
        "                                                                        evidence",
        "#  vs  verdict  cause          reusable  lost tokens (cost)  fields         seqs",
        "─" * 80,
        "2   1  break    header_change      1920  1920 ($0.0006)      system           33",
        "4   2  break    header_change      2048  0                   model            49",
        "                total              3968  1920 ($0.0006)",  # beside its base (issue 11 item 3)
        "narrow terminal: actual, first divergence, relation not shown (widen it, or use",
        "--json)"]

    code, out, err = run("breaks", "--cost", "--format", "csv")
    assert (code, err) == (0, [])
    title = f"breaks,{log},s-mixed"  # the table, the log and the session, as requests' and cache's CSV
    assert out.splitlines() == [
        "table,log,session,#,vs,relation,verdict,cause,reusable,actual,lost tokens,lost cost,fields,evidence seqs,"
        "first divergence",
        f"{title},2,1,step,break,header_change,1920,0,1920,0.00056448,system,33,system @0 body@69",
        f"{title},4,2,step,break,header_change,2048,2048,0,0,model,49,config body@10"]  # the JSON's rows: no total

    code, out, err = run("explain", str(log), "2")
    assert (code, err) == (0, [])
    assert _lines(out)[3:7] == [
        "  prompt changed at system (header_change: system)",
        "  cost: 1920 token(s) it should have read from the cache and did not (of 1920",
        "    reusable, read 0) (as `cache` counts them), $0.0006 over cache reads at its",
        "    rate"]
    code, out, err = run("explain", str(log), "2", "--json")
    assert (code, err) == (0, [])
    answer = json.loads(out)
    assert (answer["reusable_cache_read"], answer["actual_cache_read"], answer["lost_tokens"], answer["lost_cost_usd"],
            answer["unpriced_reason"], answer["uncounted_tokens"], answer["uncounted_reason"]) == (
        1920, 0, 1920, 0.00056448, None, 0, None)


def test_breaks_and_explain_price_with_the_given_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    mixed_home(tmp_path, monkeypatch)
    prices = tmp_path / "gateway.toml"
    prices.write_text(GATEWAY)

    def run(*args: str) -> tuple[int, str, list[str]]:
        return invoke(monkeypatch, capsys, *args)

    code, out, err = run("breaks", "--json", "--prices", str(prices))  # --prices implies --cost
    assert (code, err) == (0, [])
    rows = list(map(json.loads, out.splitlines()))
    assert [(r["lost_tokens"], r["lost_cost_usd"]) for r in rows] == [(1920, 1920.0), (0, 0)]
    assert _cache(run, "--prices", str(prices))[2]["lost_cost_usd"] == 1920.0
    log = tmp_path / "sessions" / "--p--" / "s-mixed" / "session.jsonl"
    code, out, err = run("explain", str(log), "2", "--json", "--prices", str(prices))
    assert (code, err, json.loads(out)["lost_cost_usd"]) == (0, [], 1920.0)

    prices.write_text(GATEWAY.replace("1000000.0", "-1"))
    for argv in (["breaks"], ["explain", str(log), "2"]):
        code, out, err = run(*argv, "--prices", str(prices))
        assert (code, out, len(err)) == (2, "", 1), argv
        assert err[0].startswith(f"error: {prices}: ") and "cache_miss" in err[0]


def _write(tmp_path: Path, builder: LogBuilder) -> Path:
    return builder.write_jsonl(tmp_path / builder.session_id / "session.jsonl", packed=False)


def test_an_unpriced_break_costs_unknown_with_its_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A model the price table does not know: the lost tokens are known, their cost is not ($?,
    null, and the table's reason), and the total says so; never $0."""
    b = LogBuilder(session_id="s-local", created_at=1_800_000_000_000, model="local-coder", system="S" * 8000)
    with b.turn("one"), b.step():
        b.assistant("one", usage={"inputTokens": 2000, "outputTokens": 10, "cacheReadTokens": 0})
    b.configure(system="T" * 8000)
    with b.turn("two"), b.step():
        b.assistant("two", usage={"inputTokens": 2100, "outputTokens": 10, "cacheReadTokens": 0})
    log = _write(tmp_path, b)
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.chdir(tmp_path)

    def run(*args: str) -> tuple[int, str, list[str]]:
        return invoke(monkeypatch, capsys, *args)

    (row,) = _breaks(run, str(log))
    assert (row["lost_tokens"], row["lost_cost_usd"]) == (1920, None)
    assert (_cache(run, str(log))[1]["lost_tokens_by_cause"], _cache(run, str(log))[1]["lost_cost_usd"]) == (
        {"header_change": 1920}, None)
    assert isinstance(row["unpriced_reason"], str) and row["unpriced_reason"] == "no price for model 'local-coder'"
    code, out, err = run("breaks", "--cost", str(log))
    assert (code, err) == (0, [])
    assert _lines(out)[1:] == [
        "                                                   lost",
        "                                                   tokens               evidence",
        "#  vs  relation  verdict  cause          reusable  (cost)      fields       seqs",
        "─" * 80,
        "1   0  step      break    header_change      1920  1920 ($?)   system         20",
        "                          total              1920  1920 ($?)",
        "$?: no rate prices it (--json: unpriced says why), ≥$: a lower bound",
        "narrow terminal: actual, first divergence not shown (widen it, or use --json)"]
    code, out, err = run("explain", str(log), "1")
    assert (code, err) == (0, [])
    assert "$? (no price for model 'local-coder') over cache reads" in " ".join(out.split())


def test_a_break_whose_cache_reads_were_not_logged_lost_an_unknown_amount(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """DSH's native DeepSeek adapter logs no cacheReadTokens when the API reported none: what the
    break lost is unknown (?, null, with why), never 0; with --all the total's cost is unknown ($?)."""
    b = LogBuilder(session_id="s-unknown", created_at=1_800_000_000_000, model="deepseek-v4-flash",
                   system="S" * 8000)
    with b.turn("one"), b.step():
        b.assistant("one", usage={"inputTokens": 2000, "outputTokens": 10, "cacheReadTokens": 0})
    with b.turn("two"), b.step():
        b.assistant("two", usage={"inputTokens": 100, "outputTokens": 10, "cacheReadTokens": 1920})
    b.configure(system="T" * 8000)
    with b.turn("three"), b.step():
        b.assistant("three", usage={"inputTokens": 2100, "outputTokens": 10})
    log = _write(tmp_path, b)
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.chdir(tmp_path)

    def run(*args: str) -> tuple[int, str, list[str]]:
        return invoke(monkeypatch, capsys, *args)

    (row,) = _breaks(run, str(log))
    assert (row["request"], row["lost_tokens"], row["lost_cost_usd"]) == (2, None, None)
    assert row["unpriced_reason"] == "cache reads not logged: what it lost of the cache is unknown"
    assert _cache(run, str(log))[2]["actual_cache_read"] is None
    code, out, err = run("breaks", str(log), "--all", "--cost")
    assert (code, err) == (0, [])
    assert _lines(out)[1:] == [
        "                                                     lost",
        "                                                     tokens              evidence",
        "#  vs  relation  verdict    cause          reusable  (cost)    fields        seqs  first divergence",
        "─" * 100,
        "0   -  first     first                            0  0",
        "1   0  step      extension                     1920  0",
        "2   1  step      break      header_change      1920  ?         system          33  system @0 body@69",
        "                            total              1920  0 ($?)",
        "?: 1 request(s) logged no cache reads, left out of the total",
        "narrow terminal: actual not shown (widen it, or use --json)"]
    code, out, err = run("explain", str(log), "-1")
    assert (code, err) == (0, [])
    # its base too, as --json gives it (review C of session 45, F6)
    assert "  cost: unknown (cache reads not logged: what it lost of the cache is unknown) (of 1920 reusable, read ?)" \
        in out.replace("\n    ", " ").splitlines()


def test_requests_ends_with_a_total_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """The tokens of each count summed over the requests that logged it, the caption saying so when
    one did not (the title call); the JSON lines have no total."""
    mixed_home(tmp_path, monkeypatch, columns=80)
    code, out, err = invoke(monkeypatch, capsys, "requests")
    log = tmp_path / "sessions" / "--p--" / "s-mixed" / "session.jsonl"
    assert (code, err) == (0, [])
    assert _lines(out)[0].endswith("/s-mixed/session.jsonl  session s-mixed")
    assert _lines(out)[1:] == [
        "#  turn/step/attempt  kind   header     msgs  input  cache read  output  finish",
        "─" * 79,
        "0  1/1/1              loop   5 initial     1   2000           0      10  stop",
        "1  2/1/1              loop   5 initial     3    100        1920      10  stop",
        "2  3/1/1              loop   33 change     5   2100           0      10  stop",
        "3  -                  title  -             1      ?           ?       ?",
        "4  4/1/1              loop   49 change     7    100        2048      10  stop",
        "   total                                       4300        3968      40",
        "total: each count summed over the requests that logged it (?: not logged)"]
    code, out, err = invoke(monkeypatch, capsys, "requests", "--json")
    assert (code, err, len(out.splitlines())) == (0, [], 5)
    code, out, err = invoke(monkeypatch, capsys, "requests", "--format", "csv")  # the JSON's rows
    assert (code, err, [line.split(",")[3] for line in out.splitlines()]) == (0, [], ["#", "0", "1", "2", "3", "4"])
    code, out, err = invoke(monkeypatch, capsys, "requests", "--format", "markdown")
    assert (code, err) == (0, [])
    assert out.splitlines()[-3:] == ["|  | total |  |  |  | 4300 | 3968 | 40 |  |", "",
                                     "total: each count summed over the requests that logged it (?: not logged)"]


def test_breaks_says_what_a_break_cost_only_with_cost(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Without --cost (or --prices, --openai-zdr) ``breaks`` reads no cache accounting (issue 11:
    near the parse floor): no lost column, no total row, no cost keys in its JSON; --openai-zdr
    implies --cost as --prices does."""
    mixed_home(tmp_path, monkeypatch, columns=80)

    def run(*args: str) -> tuple[int, str, list[str]]:
        return invoke(monkeypatch, capsys, *args)

    code, out, err = run("breaks")
    assert (code, err) == (0, [])
    assert _lines(out)[1:] == [
        "                                                     evidence",
        "#  vs  relation  verdict  cause          fields          seqs  first divergence",
        "─" * 80,
        "2   1  step      break    header_change  system            33  system @0 body@69",
        "4   2  step      break    header_change  model             49  config body@10"]
    code, out, err = run("breaks", "--json")
    assert (code, err) == (0, [])
    rows = list(map(json.loads, out.splitlines()))
    assert [(r["request"], list(r)[-3:]) for r in rows] == [(2, ["common_messages", "detail", "notes"]),
                                                            (4, ["common_messages", "detail", "notes"])]
    code, out, err = run("breaks", "--json", "--openai-zdr")
    assert (code, err) == (0, [])
    assert [(r["lost_tokens"], r["lost_cost_usd"]) for r in map(json.loads, out.splitlines())] == [
        (1920, 0.00056448), (0, 0)]


def test_explain_says_a_drop_within_the_rules_tolerance_is_not_lost(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Review C of session 45, F2: lost <= reusable - actual. A model change whose reusable prefix is one
    DeepSeek unit (128) and read 0 lost nothing: the drop of 128 is within the rule's tolerance (one unit
    or 10 %), which explain says, and its --json names (uncounted_tokens, uncounted_reason)."""
    b = LogBuilder(session_id="s-small", created_at=1_800_000_000_000, model="deepseek-v4-flash", system="S" * 40)
    with b.turn("one"), b.step():
        b.assistant("one", usage={"inputTokens": 140, "outputTokens": 10, "cacheReadTokens": 0})
    b.configure(model="deepseek-v4-pro")
    with b.turn("two"), b.step():
        b.assistant("two", usage={"inputTokens": 150, "outputTokens": 10, "cacheReadTokens": 0})
    log = _write(tmp_path, b)
    monkeypatch.setenv("COLUMNS", "200")
    code, out, err = invoke(monkeypatch, capsys, "explain", str(log), "1")
    assert (code, err) == (0, [])
    assert [line for line in out.splitlines() if line.startswith("  cost:")] == [
        "  cost: $0 (of 128 reusable, read 0: 128 within the rule's tolerance, not counted as lost) (as `cache` "
        "counts them)"]
    code, out, err = invoke(monkeypatch, capsys, "explain", str(log), "1", "--json")
    answer = json.loads(out)
    assert [answer[key] for key in ("reusable_cache_read", "actual_cache_read", "uncounted_tokens", "uncounted_reason",
                                    "lost_tokens")] == [128, 0, 128, "tolerance", 0]
