"""Hostile input through the finished commands: exact exit codes and error lines, never a traceback.

Each case is a regression found by fuzzing ``show``, ``render``, ``diff``, ``cache``, ``breaks`` and
``explain`` with damaged or adversarial logs and captures. Logs are built with
:class:`dsh_audit.testing.LogBuilder` in ``tmp_path`` and then edited by hand.
"""

from __future__ import annotations

import json
import re
import struct
import time
from pathlib import Path
from typing import Any, Callable

import pytest
import zstandard

from dsh_audit.session import find_parent
from dsh_audit.jsjson import stringify
from dsh_audit.log._json_line import parse_json
from dsh_audit.testing import LogBuilder, tool_schema
from _cli import invoke

SID = "session-hostile"
DEEP_HINT = r" \(hint: DSH's JSON\.parse may still load this log; dsh-audit's recursive serialisers stop here\)"
DEEP = "line nests JSON arrays or objects more than 512 levels deep; dsh-audit cannot process it"


def two_turns(*, tools: bool = False) -> LogBuilder:
    """Two one-step turns with a header change between them (a second request/header)."""
    b = LogBuilder(session_id=SID)
    if tools:
        b.configure(tools=[tool_schema("read", "Read a file.", {"path": {"type": "string"}})])
    with b.turn("Hi"):
        with b.step():
            b.assistant("Hello")
    b.configure(system="You are terse.")
    with b.turn("Again"):
        with b.step():
            b.assistant("Yes")
    return b


def write_log(path: Path, b: LogBuilder, edit: Callable[[list[dict[str, Any]]], None] | None = None) -> Path:
    """Write ``b`` one event per line after ``edit`` changed the parsed records (header first)."""
    records = [json.loads(line) for line in b.lines(packed=False)]
    if edit is not None:
        edit(records)
    path.write_text("".join(stringify(r) + "\n" for r in records), encoding="utf-8")
    return path


def headers(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r["data"]["header"] for r in records if r.get("type") == "request/header"]


def assert_one_error(result: tuple[int, str, list[str]], where: str, message: str, hint: str = r"( \(hint: .+\))?") -> None:
    code, out, err = result
    assert (code, out, len(err)) == (2, "", 1), err
    assert re.fullmatch(re.escape(f"error: {where}: {message}") + hint, err[0]), err[0]


# -- JSON that JSON.parse refuses or that Python cannot follow ------------------------------------


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_not_json(tmp_path, monkeypatch, capsys, literal):
    b = two_turns()
    path = write_log(tmp_path / "session.jsonl", b)
    lines = path.read_text("utf-8").splitlines()
    header = next(i for i, line in enumerate(lines) if '"request/header"' in line)
    seq = json.loads(lines[header])["seq"]
    lines[header] = lines[header].replace('"maxTokens":65536', f'"maxTokens":{literal}', 1)
    assert literal in lines[header]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ValueError):
        parse_json(literal.encode())
    assert_one_error(invoke(monkeypatch, capsys, "show", str(path), "0"), f"{path}:{header + 1} seq {seq}",
                     "corrupt session log: unparsable committed event (not valid JSON)")


def test_deep_nesting_in_the_header_line(tmp_path, monkeypatch, capsys):
    path = tmp_path / "session.jsonl"
    path.write_bytes(b'{"type":"session","version":0,"id":"x","createdAt":1,"delegationDepth":0,"deep":'
                     + b"[" * 100_000 + b"]" * 100_000 + b"}\n")
    for command in (["show", str(path), "0"], ["render", str(path), "0"], ["explain", str(path), "0"],
                    ["cache", str(path)], ["breaks", str(path)]):
        assert_one_error(invoke(monkeypatch, capsys, *command), f"{path}:1", DEEP, DEEP_HINT)


