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
from typing import IO

from ..capture import CaptureRead, read_capture
from ..errors import UsageError
from ..log import ProtectedInputs, canonical_generation, log_file_name, read_header
from ._manifest import bundle_files, manifest_path, routes_path

__all__ = ["output_targets", "read_rewritable", "refuse_generation", "staged_capture", "staged_file", "write_file"]

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
    if capture_source is not None and capture_output is None:  # OUTPUT.<the capture's name>, as the manifest is
        name = capture_source.name or Path(os.path.abspath(capture_source)).name
        capture_target = Path(f"{os.fspath(target)}.{name}")
        hint = "pass --capture-output (the default is OUTPUT.<the capture's name>)"
    elif capture_source is not None and capture_output is not None:
        capture_target = Path(capture_output)
    for folder in dict.fromkeys(Path(os.path.dirname(p) or os.curdir) for p in (target, capture_target) if p):
        for file, whose in bundle_files(folder, own=manifest):
            evidence.claim(file, what=whose)
    for path, what, why in ((target, "output", None),
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
