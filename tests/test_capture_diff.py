"""Captures (wire.jsonl, HAR, body folder), alignment, body diffs and ``dsh-audit diff``.

Everything runs against the live corpus scenarios: the real DSH's logs and the bytes it sent.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys
from collections import Counter
from pathlib import Path

import pytest

import dsh_audit
from dsh_audit.wire import load_routes, make_renderer
from dsh_audit import capture as capture_pkg
from dsh_audit import diff as diff_module
from dsh_audit.capture import align, compare_capture, gate_ok, load_capture
from dsh_audit.cli import cli
from dsh_audit.cli._common import run_guarded
from dsh_audit.diff import diff_bodies
from dsh_audit.errors import CaptureError, RenderError
from dsh_audit.jsjson import stringify
from dsh_audit.log._json_line import parse_json

from _golden import CORPUS

LIVE = CORPUS / "live"
SCENARIOS = sorted(p.name for p in LIVE.iterdir()) if LIVE.is_dir() else []

pytestmark = pytest.mark.skipif(not LIVE.is_dir(), reason="../shared/corpus is absent")

#: Per scenario: (loop, title, compaction) requests, all of which must be byte-identical.
EXPECTED_COUNTS = {
    "a-chat": (2, 1, 0), "b-tools": (8, 1, 0), "c-change": (7, 1, 0), "d-resume": (5, 1, 0),
    "e-compaction": (7, 1, 1), "e2-autocompact": (12, 1, 1), "f-fork": (5, 1, 0),
    "g-subagent": (5, 1, 0), "h-headless": (4, 1, 0),
}


def scenario_requests(name: str) -> list:
    requests = []
    for log in sorted((LIVE / name / "session-logs").glob("*.jsonl")):
        requests.extend(dsh_audit.requests(dsh_audit.load(log)))
    return requests


def wire_records(name: str) -> list[dict]:
    return [json.loads(line) for line in (LIVE / name / "wire.jsonl").read_text().splitlines()]


def write_wire(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    return path


def run_cli(args: list[str], monkeypatch, capsys) -> tuple[int, str, str]:
    """Run the real console entry (error conversion included) and return (exit, stdout, stderr)."""
    monkeypatch.setattr(sys, "argv", ["dsh-audit", *args])
    code = run_guarded(cli)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- (a) every live scenario, byte for byte --------------------------------------------------

@pytest.mark.parametrize("name", SCENARIOS)
def test_live_scenario_is_identical(name):
    rows = compare_capture(scenario_requests(name), load_capture(LIVE / name / "wire.jsonl"))
    verdicts = Counter((row.kind, row.verdict) for row in rows)
    loop, title, compaction = EXPECTED_COUNTS[name]
    assert verdicts == Counter({("loop", "identical"): loop, ("title", "identical"): title,
                                **({("compaction", "identical"): compaction} if compaction else {})})
    assert all(row.request is not None and row.capture is not None and not row.pairing.retry for row in rows)
    assert gate_ok(rows, strict=True)
    compactions = [row for row in rows if row.kind == "compaction"]
    assert all(row.note == "instruction from capture" for row in compactions)


@pytest.mark.parametrize("name", ["c1-anthropic-tools", "c3-openai-compat"])
def test_live_pi_scenarios_align_without_session_header(name):
    folder = CORPUS / "live-pi" / name
    requests = [r for log in sorted((folder / "session-logs").glob("*.jsonl"))
                for r in dsh_audit.requests(dsh_audit.load(log))]
    captures = load_capture(folder / "wire.jsonl")
    assert all(c.session_id is None for c in captures)
    # the route configuration DSH ran with: a hand-declared route's model facts are not in the log
    routes = load_routes(folder / "inputs" / "pi-ai-routes.patch.yml")
    renderer = make_renderer("anthropic" if "anthropic" in name else "openai", models=routes.models)
    rows = compare_capture(requests, captures, render=lambda request, options: renderer.render(request, **options).body)
    assert [row.verdict for row in rows] == ["identical"] * len(captures)
    assert all(row.pairing.note == "order (no session header)" for row in rows)


def golden_renderer(name: str):
    """Render from DSH's own golden bodies: loop requests by session, turn and step."""
    bodies = {}
    for golden in (LIVE / name / "golden").glob("*.golden.json"):
        data = json.loads(golden.read_text())
        for item in data["requests"]:
            bodies[(data["session"]["id"], item["turn"], item["step"])] = item["body"].encode("utf-8")

    def render(request, options):
        if request.kind != "loop":
            raise RenderError("goldens hold loop requests only")
        return bodies[(request.session_id, request.turn, request.step)]

    return render


