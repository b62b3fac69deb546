"""A bundle's manifest: where it lies (``<log>.manifest.json`` beside the redacted log), reading one, and
the files other bundles' manifests name.

The manifest names the bundle's files by their names beside the log: the redacted log (``log``), its
capture (``capture``) and its route file (``route_file``). A name is the file system's bytes as Python
holds them: a byte that is not UTF-8 (``x\\xfe.jsonl``) is the lone surrogate U+DC80-U+DCFF of
``surrogateescape`` (:func:`os.fsdecode`), written as its JSON escape (``"x\\udcfe.jsonl"``) and read
back to the same bytes (:func:`~dsh_audit._manifest_file.file_name`), by every dsh-audit that wrote
such a name. A file another manifest of the same folder names belongs to that bundle:
:func:`bundle_files` lists them, so that ``redact --force`` replaces only its own bundle's files, never
another's (``docs/redact.md``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._manifest_file import MANIFEST_SUFFIX, file_name, load_manifest, manifest_of
from .._version import LOG_FORMATS
from ..errors import DshAuditError, UsageError
from ..log import MAX_SAFE
from ._derivation import KEY_DERIVATIONS, derived
from ._routes import ROUTES_SUFFIX
from ._verdicts import CATEGORIES

__all__ = ["Manifest", "bundle_files", "manifest_path", "read_manifest", "routes_path", "salt_id"]

#: The members of a manifest that name a file of its bundle beside its log, and what each is.
_MEMBERS = (("capture", "capture"), ("route_file", "route file"))
#: The compressions redact records (``compression``): the redacted log's, the same as its input's.
_COMPRESSIONS = {"zstd": True, "none": False}
#: A verdict digest, as :func:`~dsh_audit.redact._verdicts.digest` writes it.
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
#: A salt's id, as :func:`salt_id` writes it (``scrypt:``; no dsh-audit wrote another).
_SALT_ID = re.compile(r"scrypt:[0-9a-f]{32}")
#: How a manifest records where its salt came from (``salt``): a random one (never written), or one given.
_SALT_KINDS = ("random", "given")


#: The hint of a manifest no redaction wrote (edited, damaged, or another program's file).
_TAMPERED_HINT = ("the manifest was edited or damaged after `dsh-audit redact` wrote it: ask the sender for the "
                  "bundle again, or redact the log again with `dsh-audit redact LOG -o FILE`")


def salt_id(key: bytes) -> str:
    """What a manifest records of the salt ``key`` (``salt_id``): a digest that tells whether two bundles
    (a fork's parent and child) were made with the same salt, so a child redacted with another salt than
    its parent's redaction is said so. It is not the salt, but it confirms a guessed one with no known
    text: so it is slow to make (``scrypt``), as each guess then is; the placeholders' key comes from the same
    scrypt (:func:`._derivation.derived`), so a known text of the bundle (a fixed line of DSH's) confirms a guess
    no faster (issue 17: it took a microsecond, a SHA-256 of the salt). A short salt is still found, a guess per
    50-120 ms of a core: a random salt is 32 bytes; a given one must be long and random too (docs/redact.md), as
    it undoes every placeholder.

    Example:
        >>> salt_id(b"s") == salt_id(b"s") != salt_id(b"t"), salt_id(b"s")[:7]
        (True, 'scrypt:')
    """
    return derived(bytes(key))[0]


def manifest_path(log: str | os.PathLike[str]) -> Path:
    """Where the manifest of the redacted log ``log`` lives: ``<log>.manifest.json``."""
    return Path(manifest_of(log))


def routes_path(log: str | os.PathLike[str]) -> Path:
    """Where the redacted route configuration of the redacted log ``log`` lives: ``<log>.routes.yml``."""
    return Path(os.fspath(log) + ROUTES_SUFFIX)


@dataclass(frozen=True, slots=True)
class Manifest:
    """What a redaction manifest records, as :func:`read_manifest` checked it: each verdict category's
    digest (``recorded``), the capture's and the route file's names beside the log (None: none; a capture
    is named exactly when there are diff verdicts), whether a route configuration rendered the verdicts
    (``routed``), how many captured requests were unrendered, the parent session a child was
    compared with, the salt's :func:`salt_id` and whether it was random (None: a manifest of an
    older dsh-audit, which records neither), and the placeholders' key derivation (1: one that records none).
    """

    path: Path
    recorded: dict[str, str]
    capture: str | None
    routed: bool
    unrendered: int
    parent: str | None
    route_file: str | None
    counts: dict[str, int] = field(default_factory=dict)  # each verdict category's row count
    format_version: int = 0  # the redacted log's format version, as redact kept it
    compressed: bool = False  # whether the redacted log is zstd
    log: str = ""  # the redacted log's file name, as redact wrote it beside the manifest
    salt_id: str | None = None  # the salt's id (salt_id); None: not recorded
    salt_random: bool | None = None  # whether the salt was random (no run can repeat it); None: not recorded
    key_derivation: int = 1  # the placeholders' (._derivation.KEY_DERIVATION); 1: not recorded (SHA-256 of the salt)


class _Refused(ValueError):
    """A manifest field that no redaction writes; its message says which and why."""


def _named(value: object, key: str) -> str | None:
    """The file name a manifest's ``key`` (``capture``, ``route_file``) gives: None for none (null or
    absent), a string :func:`~dsh_audit._manifest_file.file_name` accepts (where it lies is the check's:
    :func:`._bundle._inside`), else ValueError (a string no file system holds) or :class:`_Refused` naming ``key``
    (no string)."""
    name = file_name(value)
    if name is None:
        return None
    if not isinstance(name, str):
        raise _Refused(f"its {key} is not a file name")
    return name


def read_manifest(log: Path) -> Manifest:
    """The manifest of the redacted log ``log``, checked for what every redaction records.

    Raises:
        UsageError: there is none beside the log, or it is not a dsh-audit redaction manifest.
        UnreadableError: it is not a regular file, or cannot be read.
    """
    manifest_file = manifest_path(log)
    if not os.path.lexists(manifest_file):
        raise UsageError("no redaction manifest beside the log", path=str(manifest_file),
                         hint="check the log `dsh-audit redact` wrote, with its .manifest.json")
    try:
        manifest: Any = load_manifest(manifest_file)
        format_version, compressed, log_name = _written_by_redact(manifest)
        recorded, counts = _verdicts(manifest["verdicts"])
        capture_name = _named(manifest.get("capture"), "capture")
        if capture_name is not None and "diff" not in recorded:  # only a capture's comparison gives diff verdicts
            raise _Refused("it names a capture but no diff verdicts")
        if capture_name is None and "diff" in recorded:
            raise _Refused("it records diff verdicts but names no capture")
        routed = manifest.get("routes", False)
        if not isinstance(routed, bool):
            raise _Refused("its routes is neither true nor false")
        unrendered = _unrendered(manifest.get("unrendered", {"count": 0}), diff=counts.get("diff"))
        parent_id = manifest.get("parent")  # absent from older manifests
        if parent_id is not None and (not isinstance(parent_id, str) or not parent_id):
            raise _Refused("its parent is not a session id")
        route_name = _named(manifest.get("route_file"), "route_file")  # absent from older manifests
        if route_name is not None and not routed:
            raise _Refused("it names a route_file but its routes is false")
        salt_kind, salt = manifest.get("salt"), manifest.get("salt_id")  # absent from older manifests
        if salt_kind is not None and salt_kind not in _SALT_KINDS:
            raise _Refused(f"its salt is neither {' nor '.join(_SALT_KINDS)}")
        if salt is not None and (not isinstance(salt, str) or not _SALT_ID.fullmatch(salt)):
            raise _Refused("its salt_id is not a scrypt: digest")
        derivation = manifest.get("key_derivation", 1)  # absent from older manifests: their placeholders' is 1
        if type(derivation) is not int or derivation not in KEY_DERIVATIONS:
            raise _Refused(f"its key_derivation is none of {', '.join(map(str, KEY_DERIVATIONS))}")
    except _Refused as exc:
        raise UsageError(f"not a dsh-audit redaction manifest: {exc}", path=str(manifest_file),
                         hint=_TAMPERED_HINT) from None
    except (ValueError, KeyError, TypeError, AttributeError):
        raise UsageError("not a dsh-audit redaction manifest", path=str(manifest_file), hint=_TAMPERED_HINT) from None
    return Manifest(manifest_file, recorded, capture_name, routed, unrendered, parent_id, route_name, counts,
                    format_version, compressed, log_name, salt,
                    None if salt_kind is None else salt_kind == _SALT_KINDS[0], derivation)


def _count(value: object, what: str) -> int:
    """``value``, a count a manifest records: a whole number from 0 to :data:`~dsh_audit.log.MAX_SAFE` (not a
    bool, a float or a string), else ValueError."""
    if type(value) is not int or not 0 <= value <= MAX_SAFE:
        raise _Refused(f"{what} is not a count from 0 to {MAX_SAFE}")
    return value


def _written_by_redact(manifest: Any) -> tuple[int, bool, str]:
    """The format version, compression (zstd or not) and file name a manifest records for its log,
    when it is one dsh-audit redact wrote: ``"tool": "dsh-audit"``, a log format dsh-audit reads, a
    compression redact keeps, the log's file name; else ValueError (or KeyError, TypeError)."""
    version = manifest["format_version"]
    if manifest["tool"] != "dsh-audit":
        raise _Refused("its tool is not dsh-audit")
    if type(version) is not int or version not in LOG_FORMATS:
        raise _Refused(f"its format_version is none of the log formats {LOG_FORMATS[0]}-{LOG_FORMATS[-1]}")
    log = file_name(manifest["log"])
    if not isinstance(log, str) or not log or "/" in log:
        raise _Refused("its log is not a file name")
    if manifest["compression"] not in _COMPRESSIONS:
        raise _Refused(f"its compression is neither {' nor '.join(_COMPRESSIONS)}")
    return version, _COMPRESSIONS[manifest["compression"]], log


