"""Attribution: every transition of the live corpus, one constructed log per cause, the CLI."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from dsh_audit import attribution
from dsh_audit.attribution import (
    attribute,
    attribute_paths,
    attribute_sessions,
    captured_extends,
    diff_headers,
    format_transition,
)
from dsh_audit.cli import cli
from dsh_audit.session import open_group, open_session
from dsh_audit.cli._common import run_guarded
from dsh_audit.jsjson import stringify
from dsh_audit.testing import LogBuilder, ToolCall

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
LIVE = CORPUS / "live"
needs_corpus = pytest.mark.skipif(not LIVE.is_dir(), reason="../shared/corpus is absent")

# Every transition that is not a plain extension, per scenario and session (id suffix):
# (request, relation, verdict, cause, fields, evidence seqs). Derived from the logs and overview.txt.
FLIP = ("adapterDefaults.reasoningEffort",)
EXPECTED = {
    "a-chat": {"161c2c0b": [
        (0, "title_call", "first", None, (), ()),
        (1, "first", "first", None, (), ()),
        # the driver's model selection turns the default effort explicit: same bytes, cache-safe
        (2, "step", "cache_safe_change", "header_change", FLIP, (36,)),
    ]},
    "b-tools": {"3a88c3dd": [
        (0, "title_call", "first", None, (), ()),
        (1, "first", "first", None, (), ()),
        (2, "step", "cache_safe_change", "header_change", FLIP, (35,)),
    ]},
    "c-change": {"3c2f1824": [
        (0, "title_call", "first", None, (), ()),
        (1, "first", "first", None, (), ()),
        (2, "step", "break", "header_change", ("model", "system"), (30,)),  # flash -> pro
        (3, "step", "break", "header_change", ("reasoningEffort",) + FLIP, (51,)),  # high -> max
        (4, "step", "break", "header_change", ("system",), (76,)),  # plan mode on
        (6, "step", "break", "header_change", ("system",), (121,)),  # plan mode off
        (7, "step", "break", "header_change", ("system", "tools"), (135,)),  # two tools removed
    ]},
    "d-resume": {"249053fa": [
        (0, "title_call", "first", None, (), ()),
        (1, "first", "first", None, (), ()),
        (2, "step", "cache_safe_change", "header_change", FLIP, (30,)),
        (4, "resume", "cache_safe_change", "resume", (), (62, 68)),
        (5, "resume", "break", "resume", ("model",) + FLIP + ("system",), (83, 89)),
    ]},
    "e-compaction": {"0a9053df": [
        (0, "title_call", "first", None, (), ()),
        (1, "first", "first", None, (), ()),
        (2, "step", "cache_safe_change", "header_change", FLIP, (30,)),
        (8, "step", "break", "compaction", (), (112, 113, 114, 115)),
    ]},
    "e2-autocompact": {"6e84040b": [
        (0, "title_call", "first", None, (), ()),
        (1, "first", "first", None, (), ()),
        (2, "step", "cache_safe_change", "header_change", FLIP, (30,)),
        (11, "step", "break", "compaction", (), (1064, 1065, 1066, 1067)),
    ]},
    "f-fork": {
        "c177dcd7": [(0, "fork", "cache_safe_change", "fork", (), (44, 54))],
        "71e3f0d6": [
            (0, "title_call", "first", None, (), ()),
            (1, "first", "first", None, (), ()),
            (2, "step", "cache_safe_change", "header_change", FLIP, (30,)),
        ],
    },
    "g-subagent": {
        "653fd4d4": [(0, "subagent", "break", "subagent", ("system", "tools"), (34, 1, 11))],
        "57f1019c": [
            (0, "title_call", "first", None, (), ()),
            (1, "first", "first", None, (), ()),
            (2, "step", "cache_safe_change", "header_change", FLIP, (37,)),
        ],
    },
    "h-headless": {"8cf088de": [
        (0, "title_call", "first", None, (), ()),
        (1, "first", "first", None, (), ()),
    ]},
}


def _row(t: attribution.Transition) -> tuple:
    return (t.request, t.relation, t.verdict, t.cause, t.field_names, t.evidence_seqs)


def _live(scenario: str) -> dict[str, attribution.SessionAttribution]:
    results, failures = attribute_paths([LIVE / scenario / "session-logs"], adapter=None)
    assert failures == []
    return {a.session_id[-8:]: a for a in results}


@needs_corpus
@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_live_scenario_transitions(scenario):
    sessions = _live(scenario)
    assert sorted(sessions) == sorted(EXPECTED[scenario])
    for suffix, expected in EXPECTED[scenario].items():
        transitions = sessions[suffix].transitions
        assert [r.request for r in transitions] == list(range(len(transitions)))
        assert [_row(t) for t in transitions if t.verdict != "extension"] == expected
        for t in transitions:
            assert t.cause != "unexplained"
            if t.verdict == "extension":
                assert t.cause is None and t.first_divergence is None
                assert t.evidence_seqs == () or t.relation == "compaction_call"  # only a summary call quotes


@needs_corpus
def test_live_details_divergence_and_context():
    change = _live("c-change")["3c2f1824"]
    model = change.transition(2)
    # adapter=None renders nothing, but the wire.jsonl beside the logs gives the body offset, as check gives it
    assert model.first_divergence.to_json() == {"segment": "config", "message_index": None, "offset": None,
                                                "body_offset": 22}
    assert [f.to_json() for f in model.fields][0] == {"field": "model", "before": "deepseek-v4-flash",
                                                      "after": "deepseek-v4-pro", "prompt_affecting": True}
    plan = change.transition(4)
    assert plan.first_divergence.segment == "system" and plan.first_divergence.offset == 172
    assert [e.seq for e in plan.context] == [65, 66, 68]  # /plan command, plan/mode, command/done
    assert plan.fields[0].detail["diff"][0] == "@@ -3,0 +4,13 @@"
    tools = change.transition(7).fields[1]
    assert tools.detail == {"added": [], "removed": ["todo_write", "web_search"], "reordered": False,
                            "schema_changed": []}
    assert change.transition(3).fields[0].detail == {"thinking": ["enabled", "enabled"]}

    manual = _live("e-compaction")["0a9053df"]
    summary_call = manual.transition(7)
    assert (summary_call.kind, summary_call.relation, summary_call.verdict, summary_call.previous,
            summary_call.evidence_seqs, summary_call.common_messages) == (
        "compaction", "compaction_call", "extension", 6, (112, 113), 12)
    checkpoint = manual.transition(8)
    assert checkpoint.first_divergence.to_json() == {"segment": "messages", "message_index": 0, "offset": 36,
                                                     "body_offset": 4279}
    assert [e.seq for e in checkpoint.context] == [111, 116]

    auto = _live("e2-autocompact")["6e84040b"]
    assert auto.transition(10).common_messages == 10 and auto.transition(10).previous == 9
    pruned = auto.transition(3)  # the prune shadowed a result no request had sent yet
    assert (pruned.verdict, [e.seq for e in pruned.context]) == ("extension", [46, 47])
    assert pruned.notes == ("prune at seq 47 replaced seq(s) [44] that request 2 never sent: no cache effect",)


@needs_corpus
def test_live_fork_and_subagent_parents():
    fork = _live("f-fork")["c177dcd7"].transition(0)
    assert (fork.previous, fork.previous_session_id, fork.common_messages) == (
        2, "session-ef87ee25-88b4-4f9c-a682-fd2071e3f0d6", 4)
    assert [e.seq for e in fork.context] == [45, 46, 50]
    spawn = _live("g-subagent")["653fd4d4"].transition(0)
    assert (spawn.previous, spawn.previous_session_id) == (1, "session-70444d8d-ee1d-43e9-8341-470b57f1019c")
    assert spawn.evidence[0].to_json() == {"seq": 34, "type": "tool/result",
                                           "data": {"mentions": "718aabf5-ac98-48d9-87ec-fa18653fd4d4"},
                                           "session_id": "session-70444d8d-ee1d-43e9-8341-470b57f1019c"}
    assert spawn.fields[1].detail["added"] == ["report"]


def _captures(scenario: str, session_id: str, requests) -> list[bytes | None]:
    records = [json.loads(line) for line in (LIVE / scenario / "wire.jsonl").read_text().splitlines()]
    bodies = iter(r["body"].encode() for r in records if r["kind"] == "conversation"
                  and r["headers"].get("x-deepseek-harness-session-id") == session_id)
    return [next(bodies) if r.kind == "loop" else None for r in requests]


@needs_corpus
@pytest.mark.parametrize("scenario", ["b-tools", "c-change", "e-compaction"])
def test_live_captures_agree_and_give_body_offsets(scenario):
    path = next((LIVE / scenario / "session-logs").glob("*.jsonl"))
    session = open_session(path)
    plain = attribute(path, adapter=None)
    captured = attribute(session, captures=_captures(scenario, session.id, session.requests), adapter=None)
    assert [_row(t) for t in captured.transitions] == [_row(t) for t in plain.transitions]
    for t in captured.breaks:
        assert t.first_divergence.body_offset is not None


@needs_corpus
def test_live_capture_mutation_is_unrecorded():
    path = next((LIVE / "b-tools" / "session-logs").glob("*.jsonl"))
    session = open_session(path)
    captures = _captures("b-tools", session.id, session.requests)
    body = json.loads(captures[5])
    body["messages"][1]["content"] += " (edited by a proxy)"
    captures[5] = stringify(body).encode()
    result = attribute(session, captures=captures, adapter=None)
    hit = [(_row(t), t.first_divergence.message_index) for t in result.transitions if t.verdict == "break"]
    # request 5 no longer extends request 4, and request 6 no longer extends request 5
    assert hit == [((5, "step", "break", "unrecorded_mutation", (), ()), 1),
                   ((6, "step", "break", "unrecorded_mutation", (), ()), 1)]
    assert result.transition(5).first_divergence.body_offset == captures[5].index(b" (edited by a proxy)")


# -- constructed logs: one per cause ---------------------------------------------------------

def _write(builder: LogBuilder, path: Path) -> Path:
    header = {"type": "session", "version": 0, "id": builder.session_id, "createdAt": builder.created_at,
              "cwd": builder.cwd, **{k: v for k, v in builder.lineage.items() if v is not None},
              "delegationDepth": builder.delegation_depth}
    lines = [stringify(header)] + [stringify(e) for e in builder.events]
    path.write_text("\n".join(lines) + "\n")
    return path


def _one(tmp_path: Path, builder: LogBuilder, **kwargs) -> attribution.SessionAttribution:
    return attribute(_write(builder, tmp_path / f"{builder.session_id}.jsonl"), adapter=None, **kwargs)


def _tool_turn(b: LogBuilder, prompt: str, result: str) -> int:
    with b.turn(prompt):
        with b.step():
            reply = b.assistant("Reading.", tool_calls=[ToolCall("read", {"path": "a.txt"})])
            seq = b.tool_result(reply.call_ids[0], result)
        with b.step():
            b.assistant("Done.")
    return seq


def _chat_turn(b: LogBuilder, prompt: str, answer: str = "Sure.") -> None:
    with b.turn(prompt):
        with b.step():
            b.assistant(answer)


def test_config_only_header_change_is_cache_safe(tmp_path):
    b = LogBuilder(session_id="s-config")
    _chat_turn(b, "one")
    b.configure(max_tokens=1000, temperature=0.5)
    _chat_turn(b, "two")
    t = _one(tmp_path, b).transition(1)
    header_seq = [e["seq"] for e in b.events if e["type"] == "request/header"][-1]
    assert _row(t) == (1, "step", "cache_safe_change", "header_change", ("maxTokens", "temperature"), (header_seq,))
    assert t.first_divergence is None


def test_a_new_title_revision_is_a_title_input_break_explained_by_its_request(tmp_path):
    """DSH's all-prompts title provider calls again after each human prompt, with every prompt so
    far as one JSON array: the input changes where the array grew. Its own record explains that."""
    b = LogBuilder(session_id="s-titles")
    _chat_turn(b, "one")
    first = b.title("One", title_provider="session-title-all-prompts-llm")
    _chat_turn(b, "two")
    second = b.title("One and two", title_provider="session-title-all-prompts-llm")
    found = _one(tmp_path, b)
    titles = [t for t in found.transitions if t.kind == "title"]
    assert [_row(t) for t in titles] == [
        (1, "title_call", "first", None, (), ()),
        (3, "title_call", "break", "title_input", (), (second,))]
    assert titles[1].is_unexplained is False and titles[1].previous == 1 and first < second
    assert (titles[1].first_divergence.segment, titles[1].first_divergence.message_index) == ("messages", 0)
    code = run_guarded_exit(["breaks", str(tmp_path / "s-titles.jsonl"), "--json"])
    assert code == 0  # explained: breaks fails only on unexplained ones by default


def run_guarded_exit(args: list[str]) -> int:
    import sys as _sys

    old, _sys.argv = _sys.argv, ["dsh-audit", *args]
    try:
        return run_guarded(cli)
    finally:
        _sys.argv = old


def test_model_change_is_a_header_break(tmp_path):
    b = LogBuilder(session_id="s-model")
    _chat_turn(b, "one")
    b.configure(model="deepseek-v4-pro", reasoning_effort="off")
    _chat_turn(b, "two")
    t = _one(tmp_path, b).transition(1)
    assert (t.verdict, t.cause, t.field_names) == ("break", "header_change", ("model", "reasoningEffort"))
    assert t.fields[1].detail == {"thinking": ["enabled", "disabled"]}


def test_prune_of_a_sent_result_breaks_at_that_result(tmp_path):
    b = LogBuilder(session_id="s-prune")
    result = _tool_turn(b, "read it", "x" * 400)
    b.start_turn("again")
    replacement = b.prune(result)
    with b.step():
        b.assistant("Ok.")
    b.end_turn()
    t = _one(tmp_path, b).transition(2)
    assert _row(t) == (2, "step", "break", "prune", (), (replacement - 1, replacement))
    assert (t.first_divergence.segment, t.first_divergence.message_index) == ("messages", 2)


def test_plugin_replace_and_auto_compaction(tmp_path):
    b = LogBuilder(session_id="s-replace")
    _chat_turn(b, "one")
    target = b.surface[0]
    note = dict(b.event(target)["data"], content=[{"type": "text", "text": "rewritten"}],
                source={"kind": "plugin", "plugin": "goal"})
    _chat_turn(b, "two")
    rewrite = b.append("user/message", note, source_event_seqs=[target],
                       surface_op={"op": "replace", "start": target, "end": target})
    _chat_turn(b, "three")
    b.start_turn("four")
    checkpoint = b.compaction("summary", keep=1)
    with b.step():
        b.assistant("Ok.")
    b.end_turn()
    result = _one(tmp_path, b)
    assert _row(result.transition(2)) == (2, "step", "break", "plugin_replace", (), (rewrite,))
    assert result.transition(2).first_divergence.message_index == 0
    call = result.transition(3)
    assert (call.kind, call.relation, call.verdict, call.evidence_seqs) == (
        "compaction", "compaction_call", "extension", (checkpoint - 2, checkpoint - 1))
    assert _row(result.transition(4)) == (4, "step", "break", "compaction", (),
                                          (checkpoint - 2, checkpoint - 1, checkpoint, checkpoint + 1))


def test_retry_of_an_identical_prompt(tmp_path):
    b = LogBuilder(session_id="s-retry")
    with b.turn("hi"):
        with b.step():
            failed = b.retry()
            b.assistant("Hello.")
    t = _one(tmp_path, b).transition(1)
    finish = failed.chunk_seqs[-1]
    assert _row(t) == (1, "retry", "cache_safe_change", "retry", (), (finish, finish + 1, finish + 2))
    assert "expect a full cache hit" in t.detail


def test_resume_identical_and_drifted(tmp_path):
    b = LogBuilder(session_id="s-resume")
    _chat_turn(b, "one")
    first_seed = b.resume()
    _chat_turn(b, "two")
    second_seed = b.resume()
    b.configure(system="You are a different agent.")
    _chat_turn(b, "three")
    result = _one(tmp_path, b)
    headers = [e["seq"] for e in b.events if e["type"] == "request/header"]
    assert _row(result.transition(1)) == (1, "resume", "cache_safe_change", "resume", (), (first_seed, headers[1]))
    drift = result.transition(2)
    assert _row(drift) == (2, "resume", "break", "resume", ("system",), (second_seed, headers[2]))
    assert drift.fields[0].detail["diff"] == ["@@ -1 +1 @@", "-You are a helpful coding agent.", "+You are a different agent."]


def _fork_pair(tmp_path: Path, *, tamper: bool) -> list[attribution.SessionAttribution]:
    parent = LogBuilder(session_id="p-fork")
    _chat_turn(parent, "one", "First answer.")
    child = parent.fork(session_id="c-fork")
    _chat_turn(child, "review")
    _chat_turn(parent, "two")
    child_path = _write(child, tmp_path / "c-fork.jsonl")
    if tamper:  # the seed copy of the first prompt differs from the parent's: nothing logs why
        child_path.write_text(child_path.read_text().replace('"text":"one"', '"text":"ONE"'))
    parent_path = _write(parent, tmp_path / "p-fork.jsonl")
    return attribute_paths([child_path, parent_path], adapter=None)[0]


def test_fork_child_extends_parent(tmp_path):
    child = _fork_pair(tmp_path, tamper=False)[0].transition(0)
    assert (child.relation, child.verdict, child.cause, child.previous, child.previous_session_id) == (
        "fork", "cache_safe_change", "fork", 0, "p-fork")


def test_unexplained_divergence(tmp_path):
    child = _fork_pair(tmp_path, tamper=True)[0].transition(0)
    assert (child.verdict, child.cause, child.fields, child.common_messages) == ("break", "unexplained", (), 0)
    assert (child.first_divergence.segment, child.first_divergence.message_index) == ("messages", 0)


def test_subagent_child_compared_with_spawning_request(tmp_path):
    parent = LogBuilder(session_id="p-spawn")
    with parent.turn("delegate"):
        with parent.step():
            reply = parent.assistant(None, tool_calls=[ToolCall("subagent", {"task": "count"})])
            mention = parent.tool_result(reply.call_ids[0], "started subagent c-spawn")
        with parent.step():
            parent.assistant("Started.")
    child = LogBuilder(session_id="c-spawn", parent_session="p-spawn", origin="subagent", system="Sub agent.")
    child.end_seed()
    _chat_turn(child, "count")
    group = open_group([_write(child, tmp_path / "c.jsonl"), _write(parent, tmp_path / "p.jsonl")])
    results = attribute_sessions(group.sessions, adapter=None)
    t = results[0].transition(0)
    child_header = [e["seq"] for e in child.events if e["type"] == "request/header"][0]
    assert _row(t) == (0, "subagent", "break", "subagent", ("system",), (mention, 0, child_header))
    assert (t.previous, t.previous_session_id) == (0, "p-spawn")


def test_unrecorded_mutation_needs_captures(tmp_path):
    b = LogBuilder(session_id="s-capture")
    _chat_turn(b, "one")
    _chat_turn(b, "two")
    first = b'{"model":"m","messages":[{"role":"user","content":"one"}],"max_tokens":5}'
    same = b'{"model":"m","messages":[{"role":"user","content":"one"},{"role":"user","content":"two"}],"max_tokens":9}'
    edited = b'{"model":"m","messages":[{"role":"user","content":"ONE"},{"role":"user","content":"two"}]}'
    assert _one(tmp_path, b, captures=[first, same]).transition(1).verdict == "extension"
    t = _one(tmp_path, b, captures=[first, edited]).transition(1)
    assert (t.verdict, t.cause, t.first_divergence.to_json()) == (
        "break", "unrecorded_mutation", {"segment": "messages", "message_index": 0, "offset": None,
                                         "body_offset": len(b'{"model":"m","messages":[{"role":"user","content":"')})


def test_captured_extends_and_header_diff():
    assert captured_extends(b'{"model":"a","messages":[1]}', b'{"model":"b","messages":[1,2]}') == (False, None)
    assert captured_extends(b'{"messages":[1,2]}', b'{"messages":[1]}') == (False, 1)
    assert captured_extends(b'{"messages":[1],"stream":true}', b'{"messages":[1,3]}') == (True, None)
    tool = {"name": "a", "description": "d", "parameters": {"type": "object"}}
    changed = diff_headers(
        {"config": {"provider": "p", "model": "m"}, "tools": [tool, {"name": "b"}, {"name": "c"}]},
        {"config": {"provider": "p", "model": "m", "stop": ["x"]}, "adapterDefaults": {"maxTokens": True},
         "tools": [{"name": "b"}, dict(tool, description="e"), {"name": "d"}]})
    assert [c.to_json() for c in changed] == [
        {"field": "stop", "before": None, "after": ["x"], "prompt_affecting": False},
        {"field": "adapterDefaults.maxTokens", "before": False, "after": True, "prompt_affecting": False},
        {"field": "tools", "before": ["a", "b", "c"], "after": ["b", "a", "d"], "prompt_affecting": True,
         "changes": {"added": ["d"], "removed": ["c"], "reordered": True, "schema_changed": ["a"]}}]


def test_exports_are_exact_and_sorted():
    assert attribution.__all__ == sorted(attribution.__all__)
    assert set(attribution.__all__) == {
        "Break", "CAUSES", "Divergence", "FieldChange", "MessageDigests", "RELATIONS", "SessionAttribution", "UNEXPLAINED_CAUSES",
        "Transition", "VERDICTS", "attribute", "attribute_group", "attribute_log", "attribute_opened", "attribute_paths",
        "attribute_sessions", "captured_extends", "common_prefix", "diff_headers", "format_transition", "lcp_bytes",
        "pieces_offset", "refuse_imported",
        "iter_attribute"}


# -- CLI ---------------------------------------------------------------------------------------

def _invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False, standalone_mode=False)


def _run(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    """The console entry point's behaviour: exit code, stdout, stderr."""
    monkeypatch.setattr(sys, "argv", ["dsh-audit", *args])
    code = run_guarded(cli)
    out = capsys.readouterr()
    return code, out.out, out.err


