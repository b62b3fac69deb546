"""The ``llm-pi-ai`` route configuration DSH composes under its home: a profile's patch layer,
the home's, the settings document's section (:func:`load_home_routes`).
"""

from __future__ import annotations

import dataclasses
import errno
import json
import os
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from .._json import refuse_constant
from ..errors import UnreadableError, UsageError
from ..log import open_regular
from ._piai_js import js_truthy
from ._piai_route_file import _read_layer
from ._piai_routes import PiRoutes, _Bad, parse_routes
from ._piai_yaml import _SHORT, MAX_ROUTE_FILE, _js_number, _read_yaml

__all__ = ["MAX_COMPARED_PROFILES", "PATCH_FILE", "PROFILES_DIR", "PROFILE_HINT", "SETTINGS_FILE", "check_profile",
           "home_profiles", "home_route_files", "load_home_routes"]

# --- the layers DSH composes under its home ----------------------------------------------------
#
# DSH composes a profile's tree as patch layers over an empty entry list (``apps/cli/src/
# profile-boot.ts:122-151``): the bundles' layers (shipped with DSH: dsh-base mounts the llm-pi-ai
# row with no routes, ``packages/bundle/base/cordis.patch.yml:88-96``), the profile's own
# ``<home>/profiles/<name>/cordis.patch.yml`` (read when it exists, app-boot ``src/profile.ts:398-401``),
# the home's ``<home>/cordis.patch.yml`` (absent only when not there, app-boot ``src/index.ts:278-287``),
# then the launch's ``--patch`` overlays, which no file records. A patch replaces each key it names,
# ``config`` whole (vendored include ``src/index.ts:121-124``). The llm-pi-ai plugin then lays the
# ``llm-pi-ai`` section of the settings document (``<home>/settings.yaml``, what the web Models page
# writes) over that config (``llm-pi-ai/src/index.ts:284``, ``settings/src/index.ts:863-874``): plain
# objects merge key by key, anything else (a list included) replaces (``settings/src/index.ts:297-305``).

#: DSH's patch layer file, a profile's own and the home's (``PROFILE_PATCH_FILENAME``, app-boot
#: ``src/profile.ts:39``; ``homePatchPath``, ``apps/cli/src/profile-boot.ts:49-51``).
PATCH_FILE = "cordis.patch.yml"
#: DSH's settings document under its home (settings-file ``src/index.ts:56``).
SETTINGS_FILE = "settings.yaml"
#: The folder of a DSH home holding its profiles (``PROFILES_DIR``, app-boot ``src/profile.ts:36``).
PROFILES_DIR = "profiles"
#: What settles the profile a session ran under: its log does not record it (the header holds
#: version, id, createdAt, cwd, parentSession, seedLength, origin, delegationDepth, agentPreset:
#: ``session-persistence-jsonl/src/format.ts:51-64``), and DSH takes it per launch (``dsh --profile
#: NAME``, ``dsh web``: ``apps/cli/src/args.ts:131-144, 156-169``).
PROFILE_HINT = ("name the DSH profile the session ran under (its dsh --profile NAME) with --profile NAME "
                "(or $DSH_AUDIT_PROFILE)")
#: The most profiles with a patch layer that :func:`load_home_routes` parses to learn whether they
#: all compose alike when no profile is named; a home with more is not compared (a layer may be up
#: to :data:`~dsh_audit.wire._piai_yaml.MAX_ROUTE_FILE`, and every command composing the home
#: would parse them all): a note says the profile is not known, and the home's own layers only are read.
MAX_COMPARED_PROFILES = 16
#: The rows the route configuration depends on, and the plugin dsh-base mounts in each.
_ROWS = {"llm-pi-ai": "@deepseek-ai/dsh-llm-pi-ai", "settings": "@deepseek-ai/dsh-settings-file"}
_UNSET: Any = object()


