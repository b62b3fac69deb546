"""Five hand-edited log shapes on which dsh-audit once parted from DSH's own code (0.1.0-rc.8).

A differential ran DSH's modules on thousands of edited logs (its loader, ``foldRequestHeader``,
``Session.create(...).deriveMessages()`` and ``serializeRequest``, each request found by the rule of
``request-reconstruction.spec.ts`` THEOREM). Each shape below is one edit of a two-step session; the
expected requests, bodies and refusals are what DSH's code gives for the same log:

1. a ``system`` or ``tools`` without a positive JavaScript ``.length`` is dropped (``canonicalHeader``);
2. a null ``reasoningEffort`` or ``adapterDefaults`` is present, hence refused (``!== undefined``);
3. a null ``system`` or ``tools`` makes ``canonicalHeader`` throw: DSH loads the log but builds no
   request after that header, so ``requests`` refuses and ``validate`` says DSH227;
4. a step's chunks after its own step/end, or after the next step/start, are still its request.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _copy_log import move_event

import dsh_audit
from dsh_audit.errors import DshAuditError
from dsh_audit.testing import LogBuilder
from dsh_audit.validate import validate
from dsh_audit.wire import render

Events = list[dict[str, Any]]  # the header line first, then the events (seq == index - 1)


def _base() -> Events:
    """turn 1 of two steps: step/start 3, header 5, chunks 7-11, step/end 13; step/start 14, chunks 15-19."""
    b = LogBuilder(session_id="session-d45", created_at=1_800_000_000_000, system="sys")
    with b.turn("hi"):
        with b.step():
            b.assistant("one", usage={"inputTokens": 10, "outputTokens": 2, "cacheReadTokens": 0})
        with b.step():
            b.assistant("two", usage={"inputTokens": 12, "outputTokens": 2, "cacheReadTokens": 0})
    with tempfile.TemporaryDirectory() as folder:
        path = b.write_jsonl(Path(folder) / "s.jsonl", packed=False)
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _header(field: str, value: Any) -> Callable[[Events], None]:
    def edit(log: Events) -> None:
        log[1 + 5]["data"]["header"][field] = value
    return edit


def _config(field: str, value: Any) -> Callable[[Events], None]:
    def edit(log: Events) -> None:
        log[1 + 5]["data"]["header"]["config"][field] = value
    return edit


def _chunks_after_next_start(log: Events) -> None:
    """step 1's chunks, message and step/end after step 2's step/start."""
    move_event(14, 7)(log)


SHAPES: dict[str, Callable[[Events], None]] = {
    "base": lambda log: None,
    "system-42": _header("system", 42),
    "system-true": _header("system", True),
    "system-emptylist": _header("system", []),
    "system-object": _header("system", {"x": 1}),
    "system-empty": _header("system", ""),
    "tools-empty": _header("tools", ""),
    "tools-object": _header("tools", {}),
    "tools-5": _header("tools", 5),
    "system-length-object": _header("system", {"length": " 0x1 "}),
    "tools-length-object": _header("tools", {"length": 2}),
    "effort-null": _config("reasoningEffort", None),
    "defaults-null": _header("adapterDefaults", None),
    "system-null": _header("system", None),
    "tools-null": _header("tools", None),
    "swap-end-start": move_event(14, 13),
    "chunks-after-own-end": move_event(13, 7),
    "chunks-after-next-start": _chunks_after_next_start,
}


def shaped(folder: Path, name: str) -> Path:
    """The base session with shape ``name``, written as plain JSONL in ``folder``."""
    log = _base()
    SHAPES[name](log)
    path = folder / f"{name}.jsonl"
    path.write_text("".join(json.dumps(v, separators=(",", ":")) + "\n" for v in log), encoding="utf-8")
    return path


_TAIL = ('"stream":true,"stream_options":{"include_usage":true},"thinking":{"type":"enabled"},'
         '"reasoning_effort":"high","max_tokens":65536}')
_HI, _ONE = '{"role":"user","content":"hi"}', '{"role":"assistant","content":"one"}'


def _bodies(system: str | None) -> list[str]:
    """DSH's bodies of the two requests (serializeRequest), with ``system`` its system message's content."""
    head = "" if system is None else f'{{"role":"system","content":{system}}},'
    return [f'{{"model":"deepseek-v4-flash","messages":[{head}{_HI}],{_TAIL}',
            f'{{"model":"deepseek-v4-flash","messages":[{head}{_HI},{_ONE}],{_TAIL}']


def _loop(path: Path) -> list[tuple[Any, ...]]:
    """turn, step, attempt, step/start seq, first chunk seq and body (or the render error) of each
    loop request."""
    out = []
    for r in dsh_audit.requests(dsh_audit.load(path)):
        try:
            body: str = render(r).body.decode()
        except DshAuditError as exc:
            body = f"refused: {exc.message}"
        out.append((r.turn, r.step, r.attempt, r.step_start_seq, r.first_chunk_seq, body))
    return out


_STEPS = [(1, 1, 1, 3, 7), (1, 2, 1, 14, 15)]  # the base log's requests


@pytest.mark.parametrize(("name", "system"), [
    ("base", '"sys"'),
    # canonicalHeader keeps a field only when `field.length > 0` (JavaScript): no length, no field
    ("system-42", None), ("system-true", None), ("system-emptylist", None), ("system-object", None),
    ("system-empty", None), ("tools-empty", '"sys"'), ("tools-object", '"sys"'), ("tools-5", '"sys"'),
    # an object's own length, converted as JavaScript compares it: " 0x1 " > 0, so DSH keeps it
    ("system-length-object", '{"length":" 0x1 "}'),
])
def test_a_header_field_without_a_length_is_dropped_as_dsh_drops_it(tmp_path: Path, name: str,
                                                                    system: str | None) -> None:
    bodies = _bodies(system)
    assert _loop(shaped(tmp_path, name)) == [(*step, body) for step, body in zip(_STEPS, bodies)]


def test_tools_with_a_length_member_are_kept_and_refused_as_dsh_refuses_them(tmp_path: Path) -> None:
    # {"length": 2} passes canonicalHeader; DSH's adapter then fails on it (options.tools?.map)
    refused = ("refused: the header's tools is not a list; DSH's adapter fails on it (TypeError: options.tools?.map "
               "is not a function)")
    assert _loop(shaped(tmp_path, "tools-length-object")) == [(*step, refused) for step in _STEPS]


@pytest.mark.parametrize(("name", "steps"), [
    # step/start of step 2 (seq 13) before step 1's step/end (seq 14): that step/end ends nothing
    ("swap-end-start", [(1, 1, 1, 3, 7), (1, 2, 1, 13, 15)]),
    # step 1's chunks after its own step/end (seq 7)
    ("chunks-after-own-end", [(1, 1, 1, 3, 8), (1, 2, 1, 14, 15)]),
    # step 1's chunks after step 2's step/start (seq 7): DSH's rule takes the first chunk of the step
    ("chunks-after-next-start", [(1, 1, 1, 3, 8), (1, 2, 1, 7, 15)]),
])
def test_a_steps_chunks_out_of_place_are_still_its_request(tmp_path: Path, name: str,
                                                           steps: list[tuple[int, ...]]) -> None:
    assert _loop(shaped(tmp_path, name)) == [(*step, body) for step, body in zip(steps, _bodies('"sys"'))]


_NO_OPTION = "DSH refuses the log too (--lenient does not relax events); `dsh-audit validate FILE` lists every problem"


@pytest.mark.parametrize(("name", "error"), [
    ("effort-null", "seed request/header at index 5 has an invalid reasoningEffort (hint: config.reasoningEffort null "
                    f"is not a non-empty string: DSH requires a non-empty string or no reasoningEffort; {_NO_OPTION} "
                    "(rule DSH222))"),
    ("defaults-null", 'seed request/header at index 5 has invalid adapterDefaults (hint: DSH accepts adapterDefaults '
                      'only as an object whose keys are "reasoningEffort" or "maxTokens", each true and each set in '
                      f"the header's config; {_NO_OPTION} (rule DSH223))"),
    ("system-null", "request/header has system null: DSH itself cannot build a request from this header (its "
                    "canonicalHeader reads system.length and throws), so the loop request at seq 7 was never sent "
                    "(hint: write system as a string or leave it out; no option builds the request (--lenient adapts "
                    "session headers only); `dsh-audit validate FILE` lists every such header (rule DSH227))"),
    ("tools-null", "request/header has tools null: DSH itself cannot build a request from this header (its "
                   "canonicalHeader reads tools.length and throws), so the loop request at seq 7 was never sent "
                   "(hint: write tools as an array of tool schemas or leave it out; no option builds the request "
                   "(--lenient adapts session headers only); `dsh-audit validate FILE` lists every such header "
                   "(rule DSH227))"),
])
def test_a_null_header_field_refuses_what_dsh_refuses(tmp_path: Path, cli80: Any, name: str, error: str) -> None:
    shaped(tmp_path, name)
    code, out, err = cli80("requests", f"{name}.jsonl")
    assert (code, out, err) == (2, "", [f"error: {name}.jsonl:7 seq 5: {error}"])


@pytest.mark.parametrize(("name", "rule", "problem"), [
    ("effort-null", "DSH222", "request/header has an invalid reasoningEffort"),
    ("defaults-null", "DSH223", "request/header has invalid adapterDefaults"),
    ("system-null", "DSH227", "request/header has system null: DSH itself cannot build a request from this header "
                              "(its canonicalHeader reads system.length and throws)"),
    ("tools-null", "DSH227", "request/header has tools null: DSH itself cannot build a request from this header "
                             "(its canonicalHeader reads tools.length and throws)"),
])
def test_validate_names_the_rule_of_a_null_header_field(tmp_path: Path, name: str, rule: str, problem: str) -> None:
    assert [(f.rule, f.severity, f.line, f.seq, f.message) for f in validate(shaped(tmp_path, name))] == [
        (rule, "error", 7, 5, problem)]


@pytest.mark.parametrize(("name", "expected"), [
    # a late step's retry is its attempt 2, as a retry inside the step is (a re-read of the late-chunk rule)
    ("late-retry", [(0, 1, 1, 5), (1, 2, 1, 10)]),
    # a step/end naming no step ends the open step, as DSH's rule (and dsh-audit before) has it: one request
    ("stepend-bare", [(0, 1, 1, 4)]),
])
def test_late_chunks_keep_attempts_and_a_bare_step_end_ends_the_step(name: str, expected: list[tuple[int, ...]]) -> None:
    path = Path(__file__).parent / "data" / "dsh45" / f"{name}.jsonl"
    requests = [r for r in dsh_audit.requests(dsh_audit.load(str(path))) if r.kind == "loop"]
    assert [(r.index, r.attempt, r.step_start_seq, r.first_chunk_seq) for r in requests] == expected