@pytest.mark.parametrize("name", SCENARIOS)
def test_golden_bodies_match_the_capture(name):
    rows = compare_capture(scenario_requests(name), load_capture(LIVE / name / "wire.jsonl"),
                           render=golden_renderer(name))
    loop, title, compaction = EXPECTED_COUNTS[name]
    assert Counter(r.verdict for r in rows if r.kind == "loop") == {"identical": loop}
    assert Counter(r.verdict for r in rows if r.kind != "loop") == {"unrendered": title + compaction}
    assert gate_ok(rows)


# -- alignment: retries, missing and foreign captures ----------------------------------------

def test_identical_resend_pairs_with_the_same_request(tmp_path):
    records = wire_records("b-tools")
    records.insert(4, dict(records[3]))  # loop step 1/3 resent after an HTTP error
    captures = load_capture(write_wire(tmp_path / "w.jsonl", records))
    pairs = align(scenario_requests("b-tools"), captures)
    third = [p for p in pairs if p.request is not None and (p.request.turn, p.request.step) == (1, 3)]
    assert [(p.capture.position, p.retry) for p in third] == [(3, False), (4, True)]
    assert third[1].note == "identical resend of capture 3"
    assert all(p.request is not None and p.capture is not None for p in pairs)
    assert len(pairs) == len(records)


def test_rebuilt_retry_attempt_pairs_with_second_send(tmp_path):
    requests = scenario_requests("b-tools")
    first = next(r for r in requests if (r.turn, r.step) == (1, 3))
    retry = dataclasses.replace(first, attempt=2, index=99)
    requests.insert(requests.index(first) + 1, retry)
    records = wire_records("b-tools")
    pairs = align(requests, load_capture(write_wire(tmp_path / "one.jsonl", records)))
    assert [(p.capture, p.note) for p in pairs if p.request is retry] == [
        (None, "retry attempt 2: the capture holds 1 send(s) of these bytes")]
    records.insert(4, dict(records[3]))
    pairs = align(requests, load_capture(write_wire(tmp_path / "two.jsonl", records)))
    assert [(p.capture.position, p.retry) for p in pairs if p.request is retry] == [(4, False)]
    assert all(p.request is not None and p.capture is not None for p in pairs)


def test_missing_capture_and_foreign_session_are_reported(tmp_path):
    records = wire_records("a-chat")
    dropped = records.pop()  # the second loop request never reached the capture
    stranger = dict(dropped, headers={**dropped["headers"], "x-deepseek-harness-session-id": "someone-else"})
    rows = compare_capture(scenario_requests("a-chat"),
                           load_capture(write_wire(tmp_path / "w.jsonl", records + [stranger])))
    assert [(r.kind, r.verdict, r.request.index if r.request else None) for r in rows] == [
        ("title", "identical", 0), ("loop", "identical", 1), ("loop", "unmatched", 2), ("loop", "foreign", None)]
    assert rows[3].pairing.note == "foreign: session someone-else is not among the logs given"
    assert not gate_ok(rows)


# -- (b) faults: each mutation detected at the right path and offset -------------------------

#: (scenario, wire kind): the last captured body of that kind is mutated.
FAULT_SCENARIOS = ["b-tools/conversation", "e-compaction/compaction", "h-headless/conversation"]


