"""The one request of one session log that ``show``, ``render`` and ``explain`` read: the INDEX
argument, negative from the end, and the error naming the valid indexes.
"""

from __future__ import annotations

import re
import sys
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..errors import DshAuditError, UsageError
from ._common import echo_warning
from ._logs import one_log

if TYPE_CHECKING:
    from ..log import Event
    from ..replay import Request
    from ..session import EventLines, RouteEvidence

__all__ = ["REQUEST_INDEX", "RequestCommand", "at_line", "no_such_request", "one_request", "request_position"]

# A negative request index (``-1``), which click would otherwise read as an option: ASCII digits
# only (``\d`` would take ``-١``, an Arabic-Indic one).
_NEGATIVE = re.compile(r"-[0-9]+")
# A request index as INDEX is documented: ASCII digits, a leading ``-`` to count from the end.
_INDEX = re.compile(r"-?[0-9]+")


class _RequestIndex(click.ParamType[int]):
    """INDEX: ``0``, ``12``, ``-1``; not what Python's int() reads besides (``1_0``, ``+1``, `` 1``,
    ``١``), which names another request than the one typed, or one the user did not write; nor ``-0``
    (a leading - counts from the end: ``-1`` is the last request, so ``-0`` names none)."""

    name = "integer"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        text = str(value)
        if not _INDEX.fullmatch(text):
            self.fail(f"{text!r} is not a request index: digits 0-9, with a leading - to count from the end "
                      "(-1: the last request)", param, ctx)
        if text.startswith("-") and not text.strip("-0"):
            self.fail(f"{text!r} names no request: a leading - counts from the end, and -1 is the last request "
                      "(0 is the first)", param, ctx)
        try:
            return int(text)
        except ValueError:  # more digits than int() reads (sys.get_int_max_str_digits): no log has it
            self.fail(f"a request index of {len(text):,} digits is larger than any log's", param, ctx)


#: The type of ``show``, ``render`` and ``explain``'s INDEX argument.
REQUEST_INDEX = _RequestIndex()


class RequestCommand(click.Command):
    """A command whose last argument is a request INDEX that may be negative (``-1``: the last request).

    A negative number before ``--`` that is not an option's value is moved after ``--``, so that
    ``show LOG -1``, ``show -1 LOG`` and ``show LOG -1 --compact`` all mean the last request.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        valued = {name for param in self.params if isinstance(param, click.Option) and not param.is_flag
                  and not param.count for name in param.opts}
        kept: list[str] = []
        moved: list[str] = []
        for at, arg in enumerate(args):
            if arg == "--":
                kept.extend(args[at:])
                break
            if _NEGATIVE.fullmatch(arg) and not (kept and kept[-1] in valued):
                moved.append(arg)
            else:
                kept.append(arg)
        if moved:
            args = kept + ([] if "--" in kept else ["--"]) + moved
        return super().parse_args(ctx, args)


def request_position(index: int, count: int) -> int | None:
    """The position (0 to ``count - 1``) of request ``index`` of ``count``, negative from the end;
    None when there is no such request.

    Example:
        >>> request_position(-1, 8), request_position(7, 8), request_position(-9, 8), request_position(8, 8)
        (7, 7, None, None)
    """
    position = index + count if index < 0 else index
    return position if 0 <= position < count else None


def one_request(path: str, index: int, *, lenient: bool, max_version: int,
                lines: EventLines | None = None) -> tuple[str, Request, RouteEvidence]:
    """Replay the one session log at ``path``: its file, its request ``index``, and what the log
    shows of each provider's adapter (for the request's route); ``lines``, when given, is filled
    with each event's line (to place a later refusal of the request at its seq's line).

    The log's warnings go to stderr. Raises the log's own error when it cannot be replayed, and
    UsageError when ``path`` is not exactly one log or ``index`` is not one of its requests. A
    negative ``index`` counts from the end (-1: the last request).
    """
    from ..errors import MalformedRecordError
    from ..importers import no_importer
    from ..log import read_log
    from ..replay import iter_requests
    from ..session import RouteEvidence, open_foreign

    log = one_log(path)
    try:
        opened = read_log(log, lenient=lenient, max_version=max_version)
    except MalformedRecordError as exc:
        imported = open_foreign(str(log), lenient=lenient) if exc.line == 1 else None  # another agent's log?
        if imported is None:
            raise (no_importer(exc) if exc.line == 1 else exc) from None
        requests: list[Request] = imported.requests
        count = len(requests)
        position = request_position(index, count)
        found = None if position is None else requests[position]
        routes = imported.routes
    else:
        # Stream: keep only request ``index`` (a long log's requests would keep all of it alive), or
        # the last ``-index`` ones; but read to the end, so a log DSH refuses is still refused.
        found, count = None, 0
        last: deque[Request] = deque(maxlen=min(max(-index, 1), sys.maxsize))  # no log has more
        routes = RouteEvidence()

        def observe(event: Event) -> None:
            routes.on_event(event)
            if lines is not None:
                lines.add(event.seq, event.line)

        try:
            for request in iter_requests(opened, observe=observe if lines is not None else routes.on_event):
                if request.index == index:
                    found = request
                last.append(request)
                count += 1
        finally:
            for warning in opened.warnings:
                echo_warning(warning)
        if index < 0 and len(last) == -index:
            found = last[0]
    if found is None:
        raise no_such_request(index, count, log)
    return str(log), found, routes


def at_line(error: DshAuditError, lines: EventLines) -> DshAuditError:
    """``error`` placed at the line of its seq, by ``lines`` (:func:`one_request`'s), when it names
    a seq but no line (a renderer, or a route, knows the event it refuses, not the line the read
    found it on); returns it. Every refusal of the one request is told ``PATH:LINE seq N: ...``.

    Example:
        >>> from dsh_audit.session import EventLines
        >>> lines = EventLines()
        >>> for seq, line in [(0, 2), (1, 3), (2, 3)]:
        ...     lines.add(seq, line)
        >>> str(at_line(UsageError("refused", path="s.jsonl", seq=2), lines))
        's.jsonl:3 seq 2: refused'
        >>> str(at_line(UsageError("refused", path="s.jsonl", line=9, seq=2), lines))  # the raiser's line stays
        's.jsonl:9 seq 2: refused'
    """
    if error.line is None and error.seq is not None:
        error.line = lines.get(error.seq)
    return error


def no_such_request(index: int, count: int, log: Path) -> UsageError:
    """The error for a request ``index`` the log at ``log`` (with ``count`` requests) does not have."""
    valid = f"valid indexes are 0 to {count - 1}, or -{count} to -1 from the end; " if count else ""
    return UsageError(f"request {index} does not exist: the log has {count} request(s)", path=str(log),
                      hint=f"{valid}run `dsh-audit requests LOG` to see the indexes")
