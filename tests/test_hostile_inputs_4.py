"""Hostile input, round 4: values of the wrong JSON type in every field of every event type, found
by fuzzing every command with corpus logs edited one field at a time (issue 15).

The round ran about 15,700 cases (one command on one input; 12,330 of them generated, the rest
by hand) in these families: every field of the first event of each type in nine corpus logs
(DeepSeek, pi-ai Anthropic and pi-ai OpenAI routes) set to null, a number, a float, a bool, a
list, an object, an integer past 2**64, an empty or a 200 KB string, a lone surrogate, or
removed; wire.jsonl captures with wrong-typed fields, headers that are lists, bodies that are not
JSON, corrupt base64, gzip and zstd bodies; price tables, route files and ``[tool.dsh-audit]``
tables edited the same way; duplicated keys and nesting just under and over the 512-level limit;
packed chunk rows with mismatched ``dt``/``args``/``texts`` lengths; header config with
``maxTokens`` 0, negative, huge or a float; usage records and timestamps of every type; whole
lines that are another JSON type, CRLF, a BOM, a 1 MB session id; and extreme CLI option values.
89 cases failed, from 12 defects, each fixed with a test below: the first 8 in the fuzzing
session, the last 4 after it (``redact`` on nesting of 490-511 levels: RecursionError; a 1 MB
session id: table folding quadratic in its length; ``render --compaction-instruction
/dev/zero``: an unbounded read; ``explain`` after a header whose tool name is a number:
TypeError). A further 32 failures were other work being edited in the same tree while the round
ran.

Each test edits one field of a corpus log (or a built one) and asserts the exact exit code and
error line.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from _cli import chat_log, invoke

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
B_TOOLS = CORPUS / "live" / "b-tools"
C1 = CORPUS / "live-pi" / "c1-anthropic-tools"
C3 = CORPUS / "live-pi" / "c3-openai-compat"
DAMAGED = "(hint: the log was edited or damaged; `dsh-audit validate` lists what else is wrong in it)"
THROW = "DSH's pi-ai adapter would throw on it"

pytestmark = pytest.mark.skipif(not C3.is_dir(), reason="needs the shared corpus")


def edited(scenario: Path, folder: Path, line: int, path: str, value: Any, *, also: dict[str, Any] | None = None
           ) -> Path:
    """The scenario's session log with one field of line ``line`` (1-based) set to ``value``
    (``path`` is ``/``-separated keys and list indexes; ``also``: more fields of that line),
    written to ``folder/session.jsonl``."""
    lines = next((scenario / "session-logs").glob("*.jsonl")).read_text(encoding="utf-8").splitlines()
    event = json.loads(lines[line - 1])
    for where, new in {path: value, **(also or {})}.items():
        keys: list[Any] = [int(k) if k.isdigit() else k for k in where.split("/")]
        target = event
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = new
    lines[line - 1] = json.dumps(event, separators=(",", ":"))
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "session.jsonl"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return log


def routes(scenario: Path) -> str:
    return str(scenario / "inputs" / "pi-ai-routes.patch.yml")


def render(monkeypatch, capsys, log: Path, index: str, scenario: Path) -> tuple[int, str, list[str]]:
    return invoke(monkeypatch, capsys, "render", str(log), index, "--routes", routes(scenario))


# -- pi-ai routes: text blocks and content elements of the wrong type -----------------------------

# c3 line 27 is the first assistant message (seq 28): reasoning, text, tool call; request 2 replays it.
@pytest.mark.parametrize("value", [[], 5, None, {"a": 1}])
def test_a_text_that_is_not_a_string_is_no_text_as_on_the_deepseek_route(tmp_path, monkeypatch, capsys, value):
    """Before: AttributeError/TypeError ('list' object has no attribute 'isascii') in every
    command on the pi-ai routes (exit 3 in render and diff). The DeepSeek route already counts
    such a text as no text; the pi-ai routes now do the same."""
    bad = edited(C3, tmp_path / "bad", 27, "data/message/content/1/text", value)
    empty = edited(C3, tmp_path / "empty", 27, "data/message/content/1/text", "")
    assert render(monkeypatch, capsys, bad, "2", C3) == render(monkeypatch, capsys, empty, "2", C3)
    outputs = []
    for log in (bad, empty):
        code, out, err = invoke(monkeypatch, capsys, "cache", str(log), "--routes", routes(C3), "--format", "json")
        assert (code, err) == (0, [])
        outputs.append(out.replace(str(log), "LOG"))
    assert outputs[0] == outputs[1]


@pytest.mark.parametrize("value", [5, None, "text", [1]])
def test_a_content_element_that_is_not_an_object_is_no_block(tmp_path, monkeypatch, capsys, value):
    """Before: AttributeError ('int' object has no attribute 'get'). Now the element is skipped,
    as the DeepSeek route skips it: the body is the one without it."""
    bad = edited(C3, tmp_path / "bad", 27, "data/message/content/0", value)
    lines = bad.read_text(encoding="utf-8").splitlines()
    event = json.loads(lines[26])
    del event["data"]["message"]["content"][0]
    lines[26] = json.dumps(event)
    (tmp_path / "without").mkdir()
    without = tmp_path / "without" / "session.jsonl"
    without.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert render(monkeypatch, capsys, bad, "2", C3) == render(monkeypatch, capsys, without, "2", C3)


def test_a_user_message_text_that_is_a_list_renders_on_the_pi_ai_route(tmp_path, monkeypatch, capsys):
    """Before: TypeError (sequence item 0: expected str instance, list found) in render and check."""
    log = edited(C3, tmp_path, 9, "data/content/0/text", [1, [2, None], {"a": 1}])
    code, out, err = render(monkeypatch, capsys, log, "1", C3)
    assert (code, err) == (0, [])
    assert json.loads(out)["messages"][1] == {"role": "user", "content": ""}
    code, out, err = invoke(monkeypatch, capsys, "check", str(log), "--routes", routes(C3))
    assert (code, err) == (0, [])


# -- pi-ai routes: ids, names and prompts pi-ai reads as strings ----------------------------------

@pytest.mark.parametrize(("line", "path", "value", "index", "seq", "what", "shown"), [
    (27, "data/message/content/2/id", [1], "2", 28, "a tool call's id", "a JSON array"),
    (27, "data/message/content/2/name", None, "2", 28, "a tool call's name", "a JSON null"),
    (27, "data/message/content/2/name", 5, "2", 28, "a tool call's name", "a JSON number"),
])
def test_a_tool_call_id_or_name_that_is_not_a_string_is_one_error_line(
        tmp_path, monkeypatch, capsys, line, path, value, index, seq, what, shown):
    """Before: TypeError (unhashable type: 'list') or AttributeError (no attribute 'isascii').
    pi-ai normalises ids and measures names as strings: DSH could not have sent the request."""
    log = edited(C3, tmp_path, line, path, value)
    assert render(monkeypatch, capsys, log, index, C3) == (
        2, "", [f"error: {log}:{line} seq {seq}: {what} is {shown}, not a string; {THROW} {DAMAGED}"])
    code, _, err = invoke(monkeypatch, capsys, "check", str(log), "--routes", routes(C3))
    assert code in (0, 1)
    assert not [line for line in err if "unexpected" in line]


def test_a_tool_result_whose_call_id_is_a_list_in_a_title_call_is_one_error_line(tmp_path, monkeypatch, capsys):
    """The reader checks surface tool results (their callId is a string); a title call's messages
    are copied as logged. Before: TypeError (unhashable type: 'list')."""
    result = {"type": "tool-result", "toolCallId": [1], "content": [{"type": "text", "text": "x"}]}
    log = edited(C3, tmp_path, 14, "data/messages/0/content", [result])
    assert render(monkeypatch, capsys, log, "0", C3) == (
        2, "", [f"error: {log}:14 seq 12: a tool result's toolCallId is a JSON array, not a string; {THROW} {DAMAGED}"])


# c1 line 14 is the title call (seq 12, request 0); line 12 the first request/header (seq 10).
@pytest.mark.parametrize(("value", "shown"), [(1e308, "number"), ([1, "a", None], "array"), ({"a": 1}, "object"),
                                              (True, "boolean")])
def test_a_system_prompt_that_is_not_a_string_is_one_error_line(tmp_path, monkeypatch, capsys, value, shown):
    """Before: AttributeError ('float' object has no attribute 'isascii'), exit 3 in redact."""
    log = edited(C1, tmp_path, 14, "data/system", value)
    assert render(monkeypatch, capsys, log, "0", C1) == (
        2, "", [f"error: {log}:14 seq 12: the system prompt is a JSON {shown}, not a string; {THROW} {DAMAGED}"])
    code, _, err = invoke(monkeypatch, capsys, "usage", "--by", "request", str(log), "--routes", routes(C1))
    assert (code, [line for line in err if "unexpected" in line]) == (0, [])


def test_a_falsy_system_prompt_is_left_out_as_pi_ai_does(tmp_path, monkeypatch, capsys):
    zero = edited(C1, tmp_path / "zero", 14, "data/system", 0)
    code, out, err = render(monkeypatch, capsys, zero, "0", C1)
    assert (code, err) == (0, [])
    assert "system" not in json.loads(out)


@pytest.mark.parametrize(("path", "value", "message"), [
    ("data/header/tools/0/name", [1, "a", None], f"a tool's name is a JSON array, not a string; {THROW}"),
    ("data/header/tools/0/name", None, f"a tool's name is a JSON null, not a string; {THROW}"),
    ("data/header/tools/0", 5, f"a tool of the header is a JSON number, not an object; {THROW}"),
    ("data/header/tools", "{{tools}}", "the header's tools is a JSON string, not a list; DSH's adapter fails on it "
     "(TypeError: options.tools?.map is not a function)"),
])
def test_a_header_tool_of_the_wrong_type_is_one_error_line(tmp_path, monkeypatch, capsys, path, value, message):
    """Before: TypeError (unhashable type: 'list') in the Anthropic renderer, exit 3 in redact."""
    log = edited(C1, tmp_path, 12, path, value)
    assert render(monkeypatch, capsys, log, "1", C1) == (2, "", [f"error: {log}:12 seq 10: {message} {DAMAGED}"])
    code, _, err = invoke(monkeypatch, capsys, "cache", str(log), "--routes", routes(C1))
    assert (code, [line for line in err if "unexpected" in line]) == (0, [])


@pytest.mark.parametrize("value", [[1], "x", 5])
def test_tool_parameters_that_are_not_an_object_give_an_empty_schema(tmp_path, monkeypatch, capsys, value):
    """Before: AttributeError ('list' object has no attribute 'get'). JavaScript reads no
    ``properties`` or ``required`` of another value: the schema is the empty one."""
    log = edited(C1, tmp_path, 12, "data/header/tools/0/parameters", value)
    code, out, err = render(monkeypatch, capsys, log, "1", C1)
    assert (code, err) == (0, [])
    assert json.loads(out)["tools"][0]["input_schema"] == {"type": "object", "properties": {}, "required": []}


# -- index: usage records that are not objects ----------------------------------------------------

def test_index_stores_no_token_counts_for_a_usage_record_that_is_not_an_object(tmp_path, monkeypatch, capsys):
    """Before: AttributeError ('list' object has no attribute 'get') in fleet/_audit.py."""
    log = edited(B_TOOLS, tmp_path / "s", 26, "data/chunk/usage", [1])
    lines = log.read_text(encoding="utf-8").splitlines()
    event = json.loads(lines[27])
    event["data"]["usage"] = [1]
    lines[27] = json.dumps(event)
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    db = tmp_path / "i.sqlite"
    code, out, err = invoke(monkeypatch, capsys, "index", "--db", str(db), str(log))
    assert (code, err) == (0, [])
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT idx, input_tokens, cache_read_tokens, output_tokens FROM requests "
                           "WHERE idx <= 2 ORDER BY idx").fetchall()
    assert rows == [(0, None, None, None), (1, None, None, None), (2, 176, 7936, 22)]


def test_index_stores_no_token_count_that_is_a_boolean(tmp_path, monkeypatch, capsys):
    log = edited(B_TOOLS, tmp_path / "s", 26, "data/chunk/usage/inputTokens", True)
    db = tmp_path / "i.sqlite"
    code, _, err = invoke(monkeypatch, capsys, "index", "--db", str(db), str(log))
    assert (code, err) == (0, [])
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT input_tokens, output_tokens FROM requests WHERE idx = 1").fetchone() == (None, 23)


# -- pi-ai routes: an output cap that is not a number ---------------------------------------------

@pytest.mark.parametrize(("line", "path", "index", "seq"), [(14, "data/maxTokens", "0", 12),
                                                            (12, "data/header/config/maxTokens", "1", 10)])
@pytest.mark.parametrize(("value", "shown"), [("\ud800", "string"), ([1], "array"), (True, "boolean")])
def test_a_max_tokens_that_is_not_a_number_is_one_error_line(tmp_path, monkeypatch, capsys, line, path, index, seq,
                                                             value, shown):
    """Before: TypeError ('<' not supported between instances of 'int' and 'str') in the clamp."""
    log = edited(C3, tmp_path, line, path, value)
    assert render(monkeypatch, capsys, log, index, C3) == (
        2, "", [f"error: {log}:{line} seq {seq}: the call's maxTokens is a JSON {shown}, not a number; dsh-audit "
                f"cannot work out the output cap pi-ai sends from it {DAMAGED}"])
    code, _, err = invoke(monkeypatch, capsys, "cache", str(log), "--routes", routes(C3))
    assert (code, [line for line in err if "unexpected" in line]) == (0, [])


# -- seq and time written as integral floats ------------------------------------------------------

@pytest.mark.parametrize("edit", [
    lambda text: text.replace('"seq":0,', '"seq":-0.0,', 1),
    lambda text: re.sub(r'"seq":(\d+),', r'"seq":\1.0,', text),
    lambda text: re.sub(r'"time":(\d+),', r'"time":\1e0,', text),
], ids=["minus-zero", "every-seq", "every-time"])
@pytest.mark.parametrize("command", [["requests"], ["cache"], ["usage", "--by", "turn"]])
def test_a_seq_or_time_written_as_an_integral_float_is_the_integer(tmp_path, monkeypatch, capsys, edit, command):
    """JavaScript has one number type: DSH reads ``-0.0`` and ``1.0`` as ``0`` and ``1``. Before, a
    first seq of ``-0.0`` gave TypeError ('float' object cannot be interpreted as an integer)."""
    plain = chat_log(tmp_path / "plain" / "session.jsonl", "session-floats")
    floats = tmp_path / "floats" / "session.jsonl"
    floats.parent.mkdir()
    floats.write_text(edit(plain.read_text(encoding="utf-8")), encoding="utf-8")
    assert floats.read_text(encoding="utf-8") != plain.read_text(encoding="utf-8")
    shown = []
    for log in (plain, floats):
        code, out, err = invoke(monkeypatch, capsys, *command, str(log), "--format", "json")
        assert (code, err) == (0, [])
        shown.append(out.replace(str(log), "LOG"))
    assert shown[0] == shown[1]


# -- the four defects fixed after the round -----------------------------------------------------

def _deep(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


def test_redact_reads_a_record_nested_as_deep_as_the_reader_accepts(tmp_path, monkeypatch, capsys):
    """Nesting just under the reader's 512 levels was a RecursionError in redact (two frames a
    level: each comprehension is a frame)."""
    from dsh_audit.log._json_line import MAX_DEPTH

    log = edited(B_TOOLS, tmp_path / "in", 9, "data/x", _deep(MAX_DEPTH - 4))
    out = tmp_path / "out.jsonl"
    code, shown, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(out))
    assert (code, err) == (0, []) and shown.splitlines()[-3] == "verdicts of requests, breaks, cache: unchanged"
    depth, value = 0, json.loads(out.read_text(encoding="utf-8").splitlines()[8])["data"]["x"]
    while isinstance(value, list):
        depth, value = depth + 1, value[0]
    assert depth == MAX_DEPTH - 4 and value != "x"  # the text at the bottom is content: replaced


def test_a_megabyte_session_id_folds_in_linear_work(tmp_path, monkeypatch, capsys):
    """A 1 MB word in a table title folded by re-measuring and copying its rest at every line
    (17 s); it now folds one line's worth at a time. Measured in characters the folding hands to
    the cell-width function (no clock): a few times the text, not its whole rest once per line
    (~6.4 billion characters before). The exact lines are asserted."""
    import rich.cells

    from dsh_audit.report.terminal import fit_lines

    measured = [0]
    real = rich.cells.cell_len

    def counting(text: str, *args: Any, **kwargs: Any) -> int:
        measured[0] += len(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(rich.cells, "cell_len", counting)
    word = "session-" + "a" * 1_000_000
    lines = fit_lines(f"{word} tail", 80)
    assert measured[0] < 12 * len(word), measured[0]  # 9.9 x measured: a binary search per line of 80
    assert lines[0] == "session-"  # folded after its hyphen, then 78 characters a line after the indent
    assert all(line == "  " + "a" * 78 for line in lines[1:-1]) and len(lines) == 2 + 1_000_000 // 78
    assert lines[-1] == "  " + "a" * (1_000_000 % 78) + " tail"


def test_a_compaction_instruction_that_is_a_device_or_too_large_is_refused(tmp_path, monkeypatch, capsys):
    """``/dev/zero`` was read without end; a FIFO would wait for a writer."""
    log = chat_log(tmp_path / "session.jsonl", "session-instruction")
    hint = "(hint: give --compaction-instruction the text file of DSH's compaction instruction)"
    assert invoke(monkeypatch, capsys, "render", str(log), "0", "--compaction-instruction", "/dev/zero") == (
        2, "", [f"error: /dev/zero: is a character device, not a compaction instruction file {hint}"])
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * ((1 << 20) + 1))
    assert invoke(monkeypatch, capsys, "render", str(log), "0", "--compaction-instruction", str(big)) == (
        2, "", [f"error: {big}: the compaction instruction file is larger than 1 MiB {hint}"])


def test_explain_shows_a_tool_named_by_a_number(tmp_path, monkeypatch, capsys):
    """A header tool whose name is a number made explain's text a TypeError."""
    log = edited(B_TOOLS, tmp_path / "in", 12, "data/header/tools/0/name", 0)
    code, out, err = invoke(monkeypatch, capsys, "explain", str(log), "2")
    assert (code, err) == (0, [])
    assert "  tools: 25 → 25 (added bash; removed 0) (prompt)" in out.splitlines()
