"""Image requests rendered from DSH's attachment store (issue 12), without a capture.

A log names an image by ``sha256:<hex>``; DSH keeps its bytes at
``<DSH_HOME>/attachments/v1/objects/<hex[:2]>/<hex>`` (``attachment-local/src/store.ts:36-38``).
Every store here is a real one on disk: found beside a log under ``<home>/sessions/...``, named by
``--attachments``, missing an object, holding a corrupt one, and losing to a capture's bytes.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from dsh_audit.errors import AttachmentError
from dsh_audit.session import ATTACHMENTS_ENV, AttachmentStore, ImageOverlay, attachment_store, open_session
from dsh_audit.testing import LogBuilder
from dsh_audit.wire import make_renderer

from _cli import invoke
from _golden import CORPUS

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(8))  # base64 iVBORw0KGgoAAQIDBAUGBw==
HEX = hashlib.sha256(PNG).hexdigest()
KEY = "sha256:" + HEX
BLOCK = {"type": "image", "attachment": {"attachmentId": KEY, "mediaType": "image/png", "bytes": len(PNG),
                                         "width": 1, "height": 1}}
#: Request 1 of :func:`picture_log` as DSH's DeepSeek adapter sends it, the image in base64.
BODY = ('{"model":"deepseek-v4-flash","messages":[{"role":"system","content":"You are a helpful coding agent."},'
        '{"role":"user","content":"Hi."},{"role":"assistant","content":"Hello."},{"role":"user","content":'
        '[{"type":"text","text":"Look:"},{"type":"image_url","image_url":{"url":"data:image/png;base64,'
        'iVBORw0KGgoAAQIDBAUGBw=="}}]}],"stream":true,"stream_options":{"include_usage":true},'
        '"thinking":{"type":"enabled"},"reasoning_effort":"high","max_tokens":65536}')
HINT = "point --attachments DIR at an intact copy of DSH's attachment store (<DSH_HOME>/attachments/v1)"
INLINE = CORPUS / "fixtures" / "acp-snapshots" / "inline-image-prompt"


@pytest.fixture(autouse=True)
def no_other_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No store but the ones a test makes: $DSH_HOME is an empty folder, no --attachments set."""
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "empty-home"))
    monkeypatch.delenv(ATTACHMENTS_ENV, raising=False)


def picture_log(path: Path) -> Path:
    """A text turn, then a prompt with a text and the image."""
    b = LogBuilder(session_id="pics")
    with b.turn("Hi."):
        with b.step():
            b.assistant("Hello.")
    with b.turn([{"type": "text", "text": "Look:"}, BLOCK]):
        with b.step():
            b.assistant("Seen.")
    return b.write_jsonl(path)


def store_object(root: Path, data: bytes = PNG, hexdigest: str = HEX) -> Path:
    """``data`` stored as DSH stores the object ``hexdigest`` below the store root ``root``."""
    path = root / "objects" / hexdigest[:2] / hexdigest
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def dsh_home(tmp_path: Path, data: bytes = PNG) -> tuple[Path, Path, Path]:
    """A DSH home holding the log (``sessions/<project>/<session>/session.jsonl``) and its image:
    the log, the store root and the object."""
    home = tmp_path / "home"
    log = picture_log(home / "sessions" / "--tmp-proj--" / "pics" / "session.jsonl")
    root = home / "attachments" / "v1"
    return log, root, store_object(root, data)


def render(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, list[str]]:
    return invoke(monkeypatch, capsys, "render", *args)


# --- the store found, named, missing an object, corrupt -----------------------------------------


def test_the_store_beside_the_log_renders_its_image(tmp_path: Path, monkeypatch, capsys) -> None:
    log, _, _ = dsh_home(tmp_path)
    assert render(monkeypatch, capsys, str(log), "1") == (0, BODY, [])
    assert ATTACHMENTS_ENV not in os.environ


