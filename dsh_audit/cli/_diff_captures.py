"""Which capture each log ``dsh-audit diff`` reads is compared with, and what ``diff`` says of it:
the one given with ``--capture`` for every log, else the ``wire.jsonl`` found beside each log
(:func:`dsh_audit.capture.find_capture`), which is the capture only of the logs it holds requests
of (:func:`dsh_audit.capture.held_sessions`: ``diff``'s comparison leaves out the others, and
:func:`_foreign_note` says them).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from .._listing import listed
from ..capture import RequestDiff, find_capture
from ..errors import CaptureError, UsageError
from ..gate import FOREIGN_CAPTURE_HINT, foreign_capture_hint
from ._common import echo_note


def _captures(logs: Sequence[str | os.PathLike[str]], given: str | None,
              where: str) -> dict[str, list[str | os.PathLike[str]]]:
    """The logs to compare, by the capture each is compared with: all with ``given`` (--capture),
    else each with the wire.jsonl :func:`find_capture` finds beside it, as ``check`` finds it (a
    log with none is said and left out; :func:`dsh_audit.cli._diff._compare` leaves out a log whose capture found holds
    none of its requests, :func:`_foreign_note` says those; :func:`_found_note` names the captures
    found once read).

    The rule is :func:`dsh_audit.capture.capture_for`'s (``given``, else :func:`find_capture`), but
    not :func:`dsh_audit.capture.sessions_by_capture`, which groups sessions already read (their
    ``path``; a ``known`` aligned capture spares a lookup): these are log paths not yet read, each
    group then read and compared in a worker of its own (--jobs), so reading them here first would
    read every log twice. A capture is keyed as given or found (``./w.jsonl``, which the notes and
    titles show; ``Path`` would show ``w.jsonl``), and the logs with none are said in one note.

    Raises:
        UsageError: no capture given and none found beside any log (the hint names --capture).
    """
    if given is not None:
        return {given: list(logs)}
    groups: dict[str, list[str | os.PathLike[str]]] = {}
    alone = []
    for log in logs:
        found = find_capture(log)
        if found is None:
            alone.append(log)
        else:
            groups.setdefault(os.fspath(found), []).append(log)
    if not groups:
        raise _no_capture(where)
    if len(alone) == 1:
        echo_note(f"{alone[0]}: no capture given or found beside the log (wire.jsonl): not compared")
    elif alone:  # one note a run, however many logs have none
        echo_note(f"{len(alone)} log(s) with no capture given or found beside them (wire.jsonl): not compared "
                  f"({listed([os.fspath(log) for log in alone], shown=1)})")
    return groups


def _no_capture(where: str) -> UsageError:
    """The error of a run that found no capture beside any log it was given (and none was given)."""
    return UsageError("no capture given or found beside the log (wire.jsonl)", path=where,
                      hint="pass --capture FILE: a wire.jsonl, a HAR 1.2 file or a folder of JSON bodies")


#: How many captures found a note on the logs they hold nothing of names, with what each holds.
_SHOWN_CAPTURES = 2


def _foreign(left: dict[str, list[str]], holding: dict[str, str]) -> tuple[str | None, str, list[str]] | None:
    """What ``diff`` says of the logs left out because the capture found beside them (by capture)
    holds none of their requests, and what each capture holds instead (``holding``, by capture:
    :func:`dsh_audit.gate.capture_holds`): the one log left out (else None), the statement in check's DSH810 words,
    and the logs; None when no log was left out."""
    logs = [log for its in left.values() for log in its]
    if not logs:
        return None
    if len(logs) == 1:
        capture = next(capture for capture, its in left.items() if its)
        return logs[0], (f"no capture: the capture found beside the log ({capture}) holds none of its requests "
                         f"({holding.get(capture, '')})"), logs
    parts = [f"{capture}: {holding.get(capture, '')}" for capture, its in left.items() if its]
    more = len(parts) - _SHOWN_CAPTURES
    shown = "; ".join(parts[:_SHOWN_CAPTURES]) + (f"; and {more} more capture(s)" if more > 0 else "")
    return None, (f"{len(logs)} log(s) with no capture: the capture found beside each holds none of its requests "
                  f"({shown})"), logs


def _foreign_note(left: dict[str, list[str]], holding: dict[str, str]) -> str | None:
    """The one note of a run on the logs left out because the capture found beside them (by
    capture) holds none of their requests (:func:`dsh_audit.capture.held_sessions`): another
    session's capture, so they have none, and are not compared; None when there are none. It says
    what each capture holds instead (``holding``: :func:`dsh_audit.gate.capture_holds`) in check's DSH810 words.

    Example:
        >>> _foreign_note({"w.jsonl": ["a/session.jsonl"]}, {"w.jsonl": "it holds requests of session(s) s-b"})
        'a/session.jsonl: no capture: the capture found beside the log (w.jsonl) holds none of its requests (it holds requests of session(s) s-b); not compared (--capture FILE names one)'
        >>> _foreign_note({"w.jsonl": ["a.jsonl", "b.jsonl"], "v.jsonl": ["c.jsonl"]},
        ...               {"w.jsonl": "it holds requests of session(s) s-b", "v.jsonl": "it holds no captured request"})
        '3 log(s) with no capture: the capture found beside each holds none of its requests (w.jsonl: it holds requests of session(s) s-b; v.jsonl: it holds no captured request); not compared (a.jsonl and 2 more; --capture FILE names one)'
    """
    said = _foreign(left, holding)
    if said is None:
        return None
    log, text, logs = said
    if log is not None:
        return f"{log}: {text}; not compared (--capture FILE names one)"
    return f"{text}; not compared ({listed(logs, shown=1)}; --capture FILE names one)"


def _nothing_compared(left: dict[str, list[str]], holding: dict[str, str], where: str) -> UsageError:
    """The error of a run that compared no log, no capture having failed to read: no capture was
    given, and each found (``left``, by capture) holds none of its logs' requests (it says what each
    holds, as :func:`_foreign_note`, which it replaces: a capture was found, it is another
    session's); without any, none was found beside any log (:func:`_no_capture`)."""
    said = _foreign(left, holding)
    if said is None:
        return _no_capture(where)
    log, text, logs = said
    if log is not None:
        return UsageError(f"{text}: nothing compared", path=log, hint=FOREIGN_CAPTURE_HINT)
    return UsageError(f"{text}: nothing compared ({listed(logs, shown=1)})", path=where, hint=foreign_capture_hint(several=True))