@needs_corpus
def test_cli_breaks_json_and_exit_codes():
    result = _invoke("breaks", str(LIVE / "d-resume" / "session-logs"), "--json")
    assert result.return_value == 0  # the one break is explained (exit 1 only for unexplained ones)
    assert _invoke("breaks", str(LIVE / "d-resume" / "session-logs"), "--json", "--fail-on", "any").return_value == 1
    rows = [json.loads(line) for line in result.output.splitlines()]
    assert [(r["request"], r["previous"], r["cause"], [f["field"] for f in r["fields"]], r["evidence_seqs"],
             r["first_divergence"]["segment"], r["session_id"][-8:]) for r in rows] == [
        (5, 4, "resume", ["model", "adapterDefaults.reasoningEffort", "system"], [83, 89], "config", "249053fa")]
    clean = _invoke("breaks", str(LIVE / "h-headless" / "session-logs"))
    log = LIVE / "h-headless" / "session-logs" / "session-2d31cc1d-3aa9-4009-b4bb-fe4f8cf088de.jsonl"
    assert (clean.return_value, clean.output) == (  # the one log read, named
        0, f"{log}  session session-2d31cc1d-3aa9-4009-b4bb-fe4f8cf088de\nno prefix-cache breaks\n")
    every = _invoke("breaks", str(LIVE / "h-headless" / "session-logs"), "--all", "--json")
    assert [json.loads(line)["verdict"] for line in every.output.splitlines()] == [
        "first", "first", "extension", "extension", "extension"]


