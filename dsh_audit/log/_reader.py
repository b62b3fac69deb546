"""Read one DSH session log as a stream of events, refusing what DSH refuses.

DSH validates a whole log before it uses any of it, in a fixed order (spec §1.3-§1.8): header
line, committed-region scan (a bad line or seq gap is fatal only when a later record closes a
turn, otherwise it is a crash-damaged tail), retired legacy shapes, in-memory upgrades and message
shapes, unknown event types, the session header's fields, then each event's envelope and the
surface fold. We stream instead: events are yielded as they are read, and when one of those rules
fails we stop yielding, read the rest of the file only to find any failure DSH would have
reported first, and raise that one. A consumer that has already used earlier events therefore
always ends with the same verdict DSH gives.

The refusals themselves, in DSH's words and order, are :mod:`._refusals`'s; a second consumer of
the lines read (:class:`~dsh_audit.log.LineTee`) is fed by :mod:`._tee`.
"""

from __future__ import annotations

import os
import signal
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, BinaryIO, NoReturn

import orjson

from ..errors import CorruptLogError, DshAuditError, UnreadableError, UnsupportedFormatError
from ._decode import Line, TornTail, iter_lines, parse_line
from ._header import TOO_DEEP, TOO_DEEP_HINT, lenient_mends, parse_header
from ._json_line import MAX_DEPTH, NestingError
from ._json_room import _ROOM_CHECKED
from ._outputs import open_regular
from ._records import RowError, decode_record, row_head
from ._refusals import (DAMAGED_HINT, LEGACY_HINT, META, RETIRED_TYPES, SCAN, SEED, UPGRADE, Candidate, event_refusal,
                        retired_refusal, seq_refusal)
from ._shapes import MAX_SAFE, is_plain_chunk
from ._tee import LineTee, _Teed
from ._types import CHUNK_ROW_TYPES, KNOWN_EVENT_TYPES, SURFACE_TYPES, Event, SessionHeader, new_event
from ._upgrade import _UPGRADED_TYPES, Malformed, MessageIds, upgrade_event
from ._versions import BODY_CUE_TYPES, LATEST_VERSION, SUPPORTED_VERSIONS, body_mismatch, known_types, to_v0_shapes

__all__ = ["SUPPORTED_VERSIONS", "SessionLog", "read_header", "read_log", "read_stream"]

_UNPARSED = object()
#: a line up to this long is parsed by orjson alone: parse_json checks a longer one's room and nesting
_SHORT = min(2 * MAX_DEPTH, _ROOM_CHECKED)
#: the record types whose every check, with exactly the envelope's four keys, is the envelope's:
#: none is retired, upgraded, message-shaped, brought to v0 shapes or read by the scan itself, and
#: only ``assistant/chunk`` is a cue of an older body (:data:`BODY_CUE_TYPES`)
_ENVELOPE_ONLY = frozenset({"assistant/chunk", "step/start", "step/end", "tool/call"})
assert not _ENVELOPE_ONLY & (RETIRED_TYPES | _UPGRADED_TYPES | SURFACE_TYPES | (BODY_CUE_TYPES - {"assistant/chunk"}))

def _run_ending() -> bool:
    """Whether the run is ending, so that no verdict of the rest of the log is wanted (tour of session
    45: a Ctrl-C of ``check`` read on through a 40 MB log, 4-15 s): the exception being handled where
    a log is closed (a ``finally``, an ``__exit__``) is, or arose from, a Ctrl-C (KeyboardInterrupt)
    or an exit (SystemExit), or the console script's Ctrl-C handler has fired (:func:`_interrupted`)."""
    error = sys.exc_info()[1]
    while error is not None:
        if not isinstance(error, (Exception, GeneratorExit)):
            return True
        error = error.__context__
    return _interrupted()


def _interrupted() -> bool:
    """Whether the console script's Ctrl-C handler (``dsh_audit.cli._FirstInterrupt.interrupt``, a
    bound method whose object notes ``fired``) has raised its KeyboardInterrupt. A generator that a
    Ctrl-C's unwinding collects is closed with nothing in hand (CPython sets the raised exception
    aside while it finalizes one), so only the handler can tell that close from a consumer's
    ``break`` (review C of session 45, F3)."""
    owner = getattr(signal.getsignal(signal.SIGINT), "__self__", None)
    # the CLI's own handler only (by its type's name and home: log may not import cli); a caller's
    # handler whose object happens to have a ``fired`` flag leaves a ``break`` draining as it should
    return type(owner).__name__ == "_FirstInterrupt" and type(owner).__module__.startswith("dsh_audit.") \
        and getattr(owner, "fired", False) is True


