"""Session 32 (issue 17's leftovers): one JSON scanner for the keys and the values of JSON text
(``rewrite_keys`` and the redaction of captured bodies and responses had a copy each), one
attribution per session for the ``breaks`` and ``cache`` verdicts (each attributed a child with its
parent twice), and each parent log opened once by ``redact`` and ``redact --check`` (its header was
read to find it, then the file opened again). The pinned outputs and digests were made by the code
before these changes: none of them may move."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

import dsh_audit.attribution._attribute as attribute_module
from _cli import invoke, short_salt
from dsh_audit.redact import Placeholders, session_verdicts
from dsh_audit.redact import _bodies, _placeholder, _response
from dsh_audit.redact._bodies import LogRedactor
from dsh_audit.redact._json_text import rewrite_keys, string_tokens
from dsh_audit.redact._response import redact_response_text
from dsh_audit.redact._verdicts import digest
from dsh_audit.session import open_session
from dsh_audit.testing import LogBuilder

REDACT = Path(_placeholder.__file__).parent


# -- 1. one scanner of JSON text ------------------------------------------------------------------


class _Object(list):  # type: ignore[type-arg]
    """A parsed JSON object as its members in order (duplicate keys kept)."""


def _walk(value: Any, path: tuple[Any, ...], counter: list[int], values: list[Any], keys: list[Any]) -> None:
    """What the scanner must find, from the parse: each string value with its path, and each object
    key (as read) with its object's number (objects numbered from 1 as they open, empty ones too)."""
    if isinstance(value, _Object):
        counter[0] += 1
        number = counter[0]
        for key, item in value:
            keys.append((key, number))
            _walk(item, (*path, key), counter, values, keys)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _walk(item, (*path, index), counter, values, keys)
    elif isinstance(value, str):
        values.append((value, path))


DOCUMENTS = [
    '{"a": ["x", {"b": "y"}], "c": "z"}',
    '["top", [], {}, [[["deep"]]], {"e": {}, "f": [1, "g", true, null, {"h": "i"}]}]',
    '"alone"',
    '{"dup": "1", "dup": "2", "k\\u00e9y": "v\\"al\\\\ue", "sk-ant-api03-abcdefghijklmnopqrstuv": {"x,y]": "[}"}}',
    '{ "spaced" :\n [ "a" , { "b" : "c" } ] , "n" : -1.5e3 }',
    json.dumps({f"key{n}": [f"v{n}"] for n in range(4100)}),  # more keys than the scanner remembers reading
]


@pytest.mark.parametrize("text", DOCUMENTS, ids=range(len(DOCUMENTS)))
def test_the_scanner_finds_every_value_and_key_the_parse_holds(text: str) -> None:
    values: list[Any] = []
    keys: list[Any] = []
    _walk(json.loads(text, object_pairs_hook=_Object), (), [0], values, keys)
    found = list(string_tokens(text))
    assert [(json.loads(token), path) for _, _, token, path in found] == values
    assert all(text[start:end] == token for start, end, token, _ in found)
    found_keys = list(string_tokens(text, keys=True))
    assert [(json.loads(token), number) for _, _, token, number in found_keys] == keys
    assert all(text[start:end] == token for start, end, token, _ in found_keys)


def test_one_scanner_serves_keys_and_values() -> None:
    text = '{"a": ["x", {"b": "y"}], "c": "z"}'
    assert list(string_tokens(text)) == [(7, 10, '"x"', ("a", 0)), (18, 21, '"y"', ("a", 1, "b")),
                                         (30, 33, '"z"', ("c",))]
    assert list(string_tokens(text, keys=True)) == [(1, 4, '"a"', 1), (13, 16, '"b"', 2), (25, 28, '"c"', 1)]
    # the bodies' and responses' redaction reads the same scanner, and the token pattern is written once
    assert vars(_response)["string_tokens"] is vars(_bodies)["string_tokens"] is string_tokens
    sources = "".join(path.read_text(encoding="utf-8") for path in sorted(REDACT.glob("*.py")))
    assert sources.count(r'|([{\[])|([}\]])|,') == 1
    assert not re.search(r"def _key_tokens|_SKIPPING", sources)


SSE = ('event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","role":"assistant","model":"m"}}\n\n'
       'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"key sk-ant-api03-abcdefgh"}}\n\n'
       'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ijklmnopqrstuvwxyz0123 ok"}}\n\n'
       'data: {"choices":[{"delta":{"content":"x\\u00e9\\/y","role":"assistant"}}],"sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX":1}\n\n'
       ': comment\ndata: [DONE]\n\n')
