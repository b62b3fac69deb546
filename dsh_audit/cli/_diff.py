"""``dsh-audit diff``: rebuilt requests against a capture of what was really sent."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import click

from ..capture import RequestDiff, compare_capture, gate_ok, held_sessions, load_capture, unreadable_capture
from ..diff import captures_said, requests_said
from ..errors import CaptureError, DshAuditError
from ..gate import capture_holds
from ..replay import Request
from ..runner import in_process, iter_many
from ..session import Failure, Session, read_session, route_apis, route_renderer, routes_hint
from ..report import dumps_line
from ..report.terminal import (About, fit_lines, listing_format, long_words_cut, print_table, progress_callback,
                               terminal_text, title_width)
from ._common import EXIT_BAD_INPUT, EXIT_FINDINGS, EXIT_OK, echo, echo_error, echo_note, echo_summary, echo_warning
from ._diff_captures import (_captures, _found_note, _foreign_note, _nothing_compared, _nothing_matched,
                             _unread_note)
from ._logs import file_size, log_progress, selected_logs, session_paths
from ._options import adapter_option, attachments_option, jobs_option, listing_options, lenient_option, routes_option
from ._output import PLACE_COLUMN, PLACE_LEGEND, PLACE_SHORT, place_text, session_title
from ._when import time_options

__all__ = ["diff_command"]

_COLUMNS = ("#", "kind", PLACE_COLUMN, "verdict", "first offset", "capture", "note")
# A capture no request explains has no request: its table has no "#" nor turn/step/attempt (else
# a narrow terminal's "# (no values) not shown" under it reads as said of the requests' table).
_LOOSE_COLUMNS = tuple(c for c in _COLUMNS if c not in ("#", PLACE_COLUMN))
_QUIET_NOTES = ("session header and order", "order (no session header)")
_DETAIL_LIMIT = 8
#: The verdicts whose rows' notes are said under their table, once for all the rows that share one.
_FOLDED = ("unrendered", "unmatched", "foreign")
# What renders a request's body (:func:`dsh_audit.session.route_renderer`).
_Render = Callable[[Request, dict[str, Any]], bytes]
def _capture_cell(row: RequestDiff) -> str:
    capture = row.capture
    if capture is None:
        return "-"
    return f"{capture.position} ({capture.locator})" if capture.locator else str(capture.position)


def _note(row: RequestDiff, *, said: str | None = None) -> str:
    """The row's note cell: why alignment paired it so (when it says more than the usual), then
    ``said`` (a note under the table) or else the row's own :attr:`RequestDiff.said`."""
    notes = [row.pairing.note] if row.pairing.note not in _QUIET_NOTES else []
    return "; ".join(n for n in notes + [said or row.said] if n)


def _cells(row: RequestDiff, *, note: str | None = None) -> tuple[object, ...]:
    """The row's cells; ``note`` the note cell when a note under the table says it (:func:`_table_notes`)."""
    request = row.request
    where = "-" if request is None else place_text(request.turn, request.step, request.attempt)
    offset = row.diff.first_offset if row.diff is not None else None
    return ("-" if request is None else request.index, row.kind, where, row.verdict,
            "-" if offset is None else offset, _capture_cell(row), _note(row) if note is None else note)


def _fold_key(row: RequestDiff) -> tuple[str | None, ...] | None:
    """What a row shares with the others whose note is said once under the table: an unrendered
    request's refusal (reason and hint), an unmatched or foreign row's pairing note (why nothing
    pairs with it, the same for many rows of another session's capture); None for any other row."""
    if row.verdict == "unrendered" and row.request is not None:
        return (row.verdict, row.note, row.hint)
    if row.verdict in _FOLDED and row.pairing.note:
        return (row.verdict, row.pairing.note)
    return None


