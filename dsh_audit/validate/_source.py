"""The physical pass: bytes to records to events with contiguous seqs (DSH1xx).

DSH's rule for damage (spec §1.3, format-versions §9.1): the first unparsable record or seq
break is fatal when a later record closes a turn, and otherwise starts a crash-damaged tail that
is dropped. We hold the records that follow a problem until we know which case it is: a later
``turn/end`` turns every held problem into an error and releases the held events for the event
rules; the end of the file turns the first problem into one DSH106 warning and drops the rest.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, BinaryIO

from ..errors import MalformedRecordError, UnreadableError
from ..log import (
    CHUNK_ROW_TYPES,
    MAX_SAFE,
    Line,
    RowError,
    TornTail,
    decode_record,
    expand_row,
    header_refusal,
    is_safe_int,
    iter_lines,
    parse_line,
)
from .._show import missing_or
from ._sink import Sink

__all__ = ["EventScan", "Fatal", "PackedRow", "RawEvent", "foreign_header", "header_refused", "open_lines",
           "packed_row", "scan_events", "unreadable"]


class Fatal(Exception):
    """The file cannot be read further; the finding is already recorded."""


@dataclass(frozen=True, slots=True)
class RawEvent:
    """One stored event (packed rows already expanded) and the physical line it came from."""

    line: int
    value: dict[str, Any]


@dataclass(frozen=True, slots=True)
class PackedRow:
    """A packed chunk row that :func:`expand_row` accepts, with integer seqs and times, not expanded:
    what a checker of the common case reads of it (see :func:`packed_row`).

    Its events (:meth:`events`) are ``count`` ``assistant/chunk`` events that share their keys,
    type, turn, step, chunk type and index; the first is ``first``, the others have the seqs
    following ``first["seq"]`` and ``int`` times.
    """

    value: dict[str, Any]  # the stored row
    first: dict[str, Any]  # its first event, as expand_row makes it
    count: int

    def events(self) -> list[dict[str, Any]]:
        """Every event of the row, as :func:`expand_row` makes them."""
        return expand_row(self.value)


def packed_row(value: dict[str, Any]) -> PackedRow | None:
    """``value``, a stored ``*-chunks`` row, as a :class:`PackedRow` without expanding it: its
    first event, as :func:`expand_row` builds it (which validates the whole row: DSH's strict row
    check, made once for the reader of ``check`` and ``report`` too, which takes it next), and
    its member count. None when the row fails that check (then :func:`decode_record` says why),
    or when its seqs or times are not all ``int`` (integral floats, which DSH reads: a member
    would not be checked as the first one, which stands for it; the row is expanded).
    """
    try:
        (first,) = expand_row(value, limit=1, share=True)  # the reader of a tee takes it next
    except RowError:
        return None
    gaps = value["data"]["dt"]
    # validated: the gaps are numbers (no bool), and one float among them or time0 makes the last
    # member's time (their sum) a float
    if type(first["seq"]) is not int or type(sum(gaps, first["time"])) is not int:
        return None
    return PackedRow(value, first, len(gaps) + 1)


@dataclass(frozen=True, slots=True)
class _Issue:
    rule: str
    message: str
    line: int
    seq: int
    lines: int = 1  # physical lines covered (a run of unparsable lines is one finding)
    hint: str | None = None  # this case's, instead of the rule's


def header_refused(sink: Sink, rule: str, message: str, *, hint: str | None = None) -> None:
    """Record the refusal of the header line as ``rule`` (DSH102 not UTF-8, DSH201 not JSON), as
    every reader refuses it (:func:`dsh_audit.log.header_refusal`): a Codex rollout or Claude
    Code transcript every line of which is damaged in the words every command says it (not as a
    damaged DSH header); another agent's log whose first line alone is damaged refused as that log
    is when its first line is whole (DSH202, naming its format); else as a damaged DSH header
    (``hint``: this case's, instead of the rule's)."""
    refusal = header_refusal(sink.path)
    if refusal is None:
        sink.add(rule, message, line=1, hint=hint)
        return
    kind, error = refusal
    if kind is None:  # every line damaged: the reader's DamagedLogError, at the first of them
        sink.add(rule, error.message, line=error.line, hint=error.hint)
    else:
        _refuse_foreign(sink, kind, error)


def foreign_header(sink: Sink) -> bool:
    """Record the refusal of a log whose first line is JSON but no record of any format (``{}``,
    ``null``: no DSH header, no Codex or Claude Code record) when the records after it are another
    agent's, as the reader tells a damaged header's (:func:`dsh_audit.log.header_refusal`): one DSH202
    naming its format at line 1, as :func:`header_refused` refuses one whose first line is damaged
    and every command refuses it; whether it did (else the line is checked as a damaged DSH header)."""
    refusal = header_refusal(sink.path)
    if refusal is None or refusal[0] is None:  # not another agent's log (or every line of it damaged)
        return False
    _refuse_foreign(sink, refusal[0], refusal[1])
    return True


def _refuse_foreign(sink: Sink, kind: str, error: MalformedRecordError) -> None:
    """Record the DSH202 of another agent's log (``kind``, its format), in the reader's words."""
    sink.add("DSH202", error.message, line=1, hint=error.hint, foreign=kind)


def unreadable(sink: Sink, error: UnreadableError) -> None:
    """Record a fatal decoding error of ``iter_lines`` (corrupt zstd, a bomb) as one DSH101 finding."""
    sink.add("DSH101", error.message, line=error.line)


def open_lines(stream: BinaryIO, sink: Sink, torn: list[TornTail]) -> Iterator[Line]:
    """``iter_lines`` with its fatal decoding errors turned into one DSH101 finding."""
    lines = iter_lines(stream, sink.path, torn, junk=True)
    while True:
        try:
            line = next(lines)
        except StopIteration:
            return
        except UnreadableError as exc:
            unreadable(sink, exc)
            raise Fatal from None
        yield line


def _fold_alike(held: list[_Issue | RawEvent], items: list[_Issue | RawEvent], number: int) -> bool:
    """Whether ``items``, a line's one finding, is the last held one's again on the very next line
    (the same rule, words and hint: a run of junk records such as ``{}``) and was folded into it as
    one more line it covers: one finding (:func:`_alike`) for the run, so that memory and output stay
    bounded by the kinds of damage, not by the lines damaged (each is still counted dropped). The
    first held one is never folded into: a refusal names its line, and ``check`` drops the finding
    on that line as the refusal's twin, which must not take the run's other lines with it."""
    if len(items) != 1 or len(held) < 2:
        return False
    item, last = items[0], held[-1]
    if not (isinstance(item, _Issue) and isinstance(last, _Issue) and item.rule == last.rule != "DSH104"
            and item.message == last.message and item.hint == last.hint and last.line + last.lines == number):
        return False
    held[-1] = replace(last, lines=last.lines + 1)
    return True


def _alike(issue: _Issue) -> str:
    """The words of ``issue``, with how many lines after it hold the same fault (:func:`_fold_alike`;
    a DSH104 says its run in its own words)."""
    if issue.lines == 1 or issue.rule == "DSH104":
        return issue.message
    return f"{issue.message} (and so do the {issue.lines - 1} line(s) after it)"


def _closes_turn(decoded: list[Any]) -> bool:
    return any(isinstance(e, dict) and e.get("type") == "turn/end" for e in decoded)


class EventScan:
    """The events DSH would read after the header, one line pushed at a time, recording DSH1xx
    findings in ``sink``: :meth:`feed` each line after the header, then :meth:`end` once."""

    def __init__(self, sink: Sink) -> None:
        self.sink = sink
        self.expected = 0
        self.held: list[_Issue | RawEvent] = []  # since the first unresolved problem
        self.dropped = 0
        self.last_line = 1  # the last physical line fed (1: the header, read before the events)
        #: a packed row (DSH105) or a line that is no JSON (DSH104) was refused and no event has
        #: been read since: the gap before the next event is the seqs of the events it held, not
        #: one more fault
        self.records_lost = False
        #: the seqs of the events of refused records (each such gap taken for them): the trace does
        #: not say again that an assistant/message cites them (DSH310)
        self.lost: list[range] = []
        #: the seq expected where the last event was refused for a seq that repeats or goes back
        #: (DSH108), when that was the last event read: it held that place
        self.misnumbered: int | None = None
        #: the place in :attr:`held` of the DSH107 of the last event read, when it skipped one seq,
        #: and that seq: the next event bearing it makes the two a swapped pair (one finding)
        self.skipped: tuple[int, int] | None = None
        #: the last line, when its one finding was folded into the one of the line before
        #: (:func:`_fold_alike`), and how far it moved the next seq: the same line once more makes
        #: the same finding and moves it as far, so it is folded without being read (a run of ``{}``
        #: lines by the million)
        self.repeat: tuple[bytes | bytearray, int] | None = None

    def _add(self, issue: _Issue) -> None:
        """Record ``issue`` in :attr:`sink`, the finding of a folded run carrying how many lines it
        covers (:attr:`Finding.lines`), so every count of findings counts each line of the run (a run
        of blank or junk lines, DSH104, stays one finding, as it was before runs were folded)."""
        findings = self.sink.findings
        before = len(findings)
        self.sink.add(issue.rule, _alike(issue), line=issue.line, seq=issue.seq, hint=issue.hint)
        if issue.lines > 1 and issue.rule != "DSH104" and len(findings) > before:  # a blank/junk run: one, as ever
            findings[-1] = replace(findings[-1], lines=issue.lines)

    def _release(self) -> Iterator[RawEvent]:
        for item in self.held:
            if isinstance(item, _Issue):
                self._add(item)
            else:
                yield item
        self.held.clear()

    def feed(self, line: Line) -> Iterator[RawEvent]:
        """The events of one line that the event rules may check now (held ones come later).

        Raises:
            Fatal: the line is not UTF-8 (the finding is recorded).
        """
        for item in self.runs(line):
            if isinstance(item, PackedRow):
                yield from (RawEvent(line.number, value) for value in item.events())
            elif isinstance(item, dict):
                yield RawEvent(line.number, item)
            else:
                yield item

    def runs(self, line: Line) -> Iterable[RawEvent | PackedRow | dict[str, Any]]:
        """:meth:`feed`'s events, except that the events of a packed row come as one
        :class:`PackedRow`, not expanded (all read from ``line``), when the whole row can be checked
        now with its seqs in order (nothing held, its first seq the next one, more than one
        member): its events share their keys, type, turn, step, chunk type and index, so a checker
        may treat them together, and expand them (:meth:`PackedRow.events`) only when it cannot.
        An event read from ``line`` in its turn (the common case) comes as its value alone (a
        ``dict``; no :class:`RawEvent` is made for it); one released late, as a :class:`RawEvent`.

        The line is read now. Its events come as a tuple in the common case (nothing held, one
        event or a packed row in its turn: no generator is made for the bulk of a log's lines),
        else from a generator that checks them as it is iterated (iterate it before the next call).

        Raises:
            Fatal: the line is not UTF-8 (the finding is recorded).
        """
        self.last_line = line.number + line.count - 1
        repeat, self.repeat = self.repeat, None
        if repeat is not None and line.raw == repeat[0] and self._refold(line.number, repeat[1]):
            self.repeat = repeat
            return ()
        decoded = self._decode(line)
        if decoded is None:
            return ()
        if not self.held:
            if isinstance(decoded, PackedRow):
                seq = decoded.first["seq"]  # the row's seq0: a non-negative safe integer, as are the others
                if seq == self.expected and decoded.count > 1:
                    self.expected = seq + decoded.count
                    return (decoded,)
            elif len(decoded) == 1 and type(decoded[0]) is dict:
                # An object whose seq is the next one (what _sequenced would pass unchanged; anything
                # else takes the full check of _checked)
                value = decoded[0]
                seq = value.get("seq")
                if type(seq) is int and seq == self.expected and seq <= MAX_SAFE:
                    self.expected = seq + 1
                    return (value,)
        return self._checked(line.number, decoded, line.raw)

    def _refold(self, number: int, step: int) -> bool:
        """Fold line ``number``, the same as the line before it (:attr:`repeat`), into the finding
        held last, if it still ends on the line before: one more line it covers, one more dropped."""
        last = self.held[-1] if len(self.held) > 1 else None  # never the first held one (:func:`_fold_alike`)
        if not (isinstance(last, _Issue) and last.line + last.lines == number):
            return False
        self.held[-1] = replace(last, lines=last.lines + 1)
        self.expected += step
        self.dropped += 1
        return True

    def _checked(self, number: int, decoded: list[Any] | PackedRow,
                 raw: bytes | bytearray = b"") -> Iterator[RawEvent | dict[str, Any]]:
        """:meth:`runs` of the events ``decoded`` from line ``number`` (``raw``) but for its common case."""
        held = self.held
        alone = type(decoded) is list and len(decoded) == 1 and not _closes_turn(decoded)
        if isinstance(decoded, PackedRow):
            decoded = decoded.events()
        for value in decoded:
            if not held and type(value) is dict:
                # The common case first, as in :meth:`runs` (a row's events, one after another).
                seq = value.get("seq")
                if type(seq) is int and seq == self.expected and seq <= MAX_SAFE:
                    self.expected = seq + 1
                    yield value
                    continue
            before = self.expected
            items, self.expected = self._sequenced(value, number)
            if held or isinstance(items[0], _Issue):
                if not _fold_alike(held, items, number):
                    held.extend(items)
                elif alone:
                    self.repeat = (raw, self.expected - before)
                self.dropped += 1
            else:
                yield from items  # type: ignore[misc]
        if held and _closes_turn(decoded):
            yield from self._release()

    def _decode(self, line: Line) -> list[Any] | PackedRow | None:
        """The events stored on ``line`` (a packed row :func:`packed_row` accepts: not expanded), or
        None when it holds none (its problem is held)."""
        held = self.held
        try:
            value = parse_line(line, share=True)  # the reader takes it next
            if isinstance(value, dict) and isinstance(value.get("type"), str) and value["type"] in CHUNK_ROW_TYPES:
                row = packed_row(value)  # the common case: the row's members are not unpacked
                if row is not None:
                    return row
            decoded: list[Any] = decode_record(value, share=True)  # the reader takes the expansion next
        except UnicodeDecodeError as exc:
            self.sink.add("DSH102", f"line is not valid UTF-8 (byte {exc.start})", line=line.number)
            raise Fatal from None
        except RowError as exc:
            held.append(_Issue("DSH105", str(exc), line.number, self.expected))
            self.dropped += 1
            self.records_lost = True
            return None
        except ValueError:
            self.dropped += line.count  # a run of blank lines is one Line
            self.records_lost = self.records_lost or bool(line.raw.strip())  # a blank line held no event
            last = held[-1] if held else None
            if isinstance(last, _Issue) and last.rule == "DSH104" and last.line + last.lines == line.number:
                lines = last.lines + line.count  # unparsable lines in a row: one finding, not one per line
                held[-1] = _Issue("DSH104", f"line is not valid JSON (and neither are the {lines - 1} line(s) "
                                  "after it)", last.line, last.seq, lines)
                return None
            blank_run = "" if line.count == 1 else f" (blank, and so are the {line.count - 1} line(s) after it)" \
                if not line.raw else f" (and neither are the {line.count - 1} line(s) after it)"  # a run of junk lines
            held.append(_Issue("DSH104", "line is not valid JSON" + blank_run, line.number, self.expected, line.count))
            return None
        return decoded

    def _sequenced(self, value: Any, line: int) -> tuple[list[_Issue | RawEvent], int]:
        """:func:`_sequenced` of the next event, ``value``, read from ``line``, with no finding that
        follows from the one before it: right after a refused record (:attr:`records_lost`) a gap
        is the seqs of its events, which its DSH105 or DSH104 finding stands for (its hint, not
        DSH107's "renumber", is the fix; the seqs are :attr:`lost`); right after an event whose seq
        repeats or goes back (DSH108), the seq after its place is no gap; and an event bearing
        the one seq the event before it skipped makes the two one swapped pair (:meth:`_swapped`)."""
        items, expected = _sequenced(value, line, self.expected)
        issue = items[0] if isinstance(items[0], _Issue) else None
        skipped, self.skipped = self.skipped, None
        if issue is not None and issue.rule == "DSH108" and skipped is not None and issue.seq == skipped[1]:
            items = [self._swapped(skipped[0], issue, RawEvent(line, value))]
        elif issue is not None and issue.rule == "DSH107":
            if self.records_lost:
                self.lost.append(range(self.expected, expected - 1))
                items = items[1:]
            elif self.misnumbered is not None and expected - 1 == self.misnumbered + 1:
                items = items[1:]  # the seq after a misnumbered event's place: DSH108 said it
        if items and items[0] is issue and issue.rule == "DSH107" and expected - 1 == self.expected + 1:
            self.skipped = (len(self.held), self.expected)
        self.records_lost = False
        self.misnumbered = self.expected if issue is not None and issue.rule == "DSH108" else None
        return items, expected

    def _swapped(self, at: int, issue: _Issue, second: RawEvent) -> _Issue:
        """The one finding of two events written in each other's place: the DSH107 held at ``at``
        (the first skipped a seq) and ``issue``, the DSH108 of the second (``second``), which bears
        it. DSH refuses the second for its seq; the event rules read the two in seq order, as if
        mended, so that what the second opens or closes (a step/start, a step/end) is not missed
        by the events after it, each a finding of the one fault."""
        gap = self.held[at] if at < len(self.held) else None
        if not (isinstance(gap, _Issue) and gap.rule == "DSH107"):
            return issue  # said already (a turn/end released it): DSH108 as it is, the event refused
        self.held[at] = second  # in the gap's place, before the first
        return _Issue("DSH108", f"seq {issue.seq} comes after seq {gap.seq} (line {gap.line}): the two events are "
                      "written in each other's place", issue.line, issue.seq, hint="write the events in seq order")

    def end(self, torn: Sequence[TornTail]) -> None:
        """The end of the file: a problem no turn/end followed is a dropped tail (DSH106); what a
        crash left incomplete (``torn``, filled by ``iter_lines``) is DSH103."""
        if self.held:
            first = next(i for i in self.held if isinstance(i, _Issue))
            self.sink.add("DSH106", f"{first.message} ({first.rule}); no turn/end follows, so DSH treats it as a "
                          f"crash-damaged tail: {self.dropped} record(s) from here on are ignored",
                          line=first.line, seq=first.seq)
        for tail in torn:  # the incomplete bytes start the line after the last complete one
            self.sink.add("DSH103", str(tail), line=self.last_line + 1)


def scan_events(lines: Iterator[Line], sink: Sink, torn: list[TornTail]) -> Iterator[RawEvent]:
    """Yield every event DSH would read after the header, recording DSH1xx findings in ``sink``
    (:class:`EventScan` over an iterator of lines)."""
    scan = EventScan(sink)
    for line in lines:
        yield from scan.feed(line)
    scan.end(torn)


def _sequenced(value: Any, line: int, expected: int) -> tuple[list[_Issue | RawEvent], int]:
    """Check one decoded event's seq against its position: the items it gives and the next position.

    A repeated or unusable seq drops the event; a gap reports the gap and keeps the event.
    """
    if not isinstance(value, dict):
        return [_Issue("DSH112", "event is not a JSON object", line, expected)], expected + 1
    seq = value.get("seq")
    if not is_safe_int(seq) or seq < 0:
        return [_Issue("DSH111", missing_or(value, "seq", "is not a non-negative safe integer", owner="event"), line,
                       expected)], expected + 1
    seq = int(seq)
    if seq == expected:
        return [RawEvent(line, value)], expected + 1
    if seq < expected:
        return [_Issue("DSH108", f"seq {seq} repeats or goes backwards (expected {expected})", line, seq)], expected
    return [_Issue("DSH107", f"seq gap: expected {expected}, got {seq}", line, seq), RawEvent(line, value)], seq + 1
