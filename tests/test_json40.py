"""Session 40 (issue 11, near the parse floor): ``requests --json`` writes each request's header
once for each header object the replay shares, and puts its text in every line that holds it
(:func:`dsh_audit.report._json.dumps_line_with`), the lines byte for byte what they were.
"""

from __future__ import annotations

from typing import Any

import pytest

from dsh_audit.cli import _requests
from dsh_audit.replay import Digest
from dsh_audit.replay._model import request_of
from dsh_audit.report import dumps_line
from dsh_audit.report._json import dumps_line_with

_RLO = "\u202e"


@pytest.mark.parametrize(("value", "expected"), [
    # a whole float among the line's own members: the line is copied with it an int, the header too
    ({"ttl": 300.0, "header": {"t": 5.0, "n": [1.0]}, "z": 1},
     '{"ttl":300,"header":{"t":5,"n":[1]},"z":1}'),
    # one float orjson spells otherwise: the whole line goes the exact way, each part alike
    ({"ttl": 300.0, "header": {"small": 1e-7, "big": 1e21, "neg": -0.0}},
     '{"ttl":300,"header":{"small":1e-7,"big":1e+21,"neg":0}}'),
    ({"header": {"x": 9.15e-6, "i": 2**53 + 1}, "after": [2.0, "\x7f"]},
     '{"header":{"x":0.00000915,"i":9007199254740992},"after":[2,"\\u007f"]}'),
    ({"a": "\ud800" + _RLO, "header": {"s": "\udfff\U0001d173", "q": "\"\\\n"}},
     '{"a":"\\ud800\\u202e","header":{"s":"\\udfff\\ud834\\udd73","q":"\\"\\\\\\n"}}'),
    ({"header": None}, '{"header":null}'),
    ({"p": "x", "header": [], "q": {}}, '{"p":"x","header":[],"q":{}}'),
])
def test_a_spliced_line_is_the_line_written_whole(value: dict[str, Any], expected: str) -> None:
    assert dumps_line(value) == expected
    assert dumps_line_with(value, "header", dumps_line(value["header"])) == expected


def test_a_key_with_active_characters_is_escaped_as_in_the_whole_line() -> None:
    key = "h\"" + _RLO + "\ud800"
    value = {"a": 1.0, key: {"b": 2}, "c": None}
    assert dumps_line_with(value, key, dumps_line(value[key])) == dumps_line(value) == \
        '{"a":1,"h\\"\\u202e\\ud800":{"b":2},"c":null}'


def _request(index: int, header: dict[str, Any] | None) -> Any:
    return request_of(index, dict(
        kind="loop", session_id="s", turn=1, step=index, attempt=1, step_start_seq=index, first_chunk_seq=index,
        header=header, header_seq=None if header is None else 2, header_reason=None, messages=(),
        message_seqs=(), digest=Digest(lambda: "ab"), usage={"inputTokens": 3, "ttl": 300.0}))


def test_each_header_object_is_written_once_in_a_run_of_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    first = {"config": {"model": "m", "temperature": 1.0}, "system": _RLO, "tools": []}
    equal = dict(reversed(first.items()))  # equal, but another object in another key order: written again
    headers = [first, first, equal, None, first, first]
    requests = [_request(i, header) for i, header in enumerate(headers)]
    written: list[Any] = []

    def counted(value: Any) -> str:
        written.append(value)
        return dumps_line(value)

    monkeypatch.setattr(_requests, "dumps_line", counted)
    write = _requests._json_line("a\nb.jsonl")
    lines = [write(request) for request in requests]
    assert lines == [dumps_line({"path": "a\nb.jsonl", **request.summary(),
                                 "usage_source": _requests._usage_source(request, None)}) for request in requests]
    assert [value for value in written if value is first or value is equal] == [first, equal, first]
    assert lines[0].startswith('{"path":"a\\nb.jsonl","index":0,')
    assert '"header":{"config":{"model":"m","temperature":1},"system":"\\u202e","tools":[]},' in lines[0]
    assert '"header":{"tools":[],"system":"\\u202e","config":{"model":"m","temperature":1}},' in lines[2]
    assert '"header":null,' in lines[3]
    assert '"usage":{"inputTokens":3,"ttl":300}' in lines[5]
