"""A huge record costs memory proportional to it, once (issue 15): a line of 32 MiB (64 MiB in a
zstd log) is held as the line and the text it parses to, not as four copies, and the prompt-cache
accounting adds one serialisation of each projection of the message, not six; a line past the
decoded-size limit is refused in one line naming the file and the line; and a huge line parses
exactly as any JSON parser reads it, whatever falls on the edges of the pieces it is decoded in."""

from __future__ import annotations

import base64
import json
import os
import selectors
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import zstandard
from _properties import FULL_RUN

from dsh_audit.cache import PromptBuilder, make_counter, rule_for
from dsh_audit.cli import cli
from dsh_audit.cli._common import run_guarded
from dsh_audit.jsjson import has_surrogate, stringify
from dsh_audit.log import parse_json
from dsh_audit.testing import LogBuilder, ToolCall
from dsh_audit.log._json_line import LongStrings
from dsh_audit.session import Session, open_session
from dsh_audit.wire import fold_text_block, load_routes, make_renderer, without_cache_markers
from dsh_audit.wire._piai_js import js_len, sanitize_surrogates

CHAT = Path(__file__).resolve().parents[1] / "sample_logs" / "chat" / "session.jsonl"
MIB = 1 << 20
# The first user message of the chat sample: its text becomes the huge string, on line 6.
GREETING = b'"text":"Hi! Who are you, in one sentence?"'
# Peak memory of one command over a log with one huge line, beyond the same command over the
# small log, in multiples of the line: the line itself and the text it parses to, with room for
# the allocator (measured: 2.1-2.2x plain at 24-32 MiB, 2.0-2.1x plain and zstd at 64 MiB; 4.0-4.75x
# before issue 15).
MAX_MULTIPLE = 2.5
# The same for `cache` and `check`, whose prompt-cache accounting holds the message's log-JSON
# segment and its DeepSeek wire fragment besides its text: three times the line (measured:
# 3.05x plain and zstd at 64 MiB, a tool result or a user message; 3.08x at 48 MiB, 3.12x at
# 32 MiB and 2.94-2.98x at 16 MiB, a tool result on the DeepSeek and the pi-ai Anthropic and
# OpenAI routes, the same to 0.01 from one run to the next; 6-7x before).
MAX_MULTIPLE_CACHE = 3.3
# A server that runs each command it reads (its arguments, split by NUL; a leading "1" runs it in
# the server itself, with its output dropped) in a child forked from itself, and writes back the
# child's exit code and peak resident set (KiB on Linux, from wait4: that child's alone).
PEAK_SERVER = '''
import os, sys
from dsh_audit.cli import main
def run(args):
    sys.argv = ["dsh-audit", *args]
    try:
        main()
    except SystemExit as stop:
        return stop.code
null = os.open(os.devnull, os.O_WRONLY)
for line in sys.stdin:
    here, *args = line.rstrip("\\n").split("\\0")
    if here == "1":
        saved = os.dup(1), os.dup(2)
        os.dup2(null, 1), os.dup2(null, 2)
        try:
            code = run(args)
            sys.stdout.flush(), sys.stderr.flush()
        finally:
            os.dup2(saved[0], 1), os.dup2(saved[1], 2)
            os.close(saved[0]), os.close(saved[1])
        print(code, 0, flush=True)
        continue
    pid = os.fork()
    if pid == 0:
        code = 3
        try:
            os.dup2(null, 1), os.dup2(null, 2)
            code = run(args)
        finally:
            os._exit(code if isinstance(code, int) else 3)
    _, status, usage = os.wait4(pid, 0)
    print(os.waitstatus_to_exitcode(status), usage.ru_maxrss, flush=True)
'''


def chat_log(path: Path, text: bytes) -> Path:
    """The chat sample with ``text`` as its first user message; zstd when ``path`` says so."""
    lines = CHAT.read_bytes().split(b"\n")
    number = next(i for i, line in enumerate(lines) if b'"type":"user/message"' in line and GREETING in line)
    assert number == 5
    lines[number] = lines[number].replace(GREETING, b'"text":"' + text + b'"', 1)
    data = b"\n".join(lines)
    if path.name.endswith(".zstd"):
        compressor = zstandard.ZstdCompressor(level=1, write_checksum=True)
        header, rest = data.split(b"\n", 1)
        data = compressor.compress(header + b"\n") + compressor.compress(rest)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