def _verdicts(verdicts: Any) -> tuple[dict[str, str], dict[str, int]]:
    """Each verdict category's digest and row count, as redact records them (an object per category of
    :data:`~dsh_audit.redact._verdicts.CATEGORIES`, requests, breaks and cache in every manifest; a
    ``sha256:`` digest, a count :func:`_count` accepts), else ValueError (:class:`_Refused` naming the
    key; KeyError for one missing)."""
    if not isinstance(verdicts, dict):
        raise _Refused("its verdicts are not an object of verdict categories")
    if not verdicts.keys() <= set(CATEGORIES):  # the name is the sender's text: not repeated
        raise _Refused(f"its verdicts hold a category none of {', '.join(CATEGORIES)}")
    for category, verdict in verdicts.items():
        if not isinstance(verdict, dict):
            raise _Refused(f"its {category} verdicts are not an object of a count and a digest")
    recorded = {c: v["digest"] for c, v in verdicts.items()}
    if not {"requests", "breaks", "cache"} <= recorded.keys():  # what every redaction records
        raise ValueError("verdicts")
    if not all(isinstance(d, str) for d in recorded.values()):
        raise _Refused("a verdict digest is not a string")
    for category, found in recorded.items():
        if not _DIGEST.fullmatch(found):  # no digest of verdicts: it matches none
            raise _Refused(f"its {category} verdicts' digest is not a sha256: digest")
    return recorded, {c: _count(v["count"], f"its {c} verdicts' count") for c, v in verdicts.items()}


