"""Tasks for the process-pool and Dask tests (``test_fleet.py``). A worker is a fresh process
that imports the module of the task it is given: here one that loads little (a test module would
load pytest and the CLI into every worker, a few tenths of a second of CPU each)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from dsh_audit.errors import UnreadableError


def echo(path: str, *, fail: str = "") -> str:
    """``done NAME``; paths named by a digit finish later the earlier they come; ``fail`` raises a
    bug (ValueError), ``bad`` the library's own error for a log it cannot read."""
    name = Path(path).name
    time.sleep(0.05 * (5 - int(name)) if name.isdigit() else 0)  # early paths finish last
    if name == fail:
        raise ValueError("boom")
    if name == "bad":
        raise UnreadableError("not a log", path=path, hint="give a log")
    return f"done {name}"


def die(path: str) -> str:
    """The worker given ``0`` dies (exit 3, no exception); any other path is its name."""
    if Path(path).name == "0":
        os._exit(3)
    return Path(path).name
