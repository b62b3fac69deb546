"""The values the strategies draw: a generated session with its ground truth, and mutations."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..jsjson import stringify
from ..log import log_file_name
from ..testing import LogBuilder, encode_segment, frames_bytes, jsonl_bytes, migrate_events, pack_chunk_runs

__all__ = ["Expected", "GeneratedSession", "Happening", "MutatedBody", "MutatedCapture", "MutatedLog", "Mutation",
           "log_file_name"]

#: The kinds of :class:`Happening` a generated session records.
HAPPENING_KINDS = ("compaction", "fork", "header", "prune", "resume", "retry", "runtime-context")


@dataclass(frozen=True, slots=True)
class Happening:
    """One thing the generator did on purpose, with the seqs it wrote: the ground truth.

    Attributes:
        kind: ``header`` (a ``request/header``), ``compaction`` (its checkpoint replace),
            ``prune`` (its ``tool/result`` replace), ``resume`` (``session/end-seed``),
            ``retry`` (a failed attempt's ``finish``), ``runtime-context`` (a snapshot message),
            ``fork`` (the boundary a child was seeded with).
        seq: the event that *is* the happening (header, replacement, end-seed, finish, ...).
        evidence: every seq the generator wrote for it, in order (e.g. compaction/start,
            compaction/summary, the checkpoint, compaction/end).
        reason: ``header``: ``initial``, ``change`` or ``resume``; ``compaction``: ``manual``
            or ``auto``.
        fields: ``header``: the knobs the generator turned (``model``, ``reasoningEffort``,
            ``system``, ``tools``, ``maxTokens``, ``temperature``); empty otherwise.
        prompt_affecting: whether the generator expects a prefix-cache break from it.
        detail: anything else (the pruned seq, whether it had been sent, the child's id).
    """

    kind: str
    seq: int
    evidence: tuple[int, ...] = ()
    reason: str | None = None
    fields: tuple[str, ...] = ()
    prompt_affecting: bool = False
    detail: dict[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True, slots=True, repr=False)
class GeneratedSession:
    """A valid DSH v0 log drawn by :func:`~dsh_audit.strategies.sessions`.

    Attributes:
        builder: the :class:`~dsh_audit.testing.LogBuilder` that wrote it (keep using it to
            extend the log, or read ``builder.events``).
        truth: what was generated, in seq order (see :class:`Happening`).
        packed: whether :meth:`write` packs chunk runs into rows by default.
        children: fork children seeded from this log, each a generated session of its own.
    """

    builder: LogBuilder
    truth: tuple[Happening, ...]
    packed: bool = True
    children: tuple[GeneratedSession, ...] = ()

    def __repr__(self) -> str:
        kinds = ", ".join(f"{h.kind}@{h.seq}" + (f"({h.reason})" if h.reason else "") for h in self.truth)
        return (f"GeneratedSession(session_id={self.session_id!r}, events={self.builder.next_seq}, "
                f"packed={self.packed}, truth=[{kinds}], children={len(self.children)})")

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # hypothesis' falsifying-example printer
        printer.text(repr(self))

    @property
    def session_id(self) -> str:
        return self.builder.session_id

    @property
    def header_record(self) -> dict[str, Any]:
        return self.builder.header_record

    @property
    def events(self) -> list[dict[str, Any]]:
        """A deep copy of every event, unpacked, in seq order."""
        return self.builder.events

    def happenings(self, *kinds: str) -> tuple[Happening, ...]:
        """The ground truth of the given kinds (all when none given)."""
        return tuple(h for h in self.truth if not kinds or h.kind in kinds)

    def lines(self, *, packed: bool | None = None, version: int = 0) -> list[str]:
        """Every line of the plain log, header first (``version`` > 0: migrated, never packed)."""
        if version == 0:
            return self.builder.lines(packed=self.packed if packed is None else packed)
        header, events = migrate_events(self.header_record, self.events, version)
        return [stringify(header), *(stringify(e) for e in events)]

    def log_bytes(self, *, compressed: bool = False, packed: bool | None = None, version: int = 0,
                  frames: str | int = "batches") -> bytes:
        """The file content: JSONL or multi-frame zstd (``frames`` as for ``LogBuilder.zstd_bytes``)."""
        use_packed = self.packed if packed is None else packed
        if version == 0:
            if compressed:
                return self.builder.zstd_bytes(packed=use_packed, frames=frames)
            return self.builder.jsonl_bytes(packed=use_packed)
        header, events = migrate_events(self.header_record, self.events, version)
        if compressed:
            size = frames if isinstance(frames, int) else max(len(events), 1)
            return frames_bytes(header, [events[i:i + size] for i in range(0, len(events), size)])
        return jsonl_bytes([header, *events])

    def write(self, folder: str | os.PathLike[str], *, compressed: bool = False, packed: bool | None = None,
              version: int = 0, frames: str | int = "batches") -> Path:
        """Write this log to ``folder/<encoded id>/<generation file name>``; returns the path."""
        target = Path(folder) / encode_segment(self.session_id) / log_file_name(version, compressed=compressed)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(self.log_bytes(compressed=compressed, packed=packed, version=version, frames=frames))
        return target

    def write_all(self, folder: str | os.PathLike[str], **options: Any) -> list[Path]:
        """:meth:`write` this log and every descendant; returns the paths, this log first."""
        paths = [self.write(folder, **options)]
        for child in self.children:
            paths.extend(child.write_all(folder, **options))
        return paths


@dataclass(frozen=True, slots=True)
class Expected:
    """How a mutation must be detected.

    Attributes:
        detector: ``validate`` (a rule id among :func:`dsh_audit.validate.validate`'s findings),
            ``load`` (the error class replaying the log raises), ``diff`` (a
            :class:`dsh_audit.diff.Difference` ``change`` at ``where`` when the rebuilt body is
            compared with the mutated one) or ``attribution`` (a transition cause of the request
            ``where`` when the mutated bodies are given as captures).
        code: the rule id, error class name, difference change or attribution cause.
        where: the seq (validate), JSON path (diff) or request index (attribution).
    """

    detector: str
    code: str
    where: str | int | None = None


@dataclass(frozen=True, slots=True)
class Mutation:
    """One targeted fault: what was done, where, and how it must be detected."""

    kind: str
    target: str
    description: str
    expected: tuple[Expected, ...]

    def expecting(self, detector: str) -> tuple[Expected, ...]:
        """The expectations of one detector."""
        return tuple(e for e in self.expected if e.detector == detector)


@dataclass(frozen=True, slots=True, repr=False)
class MutatedLog:
    """A generated log with one fault injected into its (unpacked) events.

    Attributes:
        original: the clean session.
        header: the session header record.
        events: the mutated events, in file order.
        mutation: what was injected and how it must be detected.
    """

    original: GeneratedSession
    header: dict[str, Any]
    events: tuple[dict[str, Any], ...]
    mutation: Mutation

    def __repr__(self) -> str:
        return f"MutatedLog({self.mutation.kind}: {self.mutation.description}; of {self.original!r})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # hypothesis' falsifying-example printer
        printer.text(repr(self))

    def log_bytes(self, *, packed: bool = False) -> bytes:
        records = pack_chunk_runs(self.events) if packed else self.events
        return jsonl_bytes([self.header, *records])

    def write(self, folder: str | os.PathLike[str], *, packed: bool = False) -> Path:
        """Write the mutated log as ``folder/<encoded id>/session.jsonl``; returns the path."""
        target = Path(folder) / encode_segment(str(self.header["id"])) / "session.jsonl"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(self.log_bytes(packed=packed))
        return target


@dataclass(frozen=True, slots=True)
class MutatedBody:
    """A wire body with one fault injected (``original`` is what the log implies)."""

    original: bytes
    body: bytes
    mutation: Mutation


@dataclass(frozen=True, slots=True, repr=False)
class MutatedCapture:
    """Captured bodies of a generated session's requests, one of them mutated.

    Attributes:
        session: the generated (clean) log.
        bodies: the rendered DeepSeek body of every request, ``None`` where not rendered
            (compaction calls), indexed like :func:`dsh_audit.requests`.
        index: the request whose captured body was mutated.
        mutated: the mutated body of request ``index``.
    """

    session: GeneratedSession
    bodies: tuple[bytes | None, ...]
    index: int
    mutated: MutatedBody

    def __repr__(self) -> str:
        m = self.mutated.mutation
        return f"MutatedCapture(request {self.index}, {m.kind}: {m.description}; of {self.session!r})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # hypothesis' falsifying-example printer
        printer.text(repr(self))

    @property
    def mutation(self) -> Mutation:
        return self.mutated.mutation

    @property
    def captures(self) -> tuple[bytes | None, ...]:
        """The bodies as captured: the rendered ones, with request ``index`` mutated."""
        return tuple(self.mutated.body if i == self.index else b for i, b in enumerate(self.bodies))