@needs_corpus
def test_cli_explain_quotes_evidence_and_finds_the_parent(monkeypatch, capsys):
    log = next((LIVE / "e-compaction" / "session-logs").glob("*.jsonl"))
    result = _invoke("explain", str(log), "8")
    assert result.return_value == 0
    lines = result.output.splitlines()
    assert lines[0] == ("request 8 (loop, turn 5 step 1 attempt 1) of session "
                        "session-d2f6dc6a-8ad3-463b-b796-9ade0a9053df: break, cause compaction")
    assert lines[1] == "  compared with request 6 (step); 0 leading message(s) shared"
    assert any(line.startswith("  seq 114 user/message {\"surfaceOp\":{\"op\":\"replace\",\"start\":7,\"end\":98}")
               for line in lines)
    child = LIVE / "f-fork" / "session-logs" / "402a1ae8-7f85-40fc-b7cf-82cfc177dcd7.jsonl"
    fork = json.loads(_invoke("explain", str(child), "0", "--json").output)
    assert (fork["relation"], fork["previous"], fork["previous_session_id"]) == (
        "fork", 2, "session-ef87ee25-88b4-4f9c-a682-fd2071e3f0d6")
    code, out, err = _run(monkeypatch, capsys, "explain", str(log), "42")
    assert (code, out) == (2, "")
    assert err.startswith(f"error: {log}: request 42 does not exist: the log has 9 request(s)")


