"""The route configuration a log is rendered with: ``--routes``, else the layers of its DSH home."""

from __future__ import annotations

import errno
import hashlib
import os
from functools import lru_cache
from typing import TYPE_CHECKING

from .._lazy import LazyModule
from .._manifest_file import file_name, load_manifest, manifest_of
from .._shell import shell_word
from .._stamp import MISSING, Stamp, file_stamp, file_stamps
from ..errors import DshAuditError
from ..log import open_regular
from ._attachments import dsh_homes_of

if TYPE_CHECKING:
    from .. import wire
    from ..wire import PiRoutes
else:
    wire = LazyModule("dsh_audit.wire")  # loaded for a route file or a log inside a DSH home only

__all__ = ["HOME_PATCH", "PROFILE_ENV", "home_routes_file", "home_routes_key", "routes_from", "routes_hint"]


#: DSH's home-level user patch layer, ``$DSH_HOME/cordis.patch.yml`` (``apps/cli/src/profile-boot.ts``
#: ``homePatchPath``; ``PROFILE_PATCH_FILENAME``, ``packages/boot/app-boot/src/profile.ts``).
HOME_PATCH = "cordis.patch.yml"
#: The environment variable naming the DSH profile the sessions ran under (a CLI ``--profile NAME``
#: would set it for the command, as ``--attachments`` sets its own, so worker processes see it).
PROFILE_ENV = "DSH_AUDIT_PROFILE"
#: The bytes of a home patch layer hashed into an index's options (a route file is read no further).
_HASHED = (1 << 20) + 1


def home_routes_file(log: str | os.PathLike[str]) -> str | None:
    """DSH's home patch layer (``<home>/cordis.patch.yml``) of the DSH home the log at ``log`` sits
    in (:func:`dsh_homes_of`), when there is one; it may hold no route configuration."""
    for home in dsh_homes_of(log):
        try:
            os.stat(home / HOME_PATCH)
        except OSError as exc:
            # DSH skips only a layer that is not there (loadOptionalPatches: ENOENT); any other
            # failure (a symlink loop, no permission) is this file's error, reported when it is read
            if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                continue
        return str(home / HOME_PATCH)
    return None


def routes_hint(log: str | os.PathLike[str], hint: str) -> str:
    """A render refusal's ``hint`` that asks for ``--routes FILE`` (a route the log does not
    describe), with where the route configuration is when no ``--routes`` is given: a redacted
    bundle's own route file beside it (which its manifest names: :func:`_bundle_route_file`; no view
    reads it by itself), else the patch layer of the DSH home the log was recorded in
    (``<home>/cordis.patch.yml``, named when the log sits in one). A route profile header's refusal
    (its hint names :data:`dsh_audit.wire.ROUTE_HEADER_FILE`) has a header to fix, not a route to declare:
    its hint names the layers of the DSH home it is in instead (:func:`_header_hint`). Any other hint is
    left as it is. Every view that renders (``render``, ``diff``, ``check``) says it so, when it was not
    given ``--routes``.

    Example:
        >>> routes_hint("rec/sessions/p/s/session.jsonl", "pass --routes FILE (the route configuration)")
        'pass --routes FILE (the route configuration), or declare the route in rec/cordis.patch.yml (the patch layer of the DSH home the log was recorded in, read when no --routes is given)'
        >>> routes_hint("logs/session.jsonl", "pass --routes FILE (the route configuration)")
        'pass --routes FILE (the route configuration), or record the log in a DSH home (<home>/sessions/...) and declare the route in <home>/cordis.patch.yml, read when no --routes is given'
    """
    if "--routes FILE" not in hint:
        return hint
    if wire.ROUTE_HEADER_FILE in hint:  # a header to fix where it is, not a route to declare
        return _header_hint(log, hint)
    bundled = _bundle_route_file(log)
    if bundled is not None:
        return (hint.replace("--routes FILE", f"--routes {shell_word(bundled)}")
                + ", the redacted route file of this bundle (its manifest names it)")
    homes = dsh_homes_of(log)
    if not homes:
        return (f"{hint}, or record the log in a DSH home (<home>/sessions/...) and declare the route in "
                f"<home>/{HOME_PATCH}, read when no --routes is given")
    layer = _as_log(log, os.path.join(homes[0], HOME_PATCH))
    return (f"{hint}, or declare the route in {layer} (the patch layer of the DSH home the log was recorded "
            "in, read when no --routes is given)")


def _header_hint(log: str | os.PathLike[str], hint: str) -> str:
    """The hint of a route profile header's refusal of the log at ``log`` rendered with no ``--routes``:
    the header is in the layers of the DSH home the log sits in (:func:`routes_from`, the only route
    configuration read then), which it names in place of :data:`dsh_audit.wire.ROUTE_HEADER_FILE`; the
    hint as it is when they cannot be read again (their error is the view's own) or there are none.

    Example:
        >>> _header_hint("logs/session.jsonl", "fix the header in the file given as --routes FILE")
        'fix the header in the file given as --routes FILE'
    """
    try:
        config = routes_from(None, log=log)
    except DshAuditError:
        return hint
    if config is None or not config.layers:
        return hint
    layers = " + ".join(_as_log(log, layer) for layer in config.layers)
    return hint.replace(wire.ROUTE_HEADER_FILE, f"{layers}, the route configuration of the log's DSH home")