def _table_notes(rows: Sequence[RequestDiff], first: int) -> tuple[list[list[str]], dict[int, str]]:
    """A table's notes, numbered from ``first``: one for each reason its unrendered, unmatched or
    foreign rows share (:func:`_fold_key`), naming its rows as ``check`` names the same finding of
    several (:func:`_folded_said`), an unrendered one followed by where in the session's log its
    requests cannot be rendered (:func:`_unrendered_at`); and each such row's note cell (``see note
    N``, after an unrendered row's pairing note), by the row's place in ``rows``. A row's reason
    repeated in every row of a narrow table took five lines a row."""
    folded: dict[tuple[str | None, ...], dict[int, RequestDiff]] = {}  # by place in rows
    for place, row in enumerate(rows):
        if (key := _fold_key(row)) is not None:
            folded.setdefault(key, {})[place] = row
    notes: list[list[str]] = []
    cells: dict[int, str] = {}
    for number, places in enumerate(folded.values(), start=first):
        its = list(places.values())
        unrendered = its[0].verdict == "unrendered"
        notes.append([f"note {number}: {_folded_said(its)}", *(_unrendered_at(its) if unrendered else [])])
        cells.update((place, _note(row, said=f"see note {number}") if unrendered else f"see note {number}")
                     for place, row in places.items())
    return notes, cells


def _folded_said(rows: Sequence[RequestDiff]) -> str:
    """The line of a note that says what ``rows`` (of one :func:`_fold_key`) share: ``6 requests:
    #0, ... are unrendered: REASON (hint: HINT)``, ``8 captures: 0, ... are foreign: ...``."""
    row = rows[0]
    if row.verdict == "unrendered":
        said = f"unrendered: {row.note}" if row.note else "unrendered"
        shown = f" (hint: {row.hint})" if row.hint else ""
        return f"{requests_said([_index(r) for r in rows], said)}{shown}"
    note = row.pairing.note or ""
    said = note if note.startswith(f"{row.verdict}:") else f"{row.verdict}: {note}"
    if row.request is not None:
        return requests_said([_index(r) for r in rows], said)
    return captures_said([r.capture.position for r in rows if r.capture is not None], said)


def _index(row: RequestDiff) -> int:
    assert row.request is not None, "a request's row has a request"
    return row.request.index


def _unrendered_at(rows: Sequence[RequestDiff]) -> list[str]:
    """The lines under a note that say where in the session's log (the table's title) its
    requests (``rows``) cannot be rendered, the event ``render`` names (:attr:`RequestDiff.seq`, its
    :attr:`RequestDiff.line`): one when all stop at one event, else one per event naming its
    requests; none when no refusal names one. "Refused" is said of a log DSH refuses, not here."""
    at: dict[str, list[int]] = {}
    for row in rows:
        if row.seq is not None:
            at.setdefault(f"seq {row.seq}" + ("" if row.line is None else f" (log line {row.line})"),
                          []).append(_index(row))
    if len(at) == 1 and len(next(iter(at.values()))) == len(rows):
        return [f"  cannot be rendered at {next(iter(at))}"]
    return [f"  {requests_said(indexes, f'cannot be rendered at {place}', linked=False)}"
            for place, indexes in at.items()]


def _details(rows: Sequence[RequestDiff]) -> None:
    for row in rows:
        if row.diff is None or row.verdict == "identical":
            continue
        label = f"#{row.request.index}" if row.request is not None else "capture"
        kinds = f" ({', '.join(row.diff.equivalence)})" if row.diff.equivalence else ""
        echo(f"{label} {row.kind} {row.verdict}{kinds} at byte {row.diff.first_offset}")
        echo(f"    expected: {row.diff.expected_context!r}")
        echo(f"    capture:  {row.diff.actual_context!r}")
        for difference in row.diff.differences[:_DETAIL_LIMIT]:
            echo(f"    {difference.path}: {difference.summary}")
        if len(row.diff.differences) > _DETAIL_LIMIT:
            echo(f"    ... {len(row.diff.differences) - _DETAIL_LIMIT} more (--json lists all)")