JSON_RESPONSE = (
    '{"id": "r1", "model": "m", "content": [{"type": "text", "text": "see ghp_a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2"}, '
    '{"type": "tool_use", "name": "bash", "input": {"command": "ls \\u00e9", "mode": "x", "api_key": "abcd1234efgh5678"}}], '
    '"sk-ant-api03-abcdefghijklmnopqrstuv": {"nested": ["q", {"k": "v"}]}, "usage": {"input_tokens": 3}}')


def test_responses_are_redacted_as_before() -> None:
    """An event stream (a key cut over two deltas, a secret object key, escapes) and a JSON response
    (a secret key, a free-form tool input): every byte as the two-scanner code wrote it (session 37: but
    for a two-byte character, since the lead byte C2 is alone in its class)."""
    redactor = LogRedactor(Placeholders(b"red32"))
    assert redact_response_text(SSE, redactor) == (
        'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","role":"assistant","model":"m"}}'
        '\n\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"5LA|uP{XCg<n4FJB.2i7Pm2yV"}}'
        '\n\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"3E6o3rNz4RUkHi1vFth4AF|S1"}}'
        '\n\ndata: {"choices":[{"delta":{"content":"I\\u0326\\/3","role":"assistant"}}],"Dh:R7wh=oVqVPByVQrjWjRE2gb18oZlQ":1}'
        "\n\n: comment\ndata: [DONE]\n\n")
    assert redact_response_text(JSON_RESPONSE, redactor) == (
        '{"id": "r1", "model": "m", "content": [{"type": "text", "text": "DbB}Mad~BZskfON1G51WcbAbKnyAwGnl3ZVgXoiWnwCy"}, '
        '{"type": "tool_use", "name": "bash", "input": {"command": "6J\'\\u074a", "mode": "I", "api_key": '
        '"vha5WVII6YboDdwB"}}], "Dh:CZR.XTw28\'rZYevzFA47LdVVRaVIE3E4": {"nested": ["B", {"k": "G"}]}, '
        '"usage": {"input_tokens": 3}}')
    assert dict(redactor.secrets) == {"anthropic_api_key": 2, "openai_api_key": 1, "github_token": 1, "key_value": 1}
    assert rewrite_keys('[{"short": 1}, {"a": {"sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX": 2}, "b": 3}]', redactor.keys) == (
        '[{"short": 1}, {"a": {"Dh:R7wh=oVqVPByVQrjWjRE2gb18oZlQ": 2}, "b": 3}]')


# -- 2. and 3. a child and its parent: attributed once, each log opened once ----------------------

PARENT_DIGESTS = {"requests": "sha256:70691c13645621cfbde65a2fa46ac1aaae03d5114309112e4815b7f69724aa15",
                  "breaks": "sha256:edc2e35ae598692e1eeebeb50e09e604e93baf4e77a73684fbed561c93b1e527",
                  "cache": "sha256:5ca81d5aa6eb907343a93d4313ef226e8b9dd15717867087838b354f4a12ea6a"}
CHILD_DIGESTS = {"requests": "sha256:9fc4e656608d13d7106f87c473c1da5e716312bc7ff25647e7045ecdf40a1741",
                 "breaks": "sha256:cda3168b2590d97e7f8dda4d5800aa10c27bfbb66468b909587f212205925977",
                 "cache": "sha256:c07937588e71a38f73c9534076dabd2d60ca98902db26dfd0362df666814d713"}
ALONE_DIGESTS = {**CHILD_DIGESTS,  # the child without its parent: its first request compared with nothing
                 "breaks": "sha256:69bbaad630795126230fd59f6df8390d8e08d632c598fa8fd62958bc422fad84",
                 "cache": "sha256:226e4dc51797338664e0e49f26ff8c97d12fc1eeaab42dd5cc6bc16e3b89134d"}


def _family(folder: Path) -> tuple[Path, Path]:
    """A parent log of three turns and its fork child (forked after the second), side by side, each
    named by its session id (where ``breaks`` looks for a parent first)."""
    parent = LogBuilder(session_id="session-parent-32")
    with parent.turn("Plan the release, key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123"), parent.step():
        parent.assistant("Here is the plan", reasoning="think first")
    with parent.turn("And the notes?"), parent.step():
        parent.assistant("Notes follow")
    child = parent.fork(session_id="session-child-32")
    with child.turn("Go on with the notes"), child.step():
        child.assistant("Done")
    with parent.turn("Thanks"), parent.step():
        parent.assistant("Welcome")
    folder.mkdir(parents=True)
    paths = folder / "session-parent-32.jsonl", folder / "session-child-32.jsonl"  # as DSH names them
    for log, path in zip((parent, child), paths):
        path.write_text("".join(line + "\n" for line in log.lines(packed=False)), encoding="utf-8")
    return paths