@pytest.mark.parametrize("named", ["home", "home/attachments", "home/attachments/v1"])
def test_attachments_names_the_store_of_a_copied_log(named: str, tmp_path: Path, monkeypatch, capsys) -> None:
    log, _, _ = dsh_home(tmp_path)
    copy = tmp_path / "copy" / "session.jsonl"
    copy.parent.mkdir()
    shutil.copyfile(log, copy)
    code, out, err = render(monkeypatch, capsys, str(copy), "1")
    assert (code, out) == (2, "")
    assert err == [f"error: {copy}:21 seq 19: the request carries image content; its bytes live in DSH's attachment "
                   "store, not in the log (hint: read the bytes from DSH's attachment store with --attachments DIR (<DSH_HOME>/attachments/v1))"]
    assert render(monkeypatch, capsys, str(copy), "1", "--attachments", str(tmp_path / named)) == (0, BODY, [])
    assert ATTACHMENTS_ENV not in os.environ  # the command's setting ends with it


def test_dsh_home_is_the_store_of_a_log_outside_a_home(tmp_path: Path, monkeypatch, capsys) -> None:
    log = picture_log(tmp_path / "loose" / "session.jsonl")
    store_object(tmp_path / "elsewhere" / "attachments" / "v1")
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "elsewhere"))
    assert render(monkeypatch, capsys, str(log), "1") == (0, BODY, [])


def test_attachments_must_name_a_store(tmp_path: Path, monkeypatch, capsys) -> None:
    log, _, _ = dsh_home(tmp_path)
    (tmp_path / "nothing").mkdir()
    code, out, err = render(monkeypatch, capsys, str(log), "1", "--attachments", str(tmp_path / "nothing"))
    assert (code, out) == (2, "")
    assert err == [f"error: Invalid value for '--attachments': no attachment store in '{tmp_path / 'nothing'}': "
                   "none of it, its v1 folder or its attachments/v1 folder holds an objects folder "
                   "(hint: see `dsh-audit render --help`)"]


@pytest.mark.parametrize("command", ["render", "diff", "cache", "check", "report", "breaks", "explain"])
def test_every_rendering_command_takes_attachments(command: str, tmp_path: Path, monkeypatch, capsys) -> None:
    log, root, _ = dsh_home(tmp_path)
    (tmp_path / "nothing").mkdir()
    args = {"render": [str(log), "1"], "explain": [str(log), "1"], "diff": [str(log), "--capture", str(log)]}
    monkeypatch.chdir(tmp_path)  # report writes its file here
    _, _, err = invoke(monkeypatch, capsys, command, *args.get(command, [str(log)]), "--attachments", str(root))
    assert not any("attachment" in line for line in err), err
    code, out, err = invoke(monkeypatch, capsys, command, *args.get(command, [str(log)]), "--attachments",
                            str(tmp_path / "nothing"))
    assert (code, out) == (2, "")
    assert err == [f"error: Invalid value for '--attachments': no attachment store in '{tmp_path / 'nothing'}': "
                   "none of it, its v1 folder or its attachments/v1 folder holds an objects folder "
                   f"(hint: see `dsh-audit {command} --help`)"]
    assert ATTACHMENTS_ENV not in os.environ


def test_a_missing_object_leaves_the_request_unrendered(tmp_path: Path, monkeypatch, capsys) -> None:
    log, root, found = dsh_home(tmp_path)
    found.unlink()
    code, out, err = render(monkeypatch, capsys, str(log), "1")
    assert (code, out) == (2, "")
    assert err == [f"error: {log}:21 seq 19: no bytes supplied for image attachment {KEY!r} (hint: DSH's attachment "
                   f"store {root} has no such object: point --attachments DIR at the store that has it)"]
    code, out, _ = invoke(monkeypatch, capsys, "cache", str(log), "--json", "--attachments", str(root))
    assert code == 0  # the session is still accounted: the request's prompt is the log's JSON
    assert [(t["index"], t["prompt_source"]) for t in json.loads(out.splitlines()[0])["timeline"]] == [
        (0, "wire:deepseek"), (1, "json")]


