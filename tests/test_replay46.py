"""Session 46, issue 11/15: replay gaps against DSH's own code (0.1.0-rc.8).

1. A retry whose chunks come after its step's step/end (the failed attempt streamed inside the step,
   or was still streaming when step/end came) is a request, as the log stands before its first chunk:
   DSH's ``AgentLoop.step`` (agent-loop/src/agent.ts) re-derives messages and header for each retry,
   and only an ``error``/``aborted`` finish is retried: chunks after any other finish are no request,
   inside the step or after its end.
2. A title call's system prompt and maxTokens reach the adapter as logged when present, ``""`` and null
   included (``generateSessionTitleWithLlm``, session-title-llm/src/index.ts): DeepSeek's
   ``serializeRequest`` sends ``{"role":"system","content":...}`` whenever ``options.system !== undefined``
   and ``max_tokens`` whenever ``options.maxTokens !== undefined``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dsh_audit
from dsh_audit.replay import ReplayResult, iter_requests
from dsh_audit.testing import LogBuilder
from dsh_audit.wire import render

from _copy_log import move_event  # event seq moved before another, seqs renumbered

Events = list[dict[str, Any]]  # the header line first, then the events (seq == index - 1)

_TAIL = ('"stream":true,"stream_options":{"include_usage":true},"thinking":{"type":"enabled"},'
         '"reasoning_effort":"high","max_tokens":65536}')
_SYS, _HI = '{"role":"system","content":"sys"}', '{"role":"user","content":"hi"}'
#: the one body of turn 1 step 1, every attempt (a retry re-sends what the log holds)
_STEP1 = f'{{"model":"deepseek-v4-flash","messages":[{_SYS},{_HI}],{_TAIL}'


def _events(b: LogBuilder) -> Events:
    return [b.header_record, *b.records(packed=False)]


def _retried(*, second_step: bool = False) -> Events:
    """turn 1, step 1: step/start 3, header 5, attempt 1's chunks 7-9 (block-start, "par", finish error),
    llm/retry 10, llm/retry-started 11, attempt 2's chunks 12-16, message 17, step/end 18
    (then, with ``second_step``, step/start 19, chunks 20-24, message 25, step/end 26)."""
    b = LogBuilder(session_id="session-r46", system="sys")
    with b.turn("hi"):
        with b.step():
            b.retry(partial_text="par")
            b.assistant("one", usage={"inputTokens": 10, "outputTokens": 2, "cacheReadTokens": 0})
        if second_step:
            with b.step():
                b.assistant("two", usage={"inputTokens": 12, "outputTokens": 2, "cacheReadTokens": 0})
    return _events(b)


def _write(folder: Path, log: Events, edit: Callable[[Events], None] = lambda log: None) -> Path:
    edit(log)
    path = folder / "s.jsonl"
    path.write_text("".join(json.dumps(v, separators=(",", ":")) + "\n" for v in log), encoding="utf-8")
    return path


def _listed(path: Path) -> tuple[list[tuple[Any, ...]], list[str]]:
    """Each request's index, kind, turn, step, attempt, step/start seq, first chunk seq, usage, finish kind
    and body; and the replay's notes."""
    result = ReplayResult()
    rows = [(r.index, r.kind, r.turn, r.step, r.attempt, r.step_start_seq, r.first_chunk_seq, r.usage,
             (r.finish or {}).get("kind"), render(r).body.decode())
            for r in iter_requests(dsh_audit.load(path), result)]
    return rows, result.notes


_USAGE1 = {"inputTokens": 10, "outputTokens": 2, "cacheReadTokens": 0}


def test_a_retry_inside_its_step_is_the_reference(tmp_path: Path) -> None:
    assert _listed(_write(tmp_path, _retried())) == ([
        (0, "loop", 1, 1, 1, 3, 7, None, "error", _STEP1),
        (1, "loop", 1, 1, 2, 3, 12, _USAGE1, "stop", _STEP1),
    ], [])


def test_a_retry_after_its_steps_end_is_listed_as_dsh_sends_it(tmp_path: Path) -> None:
    # step/end (18) moved before the retry's first chunk (12): attempt 1 streamed and failed inside the step
    path = _write(tmp_path, _retried(), move_event(18, 12))
    assert _listed(path) == ([
        (0, "loop", 1, 1, 1, 3, 7, None, "error", _STEP1),
        (1, "loop", 1, 1, 2, 3, 13, _USAGE1, "stop", _STEP1),
    ], [])


