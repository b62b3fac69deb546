"""``validate``: run every rule over one log (many logs with cross-log lineage: ``_paths``)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import UnreadableError
from ..jsjson import stringify_bytes
from ..log import (
    BODY_CUE_TYPES,
    KNOWN_EVENT_TYPES,
    LATEST_VERSION,
    Line,
    SessionLog,
    TornTail,
    body_mismatch,
    canonical_generation,
    is_plain_chunk,
    iter_lines,
    known_types,
    open_regular,
)
from ..replay import SurfaceFold
from ._admit import Admitter
from ._compaction import CompactionCheck
from ._header import HeaderInfo, check_header
from ._model import Finding
from .._show import member, named
from ._sink import Sink, select_rules
from ._source import EventScan, Fatal, PackedRow, RawEvent, unreadable
from ._trace import Trace

__all__ = ["LineValidator", "SeedChain", "check_file", "validate"]

# Which checks can find which rules, so that a validator runs only those that can find a rule
# it reports (``validate --rule``); tests/test_validate32.py checks each rule's breaking log.
#: the rules only the header line can break (DSH2xx but those of request headers and stream
#: records, and the header's DSH601): with no other reported, the rest of the file is not read
_HEADER_RULES = frozenset({f"DSH{n}" for n in range(201, 219)} | {"DSH601"})
#: the rules the physical pass alone finds (damaged bytes and records, seq breaks) beside the
#: header's: with no other reported, no event is admitted (DSH111 and DSH112 are not among them:
#: the admission finds them too)
_PHYSICAL_RULES = _HEADER_RULES | {f"DSH{n}" for n in range(101, 109)}
#: the rules of :class:`Trace` (turns, steps, tools, streams, request headers, usage, end-seeds)
_TRACE_RULES = frozenset({"DSH109", "DSH224", "DSH225", "DSH226", "DSH310", "DSH311", "DSH602"}
                         | {f"DSH{n}" for n in (*range(401, 408), *range(410, 417), *range(420, 427))}
                         | {f"DSH{n}" for n in range(701, 705)})
#: the rules of :class:`CompactionCheck`
_COMPACTION_RULES = frozenset(f"DSH{n}" for n in range(320, 328))


def _open(path: str) -> Any:
    return open_regular(path)  # a FIFO or device is refused, never read (closed by the caller's with)


#: DSH601's hint for a v2+ header, which says isSeeded instead of seedLength (DSH216)
_V2_LINEAGE_HINT = ("write parentSession, origin and delegationDepth together; a v2+ header says isSeeded, "
                    "never seedLength")


def _lineage_header(header: HeaderInfo, sink: Sink) -> None:
    """DSH601 of a child header. A v2+ header's seedLength is DSH216's fault (the key is not
    v2's), not a lineage one, and its hint names no seedLength (which DSH216 forbids)."""
    raw = header.raw
    parent, depth = raw.get("parentSession"), raw.get("delegationDepth")
    hint = _V2_LINEAGE_HINT if header.version >= 2 else None
    if raw.get("seedLength") is not None and parent is None and header.version < 2:
        sink.add("DSH601", "header has seedLength but no parentSession", line=1)
    if raw.get("origin") == "subagent" and (parent is None or not (isinstance(depth, int) and depth >= 1)):
        sink.add("DSH601", "subagent header needs parentSession and delegationDepth >= 1 "
                 f"({named('parentSession', member(raw, 'parentSession'))}, "
                 f"{named('delegationDepth', member(raw, 'delegationDepth'))})", line=1, hint=hint)


class LineValidator:
    """Every rule of :data:`RULES` over one log's decoded lines, pushed one at a time.

    The push form of :func:`validate`, for a reader that decodes the log anyway
    (:func:`dsh_audit.log.read_log`'s ``tee``): :meth:`feed` every line ``iter_lines`` yields,
    then :meth:`end` with its torn tails, or :meth:`fail` with the error that stopped it; then
    :meth:`finish` gives exactly the findings :func:`validate` gives for the file. Nothing is
    held beyond what the rules keep, so memory stays bounded as in :func:`validate`. With
    ``rules`` or ``ignore``, only the checks that can find a reported rule run (the header's
    rules alone: :meth:`feed` wants no line after the header). Replay of the same read can fold
    the reader's events into the rules' surface fold (:meth:`shared_fold`), so that no event the
    reader admitted is admitted or folded twice.

    Example:
        >>> from dsh_audit.log import read_log
        >>> checker = LineValidator("sample_logs/chat/session.jsonl")  # doctest: +SKIP
        >>> log = read_log(checker.path, tee=checker)  # doctest: +SKIP
        >>> _ = list(log.events()); checker.finish()  # doctest: +SKIP
        []
    """

    def __init__(self, path: str | os.PathLike[str], *, rules: Iterable[str] | None = None,
                 ignore: Iterable[str] | None = None, lenient: bool = False,
                 max_version: int = LATEST_VERSION, lineage: bool = False) -> None:
        self.path = os.fspath(path)
        self.lenient, self.max_version = lenient, max_version
        selected = select_rules(rules, ignore)
        self.sink = Sink(self.path, selected)
        #: the checked header (None before the first line, or when the log cannot be read at all)
        self.header: HeaderInfo | None = None
        self._started = False  # the header line was checked
        # Only the checks that can find a reported rule run: the header's alone reads one line,
        # the physical pass's admits no event, and the trace and the compaction fold run only for
        # their own rules (the admission, which they both read, runs for either).
        self._reads_events = not selected <= _HEADER_RULES
        self._admits = not selected <= _PHYSICAL_RULES
        self._traces = bool(selected & _TRACE_RULES)
        self._scan = EventScan(self.sink)
        self._admitter: Admitter | None = None
        self._trace: Trace | None = None
        self._compaction = CompactionCheck(self.sink) if selected & _COMPACTION_RULES else None
        self._fatal = False  # the log can be read no further; the finding is recorded
        # A v2+ header's version, while a body older than it is looked for; -1 once found (DSH114,
        # reported once: the events from there on are read by the scan only, not checked against a
        # version they are not written in); 0 when not looked for.
        self._cues = 0
        # Sharing its fold with replay (:meth:`shared_fold`): an event that is not a plain chunk
        # waits in ``_pending`` until the reader has read its line and replay has folded its events
        # (the next line, the end or the failure of the file), so that replay's can be taken.
        self._linked = False
        self._pending: list[tuple[int, dict[str, Any], Line, bool]] = []  # and whether a plain chunk
        self._ended = False
        #: with ``lineage``, every event's running hash, for the fork-lineage check of several
        #: logs (:func:`validate_paths`, and ``check`` over several logs: :meth:`keep_chain`;
        #: 8 bytes and a hash per event: a lone log compares no seeds, so it keeps none; nor does a
        #: run that does not report DSH603)
        self.chain: SeedChain | None = SeedChain() if lineage and "DSH603" in selected else None

    def keep_chain(self) -> None:
        """Keep the seed chain (``lineage``) of a validator made without it, before its first line:
        ``check`` reads several logs in groups through validators the session reader makes, and
        pairs children with parents once every group is read, as :func:`validate_paths` does."""
        if self.chain is None and not self._started and "DSH603" in self.sink.selected:
            self.chain = SeedChain()

    @property
    def complete(self) -> bool:
        """Whether every finding is known: the end of the file was reached, or a fatal problem."""
        return self._ended or self._fatal

    def feed(self, line: Line) -> bool:
        """Check one line; False once the rest of the file is not needed (a fatal problem, or
        only the header's rules are reported)."""
        if self._ended or self._fatal:  # not complete (the property, inline: a call per line)
            return False
        try:
            if not self._started:
                self._start(line)
                if not self._reads_events:
                    self._ended = True  # every rule reported is the header's: the rest is not read
                    return False
            elif not self._admits:
                for _ in self._scan.runs(line):
                    pass  # the events, which no rule reported checks
            else:
                pending = self._pending
                if pending:
                    self._flush()
                number = line.number
                cues = self._cues
                for item in self._scan.runs(line):
                    if cues and (cues < 0 or (type(item) is not dict or type(tag := item.get("type")) is str
                                                  and tag in BODY_CUE_TYPES)  # an object type: no cue, no crash
                                 and self._older_body(item, number)):
                        cues = self._cues
                        continue
                    if isinstance(item, dict):  # an event read from this line in its turn
                        plain = is_plain_chunk(item)
                        if self._linked and (pending or not plain):
                            pending.append((number, item, line, plain))  # admitted once the reader has read it
                        else:
                            self._event(number, item, line, plain)
                        continue
                    if pending:
                        self._flush()
                    if isinstance(item, RawEvent):  # released late
                        self._event(item.line, item.value, line, is_plain_chunk(item.value))
                    elif not self._row(item, line):
                        for value in item.events():
                            self._event(number, value, line, is_plain_chunk(value))
        except Fatal:
            self._fatal = True
            self.header = None
        return not self._fatal

    def _older_body(self, item: RawEvent | PackedRow | dict[str, Any], number: int) -> bool:
        """Whether ``item`` (:meth:`EventScan.runs`'s, read from line ``number``) is the first record
        of a body older than the header's version (:func:`body_mismatch`): DSH114. DSH refuses the
        log there; the per-record findings of the rest (unknown ``assistant/chunk``, a message
        without its stream, the calls it then lacks) would only say the same again."""
        value = item if isinstance(item, dict) else item.value
        mismatch = body_mismatch(value, self._cues)
        if mismatch is None:
            return False
        self._cues = -1
        first = item.first if isinstance(item, PackedRow) else value
        self.sink.add("DSH114", mismatch.message(), line=item.line if isinstance(item, RawEvent) else number,
                      seq=first.get("seq"))
        self._restated(mismatch.newest)
        return True

    def _restated(self, newest: int) -> None:
        """Drop the header's findings that say DSH114's mismatch again: a file name of a generation
        the body is written in (DSH206: the name agrees with the body, the header's version is the
        fault), and a v2+ header's isSeeded owed by a body older than v2 (DSH216: the header of
        that body has none), or by one the file name says is v0 or v1 (a v4 header on a v0 body
        in session.jsonl: the fix is the version, not an isSeeded); the body is written in
        versions 0 to ``newest``."""
        written = range(newest + 1)
        name = canonical_generation(os.path.basename(self.path))
        unseeded = written.stop <= 2 or name in written and name is not None and name < 2
        findings = self.sink.findings
        findings[:] = [f for f in findings if f.line != 1 or not (
            (f.rule == "DSH206" and name in written) or (f.rule == "DSH216" and unseeded))]

    def shared_fold(self) -> SurfaceFold | None:
        """The surface fold of the admission, for replay of the same read to fold its events into
        (``iter_requests``'s ``fold``): an event replay folded is not folded again. None when no
        admission runs (``rules`` without one it can find, a refused header). The events then wait
        for the reader's read of their line (else one would be folded here before replay folds it
        too): call it before they are read. The event replay folded last, made from the stored
        event being admitted, is the reader's (which it yields only when DSH refuses nothing of
        it): it is not admitted again."""
        self._linked = True
        return self._admitter.fold if self._admitter is not None else None

    def _flush(self) -> None:
        """Check the events held for the reader (:attr:`_pending`), in order."""
        pending = self._pending
        for number, value, line, plain in pending:
            self._event(number, value, line, plain)
        pending.clear()

    def fail(self, error: UnreadableError) -> None:
        """The decoder stopped with ``error`` (corrupt zstd data, a decompression bomb): DSH101."""
        if not self.complete:
            self._flush()  # the events of the last line read
            unreadable(self.sink, error)
            self._fatal = True
            self.header = None

    def end(self, torn: Sequence[TornTail] = ()) -> None:
        """The end of the file; ``torn`` is what a crash left incomplete (from ``iter_lines``)."""
        if self.complete:
            return
        try:
            if not self._started:
                self._start(None, torn)
            self._flush()
            self._scan.end(torn)
            if self._trace is not None and self._cues >= 0:  # no older body: its end is checked
                self._trace.finish()
            if self._compaction is not None and self._cues >= 0:
                self._compaction.finish()
            self._ended = True
        except Fatal:
            self._fatal = True
            self.header = None

    def finish(self) -> list[Finding]:
        """The findings in file order, as :func:`validate` returns them.

        Raises:
            RuntimeError: the file was not read to its end (a caller's bug, not the log's).
        """
        if not self.complete:
            raise RuntimeError(f"{self.path}: validation ended before the end of the log")
        return _order(self.sink.findings)

    def _start(self, line: Line | None, torn: Sequence[TornTail] = ()) -> None:
        self._started = True
        header = check_header(line, self.sink, lenient=self.lenient, max_version=self.max_version, torn=torn)
        _lineage_header(header, self.sink)
        if header.version >= 2 and "DSH114" in self.sink.selected:
            self._cues = header.version
        if self._admits:
            self._admitter = Admitter(self.sink, session_id=header.session_id, version=header.version,
                                      known=known_types(header.version, KNOWN_EVENT_TYPES))
        if self._traces:
            self._trace = Trace(self.sink, version=header.version, seed_length=header.seed_length,
                                lost=self._scan.lost)
        self.header = header

    def _event(self, number: int, value: dict[str, Any], line: Line, plain: bool) -> None:
        """One event, ``value``, stored on line ``number`` (``line``'s, unless it was released late);
        ``plain``: whether it is a plain chunk (:func:`is_plain_chunk`, asked once per event by the
        caller, which needs it too)."""
        if self.chain is not None:
            self.chain.add(RawEvent(number, value), line)
        admitter, trace, compaction = self._admitter, self._trace, self._compaction
        assert admitter is not None
        if plain and (compaction is None or compaction.owed is None) and admitter.takes_chunk():
            # Most events of a log: a chunk nothing but the trace's step check and stream grammar
            # can find fault with (admission has nothing to say, compaction owes nothing).
            if trace is not None:
                trace.surface_ok = True
                trace.chunk(number, value["seq"], value["data"])
            return
        event = admitter.admit(number, value)
        if event is not None:
            if trace is not None:
                trace.surface_ok = admitter.surface_ok
                trace.apply(event)
            if compaction is not None:
                compaction.apply(event, admitter.replacement, surface_ok=admitter.surface_ok)
        else:
            if trace is not None:
                trace.refused(value)
            if compaction is not None:
                compaction.refused()

    def _row(self, row: PackedRow, line: Line) -> bool:
        """The events of one packed row (:meth:`EventScan.runs`), read from ``line``, checked
        together without unpacking it: False (nothing done) unless every one is a plain chunk
        (:meth:`_event`'s fast case).

        What makes one member plain makes them all but their times, which :func:`expand_row`
        makes by adding the row's gaps to ``time0``; a :class:`PackedRow`'s are ``int`` and safe,
        so the first member is checked in full and stands for the others.
        """
        admitter, trace, compaction = self._admitter, self._trace, self._compaction
        assert admitter is not None
        if (compaction is not None and compaction.owed is not None) or not admitter.plain_chunk(row.first):
            return False
        if self.chain is not None:
            self.chain.add_row(line, row.count)
        if trace is not None:
            trace.surface_ok = True
            trace.chunk_row(line.number, row)
        return True


class SeedChain:
    """A running hash of a log's events, 8 bytes after each one, so that a fork child's seed is
    compared with its parent's prefix without reading either log again (DSH603).

    An event is hashed as the bytes of the line it came from and its place in that line (DSH
    copies a parent's records into the child's seed as they were written); an event released
    later than its line (after a damaged record) is hashed as ``JSON.stringify`` writes it. Equal
    chains at ``seedLength - 1`` mean equal events; chains that differ prove nothing (the same
    events may be packed or spelt otherwise), and the events are then compared as values.
    """

    def __init__(self) -> None:
        self._hasher = hashlib.blake2b(digest_size=8)
        self.links = bytearray()
        # the line events are being taken from: its number, b"L" + its digest, events taken so far
        self._number: int | None = None
        self._prefix = b""
        self._taken = 0

    def add(self, raw: RawEvent, line: Line | None) -> None:
        """Chain ``raw``, read from ``line`` (None or another line: released late)."""
        if line is not None and raw.line == line.number:
            self.add_row(line, 1)
            return
        # JSON.stringify's bytes: a parsed value always has them (lone surrogates, numbers past
        # 64 bits, infinity included), and a huge one under a memory limit is written by Python
        # (a MemoryError) where orjson would crash the process
        data = stringify_bytes(raw.value)
        self._hasher.update(b"J" + len(data).to_bytes(8, "little") + data)
        self.links += self._hasher.digest()

    def add_row(self, line: Line, count: int) -> None:
        """Chain the next ``count`` events read from ``line`` (``add`` of each, released in time)."""
        if self._number != line.number:
            self._number, self._taken = line.number, 0
            self._prefix = b"L" + hashlib.blake2b(line.raw, digest_size=16).digest()
        hasher, prefix, links = self._hasher, self._prefix, self.links
        for taken in range(self._taken, self._taken + count):
            hasher.update(prefix + taken.to_bytes(4, "little"))
            links += hasher.digest()
        self._taken += count


def check_file(path: str, checker: LineValidator) -> HeaderInfo | None:
    """Run ``checker`` over the file at ``path``: the header, or None when the log is unreadable."""
    torn: list[TornTail] = []
    with _open(path) as stream:
        lines = iter_lines(stream, path, torn, junk=True)
        try:
            for line in lines:
                if not checker.feed(line):
                    break
            else:
                checker.end(torn)
        except UnreadableError as exc:
            checker.fail(exc)
    return checker.header


def _order(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (f.line if f.line is not None else 1 << 62))


def validate(path_or_log: str | os.PathLike[str] | SessionLog, *, rules: Iterable[str] | None = None,
             ignore: Iterable[str] | None = None, lenient: bool = False,
             max_version: int = LATEST_VERSION) -> list[Finding]:
    """Check one session log against every rule of :data:`RULES` and return all findings.

    Unlike :func:`dsh_audit.load`, which stops at the refusal DSH reports, this goes on after a
    problem and reports every violation it can see. A fatal physical problem (not zstd, not
    UTF-8, no header) ends the file with one finding.

    Args:
        path_or_log: a ``session.jsonl[.zstd]`` file, or a :class:`SessionLog` (its file is read).
        rules: rule ids (or id prefixes such as ``DSH3``) to report; default all. Only the checks
            that can find one of them run.
        ignore: rule ids (or prefixes) not to report.
        lenient: report header metadata DSH's oracle adapted for tokenised fixtures (missing
            version or delegationDepth, non-absolute cwd) as warnings.
        max_version: newest format version the reader reads; 0 reproduces DSH 0.1.0-rc.8.

    Returns:
        The findings in file order; an ``error`` finding means DSH refuses the log or a rebuilt
        request would be wrong.

    Raises:
        UnreadableError: the path cannot be opened. UsageError: an unknown rule id.

    Example:
        >>> from dsh_audit.validate import validate
        >>> [f.rule for f in validate("sample_logs/chat/session.jsonl")]  # doctest: +SKIP
        []
    """
    path = path_or_log.path if isinstance(path_or_log, SessionLog) else os.fspath(path_or_log)
    checker = LineValidator(path, rules=rules, ignore=ignore, lenient=lenient, max_version=max_version)
    check_file(path, checker)
    return checker.finish()
