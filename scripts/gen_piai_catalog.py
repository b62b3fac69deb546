"""Regenerate ``dsh_audit/wire/piai_catalog.json``: pi-ai's built-in model catalog, as data.

Dev-only; the project never runs it. It reads the published npm tarball of pi-ai (no Node, no
code from it is run), checks it against npm's published integrity, and writes the facts a pi-ai
rendering reads about every built-in provider and model:

- ``package/package.json``: the package name and version, checked against the pins below;
- ``package/dist/providers/data/*.json``: every model, grouped by API, as pi-ai ships it (the
  ``*.models.js`` modules flatten these groups into one object per provider,
  ``dist/model-catalog.js`` ``flattenModelCatalog``; a later group's id wins, as ``Object.assign``);
- ``package/dist/providers/data/.manifest.json``: the catalog's ``generatedAt``;
- ``package/dist/providers/<provider>.js``: the provider's own ``baseUrl`` (the literal given to
  ``createProvider``), which DSH's ``resolveRouteModels`` falls back to for a model its route lists
  without a ``baseURL`` (``llm-pi-ai/src/catalog.ts``: ``request.baseURL ?? base?.baseUrl ??
  providerBaseUrl``). A provider whose factory names none (Bedrock, Azure, Vertex, Cloudflare,
  OpenCode) has ``null``.

Per model it keeps ``api``, ``baseUrl``, ``reasoning``, ``input``, ``contextWindow``,
``maxTokens`` and, when the entry has them, ``thinkingLevelMap``, ``compat`` and ``headers``; it
drops ``id``, ``provider`` (the keys say them), ``name`` and ``cost`` (no request carries them).

Usage::

    python scripts/gen_piai_catalog.py                 # download the pinned tarball from npm
    python scripts/gen_piai_catalog.py --tarball FILE  # a local copy of the same tarball
    python scripts/gen_piai_catalog.py --check         # exit 1 when the packaged file differs
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import re
import sys
import tarfile
import urllib.request
from pathlib import Path
from typing import Any

PACKAGE = "@earendil-works/pi-ai"
VERSION = "0.82.1"
TARBALL = "https://registry.npmjs.org/@earendil-works/pi-ai/-/pi-ai-0.82.1.tgz"
#: ``dist.integrity`` of https://registry.npmjs.org/@earendil-works/pi-ai/0.82.1
INTEGRITY = "sha512-3WFYRhEp3lQB3444EhPMBcM7zSaEUE3eJgHOR7s4081NLqbw/FsWilIKWXSua0Gv3sRr7m9xMidR3pPDE7jI/A=="
OUT = Path(__file__).resolve().parent.parent / "dsh_audit" / "wire" / "piai_catalog.json"
DATA = "package/dist/providers/data/"
KEPT = ("api", "baseUrl", "reasoning", "input", "contextWindow", "maxTokens", "thinkingLevelMap", "compat", "headers")
DROPPED = frozenset({"id", "name", "provider", "cost"})
_FACTORY = re.compile(r'createProvider\(\{\s*id:\s*"(?P<id>[^"]+)",.*?\n    \}\);', re.S)
_BASE_URL = re.compile(r'^        baseUrl: "(?P<url>[^"]+)",$', re.M)


def _tarball(source: str | None) -> bytes:
    if source is None:
        with urllib.request.urlopen(TARBALL) as response:  # noqa: S310 - the pinned https URL
            data: bytes = response.read()
    else:
        data = Path(source).read_bytes()
    digest = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
    if digest != INTEGRITY:
        sys.exit(f"the tarball is not {PACKAGE}@{VERSION} as npm publishes it ({digest})")
    return data


def _members(data: bytes) -> dict[str, bytes]:
    out = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for member in tar.getmembers():
            if member.isfile() and (member.name == "package/package.json" or member.name.startswith(
                    (DATA, "package/dist/providers/")) and member.name.endswith((".json", ".js"))):
                handle = tar.extractfile(member)
                assert handle is not None
                out[member.name] = handle.read()
    return out


def _provider_base_url(source: str, provider: str) -> str | None:
    """The ``baseUrl`` literal the provider's factory passes to ``createProvider``; None if none."""
    for factory in _FACTORY.finditer(source):
        if factory.group("id") == provider:
            found = _BASE_URL.search(factory.group(0))
            return found.group("url") if found else None
    raise SystemExit(f"dist/providers/{provider}.js: no createProvider call with id {provider!r}")


