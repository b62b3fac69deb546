"""One log's outcome for the batch commands: read and replayed (or imported), its error kept, not raised."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from .errors import DshAuditError, MalformedRecordError
from .log import SessionLog, read_log
from .replay import ReplayResult, Request, replay

__all__ = ["SessionOutcome", "replay_path"]


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
