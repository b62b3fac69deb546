"""Running one job over many logs: each log read and replayed on its own, errors kept per log."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .errors import DshAuditError, MalformedRecordError
from .log import SessionLog, discover, read_log
from .replay import ReplayResult, Request, replay

__all__ = ["SessionOutcome", "iter_outcomes", "replay_path"]


@dataclass
class SessionOutcome:
    """One log's result: its requests and side findings, or the error that stopped it."""

    path: str
    log: SessionLog | None = None
    requests: list[Request] = field(default_factory=list)
    result: ReplayResult | None = None
    error: DshAuditError | None = None

    @property
    def warnings(self) -> list[str]:
        return list(self.log.warnings) if self.log is not None else []

    @property
    def session_id(self) -> str | None:
        return self.log.header.id if self.log is not None else None


def replay_path(path: str | os.PathLike[str], *, lenient: bool = False, max_version: int = 4) -> SessionOutcome:
    """Read and replay one log file; never raises a :class:`DshAuditError`, records it."""
    outcome = SessionOutcome(path=os.fspath(path))
    try:
        outcome.log = read_log(path, lenient=lenient, max_version=max_version)
        outcome.requests, outcome.result = replay(outcome.log)
    except DshAuditError as exc:
        if isinstance(exc, MalformedRecordError) and exc.line == 1:
            from .importers import foreign_outcome  # late import: importers import this module

            imported = foreign_outcome(path)
            if imported is not None:
                return imported
        outcome.error = exc.located(path=outcome.path)
        outcome.requests = []
    return outcome


def iter_outcomes(paths: Iterable[str | os.PathLike[str]] | Iterable[Path], *,
                  lenient: bool = False) -> Iterator[SessionOutcome]:
    """Replay each log file in ``paths`` (already discovered) in order."""
    for path in paths:
        yield replay_path(path, lenient=lenient)


def discover_logs(paths: Iterable[str] | None, *, notes: list[str] | None = None) -> list[Path]:
    return discover(list(paths) if paths else None, notes=notes)
