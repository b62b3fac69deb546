"""One log path in, one :class:`SessionCacheReport` out: replay, event times, attribution, accounting."""

from __future__ import annotations

import os
from typing import Any

from ..errors import DshAuditError, MalformedRecordError
from ..log import SessionLog, read_log
from ..replay import Request, replay
from ._account import analyze_cache
from ._report import SessionCacheReport
from ._rules import load_prices
from ._timing import RequestTime, request_times

__all__ = ["cache_report"]


def _auto_attribution(log: SessionLog, requests: list[Request]) -> list[Any] | None:
    """Transitions from :func:`dsh_audit.attribution.attribute` when that package is installed."""
    try:
        from ..attribution import attribute
    except ImportError:
        return None
    try:
        result = attribute(log, requests)
    except DshAuditError:  # attribution is optional evidence; the cache report stands alone
        return None
    return list(result.transitions)


def cache_report(path: str | os.PathLike[str], *, lenient: bool = False, max_version: int | None = None,
                 attribution: Any = "auto",
                 unit: int | None = None, tokenizer: str = "auto", wire: bool = True,
                 prices_path: str | None = None) -> SessionCacheReport:
    """Read, replay and account for the prefix cache of one session log.

    Args:
        path: a ``session.jsonl[.zstd]`` file.
        lenient: accept headers DSH refuses only for their metadata (tokenised fixtures).
        max_version: the newest log format version to read (default: every released one).
        attribution: ``"auto"`` (use ``dsh_audit.attribution`` when installed), ``None`` (every break
            ``unattributed``) or an iterable of transitions.
        unit: DeepSeek cache unit override (default 128 from the rules data).
        tokenizer: ``auto``, ``exact`` or ``estimate``.
        wire: compare rendered wire bodies when possible.
        prices_path: a JSON price table replacing the packaged example prices.

    Raises:
        DshAuditError: the log cannot be read or replayed.

    Example:
        >>> report = cache_report("session.jsonl")  # doctest: +SKIP
        >>> report.actual_total, report.expected_total  # doctest: +SKIP
        (67648, 67584)
    """
    location = os.fspath(path)
    options: dict[str, Any] = {"lenient": lenient}
    if max_version is not None:
        options["max_version"] = max_version
    prices, note = load_prices(prices_path)
    try:
        log = read_log(location, **options)
    except MalformedRecordError as exc:
        imported = _imported(location) if exc.line == 1 else None
        if imported is None:
            raise
        times = {i: RequestTime(*t) for i, t in imported.times().items()}
        given = None if attribution == "auto" else attribution
        return analyze_cache(list(imported.requests), times=times, attribution=given, unit=unit,
                             tokenizer=tokenizer, wire=wire, prices=prices, price_note=note, path=location,
                             session_id=imported.session_id)
    requests, _ = replay(log)
    times = request_times(read_log(location, **options).events(), requests)
    given = _auto_attribution(log, requests) if attribution == "auto" else attribution
    return analyze_cache(requests, times=times, attribution=given, unit=unit, tokenizer=tokenizer, wire=wire,
                         prices=prices, price_note=note, path=location, session_id=log.header.id)


def _imported(location: str) -> Any:
    """Another agent's session (Claude Code, Codex) when the importers recognise the file."""
    from ..importers import detect, load_foreign  # late import: importers build on replay

    return load_foreign(location) if detect(location) not in (None, "dsh") else None
