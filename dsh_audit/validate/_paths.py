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

__all__ = ["seeds_match", "validate_paths"]

T = TypeVar("T")


def seeds_match(child: bytes, parent: bytes, seed_length: int) -> bool:
    """Whether the chains (:attr:`SeedChain.links`) prove a child's first ``seed_length`` events
    equal its parent's; False also when they cannot tell (then compare the events themselves)."""
    at = 8 * seed_length
    return seed_length > 0 and len(child) >= at and len(parent) >= at and child[at - 8:at] == parent[at - 8:at]


@dataclass(frozen=True, slots=True)
class _Checked:
    """One log's findings and what the lineage check needs of its header (small, picklable)."""

    findings: tuple[Finding, ...]
    session_id: str | None = None
    parent: str | None = None
    seed_length: int | None = None
    chain: bytes = b""  # SeedChain.links


def _check_task(path: str, *, rules: tuple[str, ...] | None, ignore: tuple[str, ...] | None, lenient: bool,
                max_version: int, lineage: bool) -> _Checked:
    """Validate one log (a top-level function, so that worker processes can run it); with
    ``lineage``, keep its seed chain for the fork-lineage check."""
    checker = LineValidator(path, rules=rules, ignore=ignore, lenient=lenient, max_version=max_version,
                            lineage=lineage)
    header = check_file(path, checker)
    findings = tuple(checker.finish())
    if header is None:
        return _Checked(findings)
    parent = header.raw.get("parentSession")
    return _Checked(findings, header.session_id,
                    parent if isinstance(parent, str) else None, header.seed_length,
                    bytes(checker.chain.links) if checker.chain is not None else b"")


def _lineage_task(path: str, *, parents: dict[str, tuple[str, int]], selected: frozenset[str]) -> list[Finding]:
    """Check one child against its parent (``parents`` maps the child's path to both facts)."""
    sink = Sink(path, selected)
    parent_path, seed_length = parents[path]
    _check_prefix(sink, parent_path, seed_length)
    return sink.findings


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
    headers: dict[str, tuple[str, _Checked]] = {}
    for path, checked in zip(given, _values(iter_many(given, task, jobs=jobs, engine=engine,
                                                        scheduler=scheduler, progress=progress))):
        if checked.session_id is not None:
            headers.setdefault(checked.session_id, (path, checked))
        findings.extend(checked.findings)
    # A child whose seed the chains prove equal to its parent's prefix needs no second read; only
    # the others are compared event by event, for the finding's exact seq and line (none at all
    # when DSH603 is not reported).
    parents = {path: (headers[c.parent][0], c.seed_length) for path, c in headers.values()
               if "DSH603" in selected and c.parent is not None and c.parent in headers and c.seed_length
               and not seeds_match(c.chain, headers[c.parent][1].chain, c.seed_length)}
    lineage = partial(_lineage_task, parents=parents, selected=selected)
    for found in _values(iter_many(list(parents), lineage, jobs=jobs, engine=engine, scheduler=scheduler)):
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