def _unread_note(capture: str, logs: Sequence[str | os.PathLike[str]], error: CaptureError) -> str:
    """The note, after the error of a capture found beside ``logs`` that cannot be read (``error``),
    on those logs: compared with no capture, in check's DSH810 words with why (its DSH802's).

    Example:
        >>> _unread_note("w.jsonl", ["a.jsonl"], CaptureError("line 2: not a JSON record", path="w.jsonl"))
        'a.jsonl: no capture compared: the capture found beside the log (w.jsonl) cannot be read: line 2: not a JSON record (--capture FILE names one)'
        >>> _unread_note("w.jsonl", ["a.jsonl", "b.jsonl"], CaptureError("is a FIFO", path="w.jsonl", line=3))
        '2 log(s) with no capture compared: the capture found beside them (w.jsonl) cannot be read: line 3: is a FIFO (a.jsonl and 1 more; --capture FILE names one)'
    """
    why = error.message if error.line is None else f"line {error.line}: {error.message}"
    if len(logs) == 1:
        return (f"{os.fspath(logs[0])}: no capture compared: the capture found beside the log ({capture}) cannot be "
                f"read: {why} (--capture FILE names one)")
    return (f"{len(logs)} log(s) with no capture compared: the capture found beside them ({capture}) cannot be read: "
            f"{why} ({listed([os.fspath(log) for log in logs], shown=1)}; --capture FILE names one)")


def _found_note(groups: dict[str, list[str | os.PathLike[str]]]) -> str:
    """The one note of a run that compared logs with the captures found beside them: the capture,
    or how many there were (each table's title names its log, and the captures no request explains
    name theirs).

    Example:
        >>> _found_note({"a/wire.jsonl": ["a/s1/session.jsonl", "a/s2/session.jsonl"]})
        'capture a/wire.jsonl found beside 2 log(s) (--capture FILE names another)'
        >>> _found_note({"a/wire.jsonl": ["a/s1/session.jsonl"], "b/wire.jsonl": ["b/s2/session.jsonl"]})
        'capture found beside 2 log(s): 2 files (wire.jsonl), each compared with the logs beside or below it (--capture FILE names one for all)'
    """
    logs = sum(len(its) for its in groups.values())
    if len(groups) == 1:
        return f"capture {next(iter(groups))} found beside {logs} log(s) (--capture FILE names another)"
    names = ", ".join(sorted({os.path.basename(capture) for capture in groups}))
    return (f"capture found beside {logs} log(s): {len(groups)} files ({names}), each compared with the logs "
            "beside or below it (--capture FILE names one for all)")