@dataclass
class SessionLog:
    """One opened log: its header now, its events once, in order, through :meth:`events`.

    Attributes:
        path: the file read.
        header: the parsed session header.
        lenient: whether header-only adaptations were allowed (see :func:`read_log`).
        warnings: torn tails and dropped damaged records, filled while reading.
        upgrades: count of each legacy upgrade applied.
        adaptations: what lenient mode changed in the header.
    """

    path: str
    header: SessionHeader
    lenient: bool = False
    format_version: int = 0
    warnings: list[str] = field(default_factory=list)
    upgrades: Counter[str] = field(default_factory=Counter)
    adaptations: list[str] = field(default_factory=list)
    event_count: int = 0
    seed_length: int | None = None
    _known: frozenset[str] = field(default=KNOWN_EVENT_TYPES, repr=False)
    _lines: Iterator[Line] | None = field(default=None, repr=False)
    _stream: IO[bytes] | None = field(default=None, repr=False)
    _torn: list[TornTail] = field(default_factory=list, repr=False)
    _candidate: Candidate | None = field(default=None, repr=False)
    _consumed: bool = field(default=False, repr=False)
    _collapse_rows: bool = field(default=False, repr=False)
    # Scan position, kept here so that fail() resumes the scan where replay stopped it.
    _next_seq: int = field(default=0, repr=False)
    _message_ids: MessageIds = field(default_factory=MessageIds, repr=False)

    @property
    def session_id(self) -> str:
        return self.header.id

    def _err(self, cls: type[DshAuditError], message: str, *, line: int | None, seq: int | None,
             hint: str | None = None) -> DshAuditError:
        return cls(message, path=self.path, line=line, seq=seq, hint=hint)

    def _offer(self, stage: int, position: int, error: DshAuditError) -> None:
        candidate = Candidate(stage, position, error)
        if self._candidate is None or candidate.key() < self._candidate.key():
            self._candidate = candidate

    def events(self, *, collapse_rows: bool = False) -> Iterator[Event]:
        """Yield every event once, in seq order; raise at the end if DSH would refuse the log.

        Args:
            collapse_rows: yield only the first ``assistant/chunk`` of each packed chunk row
                (the row is still validated and its seqs counted). Replay needs no more, and it
                saves building thousands of delta events.
        """
        if self._consumed:
            raise RuntimeError("SessionLog.events() can be iterated only once; call read_log again")
        self._consumed = True
        self._collapse_rows = collapse_rows
        try:
            yield from self._scan_rest()
            if self._candidate is not None:
                raise self._candidate.error
        finally:
            # Also when the consumer stops (GeneratorExit): on purpose (a ``break``), the tee is given
            # the rest of the log here, so that its verdict is the whole log's before the owner closes
            # the log (review C of session 45, F3); unwound by a Ctrl-C, it is not (:func:`_run_ending`).
            self.close()

    def close(self) -> None:
        """Release the file; a log whose events are never read is closed when collected too.

        A log read with a ``tee`` (:func:`read_log`) first reads the rest of the file for the tee
        when its events were not all read (a refusal, or a consumer that stops on purpose, stops the
        reader early: the tee's verdict is still the whole log's), but not when the run itself is
        ending (:func:`_run_ending`): a Ctrl-C would otherwise wait for the rest of a big log.
        """
        if self._stream is not None:
            try:
                if isinstance(self._lines, _Teed) and not _run_ending():
                    self._lines.drain()
            finally:
                self._stream.close()
                self._stream = None

    def __enter__(self) -> "SessionLog":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def __del__(self) -> None:
        # A finalizer never raises: Python would print "Exception ignored in ... __del__" and a
        # traceback (fuzz round 16). An error of the drain or of the close is dropped here (the
        # log's reader has said what it had to); a Ctrl-C is let through: the CLI's handler
        # (dsh_audit.cli._FirstInterrupt) sends it again to the main flow, silently.
        try:
            self.close()
        except Exception:  # noqa: BLE001 - nothing in a finalizer may raise
            pass

    def fail(self, error: DshAuditError, *, seq: int | None = None) -> NoReturn:
        """Raise the error DSH would report, given that replay found ``error`` at ``seq``.

        Reads the rest of the log for failures DSH checks before the surface fold.
        """
        self._offer(SEED, seq if seq is not None else 1 << 62, error)
        for _ in self._scan_rest():
            pass
        assert self._candidate is not None
        self.close()
        raise self._candidate.error

    # -- scanning ---------------------------------------------------------------------------

    def _scan_rest(self) -> Iterator[Event]:
        assert self._lines is not None
        sid = self.header.id
        expected = self._next_seq
        issue: DshAuditError | None = None
        dropped = 0
        message_ids = self._message_ids
        collapse = self._collapse_rows
        cues = self.format_version >= 2  # an older body under the header is looked for until found
        # A short line of a log read without a tee is parsed here, by orjson alone: what parse_line
        # adds (room and nesting checks, the tee's shared value) applies only to longer lines or to
        # a teed read; a line orjson refuses takes parse_line, which says why. (``short``: the longest
        # line parsed here, -1 for a teed read: none.)
        short = _SHORT if not isinstance(self._lines, _Teed) else -1
        fast = _ENVELOPE_ONLY & self._known  # the fast lane's types this version knows
        for line in self._lines:
            value: Any = _UNPARSED
            if len(line.raw) <= short:
                try:
                    value = orjson.loads(line.raw)
                except orjson.JSONDecodeError:
                    pass
            # The fast lane of a record whose only checks are its envelope's (:data:`_ENVELOPE_ONLY`: a
            # plain chunk, the bulk of every log, and the step and tool-call records), taken when the
            # slow path below would prove every other check unnecessary: no damage or older body looked
            # for, exactly the keys type, seq, time and data, the next seq (a safe integer: after a
            # packed row at the top of the range it may not be), an exact int time within the safe
            # range, a type this version knows and, for a chunk, an object data (:func:`is_plain_chunk`).
            if type(value) is dict and len(value) == 4 and issue is None:
                tag = value.get("type")
                if type(tag) is str and tag in fast:
                    seq, time, data = value.get("seq"), value.get("time"), value.get("data", _UNPARSED)
                    if (seq == expected and type(seq) is int and seq <= MAX_SAFE
                            and type(time) is int and -MAX_SAFE <= time <= MAX_SAFE
                            and (type(data) is dict and not cues if tag == "assistant/chunk"
                                 else data is not _UNPARSED)):
                        expected += 1
                        self._next_seq = expected
                        if self._candidate is None:
                            yield new_event(seq, tag, time, data, line.number)
                        continue
            # The line's records (a packed row's events, or the one record of any other line), and
            # how many members of a collapsed row they leave out; read here, not by a call per line.
            try:
                if value is _UNPARSED:
                    value = parse_line(line)  # a tee's validator may have parsed it already
                tag = value.get("type") if type(value) is dict else None  # JSON objects are exact dicts
                if cues and issue is None and type(tag) is str and tag in BODY_CUE_TYPES:
                    cues = not self._older_body(value, line.number, expected)
                if type(tag) is str and tag in CHUNK_ROW_TYPES:
                    decoded, extra = _row_records(value, collapse)
                else:
                    decoded, extra = (value,), 0
            except (UnicodeDecodeError, NestingError) as exc:  # ValueErrors too: before the next clause
                raise self._unreadable(exc, line.number, expected) from None
            except (ValueError, RowError) as exc:
                if issue is None:
                    detail = str(exc) if isinstance(exc, RowError) else "not valid JSON"
                    issue = self._err(CorruptLogError,
                                      f"corrupt session log: unparsable committed event ({detail})",
                                      line=line.number, seq=expected,
                                      hint=DAMAGED_HINT)
                dropped += line.count  # a run of blank (or junk) lines is one Line
                continue
            if issue is not None:
                if any(isinstance(e, dict) and e.get("type") == "turn/end" for e in decoded):
                    raise issue
                dropped += len(decoded) + extra
                continue
            number = line.number
            for event in decoded:
                seq = event.get("seq") if isinstance(event, dict) else None
                if seq != expected or isinstance(seq, bool):
                    message, at, hint = seq_refusal(event, expected, number)
                    issue = self._err(CorruptLogError, message, line=number, seq=at, hint=hint)
                    if any(isinstance(e, dict) and e.get("type") == "turn/end" for e in decoded):
                        raise issue
                    dropped += len(decoded)
                    break
                expected += 1 + extra
                self._next_seq = expected
                if is_plain_chunk(event):  # the bulk of every log: its envelope is all there is to check
                    checked: Event | None = new_event(seq, "assistant/chunk", event["time"], event["data"], number)
                else:
                    if type(seq) is float or type(event.get("time")) is float:
                        event = _js_integers(event)
                    checked = self._check(event, number, sid, message_ids)
                if checked is not None and self._candidate is None:
                    yield checked
        self.event_count = expected
        self._warn_damage(issue, dropped, expected)

    def _older_body(self, value: dict[str, Any], line: int, seq: int) -> bool:
        """Whether ``value``, the record stored at ``seq``, is of an older body than the header's
        version (:func:`body_mismatch`); if so its refusal is offered, as DSH's codec for that
        version refuses the first such record it decodes."""
        mismatch = body_mismatch(value, self.format_version)
        if mismatch is not None:
            self._offer(SCAN, seq, self._err(UnsupportedFormatError, mismatch.message(), line=line, seq=seq,
                                             hint=mismatch.hint()))
        return mismatch is not None

    def _unreadable(self, exc: ValueError, line: int, expected: int) -> DshAuditError:
        """The refusal of a line that is not UTF-8 (``exc`` a UnicodeDecodeError) or nests deeper than
        dsh-audit can process (a NestingError)."""
        if isinstance(exc, UnicodeDecodeError):
            return self._err(UnreadableError, f"line is not valid UTF-8 (byte {exc.start})", line=line, seq=expected,
                             hint="DSH logs are UTF-8 text; the file is damaged or not a DSH log")
        return self._err(UnreadableError, TOO_DEEP, line=line, seq=expected, hint=TOO_DEEP_HINT)

    def _warn_damage(self, issue: DshAuditError | None, dropped: int, expected: int) -> None:
        """Warn of a crash-damaged tail the scan dropped, and of the torn tails the decoder left."""
        if issue is not None and dropped:
            self.warnings.append(
                f"{self.path}:{issue.line}: {issue.message}; no turn/end follows, so DSH treats the "
                f"rest as a crash-damaged tail: {dropped} record(s) "
                f"{f'after seq {expected - 1}' if expected else 'from the first event on'} ignored")
        for torn in self._torn:
            self.warnings.append(f"{self.path}: {torn}")
        self._torn.clear()

    def _check(self, raw: Any, line: int, sid: str, message_ids: MessageIds) -> Event | None:
        """The event of any record but a plain chunk (:func:`is_plain_chunk`, which the scan makes
        itself), upgraded; None when DSH refuses it (the refusal is offered)."""
        if self.format_version >= 1:
            notes: list[str] = []
            raw = to_v0_shapes(raw, self.format_version, notes)
            for note in notes:
                self.upgrades[note] += 1
        seq = raw["seq"]
        tag = raw.get("type")
        retired = retired_refusal(raw, sid=sid, path=self.path, line=line) \
            if type(tag) is str and tag in RETIRED_TYPES else None  # JSON strings are exact strs
        if retired is not None:
            self._offer(retired[0], seq, retired[1])
        try:
            event, upgrade = upgrade_event(raw, sid, message_ids)
        except Malformed as exc:
            self._offer(UPGRADE, seq, self._err(CorruptLogError, str(exc), line=line, seq=seq, hint=LEGACY_HINT))
            return None
        if upgrade:
            self.upgrades[upgrade] += 1
        refusal = event_refusal(event, seq, self._known, sid=sid, path=self.path, line=line)
        if refusal is not None:
            self._offer(refusal[0], seq, refusal[1])
            return None
        etype: Any = event.get("type")  # a str: the envelope check refuses any other
        if (etype == "session/end-seed" and self.format_version >= 2 and self.seed_length is None
                and isinstance(event.get("data"), dict) and event["data"].get("inherited") is True):
            self.seed_length = seq
        if etype == "tool/result":
            # Only a legacy tool-result replacement inherits an id, and only from the tool/result
            # it replaces (any other target is refused by the surface fold), so only those are kept.
            message_ids[seq] = event["data"]["message"]["id"]
        return new_event(seq, etype, event["time"], event["data"], line, event.get("surfaceOp"),
                         event.get("sourceEventSeqs"), event.get("ignorable") is True)