def captured_body(spec: str) -> bytes:
    name, kind = spec.split("/")
    body = [r for r in wire_records(name) if r["kind"] == kind][-1]["body"]
    raw = body.encode("utf-8")
    assert stringify(parse_json(raw)).encode("utf-8") == raw  # mutations below re-serialise exactly
    return raw


def encode(value) -> bytes:
    return stringify(value).encode("utf-8")


def common_prefix(a: bytes, b: bytes) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


@pytest.mark.parametrize("name", FAULT_SCENARIOS)
def test_one_character_changed_in_a_tool_result(name):
    body = captured_body(name)
    value = parse_json(body)
    index = next(i for i, m in enumerate(value["messages"]) if m["role"] == "tool")
    message = value["messages"][index]
    anchor = encode({"tool_call_id": message["tool_call_id"], "content": ""})[1:-2]
    offset = body.index(anchor) + len(anchor)
    message["content"] = "#" + message["content"][1:]
    result = diff_bodies(body, encode(value))
    assert (result.verdict, result.first_offset, result.paths) == ("different", offset, [f"messages[{index}].content"])
    assert result.differences[0].summary == (f"message {index} (tool result for {message['tool_call_id']}): "
                                             "content differs from char 0 on (same length)")


@pytest.mark.parametrize("name", FAULT_SCENARIOS)
def test_message_removed(name):
    body = captured_body(name)
    value = parse_json(body)
    index = next(i for i, m in enumerate(value["messages"]) if m["role"] == "assistant")
    gone, after = encode(value["messages"][index]), encode(value["messages"][index + 1])
    offset = body.index(gone) + common_prefix(gone, after)
    del value["messages"][index]
    result = diff_bodies(body, encode(value))
    assert (result.verdict, result.first_offset, result.paths) == ("different", offset, [f"messages[{index}]"])
    assert result.differences[0].change == "removed"
    assert result.differences[0].summary == f"message {index} (assistant): missing in the capture"


@pytest.mark.parametrize("name", FAULT_SCENARIOS)
def test_tools_reordered(name):
    body = captured_body(name)
    value = parse_json(body)
    tools = value["tools"]
    tools[0], tools[1] = tools[1], tools[0]
    result = diff_bodies(body, encode(value))
    assert result.verdict == "different"
    assert result.first_offset == body.index(encode(tools[1])) + common_prefix(encode(tools[1]), encode(tools[0]))
    assert [(d.path, d.change) for d in result.differences] == [("tools[1]", "moved")]
    assert result.differences[0].summary == f"tool 1 ({tools[0]['function']['name']}): moved to tools[0] in the capture"


@pytest.mark.parametrize("name", FAULT_SCENARIOS)
def test_keys_reordered_inside_a_tool_schema(name):
    body = captured_body(name)
    value = parse_json(body)
    parameters = value["tools"][2]["function"]["parameters"]
    keys = list(parameters)
    value["tools"][2]["function"]["parameters"] = {k: parameters[k] for k in reversed(keys)}
    changed = encode(value)
    result = diff_bodies(body, changed)
    assert (result.verdict, result.equivalence, result.paths) == (
        "equivalent", ("key order",), ["tools[2].function.parameters"])
    assert result.first_offset == common_prefix(body, changed) == body.index(encode(parameters)) + 2


@pytest.mark.parametrize("name", FAULT_SCENARIOS)
def test_whitespace_inserted(name):
    body = captured_body(name)
    comma = body.index(b'","messages"') + 1
    result = diff_bodies(body, body[:comma] + b" " + body[comma:])
    assert (result.verdict, result.first_offset, result.equivalence, result.paths) == (
        "equivalent", comma, ("whitespace",), ["$"])


@pytest.mark.parametrize("name", FAULT_SCENARIOS)
@pytest.mark.parametrize("spelling", [b"256000.0", b"2.56e5"])
def test_number_respelled(name, spelling):
    body = captured_body(name)
    value = parse_json(body)
    number = str(value["max_tokens"]).encode()
    at = body.index(b'"max_tokens":' + number) + len(b'"max_tokens":')
    mutated = body[:at] + (spelling if value["max_tokens"] == 256000 else number + b".0") + body[at + len(number):]
    result = diff_bodies(body, mutated)
    assert (result.verdict, result.equivalence, result.paths) == ("equivalent", ("number spelling",), ["max_tokens"])
    assert result.first_offset == at + common_prefix(number, mutated[at:])


