"""The image bytes a log names, from DSH's attachment store on disk.

A DSH log records an image only as a reference, ``{attachmentId: "sha256:<hex>", mediaType, bytes,
width, height, name?}``; the bytes live in DSH's local attachment store. Written from DSH
0.1.0-rc.8 ``packages/attachment/attachment-local``:

- The store root is ``<DSH_HOME>/attachments/v1`` (``src/index.ts:63``), ``DSH_HOME`` resolved as
  DSH resolves it: an explicit home, then ``$DSH_HOME`` (blank counts as unset, ``~`` expanded),
  then ``~/.dsh`` (``packages/util/home-paths/src/index.ts:87-91``).
- One image is one file, ``<root>/objects/<hex[:2]>/<hex>``, holding exactly the encoded image
  bytes (no sidecar: the metadata is the log's reference), where ``<hex>`` is the SHA-256 of those
  bytes and the reference's id is ``sha256:<hex>`` (``src/store.ts:19, 36-38, 139-149, 190``).
- A read checks the digest and refuses a mismatch, ``ATTACHMENT_CORRUPT``; a missing object is
  ``ATTACHMENT_NOT_FOUND`` (``src/store.ts:204-231``). Admission limits are not applied again on
  a read (``README.md``), so the bound here is ours: it only keeps a hostile store from being read
  without end.

Session logs sit at ``<DSH_HOME>/sessions/<project>/<session>/session.jsonl[.zstd]``
(``session-persistence-jsonl/src/format.ts:176-208``, ``bundle/base/cordis.patch.yml:98-101``), so
the store of a log under a DSH home is found beside it (:func:`attachment_store`).

An object that cannot be used (its bytes do not hash to its name, it is truncated, unreadable, too
large, or not a file) is refused on every lookup, as DSH refuses it; a view that then measures the
request from the log's JSON instead of its wire body would hide that, so the store keeps one warning
line per such object (:attr:`AttachmentStore.problems`, :func:`attachment_warnings`) for the command
to print with the log's other warnings.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from pathlib import Path

from ..errors import AttachmentError, UnreadableError, UsageError
from ..log import open_regular, special_kind

__all__ = ["ATTACHMENTS_ENV", "MAX_ATTACHMENT_BYTES", "AttachmentStore", "ImageOverlay", "attachment_root",
           "attachment_store", "attachment_warnings", "dsh_home", "dsh_homes_of"]

#: The environment variable naming the store every log takes (``--attachments DIR`` sets it for
#: the command, so worker processes see it too).
ATTACHMENTS_ENV = "DSH_AUDIT_ATTACHMENTS"
#: The largest object read (32 MiB): DSH admits 3.5 MiB by default (``attachment-local/src/index.ts:14``)
#: and offloads, never sends, an image whose base64 exceeds the 20 MiB request bound.
MAX_ATTACHMENT_BYTES = 32 << 20
#: The bytes of recently read objects kept (an image rides every later request of its session).
KEPT_BYTES = 64 << 20

_ID = re.compile(r"sha256:([0-9a-f]{64})")  # DSH's ID_PATTERN (store.ts:19)
_HINT = "point --attachments DIR at an intact copy of DSH's attachment store (<DSH_HOME>/attachments/v1)"


def dsh_home() -> Path:
    """DSH's home as DSH resolves it without an explicit one: ``$DSH_HOME`` (a blank value counts as
    unset; ``~`` expanded), else ``~/.dsh``."""
    value = os.environ.get("DSH_HOME", "")
    return Path(os.path.expanduser(value) if value.strip() else Path.home() / ".dsh")


#: What a path that is not there says when it is looked at: no folder, nothing else wrong.
_ABSENT = (errno.ENOENT, errno.ENOTDIR)


def _is_folder(path: Path, *, named: bool) -> bool:
    """Whether ``path`` is a folder. A path that cannot be looked at (no permission on a folder
    above it, a name too long) is no folder when the store is only looked for (``named`` False:
    beside a log, in ``$DSH_HOME``), and a :class:`UsageError` naming it when the user named it."""
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except ValueError:  # a NUL byte
        if named:
            raise UsageError("the attachment store path holds a NUL byte", hint=_HINT) from None
        return False
    except OSError as exc:
        if named and exc.errno not in _ABSENT:
            raise UsageError(f"cannot look in {path}: {exc.strerror or exc}", path=os.fspath(path),
                             hint=_HINT) from None
        return False


def attachment_root(folder: str | os.PathLike[str]) -> Path | None:
    """The store root (the folder holding ``objects``) that ``folder`` names: the root itself, the
    ``attachments`` folder above it, or a DSH home; None when none of them holds an ``objects``
    folder.

    Raises:
        UsageError: ``folder`` cannot be looked in (no permission, a name too long).
    """
    base = Path(folder)
    for root in (base, base / "v1", base / "attachments" / "v1"):
        if _is_folder(root / "objects", named=True):
            return root
    return None


def dsh_homes_of(log: str | os.PathLike[str]) -> list[Path]:
    """The DSH home a log at ``<home>/sessions/<project>/<session>/session*.jsonl[.zstd]`` sits in:
    the one its path names, then the one its real path names when a link leads elsewhere; empty
    for a log that sits in no DSH home.

    Example:
        >>> dsh_homes_of("/h/sessions/p/s/session.jsonl"), dsh_homes_of("/h/logs/session.jsonl")
        ([PosixPath('/h')], [])
    """
    found = Path(os.path.abspath(log))
    return [path.parents[3] for path in dict.fromkeys((found, Path(os.path.realpath(found))))
            if path.name.startswith("session.") and len(path.parents) > 3 and path.parents[2].name == "sessions"]


def _beside(log: str | os.PathLike[str]) -> Path | None:
    """The store of the DSH home a log sits in (:func:`dsh_homes_of`), when that home has one."""
    for home in dsh_homes_of(log):
        root = home / "attachments" / "v1"
        if _is_folder(root, named=False):
            return root
    return None


def attachment_store(log: str | os.PathLike[str] | None = None) -> AttachmentStore | None:
    """The attachment store the images of the log at ``log`` are read from: the one named by
    ``$DSH_AUDIT_ATTACHMENTS`` (``--attachments DIR``), else the one of the DSH home the log sits
    in, else ``$DSH_HOME``'s (else ``~/.dsh``'s); None when there is none.

    Raises:
        UsageError: ``$DSH_AUDIT_ATTACHMENTS`` names a folder that holds no store.
    """
    given = os.environ.get(ATTACHMENTS_ENV, "")
    if given.strip():  # a blank value is unset, as a blank DSH_HOME is
        root = attachment_root(given)
        if root is None:
            raise UsageError(f"${ATTACHMENTS_ENV} names no attachment store: no objects folder in it, its v1 "
                             "folder or its attachments/v1 folder", path=given, hint=_HINT)
        return AttachmentStore(root)
    beside = _beside(log) if log is not None else None
    if beside is not None:
        return AttachmentStore(beside)
    home = dsh_home() / "attachments" / "v1"
    return AttachmentStore(home) if _is_folder(home, named=False) else None


class AttachmentStore(Mapping[str, bytes]):
    """DSH's attachment store at ``root`` (``<DSH_HOME>/attachments/v1``) as the ``images`` a
    renderer takes: ``sha256:<hex>`` to the object's bytes, read on first use and checked against
    the digest that names them. An object that is not there is a ``KeyError`` (the renderer then
    says no bytes were supplied for it); the bytes of the last objects read are kept, at most
    :data:`KEPT_BYTES`.

    Raises (on a lookup):
        AttachmentError: the object is not a regular file, cannot be read, is larger than
            ``max_bytes``, or its bytes do not hash to its name (DSH's ``ATTACHMENT_CORRUPT``).

    Example:
        >>> store = AttachmentStore("no/such/store")
        >>> store.get("sha256:" + "0" * 64) is None, len(store)
        (True, 0)
    """

    def __init__(self, root: str | os.PathLike[str], *, max_bytes: int = MAX_ATTACHMENT_BYTES,
                 keep_bytes: int = KEPT_BYTES) -> None:
        self.root = Path(root)
        self.max_bytes = max_bytes
        self.keep_bytes = keep_bytes
        self._kept: OrderedDict[str, bytes] = OrderedDict()
        self._kept_size = 0
        # key -> (the object's lstat signature, its refusal): an unchanged unusable object is not
        # read again for each request that carries it (a 32 MiB one would be hashed every time)
        self._refused: dict[str, tuple[tuple[int, int, int], AttachmentError]] = {}
        self._problems: dict[str, str] = {}  # object path -> its warning line, in the order met

    def __repr__(self) -> str:
        return f"AttachmentStore({os.fspath(self.root)!r})"

    def object_path(self, key: str) -> Path | None:
        """Where the object ``key`` (``sha256:<hex>``) is stored; None for a key of another form."""
        match = _ID.fullmatch(key) if isinstance(key, str) else None
        return None if match is None else self.root / "objects" / match[1][:2] / match[1]

    @property
    def missing_hint(self) -> str:
        """The hint of the renderer's error for an object this store lacks."""
        return (f"DSH's attachment store {self.root} has no such object: point --attachments DIR at the store "
                "that has it, or give --capture with the request's capture")

    @property
    def problems(self) -> tuple[str, ...]:
        """One warning line per object looked up that could not be used (corrupt, truncated,
        unreadable, too large, not a file), in the order met: what it is, where, and that the
        requests carrying it were not rendered from their wire body. Control characters in a path
        are written as ``\\uXXXX`` escapes, so each warning is one line."""
        return tuple(self._problems.values())

    def __getitem__(self, key: str) -> bytes:
        found = self._kept.get(key)
        if found is not None:
            self._kept.move_to_end(key)
            return found
        path = self.object_path(key)
        if path is None:
            raise KeyError(key)
        try:
            info = os.lstat(path)
        except OSError as exc:  # not there: the renderer's "no bytes"; a bucket that cannot be searched: an error
            if exc.errno in _ABSENT:
                raise KeyError(key) from None
            raise self._refuse(path, AttachmentError(
                f"cannot look at attachment object {path}: {exc.strerror or exc}",
                dsh_code="ATTACHMENT_READ_FAILED", hint=_HINT)) from None
        signature = (info.st_ino, info.st_size, info.st_mtime_ns)
        refused = self._refused.get(key)
        if refused is not None and refused[0] == signature:  # a fresh error: a renderer locates it
            raise AttachmentError(refused[1].message, dsh_code=refused[1].dsh_code, hint=refused[1].hint)
        try:
            data = self._read(key, path)
        except AttachmentError as exc:
            self._refused[key] = (signature, exc)
            raise self._refuse(path, exc) from None
        self._refused.pop(key, None)
        self._kept[key] = data
        self._kept_size += len(data)
        while self._kept_size > self.keep_bytes and len(self._kept) > 1:
            self._kept_size -= len(self._kept.popitem(last=False)[1])
        return data

    def _refuse(self, path: Path, error: AttachmentError) -> AttachmentError:
        """``error``, its warning line kept (the first one met for ``path``)."""
        code = f" [{error.dsh_code}]" if error.dsh_code else ""
        self._problems.setdefault(os.fspath(path), _one_line(
            f"{error.message}{code}: requests carrying this image are not rendered; their prompt is measured "
            f"from the log's JSON (hint: {error.hint or _HINT})"))
        return error

    def _read(self, key: str, path: Path) -> bytes:
        kind = special_kind(path)  # a FIFO or a device is never opened
        if kind is not None:
            raise AttachmentError(f"attachment object {path} is {kind}, not a file", dsh_code="ATTACHMENT_READ_FAILED",
                                  hint=_HINT)
        try:
            with open_regular(path, what="file") as handle:
                size = os.fstat(handle.fileno()).st_size
                if size > self.max_bytes:
                    raise AttachmentError(f"attachment object {path} holds {size} bytes, more than the "
                                          f"{self.max_bytes}-byte bound of an image", hint=_HINT)
                data = handle.read(self.max_bytes + 1)
        except UnreadableError as exc:
            raise AttachmentError(f"attachment object {path}: {exc.message}", dsh_code="ATTACHMENT_READ_FAILED",
                                  hint=_HINT) from None
        except OSError as exc:
            raise AttachmentError(f"cannot read attachment object {path}: {exc.strerror or exc}",
                                  dsh_code="ATTACHMENT_READ_FAILED", hint=_HINT) from None
        if len(data) > self.max_bytes:
            raise AttachmentError(f"attachment object {path} holds more than the {self.max_bytes}-byte bound of "
                                  "an image", hint=_HINT)
        digest = hashlib.sha256(data).hexdigest()
        if "sha256:" + digest != key:
            raise AttachmentError(f"attachment object {path} failed integrity verification: its bytes hash to "
                                  f"sha256:{digest}, not the digest that names it", dsh_code="ATTACHMENT_CORRUPT",
                                  hint=_HINT)
        return data

    def __iter__(self) -> Iterator[str]:
        """The ids of the objects in the store (listed, not read)."""
        try:
            buckets = sorted(os.listdir(self.root / "objects"))
        except OSError:
            return
        for bucket in buckets:
            try:
                names = sorted(os.listdir(self.root / "objects" / bucket))
            except OSError:
                continue
            for name in names:
                if name[:2] == bucket and _ID.fullmatch("sha256:" + name):
                    yield "sha256:" + name

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _one_line(text: str) -> str:
    """``text`` with each character that is not printable (newlines, ESC, C1, bidi controls, lone
    surrogates) written as its ``\\uXXXX`` escape: a path is not ours to trust."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}"
                   for ch in text)


def attachment_warnings(images: Mapping[str, bytes] | None) -> list[str]:
    """The warnings of the attachment store behind ``images`` (an :class:`AttachmentStore`, or an
    :class:`ImageOverlay` over one): one line per object it refused (:attr:`AttachmentStore.problems`);
    empty for any other mapping or None.

    Example:
        >>> attachment_warnings(None), attachment_warnings(AttachmentStore("no/such/store"))
        ([], [])
    """
    if isinstance(images, ImageOverlay):
        return attachment_warnings(images.first) + attachment_warnings(images.then)
    return list(images.problems) if isinstance(images, AttachmentStore) else []


class ImageOverlay(Mapping[str, bytes]):
    """Image bytes looked up in ``first`` (a capture's), then in ``then`` (the store): the capture's
    bytes win where both have an image (both are the bytes its digest names)."""

    def __init__(self, first: Mapping[str, bytes], then: Mapping[str, bytes]) -> None:
        self.first, self.then = first, then

    def __getitem__(self, key: str) -> bytes:
        found = self.first.get(key)
        return found if found is not None else self.then[key]

    def __iter__(self) -> Iterator[str]:
        yield from self.first
        yield from (key for key in self.then if key not in self.first)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    @property
    def missing_hint(self) -> str | None:
        """The store's hint for an image neither holds."""
        hint = getattr(self.then, "missing_hint", None)
        return hint if isinstance(hint, str) else None
