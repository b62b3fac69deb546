"""Session 46 (issue 14, issue 11 item 3): ``stats`` says in CSV what its JSON says, counts what its
labels say, and gives its breaks by cause as the report's breaks by cause.

- A CSV cell holds one value: "cost by model" and "by model" key their rows by the model the price
  table bills alone, with the names its requests logged in a ``logged models`` column (``; ``-joined,
  JSON's ``logged_models``), as ``usage --by model --format csv`` does, never a table's one cell
  ``deepseek-flash (logged as deepseek-v4-flash)``.
- "requests (cache reads known)" (JSON ``usage_known``) counts the requests ``cache`` counts in its
  ``usage_known``: those whose cache read and prompt size are known, a title call whose usage came
  from the capture (``cache``: "1 of them by the capture") included, a request that logged reads
  but no prompt size not (it counted it, and named them "logged").
- "breaks by cause" gives what the breaks lost to each cause, beside the whole base of the breaks
  that lost to it; what every request lost (and its base) stays in "what cache losses cost, by cause".
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from _cli import invoke
from test_cli_round3 import USAGES, _usage_log
from test_html_round3 import _many_breaks

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "live"
C_CHANGE = CORPUS / "c-change"
needs_corpus = pytest.mark.skipif(not (C_CHANGE / "wire.jsonl").is_file(), reason="../shared/corpus is absent")


def _stats(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], db: Path, *args: str) -> str:
    code, out, err = invoke(monkeypatch, capsys, "stats", "--db", str(db), *args)
    assert (code, err) == (0, [])
    return out


def _index(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], db: Path, *args: str) -> None:
    code, _, err = invoke(monkeypatch, capsys, "index", "--db", str(db), *args)
    assert code == 0, err


def _tables(out: str) -> dict[str, list[list[str]]]:
    """CSV rows by table (each table's header row first, without its ``table`` cell)."""
    tables: dict[str, list[list[str]]] = {}
    header: list[str] = []
    for row in csv.reader(io.StringIO(out)):
        if not row:
            continue
        if row[0] == "table":
            header = row[1:]
            continue
        tables.setdefault(row[0], [header]).append(row[1:])
    return tables


def test_csv_by_model_has_the_model_alone_and_the_logged_names_apart(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "i.sqlite"
    _index(monkeypatch, capsys, db, str(_many_breaks(tmp_path / "m" / "session.jsonl")))
    tables = _tables(_stats(monkeypatch, capsys, db, "--format", "csv"))
    stats = json.loads(_stats(monkeypatch, capsys, db, "--json"))
    assert [row[:3] for row in tables["cost by model"]] == [
        ["model", "logged models", "requests"], ["deepseek-flash", "deepseek-v4-flash", "40"]]
    assert [row[:4] for row in tables["by model"]] == [
        ["model", "logged models", "requests", "reads known"], ["deepseek-flash", "deepseek-v4-flash", "40", "40"]]
    # the JSON's two keys, the same values
    assert [(m["model"], "; ".join(m["logged_models"])) for m in stats["by_model"]] == [
        ("deepseek-flash", "deepseek-v4-flash")]
    assert [(m["model"], "; ".join(m["logged_models"])) for m in stats["cost_by_model"]] == [
        ("deepseek-flash", "deepseek-v4-flash")]
    # a table keeps its one cell (room for it at 200 columns)
    monkeypatch.setenv("COLUMNS", "200")
    table = _stats(monkeypatch, capsys, db)
    assert "│ deepseek-flash (logged as deepseek-v4-flash) │       40 │          40 │" in table


def test_reads_known_counts_what_cache_counts_not_reads_without_a_prompt_size(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Three requests: two logged reads and prompt size, one reads alone (no inputTokens, DeepSeek's
    native adapter): ``cache`` counts 2 known and 1 apart; ``stats`` counted 3 as "cache reads logged"."""
    log = _usage_log(tmp_path / "a" / "session.jsonl", "sess-a", USAGES)
    db = tmp_path / "i.sqlite"
    _index(monkeypatch, capsys, db, str(log))
    code, out, _ = invoke(monkeypatch, capsys, "cache", "--json", str(log))
    assert code == 0
    cache = json.loads(out)
    totals = json.loads(_stats(monkeypatch, capsys, db, "--json"))["totals"]
    assert (cache["usage_known"], cache["usage_known_without_prompt"]) == (2, 1)
    assert (totals["requests"], totals["usage_known"], totals["prompt_unknown_requests"]) == (3, 2, 1)
    measures = dict(_tables(_stats(monkeypatch, capsys, db, "--format", "csv"))[f"{db}: fleet totals"][1:])
    assert (measures["requests"], measures["requests with cache reads known"]) == ("3", "2")
    assert "cache reads logged" not in _stats(monkeypatch, capsys, db)


@needs_corpus
@pytest.mark.parametrize(("flag", "known", "by_capture"), [((), 8, 1), (("--no-capture",), 7, 0)])
def test_reads_known_counts_a_title_call_whose_usage_came_from_the_capture_as_cache_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        flag: tuple[str, ...], known: int, by_capture: int) -> None:
    """c-change's title call logs no usage; the wire.jsonl beside the log gives it one: ``cache``
    counts it among its known requests ("8 with cache reads and prompt logged (1 of them by the
    capture)"), and so does ``stats``, whose label says "known" (its index does not tell the two
    apart); with the log alone both count 7."""
    db = tmp_path / "i.sqlite"
    _index(monkeypatch, capsys, db, str(C_CHANGE / "session-logs"), *flag)
    code, out, _ = invoke(monkeypatch, capsys, "cache", "--json", str(C_CHANGE / "session-logs"), *flag)
    assert code == 0
    cache = json.loads(out)
    assert (cache["usage_known"], cache["cost"]["usage_from_capture_requests"]) == (known, by_capture)
    totals = json.loads(_stats(monkeypatch, capsys, db, "--json"))["totals"]
    assert (totals["requests"], totals["usage_known"]) == (8, known)
    monkeypatch.setenv("COLUMNS", "200")
    assert f"│ requests (cache reads known) │ 8 ({known}) " in _stats(monkeypatch, capsys, db)


def test_breaks_by_cause_are_the_breaks_losses_beside_their_base(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """40 requests, 13 breaks: six header changes lost 1152 of 1152 reusable each time in all, seven
    prunes lost nothing, and the header changes' prefix, cached again by requests sent at the same
    instant, was lost to write_not_landed: 5760 of it by the breaks (of their base 5760), 6840 by
    every request (of 13440). The breaks by cause said 6840 (of 13440) beside 0 breaks, where the
    report's said 5760 (of 5760)."""
    db = tmp_path / "i.sqlite"
    _index(monkeypatch, capsys, db, str(_many_breaks(tmp_path / "m" / "session.jsonl")))
    stats = json.loads(_stats(monkeypatch, capsys, db, "--json"))
    assert [(c["cause"], c["cache_breaks"], c["attribution_breaks"], c["reusable_cache_read"], c["lost_tokens"])
            for c in stats["by_cause"]] == [("write_not_landed", 0, 0, 5760, 5760), ("header_change", 6, 6, 1152, 1152),
                                             ("prune", 7, 7, 0, 0)]
    assert [(c["cause"], c["reusable_cache_read"], c["lost_tokens"]) for c in stats["cost_by_cause"]] == [
        ("write_not_landed", 13440, 6840), ("header_change", 1152, 1152)]
    assert stats["totals"]["lost_tokens"] == 6840 + 1152
    assert _tables(_stats(monkeypatch, capsys, db, "--format", "csv"))["breaks by cause"] == [
        ["cause", "cache breaks", "attribution breaks", "reusable", "tokens lost"],
        ["write_not_landed", "0", "0", "5760", "5760"], ["header_change", "6", "6", "1152", "1152"],
        ["prune", "7", "7", "0", "0"]]
