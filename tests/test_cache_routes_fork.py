"""The cache rules, prompt and comparisons of a request are its own route's, and a fork child
continues its parent's cache.

Issue 12 item 4: a session that switches routes built every request of a rule family from the
first route's renderer (an ``openai-completions`` gateway after a Responses turn fell back to log
JSON; pi-ai's ``deepseek`` provider was rendered as native DeepSeek and measured against native
requests). Issue 11 item 3: a fork child's first request was judged against nothing, so a lost
cache read was never flagged, while ``explain`` compares it with the parent's request.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from dsh_audit.testing import LogBuilder, ToolCall, tool_schema

from _cli import invoke

ROOT = Path(__file__).resolve().parent.parent
FORK = ROOT.parent / "shared" / "corpus" / "live" / "f-fork" / "session-logs"
PARENT_ID = "session-ef87ee25-88b4-4f9c-a682-fd2071e3f0d6"
CHILD_ID = "402a1ae8-7f85-40fc-b7cf-82cfc177dcd7"
needs_fork = pytest.mark.skipif(not FORK.is_dir(), reason="../shared/corpus/live/f-fork is absent")

READ = tool_schema("read", "Read a file.", {"path": {"type": "string"}})
ROUTES = """\
- id: llm-pi-ai
  config:
    providers:
      local-openai:
        api: openai-completions
        baseURL: http://127.0.0.1:8080/v1
        models:
          - id: local-coder
            contextWindow: 1000000
            maxTokens: 8192
            reasoningEfforts:
              off:
              high: high
          - id: deepseek/deepseek-chat-v3.1
            contextWindow: 1000000
            maxTokens: 8192
            reasoningEfforts:
              off:
              high: high
