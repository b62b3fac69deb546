"""Redaction round 7: only the session ids DSH writes where it writes them stay in texts (a member of that
name in a tool call's arguments or a header's unknown member is content), learnt in the log's one read;
one folder search for the logs beside a session (``dsh_audit.session.nearby_logs``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from _cli import chat_log
from dsh_audit.log import open_regular
from dsh_audit.redact import Placeholders, Redactor, redact
from dsh_audit.redact import _redact as redact_module
from dsh_audit.session import Headers, nearby_logs

SECRET = "Project Nightingale merger with Acme"
PARENT_ID = "session-0b6f6a0e-4f2c-4a55-9d3e-2b1c5f7e8a90"
CHILD_ID = "5d1c7a3e-9b2f-4e6d-8a1c-3f5e7b9d2a4c"
OTHER_ID = "c0ffee00-1111-4222-8333-444455556666"
HOME_PARENT = (Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "live" / "g-subagent" / "home"
               / "sessions" / "--home-dev-dsh-runs-a-g-subagent-ws--" / "session-70444d8d-ee1d-43e9-8341-470b57f1019c"
               / "session.jsonl.zstd")


def _log(path: Path, session_id: str, text: str, *, arguments: dict[str, Any] | None = None,
         header: dict[str, Any] | None = None, source: dict[str, Any] | None = None) -> Path:
    """A one-turn chat at ``path`` whose user says ``text``; with ``arguments``, the answer also
    calls a tool with them; ``header``: more header members; ``source``: the user message's source."""
    body = chat_log(path, session_id).read_text(encoding="utf-8").replace('"Hi"', json.dumps(text))
    if arguments is not None:
        call = {"type": "toolCall", "id": "call_1", "name": "notify", "arguments": arguments}
        body = body.replace('"message":{"role":"assistant","content":[{"type":"text","text":"Hello"}]',
                            '"message":{"role":"assistant","content":[{"type":"text","text":"Hello"},'
                            + json.dumps(call) + "]")
    if source is not None:
        body = body.replace('"source":{"kind":"user"}', '"source":' + json.dumps(source))
    first, rest = body.split("\n", 1)
    path.write_text(json.dumps({**json.loads(first), **(header or {})}) + "\n" + rest, encoding="utf-8")
    return path


def _texts(path: Path) -> list[str]:
    """Every ``text`` member of the log at ``path``, in file order."""
    found: list[str] = []

    def members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        found.extend(value for key, value in pairs if key == "text" and isinstance(value, str))
        return dict(pairs)

    for line in path.read_text(encoding="utf-8").splitlines():
        json.loads(line, object_pairs_hook=members)
    return found


# -- 1. no text keeps a value only a tool call's arguments or an unknown member names ---------------


@pytest.mark.parametrize("member", ["senderSessionId", "parentSession"])
def test_a_tool_argument_named_like_a_session_id_is_no_id_for_the_texts(tmp_path: Path, member: str) -> None:
    for n, value in enumerate((SECRET, OTHER_ID)):  # content, and content of the shape of an id
        log = _log(tmp_path / "in" / f"{n}.jsonl", PARENT_ID, f"Please ping: {value}", arguments={member: value})
        out = tmp_path / f"{n}.jsonl"
        assert redact(log, out, salt="s").mismatched == ()
        texts = _texts(out)
        assert len(texts) == 5 and texts[:2] == [texts[0]] * 2  # the user's text (queued and entered)
        assert len(texts[0]) == len(f"Please ping: {value}") and value not in texts[0]
        assert not any(value in text for text in texts)


def test_an_unknown_header_member_is_no_id_for_the_texts(tmp_path: Path) -> None:
    for n, value in enumerate((SECRET, OTHER_ID)):
        log = _log(tmp_path / "in" / f"{n}.jsonl", PARENT_ID, f"Hi, about {value}",
                   header={"extra": {"senderSessionId": value, "parentSession": value}})
        out = tmp_path / f"{n}.jsonl"
        assert redact(log, out, salt="s").mismatched == ()
        assert not any(value in text for text in _texts(out))


def test_a_tool_argument_named_like_a_structural_member_is_content(tmp_path: Path) -> None:
    log = _log(tmp_path / "in" / "s.jsonl", PARENT_ID, "Hi", arguments={"senderSessionId": SECRET})
    redact(log, tmp_path / "o.jsonl", salt="s")
    assert SECRET not in (tmp_path / "o.jsonl").read_text(encoding="utf-8")


def test_an_unknown_header_member_is_content(tmp_path: Path) -> None:
    log = _log(tmp_path / "in" / "s.jsonl", PARENT_ID, "Hi", header={"extra": {"senderSessionId": SECRET}})
    redact(log, tmp_path / "o.jsonl", salt="s")
    assert SECRET not in (tmp_path / "o.jsonl").read_text(encoding="utf-8")


