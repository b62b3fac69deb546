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
found. A capture given with ``--capture`` is every log's. With ``--no-capture`` (the environment
variable :data:`NO_CAPTURE_ENV` set for the command, so worker processes see it too), none is
found: every log is read alone, unless one is given.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..replay import Request
    from ._types import CapturedRequest

__all__ = ["CAPTURE_NAME", "CAPTURE_SEARCH_LEVELS", "NO_CAPTURE_ENV", "capture_for", "find_capture", "held_sessions"]

CAPTURE_NAME = "wire.jsonl"
CAPTURE_SEARCH_LEVELS = 4
#: Set (to anything but empty or ``0``) by ``--no-capture``: no capture is looked for beside a log.
NO_CAPTURE_ENV = "DSH_AUDIT_NO_CAPTURE"


def find_capture(log_path: str | os.PathLike[str]) -> Path | None:
    """The ``wire.jsonl`` beside ``log_path`` or up to four folders above it, or None (always with
    ``--no-capture``: :data:`NO_CAPTURE_ENV`): the nearest
    one there is, whatever it is (a dangling link or a FIFO is not passed over for one further
    up, which would be compared in its place; reading it says what is wrong). It is named
    from ``log_path`` as given (relative when that is: :func:`_as_typed`); the folders searched are
    those above the log's resolved path.

    Example:
        >>> find_capture("/nonexistent/session.jsonl") is None
        True
    """
    if os.environ.get(NO_CAPTURE_ENV, "") not in ("", "0"):  # --no-capture: found ones are ignored
        return None
    folder = Path(os.path.realpath(log_path)).parent  # resolve() raises on a symlink loop; this does not
    for level in range(CAPTURE_SEARCH_LEVELS + 1):
        candidate = folder / CAPTURE_NAME
        if os.path.lexists(candidate):  # not a file (a dangling link, a FIFO): its loader says why, once
            return _as_typed(log_path, level, candidate)
        if folder.parent == folder:
            break
        folder = folder.parent
    return None


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