@dataclass
class _Row:
    """A row of DSH's composed tree, as far as the route configuration depends on it."""

    name: Any
    config: Any = _UNSET
    disabled: Any = None
    source: str | None = None  # the layer that set its config


def _fresh_rows() -> dict[str, _Row]:
    return {row_id: _Row(name) for row_id, name in _ROWS.items()}


def _inserted(rows: dict[str, _Row], entries: list[Any], source: str) -> None:
    """Rows an ``insert`` adds: one of an id tracked becomes the row its later patches target (the
    include indexes what it inserts, group rows' children too)."""
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        if isinstance(entry.get("id"), str) and entry["id"] in _ROWS:
            rows[entry["id"]] = _Row(entry.get("name"), entry.get("config", _UNSET), entry.get("disabled"),
                                     source if "config" in entry else None)
        if js_truthy(entry.get("group")) and isinstance(entry.get("config"), list):
            _inserted(rows, entry["config"], source)


def _apply_patches(rows: dict[str, _Row], patches: list[dict[str, Any]], source: str) -> None:
    """One layer's patch rows applied as the vendored include's ``applyEntryPatches`` applies them
    (``src/index.ts:77-125``): an ``insert`` adds rows, a patch whose ``name`` is not its row's
    plugin is skipped, and each other key a patch names replaces the row's."""
    for patch in patches:
        insert = patch.get("insert")
        if js_truthy(insert):
            if isinstance(insert, list):
                _inserted(rows, insert, source)
            continue
        row_id = patch.get("id")
        row = rows.get(row_id) if isinstance(row_id, str) else None
        if row is None or (js_truthy(patch.get("name")) and patch.get("name") != row.name):
            continue
        if "config" in patch:
            row.config, row.source = patch["config"], source
        if "disabled" in patch:
            row.disabled = patch["disabled"]


def _present(path: str) -> bool:
    """Whether DSH reads the file at ``path`` as a layer: it is skipped only when not there (a file
    that cannot be looked at is read, and its error reported)."""
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno not in (errno.ENOENT, errno.ENOTDIR)
    except ValueError:  # a NUL byte: no such file
        return False
    return True


def home_profiles(home: str | os.PathLike[str]) -> list[str]:
    """The profiles of the DSH home ``home``: the folders under ``<home>/profiles`` holding a
    ``package.json`` (what DSH loads as a profile, app-boot ``src/profile.ts:375-385``), DSH's
    ``node_modules`` fallback excepted; sorted."""
    folder = os.path.join(os.fspath(home), PROFILES_DIR)
    try:
        names = sorted(os.listdir(folder))
    except (OSError, ValueError):
        return []
    return [name for name in names
            if name != "node_modules" and os.path.isfile(os.path.join(folder, name, "package.json"))]


#: The profiles DSH creates on first use from a shipped template when they are not there (app-boot
#: ``src/profile.ts`` ``PROFILE_TEMPLATES``), their patch layer an empty list: naming one that is
#: absent is no mistake, and it composes the home's own layers.
_PROFILE_TEMPLATES = frozenset({"web", "headless"})


def check_profile(name: str) -> None:
    """DSH's ``resolveProfileDir`` refusals (app-boot ``src/profile.ts:104-111``)."""
    if name in ("", ".", "..", "node_modules") or "/" in name or "\\" in name or "\0" in name:
        raise UsageError(f"invalid DSH profile name {_SHORT.repr(name)}", hint=PROFILE_HINT)


