"""An effort change is told as its own route sends it: DeepSeek's ``thinking`` on the native route,
the two bodies' reasoning parameters on pi-ai's routes (pi-ai 0.82.1: Anthropic Messages budget or
adaptive thinking with ``output_config.effort``, Chat Completions ``reasoning_effort`` or a dialect's
keys, Responses ``reasoning.effort``), and no wire claim when no body is at hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli import invoke
from test_piai_images import reply

from dsh_audit.attribution import FieldChange, Transition, attribute, attribute_paths, format_transition
from dsh_audit.attribution._attribute import captured_extends
from dsh_audit.attribution._header_diff import wire_reasoning
from dsh_audit.testing import LogBuilder

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
C1 = CORPUS / "live-pi" / "c1-anthropic-tools"
needs_c1 = pytest.mark.skipif(not C1.is_dir(), reason="../shared/corpus/live-pi is absent")

ADAPTIVE_WIRE = [
    {"path": "thinking", "before": {"type": "enabled", "budget_tokens": 16384, "display": "summarized"},
     "after": {"type": "adaptive", "display": "summarized"}},
    {"path": "output_config.effort", "after": "max"}]
ADAPTIVE_LINE = ('  reasoningEffort: "high" → "max" (prompt); on the wire: thinking {"type":"enabled",'
                 '"budget_tokens":16384,"display":"summarized"} → {"type":"adaptive","display":"summarized"}; '
                 'output_config.effort (absent) → "max"')


def _effort_switch(tmp_path: Path, provider: str, api: str | None, before: tuple[str, str | None],
                   after: tuple[str, str | None]) -> Path:
    """Two one-step turns; between them the header moves from ``before`` to ``after`` (model,
    effort). ``api``: the pi-ai API the replies came through (None: DSH's native DeepSeek adapter)."""
    b = LogBuilder(session_id=f"s-{provider}", provider=provider, model=before[0], system="Sys.", tools=[],
                   reasoning_effort=before[1], max_tokens=None)
    for prompt, (model, effort) in (("one", before), ("two", after)):
        if prompt == "two":
            b.configure(model=model, reasoning_effort=effort)
        with b.turn(prompt):
            with b.step():
                if api is None:
                    b.assistant("Sure.")
                else:
                    reply(b, provider, model, api, "Sure.")
    return b.write_jsonl(tmp_path / f"{provider}.jsonl")


def _effort(transition: Transition) -> FieldChange:
    [change] = [f for f in transition.fields if f.field == "reasoningEffort"]
    return change


def _effort_line(transition: Transition) -> str:
    [line] = [line for line in format_transition(transition).split("\n") if line.startswith("  reasoningEffort:")]
    return line


def _switch(tmp_path: Path, provider: str, api: str | None, before: tuple[str, str | None],
            after: tuple[str, str | None], *, adapter: str | None = "auto") -> Transition:
    log = _effort_switch(tmp_path, provider, api, before, after)
    transition = attribute(log, adapter=adapter).transition(1)
    assert (transition.verdict, transition.cause) == ("break", "header_change")
    return transition


# -- native DeepSeek: thinking as DeepSeek sends it ------------------------------------------------

@pytest.mark.parametrize("adapter, after, thinking, said", [
    ("auto", "off", "disabled", "thinking enabled → disabled"),
    (None, "off", "disabled", "thinking enabled → disabled"),
    # session 42: high → max said "thinking enabled → enabled"
    ("auto", "max", "enabled", 'thinking stays enabled, at effort "high" → "max"'),
])
def test_native_deepseek_tells_thinking(tmp_path, adapter, after, thinking, said):
    t = _switch(tmp_path, "deepseek-official", None, ("deepseek-v4-pro", "high"), ("deepseek-v4-pro", after),
                adapter=adapter)
    assert _effort(t).to_json() == {"field": "reasoningEffort", "before": "high", "after": after,
                                    "prompt_affecting": True, "changes": {"thinking": ["enabled", thinking]}}
    assert _effort_line(t) == f'  reasoningEffort: "high" → "{after}" (prompt); {said}'


# -- pi-ai's Anthropic Messages: budget thinking on 4.5, adaptive thinking with an effort on 4.6 -----

@needs_c1
def test_live_claude_4_5_to_4_6_tells_the_adaptive_switch(monkeypatch, capsys):
    log = next((C1 / "session-logs").glob("session-514c*.jsonl"))
    rendered = attribute(log).transition(9)  # no capture given: both bodies rendered
    [captured] = attribute_paths([log])[0]  # the wire.jsonl beside the log: the bodies sent
    for t in (rendered, captured.transition(9)):
        assert _effort(t).detail == {"route": "anthropic", "wire": ADAPTIVE_WIRE}
        assert format_transition(t).split("\n")[4:8] == [
            "fields:",
            '  model: "claude-sonnet-4-5" → "claude-sonnet-4-6" (prompt)',
            ADAPTIVE_LINE,
            "  system: 4141 → 4141 chars (prompt)"]
    code, out, err = invoke(monkeypatch, capsys, "breaks", str(log), "--json")
    [row] = [json.loads(line) for line in out.splitlines()]
    # on this route the detail says what the route sent (session 40: no DeepSeek "thinking" beside it)
    assert (code, err, row["fields"][1]) == (0, [], {
        "field": "reasoningEffort", "before": "high", "after": "max", "prompt_affecting": True,
        "changes": {"route": "anthropic", "wire": ADAPTIVE_WIRE}})
    code, out, err = invoke(monkeypatch, capsys, "explain", str(log), "9", "--json")
    assert (code, err, json.loads(out)["fields"][1]) == (0, [], row["fields"][1])


def test_built_claude_4_5_to_4_6_tells_the_adaptive_switch(tmp_path):
    t = _switch(tmp_path, "anthropic", "anthropic-messages", ("claude-sonnet-4-5", "high"),
                ("claude-sonnet-4-6", "max"))
    assert _effort(t).detail == {"route": "anthropic", "wire": ADAPTIVE_WIRE}
    assert _effort_line(t) == ADAPTIVE_LINE


def test_claude_budget_change_and_thinking_off(tmp_path):
    lower = _switch(tmp_path, "anthropic", "anthropic-messages", ("claude-sonnet-4-5", "high"),
                    ("claude-sonnet-4-5", "low"))
    assert _effort_line(lower) == ('  reasoningEffort: "high" → "low" (prompt); on the wire: '
                                   'thinking.budget_tokens 16384 → 2048')
    off = _switch(tmp_path, "anthropic", "anthropic-messages", ("claude-sonnet-4-5", "high"),
                  ("claude-sonnet-4-5", "off"))
    assert _effort_line(off) == ('  reasoningEffort: "high" → "off" (prompt); on the wire: thinking '
                                 '{"type":"enabled","budget_tokens":16384,"display":"summarized"} → {"type":"disabled"}')


def test_no_body_makes_no_wire_claim(tmp_path):
    t = _switch(tmp_path, "anthropic", "anthropic-messages", ("claude-sonnet-4-5", "high"),
                ("claude-sonnet-4-6", "max"), adapter=None)
    assert _effort(t).detail == {"route": "anthropic", "reasoning": ["on", "on"]}
    assert _effort_line(t) == ('  reasoningEffort: "high" → "max" (prompt); reasoning on → on '
                               '(adapter anthropic, no body rendered to show its wire form)')
    # gpt-5 offers no off: pi-ai refuses to send that request, so there is no body to compare
    refused = _switch(tmp_path, "openai", "openai-responses", ("gpt-5", "off"), ("gpt-5", "high"))
    assert _effort_line(refused) == ('  reasoningEffort: "off" → "high" (prompt); reasoning off → on '
                                     '(adapter responses, no body rendered to show its wire form)')


# -- pi-ai's OpenAI Chat Completions: reasoning_effort, or the dialect's own keys -------------------

def test_openai_completions_tells_reasoning_effort(tmp_path):
    t = _switch(tmp_path, "deepseek", "openai-completions", ("deepseek-v4-pro", "high"), ("deepseek-v4-pro", "max"))
    assert _effort(t).detail == {"route": "openai",
                                 "wire": [{"path": "reasoning_effort", "before": "high", "after": "max"}]}
    assert _effort_line(t) == '  reasoningEffort: "high" → "max" (prompt); on the wire: reasoning_effort "high" → "max"'
    on = _switch(tmp_path, "deepseek", "openai-completions", ("deepseek-v4-pro", "off"), ("deepseek-v4-pro", "high"))
    assert _effort_line(on) == ('  reasoningEffort: "off" → "high" (prompt); on the wire: thinking {"type":"disabled"} '
                                '→ {"type":"enabled"}; reasoning_effort (absent) → "high"')
    router = _switch(tmp_path, "openrouter", "openai-completions", ("openai/gpt-5", "high"), ("openai/gpt-5", "low"))
    assert _effort_line(router) == '  reasoningEffort: "high" → "low" (prompt); on the wire: reasoning.effort "high" → "low"'


# -- pi-ai's OpenAI Responses: reasoning.effort -----------------------------------------------------

def test_openai_responses_tells_reasoning_effort(tmp_path):
    t = _switch(tmp_path, "openai", "openai-responses", ("gpt-5", "high"), ("gpt-5", "low"))
    assert _effort(t).detail == {"route": "responses",
                                 "wire": [{"path": "reasoning.effort", "before": "high", "after": "low"}]}
    assert _effort_line(t) == '  reasoningEffort: "high" → "low" (prompt); on the wire: reasoning.effort "high" → "low"'
    on = _switch(tmp_path, "openai", "openai-responses", ("gpt-5.1", "off"), ("gpt-5.1", "high"))
    assert _effort_line(on) == ('  reasoningEffort: "off" → "high" (prompt); on the wire: reasoning.effort "none" → '
                                '"high"; reasoning.summary (absent) → "auto"; include (absent) → '
                                '["reasoning.encrypted_content"]')


# -- what a captured body names stays one escaped line ----------------------------------------------

def test_a_member_name_from_the_body_is_escaped():
    change = FieldChange("reasoningEffort", "high", "low", True, {
        "route": "openai", "wire": [{"path": "reasoning.a\nb\x1b", "before": 1}, {"path": "output_config", "after": "x" * 90}]})
    t = Transition("s", 1, 0, "s", "step", "break", "header_change", fields=(change,))
    assert _effort_line(t) == ('  reasoningEffort: "high" → "low" (prompt); on the wire: reasoning.a\\nb\\u001b 1 → '
                               f'(absent); output_config (absent) → "{"x" * 79}…')


def test_wire_reasoning_tells_an_absent_parameter_from_null_and_skips_other_keys():
    assert wire_reasoning(b'{"reasoning":null,"model":"a","output_config":{"effort":null}}',
                          b'{"reasoning":{"effort":"high"},"model":"b"}') == [
        {"path": "reasoning", "before": None, "after": {"effort": "high"}},
        {"path": "output_config.effort", "before": None}]
    assert wire_reasoning(b'{"thinking":{"type":"enabled"}}', b'{"thinking":{"type":"enabled"}}') == []
    assert (wire_reasoning(b"[1]", b"{}"), wire_reasoning(b"{", b"{}")) == (None, None)


def test_bodies_nested_past_the_parser_are_compared_as_bytes_never_a_crash() -> None:
    """A captured body nested 100,000 deep is valid JSON the parser cannot read: no wire change is
    listed, and the prefix test falls back to the bytes (before: RecursionError)."""
    deep = b"[" * 100_000 + b"]" * 100_000
    assert wire_reasoning(deep, deep) is None
    assert captured_extends(deep, deep + b" ") == (True, None)