def _as_log(log: str | os.PathLike[str], path: str) -> str:
    """``path`` (absolute) as the log is given: relative to the working folder when ``log`` is."""
    return path if os.path.isabs(log) else os.path.relpath(path)


def _bundle_route_file(log: str | os.PathLike[str]) -> str | None:
    """The route file beside ``log`` that its redaction manifest (``<log>.manifest.json``, which
    ``dsh-audit redact`` writes) names, as a path beside ``log`` as given; None when the log is no
    redacted bundle that carries one (a name with a folder in it is someone else's manifest) or
    that file is not there (a bundle copied without it: the DSH home's hint is the useful one).

    The manifest is read once while it stays the same (:func:`_remembered_route_name`, the one cache
    of the hint, which ``render``, ``diff`` and ``check`` all ask for once a row), but for one written
    in the last 2 s (:func:`~dsh_audit._stamp.file_stamp`: a same-size edit could keep its stamp),
    read on every call; a log with none costs a stat (:data:`~dsh_audit._stamp.MISSING`), which sees
    one made later. Whether the route file is there is looked at on every call, as a file that
    appears later is named then."""
    log = os.fspath(log)
    manifest = manifest_of(log)
    stamp = file_stamp(manifest, missing=True)
    if stamp == MISSING:
        return None  # no bundle: nothing to read (review 41: opening it once a row cost 3 times the stat)
    # no stamp: one that cannot be looked at (reading it fails too), or written too recently to remember
    name = _manifest_route_name(manifest) if stamp is None else _remembered_route_name(manifest, stamp)
    if name is None:
        return None
    path = os.path.join(os.path.dirname(log), name)
    return path if os.path.isfile(path) else None


@lru_cache(maxsize=64)
def _remembered_route_name(manifest: str, _stamp: Stamp) -> str | None:
    """:func:`_manifest_route_name` of one version of the manifest (``_stamp``: the key only), so
    that an edited or new manifest is read again."""
    return _manifest_route_name(manifest)


def _manifest_route_name(manifest: str) -> str | None:
    """The route file name the redaction manifest at ``manifest`` names, when it is dsh-audit's and
    names a file beside it (as redact checks a name: :func:`~dsh_audit._manifest_file.file_name`)."""
    try:
        found = load_manifest(manifest)
        if not isinstance(found, dict) or found.get("tool") != "dsh-audit":
            return None  # someone else's file
        name = file_name(found.get("route_file"))
    except (DshAuditError, ValueError):
        return None
    if not isinstance(name, str) or name in ("", ".", "..") or any(c in name for c in "/\\"):
        return None  # a name beside the log only (file_name refused a NUL): the manifest comes from someone else
    return name


def home_routes_key(log: str | os.PathLike[str]) -> str | None:
    """A short hash of the text of the log's home patch layer (:func:`home_routes_file`), which an
    index keeps with the log's row so that an edit of it re-audits the log; None without one."""
    digest = hashlib.sha256(os.environ.get(PROFILE_ENV, "").strip().encode("utf-8", "surrogatepass") + b"\0")
    profile = os.environ.get(PROFILE_ENV, "").strip() or None
    files = [path for home in dsh_homes_of(log) for path in wire.home_route_files(home, profile=profile)]
    if not files:
        return None
    for path in files:
        digest.update(path.encode("utf-8", "surrogatepass") + b"\0")
        try:
            with open_regular(path, what="route file") as handle:
                digest.update(handle.read(_HASHED))
        except (OSError, DshAuditError):  # reading it for the audit reports why
            digest.update(b"unreadable")
    return "home:" + digest.hexdigest()[:16]


def routes_from(path: str | None, *, log: str | os.PathLike[str] | None = None,
                profile: str | None = None) -> PiRoutes | None:
    """The route configuration at ``path`` (``--routes``; read once per process); without one, the
    one DSH composed under the DSH home the log at ``log`` sits in (:func:`dsh_audit.wire.load_home_routes`:
    the profile's patch layer, the home's, then the settings document's ``llm-pi-ai`` section),
    ``profile`` naming the profile the session ran under (the log does not record it); else None.
    Re-read when one of those files changes (:func:`dsh_audit.wire.home_route_files`).

    Raises:
        UsageError: a file cannot be read or declares a route DSH would refuse.
    """
    if path is not None:
        return _route_file(path)
    if profile is None:
        profile = os.environ.get(PROFILE_ENV, "").strip() or None  # --profile sets it for the command
    for home in dsh_homes_of(log) if log is not None else ():
        files = wire.home_route_files(home, profile=profile)
        if files or (profile is None and wire.home_profiles(home)):  # too many profiles to read: say so
            stamps = file_stamps(files)
            if stamps is None:  # a layer gone or written too recently to remember: read now
                return wire.load_home_routes(home, profile=profile)
            return _home_routes(os.fspath(home), profile, tuple(zip(files, stamps)))
        if profile is not None:  # no layer to read: a profile the home does not have is refused all the same
            wire.load_home_routes(home, profile=profile)
    return None


@lru_cache(maxsize=8)
def _home_routes(home: str, profile: str | None, files: tuple[tuple[str, Stamp], ...]) -> PiRoutes | None:
    """:func:`dsh_audit.wire.load_home_routes` of one version of the layers ``files`` (the key only)."""
    return wire.load_home_routes(home, profile=profile)


@lru_cache(maxsize=8)
def _route_file(path: str) -> PiRoutes:
    return wire.load_routes(path)
