"""Where a redaction's files go, and writing them: each output checked by the one output guard
(:meth:`dsh_audit.log.ProtectedInputs.guard`) before anything is read, written under a temporary name
beside it (:meth:`dsh_audit.log.ProtectedInputs.staged`) and renamed into place only once the copy's
verdicts are checked, so nothing partial is left; and the capture read, once, in a format redact can rewrite.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, NoReturn

from .._manifest_file import load_manifest
from ..capture import CAPTURE_NAME, CaptureRead, capture_folders, read_capture
from ..errors import DshAuditError, UsageError
from ..log import ProtectedInputs, canonical_generation, log_file_name, read_header
from ._manifest import bundle_files, manifest_path, routes_path

__all__ = ["commit_capture", "drop_stale", "output_targets", "read_rewritable", "refuse_generation", "stale_capture",
           "staged_capture", "staged_file", "write_file"]

_CAPTURE_FORMATS = ("wire-jsonl", "har", "body-folder")

#: What to do when an output's folder takes no new file (or the disk fills while it is written).
_UNWRITABLE = "write the redacted files to a folder you can write to (-o, --capture-output)"


def read_rewritable(path: Path | None) -> CaptureRead | None:
    """The capture at ``path`` (None: no capture) read once, by :func:`dsh_audit.capture.read_capture`
    (the loader's one open and sniff): its requests, and its records for redact to rewrite; a
    UsageError when redact cannot rewrite its format (``wire-jsonl``, ``har`` and ``body-folder`` it can)."""
    if path is None:
        return None
    read = read_capture(path)
    if read.format not in _CAPTURE_FORMATS:
        raise UsageError(f"redact cannot rewrite a {read.format} capture yet", path=str(path),
                         hint="pass --capture a wire.jsonl or HAR file (diff still reads this capture as it is)")
    return read


def refuse_generation(source: Path, target: Path) -> None:
    """A UsageError, before anything is written, when ``target``'s name is a DSH generation's (``session.vN.jsonl``,
    ``session.jsonl``: :func:`dsh_audit.log.canonical_generation`) other than the log's format version: DSH, every
    command and ``redact --check`` refuse such a copy (fuzz 25: a v0 log written to ``session.v2.jsonl``). A log
    whose header cannot be read is left to the reading, which says why."""
    generation = canonical_generation(target.name)
    header = None if generation is None else read_header(source)
    if header is None or header.version == generation:
        return
    fits = log_file_name(header.version, compressed=target.name.endswith(".zstd"))
    raise UsageError(f"the output name {target.name} is DSH generation v{generation}, and the log is format "
                     f"v{header.version}: DSH and redact --check would refuse the copy", path=str(source),
                     hint=f"pass -o {fits} in another folder, or a name that is no session[.vN].jsonl")


def output_targets(inputs: tuple[Path | None, ...], target: Path, capture_output: str | os.PathLike[str] | None, *,
                   force: bool, routed: bool) -> tuple[Path, Path | None, Path | None]:
    """Where the redacted files go: the manifest, the route file (when ``routed``) and the capture
    output (when ``inputs`` has a capture, its second item), each refused by
    :meth:`dsh_audit.log.ProtectedInputs.guard` (in its one wording for every command) when it is, or
    resolves to, an input or another of these outputs, or a file of another bundle whose manifest lies
    beside it (:func:`._manifest.bundle_files`: ``--force`` replaces this bundle's files only), exists
    without ``force``, or cannot be written; a body folder's capture output is a folder (never one that
    holds an input or another output)."""
    capture_source = inputs[1]
    evidence = ProtectedInputs()
    for item in inputs:
        if item is not None:
            evidence.add(str(item))
    manifest = manifest_path(target)
    route_target = routes_path(target) if routed else None
    hint, capture_target = None, None
    if capture_source is not None and capture_output is None:  # wire.jsonl beside OUTPUT, else OUTPUT.<its name>
        capture_target = _default_capture(capture_source, target, manifest, log=inputs[0])
        hint = ("pass --capture-output (the default is wire.jsonl beside OUTPUT for a wire.jsonl, when that name is "
                "free, else OUTPUT.<the capture's name>)")
    elif capture_source is not None and capture_output is not None:
        capture_target, hint = Path(capture_output), "give --capture-output another path"
    for folder in dict.fromkeys(Path(os.path.dirname(p) or os.curdir) for p in (target, capture_target) if p):
        for file, whose in bundle_files(folder, own=manifest):
            evidence.claim(file, what=whose)
    for path, what, why in ((target, "output", "give -o another path"),
                            (manifest, "manifest", "choose another -o path (the manifest is OUTPUT.manifest.json)"),
                            (route_target, "route file",
                             "choose another -o path (the redacted route file is OUTPUT.routes.yml)")):
        if path is not None:
            evidence.guard(path, what=what, force=force, hint=why)
            evidence.claim(path, what=what)
    if capture_source is not None:
        evidence.guard(capture_target, what="capture output", force=force, folder=capture_source.is_dir(),
                       replaces=(".json",), hint=hint)
    return manifest, route_target, capture_target


def _default_capture(source: Path, target: Path, manifest: Path, *, log: Path | None) -> Path:
    """Where the redacted capture goes without ``--capture-output``: a ``wire.jsonl`` file as ``wire.jsonl``
    beside the redacted log, where every view (``cache``, ``usage``, ``report``, ``check``...) finds a log's
    capture (:func:`dsh_audit.capture.find_capture`), so the copy prices and compares as the original does,
    when no file is there, no other bundle's manifest names one (this bundle's own, ``--force``, is
    replaced) and the views of the original ``log`` would not find it (:func:`_searched`: the copy holds
    requests of the original's session, so they would compare the original with it); else
    ``OUTPUT.<the capture's file or folder name>``, beside ``OUTPUT.manifest.json``, which no view finds
    (redact's closing lines then name ``--capture``)."""
    name = source.name or Path(os.path.abspath(source)).name
    beside = Path(os.path.dirname(target) or os.curdir, CAPTURE_NAME)
    if (name == CAPTURE_NAME and not source.is_dir() and not _searched(beside.parent, log)
            and _free(beside, manifest)):
        return Path(os.path.dirname(target), CAPTURE_NAME)
    return Path(f"{os.fspath(target)}.{name}")


def _searched(folder: Path, log: Path | None) -> bool:
    """Whether :func:`dsh_audit.capture.find_capture` looks for ``log``'s capture in ``folder``: it is, by real
    path, one of :func:`dsh_audit.capture.capture_folders`."""
    real = os.path.realpath(folder)
    return log is not None and any(os.fspath(here) == real for here in capture_folders(log))


def _free(path: Path, manifest: Path) -> bool:
    """Whether the redacted capture may take ``path``: nothing is there and no other bundle's manifest
    beside it names it, or the manifest ``manifest`` (this bundle's, replaced with ``--force``) names it."""
    real = os.path.realpath(path)
    if os.path.lexists(path):
        try:
            own: object = load_manifest(manifest) if os.path.lexists(manifest) else None
        except (DshAuditError, ValueError):
            return False
        named = own.get("capture") if isinstance(own, dict) else None
        return isinstance(named, str) and os.path.realpath(Path(os.path.dirname(manifest) or os.curdir, named)) == real
    return all(os.path.realpath(file) != real for file, _ in bundle_files(path.parent, own=manifest))


def stale_capture(manifest: Path, capture_target: Path | None, inputs: tuple[Path | None, ...]) -> Path | None:
    """The capture the manifest ``manifest`` (this bundle's, replaced with ``--force``) names, when this run writes
    none there (``capture_target``): a file in the redacted log's folder, none of the ``inputs`` nor in one (review E:
    a ``wire.jsonl`` left beside the copy is the capture ``check`` finds for it, and compares with); else None."""
    try:
        old: object = load_manifest(manifest) if os.path.isfile(manifest) else None
    except (DshAuditError, ValueError):
        return None
    named = old.get("capture") if isinstance(old, dict) else None
    if not isinstance(named, str):
        return None
    folder = os.path.realpath(os.path.dirname(manifest) or os.curdir)
    path = Path(folder, named)
    real = os.path.realpath(path)
    taken = [os.path.realpath(p) for p in (capture_target, *inputs) if p is not None]
    if (os.path.islink(path) or not os.path.isfile(path) or os.path.dirname(real) != folder
            or any(real == other or real.startswith(other + os.sep) for other in taken)):
        return None
    return path


def drop_stale(path: Path | None) -> None:
    """Remove the earlier bundle's capture (:func:`stale_capture`); one that stays is left out of the ``check`` the
    command prints (``--no-capture``), as any capture ``check`` would find beside the copy."""
    if path is not None:
        try:
            os.unlink(path)
        except OSError:
            pass


@contextmanager
def staged_file(target: Path, *, what: str) -> Iterator[tuple[IO[bytes], Path]]:
    """A new temporary file beside ``target``, open for writing, removed unless renamed into place
    (:meth:`dsh_audit.log.ProtectedInputs.staged`; ``what``: the output, for its errors)."""
    with ProtectedInputs.staged(target, what=f"the {what}", hint=_UNWRITABLE) as temp, open(temp, "wb") as handle:
        yield handle, temp


@contextmanager
def staged_capture(target: Path | None, *, folder: bool) -> Iterator[tuple[Path | None, IO[bytes] | None]]:
    """The redacted capture under a temporary name beside ``target`` (None: no capture): a new
    folder (``folder``), or a new file and its handle, to write the records into as they are redacted."""
    if target is None:
        yield None, None
    elif folder:
        with ProtectedInputs.staged(target, what="the capture output", folder=True, hint=_UNWRITABLE) as temp:
            yield temp, None
    else:
        with staged_file(target, what="capture output") as (out, temp):
            yield temp, out


def write_file(folder: Path, name: str, body: bytes) -> None:
    """``body`` written as the new file ``name`` in ``folder`` (a staged folder, :func:`staged_capture`:
    a file cut short by an error goes with the folder, which is renamed into place only whole)."""
    with open(folder / name, "xb") as handle:
        handle.write(body)


def commit_capture(temp: Path, path: Path, *, fresh: bool) -> None:
    """Rename the redacted capture's temporary file ``temp`` (:func:`staged_capture`) to ``path``, first of
    the bundle's files. ``fresh``: nothing was at ``path`` when the outputs were checked; then a file
    written there since (another redaction into the same folder takes the same default ``wire.jsonl``,
    and a rename would replace that bundle's capture, which its manifest names) is never replaced: the
    file is linked to ``path`` (which fails when the name is taken) and its temporary name unlinked. A
    body folder, or a capture replaced with ``--force``, is renamed into place as every output is
    (:meth:`dsh_audit.log.ProtectedInputs.commit`).

    Raises:
        UsageError: ``path`` was taken while this run worked (nothing of the bundle is in place yet).
    """
    if not fresh or os.path.isdir(temp):
        ProtectedInputs.commit(temp, path)
        return
    try:
        os.link(temp, path)
    except FileExistsError:
        _taken(path)
    except OSError:  # a file system without hard links: renamed, unless the name was taken meanwhile
        if os.path.lexists(path):
            _taken(path)
        os.replace(temp, path)
        return
    os.unlink(temp)


def _taken(path: Path) -> NoReturn:
    """The UsageError of a capture output whose name another run took while this one worked."""
    raise UsageError("another run wrote the capture output while this redaction ran, so nothing was written",
                     path=str(path), hint="pass --capture-output PATH to name another file for the redacted capture")