def test_format_first_and_help_examples():
    t = attribution.Transition("s", 0, None, None, "first", "first", None, notes=("parent p is not given",))
    assert format_transition(t) == ("request 0 (loop) of session s: first\n"
                                    "  nothing before it in its conversation: no cache to reuse\n"
                                    "  note: parent p is not given")
    for name in ("breaks", "explain"):
        text = _invoke(name, "--help").output
        assert "Example:" in text and f"dsh-audit {name} " in text


FIXTURES = CORPUS / "fixtures"


@pytest.mark.skipif(not FIXTURES.is_dir(), reason="../shared/corpus is absent")
def test_dsh_fixtures_overflow_recovery_and_empty_response_retry():
    recovery = attribute(FIXTURES / "headless-snapshots" / "compaction-recovery" / "session.jsonl",
                         lenient=True, adapter=None)
    assert [_row(t) for t in recovery.transitions] == [
        (0, "first", "first", None, (), ()),
        (1, "compaction_call", "extension", None, (), (19, 20)),
        (2, "step", "extension", None, (), ()),
        (3, "retry", "break", "compaction", (), (18, 19, 20, 21, 22)),
    ]
    assert recovery.transition(1).previous == 2  # the failed attempt, sent just before the summary call
    retry = attribute(FIXTURES / "acp-snapshots" / "empty-response-retry" / "session.jsonl",
                      lenient=True, adapter=None)
    assert [_row(t) for t in retry.transitions] == [
        (0, "first", "first", None, (), ()),
        (1, "retry", "cache_safe_change", "retry", (), (10, 11, 12)),
    ]


