"""The refusal of an empty path, one sentence for the CLI and the library.

``Path("")`` is the current folder: an option left empty by mistake (``--capture ""``, an unset
shell variable) would read or write there. Every option that takes a path refuses an empty one
before anything is read, and every library function that takes such a path says the same
sentence, naming the CLI option, so a library user and a CLI user read one message.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from .errors import UsageError

__all__ = ["empty_path_error", "refuse_empty_paths"]


def empty_path_error(*options: str) -> UsageError:
    """The error of an empty path given to the option ``options`` names (each name of it, as
    click's ``Invalid value for`` lists them).

    Example:
        >>> str(empty_path_error("-o", "--output"))
        "Invalid value for '-o' / '--output': empty path (name a file or folder)"
    """
    names = " / ".join(f"'{name}'" for name in options)
    return UsageError(f"Invalid value for {names}: empty path (name a file or folder)")


def refuse_empty_paths(paths: Mapping[str | tuple[str, ...], str | os.PathLike[str] | None]) -> None:
    """Raise :func:`empty_path_error` for the first of ``paths`` (the option that gives it, or its
    names, -> the path, None when not given) that is empty.

    Example:
        >>> refuse_empty_paths({("-o", "--output"): "out.jsonl", "--capture-output": None})
        >>> refuse_empty_paths({("-o", "--output"): "", "--capture-output": None})
        Traceback (most recent call last):
        ...
        dsh_audit.errors.UsageError: Invalid value for '-o' / '--output': empty path (name a file or folder)
    """
    for option, path in paths.items():
        if path is not None and os.fspath(path) == "":
            raise empty_path_error(*((option,) if isinstance(option, str) else option))