def _summary(rows: Sequence[RequestDiff], *, ok: bool) -> str:
    with_request = Counter(r.verdict for r in rows if r.request is not None)
    loose = Counter(r.verdict for r in rows if r.request is None)
    parts = ", ".join(f"{with_request[v]} {v}" for v in ("identical", "equivalent", "different", "unmatched",
                                                            "unrendered") if with_request[v] or v == "identical")
    requests = len({id(r.request) for r in rows if r.request is not None})
    return (f"{requests} request(s): {parts}; {loose['unmatched']} capture(s) unexplained, "
            f"{loose['foreign']} foreign: {'OK' if ok else 'FAILED'}")


def _print_tables(rows: Sequence[RequestDiff], sessions: dict[str, str], capture: str, *, named: bool,
                  noted: int = 0) -> int:
    """The tables of one capture's comparison: one per session, then the captures no request
    explains (their title names the ``capture`` when ``named``: several were compared). Under each
    table, the notes on its unrendered, unmatched and foreign rows (:func:`_table_notes`, numbered
    past the ``noted`` notes of the run before; a CSV row keeps its whole reason): how many notes
    the run has now."""
    for session_id, path in sessions.items():
        mine = [r for r in rows if r.request is not None and r.request.session_id == session_id]
        notes, cells = _notes_of(mine, noted)
        print_table(session_title(path, session_id), _COLUMNS,
                    (_cells(r, note=cells.get(place)) for place, r in enumerate(mine)),
                    about=About(path, session_id, "requests"), short=PLACE_SHORT, legend=PLACE_LEGEND)
        noted += _echo_notes(notes)
    loose = [r for r in rows if r.request is None]
    if loose:  # in CSV, no log nor session: the capture's name in the ``table`` column when several were compared
        title = "captures no request explains" + (f" in {capture}" if named else "")
        notes, cells = _notes_of(loose, noted)
        unexplained = ([cell for column, cell in zip(_COLUMNS, _cells(r, note=cells.get(place)))
                        if column in _LOOSE_COLUMNS] for place, r in enumerate(loose))
        print_table(title, _LOOSE_COLUMNS, unexplained, about=About("", "", title))
        noted += _echo_notes(notes)
    return noted


def _notes_of(rows: Sequence[RequestDiff], noted: int) -> tuple[list[list[str]], dict[int, str]]:
    """:func:`_table_notes` of a table's ``rows``, numbered past ``noted``; none in CSV (a row keeps its reason)."""
    return ([], {}) if listing_format() == "csv" else _table_notes(rows, noted + 1)


def _echo_notes(notes: Sequence[Sequence[str]]) -> int:
    """Print the notes under a table, wrapped at spaces with a path kept whole as check's findings
    are (on a terminal, or at COLUMNS when piped): how many there were."""
    width = title_width() if listing_format() == "table" else None
    for note in notes:
        # each line escaped whole first: a newline of a log's text in a note breaks no line (as check's findings);
        # a word longer than a line (a log's 20,000-character model) cut, not folded into 250 lines
        shown = note if width is None else [long_words_cut(terminal_text(said), width) for said in note]
        for line in shown if width is None else [part for said in shown for part in fit_lines(said, width)]:
            echo(line)
    return len(notes)


def _advancing(render: _Render, advance: Callable[[int], None], share: int) -> _Render:
    """``render``, moving the progress bar by ``share`` after each body it renders."""

    def run(request: Request, options: dict[str, Any]) -> bytes:
        body = render(request, options)
        advance(share)
        return body

    return run


@click.command("diff")
@click.argument("paths", nargs=-1, type=click.Path(readable=False))
@click.option("--capture", "capture_path", type=click.Path(),
              help="What was sent, for every log: a wire.jsonl file, a HAR 1.2 file or a folder of JSON bodies. Default: a "
                   "wire.jsonl beside each log or up to four folders above it, as `check` finds it.")
