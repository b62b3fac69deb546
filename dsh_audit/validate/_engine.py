"""``validate``: run every rule over one log, or over many with cross-log lineage checks."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import UnreadableError
from ..log import SessionLog
from ..log._decode import TornTail
from ..log._types import KNOWN_EVENT_TYPES
from ..log._versions import LATEST_VERSION, known_types
from ._admit import Admitter
from ._compaction import CompactionCheck
from ._header import HeaderInfo, check_header
from ._model import Finding
from ._sink import Sink, select_rules
from ._source import Fatal, RawEvent, open_lines, scan_events
from ._trace import Trace

__all__ = ["validate", "validate_paths"]


def _open(path: str) -> Any:
    try:
        return open(path, "rb")  # noqa: SIM115 - closed by the caller's with
    except IsADirectoryError:
        raise UnreadableError("is a folder, not a log file", path=path) from None
    except OSError as exc:
        raise UnreadableError(f"cannot open: {exc.strerror}", path=path) from None


def _lineage_header(header: HeaderInfo, sink: Sink) -> None:
    raw = header.raw
    parent, depth = raw.get("parentSession"), raw.get("delegationDepth")
    if raw.get("seedLength") is not None and parent is None:
        sink.add("DSH601", "header has seedLength but no parentSession", line=1)
    if raw.get("origin") == "subagent" and (parent is None or not (isinstance(depth, int) and depth >= 1)):
        sink.add("DSH601", f"subagent header needs parentSession and delegationDepth >= 1 "
                 f"(parentSession {parent!r}, delegationDepth {depth!r})", line=1)


def _check_file(path: str, sink: Sink, *, lenient: bool, max_version: int) -> HeaderInfo | None:
    torn: list[TornTail] = []
    with _open(path) as stream:
        try:
            lines = open_lines(stream, sink, torn)
            header = check_header(next(lines, None), sink, lenient=lenient, max_version=max_version)
            _lineage_header(header, sink)
            admitter = Admitter(sink, session_id=header.session_id, version=header.version,
                                known=known_types(header.version, KNOWN_EVENT_TYPES))
            trace = Trace(sink, version=header.version, seed_length=header.seed_length)
            compaction = CompactionCheck(sink)
            for raw in scan_events(lines, sink, torn):
                event = admitter.admit(raw)
                if event is not None:
                    trace.surface_ok = admitter.surface_ok
                    trace.apply(event)
                    compaction.apply(event, admitter.replacement, surface_ok=admitter.surface_ok)
                else:
                    trace.refused(raw.value)
                    compaction.refused()
            trace.finish()
            compaction.finish()
            return header
        except Fatal:
            return None


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
        rules: rule ids (or id prefixes such as ``DSH3``) to report; default all.
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
    sink = Sink(path, select_rules(rules, ignore))
    _check_file(path, sink, lenient=lenient, max_version=max_version)
    return _order(sink.findings)


def validate_paths(paths: Sequence[str | os.PathLike[str]], *, rules: Iterable[str] | None = None,
                   ignore: Iterable[str] | None = None, lenient: bool = False,
                   max_version: int = LATEST_VERSION) -> list[Finding]:
    """:func:`validate` each log, then check each child against its parent when both are given.

    A child whose ``parentSession`` is among the logs must start with the parent's first
    ``seedLength`` events (DSH603). Options as for :func:`validate`.
    """
    selected = select_rules(rules, ignore)
    findings: list[Finding] = []
    headers: dict[str, tuple[str, HeaderInfo]] = {}
    for item in paths:
        path = os.fspath(item)
        sink = Sink(path, selected)
        header = _check_file(path, sink, lenient=lenient, max_version=max_version)
        if header is not None:
            headers.setdefault(header.session_id, (path, header))
        findings.extend(_order(sink.findings))
    for path, header in headers.values():
        parent = header.raw.get("parentSession")
        if isinstance(parent, str) and parent in headers and header.seed_length:
            sink = Sink(path, selected)
            _check_prefix(sink, headers[parent][0], header.seed_length)
            findings.extend(sink.findings)
    return findings


def _prefix(path: str, count: int) -> list[RawEvent]:
    quiet = Sink(path, frozenset())
    out: list[RawEvent] = []
    with _open(path) as stream:
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
