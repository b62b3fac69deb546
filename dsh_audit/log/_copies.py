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
longer is read. Of files whose lines differ otherwise, some with packed chunk rows and some
without, those whose events, as the reader yields them, are the same (every field of each event
but its line: one session written with packed chunk rows and without, issue 15) are one session
too, read from the file those ranks pick, and one whose events are the first events of another
is a partial copy of it (:func:`_same_events`); only these are decoded. Files that differ
otherwise are all read, and each such session is listed in a note (``each listed``). However many
files one session is in, each is read at most twice to compare their lines, and those decoded at
most twice to compare their events (a digest of all, and of the first 1, 2, 4, 8...; a file read
again only when a shorter one's digests say it may hold it: fuzz round 20, seven copies were
listed seven times and ``latest`` refused them). The notes' words: :mod:`._copy_notes`.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from ._copy_notes import EVENTS, LONGER, MORE_EVENTS, SAME, Copy, _P, copy_notes, through
from ._header import is_fixture_token
from ._prints import Print, events_at, events_print, fingerprint, longer
from ._reader import read_header
from ._versions import canonical_generation

__all__ = ["Copy", "LOG_SUFFIXES", "MAX_COPIES", "SESSION_NAME", "copy_name", "copy_notes", "dsh_made",
           "in_layout", "may_be_copies", "preferred", "read_once", "without_copies"]

#: The names DSH gives a session's file (a child snapshot's ``session.N.jsonl`` too).
SESSION_NAME = re.compile(r"^session(\.\d+|\.v[1-9]\d*)?\.jsonl(\.zstd)?$")
LOG_SUFFIXES = (".jsonl", ".jsonl.zstd")

#: The most stored logs of one session the index compares a log it stores with (``fleet/_copies.py``,
#: which compares two files at a time). :func:`read_once` has no such limit: it reads each file of a
#: session at most twice for its lines (and one it decodes at most twice for its events) however
#: many there are (comparing them two by two read each as many times as there are others: fuzz
#: round 8, 200 logs of one id took 159 s).
MAX_COPIES = 4


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
    lines and events differ otherwise): its id, from the headers, and those files (:func:`_listed`).

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
    each: list[_P] = []  # the files of a group of one name or id each read (their lines and events differ)
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
    the longest, else the first); of those left, when some hold packed chunk rows and some do not,
    files with the same events as the one these ranks pick, or the first events of another's
    (:func:`_same_events`); each copy left out is paired with the file read in its place.
    Compared line by line (raw lines up to the first blank one: DSH's reader stops there,
    :func:`~._prints.fingerprint`), but however many there are, each is read at most twice for
    that: once for a digest of its lines (and of its first 1, 2, 4, 8... lines), and once more
    only when a shorter file's digests say it may be the first lines of this one; those compared
    by their events are decoded by the same rule. A file that cannot be read is read, as itself."""
    if len(group) < 2:
        return group, []
    prints = {at: fingerprint(Path(path)) for at, path in enumerate(group)}
    same: dict[tuple[int, bytes], list[int]] = {}
    for at, found in prints.items():
        if found is not None:
            same.setdefault((found.lines, found.digest), []).append(at)
    heads: dict[int, list[int]] = {}  # the file read of each set of files with the same lines: its copies
    for ats in same.values():
        heads.update(_head(group, ats, rank, session))
    final = longer(group, {at: found for at, found in prints.items() if at in heads and found is not None})
    left: list[tuple[int, int, str]] = []  # (the copy's place, the place of the file read instead, why)
    for head, copies in heads.items():
        read = final.get(head, head)
        if read != head:
            left.append((head, read, LONGER))
        left.extend((copy, read, SAME if read == head else LONGER) for copy in copies)
    reads = [at for at in heads if at not in final]
    left = _same_events(group, left, reads, {at: found for at, found in prints.items() if found is not None},
                        rank, session)
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


def _same_events(group: Sequence[_P], left: list[tuple[int, int, str]], reads: list[int], prints: dict[int, Print],
                 rank: Callable[[_P], int], session: Callable[[_P], str | None]) -> list[tuple[int, int, str]]:
    """``left`` (each copy's place, the place of the file read instead, why), and of ``reads`` (the
    places of files read so far, whose lines differ; ``prints``, their lines' prints) those whose
    events are the same as another's (:func:`~._prints.events_print`) left out too, for the one
    :func:`_head` picks (DSH's file, then one whose name says its header's session, else the
    first), and those whose events are the first events of another's for the longest such
    (:func:`~._prints.longer`, as of lines), each with its own copies. Issue 15: one session written
    with packed chunk rows (``text-chunks``) and without (``assistant/chunk`` events) was read
    twice ("each listed"); review 41: an earlier export of it too. Only when some of ``reads``
    hold packed rows and some do not (other lines, and only then may their events be the same)
    are they read for their events: each once, and again only as :func:`~._prints.longer` reads."""
    if len(reads) < 2 or len({prints[at].packed for at in reads}) < 2:
        return left
    by_events: dict[tuple[str, bytes], list[int]] = {}
    events: dict[int, Print] = {}  # the print of each file's events, by its place
    for at in reads:
        found = events_print(Path(group[at]))
        if found is not None:
            by_events.setdefault((found[0], found[1].digest), []).append(at)
            events[at] = found[1]
    moved: dict[int, tuple[int, str]] = {}  # a file left out for its events: the file read instead, why
    heads: dict[str, list[int]] = {}  # of each session id, the files read of each set with the same events
    for (sid, _digest), ats in by_events.items():
        head, copies = next(iter(_head(group, ats, rank, session).items()))
        moved.update((copy, (head, EVENTS)) for copy in copies)
        heads.setdefault(sid, []).append(head)
    for ats in heads.values():
        for short, long in longer(group, {at: events[at] for at in ats}, read=events_at).items():
            moved[short] = (long, MORE_EVENTS)
    moved = {copy: _final(moved, copy) for copy in moved}
    return [*((copy, *_moved(moved, read, why)) for copy, read, why in left),
            *((copy, read, why) for copy, (read, why) in moved.items())]


def _final(moved: dict[int, tuple[int, str]], copy: int) -> tuple[int, str]:
    """The file read in the end in place of ``copy`` (left out for its events, ``moved``) and why:
    a file left out for the same events as one left out for a longer one holds fewer events."""
    read, why = moved[copy]
    while read in moved:
        read, more = moved[read]
        why = through(why, more)
    return read, why


def _moved(moved: dict[int, tuple[int, str]], read: int, why: str) -> tuple[int, str]:
    """The file read in the end in place of a copy left out for ``read`` (for ``why``), ``read``
    itself perhaps left out for its events (``moved``), and why (:func:`~._copy_notes.through`)."""
    if read not in moved:
        return read, why
    final, more = moved[read]
    return final, through(why, more)