@pytest.mark.parametrize("name", FAULT_SCENARIOS)
def test_reasoning_content_dropped(name):
    body = captured_body(name)
    value = parse_json(body)
    index = max(i for i, m in enumerate(value["messages"]) if "reasoning_content" in m)
    message = value["messages"][index]
    before = encode(message)
    del message["reasoning_content"]
    offset = body.index(before) + common_prefix(before, encode(message))
    result = diff_bodies(body, encode(value))
    assert (result.verdict, result.first_offset, result.paths) == (
        "different", offset, [f"messages[{index}].reasoning_content"])
    assert result.differences[0].summary == f"message {index} (assistant): reasoning_content missing in the capture"


def test_string_escaping_and_bool_versus_number():
    body = captured_body("b-tools/conversation")
    dash = body.index("—".encode())
    escaped = body[:dash] + b"\\u2014" + body[dash + 3:]
    result = diff_bodies(body, escaped)
    assert (result.verdict, result.first_offset, result.equivalence, result.paths) == (
        "equivalent", dash, ("string escaping",), ["messages[0].content"])
    flipped = diff_bodies(b'{"stream":true}', b'{"stream":1}')
    assert (flipped.verdict, [(d.path, d.change) for d in flipped.differences]) == ("different", [("stream", "type")])


def test_shorter_content_summary_and_context():
    result = diff_bodies(b'{"messages":[{"role":"tool","tool_call_id":"call_3","content":"' + b"x" * 900 + b'"}]}',
                         b'{"messages":[{"role":"tool","tool_call_id":"call_3","content":"' + b"x" * 88 + b'"}]}')
    assert result.differences[0].summary == "message 0 (tool result for call_3): content 812 chars shorter in the capture"
    assert result.first_offset == 151
    assert (result.expected_context, result.actual_context) == ("x" * 48, "x" * 24 + '"}]}')


def test_lone_surrogate_and_non_json():
    lone = diff_bodies(b'{"a":"\\ud800"}', b'{"a":"\\uD800"}')
    assert (lone.verdict, lone.equivalence, lone.paths) == ("equivalent", ("string escaping",), ["a"])
    broken = diff_bodies(b'{"a":1}', b'{"a":')
    assert (broken.verdict, broken.first_offset, broken.paths) == ("different", 5, ["$"])
    assert diff_bodies(b"{}", b"{}").verdict == "identical"


# -- (c) the same requests as HAR and as a body folder ---------------------------------------

def to_har(records: list[dict], path: Path) -> Path:
    entries = [{"startedDateTime": r["time"], "request": {
        "method": r["method"], "url": f"http://127.0.0.1:18090{r['path']}", "httpVersion": "HTTP/1.1",
        "headers": [{"name": k.title(), "value": v} for k, v in r["headers"].items()],
        "postData": {"mimeType": "application/json", "text": r["body"]}}} for r in records]
    path.write_text(json.dumps({"log": {"version": "1.2", "creator": {"name": "test"}, "entries": entries}}, indent=1))
    return path


def to_folder(records: list[dict], path: Path, *, sidecars: bool = True) -> Path:
    path.mkdir()
    for number, record in enumerate(records, start=1):
        (path / f"{number}.json").write_bytes(record["body"].encode("utf-8"))
        if sidecars:
            (path / f"{number}.meta.json").write_text(json.dumps(
                {"method": record["method"], "path": record["path"], "time": record["time"],
                 "headers": record["headers"]}))
    return path


def shape(captures) -> list[tuple]:
    return [(c.position, c.method, c.path, c.headers, c.body, c.time, c.kind) for c in captures]