def test_a_retry_after_its_steps_end_with_the_failed_attempt_still_streaming(tmp_path: Path) -> None:
    # step/end (18) moved before attempt 1's finish (9): the rest of attempt 1 and the retry's records follow it
    path = _write(tmp_path, _retried(), move_event(18, 9))
    assert _listed(path) == ([
        (0, "loop", 1, 1, 1, 3, 7, None, None, _STEP1),
        (1, "loop", 1, 1, 2, 3, 13, _USAGE1, "stop", _STEP1),
    ], ["seq 10: the finish of turn 1 step 1 attempt 1 comes after its step/end; that request is listed "
        "without it"])


def test_a_late_retry_inside_the_next_step_keeps_its_place(tmp_path: Path) -> None:
    def edit(log: Events) -> None:
        move_event(18, 12)(log)  # step 1's step/end, then step 2's step/start, before the retry's first chunk
        move_event(19, 13)(log)
    path = _write(tmp_path, _retried(second_step=True), edit)
    step2 = (f'{{"model":"deepseek-v4-flash","messages":[{_SYS},{_HI},{{"role":"assistant","content":"one"}}],'
             f'{_TAIL}')
    assert _listed(path) == ([
        (0, "loop", 1, 1, 1, 3, 7, None, "error", _STEP1),
        # listed where its step/start is (3), before step 2's request (step/start 13)
        (1, "loop", 1, 1, 2, 3, 14, _USAGE1, "stop", _STEP1),
        (2, "loop", 1, 2, 1, 13, 20, {"inputTokens": 12, "outputTokens": 2, "cacheReadTokens": 0}, "stop", step2),
    ], [])


def test_chunks_after_a_step_that_finished_well_are_no_request(tmp_path: Path) -> None:
    # DSH retries only an error or aborted finish: after a stop finish and step/end, no request of that step
    b = LogBuilder(session_id="session-r46", system="sys")
    with b.turn("hi"):
        with b.step():
            b.assistant("one", usage=_USAGE1)  # chunks 7-11, message 12, step/end 13
    log = _events(b)
    stray = {**log[1 + 8], "seq": 14}
    log.insert(1 + 14, stray)  # a text-delta of step 1 after its step/end (turn/end renumbered below)
    log[1 + 15]["seq"] = 15
    rows, notes = _listed(_write(tmp_path, log))
    assert [row[:9] for row in rows] == [(0, "loop", 1, 1, 1, 3, 7, _USAGE1, "stop")]
    assert notes == ["seq 14: assistant/chunk for turn 1 step 1 outside its step/start; not a loop request"]


def _stopped(log: Events) -> None:
    """Attempt 1's finish (seq 9) a stop, not an error: DSH's step ends there."""
    assert log[1 + 9]["data"]["chunk"]["type"] == "finish"
    log[1 + 9]["data"]["chunk"]["reason"] = {"kind": "stop"}


def test_chunks_after_a_stop_finish_inside_the_step_are_no_request(tmp_path: Path) -> None:
    # the minimal log o1's oracle found (retry_inside_stop.jsonl): DSH sends one request, never a second
    rows, notes = _listed(_write(tmp_path, _retried(), _stopped))
    assert rows == [(0, "loop", 1, 1, 1, 3, 7, None, "stop", _STEP1)]
    assert notes == [f"seq {seq}: assistant/chunk for turn 1 step 1 after its finish {{\"kind\":\"stop\"}}, which DSH "
                     "does not retry; not a loop request" for seq in range(12, 17)]


def test_chunks_after_a_late_attempts_stop_finish_are_no_request(tmp_path: Path) -> None:
    # step/end (18) moved before the first chunk (7): the step's request is at its first chunk (8), as DSH
    # finds it; after that attempt's stop finish (10) the same rule as inside the step: no second request
    def edit(log: Events) -> None:
        _stopped(log)
        move_event(18, 7)(log)
    rows, notes = _listed(_write(tmp_path, _retried(), edit))
    assert rows == [(0, "loop", 1, 1, 1, 3, 8, None, "stop", _STEP1)]
    assert notes == [f"seq {seq}: assistant/chunk for turn 1 step 1 outside its step/start; not a loop request"
                     for seq in range(13, 18)]