@pytest.fixture(scope="module")
def grown_kib() -> Iterator[Callable[[list[str], list[str]], int]]:
    """``grown_kib(small, huge)``: the peak resident set of ``dsh-audit HUGE`` beyond that of
    ``dsh-audit SMALL``, each run as a process of its own that exits 0.

    Both are children forked from one server, which first runs the small command itself: they
    start from the same state, the package and what the command loads already there, as two
    fresh processes start from the same empty one (measured: the multiples below equal those of
    fresh processes to 0.04), and a run costs 0.03 s of CPU instead of 0.25-0.45 s of start-up.
    """
    with subprocess.Popen([sys.executable, "-c", PEAK_SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          text=True) as server, selectors.DefaultSelector() as reader:
        assert server.stdin is not None and server.stdout is not None
        reader.register(server.stdout, selectors.EVENT_READ)

        def ask(here: str, args: list[str]) -> int:
            server.stdin.write("\0".join([here, *args]) + "\n")
            server.stdin.flush()
            assert reader.select(timeout=120), ("no answer in 120 s", args)
            code, peak = server.stdout.readline().split()
            assert code == "0", (code, args)
            return int(peak)

        def grown(small: list[str], huge: list[str]) -> int:
            ask("1", small)
            return ask("0", huge) - ask("0", small)

        yield grown  # then the server ends at the end of its input


#: The huge line's text: a multiple above holds from 24 MiB up (the allocator's share is a few MiB),
#: and each MiB costs every run of a command over it. A zstd log's text is twice as long: its
#: decoder holds some 30 MiB of its own, 3.2x a 32 MiB line, 2.0-2.1x a 64 MiB one.
HUGE = 32 * MIB
HUGE_ZSTD = 64 * MIB
#: The huge tool result of the `cache` and `check` runs: their multiple is no larger at 16 MiB than
#: at 32 MiB (MAX_MULTIPLE_CACHE's measurements), and each MiB costs every run of them.
HUGE_CACHE = 16 * MIB


@pytest.fixture(scope="module")
def huge_text() -> bytes:
    """HUGE_ZSTD bytes of base64 text (compresses 1.3x: no decompression bomb), made once for the
    module; its first HUGE bytes are the huge text of an uncompressed log."""
    return base64.b64encode(os.urandom(HUGE_ZSTD * 3 // 4))


@pytest.mark.slow  # two runs of a command over 32 MiB, two over 64 MiB compressed: 0.5-1.5 s of CPU each
@pytest.mark.parametrize("name", ["session.jsonl", "session.jsonl.zstd"])
def test_a_huge_line_costs_the_line_and_its_text_once(tmp_path: Path, name: str, huge_text: bytes,
                                                      grown_kib: Callable[[list[str], list[str]], int]) -> None:
    text = huge_text if name.endswith(".zstd") else huge_text[:HUGE]
    size = len(text)
    small = chat_log(tmp_path / "small" / name, b"Hi")
    huge = chat_log(tmp_path / "huge" / name, text)
    del text
    for command in ("requests", "validate"):
        grown = grown_kib([command, str(small)], [command, str(huge)])
        assert grown * 1024 <= MAX_MULTIPLE * size, (command, grown * 1024 / size)


def tool_log(path: Path, result: str) -> Path:
    """A DeepSeek session whose one tool result is ``result``, answered and followed by a turn."""
    b = LogBuilder(session_id="session-huge-tool")
    with b.turn("read the file"):
        with b.step():
            reply = b.assistant(tool_calls=[ToolCall("read", {"path": "big.txt"})])
            b.tool_result(reply.call_ids[0], result)
        with b.step():
            b.assistant("done")
    with b.turn("thanks"):
        with b.step():
            b.assistant("welcome")
    path.parent.mkdir(parents=True, exist_ok=True)
    return b.write_zstd(path) if path.name.endswith(".zstd") else b.write_jsonl(path)


@pytest.mark.slow  # two runs of a command over 16 MiB: 0.3-0.6 s of CPU each
@pytest.mark.parametrize("name", ["session.jsonl"])  # zstd decoding's cost is the test above's
def test_a_huge_tool_result_costs_cache_and_check_three_times_the_line(
        tmp_path: Path, name: str, huge_text: bytes, grown_kib: Callable[[list[str], list[str]], int]) -> None:
    size = HUGE_CACHE
    text = huge_text[:size].decode()
    small = tool_log(tmp_path / "small" / name, "small")
    huge = tool_log(tmp_path / "huge" / name, text)
    del text
    for command in ("cache", "check"):
        grown = grown_kib([command, str(small)], [command, str(huge)])
        assert grown * 1024 <= MAX_MULTIPLE_CACHE * size, (command, grown * 1024 / size)


def test_the_token_estimate_of_a_text_and_of_its_head_reads_it_in_place() -> None:
    count = make_counter("deepseek-v4", method="estimate")
    # Non-ASCII across the 1 Mi-character pieces the estimate measures, and plain ASCII.
    text = "é" * (MIB - 1) + "€😀" + "a" * 5
    assert len(text) == MIB + 6
    assert count(text) == (2 * (MIB - 1) + 3 + 4 + 5 + 3) // 4 == 524_291
    assert [count.head(text, n) for n in (0, 3, MIB - 1, MIB, MIB + 1, MIB + 3, MIB + 6, MIB + 99)] == \
        [0, 2, 524_288, 524_289, 524_290, 524_290, 524_291, 524_291]
    assert [count.head(text, n) for n in (3, MIB + 1)] == [count(text[:3]), count(text[:MIB + 1])]
    assert count.head("a" * 1000, 999) == 250


def test_a_huge_value_is_written_exactly_as_json_stringify_writes_it() -> None:
    # Past 16 MiB a value is written by the exact writer, each string once: the same text.
    plain = "a" * (17 * MIB)
    assert stringify({"t": plain, "n": [1.0, 2.5]}) == '{"t":"' + plain + '","n":[1,2.5]}'
    odd = {"t": plain + '"\\\n\x01é😀\u2028' + "b" * MIB, "n": 3}  # escapes and raw non-ASCII
    assert stringify(odd) == orjson.dumps(odd).decode()
    assert stringify([plain + "\ud800", "\ud83d\ude00"]) == '["' + plain + '\\ud800","😀"]'


def test_a_huge_line_past_the_decoded_size_limit_is_refused_in_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # In process (the limit is read when a log is opened): the exit code and every line written.
    log = chat_log(tmp_path / "session.jsonl", b"x" * (20 * MIB))
    monkeypatch.setenv("DSH_AUDIT_MAX_DECODED", "16M")
    monkeypatch.setattr(sys, "argv", ["dsh-audit", "requests", str(log)])
    assert run_guarded(cli) == 2
    assert capsys.readouterr() == ("", (
        f"error: {log}:6: refused: the decoded log passes the limit of 16 MiB of text (DSH_AUDIT_MAX_DECODED) "
        "(hint: if this is a real log, raise the limit: DSH_AUDIT_MAX_DECODED=32M (0: no limit); see "
        "docs/hostile-inputs.md)\n"))


# Tokens of a JSON string body, each placed across the edge of the first 1 MiB piece of a body at
# every offset: escapes, an escaped surrogate pair, a lone surrogate, runs of backslashes, and
# UTF-8 characters of two, three and four bytes.
EDGE_TOKENS = [b"\\n", b'\\"', b"\\\\", b"\\\\\\\\\\\\", b"\\u00e9", b"\\ud83d\\ude00", b"\\ud800x",
               "é€😀".encode(), b"\\/"]


def test_huge_lines_parse_as_json_reads_them_across_every_piece_edge() -> None:
    bodies = [b"a" * (MIB - shift) + token + b"b" * 100
              for token in EDGE_TOKENS for shift in range(len(token) + 1)]
    bodies.append(b"c" * (2 * MIB))  # no escapes: decoded straight from the line
    raw = b'{"type":"t","items":[' + b",".join(b'{"s":"' + body + b'"}' for body in bodies) + b'],"n":1}'
    assert len(raw) > 16 * MIB
    expected = json.loads(raw)
    strings = LongStrings()
    first = parse_json(raw, strings)
    assert first == expected
    second = parse_json(raw, strings)
    assert second == expected
    # The long strings are decoded once and shared by both parses of the line.
    assert all(a["s"] is b["s"] for a, b in zip(first["items"], second["items"]))
    assert first["items"] is not second["items"]


def test_huge_lines_refuse_what_json_refuses_with_the_same_error() -> None:
    prefix = b'{"type":"t","s":"' + b"a" * (17 * MIB)
    with pytest.raises(ValueError) as control:
        parse_json(prefix + b'\x01"}')  # a raw control character in a string
    assert type(control.value) is json.JSONDecodeError
    bad_utf8 = prefix + b'\xff"}'
    with pytest.raises(UnicodeDecodeError) as undecodable:
        parse_json(bad_utf8)
    assert undecodable.value.start == len(prefix)
    with pytest.raises(ValueError):
        parse_json(prefix + b'"')  # the object is never closed


def test_a_huge_key_and_a_huge_line_of_short_strings_still_parse() -> None:
    key = "k" * (2 * MIB)
    raw = json.dumps({key: 1, "v": "x" * (17 * MIB)}).encode()
    assert parse_json(raw) == {key: 1, "v": "x" * (17 * MIB)}
    # strings of 40 characters: too many quotes to take the long strings out (one every 22 bytes,
    # past one in 256), in an eighth of the objects of as many 2-character ones
    many = json.dumps(["ab" * 20] * 400_000).encode()
    assert len(many) > 16 * MIB
    assert parse_json(many) == ["ab" * 20] * 400_000


# --- pi-ai routes (Anthropic Messages, OpenAI chat completions) ---------------------------------

GATEWAY = ("providers:\n  local-openai:\n    api: openai-completions\n    baseURL: http://gateway/v1\n"
           "    models:\n      - id: local-coder\n        contextWindow: 131072\n        maxTokens: 8192\n")
PI_ROUTES = {"anthropic": ("anthropic", "claude-sonnet-4-5", "anthropic-messages"),
             "openai": ("local-openai", "local-coder", "openai-completions")}


def pi_tool_log(path: Path, result: str, route: str) -> Path:
    """:func:`tool_log` on a pi-ai route, every answer with pi-ai's replay envelope."""
    provider, model, api = PI_ROUTES[route]
    extra: dict[str, Any] = {} if route == "anthropic" else {"reasoning_effort": None, "context_window": 131072}
    b = LogBuilder(session_id="session-huge-pi", provider=provider, model=model, **extra)

    def envelope(seq: int | None, block: str) -> None:
        assert seq is not None
        b.event(seq)["data"]["message"]["source"]["replayState"] = {
            "response": {"kind": "pi-ai", "version": 2, "api": api, "provider": provider, "model": model,
                         "responseId": f"r-{seq}", "stopReason": "toolUse" if block == "tool-call" else "stop"},
            "blocks": [{"type": block}]}

    with b.turn("read the file"):
        with b.step():
            reply = b.assistant(tool_calls=[ToolCall("read", {"path": "big.txt"})])
            envelope(reply.seq, "tool-call")
            b.tool_result(reply.call_ids[0], result)
        with b.step():
            envelope(b.assistant("done").seq, "text")
    with b.turn("thanks"):
        with b.step():
            envelope(b.assistant("welcome").seq, "text")
    path.parent.mkdir(parents=True, exist_ok=True)
    (path.parent / "routes.yml").write_text(GATEWAY)
    return b.write_jsonl(path)


@pytest.mark.slow  # two runs of a command over 16 MiB per route: 0.3-0.6 s of CPU each
@pytest.mark.parametrize("route", ["anthropic", pytest.param("openai", marks=pytest.mark.skipif(
    not FULL_RUN, reason="DSH_AUDIT_SLOW=1 runs it too: the anthropic route's run measures the same accounting"))])
def test_a_huge_tool_result_on_a_pi_ai_route_costs_cache_and_check_three_times_the_line(
        tmp_path: Path, route: str, huge_text: bytes, grown_kib: Callable[[list[str], list[str]], int]) -> None:
    # The body is kept as its JSON value (the log's own texts), not written and parsed back:
    # the text, its log-JSON segment and its wire segment (measured: 3.05-3.08x at 64 MiB, 3.12-3.13x
    # at 32 MiB, 2.96-2.98x at 16 MiB; 7.3x before).
    size = HUGE_CACHE
    text = huge_text[:size].decode()
    small = pi_tool_log(tmp_path / "small" / "session.jsonl", "small", route)
    huge = pi_tool_log(tmp_path / "huge" / "session.jsonl", text, route)
    del text
    for command in ("cache", "check"):
        grown = grown_kib([command, str(small), "--routes", str(small.parent / "routes.yml")],
                          [command, str(huge), "--routes", str(huge.parent / "routes.yml")])
        assert grown * 1024 <= MAX_MULTIPLE_CACHE * size, (command, route, grown * 1024 / size)


def pi_session(tmp_path: Path, result: str, route: str) -> Session:
    session = open_session(pi_tool_log(tmp_path / route / "session.jsonl", result, route))
    session.use_routes(load_routes(tmp_path / route / "routes.yml"))
    return session


@pytest.mark.parametrize("route", ["anthropic", "openai"])
def test_a_huge_tool_result_on_a_pi_ai_route_is_one_segment_shared_by_every_request(
        tmp_path: Path, route: str) -> None:
    text = ("é😀 \"line\"\t\n" + "x" * 80) * (2 * MIB // 80)  # escapes, astral: the exact writer's path
    session = pi_session(tmp_path, text, route)
    rule = rule_for(*PI_ROUTES[route][:2], adapter=route)
    builder = PromptBuilder(rule, value=lambda r: session.bodies.value(r, route),
                            render=lambda r: session.bodies.body(r, route))
    prompts = [builder.build(r) for r in session.requests]
    assert [p.source for p in prompts] == [f"wire:{route}"] * 3
    # The segment of the tool result is made once and shared, as the same string, by both later
    # requests; it is the message exactly as the rendered body writes it.
    huge = [[s for s in p.segments[:p.size] if len(s) > MIB] for p in prompts]
    assert [len(h) for h in huge] == [0, 1, 1]
    assert huge[1][0] is huge[2][0]
    body = orjson.loads(session.bodies.render(session.requests[2], route))
    message = next(m for m in body["messages"] if m["role"] == "tool" or (
        isinstance(m["content"], list) and m["content"][0]["type"] == "tool_result"))
    if route == "anthropic":
        message = fold_text_block(without_cache_markers(message))
    assert huge[1][0] == stringify(message)
    # The same prompts as from the rendered bytes, parsed back (the route before the body value).
    parsed = PromptBuilder(rule, render=lambda r: session.bodies.body(r, route))
    assert [parsed.build(r).segments[:p.size] for r, p in zip(session.requests, prompts)] == \
        [p.segments[:p.size] for p in prompts]


@pytest.mark.parametrize("route", ["anthropic", "openai"])
def test_a_huge_tool_result_on_a_pi_ai_route_renders_at_c_speed(tmp_path: Path, route: str) -> None:
    # No routine reads the text a character at a time (pi-ai's surrogate sanitiser and UTF-16 length
    # did, 2 s per call at 64 MiB): the Python the render runs (calls and lines, traced) grows by a
    # few steps a mebibyte piece, not by the character, for a text twice as long (a megabyte more).
    # Counted, not timed: seconds live in benchmarks/.
    unit = "é😀 \"line\"\t\n" + "x" * 80

    def traced(size: int) -> tuple[int, str]:
        text = unit * (size // len(unit))
        session = pi_session(tmp_path / str(size), text, route)
        renderer = make_renderer(route, models=load_routes(tmp_path / str(size) / route / "routes.yml").models)
        events = [0]

        def trace(frame: object, event: str, arg: object) -> Callable[..., object]:
            events[0] += 1
            return trace

        sys.settrace(trace)
        try:
            body = renderer.render(session.requests[2])
        finally:
            sys.settrace(None)
        return events[0], str(len(body.body))

    traced(MIB // 2)  # what is done once (imports, memos) is done before the count
    (small, small_size), (large, large_size) = traced(MIB), traced(2 * MIB)
    assert small_size != large_size  # the text is in the body
    assert 0 <= large - small < 100, (small, large)
    text = unit * (8 * MIB // len(unit))
    assert sanitize_surrogates(text) is text  # no copy of a text without surrogates
    assert sanitize_surrogates("a" * MIB + "\ud800é\udc00b\ud83d\ude00") == "a" * MIB + "éb\ud83d\ude00"


def test_a_surrogate_is_found_in_any_piece_of_a_huge_text() -> None:
    base = "é" * (3 * MIB)
    assert not has_surrogate(base) and not has_surrogate("a" * MIB + "😀")
    for at in (0, MIB - 1, MIB, 2 * MIB + 5, 3 * MIB - 1):
        for half in ("\ud800", "\udfff"):
            assert has_surrogate(base[:at] + half + base[at + 1:]), (at, half)
    assert js_len(base + "😀") == 3 * MIB + 2