def test_a_corrupt_object_is_refused_as_dsh_refuses_it(tmp_path: Path, monkeypatch, capsys) -> None:
    log, root, found = dsh_home(tmp_path, data=PNG[:-1] + b"\xff")
    actual = hashlib.sha256(PNG[:-1] + b"\xff").hexdigest()
    message = (f"attachment object {found} failed integrity verification: its bytes hash to sha256:{actual}, "
               "not the digest that names it")
    code, out, err = render(monkeypatch, capsys, str(log), "1")
    assert (code, out) == (2, "")
    assert err == [f"error: {log}:21 seq 19: {message} (hint: {HINT})"]
    with pytest.raises(AttachmentError) as caught:
        AttachmentStore(root)[KEY]
    assert (caught.value.message, caught.value.dsh_code, caught.value.hint) == (message, "ATTACHMENT_CORRUPT", HINT)


def test_cache_renders_the_image_request_from_the_store(tmp_path: Path, monkeypatch, capsys) -> None:
    log, root, _ = dsh_home(tmp_path)
    for args in (("cache", str(log), "--json"), ("cache", str(log), "--json", "--attachments", str(root))):
        code, out, _ = invoke(monkeypatch, capsys, *args)
        assert code == 0
        assert [t["prompt_source"] for t in json.loads(out.splitlines()[0])["timeline"]] == ["wire:deepseek"] * 2


# --- a capture's bytes win ----------------------------------------------------------------------


def write_capture(path: Path, bodies: list[str]) -> Path:
    path.write_text("".join(json.dumps({"method": "POST", "path": "/chat/completions", "body": body}) + "\n"
                            for body in bodies), "utf-8")
    return path


def test_diff_takes_the_capture_then_the_store(tmp_path: Path, monkeypatch, capsys) -> None:
    log, _, found = dsh_home(tmp_path)
    session = open_session(log)
    renderer = make_renderer("deepseek")
    bodies = [renderer.render(r, images={KEY: PNG}).body_text for r in session.requests]
    assert bodies[1] == BODY
    capture = write_capture(tmp_path / "wire.jsonl", bodies)
    other = base64.b64encode(b"x").decode()
    forged = write_capture(tmp_path / "forged.jsonl", [bodies[0], BODY.replace("iVBORw0KGgoAAQIDBAUGBw==", other)])

    def rows(path: Path) -> tuple[int, list[tuple[Any, ...]]]:
        code, out, _ = invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(path), "--json")
        return code, [(r["index"], r["verdict"], r["note"]) for r in map(json.loads, out.splitlines())]

    first = (0, "identical", "order (no session header)")
    note = "order (no session header); image bytes from capture"
    # The captured image is other bytes, not the logged one: the store gives the logged one, so the
    # request is rendered, and differs from what was captured.
    assert rows(forged) == (1, [first, (1, "different", note)])
    # The store's object is corrupt, but the capture carries the logged image: its bytes win.
    found.write_bytes(b"not the picture")
    assert rows(capture) == (0, [first, (1, "identical", note)])
    # Neither has it: the store refuses its corrupt object.
    actual = hashlib.sha256(b"not the picture").hexdigest()
    assert rows(forged) == (1, [first, (1, "unrendered", "order (no session header); cannot render: attachment "
                                                         f"object {found} failed integrity verification: its bytes "
                                                         f"hash to sha256:{actual}, not the digest that names it "
                                                         "(hint: point --attachments DIR at an intact copy of DSH's "
                                                         "attachment store (<DSH_HOME>/attachments/v1))")])


def test_a_session_renders_from_the_store_and_keeps_the_body(tmp_path: Path) -> None:
    log, root, found = dsh_home(tmp_path)
    session = open_session(log)
    assert isinstance(session.bodies.images, AttachmentStore) and session.bodies.images.root == root
    request = session.requests[1]
    assert session.body(request) == BODY.encode()
    found.unlink()  # the body is kept: the store is not read again
    assert session.body(request) == BODY.encode()
    session.use_routes(None)  # a new body cache keeps the store
    assert session.bodies.images is not None and session.bodies.images.root == root
    assert session.body(request) == BODY.encode()  # the store kept the object's bytes


# --- the store itself ---------------------------------------------------------------------------


