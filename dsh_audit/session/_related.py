"""Finding the parent logs of fork and subagent children, so a child can be compared with them.

A child's header names its ``parentSession``. DSH keeps every session of a project side by side
(``<root>/<project>/<session folder>/session.jsonl.zstd``, spec §1.1) and an export keeps
``<id>.jsonl`` files in one folder, so the parent is looked for beside the child: by name first,
then by reading the headers of the neighbouring logs.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import DshAuditError
from ..log import LineTee, SessionLog, discover, read_log

__all__ = ["Headers", "find_parent", "nearby_logs", "walk_family", "with_ancestors"]


class Headers:
    """Reads each log's header once and keeps the log open, so its events can be read later
    without opening the file a second time (:meth:`take`); logs never taken are closed.
    :meth:`release` closes them early, keeping the ids read (:meth:`ids` answers from them)."""

    def __init__(self, *, lenient: bool = True, max_version: int | None = None,
                 tees: Mapping[str, LineTee] | None = None) -> None:
        self.lenient = lenient
        self.options: dict[str, Any] = {} if max_version is None else {"max_version": max_version}
        self.opened: dict[str, SessionLog | DshAuditError] = {}
        self.tees = tees or {}  # path -> what sees every line of that log (read_log's tee)
        self._ids: dict[str, tuple[str | None, str | None]] = {}  # path -> ids read (kept by release)

    def get(self, path: str | os.PathLike[str]) -> SessionLog | DshAuditError:
        name = os.fspath(path)
        if name not in self.opened:
            try:
                self.opened[name] = read_log(name, lenient=self.lenient, tee=self.tees.get(name), **self.options)
            except DshAuditError as exc:
                self.opened[name] = exc
        return self.opened[name]

    def ids(self, path: str | os.PathLike[str]) -> tuple[str | None, str | None]:
        """``(session id, parent session id)`` from a log's header line (read once, also after
        :meth:`release`)."""
        name = os.fspath(path)
        if name not in self._ids:
            log = self.get(name)
            if isinstance(log, DshAuditError):
                self._ids[name] = (None, None)
            else:
                parent = log.header.parent_session
                self._ids[name] = (log.header.id, parent if isinstance(parent, str) and parent else None)
        return self._ids[name]

    def take(self, path: str | os.PathLike[str]) -> SessionLog | DshAuditError:
        """The opened log (its header read, its events not), handed over to the caller."""
        log = self.get(path)
        self.opened.pop(os.fspath(path), None)
        return log

    def lone_root(self, paths: Sequence[str | os.PathLike[str]]) -> SessionLog | None:
        """The log of a group that is one DSH log with no parent (no fork or subagent child), handed
        over (:meth:`take`) with every other log closed, for a view that consumes it as it is
        replayed; None for any other group (read it whole, with these headers)."""
        if len(paths) != 1:
            return None
        log = self.get(paths[0])
        if not isinstance(log, SessionLog) or log.header.parent_session:
            return None
        self.take(paths[0])
        self.close()
        return log

    def release(self) -> None:
        """Close every log not taken, keeping the ids read: a search over many logs holds none of
        them open, and :meth:`ids` still answers for each without opening it again."""
        for log in self.opened.values():
            if isinstance(log, SessionLog):
                log.close()
        self.opened.clear()

    def close(self) -> None:
        self.release()
        self._ids.clear()


def _exists(path: Path) -> bool:
    """Whether ``path`` exists; a name the system cannot hold (longer than a file name may be:
    ``ENAMETOOLONG``) or reach names no file."""
    try:
        return path.exists()
    except OSError:
        return False


def find_parent(path: str | os.PathLike[str], parent_id: str, *, headers: Headers | None = None) -> Path | None:
    """The log of session ``parent_id`` beside the log at ``path``, or None.

    Example:
        >>> find_parent("sessions/proj/child/session.jsonl.zstd", "session-1")  # doctest: +SKIP
        PosixPath('sessions/proj/session-1/session.jsonl.zstd')
    """
    headers = headers or Headers()
    here = Path(path).parent
    # The id comes from the child's header: only a plain name may become part of a path, so a
    # "/", ".." or "/home" id cannot send the search outside the child's neighbourhood.
    plain = parent_id not in ("", ".", "..") and not any(c in parent_id for c in "/\\\0")
    named = [here / f"{parent_id}.jsonl", here / f"{parent_id}.jsonl.zstd", here.parent / parent_id] if plain else []
    for candidate in named:
        if _exists(candidate):
            try:
                logs = discover([candidate])
            except DshAuditError:  # a folder of that name holding no log
                continue
            for log in logs:
                if headers.ids(log)[0] == parent_id:
                    return log
    own = os.path.realpath(path)
    for folder in (here, here.parent):
        for log in nearby_logs(folder):
            # the child itself lies among them: never its own parent, and its header was read already
            if os.path.realpath(log) != own and headers.ids(log)[0] == parent_id:
                return log
    return None


def nearby_logs(folder: Path) -> list[Path]:
    """Log files (``*.jsonl``, ``*.jsonl.zstd``) in ``folder`` and in its direct subfolders, never
    deeper, in name order: where a session's parent and children lie (spec §1.1).

    DSH's layout puts sibling sessions one folder below the project folder; a recursive walk would
    read a whole disk when a child log lies in ``/tmp`` or a home folder.
    """
    found: list[Path] = []
    for pattern in ("*", "*/*"):
        try:
            found.extend(p for p in sorted(folder.glob(pattern))
                         if p.name.endswith((".jsonl", ".jsonl.zstd")) and p.is_file())
        except OSError:
            continue
    return found


def with_ancestors(paths: Iterable[Path]) -> list[Path]:
    """``paths`` plus the parent (and grandparent, …) log of every child, found beside the child.

    Parents already among ``paths`` are not searched for.
    """
    headers = Headers()
    try:
        return walk_family(paths, ancestors=True, headers=headers)[0]
    finally:
        headers.close()


def walk_family(paths: Iterable[Path], *, ancestors: bool, headers: Headers,
                ) -> tuple[list[Path], dict[Path, tuple[str | None, str | None]]]:
    """The logs (``paths``, then with ``ancestors`` the parents found beside the children) and
    each one's ``(session id, parent session id)``, every header read once through ``headers``."""
    found = list(paths)
    info = {path: headers.ids(path) for path in found}
    if not ancestors:
        return found, info
    ids = {sid for sid, _ in info.values() if sid is not None}
    queue = list(found)
    while queue:
        path = queue.pop(0)
        parent_id = info[path][1]
        if parent_id is None or parent_id in ids:
            continue
        parent = find_parent(path, parent_id, headers=headers)
        ids.add(parent_id)
        if parent is not None:
            found.append(parent)
            info[parent] = headers.ids(parent)
            queue.append(parent)
    return found, info