@adapter_option
@click.option("--strict", is_flag=True,
              help="Fail on equivalent bodies too (same JSON, other bytes: a prefix-cache break).")
@listing_options
@routes_option
@attachments_option
@lenient_option
@jobs_option
@time_options
def diff_command(paths: tuple[str, ...], capture_path: str | None, adapter: str, strict: bool, as_json: bool,
                 routes: str | None, lenient: bool, max_version: int, jobs: int, since: float | None,
                 until: float | None) -> int:
    """Compare the requests rebuilt from logs with a capture of what DSH really sent.

    PATHS are log files, session folders, a sessions root (default $DSH_HOME/sessions, else
    ~/.dsh/sessions), or a session id, a unique id prefix or `latest` (looked up there). Without
    --capture, each log is compared with the wire.jsonl beside it or up to four folders above it,
    as `check` finds it (one note a run names it, or counts them when several were found; the logs
    with none are counted in one note and not compared; so are the logs a wire.jsonl found holds
    no request of: it is another session's capture). A capture may hold requests of several
    sessions (they are matched by the x-deepseek-harness-session-id header, then by kind and
    order). One row per request. Columns: "#" the request's INDEX, as `requests` numbers it;
    "kind" loop, compaction or title; "turn/step/attempt" where it was sent ("t/s/a" on a narrow
    terminal); "verdict" identical, equivalent (same JSON, other bytes), different, unmatched or
    unrendered; "first offset" the first byte at which the rebuilt and the captured body differ;
    "capture" the captured request's position in the capture; "note" why alignment paired them
    so, or the note under the table that says more.
    Compaction requests take DSH's instruction text from the captured body. --since and --until
    compare only the logs active in that window, by the log's own timestamps; --jobs compares the
    logs of each capture in a worker process of their own (a capture's logs are compared together:
    its requests are paired across them), with the output of a serial run. Exit 0 when every
    loop request is identical or equivalent (identical with --strict) and no title or compaction
    body is different (equivalent with --strict), 1 otherwise, 2 on bad input.

    \b
    Example:
        dsh-audit diff ~/.dsh/sessions --capture wire.jsonl --json | jq .verdict
        dsh-audit diff recorded/a-chat
    """
    given = session_paths(paths)
    logs = selected_logs(given, since, until, gate=True)  # nothing to compare is an error, as before
    groups = _captures(logs, capture_path, given[0])
    compared: list[tuple[str, list[RequestDiff], dict[str, str]]] = []
    left: dict[str, list[str]] = {}  # by capture found: the logs it holds none of the requests of
    holding: dict[str, str] = {}  # by capture found: what it holds instead (:func:`dsh_audit.gate.capture_holds`)
    bad = False
    for result in _comparisons(groups, logs, jobs=jobs, adapter=adapter, routes=routes, lenient=lenient,
                               max_version=max_version, found=capture_path is None):
        for said in result.said:
            if isinstance(said, DshAuditError):
                echo_error(said)
            else:
                echo_warning(said)
        if result.capture_error is not None:  # found beside its logs: their error; the other captures are compared
            if capture_path is not None:
                raise result.capture_error
            echo_error(unreadable_capture(result.capture_error, found=True))
            echo_note(_unread_note(result.capture, groups[result.capture], result.capture_error))
            bad = True
            continue
        if result.left:
            left[result.capture], holding[result.capture] = result.left, result.holding
        if result.sessions or result.failed or not result.left:  # not: a capture none of whose logs it holds
            compared.append((result.capture, result.rows, result.sessions))
        bad = bad or result.failed
    if not compared and not bad:  # each capture found holds none of its logs' requests: the error says whose
        raise _nothing_compared(left, holding, given[0])
    if (note := _foreign_note(left, holding)) is not None:
        echo_note(note)
    if not compared:  # no capture could be read: each one's error said, and its logs
        return EXIT_BAD_INPUT
    if capture_path is None:
        read = {capture for capture, _, _ in compared}  # not one that cannot be read: its note said its logs
        held = {capture: [log for log in its if os.fspath(log) not in left.get(capture, ())]
                for capture, its in groups.items() if capture in read}
        echo_note(_found_note({capture: its for capture, its in held.items() if its}))
    rows = [row for _, found, _ in compared for row in found]
    ok = gate_ok(rows, strict=strict)
    for capture, found, sessions in compared:  # likely another run's capture: said first (whose, what to give)
        if (hint := _nothing_matched(capture, found, list(sessions))) is not None:
            echo_note(hint)
    if as_json:  # each row starts with its log's path, as every other per-request stream (null: foreign)
        log_of = {session_id: path for _, _, sessions in compared for session_id, path in sessions.items()}
        for row in rows:
            fields = row.to_json()  # and where an unrendered request's refusal is, as check's finding names it
            click.echo(dumps_line({"path": log_of.get(fields["session_id"]), **fields, "seq": row.seq,
                                   "line": row.line}))
    else:
        noted = 0
        for capture, found, sessions in compared:
            noted = _print_tables(found, sessions, capture, named=len(compared) > 1, noted=noted)
        _details(rows)
        echo_summary(_summary(rows, ok=ok and not bad))  # a log it could not read is not OK (its error said, exit 2)
    if bad:
        return EXIT_BAD_INPUT
    return EXIT_OK if ok else EXIT_FINDINGS