@pytest.mark.parametrize("depth", [600, 1000, 5000])
def test_deep_nesting_in_an_event(tmp_path, monkeypatch, capsys, depth):
    deep = json.loads("[" * 400 + "]" * 400)  # json.dumps cannot write deeper values: splice text below
    b = two_turns()

    def edit(records):
        headers(records)[0]["config"]["deep"] = deep

    path = write_log(tmp_path / "session.jsonl", b, edit)
    lines = path.read_text("utf-8").splitlines()
    number = next(i for i, line in enumerate(lines) if '"deep"' in line)
    lines[number] = lines[number].replace("[" * 400 + "]" * 400, "[" * depth + "]" * depth)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    seq = number - 1
    for command in (["show", str(path), "1"], ["render", str(path), "1"], ["explain", str(path), "1"],
                    ["cache", str(path)], ["breaks", str(path)]):
        assert_one_error(invoke(monkeypatch, capsys, *command), f"{path}:{number + 1} seq {seq}", DEEP, DEEP_HINT)


def test_nesting_below_the_limit_is_rendered(tmp_path, monkeypatch, capsys):
    b = two_turns()

    def edit(records):
        headers(records)[0]["config"]["deep"] = json.loads("[" * 480 + "]" * 480)

    path = write_log(tmp_path / "session.jsonl", b, edit)
    code, out, err = invoke(monkeypatch, capsys, "show", str(path), "0", "--compact")
    assert (code, err) == (0, [])
    assert '"deep":' + "[" * 480 + "]" * 480 in out


# -- numbers as JavaScript holds them ----------------------------------------------------------


def test_integers_beyond_2_53_are_written_as_doubles():
    assert stringify([2**53, 2**53 + 1, -(2**53 + 1), 123456789012345678, 9223372036854775807, 10**400, 2**64 + 1]) == (
        "[9007199254740992,9007199254740992,-9007199254740992,123456789012345680,9223372036854776000,null,"
        "18446744073709552000]")


def test_render_writes_an_int64_schema_bound_as_node_does(tmp_path, monkeypatch, capsys):
    b = two_turns(tools=True)

    def edit(records):
        headers(records)[0]["tools"][0]["parameters"]["properties"]["path"]["maxLength"] = 9223372036854775807

    path = write_log(tmp_path / "session.jsonl", b, edit)
    code, out, err = invoke(monkeypatch, capsys, "render", str(path), "0")
    assert (code, err) == (0, [])
    assert '"maxLength":9223372036854776000' in out and "9223372036854775807" not in out


# -- zstd framing DSH refuses ---------------------------------------------------------------------


def _frames(b: LogBuilder) -> list[bytes]:
    compressor = zstandard.ZstdCompressor(write_checksum=True)
    header, *rest = b.lines(packed=False)
    return [compressor.compress((header + "\n").encode()), compressor.compress(("\n".join(rest) + "\n").encode())]


def test_skippable_zstd_frame_is_refused(tmp_path, monkeypatch, capsys):
    first, second = _frames(two_turns())
    skippable = struct.pack("<II", 0x184D2A50, 3) + b"abc"
    path = tmp_path / "session.jsonl.zstd"
    path.write_bytes(first + skippable + second)
    assert_one_error(invoke(monkeypatch, capsys, "show", str(path), "0"), f"{path}:2",
                     f"bytes at offset {len(first)} are a skippable zstd frame, which DSH refuses")


def test_reserved_zstd_frame_header_bit_is_refused(tmp_path, monkeypatch, capsys):
    first, second = _frames(two_turns())
    bad = bytearray(second)
    bad[4] |= 0x08
    path = tmp_path / "session.jsonl.zstd"
    path.write_bytes(first + bytes(bad))
    assert_one_error(invoke(monkeypatch, capsys, "show", str(path), "0"), f"{path}:2",
                     f"zstd frame at offset {len(first)} sets a reserved frame-header bit")


# -- fork/subagent parents named by an untrusted header ---------------------------------------


def test_non_string_parent_session(tmp_path, monkeypatch, capsys):
    b = two_turns()

    def edit(records):
        records[0]["parentSession"] = 7

    path = write_log(tmp_path / "session.jsonl", b, edit)
    message = f'stored session "{SID}" failed validation: session header parentSession must be a string'
    for command in (["breaks", str(path)], ["explain", str(path), "0"]):
        assert_one_error(invoke(monkeypatch, capsys, *command), f"{path}:1", message)


