"""Finding the capture that belongs to a log when none is given, and the captured body of each
request of a session: what every view of a log (``check``, ``report``, ``breaks``, ``explain``,
``cache``, ``index``) compares it with.

The search rule: a file named ``wire.jsonl`` in the log's own folder, else in each parent folder
in turn, at most :data:`CAPTURE_SEARCH_LEVELS` folders up; the nearest one wins. Four levels reach
a recorded scenario folder from a log in DSH's layout
(``<scenario>/home/sessions/<project>/<session>/session.jsonl.zstd``) and from a decompressed copy
(``<scenario>/session-logs/<id>.jsonl``). A capture found this way may hold other sessions'
requests too: alignment matches requests by their session id header and reports the rest as
foreign, which never fails. And it may hold none of a log's requests (one ``wire.jsonl`` above
many sessions, recorded for one of them): a found capture is the capture only of the sessions it
holds requests of (:func:`held_sessions`); for every other log it is no capture, as when none is
found. So a nearer ``wire.jsonl`` that holds none of a log's requests (empty, or whose requests all
name other sessions) does not hide a farther one within the same four folders that may: the search
goes on past it (:func:`find_capture`). A capture given with ``--capture`` is every log's. With ``--no-capture`` (the environment
variable :data:`NO_CAPTURE_ENV` set for the command, so worker processes see it too), none is
found: every log is read alone, unless one is given.
"""

from __future__ import annotations

import functools
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Protocol

from .._capture_place import CAPTURE_NAME, CAPTURE_SEARCH_LEVELS, capture_folders
from .._stamp import file_stamp
from ..errors import DshAuditError

if TYPE_CHECKING:
    from ..replay import Request
    from ._types import CapturedRequest

__all__ = ["CAPTURE_NAME", "CAPTURE_SEARCH_LEVELS", "NO_CAPTURE_ENV", "capture_folders", "capture_for", "capture_state",
           "captures_ignored", "find_capture", "held_sessions"]

#: Set by ``--no-capture``: no capture is looked for beside a log. Read as click reads a flag's
#: variable (``DSH_AUDIT_<COMMAND>_NO_CAPTURE``): empty, 0, false, no, off (any case) leave captures on.
NO_CAPTURE_ENV = "DSH_AUDIT_NO_CAPTURE"
_FALSE = frozenset({"", "0", "false", "f", "no", "n", "off"})


def find_capture(log_path: str | os.PathLike[str]) -> Path | None:
    """The ``wire.jsonl`` beside ``log_path`` or up to four folders above it, or None (always with
    ``--no-capture``: :data:`NO_CAPTURE_ENV`): the nearest
    one there is, whatever it is (a dangling link or a FIFO is not passed over for one further
    up, which would be compared in its place; reading it says what is wrong), unless it holds none
    of the log's requests (no request, or each names another session) and one further up may:
    then the nearest of those (a log's capture is never hidden by another session's). It is named
    from ``log_path`` as given (relative when that is: :func:`_as_typed`); the folders searched are
    those above the log's resolved path.

    Example:
        >>> find_capture("/nonexistent/session.jsonl") is None
        True
    """
    if captures_ignored():  # --no-capture: found ones are ignored
        return None
    found: list[tuple[int, Path]] = []
    for level, folder in enumerate(capture_folders(log_path)):
        candidate = folder / CAPTURE_NAME
        if os.path.lexists(candidate):  # not a file (a dangling link, a FIFO): its loader says why, once
            found.append((level, candidate))
    if not found:
        return None
    if len(found) > 1:  # a nearer one holding none of this log's requests does not hide a farther one
        session = _log_session(log_path)
        for level, candidate in found:
            if session is None or not _holds_none(candidate, session):
                return _as_typed(log_path, level, candidate)
    level, candidate = found[0]  # the nearest, when every one holds none (it is said as the one found)
    return _as_typed(log_path, level, candidate)