@dataclass(frozen=True, slots=True)
class _Compared:
    """One capture's comparison with its logs (:func:`_compare`), made in this process or a worker's.

    Attributes:
        capture: the capture compared with.
        rows: a row per request and per capture no request explains.
        sessions: the path of each session id read.
        said: what the command says of it, in order: a warning's text, or an error.
        failed: a log could not be read (its error is among ``said``).
        capture_error: the capture could not be read, or is too large to align (nothing compared).
        left: the logs (as given) the capture, found beside them, holds none of the requests of:
            not compared (:func:`dsh_audit.capture.held_sessions`).
        holding: what the capture holds instead, when ``left`` has logs (:func:`dsh_audit.gate.capture_holds`).
    """

    capture: str
    rows: list[RequestDiff]
    sessions: dict[str, str]
    said: list[str | DshAuditError]
    failed: bool = False
    capture_error: CaptureError | None = None
    left: list[str] = field(default_factory=list)
    holding: str = ""


def _comparisons(groups: dict[str, list[str | os.PathLike[str]]], logs: Sequence[str | os.PathLike[str]], *,
                 jobs: int, **options: Any) -> Iterator[_Compared]:
    """Each capture's comparison (:func:`_compare`), in the order of ``groups``: in this process with
    a progress bar that moves with every body rendered, or (``jobs``) a capture's logs per worker."""
    if in_process(jobs, "local", len(groups)):
        # The bar's work: loading each capture, reading the logs, then rendering and comparing each
        # request (as much again as the capture: its bodies are what each rendered body is compared with).
        weights = {capture: file_size(capture) if os.path.isfile(capture) else sum(map(file_size, its))
                   for capture, its in groups.items()}
        with log_progress(logs, label="diff", extra=2 * sum(weights.values())) as advance:
            for capture, its in groups.items():
                yield _compare(capture, its, weight=weights[capture], advance=advance, **options)
        return
    units = [tuple(os.fspath(log) for log in its) for its in groups.values()]
    task = partial(_compare_unit, captures=dict(zip(units, groups)), **options)
    with progress_callback(len(logs), label="diff") as report:
        for capture, result in zip(groups, iter_many(units, task, jobs=jobs, progress=report)):
            if result.value is None:  # the task failed (a bug): its error, as every parallel command says it
                yield _Compared(capture, [], {}, [result.error] if result.error is not None else [], failed=True)
            else:
                yield result.value


