"""Which file of one session a watch follows when the session is present as several files: the
files the other commands read (the one rule of copies, :func:`~dsh_audit.log.without_copies`),
and of files discovery does not group (their names say other sessions and their sizes differ: two
session folders of a home holding one session, one of them still growing) the one that holds the
other's lines, by the same rule.
"""

from __future__ import annotations

from collections.abc import Container
from pathlib import Path

from ..errors import DshAuditError
from ..log import copy_notes, discover, preferred, read_header, read_once, without_copies

__all__ = ["differs_note", "listed_note", "one_each"]


def one_each(group: list[str], *, followed: Container[str] = ()) -> tuple[list[str], list[str]] | None:
    """Of the files of one session (in the order discovery lists them), those the other commands
    read (:func:`discover`, which compares them by their lines, and by their events one with
    packed chunk rows and one without) and one note saying which file was
    read instead of which, in their words (every copy of the session in one note); None when one
    cannot be looked at now (decided at a later look). The files found together are grouped at
    once (their headers read first where discovery reads them:
    :func:`~dsh_audit.log.may_be_copies`), so that this is the file the others read; the one
    exception is a copy with the same lines that appears later, while the file read is followed:
    that file stays followed (its requests were shown from it). Files discovery does not group,
    their names saying other sessions and their sizes differing (two session folders of a home
    holding one session: a log replaced by a copy of another), are compared too, the file followed
    first: no request is shown twice. Of a session folder's files, the one discovery picks (its
    highest generation, compressed before plain), with discovery's note; of files with the same
    lines ranked alike, one whose name says its header's session: every command's rule (fuzz round
    24: a watch followed a longer plain ``session.jsonl`` where the others read its
    ``session.jsonl.zstd``, and the copy of a session in a folder of another id)."""
    if len(group) == 1:
        return group, []
    notes: list[str] = []
    try:  # each file can be looked at now
        found = [str(p) for p in discover(group, copies=False, notes=notes, generations=True)]
    except DshAuditError:
        return None
    # of files with the same lines and rank, the first is read: the followed one, whatever its name
    found.sort(key=lambda path: path not in followed)
    kept, left = without_copies(found)
    # The followed file, else as discovery ranks them: a file followed is not left for its copy.
    kept, more = read_once(kept, rank=lambda path: 4 * (path in followed) + preferred(Path(path)), session=_said)
    return kept, [*notes, *copy_notes([*left, *more], files=len(found))]


def _said(path: str) -> str | None:
    """The session id a log's header names (None: none can be read yet)."""
    header = read_header(path)
    return None if header is None else header.id


def differs_note(read: str, copy: str) -> str:
    """The note for a copy left out that stopped holding only the lines of the file read (it grew
    by other lines: garbage, another continuation): both paths whole, the folder they share said
    once, as discovery's notes say them."""
    return copy_notes([(read, copy, "it held the other's lines and now differs from them: it is not followed, "
                                    "so no request is shown twice")])[0]


def listed_note(session: str, files: list[str]) -> str:
    """The note for a session whose files differ (their lines and their events), each followed:
    ``session ID is in N files, each listed: FILE, FILE``, the words every other command says it in
    (:func:`~dsh_audit.log.copy_notes`): their totals count it from each file, so does the watch's."""
    return copy_notes([], listed={session: files})[0]