def _no_send(capture: str, rows: Sequence[RequestDiff], mine: str) -> str:
    """:func:`_nothing_matched`'s note of a capture holding no LLM call it could read: one whose body's
    coding could not be undone is named (it may be this run's call, read as captured: the warning at
    its line says what to store instead), else the capture of ``mine``'s run is asked for."""
    undone = list(dict.fromkeys(note for row in rows if row.request is None and row.capture is not None
                                and (note := row.capture.undecoded_note()) is not None))
    if undone:
        return (f"no request matched: {capture} holds no LLM call it could read: {'; '.join(undone)} (read as "
                "captured; the warning at its line says what to store instead)")
    return (f"no request matched: {capture} holds no LLM call (nothing a request could be paired with): give the "
            f"capture of {mine}'s run with --capture FILE")


def _nothing_matched(capture: str, rows: Sequence[RequestDiff], sessions: Sequence[str]) -> str | None:
    """The note of a comparison in which no request of the logs (their ``sessions``' ids) was paired
    with any send of ``capture`` though it holds some (``rows``: the comparison's): most likely the
    capture of another run. It names the sessions the capture's sends say they are of (DSH's
    session header, or pi-ai's session id: :attr:`~dsh_audit.capture.CapturedRequest.named_session`;
    shown escaped, as every note), or says the sends name none (pi-ai's: paired by
    route and order), and how to give the right one, or says it holds no LLM call (an empty file, or
    one of other calls alone: no request could be paired); None when a request was paired, or the
    logs hold no request.

    Example:
        >>> from types import SimpleNamespace as R
        >>> loose = [R(request=None, capture=R(named_session=s, kind="loop")) for s in ("s-b", "s-b", "s-c")]
        >>> _nothing_matched("w.jsonl", [R(request=1, capture=None), *loose], ["s-a"])
        'no request matched: w.jsonl holds sends of session(s) s-b, s-c, not s-a: give the capture of its run with --capture FILE (or diff the log of s-b)'
        >>> _nothing_matched("w.jsonl", [R(request=1, capture=None), R(request=None, capture=R(named_session=None, kind="loop"))],
        ...                  ["s-a"])
        "no request matched: w.jsonl holds 1 send(s) naming no session (no x-deepseek-harness-session-id header, no pi-ai session id), none of them paired by route and order with a request of s-a: is it this run's capture? give the right one with --capture FILE"
        >>> _nothing_matched("w.jsonl", [R(request=1, capture=None)], ["s-a"])
        "no request matched: w.jsonl holds no LLM call (nothing a request could be paired with): give the capture of s-a's run with --capture FILE"
    """
    if not any(row.request is not None for row in rows) or any(
            row.request is not None and row.capture is not None for row in rows):
        return None
    # the captured LLM calls no request took (a call that is no LLM call, kind ``other``, would pair
    # with no run's request: it says nothing of whose capture this is)
    sends = [row.capture for row in rows if row.request is None and row.capture is not None
             and row.capture.kind != "other"]
    mine = listed(sessions)
    if not sends:
        return _no_send(capture, rows, mine)
    named = list(dict.fromkeys(send.named_session for send in sends if send.named_session is not None))
    if named and not set(named) & set(sessions):
        shown = listed(named)
        return (f"no request matched: {capture} holds sends of session(s) {shown}, not {mine}: give the capture of "
                f"its run with --capture FILE (or diff the log of {named[0]})")
    if named:
        return (f"no request matched: {capture} holds {len(sends)} send(s), none paired with a request of {mine}: "
                "is it this run's capture? give the right one with --capture FILE")
    return (f"no request matched: {capture} holds {len(sends)} send(s) naming no session (no "
            f"x-deepseek-harness-session-id header, no pi-ai session id), none of them paired by route and order with a request of {mine}: "
            "is it this run's capture? give the right one with --capture FILE")
