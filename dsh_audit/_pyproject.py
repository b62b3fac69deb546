"""The ``pyproject.toml`` a command reads its ``[tool.dsh-audit]`` tables from: the nearest one."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["find_pyproject"]


def find_pyproject(start: str | os.PathLike[str] | None = None) -> Path | None:
    """The nearest ``pyproject.toml`` in ``start`` (default: the current folder) or above."""
    folder = Path(start or os.getcwd()).resolve()
    for candidate in (folder, *folder.parents):
        if (candidate / "pyproject.toml").is_file():
            return candidate / "pyproject.toml"
    return None
