"""A logged usage without ``cacheReadTokens`` reads the same in every view (issue 14, issue 11 item
3: one story in every view), by the DSH adapter that wrote it.

DSH's native DeepSeek adapter serves the ``deepseek-official`` provider alone
(``llm-deepseek/src/index.ts`` ``PROVIDER``) and writes the bucket only when the wire reported one:
a missing bucket is unknown (``?``). Every other provider goes through DSH's pi-ai adapter, whose
``mapUsage`` (``llm-pi-ai/src/stream.ts``) writes the bucket only when pi-ai's ``cacheRead`` is above
0 ("pi-ai reports zeros, not absence"): a missing bucket is pi-ai's 0. Before, ``requests`` showed
``?`` for a pi-ai request whose bucket was missing while ``cache`` (and the report, ``sessions`` and
the index after it) counted 0.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from _cli import invoke
from dsh_audit.testing import LogBuilder, ToolCall

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
LIVE_PI = CORPUS / "live-pi"
needs_corpus = pytest.mark.skipif(not LIVE_PI.is_dir(), reason="../shared/corpus/live-pi is absent")

#: (provider, model, what a usage with no bucket reads as): pi-ai's catalog providers, then the native one.
ROUTES = [("anthropic", "claude-sonnet-4-5", 0), ("openai", "gpt-5", 0), ("deepseek", "deepseek-chat", 0),
          ("deepseek-official", "deepseek-v4-flash", None)]

#: Per request: the usage logged, and its cache read when the bucket is there.
USAGES = [{"inputTokens": 3000, "outputTokens": 10},  # no bucket
          {"inputTokens": 40, "outputTokens": 10, "cacheReadTokens": 2990},
          {"inputTokens": 3100, "outputTokens": 10, "cacheReadTokens": 0}]  # a logged 0 stays 0


def _log(folder: Path, provider: str, model: str) -> Path:
    b = LogBuilder(session_id=f"bucket-{provider}", provider=provider, model=model)
    with b.turn("Read a.txt, then b.txt"):
        for n, usage in enumerate(USAGES):
            with b.step():
                if n < len(USAGES) - 1:
                    reply = b.assistant(f"step {n}", tool_calls=[ToolCall("read", {"file_path": f"{n}.txt"})],
                                        usage=usage)
                    b.tool_result(reply.call_ids[0], f"contents {n}")
                else:
                    b.assistant("done", usage=usage)
    return b.write_jsonl(folder / provider / "session.jsonl")


def _csv_column(out: str, name: str) -> list[str]:
    rows = list(csv.reader(io.StringIO(out)))
    at = rows[0].index(name)
    return [row[at] for row in rows[1:]]


def _report_data(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], log: Path,
                 page: Path, *options: str) -> dict[str, Any]:
    code, _, err = invoke(monkeypatch, capsys, "report", *options, str(log), "-o", str(page))
    assert code in (0, 1), err
    blob = re.search(r'<script type="application/json" id="dsh-data">(.*?)</script>', page.read_text(), re.S)
    assert blob is not None
    session: dict[str, Any] = json.loads(blob.group(1))["sessions"][0]
    return session


@pytest.mark.parametrize(("provider", "model", "missing"), ROUTES)
def test_every_view_reads_a_missing_bucket_alike_and_keeps_a_logged_zero(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        provider: str, model: str, missing: int | None) -> None:
    log = _log(tmp_path, provider, model)
    reads = [missing, 2990, 0]
    shown = ["" if read is None else str(read) for read in reads]  # CSV: an unknown count is an empty cell
    known_prompt = (3000 if missing is not None else 0) + (40 + 2990) + (3100 + 0)

    code, out, err = invoke(monkeypatch, capsys, "requests", "--format", "csv", str(log))
    assert (code, err) == (0, [])
    assert _csv_column(out, "cache read") == shown

    code, out, err = invoke(monkeypatch, capsys, "cache", "--json", str(log))
    assert code in (0, 1), err
    report = json.loads(out)
    assert [row["actual_cache_read"] for row in report["timeline"]] == reads
    assert (report["timeline"][0]["classification"] == "usage_unknown") is (missing is None)
    assert (report["requests"], report["usage_known"], report["prompt_tokens"], report["actual_cache_read"],
            report["actual_hit_ratio"]) == (3, 2 if missing is None else 3, known_prompt, 2990, 2990 / known_prompt)

    code, out, err = invoke(monkeypatch, capsys, "sessions", "--json", str(log))
    assert (code, err) == (0, [])
    summary = json.loads(out)
    assert (summary["prompt_tokens"], summary["actual_cache_read"], summary["actual_hit_ratio"]) == (
        known_prompt, 2990, 2990 / known_prompt)

    session = _report_data(monkeypatch, capsys, log, tmp_path / "report.html")
    assert [r["actual"] for r in session["requests"]] == reads
    assert (session["overview"]["prompt_tokens"], session["overview"]["cache_read"],
            session["overview"]["hit_ratio"]) == (known_prompt, 2990, 2990 / known_prompt)


@needs_corpus
def test_the_openai_completions_route_reads_alike_in_requests_cache_and_the_report(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """c3: pi-ai's openai-completions route; its first loop request was answered with
    ``cached_tokens: 0`` (wire.jsonl), which pi-ai's adapter logs as no bucket. The logs' usage is
    compared (``requests`` lists the log's own; ``--no-capture``: the wire.jsonl beside the log is not
    read); with it found, only the title call, which logs no usage, reads the capture's (0)."""
    log = next((LIVE_PI / "c3-openai-compat" / "session-logs").glob("*.jsonl"))
    code, out, err = invoke(monkeypatch, capsys, "requests", "--format", "csv", "--no-capture", str(log))
    assert (code, err) == (0, [])
    reads = _csv_column(out, "cache read")
    assert reads == ["", "0", "8064", "8192", "8320", "8448"]  # the title call logs no usage: empty in CSV
    code, out, err = invoke(monkeypatch, capsys, "cache", "--json", "--no-capture", str(log))
    assert (code, err) == (0, [])
    report = json.loads(out)
    assert [row["actual_cache_read"] for row in report["timeline"]] == [None if read == "" else int(read) for read in reads]
    assert report["usage_known"] == 5
    session = _report_data(monkeypatch, capsys, log, tmp_path / "report.html", "--no-capture")
    assert [r["actual"] for r in session["requests"]] == [row["actual_cache_read"] for row in report["timeline"]]
    code, out, err = invoke(monkeypatch, capsys, "cache", "--json", str(log))
    assert (code, err) == (0, ["note: 1 request(s) priced from the capture's usage (their log holds none)"])
    found = json.loads(out)
    assert [(row["actual_cache_read"], row.get("usage_source")) for row in found["timeline"]] == [
        (0, "capture"), *((row["actual_cache_read"], None) for row in report["timeline"][1:])]
    assert found["usage_known"] == 6
    session = _report_data(monkeypatch, capsys, log, tmp_path / "found.html")
    assert [r["actual"] for r in session["requests"]] == [row["actual_cache_read"] for row in found["timeline"]]
    code, out, err = invoke(monkeypatch, capsys, "requests", "--format", "csv", str(log))  # the one usage of every view
    assert (code, err, _csv_column(out, "cache read")) == (0, [], [str(row["actual_cache_read"]) for row in found["timeline"]])