def test_the_store_reads_only_what_a_digest_names(tmp_path: Path) -> None:
    root = tmp_path / "v1"
    found = store_object(root)
    store = AttachmentStore(root)
    assert (KEY in store, "sha256:" + "0" * 64 in store, HEX in store, "sha256:" + HEX.upper() in store) == (
        True, False, False, False)
    assert (list(store), len(store), dict(store)) == ([KEY], 1, {KEY: PNG})
    assert store.object_path(KEY) == found
    found.write_bytes(b"changed")
    assert store[KEY] == PNG  # kept after its first read
    assert AttachmentStore(tmp_path / "none").get(KEY) is None
    overlay: Any = ImageOverlay({"sha256:" + "1" * 64: b"c"}, store)
    assert (overlay[KEY], overlay["sha256:" + "1" * 64], len(overlay), overlay.missing_hint) == (
        PNG, b"c", 2, store.missing_hint)


def test_the_store_refuses_a_large_or_special_object(tmp_path: Path) -> None:
    root = tmp_path / "v1"
    found = store_object(root)
    with pytest.raises(AttachmentError) as caught:
        AttachmentStore(root, max_bytes=4)[KEY]
    assert caught.value.message == f"attachment object {found} holds {len(PNG)} bytes, more than the 4-byte bound of an image"
    found.unlink()
    found.mkdir()
    with pytest.raises(AttachmentError) as caught:
        AttachmentStore(root)[KEY]
    assert caught.value.message == f"attachment object {found}: is a folder, not a file"
    found.rmdir()
    if not hasattr(os, "mkfifo"):
        return
    os.mkfifo(found)
    with pytest.raises(AttachmentError) as caught:
        AttachmentStore(root)[KEY]  # never opened: a FIFO without a writer would block
    assert (caught.value.message, caught.value.dsh_code) == (f"attachment object {found} is a FIFO, not a file",
                                                             "ATTACHMENT_READ_FAILED")


def test_the_store_of_a_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log, root, _ = dsh_home(tmp_path)
    found = attachment_store(log)
    assert found is not None and found.root == root
    assert attachment_store(tmp_path / "loose.jsonl") is None  # $DSH_HOME has no store
    monkeypatch.setenv(ATTACHMENTS_ENV, str(tmp_path / "home"))
    found = attachment_store(tmp_path / "loose.jsonl")
    assert found is not None and found.root == root


# --- a real DSH log with an image ---------------------------------------------------------------


@pytest.mark.skipif(not INLINE.is_dir(), reason="../shared/corpus is absent")
def test_a_dsh_fixture_renders_its_inline_image(tmp_path: Path, monkeypatch, capsys) -> None:
    """DSH's ACP snapshot ``inline-image-prompt``: the prompt's image (``input.json``, base64) stored
    under the digest the log names renders into the body byte for byte."""
    data = json.loads((INLINE / "input.json").read_text("utf-8"))["steps"][2]["content"][1]["data"]
    raw = base64.b64decode(data)
    log = tmp_path / "home" / "sessions" / "--proj--" / "s" / "session.jsonl"
    log.parent.mkdir(parents=True)
    # The fixture's header tokenises its tools, which no adapter renders: give it none.
    log.write_text((INLINE / "session.jsonl").read_text("utf-8").replace('"{{tools}}"', "[]"), "utf-8")
    code, out, err = render(monkeypatch, capsys, str(log), "0", "--lenient")
    assert (code, out) == (2, "")
    assert err == [f"error: {log}:6 seq 4: the request carries image content; its bytes live in DSH's attachment "
                   "store, not in the log (hint: read the bytes from DSH's attachment store with --attachments DIR (<DSH_HOME>/attachments/v1))"]
    assert f"sha256:{hashlib.sha256(raw).hexdigest()}" in log.read_text("utf-8")  # the id the log names
    store_object(tmp_path / "home" / "attachments" / "v1", raw, hashlib.sha256(raw).hexdigest())
    code, out, err = render(monkeypatch, capsys, str(log), "0", "--lenient")
    assert (code, err) == (0, [])
    assert json.loads(out)["messages"][1] == {"role": "user", "content": [
        {"type": "text", "text": "Inspect this image, then reply with exactly "},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + data}},
        {"type": "text", "text": "the single word DONE."}]}
    assert out.count(data) == 1
