"""A redacted route file loads whenever its original loads, and resolves the same models (session 46).

:func:`dsh_audit.redact.redacted_routes` once wrote a catalog model's whole ``compat`` whenever it
differed from the catalog entry's, so a ``zai`` model given ``supportsStore`` was written back with the
``zaiToolStream`` its catalog entry carries, a switch DSH's gate withholds and the loader refuses. Every
route file of the corpus and of ``tests/data`` that loads (and what DSH loads of the nine it refuses,
:func:`test_routes46.loadable`) is redacted, written as JSON, read back, and resolves to the very models
the original did; so do the cases of a catalog model's ``api`` repointed, with its catalog compat kept
or dropped, and a route's ``timeoutMs`` (the ``x-stainless-timeout`` header), once left out.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dsh_audit.redact._routes import redacted_routes
from dsh_audit.wire import PIAI_CATALOG, PiRoutes, load_routes
from dsh_audit.wire._piai_routes import parse_routes

from test_routes46 import loadable

ORACLE = Path(__file__).parent / "data" / "piai_oracle"
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def _route_files() -> dict[str, PiRoutes]:
    """Every route configuration of ``tests/data`` and the corpus that loads, by name."""
    found: dict[str, PiRoutes] = {}
    for path in sorted(ORACLE.rglob("*.json")):
        config = json.loads(path.read_text("utf-8")).get("routes")
        if config is None:
            continue
        name = str(path.relative_to(ORACLE))
        try:
            found[name] = parse_routes(config)
        except ValueError:  # DSH refuses it (test_routes46.py): what DSH loads of it instead
            found[f"{name} (loadable)"] = parse_routes(loadable(config))
    for path in sorted(CORPUS.rglob("*.yml")):
        routes = load_routes(path, layer=True)
        if routes is not None:
            found[str(path.relative_to(CORPUS))] = routes
    return found


def _again(routes: PiRoutes) -> tuple[dict[str, Any], PiRoutes]:
    """The redacted document of ``routes`` (URLs and header values kept, to compare) and what it loads as,
    through JSON as the bundle's file is written."""
    document = redacted_routes(routes, url=lambda url: url, value=lambda text: text)
    return document, parse_routes(json.loads(json.dumps(document)))


def test_every_route_file_that_loads_loads_redacted_as_the_same_models() -> None:
    files = _route_files()
    assert len(files) == 59 + (2 if CORPUS.is_dir() else 0)
    again = {name: _again(routes)[1] for name, routes in files.items()}
    differ = {name: sorted(key for key in routes.models if again[name].models.get(key) != routes.models[key])
              for name, routes in files.items()}
    assert {name: keys for name, keys in differ.items() if keys} == {}
    assert all(dict(again[name].apis) == dict(routes.apis) for name, routes in files.items())


@pytest.mark.parametrize(("model", "compat"), [
    # the regression: the catalog entry's withheld zaiToolStream stays the catalog's, unwritten
    ({"id": "glm-4.7", "compat": {"supportsStore": True}}, {"supportsStore": True}),
    # a switch set to the catalog entry's value writes nothing
    ({"id": "glm-4.7", "compat": {"thinkingFormat": "zai"}}, None),
    ({"id": "glm-4.7", "contextWindow": 4096}, None),
])
def test_a_catalog_model_writes_only_the_switches_that_differ_from_its_entry(model: dict[str, Any],
                                                                            compat: dict[str, Any] | None) -> None:
    routes = parse_routes({"providers": {"zai": {"models": [model]}}})
    document, again = _again(routes)
    assert document["providers"]["zai"]["models"][0].get("compat") == compat
    assert dict(again.models) == dict(routes.models)
    assert dict(routes.models["zai", "glm-4.7"].compat)["zaiToolStream"] is True


@pytest.mark.parametrize(("fields", "written", "resolved"), [
    # repointed, nothing configured: the catalog entry's compat survives whole (DSH ``...base``), unwritten
    ({}, None, dict(PIAI_CATALOG["zai", "glm-4.7"].compat)),
    # repointed and configured: the entry's compat is dropped, so every configured switch is written,
    # one equal to the entry's value included
    ({"compat": {"supportsDeveloperRole": False, "supportsStrictMode": True}},
     {"supportsDeveloperRole": False, "supportsStrictMode": True},
     {"supportsDeveloperRole": False, "supportsStrictMode": True}),
])
def test_a_repointed_catalog_model_writes_its_compat_so_that_it_resolves_again(
        fields: dict[str, Any], written: dict[str, Any] | None, resolved: dict[str, Any]) -> None:
    # zai's glm-4.7 speaks openai-completions in pi-ai's catalog; the route repoints it to the Responses API
    routes = parse_routes({"providers": {"zai": {"api": "openai-responses", "models": [{"id": "glm-4.7", **fields}]}}})
    model = routes.models["zai", "glm-4.7"]
    assert (model.api, dict(model.compat)) == ("openai-responses", resolved)
    document, again = _again(routes)
    assert document["providers"]["zai"]["api"] == "openai-responses"
    assert document["providers"]["zai"]["models"][0].get("compat") == written
    assert dict(again.models) == dict(routes.models)


def test_a_hand_declared_model_writes_its_whole_compat() -> None:
    routes = parse_routes({"providers": {"local": {
        "api": "openai-completions", "baseURL": "http://127.0.0.1:8080/v1",
        "compat": {"supportsStore": False}, "models": [{"id": "m", "compat": {"thinkingFormat": "qwen"}}]}}})
    document, again = _again(routes)
    assert document["providers"]["local"]["models"][0]["compat"] == {"supportsStore": False, "thinkingFormat": "qwen"}
    assert dict(again.models) == dict(routes.models)


def test_a_route_timeout_is_written_so_that_its_header_renders_again() -> None:
    # timeoutMs changes the x-stainless-timeout header only; the redacted file once left it out
    routes = parse_routes({"providers": {"anthropic": {"timeoutMs": 5000, "cacheRetention": "long"}}})
    document, again = _again(routes)
    assert {k: v for k, v in document["providers"]["anthropic"].items() if k != "models"} == {
        "api": "anthropic-messages", "cacheRetention": "long", "timeoutMs": 5000}
    assert dict(again.models) == dict(routes.models)
    assert again.models["anthropic", "claude-sonnet-4-5"].profile.timeout_ms == 5000