def test_parent_search_stays_beside_the_child(tmp_path, monkeypatch, capsys):
    parent = LogBuilder(session_id="session-parent")
    with parent.turn("Hi"):
        with parent.step():
            parent.assistant("Hello")
    child = two_turns()

    def edit(records):
        records[0]["parentSession"] = "session-parent"

    (tmp_path / "x").mkdir()
    child_path = write_log(tmp_path / "x" / "child.jsonl", child, edit)
    deep = tmp_path / "a" / "b" / "c"
    deep.mkdir(parents=True)
    write_log(deep / "session.jsonl", parent)
    assert find_parent(child_path, "session-parent") is None  # three folders down: not a neighbour
    for hostile in ("/", "..", "../..", "", "a\0b"):
        assert find_parent(child_path, hostile) is None
    near = tmp_path / "p"
    near.mkdir()
    write_log(near / "session.jsonl", parent)
    assert find_parent(child_path, "session-parent") == near / "session.jsonl"
    started = time.monotonic()
    code, out, err = invoke(monkeypatch, capsys, "breaks", "--json", str(child_path))
    assert time.monotonic() - started < 5
    assert code == 0 and err == []  # exit 0: the break it lists is explained


# -- wrong-typed fields the reader lets through ------------------------------------------------


def test_cache_with_wrong_typed_usage_and_chunk_keys(tmp_path, monkeypatch, capsys):
    b = two_turns()

    def edit(records):
        for record in records:
            data = record.get("data")
            if record["type"] == "assistant/chunk" and data["chunk"]["type"] == "usage":
                data["chunk"]["usage"]["cacheReadTokens"] = [[]]
                data["chunk"]["usage"]["cacheWriteTokens"] = "12"
            if record["type"] == "assistant/chunk" and data["chunk"]["type"] == "finish":
                data["step"] = {"a": 1}

    path = write_log(tmp_path / "session.jsonl", b, edit)
    code, out, err = invoke(monkeypatch, capsys, "cache", "--json", "--tokenizer", "estimate", str(path))
    assert (code, err) == (0, [])
    report = json.loads(out)
    prompts = [(v["prompt_tokens"], v["actual_cache_read"]) for v in report["timeline"]]
    inputs = [r["data"]["chunk"]["usage"]["inputTokens"] for r in map(json.loads, b.lines(packed=False)[1:])
              if r["type"] == "assistant/chunk" and r["data"]["chunk"]["type"] == "usage"]
    # a wrong-typed bucket holds no count: the logged prompt is unknown, never its input alone (fuzz 30a, U2)
    assert prompts == [(None, None) for _ in inputs] and len(inputs) == 2


def test_title_call_with_a_non_string_model_and_damaged_messages(tmp_path, monkeypatch, capsys):
    b = two_turns()
    b.title("Greeting")
    good = write_log(tmp_path / "good.jsonl", b)
    code, out, err = invoke(monkeypatch, capsys, "show", str(good), "2")
    assert (code, json.loads(out)["kind"], err) == (0, "title", [])

    def bad_model(records):
        next(r for r in records if r["type"] == "session/title-llm-request")["data"]["route"]["model"] = [[]]

    path = write_log(tmp_path / "model.jsonl", b, bad_model)
    code, out, err = invoke(monkeypatch, capsys, "cache", "--json", "--tokenizer", "estimate", str(path))
    assert (code, err) == (0, [])
    assert [v["model"] for v in json.loads(out)["timeline"]][-1] is None

    def bad_messages(records):
        next(r for r in records if r["type"] == "session/title-llm-request")["data"]["messages"][0] = "x"

    path = write_log(tmp_path / "messages.jsonl", b, bad_messages)
    for command in (["render", str(path), "2"], ["show", str(path), "2"]):
        assert_one_error(invoke(monkeypatch, capsys, *command), str(path),
                         "request 2 does not exist: the log has 2 request(s)")
    code, out, err = invoke(monkeypatch, capsys, "cache", "--json", "--tokenizer", "estimate", str(path))
    assert (code, len(json.loads(out)["timeline"]), err) == (0, 2, [])


