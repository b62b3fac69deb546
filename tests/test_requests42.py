"""Session 42: `requests` says where a request's tokens come from by the ledger's one rule
(:func:`dsh_audit._usage_rule.logged_counts`), and reads a capture given with ``--capture`` once
per run, whatever the number of logs."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from _cli import invoke
from dsh_audit._usage_rule import MAX_TOKENS
from dsh_audit.testing import LogBuilder

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "live"


def _damaged_log(tmp_path: Path, provider: str) -> Path:
    """A log of three requests on ``provider``'s route: one whose logged usage holds counts past
    :data:`MAX_TOKENS` only (no count: `usage` leaves it unpriced), one with a sound usage, one
    whose ``inputTokens`` is a string (its other counts are logged)."""
    b = LogBuilder(session_id=f"s-{provider}", provider=provider, model="m")
    past = MAX_TOKENS + 1
    with b.turn("Hi"), b.step():
        b.assistant("Hello", usage={"inputTokens": past, "cacheReadTokens": past})
    with b.turn("Again"), b.step():
        b.assistant("Yes", usage={"inputTokens": 5, "outputTokens": 2, "cacheReadTokens": 3})
    with b.turn("Once more"), b.step():  # a count written as a string: no count, the others are
        b.assistant("Yes", usage={"inputTokens": "5", "outputTokens": 2, "cacheReadTokens": 3})
    return b.write_jsonl(tmp_path / "session.jsonl")


@pytest.mark.parametrize("provider", ["deepseek-official", "anthropic"])
def test_requests_usage_source_is_usages_for_a_count_past_max_tokens(
        tmp_path: Path, provider: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: `requests --json` said "log" for the damaged usage (any integer >= 0 counted), where
    `usage --by request --json` said null (it refuses a count past MAX_TOKENS)."""
    log = str(_damaged_log(tmp_path, provider))
    code, out, _ = invoke(monkeypatch, capsys, "requests", log, "--json", "--no-capture")
    shown = [(r["index"], r["usage_source"]) for r in map(json.loads, out.splitlines())]
    assert code == 0
    _, out, _ = invoke(monkeypatch, capsys, "usage", log, "--by", "request", "--json", "--no-capture")
    priced = [(int(r["key"].rpartition("#")[2]), r["usage_source"]) for r in json.loads(out)["rows"]]
    assert shown == priced == [(0, None), (1, "log"), (2, "log")]


#: Runs ``dsh-audit ARGS`` (argv[2:]) in process and prints its exit code and how often it opened
#: the file argv[1]: in a subprocess, so that the audit hook does not outlive the test.
_COUNTER = textwrap.dedent("""
    import os, sys
    from click.testing import CliRunner
    from dsh_audit.cli import cli

    target = os.path.realpath(sys.argv[1])
    opened = []

    def hook(event, args):
        if event == "open" and isinstance(args[0], (str, bytes)) and os.path.realpath(os.fsdecode(args[0])) == target:
            opened.append(args[0])

    sys.addaudithook(hook)
    result = CliRunner().invoke(cli, sys.argv[2:])
    print(result.exit_code, len(opened))
""")


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is absent")
def test_requests_reads_a_given_capture_once_for_every_log() -> None:
    """Before: 4 opens for 3 logs (one to check it could be read, one for each log's view)."""
    capture = CORPUS / "a-chat" / "wire.jsonl"
    logs = [str(next((CORPUS / name / "session-logs").glob("*.jsonl"))) for name in ("a-chat", "b-tools", "c-change")]
    counted = subprocess.run([sys.executable, "-c", _COUNTER, str(capture), "requests", "--capture", str(capture),
                              "--json", *logs], capture_output=True, text=True, check=True, timeout=60)
    assert counted.stdout.split() == ["0", "1"]


def _string_count_log(tmp_path: Path) -> Path:
    """The tour's port mistake (/tmp/b42 tour finding 2): a usage chunk whose ``inputTokens`` is
    the JSON string ``"100"``, then a sound request of the same counts."""
    b = LogBuilder(session_id="s-str", model="deepseek-v4-flash")
    for text, tokens in (("Hi", "100"), ("Again", 100)):
        with b.turn(text), b.step():
            b.assistant(text, usage={"inputTokens": tokens, "outputTokens": 5, "cacheReadTokens": 0})
    return b.write_jsonl(tmp_path / "session.jsonl")