def _row_records(row: dict[str, Any], collapse: bool) -> tuple[Sequence[Any], int]:
    """A packed row's events, and how many members a collapsed row leaves out: with ``collapse``
    its first event only (:func:`row_head`: a tee's validator may have expanded the row already).

    Raises:
        RowError: the row fails DSH's strict row validation.
    """
    if collapse:
        head, count = row_head(row)
        return (head,), count - 1
    return decode_record(row), 0


def _js_integers(event: dict[str, Any]) -> dict[str, Any]:
    """``event`` with a ``seq`` or ``time`` written as an integral float (``1.0``, ``-0.0``) made an
    int: JavaScript has one number type, so DSH reads ``1.0`` as ``1``; any other float is left
    for the envelope check to refuse."""
    fixed = dict(event)
    for key in ("seq", "time"):
        value = fixed.get(key)
        if type(value) is float and value.is_integer():
            fixed[key] = int(value)
    return fixed


def read_log(path: str | os.PathLike[str], *, lenient: bool = False,
             max_version: int = LATEST_VERSION, tee: LineTee | None = None) -> SessionLog:
    """Open one session log (``.jsonl`` or ``.jsonl.zstd``) and read its header.

    Args:
        path: the log file.
        lenient: accept headers DSH refuses only for their metadata, the way DSH's golden oracle
            adapted tokenised test fixtures: a missing ``version`` or ``delegationDepth`` becomes 0
            and a non-absolute ``cwd`` is accepted (v0 headers only). Event content is never relaxed.
        max_version: the newest format version to read (default: every released one, v4).
            ``max_version=0`` reproduces DSH 0.1.0-rc.8, which reads only v0.
        tee: sees every decoded line as it is read (see :class:`LineTee`), the file's end or the
            decoding error that stopped it; when the reader stops early (a refused header or
            event) the rest of the file is read for the tee before the file is closed, so the
            tee always sees the whole file, read once.

    Returns:
        A :class:`SessionLog`; iterate :meth:`SessionLog.events` once to read the events.

    Example:
        >>> log = read_log("sample_logs/chat/session.jsonl")  # doctest: +SKIP
        >>> [e.type for e in log.events()][:2]  # doctest: +SKIP
        ['agent/inbox/spliced', 'turn/start']
    """
    name = os.fspath(path)
    stream = open_regular(name)  # closed by SessionLog; a FIFO or device is refused, never read
    return read_stream(stream, name, lenient=lenient, max_version=max_version, tee=tee)


