"""Comparing a group's rebuilt requests with what was sent: :class:`CaptureCompare`, the capture
job of ``check``'s checker (:func:`dsh_audit.gate.run_check`).

Each capture file is loaded once a task (its error too: raised again for every log that shares
it); the requests of every log compared with one capture are aligned together, and a captured
request none of them explains is one ``DSH814`` finding, however many logs share the capture. The
capture given with ``--capture`` is read keeping each recorded response's usage as it is read
(:func:`dsh_audit.cache.keep_usage`), and prices the requests whose log holds none by the
comparison's own pairings (:meth:`CaptureCompare.priced`): it is read once, and aligned once. A
capture found beside the logs is read so too, and prices the requests of the logs it holds
requests of as the same file given would: found or given, one capture means one thing.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..cache import Tokens, captured_usage, keep_usage
from ..capture import (CaptureRead, compare_capture, held_sessions, read_capture, sessions_by_capture,
                       unreadable_capture)
from ..errors import CaptureError, DshAuditError, RenderError
from ..replay import Request
from ..session import Session, route_apis, route_renderer
from ._findings import DIFF_UNEXPLAINED, Judge, capture_holds
from ._model import Finding
from ._policy import Policy

__all__ = ["CaptureCompare"]

_LINE = re.compile(r"^line (\d+)$")
#: How an unknown route's reason ends (``dsh_audit.session.route_for``), naming the ``--adapter``
#: every command that renders bodies takes; check and report also force a format with the policy key.
_CLI_ADAPTER = " or --adapter"
_POLICY_ADAPTER = " or --adapter (or the policy key adapter)"


class CaptureCompare:
    """The captures of one task's logs: found (or the one given), loaded once, compared."""

    policy: Policy
    judge: Judge

    def __init__(self, capture: Path | None) -> None:
        self.capture = capture
        #: each capture as read (its responses' usage kept: what it prices), or the error reading it raised
        self.reads: dict[Path, CaptureRead | CaptureError] = {}
        self.torn: list[str] = []  # warnings: a capture's torn last line, dropped
        self.loose: dict[tuple[str, int], Finding] = {}
        self.notes: list[str] = []
        #: by capture found: the sessions this task's comparisons found it holds requests of (a pi-ai
        #: capture names none: it is held by the session its sends pair with, which may be another
        #: task's; :func:`dsh_audit.gate._findings.held_across` says the run's union in every DSH810)
        self.held: dict[str, set[str]] = {}

    def load(self, path: Path) -> Any:
        """The requests of the capture at ``path``, loaded once (so is its error: raised again)."""
        if path not in self.reads:
            try:
                self.reads[path] = read_capture(path, warnings=self.torn, keep=keep_usage)
            except CaptureError as exc:
                self.reads[path] = exc
        found = self.reads[path]
        if isinstance(found, CaptureError):
            raise found
        return found.requests

    def compare(self, group: list[Session]) -> tuple[dict[str, list[Any]], dict[str, Path], dict[str, Path]]:
        """Capture rows per session id, the capture file per session id (the one ``--capture``
        that cannot be read is raised; one found beside a log is left out with a warning), and the
        *others*: session id -> the capture found beside the log that holds none of its requests
        (:func:`dsh_audit.capture.held_sessions`) or cannot be read (:meth:`unread`: its DSH802).
        That capture is not the log's: the log is in neither of the first two mappings, as one with
        none, and its DSH810 names the file as this comparison saw it (:meth:`Judge.session`'s
        ``other``), not as a second look would find it later."""
        by_capture = sessions_by_capture(group, self.capture)
        rows: dict[str, list[Any]] = {}
        files: dict[str, Path] = {}
        others: dict[str, Path] = {}
        adapter = self.policy.adapter
        render = _policy_hints(route_renderer(group, adapter=adapter))

        for path, members in by_capture.items():
            requests = [r for s in members for r in s.requests]
            try:
                compared = compare_capture(requests, self.load(path), adapter=adapter, render=render,
                                           routes=route_apis(members, adapter=adapter))
            except CaptureError as exc:
                if self.capture is not None:
                    raise  # the capture given for every log: the run's one error (exit 2)
                self.left_out(exc, path)  # found: optional evidence, its logs are checked without it
                others.update((s.id, path) for s in members)  # their DSH810 names it as unread (its DSH802)
                continue
            if self.capture is None:  # found: the capture only of the logs it holds requests of
                held = held_sessions(compared)
                self.held.setdefault(os.fspath(path), set()).update(held)
                others.update((s.id, path) for s in members if s.id not in held)
                if any(s.id not in held for s in members):  # their DSH810 says whose requests it holds
                    self.judge.holds[os.fspath(path)] = capture_holds(compared, held)
                members = [s for s in members if s.id in held]
                if not members:  # nobody's capture here: its sends are neither compared nor unexplained
                    continue
                compared = [row for row in compared if row.request is None or row.request.session_id in held]
                self.notes.extend(f"{s.path}: capture {path}" for s in members)
            for row in compared:
                if row.request is not None:
                    rows.setdefault(row.request.session_id, []).append(row)
                elif row.verdict == "unmatched":
                    self.unexplained(row, members, path)
            for s in members:
                files[s.id] = path
        return rows, files, others

    def unread(self, path: Path | None) -> bool:
        """Whether ``path``, a capture this task loaded, could not be read (its DSH802 says why)."""
        return path is not None and isinstance(self.reads.get(path), CaptureError)

    def refusal_of(self, path: Path | None) -> Finding | None:
        """The DSH802 (:meth:`left_out`'s) of ``path``, a capture found beside a log that could not
        be read; None for any other (or none): the log's row says it, and fails when it fails."""
        return None if path is None or not self.unread(path) else self.loose.get((os.fspath(path), -1))

    def priced(self, group: list[Session], rows: dict[str, list[Any]],
               files: dict[str, Path]) -> dict[str, dict[int, Tokens]]:
        """Session id -> request index -> the tokens its capture reports of the response to its send
        (:func:`dsh_audit.cache.captured_usage`), by the group's comparison (``rows`` and ``files``,
        :meth:`compare`'s): each log priced by the capture it was compared with (the capture given
        with ``--capture`` for every log of the group, a capture found beside logs for the logs it
        holds requests of), by the pairings of that comparison; empty with none."""
        by_capture: dict[Path, tuple[CaptureRead, list[Session]]] = {}
        for session in group:
            path = files.get(session.id)
            read = None if path is None else self.reads.get(path)
            if path is not None and isinstance(read, CaptureRead):
                by_capture.setdefault(path, (read, []))[1].append(session)
        priced: dict[str, dict[int, Tokens]] = {}
        for read, members in by_capture.values():
            pairings = [row.pairing for s in members for row in rows.get(s.id, ())]
            priced.update(captured_usage(members, read, pairings=pairings))
        return priced

    def left_out(self, error: CaptureError, path: Path) -> None:
        """The finding of a capture found beside logs that cannot be read (``error``), and its
        warning, as every view that goes on without it says it: once a capture, at the capture,
        whose hint says what settles it (:func:`dsh_audit.capture.unreadable_capture`, left out);
        the logs are checked without it, their requests counted, as logs with none. A policy that
        ignores DSH802 drops the finding, as it drops every other (the warning still says it)."""
        key = (os.fspath(path), -1)
        told = unreadable_capture(error, found=True, left_out=True)
        if str(told) not in self.torn:
            self.torn.append(str(told))
        if key not in self.loose and not self.policy.ignored("DSH802"):
            self.loose[key] = self.judge.finding("DSH802", told.message, path=told.path or os.fspath(path),
                                                 line=told.line, hint=told.hint)

    def unexplained(self, row: Any, members: Sequence[Session], capture_path: Path) -> None:
        """The ``DSH814`` finding of a capture no request of ``members`` (the logs compared with
        ``capture_path``, the capture file or body folder) explains: why (alignment's note), and
        the ``diff`` of the log it belongs to (of their folder when several logs share it); none
        when the policy ignores DSH814, which drops the rule everywhere."""
        capture = row.capture
        match = _LINE.match(capture.locator or "")
        key = (capture.source, capture.position)
        if key not in self.loose and capture.kind in self.policy.capture_kinds and not self.policy.ignored("DSH814"):
            mine = [s.path for s in members if s.id == capture.session_id] or [s.path for s in members]
            log = mine[0] if len(mine) == 1 else _folder_of(mine)
            note = f": {row.pairing.note}" if row.pairing.note else ""
            self.loose[key] = self.judge.finding(
                "DSH814", f"captured {capture.kind} request {capture.position} ({capture.where()}) is explained "
                f"by no request of the checked logs{note}", path=capture.source,
                line=int(match.group(1)) if match else None, session_id=capture.session_id, verdict="unexplained",
                hint=self.judge.diff_hint(log, capture_path, DIFF_UNEXPLAINED))


