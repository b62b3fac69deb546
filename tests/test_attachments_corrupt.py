"""An attachment object that cannot be used is never passed over in silence (issue 12).

Outside ``render``, a request whose image object is refused (bytes that do not hash to its name, a
truncated copy, a folder or FIFO in its place, one past the size bound) is measured from the log's
JSON instead of its wire body. The store keeps one warning line per refused object, with its path
and reason, escaped to one line, for the command to print with the log's other warnings; an
unchanged refused object is not read again for every request that carries it.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from dsh_audit.errors import AttachmentError
from dsh_audit.session import ATTACHMENTS_ENV, AttachmentStore, ImageOverlay, open_session
from dsh_audit.session._attachments import attachment_warnings

from test_attachments import BODY, HINT, KEY, PNG, dsh_home, store_object

TAIL = f": requests carrying this image are not rendered; their prompt is measured from the log's JSON (hint: {HINT})"


@pytest.fixture(autouse=True)
def no_other_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "empty-home"))
    monkeypatch.delenv(ATTACHMENTS_ENV, raising=False)


def corrupt(data: bytes, path: Path) -> str:
    """The warning line of the object at ``path`` holding ``data`` instead of :data:`PNG`."""
    return (f"attachment object {path} failed integrity verification: its bytes hash to "
            f"sha256:{hashlib.sha256(data).hexdigest()}, not the digest that names it [ATTACHMENT_CORRUPT]{TAIL}")


@pytest.mark.parametrize("data", [PNG[:-1] + b"\xff", PNG[:-3], b""], ids=["bad-hash", "truncated", "empty"])
def test_a_session_outside_render_warns_of_a_corrupt_object(data: bytes, tmp_path: Path) -> None:
    log, _, found = dsh_home(tmp_path, data=data)
    session = open_session(log)
    assert session.body(session.requests[1]) is None  # a view's fallback: the log's JSON
    assert attachment_warnings(session.bodies.images) == [corrupt(data, found)]
    assert session.body(session.requests[0]) is not None  # the text-only request is untouched
    assert attachment_warnings(session.bodies.images) == [corrupt(data, found)]  # once per object


def test_an_unreadable_object_warns_with_its_reason(tmp_path: Path) -> None:
    root = tmp_path / "v1"
    found = store_object(root)
    found.unlink()
    found.mkdir()
    store = AttachmentStore(root, max_bytes=4)
    assert store.get("sha256:" + "0" * 64) is None and store.problems == ()  # a missing object is no problem
    with pytest.raises(AttachmentError):
        store[KEY]
    found.rmdir()
    store_object(root)
    with pytest.raises(AttachmentError):
        store[KEY]  # a new object: read again, now too large
    assert store.problems == (f"attachment object {found}: is a folder, not a file [ATTACHMENT_READ_FAILED]{TAIL}",)
    assert attachment_warnings(ImageOverlay({}, store)) == list(store.problems)
    assert attachment_warnings({KEY: PNG}) == []


def test_a_refused_object_is_read_once_until_it_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "v1"
    found = store_object(root, data=b"bad")
    store = AttachmentStore(root)
    reads: list[Path] = []
    original = AttachmentStore._read

    def counted(self: AttachmentStore, key: str, path: Path) -> bytes:
        reads.append(path)
        return original(self, key, path)

    monkeypatch.setattr(AttachmentStore, "_read", counted)
    errors = []
    for _ in range(3):
        with pytest.raises(AttachmentError) as caught:
            store[KEY]
        errors.append(caught.value)
    assert reads == [found]
    assert len({id(e) for e in errors}) == 3  # each lookup gets its own error: a renderer sets its seq
    assert {(e.message, e.dsh_code, e.hint, e.seq) for e in errors} == {
        (corrupt(b"bad", found).removesuffix(" [ATTACHMENT_CORRUPT]" + TAIL), "ATTACHMENT_CORRUPT", HINT, None)}
    found.write_bytes(PNG)  # repaired: a different size, so looked at again
    assert store[KEY] == PNG and reads == [found, found]
    assert store.problems == (corrupt(b"bad", found),)  # what was met stays reported


def test_a_path_with_control_characters_stays_one_line(tmp_path: Path) -> None:
    root = tmp_path / "odd\n\x1b[31mhome\u202e" / "v1"
    found = store_object(root, data=b"bad")
    with pytest.raises(AttachmentError):
        AttachmentStore(root)[KEY]
    store = AttachmentStore(root)
    with pytest.raises(AttachmentError):
        store[KEY]
    escaped = os.fspath(found).replace("\n", "\\u000a").replace("\x1b", "\\u001b").replace("\u202e", "\\u202e")
    assert store.problems == (corrupt(b"bad", found).replace(os.fspath(found), escaped),)
    assert all(line.isprintable() for line in store.problems)


def test_an_intact_store_warns_of_nothing(tmp_path: Path) -> None:
    log, _, _ = dsh_home(tmp_path)
    session = open_session(log)
    assert session.body(session.requests[1]) == BODY.encode()
    assert attachment_warnings(session.bodies.images) == []
