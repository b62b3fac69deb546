"""Running one task per unit of work (a log, or a group of logs read together) over many cores
(a process pool) or a Dask cluster, results in input order. Every multi-session command runs
through :func:`iter_many`.
"""

from ._dask import DASK_INSTALL
from ._pool import ENGINES, SessionTaskError, TaskResult, in_process, iter_many, resolve_jobs, run_many

__all__ = ["DASK_INSTALL", "ENGINES", "SessionTaskError", "TaskResult", "in_process", "iter_many", "resolve_jobs", "run_many"]