def home_route_files(home: str | os.PathLike[str], *, profile: str | None = None) -> list[str]:
    """The files under the DSH home ``home`` that :func:`load_home_routes` reads with ``profile``,
    that are there (what an index hashes to notice an edit): the profile's patch layer (without one named: each profile's, unless more than
    :data:`MAX_COMPARED_PROFILES` have one, as then none is read), the home's, the settings document.

    Example:
        >>> home_route_files("/home/me/.dsh", profile="web")  # doctest: +SKIP
        ['/home/me/.dsh/profiles/web/cordis.patch.yml', '/home/me/.dsh/cordis.patch.yml']
    """
    base = os.fspath(home)
    if profile is not None:
        try:
            check_profile(profile)
        except UsageError:  # load_home_routes refuses it, reading nothing
            return []
        layered = _layered(base, [profile])
    else:
        layered = _layered(base, home_profiles(base))
        layered = layered if len(layered) <= MAX_COMPARED_PROFILES else []
    return layered + _home_files(base)


def _layered(home: str, profiles: list[str]) -> list[str]:
    """The patch layers of ``profiles`` that are there (DSH: ``existsSync``, then read)."""
    found = [os.path.join(home, PROFILES_DIR, name, PATCH_FILE) for name in profiles]
    return [path for path in found if os.path.exists(path)]


def _home_files(home: str) -> list[str]:
    return [path for path in (os.path.join(home, PATCH_FILE), os.path.join(home, SETTINGS_FILE)) if _present(path)]


def _composed(home: str, profile: str | None, home_patches: list[dict[str, Any]] | None) -> dict[str, _Row]:
    rows = _fresh_rows()
    if profile is not None:
        path = os.path.join(home, PROFILES_DIR, profile, PATCH_FILE)
        if os.path.exists(path):  # DSH: existsSync, then read
            _apply_patches(rows, _read_layer(path), path)
    if home_patches is not None:
        _apply_patches(rows, home_patches, os.path.join(home, PATCH_FILE))
    return rows


def _settled(rows: dict[str, _Row]) -> tuple[Any, ...]:
    return tuple((row.config, row.disabled) for row in rows.values())


def _alike(a: Any, b: Any, seen: set[tuple[int, int]] | None = None) -> bool:
    """``a == b`` for parsed YAML values, which aliases may make share or hold themselves (``&r
    {self: *r}``, which DSH's YAML readers read too): each pair of containers is compared once, and a
    pair met again inside itself is alike, so an alias bomb in two layers costs its text, not 9**9
    comparisons, and a value that holds itself is no RecursionError."""
    if a is b:
        return True
    if type(a) is not type(b) or not isinstance(a, (dict, list, tuple)):
        return bool(a == b)
    seen = set() if seen is None else seen
    pair = (id(a), id(b))
    if pair in seen:
        return True
    seen.add(pair)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_alike(value, b[key], seen) for key, value in a.items())
    return len(a) == len(b) and all(_alike(x, y, seen) for x, y in zip(a, b))