@pytest.mark.parametrize("name", ["e-compaction", "g-subagent", "b-tools"])
def test_har_and_folder_give_the_same_verdicts(name, tmp_path):
    records = wire_records(name)
    wire = load_capture(LIVE / name / "wire.jsonl")
    har = load_capture(to_har(records, tmp_path / "capture.har"))
    folder = load_capture(to_folder(records, tmp_path / "bodies"))
    assert shape(har) == shape(folder) == shape(wire)
    assert folder[1].source == str(tmp_path / "bodies" / "2.json") and har[1].locator == "entries[1]"
    requests = scenario_requests(name)
    verdicts = [[(r.kind, r.verdict, r.capture.position) for r in compare_capture(requests, c)]
                for c in (wire, har, folder)]
    assert verdicts[0] == verdicts[1] == verdicts[2]
    assert {v for _, v, _ in verdicts[0]} == {"identical"}


def test_folder_without_sidecars_aligns_by_order(tmp_path):
    records = wire_records("e-compaction")
    captures = load_capture(to_folder(records, tmp_path / "bodies", sidecars=False))
    assert [c.kind for c in captures] == ["loop", "title"] + ["loop"] * 5 + ["compaction", "loop"]
    rows = compare_capture(scenario_requests("e-compaction"), captures)
    assert [r.verdict for r in rows] == ["identical"] * 9
    assert {r.pairing.note for r in rows} == {"order (no session header)"}


@pytest.mark.parametrize(("content", "message"), [
    ('{"seq": 1, "method": "POST", "body": "{}"}\nnot json\n', "line 2: not a JSON record"),
    ('{"seq": 1, "method": "POST", "body": "{}", "body_sha256": "00"}\n', "line 1: body does not match its body_sha256"),
    ('{"seq": 1, "method": "POST", "body": "{}", "body_bytes": 3}\n', "line 1: body is 2 bytes, body_bytes says 3"),
    ('{"log": {"version": "1.2"}}', "no log.entries list"),
    ('{"log": {"entries": [{"request": {"method": "POST", "headers": {"a": "b"}}}]}}',
     "entries[0]: request.headers is not a list of {name, value}"),
    ("hello", "not a capture format dsh-audit knows"),
])
def test_bad_captures_raise_capture_error(tmp_path, content, message):
    path = tmp_path / "capture.txt"
    path.write_text(content)
    with pytest.raises(CaptureError) as caught:
        load_capture(path)
    assert caught.value.message.startswith(message)
    assert caught.value.path == str(path) and caught.value.hint


def test_classification_agrees_with_the_capture_server():
    wanted = {"conversation": "loop", "title": "title", "compaction": "compaction"}
    files = sorted(CORPUS.glob("live*/*/wire.jsonl"))
    assert len(files) == 11
    for path in files:
        records = [json.loads(line) for line in path.read_text().splitlines()]
        assert [c.kind for c in load_capture(path)] == [wanted[r["kind"]] for r in records], path


def test_classification_rules():
    classify = capture_pkg.classify
    title = {"messages": [{"role": "system", "content": "Create a concise title for an AI coding-assistant session."},
                          {"role": "user", "content": "x"}], "thinking": {"type": "disabled"}}
    assert classify({}, encode(title)) == "title"
    assert classify({}, encode({**title, "tools": [{"name": "bash"}]})) == "loop"
    assert classify({"x-deepseek-harness-compact": "1"}, encode(title)) == "compaction"
    anthropic_title = {"system": [{"type": "text", "text": title["messages"][0]["content"]}],
                       "messages": [{"role": "user", "content": "x"}]}
    assert classify({}, encode(anthropic_title)) == "title"
    compaction = {"messages": [{"role": "user", "content": [{"type": "text", "text":
                  "You are now acting as a compaction engine for this AI coding assistant."}]}]}
    assert classify({}, encode(compaction)) == "compaction"
    assert [classify({}, b"[1]"), classify({}, b""), classify({}, b"{oops")] == ["other"] * 3