def _model(provider: str, model_id: str, api: str, entry: dict[str, Any]) -> dict[str, Any]:
    unknown = set(entry) - set(KEPT) - DROPPED
    if unknown:
        raise SystemExit(f"{provider}/{model_id}: unknown model fields {sorted(unknown)}; decide whether a "
                         "request reads them before regenerating")
    if (entry["id"], entry["provider"], entry["api"]) != (model_id, provider, api):
        raise SystemExit(f"{provider}/{model_id}: its id, provider or api disagrees with where pi-ai files it")
    return {key: entry[key] for key in KEPT if key in entry}


def build(members: dict[str, bytes]) -> dict[str, Any]:
    package = json.loads(members["package/package.json"])
    if (package["name"], package["version"]) != (PACKAGE, VERSION):
        raise SystemExit(f"the tarball holds {package['name']}@{package['version']}, not {PACKAGE}@{VERSION}")
    manifest = json.loads(members[DATA + ".manifest.json"])
    providers: dict[str, Any] = {}
    files = sorted(name for name in members if name.startswith(DATA) and name.endswith(".json")
                   and not name.endswith("/.manifest.json"))
    for name in files:
        provider = name[len(DATA):-len(".json")]
        factory = members[f"package/dist/providers/{provider}.js"].decode("utf-8")
        models: dict[str, Any] = {}
        for api, group in json.loads(members[name]).items():
            for model_id, entry in group.items():
                models.pop(model_id, None)  # Object.assign: the later group's entry, in its place
                models[model_id] = _model(provider, model_id, api, entry)
        providers[provider] = {"baseUrl": _provider_base_url(factory, provider), "models": models}
    return {
        "source": {"package": PACKAGE, "version": VERSION, "tarball": TARBALL, "integrity": INTEGRITY,
                   "catalogGeneratedAt": manifest["generatedAt"],
                   "files": ["package/package.json", DATA + ".manifest.json", DATA + "<provider>.json",
                             "package/dist/providers/<provider>.js (createProvider baseUrl)"],
                   "kept": list(KEPT), "generator": "scripts/gen_piai_catalog.py"},
        "providers": providers,
    }


def render(catalog: dict[str, Any]) -> str:
    """The file's text: one model a line, so a catalog update reads as a line diff."""
    dumps = json.dumps
    lines = ["{", f'"source": {dumps(catalog["source"], ensure_ascii=False)},', '"providers": {']
    providers = list(catalog["providers"].items())
    for p_index, (provider, facts) in enumerate(providers):
        lines.append(f'{dumps(provider)}: {{"baseUrl": {dumps(facts["baseUrl"])}, "models": {{')
        models = list(facts["models"].items())
        for m_index, (model_id, model) in enumerate(models):
            comma = "," if m_index < len(models) - 1 else ""
            lines.append(f"  {dumps(model_id, ensure_ascii=False)}: {dumps(model, ensure_ascii=False)}{comma}")
        lines.append("}}" + ("," if p_index < len(providers) - 1 else ""))
    lines += ["}", "}"]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tarball", help=f"a local copy of {TARBALL}")
    parser.add_argument("--check", action="store_true", help="compare with the packaged file instead of writing it")
    args = parser.parse_args()
    text = render(build(_members(_tarball(args.tarball))))
    if json.loads(text) is None:  # the text must parse back
        return 1
    if args.check:
        same = OUT.is_file() and OUT.read_text("utf-8") == text
        print(f"{OUT}: {'up to date' if same else 'differs from the tarball'}")
        return 0 if same else 1
    OUT.write_text(text, "utf-8")
    print(f"wrote {OUT} ({sum(len(p['models']) for p in json.loads(text)['providers'].values())} models)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
