"""Where ``check``'s reports go: ``--format`` on stdout or a report option's FILE, never two reports
to one file, and the GitHub Actions step summary (``GITHUB_STEP_SUMMARY``)."""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping, Sequence

import click

from ..errors import UsageError
from ._common import echo_warning
from ._output import STDOUT


def _format_flag(fmt: str) -> str:
    """How the user asked for ``--format json`` or ``markdown``: ``--json`` when that flag was
    typed (or set from its environment variable), else ``--format FMT``."""
    context = click.get_current_context(silent=True)
    source = None if context is None else context.get_parameter_source("as_json")
    flagged = source is not None and source is not click.core.ParameterSource.DEFAULT
    return "--json" if fmt == "json" and flagged else f"--format {fmt}"


def _format_target(flag: str, option: str, path: str | None) -> str:
    """``--format json`` (or ``--json``) or ``--format markdown`` of ``check``, as typed (``flag``):
    the report ``option`` writes, on stdout.

    Raises:
        UsageError: ``option`` names a FILE too.
    """
    if path not in (None, STDOUT):
        raise UsageError(f"{flag} prints on stdout the report {option} {path} writes to a file",
                         hint=f"give {flag} (stdout) or {option} FILE, not both")
    return STDOUT


def _distinct_reports(typed: Mapping[str, str | None]) -> None:
    """Refuse two reports written to one file (the same path, or the same file through a symlink
    or a hard link): the second would silently replace the first. ``GITHUB_STEP_SUMMARY`` counts
    as a report, except beside ``--markdown`` naming its file (the summary is then appended once).

    Raises:
        UsageError: two of them name the same file; the message names both options as typed.
    """
    files = [(name, path) for name, path in typed.items() if path not in (None, STDOUT)]
    summary = _step_summary_target()
    if summary is not None:
        files.append(("GITHUB_STEP_SUMMARY", summary))
    for at, (name, path) in enumerate(files):
        for other, other_path in files[at + 1:]:
            assert path is not None and other_path is not None
            if {name, other} == {"--markdown", "GITHUB_STEP_SUMMARY"} or not _same_file(path, other_path):
                continue
            said = other if other == "GITHUB_STEP_SUMMARY" else f"{other} {other_path}"
            raise UsageError(f"{name} {path} and {said} name the same file: one report would overwrite the other",
                             hint="give each report its own FILE")


def _no_old_json_file(paths: Sequence[str]) -> None:
    """``check --json FILE``, the spelling before ``--json`` was the flag every command has: FILE
    would be read as a log (or be missing), so it is refused with the option that writes it.

    Raises:
        UsageError: a PATH names a ``.json`` file, or one that does not exist.
    """
    for path in paths:
        if path.endswith(".json") and (not os.path.exists(path) or os.path.isfile(path)):
            raise UsageError("a .json file is no session log: --json prints the JSON report on stdout and takes "
                             "no FILE", path=path, hint="write the JSON report to a file with --json-report FILE")


def _step_summary_target() -> str | None:
    return os.environ.get("GITHUB_STEP_SUMMARY") or None


def _same_file(first: str, second: str) -> bool:
    """Whether paths ``first`` and ``second`` name one file (the same inode, or, when one does not
    exist yet, the same resolved path)."""
    try:
        return os.path.samefile(first, second)
    except (OSError, ValueError):
        return os.path.realpath(first) == os.path.realpath(second)


def _markdown_is_step_summary(markdown_path: str | None) -> bool:
    """Whether ``--markdown FILE`` names the file of ``GITHUB_STEP_SUMMARY``: the summary is then
    appended to it once, as the step summary is, and never written over it (which would erase the
    summaries of the job's earlier steps)."""
    target = _step_summary_target()
    return markdown_path not in (None, STDOUT) and target is not None and _same_file(markdown_path, target)


def _step_summary(markdown: str) -> None:
    """Append ``markdown`` to the file ``GITHUB_STEP_SUMMARY`` names, if any; one that cannot be
    appended to is a warning naming that path (escaped) and why, and the verdict stands."""
    target = _step_summary_target()
    if target is None:
        return
    try:  # opened without blocking: a FIFO no program reads is said at once, not waited on
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError as exc:
        reason = "no program is reading the FIFO" if exc.errno == errno.ENXIO else exc.strerror
        echo_warning(f"cannot append to GITHUB_STEP_SUMMARY ({target}): {reason}")  # echo_warning escapes it
        return
    try:
        os.set_blocking(fd, True)
        with open(fd, "a", encoding="utf-8", errors="surrogateescape") as handle:
            handle.write(markdown)
    except OSError as exc:
        echo_warning(f"cannot append to GITHUB_STEP_SUMMARY ({target}): {exc.strerror}")