#: What each format shows of :func:`_string_count_log`, past its heading (``{log}``: its path).
_STRING_COUNT = {
    "table": ["#  turn/step/attempt  kind  header     msgs  input  cache read  output  finish",
              "─" * 78,
              "0  1/1/1              loop  5 initial     1      ?           0       5  stop",
              "1  2/1/1              loop  5 initial     3    100           0       5  stop",
              "   total                                      ≥100           0      10",
              "total: each count summed over the requests that logged it (?: not logged, or not",
              "a count; ≥N: a lower bound, a logged usage lacks it)"],
    "csv": ["table,log,session,#,turn/step/attempt,kind,header,msgs,input,cache read,output,finish",
            "requests,{log},s-str,0,1/1/1,loop,5 initial,1,,0,5,stop",
            "requests,{log},s-str,1,2/1/1,loop,5 initial,3,100,0,5,stop"],
    "markdown": ["| \\# | turn/step/attempt | kind | header | msgs | input | cache read | output | finish |",
                 "| ---: | --- | --- | --- | ---: | ---: | ---: | ---: | --- |",
                 "| 0 | 1/1/1 | loop | 5 initial | 1 | ? | 0 | 5 | stop |",
                 "| 1 | 2/1/1 | loop | 5 initial | 3 | 100 | 0 | 5 | stop |",
                 "|  | total |  |  |  | ≥100 | 0 | 10 |  |", "",
                 "total: each count summed over the requests that logged it (?: not logged, or not a count; ≥N: a "
                 "lower bound, a logged usage lacks it)"],
}


@pytest.mark.parametrize("shape", sorted(_STRING_COUNT))
def test_requests_shows_a_count_logged_as_a_string_as_unknown(
        tmp_path: Path, shape: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: the table showed ``"100"`` as 100 and summed the input to 100 as if exact (no ``?``
    though its caption promised one); CSV left the cell empty, as `usage` leaves it uncounted."""
    log = str(_string_count_log(tmp_path))
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = invoke(monkeypatch, capsys, "requests", log, "--no-capture", "--format", shape)
    lines = out.splitlines()
    expected = [line.replace("{log}", log) for line in _STRING_COUNT[shape]]
    assert (code, err, lines[-len(expected):]) == (0, [], expected)


def _empty_attempt_usage_log(tmp_path: Path) -> Path:
    """Two requests of the same counts, the first's usage chunk ``{}`` (its ``assistant/message``
    keeps the counts: DSH704, the two differ): the attempt's own usage wins (spec §7.4)."""
    b = LogBuilder(session_id="s-empty", model="deepseek-v4-flash")
    for text in ("Hi", "Again"):
        with b.turn(text), b.step():
            b.assistant(text, usage={"inputTokens": 100, "outputTokens": 5, "cacheReadTokens": 0})
    log = b.write_jsonl(tmp_path / "session.jsonl")
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    chunk = next(r["data"]["chunk"] for r in records if r["type"] == "assistant/chunk"
                 and r["data"]["chunk"]["type"] == "usage")
    chunk["usage"] = {}
    log.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return log


def test_requests_reads_the_usage_the_ledger_prices_for_an_empty_attempt_usage(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: the table read the step's message usage (``usage or message_usage``): 100 input and
    5 output for request 0, summed as exact (200, 10), while --json's usage_source (and `usage`)
    said null: the ledger prices the attempt's empty usage, no count. Now every view reads one."""
    log = str(_empty_attempt_usage_log(tmp_path))
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = invoke(monkeypatch, capsys, "requests", log, "--no-capture")
    assert (code, err, out.splitlines()[-6:]) == (0, [], [
        "#  turn/step/attempt  kind  header     msgs  input  cache read  output  finish",
        "─" * 78,
        "0  1/1/1              loop  5 initial     1      ?           ?       ?  stop",
        "1  2/1/1              loop  5 initial     3    100           0       5  stop",
        "   total                                       100           0       5",
        "total: each count summed over the requests that logged it (?: not logged)"])
    _, out, _ = invoke(monkeypatch, capsys, "requests", log, "--no-capture", "--json")
    shown = [r["usage_source"] for r in map(json.loads, out.splitlines())]
    _, out, _ = invoke(monkeypatch, capsys, "usage", log, "--by", "request", "--json", "--no-capture")
    priced = [(r["usage_source"], r["tokens"]) for r in json.loads(out)["rows"]]
    assert (shown, priced) == ([None, "log"], [(None, None), ("log", {
        "cache_miss": 100, "cache_read": 0, "cache_write": 0, "output": 5, "reasoning": 0, "total": 105})])