def test_only_a_string_of_the_shape_of_a_session_id_is_kept() -> None:
    p = Placeholders(b"salt")
    ids = [PARENT_ID, CHILD_ID, "session-" + "ab" * 16, "main-session-" + CHILD_ID, SECRET, "sess-leak-0001",
           "session-sample-chat", CHILD_ID + " and more", "x" + CHILD_ID[1:].replace("-", "_")]
    p.keep_identifiers(ids)
    text = " ".join(ids)
    out = p.plain(text)
    assert len(out.encode()) == len(text.encode())
    assert [i for i in ids if i in out] == [PARENT_ID, CHILD_ID, "session-" + "ab" * 16, "main-session-" + CHILD_ID]


# -- 2. the ids a log's texts keep: its header's, and its children's beside it -------------------


def test_the_header_ids_and_a_child_beside_are_kept_in_every_text(tmp_path: Path) -> None:
    folder = tmp_path / "a" / "b"  # the children are looked for beside the log and one folder up
    sibling = "9e8d7c6b-5a49-4838-a726-150f1e2d3c4b"
    text = f"started subagent {CHILD_ID}; I am {PARENT_ID}, a child of {OTHER_ID}, a sibling of {sibling}"
    ids = (CHILD_ID, PARENT_ID, OTHER_ID, sibling)

    def kept(out: Path) -> list[bool]:
        first = _texts(out)[0]  # the user's text
        assert first != text and len(first) == len(text)
        return [first[text.index(i):text.index(i) + len(i)] == i for i in ids]

    parent = _log(folder / "parent.jsonl", PARENT_ID, text, header={"parentSession": OTHER_ID})
    redact(parent, tmp_path / "alone.jsonl", salt="s")
    assert kept(tmp_path / "alone.jsonl") == [False, True, True, False]  # no child beside: its id is content
    _log(folder / "c" / "child.jsonl", CHILD_ID, "Hi", header={"parentSession": PARENT_ID, "origin": "subagent"})
    _log(folder / "sibling.jsonl", sibling, "Hi", header={"parentSession": OTHER_ID, "origin": "subagent"})
    redact(parent, tmp_path / "family.jsonl", salt="s")
    assert kept(tmp_path / "family.jsonl") == [True, True, True, False]  # a sibling is not a child


def test_a_child_beside_whose_id_is_no_session_id_is_not_kept(tmp_path: Path) -> None:
    name = "Nightingale-merger-draft"  # a header id DSH never writes
    parent = _log(tmp_path / "parent.jsonl", PARENT_ID, f"started subagent {name}")
    _log(tmp_path / "child.jsonl", name, "Hi", header={"parentSession": PARENT_ID, "origin": "subagent"})
    redact(parent, tmp_path / "o.jsonl", salt="s")
    assert not any("Nightingale" in text for text in _texts(tmp_path / "o.jsonl"))


def test_a_sender_no_header_beside_names_is_not_kept_in_any_text(tmp_path: Path) -> None:
    # a settled notice names a child no log beside the parent is: its texts are redacted alike before and
    # after the notice (the log's one read knows the ids before the first text), so a capture's texts,
    # redacted after the log, get the same placeholders
    source = {"kind": "subagent-settled", "form": "notice", "summary": f"Background subagent {CHILD_ID} finished.",
              "senderSessionId": CHILD_ID}
    log = _log(tmp_path / "in" / "s.jsonl", PARENT_ID, f"Background subagent {CHILD_ID} finished.", source=source)
    result = redact(log, tmp_path / "o.jsonl", salt="s")
    assert result.mismatched == ()
    copy = (tmp_path / "o.jsonl").read_text(encoding="utf-8")
    assert copy.count(f'"senderSessionId":"{CHILD_ID}"') == 2 and copy.count(CHILD_ID) == 2


# -- 3. one folder search, each header read once -------------------------------------------------


