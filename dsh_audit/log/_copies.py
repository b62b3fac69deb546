"""Copies of one session: which files may hold one session, which one of them is read, and the
note that says so. Discovery (:func:`~dsh_audit.log.discover`), a watch (``watch/_copies.py``) and
the index (``fleet/_copies.py``) decide by this module, so that every command reads the same file.

The rule: every command counts one session once. Files hold one session when their names say so
and DSH makes those names (a session folder ``session-<uuid>``, DSH's layout; an export named as
DSH names ids, ``session-<uuid>.jsonl``: nothing is read), or, for logs whose names DSH does not
make (exports named as a user likes: ``x.jsonl``; session folders copied under other names, in a
DSH home or outside one: ``old/session.jsonl`` and ``new/session.jsonl``, ``backup``,
``session-….bak``, ``session-sample-chat``), when their headers carry the same session id,
whatever their sizes (a partial copy, compressed or not, in the same folder or another: issue
15's leftover; fuzz round 23); a header naming no session (or a fixture's ``{{sessionId}}``)
leaves a session folder's log the session its folder's name says. Of logs named as DSH names
them, those of one byte size are opened too, and a header read wins over a name. See
:func:`_by_header`. Of files of one session, compared by the lines DSH commits of them
(:func:`read_once`: raw lines up to the first blank one), one with the same lines as another is a
copy (the one :func:`preferred` ranks lower, then one whose name says another session than its
header, :func:`_named_rank`, else the later), and one whose lines are the first lines of
another is a partial copy (an export taken earlier, renamed or not, compressed or not): the
longer is read. Files that differ otherwise are all read, and each such session is listed in a
note (``each listed``). However many files one session is in, each is read at most twice to
compare them (a digest of its lines; fuzz round 20: seven copies were listed seven times and
``latest`` refused them).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple, TypeVar

from ..errors import DshAuditError
from ._decode import iter_lines
from ._header import is_fixture_token
from ._outputs import open_regular
from ._reader import read_header
from ._versions import canonical_generation

__all__ = ["Copy", "LOG_SUFFIXES", "MAX_COPIES", "SESSION_NAME", "copy_name", "copy_notes", "dsh_made",
           "in_layout", "may_be_copies", "preferred", "read_once", "without_copies"]

#: The names DSH gives a session's file (a child snapshot's ``session.N.jsonl`` too).
SESSION_NAME = re.compile(r"^session(\.\d+|\.v[1-9]\d*)?\.jsonl(\.zstd)?$")
LOG_SUFFIXES = (".jsonl", ".jsonl.zstd")

#: The most stored logs of one session the index compares a log it stores with (``fleet/_copies.py``,
#: which compares two files at a time). :func:`read_once` has no such limit: it reads each file of a
#: session at most twice however many there are (comparing them two by two read each as many times
#: as there are others: fuzz round 8, 200 logs of one id took 159 s).
MAX_COPIES = 4

SAME = "the same lines"
LONGER = "the other's lines and more"
_P = TypeVar("_P", str, Path)
#: One file left out: (the file read instead, the copy, :data:`SAME` or :data:`LONGER`).
Copy = tuple[_P, _P, str]


def copy_name(path: Path) -> str | None:
    """The session a file's name says it holds: a canonical session file's folder
    (``<id>/session.jsonl.zstd``), an export's name without its suffix (``<id>.jsonl``); None for a
    child snapshot (``session.1.jsonl``), which shares its folder with its parent."""
    name = path.name
    if SESSION_NAME.match(name):
        return path.parent.name if canonical_generation(name) is not None else None
    for suffix in LOG_SUFFIXES[::-1]:
        if name.endswith(suffix):
            return name[:-len(suffix)]
    return None


def in_layout(path: Path) -> bool:
    """Whether ``path`` is where DSH keeps a session: ``sessions/<project>/<session>/session.jsonl[.zstd]``."""
    return bool(SESSION_NAME.match(path.name)) and path.parent.parent.parent.name == "sessions"


#: The session folder names DSH makes of the ids it makes itself (its ``encodeSegment`` keeps these
#: characters as they are): ``session-`` and a random UUID, with or without its dashes, or a bare
#: UUID (a subagent's). No one names a copy so by chance.
_MADE = re.compile(r"(?:session-)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|session-[0-9a-f]{32}")


def dsh_made(folder: str) -> bool:
    """Whether a session folder's name is one DSH makes of an id it makes (:data:`_MADE`): in a DSH
    home, such a folder's log holds the session its name says, and discovery does not open it to
    learn its id. An id a client chose (``session-sample-chat``) and any name a copier gives
    (``backup``, ``session-….bak``, ``… (copy)``) is not.

    Example:
        >>> made = "session-2b096b61-0a34-4da6-abec-4e87161c2c0b"
        >>> dsh_made(made), dsh_made(f"{made}.bak"), dsh_made("session-sample-chat")
        (True, False, False)
    """
    return _MADE.fullmatch(folder) is not None


def preferred(path: Path) -> int:
    """How much a file is the one DSH reads: 3 where DSH keeps it (:func:`in_layout`) in a folder
    of a name DSH makes (:func:`dsh_made`: a copy in its home under another name is ranked below
    it), 2 where DSH keeps it, 1 named as DSH names it elsewhere (a session folder copied out), 0
    an export."""
    if in_layout(path):
        return 3 if dsh_made(path.parent.name) else 2
    return 1 if SESSION_NAME.match(path.name) else 0


def _named_rank(path: Path, session: str | None) -> int:
    """How much a file's name is the one DSH reads for its session, of files with the same lines
    that ``rank`` ranks alike (:func:`read_once`): 0 when its name (:func:`copy_name`) says another
    session than ``session``, the id its header names (DSH refuses a log whose folder is not the one
    its header's id names: ``assertStoredIdentity``), else 1 (its header says its name's session,
    or names none, or was not read: ``session`` None, nothing says otherwise). Fuzz round 24: of
    ``proj/<id>/`` and ``proj/session-1111…/`` with the same lines, discovery read the second (it
    sorts first) and a watch the first."""
    return int(session is None or copy_name(path) == session)


def _header_id(path: Path) -> str | None:
    """The session id in a log's header; None when it has none that can be read (its reading says
    why), or a snapshot fixture's token (``{{sessionId}}``: DSH's snapshot normaliser gives every
    fixture that id, so it names no session)."""
    header = read_header(path)
    found = None if header is None else header.id
    return None if found is None or is_fixture_token(found) else found


def _by_header(found: Sequence[str], *, renamed: bool) -> set[str]:
    """The logs of ``found`` that :func:`without_copies` groups by their headers' session ids (one
    small read each: the first line, or a compressed log's first frame): every one when logs DSH
    keeps and logs outside its home are found together; else each log whose name is not one DSH
    makes of an id (:func:`dsh_made`), whatever its size: an export (``x.jsonl``, ``backup.jsonl``,
    not ``session-<uuid>.jsonl``), and a session folder copied out under another name
    (``old/session.jsonl`` beside ``new/session.jsonl``, whole, partial or compressed), since
    ``sessions`` and ``watch``, which read every header, count one session in it and its copies
    (fuzz round 23: a partial export, of a size of its own, was counted twice by ``usage``,
    ``index``, ``check`` and ``report``; issue 15's leftover: two copied-out folders of one
    session, each read as the session its folder's name says, doubled its cost); with
    ``renamed`` (discovery), each log DSH keeps in a folder of a name it does not make too (a
    watch compares those itself). Of logs named as DSH names them, only those whose byte size
    another has (``stat`` opens no file): a whole copy under another such name has its
    original's bytes, and its header wins over its name; a session folder of a name DSH makes,
    copied out, is not opened (its name says its session). A home, or a folder of exports, of
    DSH's names alone is not opened, nor is a log found alone: it has no copy."""
    if len(found) < 2:
        return set()
    if len({in_layout(Path(path)) for path in found}) > 1:
        return set(found)
    sized: list[str] = []
    named: set[str] = set()
    for path in found:
        log = Path(path)
        kept = in_layout(log)
        name = copy_name(log)
        if name is None or (kept and not renamed):
            continue  # a child snapshot; a watch's home
        copied_out = not kept and SESSION_NAME.match(log.name) is not None
        if not dsh_made(name):
            named.add(path)
        elif not copied_out:  # a session folder of a name DSH makes, copied out, is never opened
            sized.append(path)
    return named | _same_size(sized)


def _same_size(found: Sequence[str]) -> set[str]:
    """The files of ``found`` whose byte size another of them has (one ``stat`` each, no open); a
    file that cannot be looked at is left out: it is read, and refused, as the log it is."""
    by_size: dict[int, list[str]] = {}
    for path in found:
        try:
            by_size.setdefault(os.stat(path).st_size, []).append(path)
        except OSError:
            pass
    return {path for group in by_size.values() if len(group) > 1 for path in group}


def may_be_copies(found: Sequence[str]) -> set[str]:
    """The logs of ``found`` whose header's session id a caller that groups files by that id (a
    watch) reads before it follows them: every one when logs DSH keeps and logs outside its home are
    found together, else those whose name says the session another's name says, and the logs
    :func:`without_copies` opens for their ids (:func:`_by_header`), so that the files of one
    session found together are compared at once and the one every other command reads is followed
    (fuzz round 23: a watch followed the copy whose header its followers read first, and noted each
    copy as its id came); when some are, every log outside a home that a name may group with
    them too (``session-<uuid>.jsonl`` beside a renamed partial copy of it); and the logs of its
    home in folders of names DSH makes whose byte size another there has (a whole copy in the
    session folder of another id, as discovery opens them: fuzz round 24, the watch learned that
    copy's id only from its follower and said a second note). Other logs of DSH's names are not
    opened for their ids: a watch learns each from its follower's ``started`` note and compares
    the files of one session then, so that a folder of many logs is not opened once more."""
    named = {path: (in_layout(Path(path)), copy_name(Path(path))) for path in found}
    if len({kept for kept, _name in named.values()}) > 1:
        return set(found)
    opened = _by_header(found, renamed=False) | _same_size(
        [path for path, (kept, name) in named.items() if kept and name is not None and dsh_made(name)])
    counts = Counter(name for _kept, name in named.values() if name is not None)
    return opened | {path for path, (kept, name) in named.items()
                     if name is not None and (counts[name] > 1 or (opened and not kept))}


def without_copies(logs: list[_P], *, renamed: bool = False,
                   listed: dict[str, list[_P]] | None = None) -> tuple[list[_P], list[Copy[_P]]]:
    """``logs`` with each session read once (see the module docstring), and the files left out;
    ``listed`` (when given) gets each session found in several files that are each read (their
    lines differ otherwise): its id, from the headers, and those files (:func:`_listed`).

    Which files hold one session: a log in a session folder of a name DSH makes (:func:`dsh_made`),
    in a DSH home or copied out, the one its folder's name says (:func:`copy_name`: nothing is read),
    and an export named as DSH names them (``session-<uuid>.jsonl``) the one its name says; every
    other log, the session id of its header (one more small read of its first line or frame): an
    export of another name, a session folder copied out under a name DSH does not make
    (``old/session.jsonl``, ``new/session.jsonl``), and with ``renamed`` (discovery) a session folder
    of such a name in a DSH home; a session folder's log whose header names no session is its
    folder's. Of the logs named as DSH names them, the header of each whose size another has (a
    whole copy under another such name: the header wins); when files in a DSH home and outside one
    are found together, the header of each (:func:`_by_header`). A child snapshot
    (``session.1.jsonl``), which shares its parent's id, is never a copy. A watch
    (``watch/_copies.py``) groups without ``renamed``: it compares the files of one session in
    session folders of other names in its home itself, the file it follows first."""
    if len(logs) < 2:
        return logs, []
    by_header = _by_header([os.fspath(log) for log in logs], renamed=renamed)
    named: dict[str, list[_P]] = {}
    said: dict[str, str] = {}  # a log whose header was read: the session id it names
    for log in logs:
        if (folder := copy_name(Path(log))) is None:
            continue
        name = _header_id(Path(log)) if os.fspath(log) in by_header else folder
        if name is not None and os.fspath(log) in by_header:
            said[os.fspath(log)] = name
        elif name is None and SESSION_NAME.match(Path(log).name):
            name = folder  # a session folder's header that names no session: its folder says it, as unopened
        if name is not None:
            named.setdefault(name, []).append(log)
    left: list[Copy[_P]] = []
    each: list[_P] = []  # the files of a group of one name or id each read (their lines differ)
    for group in named.values():
        read, copies = read_once(group, rank=lambda log: preferred(Path(log)),
                                 session=lambda log: said.get(os.fspath(log)))
        left.extend(copies)
        each.extend(read if len(read) > 1 else [])
    if listed is not None:
        listed.update(_listed(each, said))
    dropped = {copy for _read, copy, _why in left}
    return [log for log in logs if log not in dropped], left


def _listed(logs: Sequence[_P], said: dict[str, str]) -> dict[str, list[_P]]:
    """Of ``logs`` (files that :func:`without_copies` grouped as one session and read each), the
    session ids their headers name (``said``: those read already; another's header is read now,
    one small read of the few files that need it), each with its files when there are several: a
    name says a session only as a guess (two folders of one name copied from two homes), the
    header says it as ``sessions`` lists it."""
    found: dict[str, list[_P]] = {}
    for log in logs:
        session = said[os.fspath(log)] if os.fspath(log) in said else _header_id(Path(log))
        if session is not None:
            found.setdefault(session, []).append(log)
    return {session: files for session, files in found.items() if len(files) > 1}


def read_once(group: list[_P], *, rank: Callable[[_P], int],
              session: Callable[[_P], str | None] = lambda _path: None) -> tuple[list[_P], list[Copy[_P]]]:
    """Of files that hold one session (in order), those read and those left out: of files with the
    same lines the one ``rank`` puts higher, then one whose name says the session its header names
    (``session``: a file's header id, asked only of files ranked alike; :func:`_named_rank`), else
    the first; of two where one holds the other's lines and more the longer (of several that do,
    the longest, else the first); each copy left out is paired with the file read in its place.
    Compared line by line (raw lines up to the first blank one: DSH's reader stops there,
    :func:`_digests`), but however many there are, each is read at most twice: once for a digest of
    its lines (and of its first 1, 2, 4, 8... lines), and once more only when a shorter file's
    digests say it may be the first lines of this one; a file that cannot be read is read, as
    itself."""
    if len(group) < 2:
        return group, []
    prints = {at: _fingerprint(Path(path)) for at, path in enumerate(group)}
    same: dict[tuple[int, bytes], list[int]] = {}
    for at, found in prints.items():
        if found is not None:
            same.setdefault((found.lines, found.digest), []).append(at)
    heads: dict[int, list[int]] = {}  # the file read of each set of files with the same lines: its copies
    for ats in same.values():
        heads.update(_head(group, ats, rank, session))
    final = _longer(group, {at: found for at, found in prints.items() if at in heads and found is not None})
    left: list[tuple[int, int, str]] = []  # (the copy's place, the place of the file read instead, why)
    for head, copies in heads.items():
        read = final.get(head, head)
        if read != head:
            left.append((head, read, LONGER))
        left.extend((copy, read, SAME if read == head else LONGER) for copy in copies)
    left.sort()
    dropped = {copy for copy, _read, _why in left}
    return ([path for at, path in enumerate(group) if at not in dropped],
            [(group[read], group[copy], why) for copy, read, why in left])


def _head(group: Sequence[_P], ats: list[int], rank: Callable[[_P], int],
          session: Callable[[_P], str | None]) -> dict[int, list[int]]:
    """Of files with the same lines (their places in ``group``), the one read and the others: the
    one ``rank`` puts higher, then (of those ranked alike, their headers asked only then) one
    whose name says its header's session (:func:`_named_rank`), else the first."""
    ranks = {at: rank(group[at]) for at in ats}
    top = [at for at in ats if ranks[at] == max(ranks.values())]
    if len(top) > 1:  # their headers are asked only now
        top = [max(top, key=lambda at: (_named_rank(Path(group[at]), session(group[at])), -at))]
    head = top[0]
    return {head: [at for at in ats if at != head]}


class _Print(NamedTuple):
    """A file's lines as :func:`read_once` compares them (those before its first blank line,
    :func:`_digests`): how many, a digest of all of them, and of the first 1, 2, 4, 8... of them."""

    lines: int
    digest: bytes
    checkpoints: dict[int, bytes]


def _digests(path: Path, at: set[int]) -> tuple[int, bytes, dict[int, bytes]] | None:
    """The count of ``path``'s lines, the digest of all of them and that of its first N lines for
    each N of ``at``; None when it cannot be read (its reading says why later). Its lines end at
    its first blank line: DSH's reader (``SessionLogScanner``) takes a blank line for an unparsable
    record and commits nothing from it on (the rest is a crash-damaged tail, or, a ``turn/end``
    after it, a corrupt log), as the reader here does; an export with a blank line at its end
    holds the lines of its log, not more (fuzz round 24: such an export was read instead of DSH's
    own log, or beside it, one session counted twice)."""
    state = hashlib.blake2b(digest_size=16)
    found: dict[int, bytes] = {0: state.digest()} if 0 in at else {}
    count = 0
    try:
        with open_regular(path) as stream:
            for line in iter_lines(stream, os.fspath(path), []):
                if not line.raw:
                    break  # a run of blank lines: DSH commits no line from here on
                state.update(b"%d\n" % len(line.raw))
                state.update(line.raw)
                count += 1
                if count in at:
                    found[count] = state.copy().digest()
    except (DshAuditError, OSError):
        return None
    return count, state.digest(), found


def _fingerprint(path: Path) -> _Print | None:
    """:class:`_Print` of ``path``, from one reading; None when it cannot be read."""
    read = _digests(path, {1 << power for power in range(63)})
    return None if read is None else _Print(*read)


def _longer(group: Sequence[_P], prints: dict[int, _Print]) -> dict[int, int]:
    """Of files with different lines (by their place in ``group``), which are the first lines of
    another: each such file's place and the longest file holding it (the first of equal ones).
    Only a longer file whose digest of its first N lines (N the largest power of two that a shorter
    file's count reaches) is the shorter file's is read again, once for all the shorter ones."""
    reaching: dict[tuple[int, bytes], list[int]] = {}  # a digest of the first N lines: the files that have it
    for at, each in prints.items():
        reaching.setdefault((0, b""), []).append(at)
        for n, digest in each.checkpoints.items():
            reaching.setdefault((n, digest), []).append(at)
    wanted: dict[int, list[int]] = {}  # a longer file: the shorter files it may hold
    for short, one in prints.items():
        n = 1 << (one.lines.bit_length() - 1) if one.lines else 0
        for long in reaching.get((n, one.checkpoints.get(n, b"")), []):
            if prints[long].lines > one.lines:
                wanted.setdefault(long, []).append(short)
    final: dict[int, int] = {}
    for long in sorted(wanted, key=lambda at: (-prints[at].lines, at)):  # the first holding a file is the longest
        shorts = [short for short in wanted[long] if short not in final]
        read = _digests(Path(group[long]), {prints[short].lines for short in shorts}) if shorts else None
        if read is None:
            continue
        for short in shorts:
            if read[2].get(prints[short].lines) == prints[short].digest:
                final[short] = long
    return final


class _Said(NamedTuple):
    """One session's note (:func:`copy_notes`), and what a note of several sessions takes of it:
    how many files the session is in, the reasons of its copies, the folder its files share (``""``: none
    said), the first file read and its first copy as the note names them."""

    files: int
    whys: tuple[str, ...]
    shared: str
    read: str
    copy: str
    text: str


def copy_notes(left: Sequence[Copy[_P]], *, files: int | None = None,
               listed: Mapping[str, Sequence[_P]] | None = None) -> list[str]:
    """The notes for the files left out, one per session: ``one session in N files [under
    SHARED/]: read READ, not COPY, COPY (WHY)[, not COPY (WHY)]`` (the copies of one reason
    together, each as the file read holds it: a copy of a copy that was itself left out for a
    longer file holds fewer lines than the file read; ``two files`` for two). Without ``files``
    (discovery), a session is the file read and its copies, or, for each session of ``listed``
    (its id: its files, each read, as :func:`without_copies` gives them), those files and their
    copies, each file read its clause (``; read ...``); the notes of several sessions with copies
    left out for the same reasons are said once (:func:`_said_once`). With ``files`` (how many files
    the session is in: a caller that compares the files of one session), one note for all.
    Then, for each session of ``listed``, ``session ID is in N files, each listed: FILE, FILE``:
    the note ``sessions`` says of a session whose files differ, said by every command that reads
    them (counted twice). Every command says one session's copies in these words (fuzz round 23:
    one note per copy left out, "read A, not B" beside "read C, not A", and a watch's note again
    as each copy's id came).

    Example:
        >>> copy_notes([("r/a.jsonl", "r/b.jsonl", SAME), ("r/a.jsonl", "r/c.jsonl", LONGER)])
        ["one session in 3 files under r/: read a.jsonl, not b.jsonl (the same lines), not c.jsonl (the other's lines and more)"]
        >>> copy_notes([], listed={"session-x": ["a/session.jsonl", "b/x.jsonl"]})
        ['session session-x is in 2 files, each listed: a/session.jsonl, b/x.jsonl']
    """
    each: list[str] = [f"session {session} is in {len(paths)} files, each listed: "
                        f"{', '.join(os.fspath(path) for path in paths)}" for session, paths in (listed or {}).items()]
    if not left:
        return each
    final: dict[str, tuple[str, str]] = {}  # copy -> (the file read in the end, why as that file holds it)
    for read, copy, why in reversed(left):  # a file read at one step is left out at a later one
        at, more = final.get(os.fspath(read), (os.fspath(read), SAME))
        final[os.fspath(copy)] = (at, LONGER if LONGER in (why, more) else why)
    clauses: dict[str, dict[str, list[str]]] = {}  # each file read in the end: its copies by why
    for _read, copy, _why in left:
        at, why = final[os.fspath(copy)]
        clauses.setdefault(at, {}).setdefault(why, []).append(os.fspath(copy))
    clauses = {at: dict(sorted(whys.items(), key=lambda item: _why_order(item[0]))) for at, whys in clauses.items()}
    if files is not None:
        return [_said(files, list(clauses.items())).text, *each]
    home = {os.fspath(path): session for session, paths in (listed or {}).items() for path in paths}
    sessions: dict[tuple[bool, str], list[str]] = {}  # (listed, its id or the file read): the files read
    for at in clauses:
        sessions.setdefault((at in home, home.get(at, at)), []).append(at)
    said: list[_Said] = []
    for (by_id, key), reads in sessions.items():
        left_out = sum(len(copies) for read in reads for copies in clauses[read].values())
        said.append(_said((len((listed or {})[key]) if by_id else 1) + left_out, [(read, clauses[read]) for read in reads]))
    return [*_said_once(said), *each]


def _said(files: int, clauses: list[tuple[str, dict[str, list[str]]]]) -> _Said:
    """``one session in FILES [under SHARED/]: read R, not C, C (WHY)[, not ...][; read ...]`` of
    ``files`` (how many files the session is in): every path whole, the folder they all share
    said once (a DSH home's path and an export's beside it share all but their last few parts)."""
    named = [*(read for read, _ in clauses), *(copy for _, whys in clauses for copies in whys.values() for copy in copies)]
    try:
        shared = os.path.commonpath([os.path.dirname(name) for name in named])
    except ValueError:  # absolute and relative paths: nothing to say once
        shared = ""
    if shared in (os.curdir, os.sep):
        shared = ""

    def short(name: str) -> str:
        return os.path.relpath(name, shared) if shared else name

    text = "; ".join(f"read {short(read)}, " + ", ".join(f"not {', '.join(map(short, copies))} ({why})"
                                                         for why, copies in whys.items()) for read, whys in clauses)
    where = f" under {shared}{os.sep}" if shared else ""
    kinds = {why for _, whys in clauses for why in whys}
    first, whys = clauses[0]
    return _Said(files, tuple(sorted(kinds, key=_why_order)), shared, short(first),
                 short(next(iter(whys.values()))[0]), f"one session in {'two files' if files == 2 else f'{files} files'}"
                                                      f"{where}: {text}")


def _why_order(why: str) -> tuple[bool, bool, str]:
    """The order a note says the reasons of copies in: :data:`SAME`, :data:`LONGER`, then others;
    whatever order the copies were found in (a watch compares them in two steps: fuzz round 24)."""
    return why != SAME, why != LONGER, why


def _said_once(said: list[_Said]) -> list[str]:
    """The notes of ``said``, those of several sessions whose copies were left out for the same
    reasons said once, in the place of the first: how many sessions in how many files, the first
    one's file read and a copy as an example, and how to see the others' (no option lists them: a
    PATH of their own). A fleet of copies gives one note, not one a session."""
    kinds: dict[tuple[str, ...], list[_Said]] = {}
    for one in said:
        kinds.setdefault(one.whys, []).append(one)
    notes: list[str] = []
    for one in said:
        alike = kinds[one.whys]
        if len(alike) < 2:
            notes.append(one.text)
        elif alike[0] is one:
            head = f"{len(alike)} sessions found in two files each" if all(each.files == 2 for each in alike) else \
                f"{len(alike)} sessions found in {sum(each.files for each in alike)} files"
            where = f"under {one.shared}{os.sep}: " if one.shared else ""
            notes.append(f"{head} ({', or '.join(one.whys)}): each read once, from the file DSH reads; e.g. {where}"
                         f"read {one.read}, not {one.copy} (the others alike; the folder holding one session's "
                         "files as PATH names them)")
    return notes
