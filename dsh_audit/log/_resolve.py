"""Resolving a session reference (``dsh-audit replay latest``, a session id or a unique prefix
of one, or a path) to the one log it names, among those :func:`discover` finds under a sessions
root."""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable
from pathlib import Path

from .._listing import listed
from ..errors import UnreadableError, UsageError
from ._copies import copy_name, copy_notes, preferred, read_once
from ._discover import default_sessions_root, discover, is_folder
from ._header import is_fixture_token
from ._outputs import open_regular
from ._reader import read_header
from ._span import time_span

__all__ = ["names_session", "prefix_forms", "resolve_session", "unescape_shown"]

#: An escape the CLI's one escaping function writes (:func:`dsh_audit.report.terminal.terminal_text`): a
#: character as ``\uXXXX`` or ``\UXXXXXXXX``, a byte that was not UTF-8 as ``\xNN``.
_SHOWN_ESCAPE = re.compile(r"\\u([0-9a-f]{4})|\\U([0-9a-f]{8})|\\x([0-9a-f]{2})")
#: The mark of an id a table cut (:func:`dsh_audit.report.terminal.id_prefixes`).
_CUT = "…"


def unescape_shown(text: str) -> str:
    r"""``text`` with the escapes a table or message writes for a character it cannot show
    (:func:`dsh_audit.report.terminal.terminal_text`: ``\u001b``, ``\U0001f600``; ``\xNN``, a byte that was
    not UTF-8, as its surrogateescape character) read back: a session id a table showed, typed
    back. An escape of a code point no string holds is left as typed.

    Example:
        >>> unescape_shown(r"session-ctl\u001b[31m…"), unescape_shown(r"a\xff\u202e")
        ('session-ctl\x1b[31m…', 'a\udcff\u202e')
        >>> unescape_shown(r"\U00110000 \x")
        '\\U00110000 \\x'
    """
    def back(match: re.Match[str]) -> str:
        if match[3] is not None:
            return chr(0xDC00 + int(match[3], 16))
        code = int(match[1] or match[2], 16)
        return chr(code) if code <= 0x10FFFF else match[0]

    return _SHOWN_ESCAPE.sub(back, text) if "\\" in text else text


def prefix_forms(session_id: str) -> tuple[str, ...]:
    """The texts a prefix typed for ``session_id`` may begin: the id, and the id without its
    ``session-``. The one rule of what a prefix names, for :func:`_starts` and for the tables that
    cut ids to a prefix naming one session (:func:`dsh_audit.report.terminal.id_prefixes`).

    Example:
        >>> prefix_forms("session-abcdefgh-1"), prefix_forms("abcdefghij-2")
        (('session-abcdefgh-1', 'abcdefgh-1'), ('abcdefghij-2',))
    """
    bare = session_id.removeprefix("session-")
    return (session_id,) if bare == session_id else (session_id, bare)


def _starts(session_id: str, prefix: str) -> bool:
    """Whether ``prefix`` begins ``session_id``, with or without its ``session-``."""
    return any(form.startswith(prefix) for form in prefix_forms(session_id))


def _forms(ref: str) -> list[str]:
    """A session reference as typed, and (when it holds escapes) as the id a table escaped."""
    plain = unescape_shown(ref)
    return [ref] if plain == ref else [ref, plain]


#: The headers :func:`names_session` read last (its reference, the folder, what it found), for
#: :func:`resolve_session` to look the same reference up in without scanning the folder again.
_scanned: list[tuple[str, Path, tuple[list[tuple[str, int, Path]], list[UnreadableError]]]] = []


def _scan(ref: str, folder: Path) -> tuple[list[tuple[str, int, Path]], list[UnreadableError]]:
    """:func:`_header_ids` of the logs under ``folder``, not read again for ``ref`` when
    :func:`names_session` has just found it names a session there: :func:`resolve_session` reads
    them next, as the CLI asks of a path-like id (`session-ctl\\u001b…`); kept for that one reuse."""
    last = _scanned.pop() if _scanned else None
    if last is not None and last[:2] == (ref, folder):
        return last[2]
    return _header_ids(discover([folder], copies=False))  # copies: compared for the one session named


def _header_ids(logs: Iterable[Path]) -> tuple[list[tuple[str, int, Path]], list[UnreadableError]]:
    """``(session id, createdAt, path)`` of each log whose header can be read, and why each log
    that cannot be opened (no permission, a FIFO, a symlink loop) cannot be; a file that opens
    but holds no DSH header (another agent's log, a damaged one) is skipped."""
    found: list[tuple[str, int, Path]] = []
    unopened: list[UnreadableError] = []
    for path in logs:
        try:
            open_regular(path).close()
        except UnreadableError as exc:
            unopened.append(exc)
            continue
        header = read_header(path)
        if header is not None:
            found.append((header.id, header.created_at if isinstance(header.created_at, int) else 0, path))
    return found, unopened