def _compare_unit(unit: tuple[str, ...], *, captures: dict[tuple[str, ...], str], **options: Any) -> _Compared:
    """:func:`_compare` of the logs ``unit`` with their capture (a task of a worker process)."""
    return _compare(captures[unit], unit, **options)


def _no_advance(size: int) -> None:
    """What ``advance`` is in a worker process: the parent's bar moves by the logs done."""


def _compare(capture: str, logs: Sequence[str | os.PathLike[str]], *, adapter: str, routes: str | None,
             lenient: bool, max_version: int, found: bool, weight: int = 0,
             advance: Callable[[int], None] = _no_advance) -> _Compared:
    """``logs`` compared with ``capture``: the rows, the path of each session id read, what to say
    (a torn capture line, each log's warnings and errors) and whether a log could not be read; or
    the capture's error (:class:`~dsh_audit.errors.CaptureError`), with nothing compared. A capture
    ``found`` beside the logs (not given) is compared only with the logs it holds requests of
    (:func:`_held`)."""
    torn: list[str] = []  # a capture's torn last line is dropped and said, as check says it
    try:
        captures = load_capture(capture, warnings=torn)
    except CaptureError as exc:
        return _Compared(capture, [], {}, [], capture_error=exc)
    said: list[str | DshAuditError] = list(torn)
    advance(weight)
    requests: list[Request] = []
    sessions: dict[str, str] = {}
    given: dict[str, str] = {}  # session id -> its log as given
    opened: list[Session] = []
    bad = False
    for log in logs:
        session = read_session(log, lenient=lenient, max_version=max_version, routes=routes)
        said.extend(session.warnings)
        if isinstance(session, Failure):
            said.append(session.error)
            bad = True
            continue
        sessions[session.id] = session.path
        given[session.id] = os.fspath(log)
        opened.append(session)
        requests.extend(session.requests)
    render = _advancing(route_renderer(opened, adapter=adapter), advance, weight // max(len(requests), 1))
    try:
        rows = compare_capture(requests, captures, render=render, routes=route_apis(opened, adapter=adapter))
    except CaptureError as exc:  # too large to align
        return _Compared(capture, [], sessions, said, bad, capture_error=exc)
    advance(weight)  # the requests not rendered (unmatched, unrendered) are done too
    if routes is None:  # a refusal that asks for --routes names a bundle's route file or the home's layer, as check's
        rows = [replace(row, hint=routes_hint(sessions[row.request.session_id], row.hint))  # a manifest read once
                if row.hint and row.request is not None else row for row in rows]
    by_id = {session.id: session for session in opened}
    rows = [_placed(row, by_id) for row in rows]
    if not found:
        return _Compared(capture, rows, sessions, said, bad)
    named = held_sessions(rows)
    holding = capture_holds(rows, named)  # said of the logs it holds nothing of
    rows, held = _held(rows, named)
    return _Compared(capture, rows, {sid: path for sid, path in sessions.items() if sid in held}, said, bad,
                     left=[log for sid, log in given.items() if sid not in held], holding=holding)


def _placed(row: RequestDiff, sessions: dict[str, Session]) -> RequestDiff:
    """``row`` with the line of its refusal's event (:attr:`RequestDiff.seq`) as its log's read
    found it, when the raiser named none: the line ``check``'s finding of it names."""
    if row.seq is None or row.line is not None or row.request is None:
        return row
    return replace(row, line=sessions[row.request.session_id].line_of(row.seq))


def _held(rows: list[RequestDiff], held: set[str]) -> tuple[list[RequestDiff], set[str]]:
    """The rows of a capture found beside logs, kept for the sessions it holds requests of
    (``held``: :func:`dsh_audit.capture.held_sessions`' of ``rows``), and those sessions' ids: none
    when it holds none of the logs' (its sends then are no log's: neither compared nor unexplained)."""
    if not any(row.request is not None and row.request.session_id in held for row in rows):
        return [], set()
    return [row for row in rows if row.request is None or row.request.session_id in held], held


COMMANDS = [diff_command]