def _titled(tmp_path: Path, system: Any, max_tokens: Any = 64) -> tuple[dict[str, Any] | None, str]:
    """The title call's header and DeepSeek body when its logged ``system`` is ``system`` and its
    ``maxTokens`` is ``max_tokens`` (... : absent)."""
    b = LogBuilder(session_id="session-t46", system="sys")
    with b.turn("hi"):
        with b.step():
            b.assistant("one")
    b.title("Hi")
    log = _events(b)
    data = next(e for e in log if e["type"] == "session/title-llm-request")["data"]
    for key, value in (("system", system), ("maxTokens", max_tokens)):
        if value is ...:
            del data[key]
        else:
            data[key] = value
    title = next(r for r in dsh_audit.requests(dsh_audit.load(_write(tmp_path, log))) if r.kind == "title")
    return title.header, render(title).body.decode()


_TITLE_USER = ('{"role":"user","content":"Title this session from these messages:\\n'
               '[{\\"seq\\":4,\\"text\\":\\"hi\\"}]"}')
_TITLE_TAIL = '"stream":true,"stream_options":{"include_usage":true},"thinking":{"type":"disabled"},"max_tokens":64}'
_TITLE_CONFIG = {"provider": "deepseek-official", "model": "deepseek-v4-flash", "maxTokens": 64}


def test_a_title_call_with_an_empty_system_sends_an_empty_system_message(tmp_path: Path) -> None:
    assert _titled(tmp_path, "") == (
        {"config": _TITLE_CONFIG, "system": ""},
        f'{{"model":"deepseek-v4-flash","messages":[{{"role":"system","content":""}},{_TITLE_USER}],{_TITLE_TAIL}')


def test_a_title_call_sends_its_system_as_logged(tmp_path: Path) -> None:
    assert _titled(tmp_path, "Title it.") == (
        {"config": _TITLE_CONFIG, "system": "Title it."},
        f'{{"model":"deepseek-v4-flash","messages":[{{"role":"system","content":"Title it."}},{_TITLE_USER}],'
        f'{_TITLE_TAIL}')


def test_a_title_call_without_a_system_sends_none(tmp_path: Path) -> None:
    assert _titled(tmp_path, ...) == (
        {"config": _TITLE_CONFIG}, f'{{"model":"deepseek-v4-flash","messages":[{_TITLE_USER}],{_TITLE_TAIL}')


def test_a_title_call_with_a_null_system_sends_a_null_system_message(tmp_path: Path) -> None:
    # o1's title_sys_null.jsonl: serializeRequest tests `options.system !== undefined`, so null is sent
    assert _titled(tmp_path, None) == (
        {"config": _TITLE_CONFIG, "system": None},
        f'{{"model":"deepseek-v4-flash","messages":[{{"role":"system","content":null}},{_TITLE_USER}],{_TITLE_TAIL}')


_TITLE_TAIL_NO_CAP = '"stream":true,"stream_options":{"include_usage":true},"thinking":{"type":"disabled"}}'


def test_a_title_call_with_a_null_max_tokens_sends_max_tokens_null(tmp_path: Path) -> None:
    # o1's title_maxtokens_null.jsonl: requestWithMessages tests `options.maxTokens === undefined`
    assert _titled(tmp_path, "Title it.", None) == (
        {"config": {**_TITLE_CONFIG, "maxTokens": None}, "system": "Title it."},
        f'{{"model":"deepseek-v4-flash","messages":[{{"role":"system","content":"Title it."}},{_TITLE_USER}],'
        f'{_TITLE_TAIL_NO_CAP[:-1]},"max_tokens":null}}')


def test_a_title_call_without_max_tokens_sends_none(tmp_path: Path) -> None:
    assert _titled(tmp_path, "Title it.", ...) == (
        {"config": {"provider": "deepseek-official", "model": "deepseek-v4-flash"}, "system": "Title it."},
        f'{{"model":"deepseek-v4-flash","messages":[{{"role":"system","content":"Title it."}},{_TITLE_USER}],'
        f'{_TITLE_TAIL_NO_CAP}')