@pytest.mark.parametrize(("field", "value", "name"), [
    ("tools", "-1", "tools"),  # a string has a length: DSH keeps it (a number it drops, as no tools)
    ("tools", [{"name": [True], "description": "", "parameters": {}}], "tools"),
    ("system", 5, "system"),
])
def test_header_change_with_wrong_typed_fields(tmp_path, monkeypatch, capsys, field, value, name):
    b = two_turns()

    def edit(records):
        headers(records)[1][field] = value

    path = write_log(tmp_path / "session.jsonl", b, edit)
    code, out, err = invoke(monkeypatch, capsys, "breaks", "--json", str(path))
    assert (code, err) == (0, [])  # an explained break: exit 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r["request"], r["cause"]) for r in rows] == [(1, "header_change")]
    assert name in [f["field"] for f in rows[0]["fields"]]


@pytest.mark.parametrize(("first", "second"), [(3, ["x"]), (3, 4), ("ab", ["a", "b"])])
def test_header_change_with_a_non_list_stop(tmp_path, monkeypatch, capsys, first, second):
    b = two_turns()

    def edit(records):
        headers(records)[0]["config"]["stop"] = first
        headers(records)[1]["config"]["stop"] = second

    path = write_log(tmp_path / "session.jsonl", b, edit)
    code, out, err = invoke(monkeypatch, capsys, "explain", "--json", str(path), "1")
    assert (code, err) == (0, [])
    assert "stop" in json.dumps(json.loads(out)["fields"])
    # the header fold compares stops too (DSH's callConfigEquals would throw on these: no crash here)
    code, out, err = invoke(monkeypatch, capsys, "validate", str(path))
    assert (code, out, err) == (0, "", ["0 error(s), 0 warning(s), 0 info in 1 file(s)"])


# -- HAR captures with wrong-typed fields -------------------------------------------------------


@pytest.mark.parametrize(("request_", "message"), [
    ({"postData": {"text": 5, "encoding": "base64"}}, "entries[0]: postData.text is a JSON number, not text"),
    ({"url": "http://[::1/chat", "postData": {"text": "{}"}},
     "entries[0]: request.url is not a URL (its host has a [ without a ] or a ] without a [)"),
])
def test_har_with_wrong_typed_fields(tmp_path, monkeypatch, capsys, request_, message):
    log = write_log(tmp_path / "session.jsonl", two_turns())
    har = tmp_path / "capture.har"
    har.write_text(json.dumps({"log": {"entries": [{"request": request_}]}}), encoding="utf-8")
    assert_one_error(invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(har)), str(har), message)


# -- a price table with the wrong shape ---------------------------------------------------------


@pytest.mark.parametrize(("table", "message"), [
    ({"providers": {"deepseek": {"models": {"m": {"cache_miss": "1", "cache_read": 0, "output": 1}}}}},
     "price table key providers.deepseek.models.m.cache_miss: \"1\" is not a rate (a number >= 0)"),
    ([1], "price table key (top level): must be a table/object"),
    ({"entries": 5}, "price table key providers: missing: a price table holds its rates under providers "
                     "(providers.PROVIDER.models.MODEL)"),
    ({"providers": []}, "price table key providers: must be a table/object"),
])
def test_cache_price_table_with_wrong_types(tmp_path, monkeypatch, capsys, table, message):
    log = write_log(tmp_path / "session.jsonl", two_turns())
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps(table), encoding="utf-8")
    assert_one_error(invoke(monkeypatch, capsys, "cache", "--tokenizer", "estimate", "--prices", str(prices), str(log)),
                     str(prices), message)


def test_header_with_a_non_string_type_is_refused_not_crashed(tmp_path, monkeypatch, capsys):
    path = tmp_path / "session.jsonl"
    path.write_text('{"type":{"a":1},"version":0,"id":"s","createdAt":0,"delegationDepth":0}\n')
    code, out, err = invoke(monkeypatch, capsys, "requests", str(path))  # never a traceback
    assert (code, out, len(err)) == (2, "", 1)
    assert err[0].startswith(f"error: {path}:1: corrupt session log: first line is not a session header")