def test_captured_anthropic_bodies_extend_despite_moving_cache_markers():
    import json as _json

    from dsh_audit.attribution import captured_extends

    wire = CORPUS / "live-pi" / "c1-anthropic-tools" / "wire.jsonl"
    if not wire.exists():
        pytest.skip("../shared/corpus is absent")
    records = [_json.loads(line) for line in wire.read_text().splitlines()]
    bodies = [r["body"].encode() for r in records if r.get("kind") == "conversation"]
    verdicts = [captured_extends(a, b)[0] for a, b in zip(bodies, bodies[1:])]
    # every step extends the last; request 8 switches claude-sonnet-4-5 -> 4-6 (model, thinking)
    assert verdicts == [True] * 7 + [False, True]
    edited = bodies[3].replace(b'"is_error":false', b'"is_error":true', 1)
    assert captured_extends(bodies[2], edited) == (False, 3)


def test_messages_offset_counts_held_and_unheld_messages_alike() -> None:
    """A break's byte offset is where ``JSON.stringify`` of the two message lists first differs,
    whether the shared messages' lengths are held (summed at C speed) or serialised afresh."""
    from dsh_audit.attribution import MessageDigests
    from dsh_audit.attribution._prefix import messages_offset

    shared = [{"role": "user", "content": f"question {i} é"} for i in range(5)]
    prev = [*shared, {"role": "tool", "content": "long result"}]
    cur = [*shared, {"role": "tool", "content": "[pruned]"}, {"role": "user", "content": "more"}]
    whole_prev = stringify(prev).encode("utf-8")
    whole_cur = stringify(cur).encode("utf-8")
    expected = next(i for i, (a, b) in enumerate(zip(whole_prev, whole_cur)) if a != b)
    fresh = MessageDigests()
    held = MessageDigests()
    for message in shared[::2]:  # some held, some not
        held.get(message)
    assert messages_offset(prev, cur, 5, fresh) == messages_offset(prev, cur, 5, held) == expected == 237
    assert held.total_length(shared) == fresh.total_length(shared) == len(stringify(shared).encode("utf-8")) - 6