@needs_corpus
def test_the_anthropic_route_break_reads_zero_in_requests_as_in_cache(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """c1: the model switch at request 9 is a header_change break; pi-ai's Anthropic route logged
    no bucket for it (``cache_read_input_tokens: 0`` on the wire): both views read 0."""
    log = next((LIVE_PI / "c1-anthropic-tools" / "session-logs").glob("*.jsonl"))  # the log's usage alone
    code, out, err = invoke(monkeypatch, capsys, "cache", "--json", "--no-capture", str(log))
    assert (code, err) == (0, [])
    report = json.loads(out)
    row = report["timeline"][9]
    assert (row["actual_cache_read"], row["classification"], row["cause"]) == (0, "break_explained", "header_change")
    code, out, err = invoke(monkeypatch, capsys, "requests", "--format", "csv", "--no-capture", str(log))
    assert (code, err) == (0, [])
    assert _csv_column(out, "cache read") == ["" if row["actual_cache_read"] is None else str(row["actual_cache_read"])
                                              for row in report["timeline"]]


def test_a_negative_count_is_no_count_in_requests_and_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A logged ``cacheReadTokens`` below 0 (validate warns, DSH702) is unknown, never a read of
    -7936 tokens that makes the prompt negative (before: ``actual -7936``, ``below_minimum``)."""
    b = LogBuilder(session_id="negative", provider="deepseek-official", model="deepseek-v4-flash")
    with b.turn("Hi"):
        with b.step():
            b.assistant("Hello", usage={"inputTokens": 100, "outputTokens": 5, "cacheReadTokens": -7936})
    log = b.write_jsonl(tmp_path / "session.jsonl")
    code, out, err = invoke(monkeypatch, capsys, "requests", "--format", "csv", str(log))
    assert (code, err, _csv_column(out, "cache read")) == (0, [], [""])
    code, out, err = invoke(monkeypatch, capsys, "cache", "--json", str(log))
    assert [(row["actual_cache_read"], row["classification"]) for row in json.loads(out)["timeline"]] == [
        (None, "usage_unknown")]
