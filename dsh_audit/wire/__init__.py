"""Rendering requests to the exact bytes each DSH adapter sends.

Each adapter's renderer lives in its own module and registers a factory in :data:`ADAPTERS`
(``deepseek`` here; ``anthropic``, ``openai`` and ``responses`` when their modules are installed).

Example:
    >>> import dsh_audit
    >>> from dsh_audit.wire import render_all
    >>> log = dsh_audit.load("session.jsonl")  # doctest: +SKIP
    >>> for wire in render_all(r for r in dsh_audit.requests(log) if r.kind == "loop"):  # doctest: +SKIP
    ...     print(len(wire.body))
"""

from __future__ import annotations

import importlib

from ._anthropic_oauth import key_type_conflict, key_type_of
from ._deepseek import DEFAULT_HARNESS_VERSION, DEFAULT_MAX_REQUEST_IMAGE_BYTES, DeepSeekRenderer, PromptPieces, utf8_size
from ._images import OFFLOADED_IMAGE_TEXT, images_in_body
from ._markers import fold_text_block, without_cache_markers
from ._piai_catalog import BUILTIN_MODELS, PIAI_CATALOG, catalog_api
from ._piai_facts import RouteProfile
from ._piai_home import check_profile, home_profiles, home_route_files, load_home_routes
from ._piai_models import ROUTE_HEADER_FILE
from ._piai_route_file import load_routes
from ._piai_routes import PiRoutes
from ._registry import ADAPTERS, make_renderer, register
from ._render import render, render_all
from ._types import Renderer, WireRequest

for _name in ("_anthropic", "_openai", "_responses"):
    try:
        importlib.import_module(f"{__name__}.{_name}")
    except ModuleNotFoundError as _exc:
        if _exc.name != f"{__name__}.{_name}":
            raise

__all__ = [
    "ADAPTERS",
    "BUILTIN_MODELS",
    "DEFAULT_HARNESS_VERSION",
    "DEFAULT_MAX_REQUEST_IMAGE_BYTES",
    "DeepSeekRenderer",
    "OFFLOADED_IMAGE_TEXT",
    "PIAI_CATALOG",
    "PiRoutes",
    "PromptPieces",
    "ROUTE_HEADER_FILE",
    "Renderer",
    "RouteProfile",
    "WireRequest",
    "catalog_api",
    "check_profile",
    "fold_text_block",
    "home_profiles",
    "home_route_files",
    "images_in_body",
    "key_type_conflict",
    "key_type_of",
    "load_home_routes",
    "load_routes",
    "make_renderer",
    "register",
    "render",
    "render_all",
    "utf8_size",
    "without_cache_markers",
]
