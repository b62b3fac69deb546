"""``check`` and ``report`` take the options every pricing and cache-judging command takes:
``--prices FILE`` and ``--openai-zdr/--no-openai-zdr``, read before any log is."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from _cli import chat_log, invoke

import test_openai_breakpoints as openai_logs

GATEWAY = ('[providers.deepseek.models.deepseek-v4-flash]\ncache_miss = 1000000.0\ncache_read = 0.0\n'
           'output = 0.0\nsource = "our gateway"\n')


LIVE = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "live"


@pytest.mark.skipif(not LIVE.is_dir(), reason="../shared/corpus is absent")
def test_check_prices_with_the_given_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    log = sorted((LIVE / "a-chat" / "session-logs").glob("*.jsonl"))[0]
    prices = tmp_path / "gateway.toml"
    prices.write_text(GATEWAY)

    def cost(*args: str, notes: tuple[str, ...] = ()) -> str:
        code, out, err = invoke(monkeypatch, capsys, "check", str(log), *args, "--markdown", "-")
        # the notes, then what check says for people (session 40: on stderr beside a report on stdout)
        assert (code, err[:len(notes) + 1]) == (0, [*notes, "dsh-audit check"])
        return out.splitlines()[6].split(" | ")[7]  # the session's row, its cost column

    # the log alone (--no-capture): DeepSeek's list price; the title call logged no usage: a lower
    # bound, the unpriced request beside it
    assert cost("--no-capture") == "≥$0.0013 (1 unpriced)"
    # a dollar per cache-miss token: the 8,060 prompt tokens the cache did not hold
    assert cost("--no-capture", "--prices", str(prices)) == "≥$8060.0000 (1 unpriced)"
    # the wire.jsonl found beside the log prices the title call from its usage, with the table given:
    # its 140 cache-miss tokens besides
    note = "note: 1 request(s) priced from the capture's usage (their log holds none)"
    assert cost("--prices", str(prices), notes=(note,)) == "$8200.0000"


@pytest.mark.parametrize("command", ["check", "report"])
def test_a_bad_price_file_stops_before_any_log_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str], command: str) -> None:
    log = chat_log(tmp_path / "s" / "session.jsonl", "priced")
    prices = tmp_path / "gateway.toml"
    prices.write_text(GATEWAY.replace("1000000.0", "-1"))
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, command, str(log), "--prices", str(prices))
    assert (code, out, len(err)) == (2, "", 1)
    assert err[0].startswith(f"error: {prices}: ") and "cache_miss" in err[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gateway.toml", "s"]  # no report written


@pytest.mark.parametrize(("flag", "expected", "classifications"), [
    ("--openai-zdr", 0, {"as_expected": 1, "cold_ttl": 1}),
    ("--no-openai-zdr", 1920, {"as_expected": 1, "best_effort_miss": 1})])
def test_check_judges_openai_retention_with_the_stated_zdr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str], flag: str,
                                                          expected: int, classifications: dict[str, int]) -> None:
    log, routes = openai_logs._gpt_5_4(tmp_path)  # two gpt-5.4 requests two hours apart
    code, out, err = invoke(monkeypatch, capsys, "check", str(log), "--routes", str(routes), flag, "--json-report", "-")
    assert code == 0
    cache = json.loads(out)["sessions"][0]["cache"]
    assert (cache["expected_cache_read"], cache["classifications"]) == (expected, classifications)


def test_report_reads_the_zdr_status_before_any_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    log, routes = openai_logs._gpt_5_4(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.dsh-audit.cache]\nopenai-zero-data-retention = "yes"\n')
    monkeypatch.chdir(tmp_path)
    page = tmp_path / "page.html"
    code, out, err = invoke(monkeypatch, capsys, "report", str(log), "--routes", str(routes), "-o", str(page))
    assert (code, out) == (2, "") and not page.exists()
    assert err == [f"error: {(tmp_path / 'pyproject.toml').resolve()}:2: [tool.dsh-audit.cache] openai-zero-data-"
                   'retention must be true or false, not "yes" (hint: write openai-zero-data-retention = true or '
                   "false under [tool.dsh-audit.cache])"]
    code, out, err = invoke(monkeypatch, capsys, "report", str(log), "--routes", str(routes), "-o", str(page),
                            "--openai-zdr")  # the flag wins: the file is not read
    assert code == 0 and page.exists()


@pytest.mark.parametrize(("flag", "second"), [("--openai-zdr", "cold_ttl"), ("--no-openai-zdr", "best_effort_miss")])
def test_watch_judges_with_the_stated_zdr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str], flag: str, second: str) -> None:
    log, routes = openai_logs._gpt_5_4(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "watch", str(log), "--routes", str(routes), "--json", "--since",
                            "2000-01-01", "--idle-exit", "0.2", "--polling", flag)
    assert code == 0
    verdicts = [line["classification"] for line in map(json.loads, out.splitlines()) if "classification" in line]
    assert verdicts == ["as_expected", second]


def test_watch_refuses_a_bad_price_file_before_following(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    log = chat_log(tmp_path / "s" / "session.jsonl", "watched")
    missing = tmp_path / "none.toml"
    code, out, err = invoke(monkeypatch, capsys, "watch", str(log), "--prices", str(missing), "--idle-exit", "0.2")
    assert (code, out) == (2, "")
    assert err == [f"error: {missing}: cannot open: No such file or directory (hint: give --prices a TOML price "
                   "table; the Price files section of docs/cache-accounting.md gives the shape)"]


def test_index_stores_verdicts_judged_with_the_stated_zdr_and_reindexes_on_a_change(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    log, routes = openai_logs._gpt_5_4(tmp_path)
    db = str(tmp_path / "i.sqlite")

    def index(*args: str) -> tuple[int, list[str]]:
        code, out, err = invoke(monkeypatch, capsys, "index", str(log), "--routes", str(routes), "--db", db,
                                "--json", *args)
        assert code == 0
        summary = json.loads(out)
        connection = sqlite3.connect(db)
        found = [row[0] for row in connection.execute("SELECT classification FROM requests ORDER BY idx")]
        connection.close()
        return summary["indexed"], found

    assert index("--openai-zdr") == (1, ["as_expected", "cold_ttl"])
    assert index("--openai-zdr") == (0, ["as_expected", "cold_ttl"])  # unchanged: skipped
    assert index("--no-openai-zdr") == (1, ["as_expected", "best_effort_miss"])  # another status: read again