def read_header(path: str | os.PathLike[str]) -> SessionHeader | None:
    """The header of the log at ``path``, its events not read (leniently, as :func:`read_log`
    reads a tokenised fixture's: its session id and times are what is wanted); None when it cannot
    be read (reading the log says why)."""
    try:
        log = read_log(path, lenient=True)
    except (DshAuditError, OSError):
        return None
    log.close()
    return log.header


def read_stream(stream: BinaryIO, name: str, *, lenient: bool = False,
                max_version: int = LATEST_VERSION, tee: LineTee | None = None) -> SessionLog:
    """:func:`read_log` over an already open binary stream (``name`` is the path reported).

    The stream is read only as the events are iterated; a stream whose ``read`` blocks until the
    writer appends more makes :meth:`SessionLog.events` a live feed. The log closes the stream.
    """
    torn: list[TornTail] = []
    lines: Iterator[Line] = iter_lines(stream, name, torn, junk=True)  # a run of junk lines at C speed
    if tee is not None:
        lines = _Teed(lines, tee, torn)
    try:
        first = next(lines, None)
        header, adaptations, meta_problem = parse_header(name, first, lenient=lenient, max_version=max_version)
    except BaseException as exc:
        try:
            if isinstance(lines, _Teed) and isinstance(exc, DshAuditError):
                lines.drain()  # a refused header: the tee still sees the whole file
        finally:
            stream.close()
        raise
    log = SessionLog(path=name, header=header, lenient=lenient, adaptations=adaptations,
                     format_version=header.version, seed_length=header.seed_length,
                     _known=known_types(header.version, KNOWN_EVENT_TYPES),
                     _lines=lines, _stream=stream, _torn=torn)
    if meta_problem:
        log._offer(META, -1, log._err(
            CorruptLogError, f'stored session "{header.id}" failed validation: {meta_problem}', line=1, seq=None,
            hint=("tokenised test fixtures need --lenient" if not lenient and lenient_mends(header.raw) else
                  "`dsh-audit validate FILE` names the header field (DSH212-DSH214); --lenient accepts only a relative "
                  "cwd")))
    return log