def _unrendered(unrendered: Any, *, diff: int | None) -> int:
    """How many captured requests a manifest records as unrendered: a count, as long as its list of
    requests when it has one (each a request index, or null for a captured request paired with none),
    none without diff verdicts (only a capture's comparison leaves one unrendered) and no more than
    the ``diff`` verdicts' count; else ValueError."""
    if not isinstance(unrendered, dict):
        raise _Refused("its unrendered is not an object of a count and requests")
    count = _count(unrendered["count"], "its unrendered count")
    listed = unrendered.get("requests")
    if listed is not None and (not isinstance(listed, list) or len(listed) != count):
        raise _Refused("its unrendered count is not the number of unrendered requests it lists")
    if listed is not None and not all(i is None or (type(i) is int and 0 <= i <= MAX_SAFE) for i in listed):
        raise _Refused("its unrendered requests are not request indexes")
    if count and diff is None:
        raise _Refused("it records unrendered requests but no diff verdicts")
    if diff is not None and count > diff:
        raise _Refused(f"its unrendered count {count} is more than its diff verdicts' count {diff}")
    return count


def bundle_files(folder: Path, *, own: Path) -> list[tuple[Path, str]]:
    """The files of the bundles whose manifests lie in ``folder``, but ``own``'s (the manifest of the
    bundle being written, whose files it may replace): each bundle's log, manifest, capture and route
    file, as ``(path, what)`` (``what``: whose, ``bundle r.jsonl's capture``). A file that is no
    manifest dsh-audit wrote (not JSON, no ``"tool": "dsh-audit"``, unreadable) names none.

    Example:
        >>> bundle_files(Path("/nonexistent"), own=Path("/nonexistent/r.jsonl.manifest.json"))
        []
    """
    try:
        names = sorted(os.listdir(folder))
    except (OSError, ValueError):
        return []
    own_real = os.path.realpath(own)
    found: list[tuple[Path, str]] = []
    for name in names:
        log = name[:-len(MANIFEST_SUFFIX)]
        if not name.endswith(MANIFEST_SUFFIX) or not log or os.path.realpath(folder / name) == own_real:
            continue
        try:
            manifest: Any = load_manifest(folder / name)
        except (DshAuditError, ValueError):
            continue
        if not isinstance(manifest, dict) or manifest.get("tool") != "dsh-audit":
            continue
        found += [(folder / log, f"bundle {log}'s log"), (folder / name, f"bundle {log}'s manifest")]
        found += [(folder / manifest[member], f"bundle {log}'s {what}") for member, what in _MEMBERS
                  if isinstance(manifest.get(member), str) and manifest[member] and "\x00" not in manifest[member]]
    return found
