"""Many sessions at once: a process pool or a Dask cluster, ``--since`` selection, and a SQLite
fleet index that answers questions over every session (``dsh-audit index`` / ``stats``).

Example:
    >>> from dsh_audit.fleet import fleet_stats, index_logs, parse_since, select_logs
    >>> summary = index_logs(select_logs(["~/.dsh/sessions"], since=parse_since("7d")),  # doctest: +SKIP
    ...                      "audit.sqlite", jobs=4)
    >>> fleet_stats("audit.sqlite").totals["actual_hit_ratio"]  # doctest: +SKIP
    0.8125
"""

from __future__ import annotations

import typing

from .._lazy import lazy_names as _lazy_names

if typing.TYPE_CHECKING:
    from ._audit import audit_group, audit_session
    from ..runner import DASK_INSTALL
    from ._db import SCHEMA_VERSION, connect_index
    from ._index import IndexSummary, index_logs
    from ._rows import BreakRow, CostRow, RequestRow, SessionRecord
    from ..runner import ENGINES, SessionTaskError, TaskResult, iter_many, resolve_jobs, run_many
    from ._select import modified_since, parse_since, select_logs
    from ._stats import FleetStats, fleet_stats
    from ._stored import shown

__all__ = [
    "BreakRow",
    "CostRow",
    "DASK_INSTALL",
    "ENGINES",
    "FleetStats",
    "IndexSummary",
    "RequestRow",
    "SCHEMA_VERSION",
    "SessionRecord",
    "SessionTaskError",
    "TaskResult",
    "audit_group",
    "audit_session",
    "connect_index",
    "fleet_stats",
    "index_logs",
    "iter_many",
    "modified_since",
    "parse_since",
    "resolve_jobs",
    "run_many",
    "select_logs",
    "shown",
]

# Public name -> the module (relative to this package) that defines it: imported on first use.
_LAZY = {
    "BreakRow": "._rows",
    "CostRow": "._rows",
    "DASK_INSTALL": "..runner",
    "ENGINES": "..runner",
    "FleetStats": "._stats",
    "IndexSummary": "._index",
    "RequestRow": "._rows",
    "SCHEMA_VERSION": "._db",
    "SessionRecord": "._rows",
    "SessionTaskError": "..runner",
    "TaskResult": "..runner",
    "audit_group": "._audit",
    "audit_session": "._audit",
    "connect_index": "._db",
    "fleet_stats": "._stats",
    "index_logs": "._index",
    "iter_many": "..runner",
    "modified_since": "._select",
    "parse_since": "._select",
    "resolve_jobs": "..runner",
    "run_many": "..runner",
    "select_logs": "._select",
    "shown": "._stored",
}

__getattr__, __dir__ = _lazy_names(__name__, _LAZY, __all__)