def _profile_rows(home: str, profile: str | None, home_patches: list[dict[str, Any]] | None,
                  notes: list[str]) -> dict[str, _Row]:
    """The rows DSH composed for the profile ``profile``; without one, for the home's only profile,
    or the one every profile composes; else the home layer's alone, with a note saying so."""
    if profile is not None:
        check_profile(profile)
        if profile not in _PROFILE_TEMPLATES and not os.path.isfile(os.path.join(home, PROFILES_DIR, profile,
                                                                                   "package.json")):
            known = home_profiles(home)  # DSH: "profile ... does not exist" (app-boot src/profile.ts:376-384)
            shown = ", ".join(known[:12]) + (f", ... ({len(known)} in all)" if len(known) > 12 else "")
            folder = os.path.join(home, PROFILES_DIR, profile)
            why = (f"{folder} is not a DSH profile: a profile is a folder with a package.json, and this one has "
                   "none; ") if os.path.isdir(folder) else ""
            raise UsageError(f"DSH profile {profile!r} does not exist in this DSH home", path=home,
                             hint=why + (f"its profiles: {shown}" if known else
                                         ("the home has none" if why else "it has none")
                                         + ": leave out --profile and $DSH_AUDIT_PROFILE"))
        return _composed(home, profile, home_patches)
    profiles = home_profiles(home)
    if not profiles:
        return _composed(home, None, home_patches)
    layered = [name for name in profiles if _layered(home, [name])]
    if len(layered) > MAX_COMPARED_PROFILES:  # too many to parse for every command (home_route_files alike)
        notes.append(f"DSH home {home} has {len(layered)} profiles with a patch layer, more than the "
                     f"{MAX_COMPARED_PROFILES} compared, and the log does not record which one ran: the profile "
                     "is not known and the home's own layers only are read; " + PROFILE_HINT)
        return _composed(home, None, home_patches)
    candidates, unreadable = [], []
    if len(layered) < len(profiles):  # a profile without a layer composes the home's layers alone
        candidates.append(_composed(home, None, home_patches))
    for name in layered:
        try:
            candidates.append(_composed(home, name, home_patches))
        except UsageError:
            unreadable.append(name)
    if not unreadable and all(_alike(_settled(rows), _settled(candidates[0])) for rows in candidates):
        return candidates[0]  # one profile, or every profile composes the same rows
    named = ", ".join(profiles[:MAX_COMPARED_PROFILES]) + (f", ... ({len(profiles)} in all)"
                                                           if len(profiles) > MAX_COMPARED_PROFILES else "")
    notes.append(f"the profiles of DSH home {home} ({named}) compose different llm-pi-ai routes "
                 "and the log does not record which one ran: the home's own layers only are read; " + PROFILE_HINT)
    return _composed(home, None, home_patches)


def _settings_path(home: str, row: _Row, notes: list[str]) -> str | None:
    """The settings document DSH read (settings-file ``resolveSpec``, ``src/index.ts:55-60``):
    ``<home>/settings.yaml`` unless the ``settings`` row names another; None when the row is
    disabled or names one that cannot be told from here (a relative path, an expression)."""
    if js_truthy(row.disabled):
        return None
    config = row.config if isinstance(row.config, dict) else {}
    for key, tail in (("path", None), ("dshHome", SETTINGS_FILE)):
        value = config.get(key)
        if value is None:
            continue
        if isinstance(value, str) and os.path.isabs(value):
            return value if tail is None else os.path.join(value, tail)
        notes.append(f"DSH's settings document is placed by the settings row's config.{key} {_SHORT.repr(value)} "
                     f"({row.source}), which does not say where from here: its llm-pi-ai section is not read")
        return None
    return os.path.join(home, SETTINGS_FILE)


def _json_int(text: str) -> int | float:
    """``JSON.parse``'s number for an integer literal: the nearest double, at any length (Python's
    ``int`` refuses more than 4,300 digits; ``1`` and 400 zeros is Infinity)."""
    return _js_number(float(text))


def _settings_section(path: str) -> Any:
    """The ``llm-pi-ai`` section of the settings document at ``path`` (``_UNSET`` when it has none),
    read as settings-file reads it (``src/index.ts:170-181, 272-295``)."""
    hint = "see DSH's settings document: a map of namespace sections, llm-pi-ai: {providers: ...}"
    if path.endswith(".json"):  # JSON.parse: a key named twice is its last value
        try:
            with open_regular(path, what="settings file") as handle:
                raw = handle.read(MAX_ROUTE_FILE + 1)
            if len(raw) > MAX_ROUTE_FILE:
                raise ValueError(f"larger than {MAX_ROUTE_FILE >> 20} MiB")
            text = raw.decode("utf-8")
            document = json.loads(text, parse_int=_json_int, parse_constant=refuse_constant) if text.strip() else {}
        except (OSError, UnreadableError, ValueError, RecursionError) as exc:
            reason = exc.message if isinstance(exc, UnreadableError) else \
                "it nests objects or arrays too deeply" if isinstance(exc, RecursionError) else str(exc).splitlines()[0]
            raise UsageError(f"cannot read the settings file as JSON: {_SHORT.repr(reason)}", path=path,
                             hint=hint) from None
    elif path.endswith((".yaml", ".yml")):
        document = _read_yaml(path, hint, what="settings file", dialect="yaml")
        document = {} if document is None else document
    else:
        raise UsageError("settings file is neither .yaml, .yml nor .json, which DSH refuses", path=path, hint=hint)
    if not isinstance(document, dict):
        raise UsageError("settings file must be a map of namespace sections", path=path, hint=hint)
    section = document.get("llm-pi-ai")
    return _UNSET if section is None else section