def test_nearby_logs_are_the_logs_of_a_folder_and_its_direct_subfolders(tmp_path: Path) -> None:
    for name in ("b.jsonl", "a.jsonl.zstd", "notes.txt", "s/session.jsonl.zstd", "s/t/deep.jsonl",
                 "r/wire.jsonl.gz", "q.jsonl/x.jsonl"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("", encoding="utf-8")
    assert [p.relative_to(tmp_path).as_posix() for p in nearby_logs(tmp_path)] == [
        "a.jsonl.zstd", "b.jsonl", "q.jsonl/x.jsonl", "s/session.jsonl.zstd"]
    assert nearby_logs(tmp_path / "missing") == []


def test_headers_released_keep_the_ids_read(tmp_path: Path) -> None:
    child = _log(tmp_path / "child.jsonl", CHILD_ID, "Hi", header={"parentSession": PARENT_ID})
    headers = Headers()
    try:
        assert headers.ids(child) == (CHILD_ID, PARENT_ID)
        headers.release()
        assert headers.opened == {}
        child.unlink()  # answered from what was read, not read again
        assert headers.ids(child) == (CHILD_ID, PARENT_ID)
    finally:
        headers.close()
    assert Headers().ids(child) == (None, None)


class _Counted:
    """A log's open file, counting the bytes read from it and the seeks."""

    def __init__(self, handle: Any) -> None:
        self.handle, self.read_bytes, self.seeks = handle, 0, 0

    def read(self, size: int = -1) -> bytes:
        data = self.handle.read(size)
        self.read_bytes += len(data)
        return data

    def seek(self, *args: Any) -> int:
        self.seeks += 1
        return int(self.handle.seek(*args))

    def fileno(self) -> int:  # the first lines are read beside it, with pread (its reads and seeks stay counted)
        return int(self.handle.fileno())

    def close(self) -> None:
        self.handle.close()


@pytest.mark.skipif(not HOME_PARENT.is_file(), reason="../shared/corpus is absent")
def test_redact_reads_each_byte_of_the_log_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = _log(tmp_path / "in" / "s.jsonl", PARENT_ID, f"started subagent {CHILD_ID}")
    _log(tmp_path / "in" / "c" / "child.jsonl", CHILD_ID, "Hi", header={"parentSession": PARENT_ID})
    opened: list[_Counted] = []

    def counting(path: Any, *args: Any, **kwargs: Any) -> _Counted:
        opened.append(_Counted(open_regular(path, *args, **kwargs)))
        return opened[-1]

    monkeypatch.setattr(redact_module, "open_regular", counting)
    for log, out in ((plain, tmp_path / "o.jsonl"), (HOME_PARENT, tmp_path / "o.jsonl.zstd")):
        opened.clear()
        redact(log, out, salt="s")
        assert [(c.read_bytes, c.seeks) for c in opened] == [(log.stat().st_size, 0)]
    assert _texts(tmp_path / "o.jsonl")[0][17:] == CHILD_ID  # the child's id, learnt in that one read


# -- 4. structural keys only where DSH's format puts them; the header's unknown members are content ----


def test_arguments_at_any_depth_are_content_whatever_their_names(tmp_path: Path) -> None:
    arguments = {"items": [{"id": SECRET, "type": "Acme quarterly", "name": "Nightingale"}],
                 "mode": "merger", "path": "/srv/acme/plans.md"}
    log = _log(tmp_path / "in" / "s.jsonl", PARENT_ID, "Hi", arguments=arguments)
    assert redact(log, tmp_path / "o.jsonl", salt="s").mismatched == ()
    copy = (tmp_path / "o.jsonl").read_text(encoding="utf-8")
    assert [word for word in ("Nightingale", "Acme", "merger", "srv", "plans.md") if word in copy] == []
    calls = [block for line in copy.splitlines() if '"toolCall"' in line
             for block in json.loads(line)["data"]["message"]["content"] if block["type"] == "toolCall"]
    assert len(calls) == 1
    assert calls[0]["id"] == "call_1" and calls[0]["name"] == "notify"  # the call's own framing stays
    out = calls[0]["arguments"]
    assert list(out) == ["items", "mode", "path"] and list(out["items"][0]) == ["id", "type", "name"]
    assert [len(v) for v in out["items"][0].values()] == [len(v) for v in arguments["items"][0].values()]
    assert out["path"].count("/") == 3 and out["path"].startswith("/") and len(out["path"]) == 18  # a path


def test_a_tool_results_details_are_content_and_the_message_framing_stays() -> None:
    redactor = Redactor(Placeholders(b"salt"))
    message = {"role": "toolResult", "toolCallId": "call_1", "toolName": "notify", "isError": False,
               "content": [{"type": "text", "text": "done"}], "details": {"status": SECRET, "kind": "Acme"}}
    out = redactor.record({"type": "tool/result", "seq": 3, "time": 1, "data": {"turn": 1, "message": message}})
    kept = out["data"]["message"]
    assert {k: v for k, v in kept.items() if k not in ("content", "details")} == {
        "role": "toolResult", "toolCallId": "call_1", "toolName": "notify", "isError": False}
    assert kept["content"][0]["type"] == "text" and kept["content"][0]["text"] != "done"
    assert kept["details"]["status"] != SECRET and len(kept["details"]["status"]) == len(SECRET)
    assert kept["details"]["kind"] != "Acme" and redactor.strings == 3


def test_a_header_keeps_its_known_members_and_redacts_any_other(tmp_path: Path) -> None:
    header = {"parentSession": OTHER_ID, "seedLength": 2, "origin": "subagent", "agentPreset": "review",
              "extra": SECRET, "model": "deepseek-chat", "nested": {"id": SECRET, "count": 3}}
    log = _log(tmp_path / "in" / "s.jsonl", PARENT_ID, "Hi", header=header)
    redact(log, tmp_path / "o.jsonl", salt="s", alone=True)
    before = json.loads(log.read_text(encoding="utf-8").split("\n", 1)[0])
    after = json.loads((tmp_path / "o.jsonl").read_text(encoding="utf-8").split("\n", 1)[0])
    unknown = ("extra", "model", "nested")
    assert list(after) == list(before)
    assert {k: v for k, v in after.items() if k not in (*unknown, "cwd")} == {
        k: v for k, v in before.items() if k not in (*unknown, "cwd")}
    assert [after[k] == before[k] for k in unknown] == [False, False, False]
    assert len(after["extra"]) == len(SECRET) and after["nested"]["count"] == 3
    assert len(after["nested"]["id"]) == len(SECRET) and SECRET not in json.dumps(after)