def test_exported_names():
    assert capture_pkg.__all__ == sorted(capture_pkg.__all__) == [
        "AlignedCapture", "CAPTURE_KINDS", "CAPTURE_NAME", "CAPTURE_SEARCH_LEVELS", "COMPACTION_PREFIX",
        "CaptureLoader", "CaptureOffset", "CaptureRead", "CapturedRequest", "LOADERS", "NO_CAPTURE_ENV", "PIAI_SESSION_HEADERS", "Pairing", "RequestDiff", "TITLE_PREFIX", "align",
        "align_capture", "capture_folders", "capture_for", "capture_state",
        "captured_bodies", "captures_ignored", "classify", "compare_capture", "find_capture", "gate_ok", "held_sessions",
        "last_user_text", "load_capture",
        "read_capture", "read_capture_tail", "session_captures", "sessions_by_capture", "sniff_capture", "unreadable_capture",
        "usage_capture"]
    assert diff_module.__all__ == ["BodyDiff", "Difference", "VERDICTS", "captures_said", "diff_bodies", "format_path",
                                   "requests_said"]
    assert list(capture_pkg.LOADERS) == ["har", "wire-jsonl", "body-folder"]


# -- (d) the CLI -----------------------------------------------------------------------------

def test_cli_clean_scenario_exits_0(monkeypatch, capsys):
    folder = LIVE / "g-subagent"
    code, out, err = run_cli(["diff", str(folder / "home" / "sessions"), "--capture", str(folder / "wire.jsonl")],
                             monkeypatch, capsys)
    assert (code, err) == (0, "")
    assert out.rstrip().splitlines()[-1] == "6 request(s): 6 identical; 0 capture(s) unexplained, 0 foreign: OK"


def test_cli_json_fields_and_foreign_rows(monkeypatch, capsys):
    folder = LIVE / "g-subagent"
    child = folder / "session-logs" / "718aabf5-ac98-48d9-87ec-fa18653fd4d4.jsonl"
    code, out, _ = run_cli(["diff", str(child), "--capture", str(folder / "wire.jsonl"), "--json"], monkeypatch, capsys)
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0
    assert [(r["index"], r["kind"], r["verdict"], r["first_offset"], r["paths"], r["capture_position"])
            for r in rows] == [(0, "loop", "identical", None, [], 3), (1, "loop", "identical", None, [], 4)] + [
        (None, kind, "foreign", None, [], position) for kind, position in
        [("loop", 0), ("title", 1), ("loop", 2), ("loop", 5)]]


def test_cli_mutated_capture_exits_1_with_paths(tmp_path, monkeypatch, capsys):
    records = wire_records("a-chat")
    value = parse_json(records[2]["body"].encode())
    del value["messages"][3]["reasoning_content"]
    records[2] = {**records[2], "body": stringify(value)}
    del records[2]["body_sha256"], records[2]["body_bytes"]
    capture = write_wire(tmp_path / "wire.jsonl", records)
    log = LIVE / "a-chat" / "session-logs"
    code, out, _ = run_cli(["diff", str(log), "--capture", str(capture), "--json"], monkeypatch, capsys)
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 1
    assert [(r["index"], r["verdict"], r["paths"]) for r in rows] == [
        (0, "identical", []), (1, "identical", []), (2, "different", ["messages[3].reasoning_content"])]
    original = wire_records("a-chat")[2]["body"].encode()
    assert rows[2]["first_offset"] == common_prefix(original, records[2]["body"].encode())
    code, out, _ = run_cli(["diff", str(log), "--capture", str(capture)], monkeypatch, capsys)
    assert code == 1 and "messages[3].reasoning_content: message 3 (assistant): reasoning_content missing" in out
    assert out.rstrip().splitlines()[-1].endswith("1 different; 0 capture(s) unexplained, 0 foreign: FAILED")