def _latest(paths: list[Path]) -> Path:
    """Of ``paths``, the log with the newest last activity; of equal ones (or none with a time) the
    first by path."""
    def last(path: Path) -> float:
        span = time_span(path)
        return float("-inf") if span is None else span[1]

    return min(sorted(paths), key=lambda path: -last(path))


def _names(ref: str, path: object) -> bool:
    """Whether a session reference ``ref`` is the name of the log ``path``'s session folder
    (``session-ID/session.jsonl``) or of the file itself (``session-ID.jsonl``), with or without
    its ``session-``: the name the user typed, for a log whose header cannot be read.

    Example:
        >>> _names("noread", "p/session-noread/session.jsonl"), _names("session-x", "f/session-x.jsonl.zstd")
        (True, True)
    """
    if path is None or ref in ("", "session-"):
        return False
    log = Path(str(path))
    stem = log.name.removesuffix(".zstd").removesuffix(".jsonl")
    return any(name in (ref, f"session-{ref}") for name in (log.parent.name if stem == "session" else "", stem))


def names_session(ref: str, *, root: str | os.PathLike[str] | None = None) -> bool:
    r"""Whether ``ref``, which names no file, is a session id under ``root`` (default:
    :func:`default_sessions_root`) as ``sessions`` shows it: whole, with its escapes
    (:func:`unescape_shown`), or cut (``…``). A reference with a path's form (``../../etc``,
    ``session-ctl\u001b[31m…``: a ``/`` or ``\``) is a path unless a header's id is so shown: the
    CLI then looks it up as an id (:func:`resolve_session`) instead of saying no such file.

    Example:
        >>> names_session("session-sample-chat", root="sample_logs/sessions"), names_session("a/b", root="sample_logs")
        (True, False)
        >>> names_session("sample-chat\u2026", root="sample_logs/sessions")  # a cut without its session-, as resolved
        True
    """
    folder = Path(root) if root is not None else default_sessions_root()
    if os.path.lexists(ref) or not is_folder(folder):
        return False
    scanned = _scan(ref, folder)
    forms = _forms(ref)
    cuts = [form.removesuffix(_CUT) for form in forms if form.endswith(_CUT) and form != _CUT]
    named = any(sid in forms or any(_starts(sid, cut) for cut in cuts) for sid, _, _ in scanned[0])
    if named:
        _scanned.append((ref, folder, scanned))
    return named