"""
START = 1_796_180_400_000  # 2026-12-01 03:00 UTC


def _usage(inputs: int, output: int, read: int = 0, write: int = 0) -> dict[str, int]:
    usage = {"inputTokens": inputs, "outputTokens": output}
    if read:
        usage["cacheReadTokens"] = read
    if write:
        usage["cacheWriteTokens"] = write
    return usage


def _pi_ai(b: LogBuilder, seq: int, api: str, provider: str, model: str, signature: str | None = None) -> None:
    """Give reply ``seq`` the pi-ai replay envelope its route writes (the route's evidence)."""
    message = b.event(seq)["data"]["message"]
    blocks = [{"type": "reasoning", "thinkingSignature": signature or "reasoning_content"}
              if block["type"] == "reasoning" else {"type": block["type"]} for block in message["content"]]
    stop = "toolUse" if any(block["type"] == "tool-call" for block in message["content"]) else "stop"
    message["source"]["replayState"] = {"response": {
        "kind": "pi-ai", "version": 2, "api": api, "provider": provider, "model": model,
        "responseId": f"r_{seq}", "stopReason": stop}, "blocks": blocks}


def _switching_log(path: Path, *, fourth: tuple[str, str] = ("openrouter", "deepseek/deepseek-chat-v3.1"),
                   fifth_model: str = "local-coder", responses: bool = True) -> Path:
    """One session over five routes: native DeepSeek, Anthropic, OpenAI's Responses API (or, without
    ``responses``, the ``fourth`` route once more), ``fourth`` (an ``openai-completions`` route), a
    local ``openai-completions`` gateway (model ``fifth_model``), native DeepSeek again."""
    b = LogBuilder(session_id="session-switch-0001", provider="deepseek-official", model="deepseek-v4-pro",
                   tools=[READ], reasoning_effort="high", max_tokens=None, created_at=START, clock_step_ms=1000)
    with b.turn("Read notes.md."):
        with b.step():
            r = b.assistant(None, reasoning="Read it.", usage=_usage(5000, 100),
                            tool_calls=[ToolCall("read", '{"path": "notes.md"}', id="call_00_a")])
            b.tool_result(r.call_ids[0], "hi")
        with b.step():
            b.assistant("Notes say hi.", reasoning="ok", usage=_usage(5100, 50, read=4992))
    b.configure(provider="anthropic", model="claude-sonnet-4-5")
    with b.turn("Now b.txt."):
        with b.step():
            r = b.assistant("Reading.", reasoning="Claude.", usage=_usage(200, 80, write=6000),
                            tool_calls=[ToolCall("read", '{"path":"b.txt"}', id="toolu_1")])
            _pi_ai(b, r.seq, "anthropic-messages", "anthropic", "claude-sonnet-4-5", "sig1")
            b.tool_result(r.call_ids[0], "bee")
        with b.step():
            r = b.assistant("B says bee.", reasoning="done", usage=_usage(50, 40, read=6000, write=300))
            _pi_ai(b, r.seq, "anthropic-messages", "anthropic", "claude-sonnet-4-5", "sig2")
    third = ("openai", "gpt-5.4") if responses else fourth
    b.configure(provider=third[0], model=third[1])
    with b.turn("Now c.txt."):
        with b.step():
            r = b.assistant("C.", usage=_usage(7000, 30))
            _pi_ai(b, r.seq, "openai-responses" if responses else "openai-completions", *third)
    b.configure(provider=fourth[0], model=fourth[1])
    with b.turn("Now d.txt."):
        with b.step():
            r = b.assistant("D.", usage=_usage(7200, 30))
            _pi_ai(b, r.seq, "openai-completions", *fourth)
    b.configure(provider="local-openai", model=fifth_model, max_tokens=8192)
    with b.turn("Now e.txt."):
        with b.step():
            r = b.assistant("E.", usage=_usage(7400, 30, read=7168))
            _pi_ai(b, r.seq, "openai-completions", "local-openai", fifth_model)
    b.configure(provider="deepseek-official", model="deepseek-v4-pro", max_tokens=None)
    with b.turn("Thanks."):
        with b.step():
            b.assistant("Welcome.", usage=_usage(7600, 10, read=5056))
    return b.write_jsonl(path)


def _reports(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> list[dict[str, Any]]:
    code, out, err = invoke(monkeypatch, capsys, "cache", "--json", *args)
    assert code == 0, err
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def _timeline(report: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Per request: prompt source, expected and actual cache read, classification, compared with."""
    return [(v["prompt_source"], v["expected_cache_read"], v["actual_cache_read"], v["classification"], v["source_index"])
            for v in report["timeline"]]


def _routes(tmp_path: Path) -> str:
    routes = tmp_path / "routes.yml"
    routes.write_text(ROUTES, encoding="utf-8")
    return str(routes)


# -- a session that switches routes ---------------------------------------------------------------


#: The switching session's timeline (:func:`_timeline`: prompt source, expected, actual, verdict,
#: compared with): the same whether pi-ai's ``deepseek`` provider or OpenRouter sends request 4.
SWITCHED = [
    ("wire:deepseek", 0, None, "usage_unknown", None),
    ("wire:deepseek", 4992, 4992, "as_expected", 0),
    ("wire:anthropic", 0, 0, "break_explained", None),
    ("wire:anthropic", 6200, 6000, "as_expected", 2),
    ("wire:responses", 0, 0, "break_explained", None),
    ("wire:openai", 0, 0, "break_explained", None),
    ("wire:openai", 0, 7168, "break_explained", None),
    ("wire:deepseek", 9984, 5056, "break_explained", 1),
]


def test_each_request_is_built_from_its_own_routes_body(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Requests 5 (OpenRouter) and 6 (a local gateway) follow a Responses turn of the same rule
    family: each is its own ``openai`` body (they were log JSON, built by the Responses builder),
    and neither reads what another provider cached."""
    log = _switching_log(tmp_path / "switch.jsonl")
    [report] = _reports(monkeypatch, capsys, str(log), "--routes", _routes(tmp_path))
    assert _timeline(report) == SWITCHED
    assert report["notes"] == []


def test_one_provider_keeps_its_cache_across_a_switch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Without the Responses turn, OpenRouter's second request reads its first one's prefix; the
    local gateway serving the same model name is another server: it reads nothing of OpenRouter's
    (the rule family and model alone put them in one cache)."""
    log = _switching_log(tmp_path / "switch.jsonl", responses=False, fifth_model="deepseek/deepseek-chat-v3.1")
    [report] = _reports(monkeypatch, capsys, str(log), "--routes", _routes(tmp_path))
    assert _timeline(report) == [
        ("wire:deepseek", 0, None, "usage_unknown", None),
        ("wire:deepseek", 4992, 4992, "as_expected", 0),
        ("wire:anthropic", 0, 0, "break_explained", None),
        ("wire:anthropic", 6200, 6000, "as_expected", 2),
        ("wire:openai", 0, 0, "break_explained", None),
        ("wire:openai", 6912, 0, "best_effort_miss", 4),
        ("wire:openai", 0, 7168, "break_explained", None),
        ("wire:deepseek", 9984, 5056, "break_explained", 1),
    ]


def test_pi_ai_deepseek_provider_is_not_measured_against_native_bodies(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """pi-ai's catalog ``deepseek`` provider reaches DeepSeek's API, as the native adapter does,
    but in another body format: its request is its ``openai-completions`` body under DeepSeek's
    rule (it was the native renderer's, expected 7168 as if it reused native request 1), and the
    native request after it is compared with native request 1 again (it was request 5)."""
    log = _switching_log(tmp_path / "switch.jsonl", fourth=("deepseek", "deepseek-v4-pro"))
    [report] = _reports(monkeypatch, capsys, str(log), "--routes", _routes(tmp_path))
    assert _timeline(report) == SWITCHED
    assert [v["family"] for v in report["timeline"]][5] == "deepseek"


# -- a fork child and its parent ------------------------------------------------------------------


def _fork_pair(folder: Path, child_read: int) -> tuple[Path, Path]:
    """A parent of two native DeepSeek steps and a fork child of one step, its read ``child_read``."""
    parent = LogBuilder(session_id="session-parent-0001", provider="deepseek-official", model="deepseek-v4-pro",
                        tools=[READ], max_tokens=None, created_at=START, clock_step_ms=1000)
    with parent.turn("Read notes.md."):
        with parent.step():
            r = parent.assistant(None, reasoning="Read it.", usage=_usage(3000, 40),
                                 tool_calls=[ToolCall("read", '{"path": "notes.md"}', id="call_00_a")])
            parent.tool_result(r.call_ids[0], "hi")
        with parent.step():
            parent.assistant("Notes say hi.", reasoning="ok", usage=_usage(140, 20, read=2944))
    child = parent.fork(session_id="session-child-0001")
    with child.turn("Review notes.md."):
        with child.step():
            # the native adapter writes the bucket the wire reported, 0 too
            child.assistant("Reviewed.", usage={"inputTokens": 3250 - child_read, "outputTokens": 10,
                                                "cacheReadTokens": child_read})
    return parent.write_jsonl(folder / "parent.jsonl"), child.write_jsonl(folder / "child.jsonl")


@pytest.mark.parametrize(("read", "row", "lost"), [
    (3072, ("wire:deepseek", 3072, 3072, "as_expected", 1), {}),
    (0, ("wire:deepseek", 3072, 0, "best_effort_miss", 1), {"best_effort_miss": 3072}),
])
def test_a_fork_child_reads_its_parents_cache(
        read: int, row: tuple[Any, ...], lost: dict[str, int], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The child's first request is judged against the parent's request ``explain`` names (its
    last loop request inside the seed, index 1): a read that drops to 0 is a loss (attribution
    calls an intact fork ``cache_safe_change``, no break: the drop is a miss, by the times)."""
    _, child = _fork_pair(tmp_path, read)
    reports = {r["session_id"]: r for r in _reports(monkeypatch, capsys, str(tmp_path))}
    assert _timeline(reports["session-child-0001"]) == [row]
    assert reports["session-child-0001"]["timeline"][0]["lost_tokens_by_cause"] == lost
    assert reports["session-child-0001"]["notes"] == [
        "request 0 continues request 1 of parent session session-parent-0001 (fork): its expected cache read "
        "is measured against that request (its source_index)"]
    assert _timeline(reports["session-parent-0001"]) == [
        ("wire:deepseek", 0, None, "usage_unknown", None), ("wire:deepseek", 2944, 2944, "as_expected", 0)]
    code, out, _ = invoke(monkeypatch, capsys, "explain", str(child), "0", "--json")
    said = json.loads(out)
    assert (code, said["previous"], said["previous_session_id"], said["verdict"], said["cause"]) == \
        (0, 1, "session-parent-0001", "cache_safe_change", "fork")


def test_a_fork_child_without_its_parent_keeps_todays_verdict_and_says_why(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _fork_pair(tmp_path / "both", 0)
    alone = tmp_path / "a" / "b" / "c"
    alone.mkdir(parents=True)
    shutil.copy(tmp_path / "both" / "child.jsonl", alone / "child.jsonl")
    [report] = _reports(monkeypatch, capsys, str(alone))
    assert _timeline(report) == [("wire:deepseek", 0, 0, "as_expected", None)]
    assert report["notes"] == ["parent session session-parent-0001 was not read: the first request is compared "
                               "with no earlier request (give the parent's log too, or keep it beside the child's)"]


@needs_fork
@pytest.mark.parametrize(("edit", "row", "lost"), [
    (None, ("wire:deepseek", 8064, 8064, "as_expected", 2), {}),
    # the tester's edit: the read becomes 0 and the logged prompt (input + read) shrinks to 288
    (('"cacheReadTokens":8064', '"cacheReadTokens":0'), ("wire:deepseek", 256, 0, "write_not_landed", 2),
     {"write_not_landed": 256}),
    # the same prompt, read as fresh input: the whole parent prefix is lost
    (('"inputTokens":288,"outputTokens":14,"cacheReadTokens":8064',
      '"inputTokens":8352,"outputTokens":14,"cacheReadTokens":0'),
     ("wire:deepseek", 8064, 0, "write_not_landed", 2), {"write_not_landed": 8064}),
])
def test_the_corpus_fork_child_is_judged_against_its_parent(
        edit: tuple[str, str] | None, row: tuple[Any, ...], lost: dict[str, int], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """``live/f-fork``: the child's request 0 continues parent request 2 (``explain``'s pairing).
    The corpus logs' times are compressed (the child is sent 0.08 s after the parent's request
    answered, under DeepSeek's 2 s write lag), so a drop there is ``write_not_landed``."""
    for log in FORK.glob("*.jsonl"):
        text = log.read_text(encoding="utf-8")
        if edit is not None and log.name.startswith(CHILD_ID):
            assert text.count(edit[0]) == 2  # the usage chunk and the assistant message
            text = text.replace(*edit)
        (tmp_path / log.name).write_text(text, encoding="utf-8")
    reports = {r["session_id"]: r for r in _reports(monkeypatch, capsys, str(tmp_path))}
    assert _timeline(reports[CHILD_ID]) == [row]
    assert reports[CHILD_ID]["timeline"][0]["lost_tokens_by_cause"] == lost
    assert reports[CHILD_ID]["notes"] == [
        f"request 0 continues request 2 of parent session {PARENT_ID} (fork): its expected cache read is "
        "measured against that request (its source_index)"]
    assert [v["expected_cache_read"] for v in reports[PARENT_ID]["timeline"]] == [0, 0, 7936, 8064, 8064]
    code, out, _ = invoke(monkeypatch, capsys, "explain", str(tmp_path / f"{CHILD_ID}.jsonl"), "0", "--json")
    assert code == 0 and re.search(r'"previous":2,"previous_session_id":"session-ef87ee25', out)