def test_cli_equivalent_exits_0_unless_strict(tmp_path, monkeypatch, capsys):
    records = wire_records("a-chat")
    records[0] = {**records[0], "body": records[0]["body"].replace('"max_tokens":', '"max_tokens": ')}
    del records[0]["body_sha256"], records[0]["body_bytes"]
    capture = write_wire(tmp_path / "wire.jsonl", records)
    args = ["diff", str(LIVE / "a-chat" / "session-logs"), "--capture", str(capture)]
    code, out, _ = run_cli(args, monkeypatch, capsys)
    assert code == 0 and "equivalent (whitespace)" in out
    assert run_cli(args + ["--strict"], monkeypatch, capsys)[0] == 1


def test_cli_missing_loop_capture_exits_1(tmp_path, monkeypatch, capsys):
    capture = write_wire(tmp_path / "wire.jsonl", wire_records("a-chat")[:2])
    code, out, _ = run_cli(["diff", str(LIVE / "a-chat" / "session-logs"), "--capture", str(capture), "--json"],
                           monkeypatch, capsys)
    assert code == 1
    assert json.loads(out.splitlines()[-1])["verdict"] == "unmatched"


def test_cli_bad_input_exits_2(tmp_path, monkeypatch, capsys):
    log = str(LIVE / "a-chat" / "session-logs")
    code, _, err = run_cli(["diff", log, "--capture", str(tmp_path / "nope.jsonl")], monkeypatch, capsys)
    assert (code, err.strip()) == (2, f"error: {tmp_path / 'nope.jsonl'}: capture not found (hint: check the --capture path)")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"method": "POST", "body": "{}"}\n{oops\n')
    code, _, err = run_cli(["diff", log, "--capture", str(bad)], monkeypatch, capsys)
    assert code == 2 and err.startswith(f"error: {bad}: line 2: not a JSON record")
    alone = shutil.copytree(log, tmp_path / "alone")  # no wire.jsonl beside it or above it
    code, _, err = run_cli(["diff", str(alone)], monkeypatch, capsys)
    assert code == 2 and "--capture" in err
    code, _, _ = run_cli(["diff", log, "--capture", str(LIVE / "a-chat" / "wire.jsonl"), "--adapter", "nope"],
                         monkeypatch, capsys)
    assert code == 2


def test_cli_help_ends_with_example(monkeypatch, capsys):
    code, out, _ = run_cli(["diff", "--help"], monkeypatch, capsys)
    assert code == 0
    lines = [line.strip() for line in out.split("Options:")[0].strip().splitlines()]
    assert lines[-3:] == ["Example:", "dsh-audit diff ~/.dsh/sessions --capture wire.jsonl --json | jq .verdict",
                          "dsh-audit diff recorded/a-chat"]


@pytest.mark.skipif(not LIVE.is_dir(), reason="../shared/corpus is absent")
def test_a_tampered_title_body_fails_diff_as_it_fails_check(tmp_path, monkeypatch, capsys):
    """A proxy that rewrites a title body: check fails it (DSH811), and so does diff now (it passed)."""
    rows = [json.loads(line) for line in (LIVE / "a-chat" / "wire.jsonl").read_text(encoding="utf-8").splitlines()]
    title = next(r for r in rows if r["kind"] == "title")
    body = json.loads(title["body"])
    title["body"] = stringify({**body, "temperature": 0.5})
    del title["body_sha256"], title["body_bytes"]  # what a proxy that rewrote it would not know
    capture = tmp_path / "wire.jsonl"
    capture.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    log = LIVE / "a-chat" / "session-logs"

    def run(*args):
        monkeypatch.setattr(sys, "argv", ["dsh-audit", *args])
        code = run_guarded(cli)
        return code, capsys.readouterr().out

    code, out = run("diff", str(log), "--capture", str(capture), "--json")
    verdicts = [(json.loads(line)["kind"], json.loads(line)["verdict"]) for line in out.splitlines()]
    assert code == 1 and ("title", "different") in verdicts
    assert all(v == "identical" for k, v in verdicts if k != "title")
    assert run("check", str(log), "--capture", str(capture))[0] == 1
    title["body"] = stringify(body)  # untampered: diff passes
    capture.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert run("diff", str(log), "--capture", str(capture), "--json")[0] == 0
