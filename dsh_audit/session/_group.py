"""Opening related logs together: the given logs and the parents their children need, each once.

A fork or subagent child is compared with its parent, so a child's log and its parent's must be
read in the same task. :func:`open_group` reads every header first (keeping each file open), finds
the parents beside the children (:func:`find_parent`), learns which children each parent must
watch for, and then reads each log's events once. :func:`family_groups` splits many logs into such
tasks by folder (DSH keeps a project's sessions side by side, an export keeps them in one folder),
so a parallel run opens each log once too.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from .._lazy import LazyModule
from ..errors import DshAuditError, UsageError
from ..log import SessionHeader, SessionLog
from ..replay import Request
from ..runner import SessionTaskError, iter_many
from ._related import Headers, walk_family
from ._home_routes import routes_from
from ._session import Session, opened_log, session_of, validation, validator

if TYPE_CHECKING:
    from .. import validate as rules
    from ..validate import Finding as ValidationFinding
    from ..validate import LineValidator
else:
    rules = LazyModule("dsh_audit.validate")  # loaded when a group is read with validation only

__all__ = ["Failure", "GroupResult", "SessionGroup", "family_groups", "open_group", "pair_orphans", "read_session",
           "rounds", "run_groups", "validating_headers"]

T = TypeVar("T")


@dataclass
class Failure:
    """A log that could not be read: its error, the warnings its reader gave, and its header when
    that much was read (picklable). ``validation``: every validation rule's findings, from the
    same read, when the log was opened with ``validate`` and any of it could be read."""

    path: str
    error: DshAuditError
    warnings: tuple[str, ...] = ()
    session_id: str | None = None
    header: SessionHeader | None = None
    format_version: int | None = None
    validation: tuple[ValidationFinding, ...] | None = None


@dataclass
class SessionGroup:
    """The given logs, each a :class:`Session` or a :class:`Failure`, in the order given, and the
    parents read only to compare children with (``ancestors``)."""

    given: list[Session | Failure]
    ancestors: list[Session] = field(default_factory=list)
    #: ``(path, parent session id)`` of given children whose parent log was not found beside them
    #: or among the given logs (a caller holding more logs may pair them: :func:`pair_orphans`).
    orphans: list[tuple[str, str]] = field(default_factory=list)

    @property
    def sessions(self) -> list[Session]:
        """Every session read, the given ones first (a session id appears once)."""
        out: list[Session] = []
        seen: set[str] = set()
        for item in [*self.given, *self.ancestors]:
            if isinstance(item, Session) and item.id not in seen:
                seen.add(item.id)
                out.append(item)
        return out


def read_session(path: str | os.PathLike[str], *, lenient: bool = False, max_version: int = 4,
                 foreign: bool = True, routes: str | None = None, validate: bool = False,
                 on_request: Callable[[Request], None] | None = None, keep: bool = True) -> Session | Failure:
    """:func:`open_session` that never raises for the log: a log that cannot be read is a
    :class:`Failure` that keeps the warnings its reader gave before the error. With ``validate``,
    every validation rule runs over the same read (``validation`` of the result). ``on_request``
    and ``keep`` as :func:`read_events` (an imported log's requests are all handed over once read).
    """
    name = os.fspath(path)
    checker = validator(name, lenient=lenient, max_version=max_version) if validate else None
    opened = opened_log(name, lenient=lenient, max_version=max_version, checker=checker)
    found = _finish(name, opened, lenient=lenient, watch=frozenset(), foreign=foreign, checker=checker,
                    on_request=on_request, keep=keep)
    if isinstance(found, Session) and (config := routes_from(routes, log=name)) is not None:
        found.use_routes(config)
    return found


def _finish(name: str, opened: SessionLog | DshAuditError, *, lenient: bool, watch: frozenset[str],
            foreign: bool = True, checker: LineValidator | None = None,
            on_request: Callable[[Request], None] | None = None, keep: bool = True) -> Session | Failure:
    """:func:`session_of` that never raises for the log: a :class:`Failure` keeping the warnings
    its reader gave and the findings of ``checker`` (its file is closed: it has seen the whole file)."""
    try:
        return session_of(name, opened, lenient=lenient, watch=watch, foreign=foreign, checker=checker,
                          on_request=on_request, keep=keep)
    except DshAuditError as exc:
        findings = validation(checker)
        checked = None if findings is None else tuple(findings)
        if isinstance(opened, SessionLog):
            return Failure(name, exc.located(path=name), tuple(opened.warnings), opened.header.id, opened.header,
                           opened.format_version, checked)
        return Failure(name, exc.located(path=name), validation=checked)


def validating_headers(paths: Sequence[str | os.PathLike[str]], *, lenient: bool = False,
                       max_version: int = 4) -> Headers:
    """A header reader whose read of each of ``paths`` also runs every validation rule over its
    lines (``Headers.tees``: one :class:`~dsh_audit.validate.LineValidator` per path)."""
    return Headers(lenient=lenient, max_version=max_version,
                   tees={os.fspath(p): validator(os.fspath(p), lenient=lenient, max_version=max_version)
                         for p in paths})


def open_group(paths: Sequence[str | os.PathLike[str]], *, lenient: bool = False, max_version: int = 4,
               ancestors: bool = True, foreign: bool = True, routes: str | None = None,
               validate: bool = False, headers: Headers | None = None) -> SessionGroup:
    """Read ``paths`` (and, with ``ancestors``, the parent logs beside their children), each once.

    With ``foreign``, a file that is not a DSH log is read through the importers when one
    recognises it (Claude Code, Codex); without, it is the reader's :class:`Failure`. ``routes``
    is a route configuration file (``--routes``) every session takes (:meth:`Session.use_routes`).
    With ``validate``, every validation rule runs over the lines of each given log's one read
    (``validation`` of its :class:`Session` or :class:`Failure`: what
    :func:`dsh_audit.validate.validate` finds, without reading the file again).

    ``headers``: the header reader a caller already used on some of these logs, so that no log
    is opened twice (with ``validate``, one from :func:`validating_headers`); it is closed here.

    Raises:
        UsageError: the route file cannot be used, or ``headers`` given with ``validate`` reads a
            given log without the validation rules.

    Never raises for a log: a log that cannot be read is a :class:`Failure` in ``given``.
    """
    given = [Path(p) for p in paths]
    if headers is None:
        headers = validating_headers(given, lenient=lenient, max_version=max_version) if validate else \
            Headers(lenient=lenient, max_version=max_version)
    elif validate and any(not isinstance(headers.tees.get(os.fspath(p)), rules.LineValidator) for p in given):
        raise UsageError("open_group(validate=True) needs the validation rules in every given log's read",
                         hint="read the headers with validating_headers(paths)")
    checkers = {os.fspath(p): tee for p in given
                if validate and isinstance(tee := headers.tees.get(os.fspath(p)), rules.LineValidator)}
    try:
        every, ids = walk_family(given, ancestors=ancestors, headers=headers)
        watch: dict[str, set[str]] = {}
        for path in every:
            log = headers.opened.get(os.fspath(path))
            if isinstance(log, SessionLog) and log.header.parent_session and not log.header.seed_length:
                watch.setdefault(log.header.parent_session, set()).add(log.header.id)
        read: dict[Path, Session | Failure] = {}
        for path in every:
            if path not in read:
                sid = ids[path][0]
                read[path] = _finish(os.fspath(path), headers.take(path), lenient=lenient,
                                     watch=frozenset(watch.get(sid or "", ())), foreign=foreign,
                                     checker=checkers.get(os.fspath(path)))
    finally:
        headers.close()
    extra = [s for p in every[len(given):] if isinstance(s := read[p], Session)]
    known = {ids[p][0] for p in every}
    orphans = [(os.fspath(p), parent) for p in given if (parent := ids[p][1]) is not None and parent not in known]
    group = SessionGroup([read[p] for p in given], extra, orphans)
    routes_from(routes)  # a bad --routes file is an error even when no log could be read
    for session in group.sessions:
        if (config := routes_from(routes, log=session.path)) is not None:
            session.use_routes(config)
    return group


def _folder(path: Path) -> Path:
    # <project>/<session folder>/session[.vN].jsonl[.zstd]: siblings share the project folder;
    # <id>.jsonl exports share their folder.
    return path.parent.parent if path.name.startswith("session.") else path.parent


def rounds(sessions: Sequence[Session]) -> list[list[Session]]:
    """Split sessions into rounds in which every session id appears once, in order.

    A folder may hold the same session twice (DSH's zstd log and a decompressed copy; fixtures
    that reuse an id): views that pair requests across sessions take one round at a time.
    """
    out: list[list[Session]] = []
    for session in sessions:
        for group in out:
            if all(s.id != session.id for s in group):
                group.append(session)
                break
        else:
            out.append([session])
    return out


def pair_orphans(orphans: Iterable[tuple[str, str]], ids: dict[str, str]) -> list[list[str]]:
    """``[child, parent]`` path pairs for orphans whose parent is among other groups' logs.

    Args:
        orphans: ``(child path, parent session id)`` from each group (:attr:`SessionGroup.orphans`).
        ids: session id -> log path of every log read.
    """
    return [[child, ids[parent]] for child, parent in orphans if parent in ids]


@dataclass
class GroupResult(Generic[T]):
    """What a task made of one group of logs (picklable: it comes back from a worker).

    Attributes:
        items: one value or :class:`Failure` per given path, in order.
        orphans: given children whose parent log was not read (:attr:`SessionGroup.orphans`).
        ids: session id -> path of every given log that was read.
        route_warnings: log path -> where that given log contradicts the route file it took
            (:meth:`Session.route_conflicts`), for a command to print once per log.
    """

    items: list[T | Failure]
    orphans: list[tuple[str, str]] = field(default_factory=list)
    ids: dict[str, str] = field(default_factory=dict)
    route_warnings: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def of(cls, group: SessionGroup, items: list[T | Failure]) -> GroupResult[T]:
        return cls(items, group.orphans, {s.id: s.path for s in group.given if isinstance(s, Session)},
                   route_warnings(group))


def route_warnings(group: SessionGroup, *, own: bool = True) -> dict[str, tuple[str, ...]]:
    """Log path -> the warnings of each given log that has any, for a command to print once per
    log: its own (``own``: a torn tail, a dropped record, a capture found beside it left out:
    :attr:`Session.warnings`, said alike by every command) and the route file's
    (:meth:`Session.route_conflicts`)."""
    found = {s.path: tuple(dict.fromkeys([*(s.warnings if own else ()), *s.route_conflicts()]))
             for s in group.given if isinstance(s, Session)}
    return {path: warnings for path, warnings in found.items() if warnings}


def run_groups(paths: Sequence[str | os.PathLike[str]], task: Callable[[list[str]], GroupResult[T]], *,
               jobs: int = 1, engine: str = "local", scheduler: str | None = None,
               progress: Callable[[int, int], None] | None = None,
               on_group: Callable[[GroupResult[T]], None] | None = None) -> list[T | Failure]:
    """Run ``task`` once per group of neighbouring logs (:func:`family_groups`), then once more for
    each child given apart from its parent (with that parent), and return one value or
    :class:`Failure` per path, in the order given. The same result for every ``jobs`` and engine.

    ``on_group`` sees each group's whole result (a subclass may carry more than the items), in
    this process, in group order.

    Raises:
        UsageError: bad ``jobs``, ``engine`` or ``scheduler``.
    """
    groups = [[os.fspath(p) for p in group] for group in family_groups(paths)]
    runs: dict[str, Any] = {"jobs": jobs, "engine": engine, "scheduler": scheduler}
    found: dict[str, T | Failure] = {}
    orphans: list[tuple[str, str]] = []
    ids: dict[str, str] = {}
    for members, result in zip(groups, iter_many(groups, task, progress=progress, **runs)):
        if result.error is not None or result.value is None:
            error = result.error or SessionTaskError("the task returned nothing")
            found.update((path, Failure(path, error)) for path in members)
            continue
        found.update(zip(members, result.value.items))
        if on_group is not None:
            on_group(result.value)
        orphans += result.value.orphans
        ids.update(result.value.ids)
    pairs = pair_orphans(orphans, ids)
    for pair, result in zip(pairs, iter_many(pairs, task, **runs)):
        if result.value is not None:
            found[pair[0]] = result.value.items[0]
    return [found[os.fspath(p)] for p in paths]


def family_groups(paths: Iterable[str | os.PathLike[str]]) -> list[list[Path]]:
    """Split logs into groups by folder, without reading them: DSH keeps a child beside its parent,
    so a child's parent is in its group or found beside it; the rare child given apart from its
    parent is an orphan of its group (:attr:`SessionGroup.orphans`), paired in a second task.

    Groups keep the order of their first log; logs keep their order inside a group.
    """
    groups: dict[Path, list[Path]] = {}
    for p in paths:
        path = Path(p)
        groups.setdefault(_folder(path), []).append(path)
    return list(groups.values())