def captures_ignored() -> bool:
    """Whether found captures are ignored (``--no-capture``: :data:`NO_CAPTURE_ENV` set to a true value).

    Example:
        >>> captures_ignored() in (True, False)
        True
    """
    return os.environ.get(NO_CAPTURE_ENV, "").strip().lower() not in _FALSE


def capture_state(log_path: str | os.PathLike[str] | None, given: str | os.PathLike[str] | None) -> str:
    """What the capture a log is compared with is, for a record's options (an index re-reads a log
    when it changes): the capture ``given`` (``--capture``), else the one found beside ``log_path``
    (:func:`find_capture`; not looked for when ``log_path`` is None), by path, size and mtime_ns
    (``-1`` when it cannot be stat'ed), ``none`` when there is none, and ``ignored`` with ``--no-capture``.

    Example:
        >>> capture_state(None, None) in ("none", "ignored")
        True
    """
    if given is not None:
        path: Path | None = Path(os.path.abspath(given))
    elif captures_ignored():
        return "ignored"
    else:
        path = None if log_path is None else find_capture(log_path)
    if path is None:
        return "none"
    try:
        info = os.stat(path)
        size, mtime_ns = info.st_size, info.st_mtime_ns
    except OSError:
        size = mtime_ns = -1
    return f"{os.path.realpath(path)}:{size}:{mtime_ns}"


def _log_session(log_path: str | os.PathLike[str]) -> str | None:
    """The session id in the header of the log at ``log_path``; None when it has none that can be read."""
    from ..log import read_header  # here: naming a capture needs no log reader unless two are found

    header = read_header(log_path)
    return None if header is None else header.id


def _holds_none(candidate: Path, session: str) -> bool:
    """Whether the capture at ``candidate`` surely holds none of the requests of session
    ``session``: it holds no request, or each of its requests names another session (DSH's session
    header). One whose records cannot be read, or a request naming no session (paired by route and
    order), may hold them: not passed over. Bodies are not read: a bad one is said when the capture
    is compared."""
    path = os.path.realpath(candidate)
    stamp = file_stamp(path)  # None: written too recently to remember (or not there): read now, not cached
    named = _named_sessions.__wrapped__(path) if stamp is None else _named_sessions(path, *stamp)
    return named is not None and session not in named


@functools.lru_cache(maxsize=64)
def _named_sessions(path: str, *stamp: int) -> frozenset[str] | None:
    """The session ids the requests of the capture at ``path`` name (keyed by its
    :func:`~dsh_audit._stamp.file_stamp`, ``stamp``: read once while it is unchanged, by the one
    "file changed?" rule, so a same-size rewrite within a clock tick is read again); None when it
    cannot be read or a request names none. Its
    records are read one at a time for their headers alone (:data:`_SESSIONS_NAMED`): no body is
    decoded, and the read stops at the first request naming no session."""
    from ._loaders import _head, _loader_for  # here: the loaders are read only when two captures are found
    from ._reading import _open
    from ._types import SESSION_HEADER

    named: set[str] = set()
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        target = Path(path)
        with _open(target, "capture file") as handle:
            reader = _SESSIONS_NAMED.get(_loader_for(target, None, _head(target, handle)).name)
            if reader is None:
                return None
            handle.seek(0)
            for headers in reader(target, handle):
                session = headers.get(SESSION_HEADER)
                if session is None:
                    return None
                named.add(session)
    except (DshAuditError, OSError, ValueError, MemoryError):
        return None
    return frozenset(named)


def _jsonl_headers(path: Path, handle: BinaryIO) -> Iterator[dict[str, str]]:
    """The headers of each record of the ``wire.jsonl`` open in ``handle``, read by its loader's
    record rule (:func:`._jsonl._jsonl_records`: a torn tail dropped, an object that is no record
    skipped, a CaptureError when no line is a record); no body is decoded."""
    from ._jsonl import _jsonl_records
    from ._reading import Said, _headers_object

    for number, _, _, record in _jsonl_records(path, handle, Said()):
        yield _headers_object(path, f"line {number}", record.get("headers"))