def _policy_hints(render: Callable[[Request, dict[str, Any]], bytes]) -> Callable[[Request, dict[str, Any]], bytes]:
    """``render`` whose unknown-route reasons name what settles a route for check and report: the
    option ``--adapter`` or the policy key ``adapter``."""

    def run(request: Request, options: dict[str, Any]) -> bytes:
        try:
            return render(request, options)
        except DshAuditError as exc:
            if not isinstance(exc, RenderError) or not exc.message.endswith(_CLI_ADAPTER):
                raise
            raise RenderError(exc.message.removesuffix(_CLI_ADAPTER) + _POLICY_ADAPTER, dsh_code=exc.dsh_code,
                              path=exc.path, line=exc.line, seq=exc.seq, hint=exc.hint) from None

    return run


def _folder_of(paths: Sequence[str]) -> str:
    """The folder that holds every log of ``paths`` (``diff`` reads each log under it), as
    given; ``.`` when they share none as given (absolute and relative paths mixed).

    Example:
        >>> _folder_of(["s/a/session.jsonl", "s/b/session.jsonl"]), _folder_of(["/s/a.jsonl", "b.jsonl"])
        ('s', '.')
    """
    try:
        return os.path.commonpath([os.path.dirname(p) or "." for p in paths]) or "."
    except ValueError:
        return "."
