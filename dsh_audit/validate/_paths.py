"""``validate_paths``: :func:`validate` many logs, then each fork child against its parent (DSH603)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, TypeVar

from ..log import LATEST_VERSION, open_regular
from ._engine import LineValidator, check_file
from ._model import Finding
from ._sink import Sink, select_rules
from ._source import Fatal, RawEvent, open_lines, scan_events

if TYPE_CHECKING:
    from ..runner import TaskResult

__all__ = ["Lineage", "lineage_findings", "seed_findings", "seed_pairs", "seeds_match", "validate_paths"]

T = TypeVar("T")


def seeds_match(child: bytes, parent: bytes, seed_length: int) -> bool:
    """Whether the chains (:attr:`SeedChain.links`) prove a child's first ``seed_length`` events
    equal its parent's; False also when they cannot tell (then compare the events themselves)."""
    at = 8 * seed_length
    return seed_length > 0 and len(child) >= at and len(parent) >= at and child[at - 8:at] == parent[at - 8:at]


@dataclass(frozen=True, slots=True)
class Lineage:
    """What the fork-lineage check needs of one log's header (small, picklable)."""

    session_id: str
    parent: str | None = None
    seed_length: int | None = None
    chain: bytes = b""  # SeedChain.links

    @classmethod
    def of(cls, checker: LineValidator) -> Lineage | None:
        """The lineage of the log ``checker`` has read (None when its header could not be read)."""
        header = checker.header
        if header is None:
            return None
        parent = header.raw.get("parentSession")
        return cls(header.session_id, parent if isinstance(parent, str) else None, header.seed_length,
                   bytes(checker.chain.links) if checker.chain is not None else b"")


@dataclass(frozen=True, slots=True)
class _Checked:
    """One log's findings and its lineage (None: its header could not be read)."""

    findings: tuple[Finding, ...]
    lineage: Lineage | None = None


def _check_task(path: str, *, rules: tuple[str, ...] | None, ignore: tuple[str, ...] | None, lenient: bool,
                max_version: int, lineage: bool) -> _Checked:
    """Validate one log (a top-level function, so that worker processes can run it); with
    ``lineage``, keep its seed chain for the fork-lineage check."""
    checker = LineValidator(path, rules=rules, ignore=ignore, lenient=lenient, max_version=max_version,
                            lineage=lineage)
    check_file(path, checker)
    return _Checked(tuple(checker.finish()), Lineage.of(checker))


def seed_pairs(logs: Iterable[tuple[str, Lineage | None]], selected: frozenset[str]) -> dict[str, tuple[str, int]]:
    """Child path -> ``(parent path, seedLength)`` for each child among ``logs`` whose parent is
    among them too and whose seed must be compared with the parent's prefix (DSH603, when
    ``selected``). The one pairing of ``validate`` and ``check``: a session id stands for the first
    log that has it; a child whose seed the chains prove equal to its parent's prefix needs no
    second read; only the others are compared event by event (:func:`seed_findings`), for the
    finding's exact seq and line."""
    if "DSH603" not in selected:
        return {}
    headers: dict[str, tuple[str, Lineage]] = {}
    for path, lineage in logs:
        if lineage is not None:
            headers.setdefault(lineage.session_id, (path, lineage))
    return {path: (headers[c.parent][0], c.seed_length) for path, c in headers.values()
            if c.parent is not None and c.parent in headers and c.seed_length
            and not seeds_match(c.chain, headers[c.parent][1].chain, c.seed_length)}


def seed_findings(path: str, *, parents: dict[str, tuple[str, int]], selected: frozenset[str]) -> list[Finding]:
    """Check one child against its parent (``parents``: :func:`seed_pairs`): DSH603 where its seed
    differs from the parent's prefix."""
    sink = Sink(path, selected)
    parent_path, seed_length = parents[path]
    _check_prefix(sink, parent_path, seed_length)
    return sink.findings


