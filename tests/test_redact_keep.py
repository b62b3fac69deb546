"""``dsh-audit redact``: a secret used as an object key inside a kept part (``--keep``, structural
strings, capture headers, responses) is replaced the way every key is (keys kept distinct, lengths
kept, whatever the key order), and the log is rewritten in its one read, fed in any pieces."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import zstandard

from dsh_audit.errors import UnreadableError
from dsh_audit.jsjson import stringify
from dsh_audit.redact import Placeholders, Redactor, find_secrets, redact
from dsh_audit.redact._log import LogRewriter
from dsh_audit.session import open_session
from dsh_audit.testing import LogBuilder

SECRET = "sk-ant-api03-" + "Wv4" * 10
OTHER = SECRET[:-1] + "5"  # a second key, equal but for its last character
# the placeholder SECRET gets with the salt "keep", used verbatim as a key that is no secret
TAKEN = "Zn(t3Y>A3Zzt=HeFB8iOgwgtsth9JEGfFEaSERzpXq3"
SYSTEM = f'{{"{SECRET}": 1, "{TAKEN}": 2, "{OTHER}": 3}}'
SWAPPED = f'{{"{OTHER}": 3, "{TAKEN}": 2, "{SECRET}": 1}}'
# SECRET's placeholder is taken, so its last character moves on (3 -> 4); OTHER's placeholder is then
# taken too (it ends in 4), so it moves on to 5: three distinct keys of the original lengths
KEPT = ('{"Zn(t3Y>A3Zzt=HeFB8iOgwgtsth9JEGfFEaSERzpXq4": 1, "Zn(t3Y>A3Zzt=HeFB8iOgwgtsth9JEGfFEaSERzpXq3": 2, '
        '"Zn(t3Y>A3Zzt=HeFB8iOgwgtsth9JEGfFEaSERzpXq5": 3}')


def _renames(before: str, after: str) -> dict[str, tuple[str, object]]:
    """Each key of the JSON object ``before`` -> its key and value in ``after`` (same order)."""
    old, new = json.loads(before), json.loads(after)
    assert len(old) == len(new) == len(json.loads(after, object_pairs_hook=list))  # no key lost or merged
    return {k: (n, new[n]) for k, n in zip(old, new)}


def test_the_setup_holds():
    assert Placeholders(b"keep").plain(SECRET) == TAKEN and list(find_secrets(TAKEN)) == []


def test_secret_keys_in_kept_json_text_stay_distinct_and_keep_their_lengths():
    redactor = Redactor(Placeholders(b"keep"))
    assert redactor.keep_text(SYSTEM) == KEPT
    assert len(KEPT.encode()) == len(SYSTEM.encode())
    swapped = redactor.keep_text(SWAPPED)
    assert _renames(SWAPPED, swapped) == _renames(SYSTEM, KEPT)  # the same new key for each, in any order
    assert dict(redactor.secrets) == {"anthropic_api_key": 4}
    # text that is not JSON, and JSON with the secret in a value, are scrubbed in place as before
    plain = Placeholders(b"keep").plain
    assert redactor.keep_text(f"key {SECRET}.") == f"key {TAKEN}."
    assert redactor.keep_text(f'{{"k": "{SECRET}"}}') == f'{{"k": "{TAKEN}"}}'
    assert redactor.keep_text(f'{{"{SECRET}": 1') == f'{{"{plain(SECRET)}": 1'  # not JSON: no keys to keep apart
    assert redactor.keep_text('{"env": "none", "long-enough-key": 1}') == '{"env": "none", "long-enough-key": 1}'


def _log(folder: Path, system: str) -> Path:
    tool = {"name": "bash", "description": system, "parameters": {"type": "object", "properties": {}}}
    b = LogBuilder(session_id="s-keep", cwd="/home/dev/p", system=system, tools=[tool])
    with b.turn("hi"):
        with b.step():
            b.assistant("ok")
    folder.mkdir()
    return b.write_zstd(folder / "session.jsonl.zstd")


def _headers(log: Path) -> list[dict[str, object]]:
    session = open_session(log)
    return [request.header for request in session.requests]


def _records(path: Path) -> list[dict[str, object]]:
    data = zstandard.ZstdDecompressor().stream_reader(path.read_bytes(), read_across_frames=True).read()
    return [json.loads(line) for line in data.decode().splitlines()]


def _kept_texts(path: Path) -> list[str]:
    """The system prompt and the tool description of every ``request/header`` of a redacted log."""
    found = []
    for record in _records(path):
        if record["type"] == "request/header":
            header = record["data"]["header"]
            found += [header["system"], header["tools"][0]["description"]]
    return found


@pytest.mark.parametrize("system, expected", [(SYSTEM, KEPT), (SWAPPED, None)], ids=["order", "swapped"])
def test_a_kept_system_prompt_and_tool_keep_secret_keys_distinct(tmp_path, system, expected):
    log = _log(tmp_path / "in", system)
    result = redact(log, tmp_path / "out.jsonl.zstd", salt="keep", keep=("system", "tools"))
    texts = _kept_texts(result.output)
    assert len(texts) == 2 and texts[0] == texts[1]
    if expected is not None:
        assert texts[0] == expected
    else:
        assert _renames(system, texts[0]) == _renames(SYSTEM, KEPT)
    assert result.secrets == {"anthropic_api_key": {"occurrences": 4, "distinct": 2}}
    assert result.mismatched == ()


def test_captured_headers_bodies_and_responses_keep_secret_keys_distinct(tmp_path):
    log = _log(tmp_path / "in", SYSTEM)
    session = open_session(log)
    bodies = [session.bodies.render(r, session.route(r).adapter).decode() for r in session.requests]
    stray = stringify({"model": "other", "messages": [{"role": "system", "content": SYSTEM}]})  # no request of the log
    response = stringify({"id": SYSTEM, "choices": []})
    headers = {SECRET: "a", TAKEN: "b", "x-meta": SYSTEM, "content-length": "1"}
    wire = tmp_path / "wire.jsonl"
    wire.write_text("".join(stringify({"method": "POST", "path": "/chat/completions", "headers": headers,
                                       "body": body, "response": response}) + "\n" for body in [*bodies, stray]))
    result = redact(log, tmp_path / "out.jsonl.zstd", salt="keep", keep=("system",), capture=wire,
                    capture_output=tmp_path / "wire.out.jsonl")
    records = [json.loads(line) for line in result.capture.read_text().splitlines()]
    assert len(records) == len(bodies) + 1
    for record, body in zip(records, [*bodies, stray]):
        assert list(record["headers"].items()) == [
            ("Zn(t3Y>A3Zzt=HeFB8iOgwgtsth9JEGfFEaSERzpXq4", "a"), (TAKEN, "b"), ("x-meta", KEPT),
            ("content-length", str(len(record["body"].encode())))]
        assert json.loads(record["response"]) == {"id": KEPT, "choices": []}
        assert len(record["body"]) == len(body)
    assert json.loads(records[-1]["body"])["messages"][0]["content"] == KEPT
    assert [json.loads(r["body"])["messages"][0]["content"] for r in records[:-1]] == [KEPT] * len(bodies)
    assert result.mismatched == ()


# -- the log rewritten in its one read -----------------------------------------------------------


def _rewrite(data: bytes, size: int) -> tuple[bytes, list[str]]:
    out = io.BytesIO()
    rewriter = LogRewriter(out, lambda record: {"r": record}, path="log")
    for start in range(0, len(data), size):
        rewriter.feed(data[start:start + size])
    notes = rewriter.finish()
    return out.getvalue(), notes


def _frames(*texts: bytes) -> bytes:
    compressor = zstandard.ZstdCompressor(level=3, write_checksum=True)
    return b"".join(compressor.compress(text) for text in texts)


@pytest.mark.parametrize("size", [1, 3, 4096])
def test_a_zstd_log_is_rewritten_frame_for_frame_whatever_pieces_it_is_read_in(size):
    data = _frames(b'{"h": 1}\n', b'[1]\n\nnot json\n{"a": "b"}\n', b"2\n3")
    out, notes = _rewrite(data + _frames(b"4\n5\n")[:-5], size)  # a last frame cut off
    assert out == _frames(b'{"r":{"h":1}}\n', b'{"r":[1]}\n{"r":{"a":"b"}}\n', b'{"r":2}\n', b'{"r":4}\n')
    assert notes == ["frame 3: a last line without its newline (a torn tail) was left out",
                     "zstd frame 4 is cut off at end of file: its complete lines were kept",
                     "frame 4: a last line without its newline (a torn tail) was left out",
                     "2 damaged record(s) the reader skips were left out"]


@pytest.mark.parametrize("size", [1, 2, 4096])
def test_a_plain_log_is_rewritten_line_for_line_whatever_pieces_it_is_read_in(size):
    assert _rewrite(b'{"h": 1}\n"\xc3\xa9"\n[2', size) == (
        '{"r":{"h":1}}\n{"r":"\u00e9"}\n'.encode(), ["file end: a last line without its newline (a torn tail) was left out"])
    assert _rewrite(b"1\n", size) == (b'{"r":1}\n', [])
    assert _rewrite(b"", size) == (b"", [])


def test_a_corrupt_zstd_frame_is_one_error_at_the_end():
    data = bytearray(_frames(b'{"h": 1}\n', b"1\n" * 50))
    data[-8:-4] = b"\xff\xff\xff\xff"
    out = io.BytesIO()
    rewriter = LogRewriter(out, lambda record: record, path="log.jsonl.zstd")
    rewriter.feed(bytes(data))  # kept for finish: the session reader reports its own error first
    with pytest.raises(UnreadableError) as caught:
        rewriter.finish()
    assert str(caught.value).startswith("log.jsonl.zstd: zstd frame 2 is corrupt: ")