def _merge_layers(under: Any, over: Any, done: dict[tuple[int, int], Any] | None = None) -> Any:
    """DSH settings' ``mergeLayers``: plain objects merge key by key, anything else replaces.

    Two YAML documents that alias one mapping under many keys (an alias bomb in each) would meet
    the same pair of mappings exponentially often: each pair is merged once (``done``) and its
    result shared, as the aliases share their mappings."""
    if not isinstance(under, dict) or not isinstance(over, dict):
        return over
    done = {} if done is None else done
    pair = (id(under), id(over))
    if pair in done:
        return done[pair]
    merged = done[pair] = dict(under)
    for key, value in over.items():
        merged[key] = _merge_layers(merged[key], value, done) if key in merged else value
    return merged


def load_home_routes(home: str | os.PathLike[str], *, profile: str | None = None) -> PiRoutes | None:
    """The ``llm-pi-ai`` route configuration DSH composed under the DSH home ``home``, from the
    layers DSH reads there, in its order and with its merge rules (see the comment above
    :data:`PATCH_FILE`): the profile's patch layer, the home's, then the settings document's
    ``llm-pi-ai`` section. ``profile`` names the profile (the log does not record it); without
    one, the home's only profile is the one, else the one every profile composes alike; when the
    profiles compose different routes, or more than :data:`MAX_COMPARED_PROFILES` of them have a
    patch layer (they are then not parsed), only the home's own layers are read and
    :attr:`PiRoutes.notes` says so. None when no layer sets a route configuration (and nothing
    is left unsettled). ``--patch`` overlays (per launch, recorded nowhere) are not read. Each
    file is parsed once while it is unchanged (:class:`~dsh_audit.wire._piai_yaml._Memo`).

    Raises:
        UsageError: a layer that DSH reads cannot be read, is not YAML (a key named twice
            included), or composes a route DSH would refuse; the message names the file.

    Example:
        >>> routes = load_home_routes("~/.dsh", profile="web")  # doctest: +SKIP
        >>> routes.layers  # doctest: +SKIP
        ('/home/me/.dsh/cordis.patch.yml', '/home/me/.dsh/settings.yaml')
    """
    base, notes = os.fspath(home), list[str]()
    home_layer = os.path.join(base, PATCH_FILE)
    home_patches = _read_layer(home_layer) if _present(home_layer) else None
    rows = _profile_rows(base, profile, home_patches, notes)
    settings = _settings_path(base, rows["settings"], notes)
    section = _settings_section(settings) if settings is not None and _present(settings) else _UNSET
    row = rows["llm-pi-ai"]
    layers = tuple(path for path, used in ((row.source, row.config is not _UNSET), (settings, section is not _UNSET))
                   if used and path is not None)
    if row.config is _UNSET and section is _UNSET:
        return PiRoutes(MappingProxyType({}), MappingProxyType({}), notes=tuple(notes)) if notes else None
    config = row.config if section is _UNSET else _merge_layers(None if row.config is _UNSET else row.config, section)
    try:
        routes = parse_routes(config)
    except _Bad as exc:
        where = " + ".join(layers)
        raise UsageError(f"route configuration composed from {where}: {exc}" if len(layers) > 1
                         else f"route configuration: {exc}", path=layers[-1] if layers else base,
                         hint=exc.hint) from None
    return dataclasses.replace(routes, source=layers[-1] if layers else "", layers=layers,
                               notes=(*notes, *routes.notes))