def lineage_findings(lineages: Iterable[tuple[str, Lineage | None]], selected: frozenset[str], *, jobs: int = 1,
                     engine: str = "local", scheduler: str | None = None) -> dict[str, list[Finding]]:
    """Child path -> its DSH603 findings, for logs each validated once (``lineages``: each log's
    path and :meth:`Lineage.of` its validator, in the order given): the pairing
    (:func:`seed_pairs`) and the comparisons (:func:`seed_findings`, in worker processes with
    ``jobs``) of ``validate`` and of ``check``, which reads its logs in groups of neighbours and
    pairs them once every log is read, as ``validate`` does."""
    from ..runner import iter_many  # late import: the runner is only needed for many logs

    parents = seed_pairs(lineages, selected)
    lineage = partial(seed_findings, parents=parents, selected=selected)
    return dict(zip(parents, _values(iter_many(list(parents), lineage, jobs=jobs, engine=engine,
                                                scheduler=scheduler))))


def _values(results: Iterable[TaskResult[T]]) -> Iterator[T]:
    """The values in order; the first failure (in input order) is raised, as a serial run would."""
    for result in results:
        if result.error is not None:
            raise result.error
        assert result.value is not None
        yield result.value


def validate_paths(paths: Sequence[str | os.PathLike[str]], *, rules: Iterable[str] | None = None,
                   ignore: Iterable[str] | None = None, lenient: bool = False,
                   max_version: int = LATEST_VERSION, jobs: int = 1, engine: str = "local",
                   scheduler: str | None = None,
                   progress: Callable[[int, int], None] | None = None) -> list[Finding]:
    """:func:`validate` each log, then check each child against its parent when both are given.

    A child whose ``parentSession`` is among the logs must start with the parent's first
    ``seedLength`` events (DSH603). Each log is checked on its own (in worker processes with
    ``jobs``, see :func:`dsh_audit.runner.iter_many`); the main process keeps only each log's
    findings and session ids, pairs children with parents, and the pairs are compared in workers
    too. The findings are the same, in the same order, for every ``jobs``.

    Args:
        paths: session log files (already discovered).
        rules, ignore, lenient, max_version: as for :func:`validate`.
        jobs: worker processes (1: this process; 0: every CPU).
        engine: ``local`` or ``dask``; scheduler: the Dask scheduler address.
        progress: called as ``progress(done, total)`` after each log is checked.

    Raises:
        UnreadableError: a path cannot be opened (the first such path, in the order given).
        UsageError: an unknown rule id, bad ``jobs`` or ``engine``.
    """
    from ..runner import iter_many  # late import: the runner is only needed for many logs

    rules, ignore = (None if rules is None else tuple(rules)), (None if ignore is None else tuple(ignore))
    selected = select_rules(rules, ignore)
    given = [os.fspath(item) for item in paths]
    # one log has no parent or child among the logs: no seeds to compare, no chain to keep
    task = partial(_check_task, rules=rules, ignore=ignore, lenient=lenient, max_version=max_version,
                   lineage=len(given) > 1)
    findings: list[Finding] = []
    lineages: list[tuple[str, Lineage | None]] = []
    for path, checked in zip(given, _values(iter_many(given, task, jobs=jobs, engine=engine,
                                                        scheduler=scheduler, progress=progress))):
        lineages.append((path, checked.lineage))
        findings.extend(checked.findings)
    for found in lineage_findings(lineages, selected, jobs=jobs, engine=engine, scheduler=scheduler).values():
        findings.extend(found)
    return findings


def _prefix(path: str, count: int) -> list[RawEvent]:
    quiet = Sink(path, frozenset())
    out: list[RawEvent] = []
    with open_regular(path) as stream:  # a FIFO or device is refused, never read
        try:
            lines = open_lines(stream, quiet, [])
            next(lines, None)
            for raw in scan_events(lines, quiet, []):
                if len(out) == count:
                    break
                out.append(raw)
        except Fatal:
            pass
    return out


def _check_prefix(sink: Sink, parent_path: str, seed_length: int) -> None:
    child, parent = _prefix(sink.path, seed_length), _prefix(parent_path, seed_length)
    for mine, theirs in zip(child, parent):
        if mine.value != theirs.value:
            seq = mine.value.get("seq")
            sink.add("DSH603", f"seeded event {seq} differs from the parent's ({parent_path} line {theirs.line})",
                     line=mine.line, seq=seq if isinstance(seq, int) else None)
            return
    if len(parent) < seed_length or len(child) < seed_length:
        sink.add("DSH603", f"seedLength {seed_length} but the child has {len(child)} and the parent "
                 f"{len(parent)} event(s)", line=1)
