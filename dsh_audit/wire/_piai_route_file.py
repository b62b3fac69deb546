"""A route file (``--routes FILE``): one YAML file of DSH's ``llm-pi-ai`` route configuration,
or one of DSH's patch layers, read as DSH's YAML reader reads it and resolved by
:func:`~dsh_audit.wire._piai_routes.parse_routes`.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Literal, overload

from ..errors import UsageError
from ._piai_routes import PiRoutes, _Bad, parse_routes
from ._piai_yaml import _read_yaml

__all__ = ["load_routes"]

_FILE_HINT = "give --routes a YAML file with DSH's llm-pi-ai route configuration"


@overload
def load_routes(path: str | os.PathLike[str], *, layer: Literal[False] = False) -> PiRoutes: ...
@overload
def load_routes(path: str | os.PathLike[str], *, layer: Literal[True]) -> PiRoutes | None: ...


def load_routes(path: str | os.PathLike[str], *, layer: bool = False) -> PiRoutes | None:
    """Read a route file (YAML: DSH's config rows, the ``llm-pi-ai`` row's ``config``, or its
    ``providers`` mapping).

    With ``layer``, the file is one of DSH's patch layers (a ``cordis.patch.yml``: a top-level
    list of patch rows, each a mapping, as DSH's app-boot ``parsePatchList`` requires), and None
    when no row of it sets the ``llm-pi-ai`` row's ``config`` (such a layer leaves the route
    configuration as the layers below it made it). ``!!js`` expressions, which DSH's patch dialect
    allows, are read as opaque values: one in the route configuration is refused as a wrong type.

    Raises:
        UsageError: the file cannot be read, is not YAML, or declares a route DSH would refuse;
            the message names the file and the key.

    Example:
        >>> routes = load_routes("inputs/pi-ai-routes.patch.yml")  # doctest: +SKIP
        >>> routes.apis["local-openai"]  # doctest: +SKIP
        'openai-completions'
    """
    name = os.fspath(path)
    data = _read_yaml(name, _FILE_HINT)
    try:
        if layer:
            data = _layer_config(data)
            if data is None:
                return None
        return dataclasses.replace(parse_routes(data), source=name)
    except _Bad as exc:
        raise UsageError(f"route file: {exc}", path=name, hint=exc.hint) from None


def _layer_config(data: Any) -> Any:
    """The ``llm-pi-ai`` row's ``config`` a DSH patch layer sets, None when it sets none. A patch
    row replaces each key it names (the vendored include's ``applyEntryPatches`` assigns
    ``target[key] = value``), so the last row setting ``config`` wins whole."""
    rows = [r for r in _patch_rows(data) if r.get("id") == "llm-pi-ai" and "config" in r]
    return rows[-1]["config"] if rows else None


def _patch_rows(data: Any) -> list[dict[str, Any]]:
    """A patch layer's rows, shaped as DSH's ``parsePatchList`` requires (app-boot ``src/index.ts:320-339``)."""
    if not isinstance(data, list):
        raise _Bad("rows", "a patch layer must be a top-level YAML list of patch rows")
    for index, row in enumerate(data):
        if not isinstance(row, dict):
            raise _Bad(f"rows[{index}]", "must be a mapping (a patch row)")
    return data


def _read_layer(path: str) -> list[dict[str, Any]]:
    """A patch layer's rows, worded as a route file's (``--routes FILE`` overrides every layer)."""
    try:
        return _patch_rows(_read_yaml(path, _FILE_HINT))
    except _Bad as exc:
        raise UsageError(f"route file: {exc}", path=path, hint=exc.hint) from None