def _har_entry_headers(path: Path, handle: BinaryIO) -> Iterator[dict[str, str]]:
    """The request headers of each entry of the HAR file open in ``handle``, read entry by entry as
    its loader reads them, and its loader's end check (:func:`._har._har_document`: a CaptureError
    when the document around them is no HAR document); no body is decoded."""
    from ..log import parse_json
    from ._har import _entry_request, _har_document
    from ._har_scan import EntriesSpan, har_entries

    span = EntriesSpan()
    for number, (_, data) in enumerate(har_entries(handle, span)):
        yield _entry_request(path, f"entries[{number}]", parse_json(data))[2]
    _har_document(path, handle, span, say_why=False)  # the message is dropped: no whole parse for it


#: The readers of the request headers of a capture file, by format (a key of ``LOADERS``).
_SESSIONS_NAMED: dict[str, Callable[[Path, BinaryIO], Iterator[dict[str, str]]]] = {
    "wire-jsonl": _jsonl_headers,
    "har": _har_entry_headers,
}


def _as_typed(log_path: str | os.PathLike[str], level: int, found: Path) -> Path:
    """The capture ``found`` ``level`` folders above the log, named as the log was (its folder as
    given, ``..`` per level up, the capture's name: ``f1/wire.jsonl`` for ``f1/session.jsonl``), so
    that messages and reports show it as the user gave the log; ``found`` (resolved) when that name
    is not the same file (a symlinked folder on the way).

    Example:
        >>> _as_typed("f1/session.jsonl", 1, Path("/nonexistent/wire.jsonl")) == Path("/nonexistent/wire.jsonl")
        True
    """
    shown = Path(os.path.normpath(Path(log_path).parent.joinpath(*[os.pardir] * level, CAPTURE_NAME)))
    try:
        return shown if os.path.samefile(shown, found) else found
    except (OSError, ValueError):  # nothing readable there (a dangling link): the same folder names it
        return shown if os.path.realpath(shown.parent) == os.path.realpath(found.parent) else found


def capture_for(log_path: str | os.PathLike[str], given: str | os.PathLike[str] | None) -> Path | None:
    """The capture a view compares ``log_path`` with: ``given`` (``--capture``) when set, else
    :func:`find_capture`'s.

    Example:
        >>> capture_for("/nonexistent/session.jsonl", None) is None
        True
    """
    return Path(given) if given is not None else find_capture(log_path)



class _Paired(Protocol):
    """A pairing of a rebuilt request with its captured send (:class:`dsh_audit.capture.Pairing`,
    or a :class:`dsh_audit.capture.RequestDiff` row); either side may be missing."""

    @property
    def request(self) -> Request | None: ...

    @property
    def capture(self) -> CapturedRequest | None: ...


def held_sessions(pairs: Iterable[_Paired]) -> set[str]:
    """The ids of the sessions a capture holds requests of, by its alignment with their requests
    (``pairs``: :func:`dsh_audit.capture.align`'s pairings or the rows compared from them): a
    session a captured request names (DSH's session header), whether a request of it was paired
    with that capture or not, and a session one of whose requests was paired with a captured
    request (a capture with no session header, paired by route and order: pi-ai's sends). A
    capture found beside logs (not given) is the capture of these sessions only: the others'
    requests are in it nowhere, so they are not compared with it (no capture, as when none is
    found), and the unmatched requests of a held session are reported as usual.

    Example:
        >>> held_sessions([])
        set()
    """
    held: set[str] = set()
    for pair in pairs:
        named = pair.capture.session_id if pair.capture is not None else None
        if named is not None:
            held.add(named)
        elif pair.capture is not None and pair.request is not None:
            held.add(pair.request.session_id)
    return held
