"""A log's prints, by which the files of one session are compared (:mod:`._copies`): a digest of
its lines (those DSH commits: up to its first blank one) and of its first 1, 2, 4, 8... lines, which
tell a copy and a partial copy from one reading (:func:`fingerprint`, :func:`longer`), and whether
it holds packed chunk rows; and, only for files whose lines differ, one packed and one not, the
same of the events the reader yields of it (:func:`events_print`): one session written with packed
chunk rows and without has other lines, the same events.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
import re
from collections.abc import Callable, Sequence
from operator import attrgetter
from pathlib import Path
from typing import NamedTuple

from .._stamp import Stamp, file_stamp
from ..errors import DshAuditError
from ..jsjson import stringify_bytes
from ._decode import Line, iter_lines, parse_line
from ._format import begins_as_header
from ._outputs import open_regular
from ._reader import read_log
from ._types import CHUNK_ROW_TYPES, Event

__all__ = ["Print", "events_at", "events_print", "fingerprint", "longer"]

#: Every field of an event but the line it was read from (packed in a row, several events share
#: one): a field added to :class:`~._types.Event` is compared with the others, never missed
#: (review 41: ``surfaceOp`` was not, and two logs whose requests differ were one session).
_COMPARED = attrgetter(*(field.name for field in dataclasses.fields(Event) if field.name != "line"))
#: The counts of lines or events whose digests a print keeps: 1, 2, 4, 8...
_POWERS = frozenset(1 << power for power in range(63))


class Print(NamedTuple):
    """A file's lines (or events: :func:`events_print`) as :func:`~._copies.read_once` compares them
    (its lines those before its first blank line, :func:`_digests`): how many, a digest of all of
    them, of the first 1, 2, 4, 8... of them, and whether one of its lines is a packed chunk row."""

    lines: int
    digest: bytes
    checkpoints: dict[int, bytes]
    packed: bool = False


def events_print(path: Path) -> tuple[str, Print] | None:
    """The session id and the :class:`Print` of the header and events the reader yields of ``path``
    (:func:`_events_of`), kept while the file is unchanged (:func:`~dsh_audit._stamp.file_stamp`: a
    watch compares the files of a session at each change; one written in the last 2 s is read
    again); None when the reader refuses the file (its header, its committed lines, each
    event's shape and envelope: what :func:`~._reader.read_log` checks; reading it says why later).
    The surface fold is not run: it refuses by the events' fields alone, all of them compared, so a
    log it refuses never has the events of one it reads (review 41)."""
    name = os.fspath(path)
    stamp = file_stamp(name)
    return _events_of(name, _POWERS) if stamp is None else _remembered(name, stamp)


@functools.lru_cache(maxsize=4096)  # an entry is a few dozen bytes: a fleet's sessions fit
def _remembered(path: str, _stamp: Stamp) -> tuple[str, Print] | None:
    """:func:`events_print` of the file ``path`` while it has that stamp."""
    return _events_of(path, _POWERS)


def events_at(path: Path, at: set[int]) -> Print | None:
    """The :class:`Print` of ``path``'s events with the digests of its first N events for each N
    of ``at`` (:func:`longer`'s ``read``), read now; None as :func:`events_print`."""
    found = _events_of(os.fspath(path), at)
    return None if found is None else found[1]


def _events_of(path: str, at: frozenset[int] | set[int]) -> tuple[str, Print] | None:
    """The session id and :class:`Print` of ``path``'s events, its checkpoints at each count of
    ``at``: its header as read (parsed and as written), then each event's fields
    (:data:`_COMPARED`) as JSON (:func:`~dsh_audit.jsjson.stringify_bytes`), the way it was written
    (packed in a row or not) left out. Read as DSH reads it, not leniently: a header DSH refuses
    (a fixture's without ``delegationDepth``) is not the same as one it reads, though both name
    no event (the corpus's header-only snapshot fixtures of one id)."""
    state = hashlib.blake2b(digest_size=16)
    found: dict[int, bytes] = {}
    count = 0
    try:
        with read_log(path) as log:
            state.update(repr(log.header).encode("utf-8", "surrogatepass") + b"\n")
            state.update(stringify_bytes(log.header.raw) + b"\n")
            if 0 in at:
                found[0] = state.digest()
            for event in log.events():
                data = stringify_bytes(list(_COMPARED(event)))
                state.update(b"%d\n" % len(data))
                state.update(data)
                count += 1
                if count in at:
                    found[count] = state.copy().digest()
            return log.header.id, Print(count, state.digest(), found)
    except (DshAuditError, OSError):
        return None


def _digests(path: Path, at: set[int] | frozenset[int]) -> Print | None:
    """The :class:`Print` of ``path``'s lines, its checkpoints at each count of ``at``; None when
    it cannot be read (its reading says why later). Its lines end at
    its first blank line: DSH's reader (``SessionLogScanner``) takes a blank line for an unparsable
    record and commits nothing from it on (the rest is a crash-damaged tail, or, a ``turn/end``
    after it, a corrupt log), as the reader here does; an export with a blank line at its end
    holds the lines of its log, not more (fuzz round 24: such an export was read instead of DSH's
    own log, or beside it, one session counted twice). None too for a file that is not a DSH log
    (its first line no DSH header: a Claude Code or Codex file): DSH's rule of lines is not its
    importer's, which reads past a blank line and skips a damaged one, and discovery groups no
    such files, so every command reads each as itself (fuzz round 26: ``sessions`` read a
    transcript with a line not UTF-8 for one with blank lines, "the other's lines and more", and
    listed 4 requests where ``usage`` counted 8)."""
    state = hashlib.blake2b(digest_size=16)
    found: dict[int, bytes] = {0: state.digest()} if 0 in at else {}
    count = 0
    packed = False
    try:
        with open_regular(path) as stream:
            for line in iter_lines(stream, os.fspath(path), []):
                if not count and line.raw and not begins_as_header(bytes(line.raw[:1 << 16])):
                    return None  # not a DSH log (its head told as discovery tells one): read as itself
                if not line.raw:
                    break  # a run of blank lines: DSH commits no line from here on
                state.update(b"%d\n" % len(line.raw))
                state.update(line.raw)
                count += 1
                packed = packed or _packed_row(line)
                if count in at:
                    found[count] = state.copy().digest()
    except (DshAuditError, OSError):
        return None
    return Print(count, state.digest(), found, packed)


#: An escape that may write a letter of a packed row's type (``\u002d`` to ``\u007a``), not one of a
#: control character (``\u001b``) or of a character past ASCII.
_LETTER_ESCAPE = re.compile(rb"\\u00[267]")


def _packed_row(line: Line) -> bool:
    """Whether ``line`` is a packed chunk row (``{"type":"text-chunks","seq0":...}``): parsed only
    when its bytes may spell such a type (``-chunks``, or an escape of a letter:
    :data:`_LETTER_ESCAPE`), so that a file's print costs no parse of most lines; a line that does
    not parse is no row (the reader refuses it)."""
    if b"-chunks" not in line.raw and _LETTER_ESCAPE.search(line.raw) is None:
        return False
    try:
        value = parse_line(line)
    except ValueError:
        return False
    tag = value.get("type") if isinstance(value, dict) else None
    return isinstance(tag, str) and tag in CHUNK_ROW_TYPES


def fingerprint(path: Path) -> Print | None:
    """:class:`Print` of ``path``'s lines, from one reading; None when it cannot be read."""
    return _digests(path, _POWERS)


def longer(group: Sequence[str | Path], prints: dict[int, Print], *,
           read: Callable[[Path, set[int]], Print | None] | None = None) -> dict[int, int]:
    """Of files with different lines (by their place in ``group``), which are the first lines of
    another: each such file's place and the longest file holding it (the first of equal ones).
    Only a longer file whose digest of its first N lines (N the largest power of two that a shorter
    file's count reaches) is the shorter file's is read again (``read``, :func:`_digests` by
    default), once for all the shorter ones. The same of their events, their :func:`events_print`
    ``prints`` and ``read`` the digests of a file's first N events: which hold the first events
    of another."""
    again = _digests if read is None else read
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
        found = again(Path(group[long]), {prints[short].lines for short in shorts}) if shorts else None
        if found is None:
            continue
        for short in shorts:
            if found.checkpoints.get(prints[short].lines) == prints[short].digest:
                final[short] = long
    return final
