"""The forensics page of ``dsh-audit report``: one self-contained HTML file.

No network and no CDN: the CSS and the script are inline (:mod:`._html_assets`). Log text never
becomes markup: every value travels as JSON inside ``<script type="application/json">`` with
``<``, ``>`` and ``&`` written as ``\\u003c``, ``\\u003e``, ``\\u0026`` (so no ``</script>`` can
end the block), and the page script renders it with ``textContent`` only.

Size: each distinct message is stored once per session (keyed by the seq behind it, checked by
value; messages without a seq by identity, then by their JSON text). A request does not list its
messages: it names a base request (the previous agent-loop request, whose history it extends) and
the positions where its own list differs from the base's (appended messages, a pruned message
replaced in place), so the page grows with the distinct messages, not requests x history. The
script assembles a request's history only when the request is opened (or searched), and
:func:`iter_html` yields the page in pieces so the command writes it without building one string.

Each request's record is encoded as it comes (:class:`SessionPage`). For a log that ``check``
reads as it is replayed (no fork or subagent child, no capture: ``run_check(record=SessionPages())``),
that happens while the log is replayed, the texts go to a temporary file and no request is kept;
a request's findings, known only at the end of the read, are added when the page is written. The
page is the same byte for byte as the one made from the whole session's requests.

Cost comes from the cache ledger (:func:`dsh_audit.cache.price_entry` per request, the session's
``cost`` summary that ``cache --json`` prints, its ``off_peak_cost_usd`` the figure ``usage --json``
gives), never recomputed here; the breaks by cause (:func:`_break_summary`) add up the breaks' own
figures. The page's ``totals`` (shown atop a page of several logs) are ``usage --json``'s for
the same logs, made by :func:`dsh_audit.cache.usage_table` from the same priced entries
(:func:`_totals`; a page keeps its requests' entries for them, as ``usage``'s ledgers do). A header
change's ``explain`` lines are :func:`dsh_audit.attribution.format_transition`'s (:func:`_field_lines`).
Each log has a deep-link ``anchor`` (:func:`_anchors`: its session id when unique).

The session list of a multi-session page is ordered here (``order``: ``[position, depth]`` pairs):
failing sessions first, then those with unexplained breaks, then the rest, newest first within
each group, every fork or subagent child right under its parent (a family ranks by its worst
member, so a failing child is never buried). Nothing is read again: everything is what ``check``
found (a log's project is the last parts of its header's ``cwd``: :func:`_project_of`); a
child's parent is its header's ``parentSession`` (a fork: with ``seedLength``), the
parent attribution compares its first request with, and a log's first and last activity are its
own timestamps (:meth:`dsh_audit.session.Session.span`, the dates ``dsh-audit sessions`` shows).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import tempfile
import weakref
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from itertools import compress, count
from operator import is_not
from typing import IO, Any, Protocol

from .._version import __version__
from ..attribution import format_transition
from ..cache import BREAKS, PriceBook, SessionLedger, UsageRow, iso_utc, load_prices, price_entry, usage_table
from ..errors import UsageError
from ..jsjson import has_surrogate
from ..replay import MessageView
from ..session import RequestSpan
from ._html_assets import CSS, SCRIPT
from ._json import finite
from .terminal import short_ids, terminal_text

__all__ = ["SessionPage", "SessionPages", "build_report_data", "format_html", "iter_html"]

_DIFF_LIMIT = 40
#: About how many characters :func:`iter_html` joins into one piece of a session's lists.
_PIECE = 1 << 16
#: The buffer of a page's temporary file: a long session's texts are written and read back in a
#: few large system calls (the default 8 KiB makes one per message over that size).
_BUFFER = 1 << 20


#: The encoder ``json.dumps(value, ensure_ascii=True, separators=(",", ":"), default=str,
#: allow_nan=False)`` makes on every call, made once (a page encodes a few values per request).
_ENCODE = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), default=str, allow_nan=False).encode


def _script_json(value: Any) -> str:
    """JSON that cannot end a ``<script>`` block (``<``, ``>``, ``&`` escaped; ASCII only) and that
    ``JSON.parse`` reads: a number past the double range (a log's ``1e400``) is ``null``."""
    try:
        text = _ENCODE(value)
    except ValueError:
        text = _ENCODE(finite(value))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _seq_json(seq: Any) -> str:
    """:func:`_script_json` of a message's seq (an int, or None), without the encoder for the usual ones."""
    if seq is None:
        return "null"
    return int.__repr__(seq) if type(seq) is int else _script_json(seq)


class _Table:
    """Distinct JSON values (headers), each stored once: identity first, then the value's JSON text."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.by_id: dict[int, tuple[Any, int]] = {}
        self.by_text: dict[str, int] = {}

    def add(self, value: Any) -> int:
        known = self.by_id.get(id(value))
        if known is not None:
            return known[1]
        text = _script_json(value)
        number = self.by_text.setdefault(text, len(self.texts))
        if number == len(self.texts):
            self.texts.append(text)
        self.by_id[id(value)] = (value, number)  # holds the object so its id() is not reused
        return number


class _Texts(Protocol):
    """Where a session's page texts go, in order: :class:`_Kept` or :class:`_Run`."""

    def add(self, text: str) -> None: ...

    def __iter__(self) -> Iterator[str]: ...


class _Kept:
    """Texts kept in memory (a session whose requests are all in memory anyway)."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def add(self, text: str) -> None:
        self.texts.append(text)

    def __iter__(self) -> Iterator[str]:
        return iter(self.texts)


class _Spool:
    """An anonymous temporary file of texts, one a line (script JSON is ASCII and holds no line
    break), made on the first text and gone when this is. The pages of one report share it
    (:class:`SessionPages`): their logs are checked one after another, so each page's texts are
    one run of lines (:class:`_Run`). A file that cannot be made or written (no temporary folder,
    a full disk) is an error when the page is written, not the log's (it is being replayed)."""

    def __init__(self) -> None:
        self.file: IO[bytes] | None = None
        self.error: OSError | None = None
        self.writer: _Run | None = None
        self.at_end = True
        self.reader: object | None = None  # the read (:meth:`lines`) the file's position is at

    def write(self, run: _Run, text: str) -> None:
        try:
            if self.file is None:
                self.file = tempfile.TemporaryFile("w+b", buffering=_BUFFER)
                weakref.finalize(self, _close, self.file)
            if not self.at_end:
                self.file.seek(0, os.SEEK_END)
                self.at_end, self.reader = True, None
            if self.writer is not run:
                assert run.start < 0, "a page's texts are written in one run"
                self.writer, run.start = run, self.file.tell()
            self.file.write(text.encode("ascii") + b"\n")
        except OSError as exc:
            self.error = exc

    def lines(self, start: int, count: int) -> Iterator[str]:
        """``count`` lines from offset ``start``."""
        if self.file is not None and self.error is None:
            try:  # the texts still in the buffer (a full disk can refuse them only now)
                self.file.flush()
            except OSError as exc:
                self.error = exc
        if self.error is not None:
            raise UsageError(f"cannot write the page's temporary file: {self.error.strerror or self.error}",
                             path=tempfile.gettempdir(),
                             hint="free space there, or point TMPDIR at a folder with room, and run report again")
        if self.file is None:
            return
        read = object()  # this read: the file is sought again only after another read or a write moved it
        for _ in range(count):
            if self.reader is not read:
                self.file.seek(start)
                self.at_end, self.reader = False, read
            line = self.file.readline()
            start += len(line)
            yield line[:-1].decode("ascii")


def _close(file: IO[bytes]) -> None:
    """Close a spool's file; texts still in its buffer that a full disk refuses are dropped (the
    page's error, :meth:`_Spool.lines`, said so already), closing the file all the same."""
    try:
        file.close()
    except OSError:
        pass


class _Run:
    """One page's texts in a :class:`_Spool`: written in one run, read back as often as asked."""

    def __init__(self, spool: _Spool) -> None:
        self.spool = spool
        self.start = -1
        self.count = 0

    def add(self, text: str) -> None:
        if self.spool.error is None:
            self.spool.write(self, text)
        self.count += 1

    def __iter__(self) -> Iterator[str]:
        return self.spool.lines(self.start, self.count)


class _Messages:
    """A session's distinct messages, each stored once as its script JSON text, after its seq's
    (``texts``: ``"<seq> <message>"``, read back by :meth:`seqs` and :meth:`__iter__`).

    A message with a seq is keyed by that seq and checked by value (a replace re-derives the
    messages after it: new objects, same seq, same value); one without (title and search calls)
    by identity, then by ``(seq, text)`` (held as a 128-bit digest, so a spooled page keeps no
    text in memory). Two messages with equal text at different seqs stay two entries, so every
    entry has one seq. The seq and identity lookups only spare encoding a message again: they
    are dropped (:meth:`forget`) when the history is no longer an extension of the base's, so the
    messages of a history that was compacted or replaced are not kept alive.
    """

    def __init__(self, texts: _Texts) -> None:
        self.texts = texts
        self.count = 0
        self.by_seq: dict[int, list[tuple[Any, int]]] = {}
        self.by_id: dict[int, tuple[Any, int]] = {}
        self.by_text: dict[int | None, dict[bytes, int]] = {}  # by seq: a seq's texts

    def number(self, message: Any, seq: int | None) -> int:
        if seq is not None:
            for known, number in self.by_seq.get(seq, ()):
                if known is message or known == message:
                    return number
        else:
            found = self.by_id.get(id(message))
            if found is not None:
                return found[1]
        text = _script_json(message)
        key = hashlib.blake2b(f"{seq}:{text}".encode("ascii"), digest_size=16).digest()
        number = self.by_text.setdefault(seq, {}).setdefault(key, self.count)
        if number == self.count:
            self.texts.add(f"{_seq_json(seq)} {text}")
            self.count += 1
        if seq is not None:
            self.by_seq.setdefault(seq, []).append((message, number))
        else:
            self.by_id[id(message)] = (message, number)
        return number

    def seqs(self) -> Iterator[str]:
        """Each message's seq, as script JSON (``null``: none)."""
        for line in self.texts:
            yield line.partition(" ")[0]

    def __iter__(self) -> Iterator[str]:
        """Each message's script JSON."""
        for line in self.texts:
            yield line.partition(" ")[2]

    def forget(self, live: Collection[int]) -> None:
        """Drop the messages held for the seq and identity lookups (their numbers stay known by
        text), and the texts of seqs no longer ``live``: a message left out of a replaced or
        compacted history never comes back, so a long session keeps the texts of its surface only."""
        self.by_seq.clear()
        self.by_id.clear()
        by_text = self.by_text
        for seq in by_text.keys() - live:  # by_text is only looked up: its order does not matter
            if seq is not None:
                del by_text[seq]


class _History:
    """Encodes each request's message list as a delta against the previous loop request's.

    ``b`` is the base request's position in the session (-1: none), ``n`` the list's length,
    ``d`` the runs ``[position, [message numbers]]`` where it differs from the base (the rest of
    the first ``n`` positions are the base's); ``u`` marks a request that becomes the next base.
    Only the base's list of numbers is kept, so memory is linear in the session.
    """

    def __init__(self, messages: _Messages) -> None:
        self.messages = messages
        self.view: Sequence[Any] = ()
        self.numbers: list[int] = []
        self.base = -1

    def encode(self, position: int, request: Any) -> dict[str, Any]:
        listed: Sequence[Any] = request.messages
        seqs: Sequence[int] = request.message_seqs
        if len(seqs) != len(listed):
            seqs = ()
        base_view, base_numbers = self.view, self.numbers
        shared = listed.shared_prefix(base_view) if isinstance(listed, MessageView) else 0
        # The base's own objects at their own positions take its numbers and make no run: after a
        # replace (a new list, so nothing ``shared``) the leading ones are found at C speed, and
        # the rest of the old positions are compared by identity at C speed, so only the other
        # messages (in position order, as they are numbered) are looked at one by one.
        same = shared
        if not shared and isinstance(listed, MessageView) and isinstance(base_view, MessageView):
            same = listed.same_run(0, base_view, 0)
        items = listed[same:]
        old_view = base_view[same:]
        overlap = min(len(items), len(old_view))
        new_seqs = seqs[same:] if seqs else ()
        numbers: list[int] = base_numbers[shared:same + overlap]
        runs: list[list[Any]] = []
        number_of = self.messages.number
        for offset in (*compress(count(), map(is_not, items, old_view)), *range(overlap, len(items))):
            i = same + offset
            number = number_of(items[offset], new_seqs[offset] if new_seqs else None)
            if offset < overlap:
                numbers[i - shared] = number
                if base_numbers[i] == number:
                    continue
            else:
                numbers.append(number)
            if runs and runs[-1][0] + len(runs[-1][1]) == i:
                runs[-1][1].append(number)
            else:
                runs.append([i, [number]])
        encoded = {"b": self.base, "n": len(listed), "d": runs, "u": request.kind == "loop"}
        if request.kind == "loop":
            if shared < len(base_view):  # not an extension of the base: its older messages may be gone
                self.messages.forget(frozenset(seqs))
            del base_numbers[len(listed):]
            base_numbers[shared:] = numbers
            self.view, self.base = listed, position
        return encoded


def _transition(t: Any) -> dict[str, Any] | None:
    """A transition's record; one that changed header fields has ``explain``, :func:`_field_lines`."""
    if t is None:
        return None
    return {"verdict": t.verdict, "cause": t.cause, "other_causes": list(t.other_causes), "relation": t.relation,
            "previous": t.previous, "previous_session_id": t.previous_session_id,
            "fields": [f.to_json() for f in t.fields], "evidence": [e.to_json() for e in t.evidence],
            "context": [e.to_json() for e in t.context],
            "divergence": t.first_divergence.to_json() if t.first_divergence else None,
            "common_messages": t.common_messages, "detail": t.detail, "notes": list(t.notes),
            **({"explain": _field_lines(t)} if t.fields else {})}


def _field_lines(t: Any) -> list[str]:
    """The lines ``dsh-audit explain`` says of a transition's changed header fields
    (:func:`dsh_audit.attribution.format_transition`'s ``fields:`` part): a field and its change,
    and for the system prompt the changed lines (``-old``, ``+new``), where the fields table shows
    only the lengths (``4141 → 4141``). The part is what the whole answer adds to the answer of the
    same transition with no field (evidence, context and notes, which the page shows apart, left
    out of both), so no log text in the answer can be taken for a section of it.

    Example:
        >>> from dsh_audit.attribution import FieldChange, Transition
        >>> change = FieldChange("system", 9, 9, True, {"diff": ["@@ -1 +1 @@", "-mode: a", "+mode: b"]})
        >>> _field_lines(Transition("s", 1, 0, "s", "step", "break", "header_change", fields=(change,)))
        ['  system: 9 → 9 chars (prompt)', '      @@ -1 +1 @@', '      -mode: a', '      +mode: b']
    """
    bare = replace(t, evidence=(), context=(), notes=())
    whole, without = format_transition(bare), format_transition(replace(bare, fields=()))
    if not whole.startswith(without):  # format_transition writes the fields after the rest: never here
        return []
    return whole[len(without):].split("\n")[2:]  # "", "fields:", then the fields' lines


def _capture(row: Any) -> dict[str, Any] | None:
    if row is None:
        return None
    diff = row.diff
    return {"verdict": row.verdict, "where": row.capture.where() if row.capture is not None else None,
            "note": "; ".join(n for n in (row.pairing.note, row.said) if n) or None,
            "first_offset": diff.first_offset if diff else None,
            "expected_context": diff.expected_context if diff else None,
            "actual_context": diff.actual_context if diff else None,
            "equivalence": list(diff.equivalence) if diff else [],
            "differences": [{"path": d.path, "change": d.change, "summary": d.summary}
                            for d in (diff.differences[:_DIFF_LIMIT] if diff else ())],
            "more_differences": max(0, len(diff.differences) - _DIFF_LIMIT) if diff else 0}


def _request(r: Any, history: dict[str, Any], *, headers: _Table, transition: Any, verdict: Any, row: Any,
             entry: Any) -> dict[str, Any]:
    """A request's record but its findings (``f``, the last key: :func:`_with_findings` adds it)."""
    usage = r.usage or r.message_usage
    return {
        "i": r.index, "kind": r.kind, "turn": r.turn, "step": r.step, "attempt": r.attempt,
        "seq": r.first_chunk_seq, "step_seq": r.step_start_seq,
        "h": None if r.header is None else headers.add(r.header), "hseq": r.header_seq, "hreason": r.header_reason,
        **history, "usage": usage, "finish": r.finish,
        "sent": iso_utc(r.time.sent) if r.time is not None else None,
        "prompt": verdict.prompt_tokens if verdict else None, "counted": verdict.counted_tokens if verdict else None,
        "expected": verdict.expected if verdict else None, "actual": verdict.actual if verdict else None,
        "cls": verdict.classification if verdict else None, "ccause": verdict.cause if verdict else None,
        "pot": verdict.potential if verdict else None, **_lost_keys(verdict),
        "model": entry.model, "window": entry.window, "billed": entry.billed_as, "unpriced": entry.unpriced,
        "cost": None if entry.cost is None else entry.cost.to_json(),
        "t": _transition(transition), "cap": _capture(row),
    }


def _lost(verdict: Any) -> tuple[int | None, float | None]:
    """What a break's cache verdict says it lost: tokens, and their cost when the cache
    classifies the request as a break (else None); both None (unknown, never 0) for a break whose
    cache reads were not logged (:attr:`dsh_audit.cache.CacheVerdict.lost_unknown`)."""
    if verdict.lost_unknown:
        return None, None
    return sum(verdict.lost.values()), verdict.lost_cost if verdict.classification in BREAKS else None


def _lost_keys(verdict: Any) -> dict[str, Any]:
    lost, cost = _lost(verdict) if verdict else (None, None)
    return {"lost": lost, "lcost": cost}


def _with_findings(record: str, findings: Sequence[Any]) -> str:
    """A request record's script JSON (:func:`_request`) with its findings as the last key, ``f``:
    the findings are known only once the whole log is read."""
    if not findings:  # most requests: no encoder for an empty list
        return record[:-1] + ',"f":[]}'
    return record[:-1] + ',"f":' + _script_json([f.to_json() for f in findings]) + "}"


class SessionPage:
    """A session's page data, built one request at a time in replay order: each request's record
    (its history as a delta, :class:`_History`, its message texts numbered once, its transition,
    cache verdict and priced entry) is encoded as the request comes, and only what later requests
    need is kept (the base request's message numbers, the message keys, the headers table, the
    overview's counts). The texts (messages and records) are kept in memory, or with ``spool``
    (:class:`SessionPages`) written to its temporary files, so a log checked while it is replayed
    keeps no request and no text in memory.
    """

    def __init__(self, spool: SessionPages | None = None) -> None:
        self.messages = _Messages(_Kept() if spool is None else _Run(spool.messages))
        self.records: _Texts = _Kept() if spool is None else _Run(spool.records)
        self.headers = _Table()
        self.history = _History(self.messages)
        self.count = 0
        self.models: dict[str, None] = {}
        self.span = RequestSpan()  # the overview's first and last
        # what the overview says each break lost: tokens, and their cost when the cache calls it a break
        self.breaks: dict[int, tuple[int | None, float | None]] = {}
        # each request's priced ledger entry, for the page's totals (:func:`_totals`): ``usage``
        # keeps them as its ledgers do, one small value a request, never the request
        self.entries: list[Any] = []

    def add(self, request: Any, transition: Any, verdict: Any, entry: Any, row: Any = None) -> None:
        """Encode the next request: its transition (None: none), cache verdict, priced entry
        (:func:`dsh_audit.cache.price_entry`) and capture pairing (None: not compared)."""
        record = _request(request, self.history.encode(self.count, request), headers=self.headers,
                          transition=transition, verdict=verdict, row=row, entry=entry)
        self.records.add(f"{request.index} {_script_json(record)}")
        self.count += 1
        self.entries.append(entry)
        if entry.model:
            self.models.setdefault(entry.model)
        self.span.add(request.time)
        if transition is not None and transition.verdict == "break" and verdict is not None:
            self.breaks[request.index] = _lost(verdict)

    def requests(self, about: Mapping[int, Sequence[Any]]) -> Iterator[str]:
        """The request records' script JSON, each with its findings (``about``: by request index,
        :meth:`dsh_audit.gate.SessionCheck.findings_by_request`)."""
        for line in self.records:
            index, _, record = line.partition(" ")
            yield _with_findings(record, about.get(int(index), ()))


class SessionPages:
    """The pages of one report's logs that are checked while they are replayed, one after another
    in this process (``run_check(record=SessionPages())``): each call makes the next log's
    :class:`SessionPage`, whose texts go to two temporary files all the pages share (two open
    files however many logs), deleted when the last page that uses them is."""

    def __init__(self) -> None:
        self.messages = _Spool()
        self.records = _Spool()

    def __call__(self) -> SessionPage:
        return SessionPage(self)


def _overview(check: Any, page: SessionPage) -> dict[str, Any]:
    """The session's summary: the same numbers as ``check``'s table and ``cache --json``."""
    report = check.cache
    lost = page.breaks  # kept by the page as it was made: the report keeps no verdict then
    breaks: list[dict[str, Any]] = []
    for t in check.transitions:
        if t.verdict == "break":
            tokens, cost = lost.get(t.request, (None, None))
            breaks.append({"i": t.request, "cause": t.cause, "lost": tokens, "cost": cost})
    causes: dict[str, int] = {}
    for b in breaks:
        causes[b["cause"] or "?"] = causes.get(b["cause"] or "?", 0) + 1
    return {"title": check.title,
            "models": list(page.models),
            "requests": page.count, "breaks": breaks, "breaks_by_cause": dict(sorted(causes.items())),
            "break_summary": _break_summary(breaks),
            "hit_ratio": report.ratio(report.actual_total) if report is not None else None,
            "prompt_tokens": report.prompt_total if report is not None else None,
            "cache_read": report.actual_total if report is not None else None,
            "cost": report.cost if report is not None else None,
            "first": iso_utc(page.span.first), "last": iso_utc(page.span.last)}


def _break_summary(breaks: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The breaks by cause, most tokens lost first: ``count``, the tokens they ``lost`` and their
    ``cost`` (the sums of the breaks' own figures, :func:`_lost`), ``nothing`` (the requests of the
    breaks that lost no token), ``unknown`` (breaks with no cache verdict, or whose cache reads
    were not logged: lost unknown) and
    ``unpriced`` (breaks that lost tokens at no known price: ``cost`` is then a lower bound).

    Example:
        >>> _break_summary([{"i": 3, "cause": "prune", "lost": 0, "cost": 0.0},
        ...                 {"i": 5, "cause": "prune", "lost": 10, "cost": 0.5},
        ...                 {"i": 7, "cause": None, "lost": None, "cost": None}])
        ... # doctest: +NORMALIZE_WHITESPACE
        [{'cause': 'prune', 'count': 2, 'lost': 10, 'cost': 0.5, 'nothing': [3], 'unknown': 0, 'unpriced': 0},
         {'cause': '?', 'count': 1, 'lost': 0, 'cost': 0.0, 'nothing': [], 'unknown': 1, 'unpriced': 0}]
    """
    rows: dict[str, dict[str, Any]] = {}
    costs: dict[str, list[float]] = {}
    for b in breaks:
        cause = b["cause"] or "?"
        row = rows.setdefault(cause, {"cause": cause, "count": 0, "lost": 0, "cost": 0.0, "nothing": [],
                                      "unknown": 0, "unpriced": 0})
        row["count"] += 1
        if b["lost"] is None:
            row["unknown"] += 1
            continue
        row["lost"] += b["lost"]
        if b["lost"] == 0:
            row["nothing"].append(b["i"])
        elif b["cost"] is None:
            row["unpriced"] += 1
        else:
            costs.setdefault(cause, []).append(b["cost"])
    for cause, row in rows.items():
        row["cost"] = round(math.fsum(costs.get(cause, ())), 9)
    return sorted(rows.values(), key=lambda r: (-r["lost"], -r["count"], r["cause"]))


def _unexplained(check: Any) -> int:
    """Breaks the log does not explain, as ``breaks --fail-on unexplained``, check's DSH821 and the
    ``cache`` classification count them (:attr:`dsh_audit.attribution.Transition.is_unexplained`)."""
    return sum(1 for t in check.transitions if t.is_unexplained)


def _verdict(check: Any) -> str:
    """The session's verdict in words: ``failed: 2 failing finding(s)``, ``passed: 5 explained
    break(s)``; the findings a baseline accepts (``check --baseline``) counted as check counts
    them, ``passed: 1 baselined finding(s), ...`` (``failed: 1 failing finding(s), 1 baselined``)."""
    baselined = sum(1 for f in check.findings if getattr(f, "baselined", False))
    if check.failed:
        return (f"failed: {sum(1 for f in check.findings if f.fails)} failing finding(s)"
                + (f", {baselined} baselined" if baselined else ""))
    unexplained = _unexplained(check)
    explained = sum(1 for t in check.transitions if t.verdict == "break") - unexplained
    parts = [f"{baselined} baselined finding(s)"] if baselined else []
    parts += [f"{explained} explained break(s)"] if explained else []
    if unexplained:
        parts.append(f"{unexplained} unexplained break(s) the policy allows")
    return "passed: " + (", ".join(parts) or "no breaks")


def _family(check: Any) -> tuple[str, str, int | None] | None:
    """``(parent id, relation, seed)`` of a fork or subagent child: its header's ``parentSession``,
    a fork's ``seedLength`` (as attribution pairs its first request with the parent's)."""
    if check.parent_id is None:
        return None
    return (check.parent_id, "fork", check.seed_length) if check.seed_length else (check.parent_id, "subagent", None)


def _anchors(sessions: Sequence[Any]) -> list[str]:
    """Each log's deep-link key (``#<key>/request-N`` on the page, the key URL-escaped): its session
    id when no other log of the page has it, so a link stays valid whatever else the page lists;
    else the id and its rank among the files of that id by path (``id~2``: the same key in a report
    that lists those files in another order), and ``log-K`` (its position) for a log with no id.
    An id no URL can hold (a lone surrogate) is written with ``\\udXXX`` escapes and ranked, so
    that its link is never the page's fallback ``#session-K``, which another log's id may be.

    Example:
        >>> class C:
        ...     def __init__(self, session_id, path="x"): self.session_id, self.path = session_id, path
        >>> _anchors([C("a", "z"), C("b"), C("a", "y"), C(None), C("a~1")])
        ['a~2', 'b', 'a~1~', 'log-3', 'a~1']
    """
    files: dict[str, list[int]] = {}
    for k, check in enumerate(sessions):
        if check.session_id:
            files.setdefault(check.session_id, []).append(k)
    rank: dict[int, int] = {}
    for found in files.values():
        for n, k in enumerate(sorted(found, key=lambda k: (str(sessions[k].path), k)), 1):
            rank[k] = n
    taken = set(files)
    # a log whose id is its own key: the only file of its id, and an id a URL can hold
    own = [bool(c.session_id) and len(files[c.session_id]) == 1 and not has_surrogate(c.session_id) for c in sessions]
    keys: list[str] = []
    for k, check in enumerate(sessions):
        sid = check.session_id
        if own[k] or not sid:
            keys.append(sid if own[k] else f"log-{k}")
            continue
        shown = sid.encode("utf-8", "backslashreplace").decode("utf-8")  # a lone surrogate as \udXXX
        keys.append(f"{shown}~{rank[k]}")
    # a key made here may be another log's id or key (``a~1`` above): its ``~`` grows until unique
    for k, key in enumerate(keys):
        if own[k]:
            continue
        while key in taken:
            key += "~"
        taken.add(key)
        keys[k] = key
    return keys


def _project_of(cwd: str) -> str:
    """The last two parts of a working directory (either separator), or the whole of a root.

    Example:
        >>> _project_of("/home/dev/work/shop"), _project_of("G:\\\\src\\\\app"), _project_of("/")
        ('work/shop', 'src/app', '/')
    """
    parts = [p for p in re.split(r"[\\/]+", cwd) if p]
    return "/".join(parts[-2:]) or cwd


def _lineage(sessions: Sequence[Any]) -> list[dict[str, Any]]:
    """Each log's parent (``None`` for a root) and time span, from what ``check`` found (no file is read)."""
    first_at: dict[str, int] = {}
    for k, check in enumerate(sessions):
        if check.session_id is not None:
            first_at.setdefault(check.session_id, k)
    found: list[dict[str, Any]] = []
    for check in sessions:
        first, last = check.first_time, check.last_time
        related = _family(check)
        family = None
        if related is not None and related[0] != check.session_id:
            family = {"parent_id": related[0], "relation": related[1], "seed": related[2],
                      "parent": first_at.get(related[0])}
        found.append({"family": family, "first": first, "last": last})
    return found


def _order(sessions: Sequence[Any], lineage: Sequence[dict[str, Any]]) -> list[list[int]]:
    """The session list: ``[position, depth]`` pairs, failing-first, children under their parent."""
    count = len(sessions)
    parent = [(x["family"] or {}).get("parent") for x in lineage]
    children: list[list[int]] = [[] for _ in range(count)]
    for k, p in enumerate(parent):
        if p is not None:
            children[p].append(k)
    # Every log has at most one parent, so logs no root reaches lie on a cycle of parents (a
    # hostile header): the first of each such cycle becomes a root.
    reached = [False] * count
    roots: list[int] = []

    def reach(root: int) -> None:
        stack = [root]
        while stack:
            k = stack.pop()
            if not reached[k]:
                reached[k] = True
                stack.extend(children[k])

    for k in range(count):
        if parent[k] is None:
            roots.append(k)
            reach(k)
    for k in range(count):
        if not reached[k]:
            roots.append(k)
            reach(k)
    own = [0 if c.failed else 1 if _unexplained(c) else 2 for c in sessions]
    rank = own[:]
    ordered: list[int] = []  # parents before children
    seen = [False] * count
    stack = list(roots)
    while stack:
        k = stack.pop()
        if not seen[k]:
            seen[k] = True
            ordered.append(k)
            stack.extend(children[k])
    for k in reversed(ordered):  # a family ranks by its worst member
        for c in children[k]:
            if seen[c] and parent[c] == k:
                rank[k] = min(rank[k], rank[c])

    def key(k: int) -> tuple[int, float, str, int]:
        last = lineage[k]["last"]
        return rank[k], -(last if last is not None else float("-inf")), sessions[k].path, k

    out: list[list[int]] = []
    placed = [False] * count
    pending = [(k, 0) for k in sorted(roots, key=key, reverse=True)]
    while pending:
        k, depth = pending.pop()
        if placed[k]:
            continue
        placed[k] = True
        out.append([k, depth])
        pending.extend((c, depth + 1) for c in sorted(children[k], key=key, reverse=True) if not placed[c])
    return out


def _priced(check: Any, prices: PriceBook) -> list[Any]:
    """Each request's priced ledger entry: as the page of a log checked while it was replayed
    kept them, else (its requests are in memory) priced now, by its cache verdict."""
    if isinstance(check.record, SessionPage):
        return check.record.entries
    verdicts = {v.index: v for v in check.cache.verdicts} if check.cache is not None else {}
    return [price_entry(r, prices, verdicts.get(r.index)) for r in check.requests]


def _session_chunks(check: Any, entries: Sequence[Any], place: dict[str, Any]) -> Iterator[str]:
    """A session's data (``entries``: its requests' priced entries, :func:`_priced`)."""
    page = check.record
    if not isinstance(page, SessionPage):  # the requests are in memory: encode them now
        page = SessionPage()
        transitions = {t.request: t for t in check.transitions}
        verdicts = {v.index: v for v in check.cache.verdicts} if check.cache is not None else {}
        rows: dict[int, Any] = {}
        for row in check.captures:
            if row.request is not None and not row.pairing.retry:
                rows.setdefault(row.request.index, row)
        for r, entry in zip(check.requests, entries, strict=True):
            page.add(r, transitions.get(r.index), verdicts.get(r.index), entry, row=rows.get(r.index))
    head = {"path": check.path, "session_id": check.session_id, "capture": check.capture_path, "error": check.error,
            "failed": check.failed, "findings": [f.to_json() for f in check.log_findings],
            "overview": _overview(check, page), "verdict": _verdict(check),
            "unexplained": _unexplained(check), "family": place["family"],
            "activity": [iso_utc(place["first"]), iso_utc(place["last"])],
            "anchor": place["anchor"], "short_id": place["short_id"], "project": _project_of(check.cwd) if check.cwd else None}
    yield _script_json(head)[:-1] + ',"mseq":['  # the head's last key: each message's seq
    yield from _listed(page.messages.seqs())
    yield '],"headers":[' + ",".join(page.headers.texts) + '],"messages":['
    yield from _listed(page.messages)
    yield '],"requests":['
    yield from _listed(page.requests(check.findings_by_request()))
    yield "]}"


def _listed(texts: Iterable[str]) -> Iterator[str]:
    """``texts`` separated by commas, in pieces that each end with the text taking them to
    :data:`_PIECE` characters (the last may be shorter): a few hundred writes for a long session,
    not one per message."""
    batch: list[str] = []
    size = 0
    sep = ""
    for text in texts:
        batch.append(text)
        size += len(text)
        if size >= _PIECE:
            yield sep + ",".join(batch)
            batch, size, sep = [], 0, ","
    if batch:
        yield sep + ",".join(batch)


def _entries(result: Any, prices: PriceBook) -> list[list[Any]]:
    """Each log's priced ledger entries (:func:`_priced`), in the order of ``result.sessions``."""
    return [_priced(check, prices) for check in result.sessions]


def _data_chunks(result: Any, prices: PriceBook | None = None, priced: list[list[Any]] | None = None) -> Iterator[str]:
    """The page's data; ``prices`` prices the requests of the logs that were read whole (default
    :func:`dsh_audit.cache.load_prices`: pass the table ``check`` priced with, ``--prices``), unless
    ``priced`` holds them already (:func:`_entries`: each log's are dropped once written)."""
    if priced is None:
        priced = _entries(result, prices if prices is not None else load_prices())
    lineage = _lineage(result.sessions)
    names = short_ids(c.session_id for c in result.sessions if c.session_id)
    for place, anchor, check in zip(lineage, _anchors(result.sessions), result.sessions, strict=True):
        place["anchor"] = anchor
        place["short_id"] = names.get(check.session_id) if check.session_id else None
    # a log that could not be read has no ledger, as usage has none of it: its totals are lower bounds
    ledgers = [SessionLedger(check.path, check.session_id or "", tuple(entries))
               for check, entries in zip(result.sessions, priced, strict=True) if check.error is None]
    failed = sum(check.error is not None for check in result.sessions)
    head = {"tool": f"dsh-audit {__version__}", "passed": result.passed, "counts": result.counts(),
            "policy": _policy(result), "unattached": [f.to_json() for f in result.unattached],
            "order": _order(result.sessions, lineage), "totals": _totals(ledgers, failed)}
    del ledgers
    yield _script_json(head)[:-1] + ',"sessions":['
    for k, check in enumerate(result.sessions):
        if k:
            yield ","
        yield from _session_chunks(check, priced[k], lineage[k])
        priced[k] = []  # a log's entries go once its data is written
    yield "]}"


def _policy(result: Any) -> str:
    """What the page's header says judged the check: the policy, and the baseline applied with
    the findings it accepts (``pyproject.toml; baseline b.json: 3 baselined``), as check's summary
    counts them."""
    baseline = getattr(result, "baseline", None)
    if baseline is None:
        return str(result.policy.source)
    return f"{result.policy.source}; baseline {baseline}: {len(result.baselined)} baselined"


#: The amounts of a row of :func:`_totals`, as ``usage`` names them (:meth:`dsh_audit.cache.UsageRow.shown`).
_AMOUNTS = ("cost", "no_cache", "off_peak", "lost", "break")


def _totals(ledgers: Sequence[SessionLedger], failed: int = 0) -> dict[str, Any]:
    """What the page's logs add up to, as ``dsh-audit usage --json`` gives it for the same logs
    (every request of each log that was read, whatever the ``--since`` window that chose the logs):
    :func:`dsh_audit.cache.usage_table` of their priced requests, its ``total`` and its rows
    ``by_model`` and ``by_day``, each row its ``usage --json`` object and ``shown``, each amount
    as ``usage`` shows it (``$x``, a lower bound ``≥$x``, unknown ``$?``: :meth:`UsageRow.shown`);
    ``logs_failed``, the ``failed`` logs the check could not read, left out of every sum: the
    total's amounts are then lower bounds (``cost_complete`` false, ``≥$x``), as ``usage``'s are.

    Example:
        >>> _totals([])["total"]["shown"]
        {'cost': '$0.0000', 'no_cache': '$0.0000', 'off_peak': '$0.0000', 'lost': '$0.0000', 'break': '$0.0000'}
        >>> _totals([], 1)["total"]["shown"]["cost"], _totals([], 1)["total"]["cost_complete"]
        ('≥$0.0000', False)
    """
    by_model = usage_table(ledgers, by="model")
    by_day = usage_table(ledgers, by="day")
    return {"sessions": by_model.sessions, "logs_failed": failed, "total": _usage_row(by_model.total, failed=failed),
            "by_model": [_usage_row(r) for r in by_model.rows], "by_day": [_usage_row(r) for r in by_day.rows],
            "unpriced": by_model.unpriced}


def _usage_row(row: UsageRow, *, failed: int = 0) -> dict[str, Any]:
    """A row of :func:`_totals`: its ``usage --json`` object (:meth:`UsageRow.to_json`; ``failed``:
    the logs a total left out) and ``shown``, each amount as ``usage`` shows it."""
    return {**row.to_json(failed=failed), "shown": {name: row.shown(name, bound=bool(failed)) for name in _AMOUNTS}}


def build_report_data(result: Any, *, prices: PriceBook | None = None) -> dict[str, Any]:
    """The JSON value the page script renders (sessions, requests, findings, ``totals``; no markup)."""
    value: dict[str, Any] = json.loads("".join(_data_chunks(result, prices)))
    return value


def _escaped(text: str) -> str:
    """Text as HTML holds it (the page's title, a caveat): ``&``, ``<`` and ``>`` as entities."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _caveat_lines(caveats: Iterable[str]) -> str:
    """The summary's lines for what the price table could not know of the page's costs
    (:meth:`dsh_audit.cache.PriceBook.caveats`), one ``note:`` each, as the commands say them: a
    price table's name is the user's (or a checked-out repository's ``pyproject.toml``'s) text,
    so a control, C1 or bidi character is shown as its escape
    (:func:`~dsh_audit.report.terminal.terminal_text`), as the terminal and Markdown show it.

    Example:
        >>> _caveat_lines(["the deepseek price table lists no holidays of 2028 (a < b)"])
        '<p class="muted caveat">note: the deepseek price table lists no holidays of 2028 (a &lt; b)</p>'
        >>> _caveat_lines(["the x\u202e\x1b price table"])
        '<p class="muted caveat">note: the x\\\\u202e\\\\u001b price table</p>'
    """
    return "".join(f'<p class="muted caveat">note: {_escaped(terminal_text(text))}</p>' for text in caveats)


def iter_html(result: Any, *, title: str = "dsh-audit report", prices: PriceBook | None = None) -> Iterator[str]:
    """The page of :func:`format_html` in pieces (a session's messages and requests some 64 KiB at a
    time: :func:`_listed`). The summary says, a line each, the caveats of the prices of the page's
    requests (:meth:`dsh_audit.cache.PriceBook.caveats`: a year the table's holiday list does not cover)."""
    prices = prices if prices is not None else load_prices()
    priced = _entries(result, prices)
    caveats = _caveat_lines(prices.caveats(entry for entries in priced for entry in entries))
    yield (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{_escaped(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        f"<header id=\"top\"><h1 id=\"title\"></h1><div id=\"summary\"></div>{caveats}</header>\n"
        "<section id=\"totals\" aria-label=\"totals of the sessions on this page\" hidden></section>\n"
        "<div id=\"search-bar\"><input id=\"search\" type=\"search\" placeholder=\"search sessions and messages\" "
        "aria-label=\"search the sessions and the requests' messages\" autocomplete=\"off\">"
        "<span id=\"search-count\" class=\"muted\"></span><span id=\"session-count\" class=\"muted\"></span></div>\n"
        "<nav id=\"sessions\" aria-label=\"sessions\" hidden></nav>\n"
        "<main><section id=\"session\"><h2 id=\"session-title\"></h2><div id=\"session-info\"></div>"
        "<div id=\"overview\"></div>"
        "<div id=\"legend\"></div><div id=\"pager\"></div><div id=\"timeline\" class=\"timeline\" role=\"list\"></div>"
        "<div id=\"log-findings\"></div></section>\n"
        "<section id=\"detail\" aria-live=\"polite\"><p class=\"muted\">Click a request or a break marker.</p>"
        "</section></main>\n"
        "<script type=\"application/json\" id=\"dsh-data\">"
    )
    yield from _data_chunks(result, prices, priced)
    yield f"</script>\n<script>{SCRIPT}</script>\n</body>\n</html>\n"


def format_html(result: Any, *, title: str = "dsh-audit report", prices: PriceBook | None = None) -> str:
    """The self-contained HTML forensics page of a :class:`dsh_audit.gate.CheckResult`.

    ``title`` is the page title (escaped); the data is embedded as JSON and rendered by the
    inline script with ``textContent`` only. ``prices`` prices the requests of the logs ``check``
    read whole (a fork or subagent child, a log with a capture; default: the packaged table and
    ``pyproject.toml``'s): pass the table the check priced with (``--prices``) so they and the
    page's totals are what ``usage --prices`` gives. :func:`iter_html` gives the same page in pieces.
    """
    return "".join(iter_html(result, title=title, prices=prices))