def resolve_session(ref: str, *, root: str | os.PathLike[str] | None = None,
                    notes: list[str] | None = None) -> Path:
    """The one session log ``ref`` names: a path (file or folder), ``latest``, a session id, or a
    unique prefix of one (with or without its ``session-``, or its trailing ``…``: an id as ``sessions``
    cuts it), looked up under ``root`` (default: :func:`default_sessions_root`). An id is also
    found as a table escapes it (``session-ctl\\u001b[31m…``: :func:`unescape_shown`) when no id
    is the reference as typed; a path-like id (``../../etc``) is found when no such path exists.

    ``latest`` is the session ``dsh-audit sessions`` lists first: the newest last activity by the
    log's own timestamps (:func:`time_span`, which reads only the log's two ends), as DSH's own
    session list orders by last update (``host/apiproxy/src/api-proxy.ts:1728``); of equal ones
    the first by path, as there. A session present as several files is read from the one the rule
    of copies reads (:func:`~dsh_audit.log._copies.read_once`, as :func:`discover` does), and
    ``notes`` gets discovery's note naming the copies left out; files of one session that differ
    otherwise are refused (which one is meant cannot be told).

    Raises:
        UsageError: ``ref`` names no session, or several (the message lists up to five), or one
            in several files that differ (the message names them).
        UnreadableError: a path does not exist and there is no sessions folder to look in; or a
            log under it cannot be opened and ``ref`` is ``latest`` or no session's exact id.

    Example:
        >>> resolve_session("session-sample-chat", root="sample_logs/sessions").name
        'session.jsonl.zstd'
    """
    if os.path.lexists(ref) or ref == "":
        logs = discover([ref])
        if len(logs) != 1:
            raise UsageError(f"expected one session log, found {len(logs)}", path=ref,
                             hint="point at a single session.jsonl[.zstd] file, or pass its session id")
        return logs[0]
    folder = Path(root) if root is not None else default_sessions_root()
    if not is_folder(folder):
        raise UnreadableError("no such file, and no sessions folder to look the session id up in", path=ref,
                              hint=f"pass a log file, or set DSH_HOME so that {folder} exists")
    known, unopened = _scan(ref, folder)
    forms = _forms(ref)
    exact = _exact(ref, forms, known, folder)
    named = [exc for exc in unopened if _names(ref, exc.path)] if not exact and ref != "latest" else []
    if len(named) == 1 and named[0].path is not None:  # its folder or file is named so: the log the user meant
        return Path(named[0].path)  # read as a PATH given: the command says it cannot be read (DSH801)
    if unopened and (ref == "latest" or not exact):  # the answer may be the log that cannot be read
        first = unopened[0]
        others = f" (and {len(unopened) - 1} more log(s))" if len(unopened) > 1 else ""
        what = "which session is latest" if ref == "latest" else f"which session '{ref}' names"
        raise UnreadableError(f"{first.message}{others}, so {what} cannot be told", path=first.path,
                              hint="make it readable or move it out of the sessions folder, or pass the "
                                   "log's path instead of a session id")
    if ref == "latest" and known:
        latest = _latest([path for _, _, path in known])
        return _one_file(next(k[0] for k in known if k[2] == latest), known, notes, first=latest)
    prefixes = [form.removesuffix(_CUT) or form for form in forms]  # an id as `sessions` cuts it, pasted whole
    matches = exact or [k for k in known if any(_starts(k[0], prefix) for prefix in prefixes)]
    ids = sorted({k[0] for k in matches})
    if len(ids) == 1:
        return _one_file(ids[0], matches, notes)
    if not ids:
        raise UsageError(f"no session log, session id or id prefix '{ref}' here", path=str(folder),
                         hint="run `dsh-audit sessions` to see the ids, or pass a path")
    shown = listed(ids, shown=5)
    raise UsageError(f"session id prefix '{ref}' is ambiguous: {shown}", path=str(folder),
                     hint="type more of the id")


def _exact(ref: str, forms: list[str], known: list[tuple[str, int, Path]], folder: Path
           ) -> list[tuple[str, int, Path]]:
    r"""The ``known`` logs whose id is ``ref`` as typed, else as a table escaped it (``forms``).

    Raises:
        UsageError: both name a session, and not the same: a table shows ``session-a\u001b`` for
            the id holding those characters and for the one holding an escape character alike
            (:func:`~dsh_audit.report.terminal.terminal_text` shows a backslash as it is), so
            which one was typed cannot be told.
    """
    typed = [k for k in known if k[0] == ref]
    read_back = [k for k in known if k[0] in forms and k[0] != ref]
    if typed and read_back:
        raise UsageError(f"session id '{ref}' is ambiguous: it names {typed[0][0]} as typed and "
                         f"{read_back[0][0]} with its escapes read back", path=str(folder),
                         hint="`dsh-audit sessions --json` gives each whole id: pass the log's path")
    return typed or read_back


def _one_file(session_id: str, known: list[tuple[str, int, Path]], notes: list[str] | None, *,
              first: Path | None = None) -> Path:
    """The file read of session ``session_id``, of the ``known`` logs whose header names it, by the
    one rule of copies (:mod:`~dsh_audit.log._copies`, as discovery reads it and ``sessions`` lists
    it): one file, or the one its copies hold no more than, with discovery's note naming the copies
    left out (in ``notes``). A child snapshot (``session.1.jsonl``, its parent's id) is no file of
    the session beside its parent; a snapshot fixture's token (``{{sessionId}}``) names no session:
    ``first`` (the file ``latest`` found), else the first file is read.

    Raises:
        UsageError: the session is in several files that differ (neither holds the other's lines):
            which one is meant cannot be told, and each may tell another story.
    """
    files = [path for found, _, path in known if found == session_id]
    if is_fixture_token(session_id):
        return first or files[0]
    files = [path for path in files if copy_name(path) is not None] or files
    read, left = read_once(files, rank=preferred, session=lambda _path: session_id)  # each file's header names it
    if len(read) == 1:
        if notes is not None:
            notes.extend(copy_notes(left, files=len(files)))
        return read[0]
    why = " that differ (neither holds the other's lines)"
    shown = listed([shlex.quote(str(path)) for path in read], shown=5)
    raise UsageError(f"session {session_id} is in {len(read)} files{why}: {shown}",
                     hint="pass the path of the log you mean; `dsh-audit sessions` lists each file")