def test_verdicts_attribute_each_session_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parent_log, child_log = _family(tmp_path / "logs")
    parent = open_session(parent_log)
    child = open_session(child_log)
    runs: list[str] = []
    run = attribute_module._Attributor.run

    def counted(self: Any, session: Any) -> Any:
        runs.append(session.id)
        return run(self, session)

    monkeypatch.setattr(attribute_module._Attributor, "run", counted)
    verdicts = session_verdicts(child, parent=parent)
    # the child and its parent attributed together once (both verdicts read it), not once per verdict
    assert runs == ["session-child-32", "session-parent-32"]
    assert {c: digest(rows) for c, rows in verdicts.items()} == CHILD_DIGESTS
    runs.clear()
    verdicts = session_verdicts(parent)
    assert runs == ["session-parent-32"]
    assert {c: digest(rows) for c, rows in verdicts.items()} == PARENT_DIGESTS


def test_a_child_bundle_opens_each_parent_log_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    parent, child = _family(tmp_path / "logs")
    opens: dict[str, int] = {}
    watched: dict[str, str] = {}
    real_open = os.open

    def counting(path: Any, *args: Any, **kwargs: Any) -> int:
        name = watched.get(os.path.realpath(os.fsdecode(path))) if isinstance(path, (str, bytes, os.PathLike)) else None
        if name is not None:
            opens[name] = opens.get(name, 0) + 1
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", counting)
    # the output beside the logs' folder (the search for the log's children reads the redacted parent's
    # header too), and two folders down (only the search for the redacted parent reads it)
    for out in (tmp_path / "out", tmp_path / "a" / "b"):
        out.mkdir(parents=True)
        code, _, err = invoke(monkeypatch, capsys, "redact", str(parent), "-o", str(out / parent.name), "--salt", "red32")
        assert (code, err) == (0, [short_salt("red32")])
        watched.clear()
        watched.update({os.path.realpath(p): name for p, name in (
            (parent, "parent"), (child, "child"), (out / parent.name, "redacted parent"), (out / child.name, "redacted child"))})
        opens.clear()
        code, stdout, err = invoke(monkeypatch, capsys, "redact", str(child), "-o", str(out / child.name), "--salt", "red32")
        # each parent's header is read to find it, and the same open log read on for its verdicts
        assert opens == {"child": 1, "parent": 1, "redacted parent": 1}
        assert (code, err, stdout.splitlines()[-3]) == (0, [
            f"note: verdicts compared with the parent session session-parent-32 on both sides: {parent} and its "
            f"redaction {out / parent.name}", short_salt("red32")], "verdicts of requests, breaks, cache: unchanged")
        manifest = json.loads((out / f"{child.name}.manifest.json").read_text(encoding="utf-8"))
        assert manifest["parent"] == "session-parent-32"
        assert {c: v["digest"] for c, v in manifest["verdicts"].items()} == CHILD_DIGESTS
        opens.clear()
        code, stdout, err = invoke(monkeypatch, capsys, "redact", "--check", str(out / child.name))
        # the redacted child twice: its first 4 bytes, to compare its compression with the manifest's
        # (fuzz round 17 D7), then read once for its verdicts
        assert opens == {"redacted child": 2, "redacted parent": 1}
        assert (code, err, stdout.splitlines()[-1]) == (
            0, [], f"OK: every verdict of {out / child.name} matches its manifest")
    # alone: the parent's header is read to say so (the log kept open for it closed unread), and the
    # redacted logs one folder up once each, as the search for children beside the log reads them
    watched.update({os.path.realpath(tmp_path / "out" / p.name): f"redacted {n}" for p, n in ((parent, "parent"),
                                                                                             (child, "child"))})
    opens.clear()
    (tmp_path / "alone").mkdir()
    code, _, err = invoke(monkeypatch, capsys, "redact", str(child), "-o", str(tmp_path / "alone" / child.name),
                          "--salt", "red32", "--alone")
    assert (code, opens) == (0, {"child": 1, "parent": 1, "redacted child": 1, "redacted parent": 1})
    manifest = json.loads((tmp_path / "alone" / f"{child.name}.manifest.json").read_text(encoding="utf-8"))
    assert {c: v["digest"] for c, v in manifest["verdicts"].items()} == ALONE_DIGESTS
    # without the redacted parent beside the output: refused as before, nothing written
    (tmp_path / "bare").mkdir()
    code, _, err = invoke(monkeypatch, capsys, "redact", str(child), "-o", str(tmp_path / "bare" / child.name),
                          "--salt", "red32")
    assert code == 2 and err[0].startswith(f"error: {child}: this log is a child of {parent}, beside it")
    assert sorted(p.name for p in (tmp_path / "bare").iterdir()) == []
