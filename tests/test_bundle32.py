"""Issue 17, "redact: share a session log" (a user tour sending a redacted pi-ai bundle to a vendor):
the bundle carries its route configuration, redacted, and ``--check`` renders with it; the note of a
log redacted without one names its DSH home's route file; a captured gateway host is replaced by a
placeholder of its length (the same in the route file), the SDK's OS and runtime headers stay; the
log's and the capture's content strings are counted apart; ``find_parent`` does not read the child's
own header again among the logs beside it.

The corpus tests (live-pi c3: a hand-declared ``openai-completions`` route behind a local gateway;
c1: a catalog ``anthropic`` route) skip when ``../shared/corpus`` is absent.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from _cli import chat_log, invoke, short_salt

from dsh_audit.redact import Placeholders, Redactor, check_bundle, redact, routes_path
from dsh_audit.redact._capture import _har_part, _headers
from dsh_audit.redact._hosts import redact_host, redact_url
from dsh_audit.redact._pseudonyms import redact_ascii
from dsh_audit.redact._routes import redacted_routes
from dsh_audit.session import Headers, find_parent
from dsh_audit.wire import load_routes
from dsh_audit.wire._piai_routes import parse_routes

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
C3 = CORPUS / "live-pi" / "c3-openai-compat"
C1 = CORPUS / "live-pi" / "c1-anthropic-tools"
C3_ROUTES = C3 / "inputs" / "pi-ai-routes.patch.yml"
needs_corpus = pytest.mark.skipif(not (C3.is_dir() and C1.is_dir()), reason="../shared/corpus is absent")
SALT = "bundle32"
#: The placeholder of the corpus gateway, 127.0.0.1:18302, with SALT.
GATEWAY = "127.8.8.0:59691"  # loopback stays loopback (session 38)


def _c3_log() -> Path:
    return next((C3 / "session-logs").glob("*.jsonl"))


@pytest.fixture(scope="module")
def c3_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The c3 session redacted with its capture and its route file (read-only for the tests)."""
    folder = tmp_path_factory.mktemp("c3")
    redact(_c3_log(), folder / "s.jsonl", salt=SALT, capture=C3 / "wire.jsonl",
           routes=C3_ROUTES)
    return folder / "s.jsonl"


# --- 2. the bundle carries its route configuration, redacted, and --check renders with it -------------------


@needs_corpus
def test_the_bundle_carries_the_route_file_redacted_and_check_needs_nothing_else(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "s.jsonl"
    code, text, err = invoke(monkeypatch, capsys, "redact", str(_c3_log()), "-o", str(out), "--capture",
                             str(C3 / "wire.jsonl"), "--salt", SALT, "--routes", str(C3_ROUTES))
    assert (code, err) == (0, [short_salt(SALT)])
    assert text == (f"wrote {out} (format v0, plain): 206 content string(s) replaced in the log, 21 more in the "
                    "capture\n"
                    f"wrote {tmp_path / 'wire.jsonl'}: auth headers dropped: none\n"
                    f"wrote {out}.routes.yml: the route configuration, hosts and credentials redacted\n"
                    f"wrote {out}.manifest.json\n"
                    "secrets removed: none found\n"
                    "verdicts of requests, breaks, cache, diff: unchanged\n"
                    f"a recipient verifies it with: dsh-audit redact --check {out}\n"
                    f"and audits it with: dsh-audit check {out} --capture {tmp_path / 'wire.jsonl'} --routes "
                    f"{out}.routes.yml\n")
    assert json.loads((tmp_path / "s.jsonl.routes.yml").read_text("utf-8")) == {"providers": {
        "anthropic": {"api": "anthropic-messages", "baseURL": f"http://{GATEWAY}",
                      "models": [{"id": "claude-sonnet-4-5"}, {"id": "claude-sonnet-4-6"}]},
        "local-openai": {"api": "openai-completions", "baseURL": f"http://{GATEWAY}/v1",
                         "models": [{"id": "local-coder", "contextWindow": 131072, "maxTokens": 8192,
                                     "input": ["text"], "reasoningEfforts": {"off": None, "high": "high"}}]}}}
    manifest = json.loads((tmp_path / "s.jsonl.manifest.json").read_text("utf-8"))
    assert (manifest["routes"], manifest["route_file"]) == (True, "s.jsonl.routes.yml")
    # the vendor has only the bundle: moved elsewhere, it checks with what it carries
    vendor = tmp_path / "vendor"
    vendor.mkdir()
    for name in ("s.jsonl", "s.jsonl.manifest.json", "s.jsonl.routes.yml", "wire.jsonl"):
        shutil.copy(tmp_path / name, vendor / name)
    checked = vendor / "s.jsonl"
    assert invoke(monkeypatch, capsys, "redact", "--check", str(checked)) == (
        0, "requests: match (6 request(s))\nbreaks: match (6 request(s), 0 break(s))\ncache: match (6 request(s))\n"
           f"diff: match (6 diff row(s))\nOK: every verdict of {checked} matches its manifest\n",
        [f"note: rendered with the bundle's redacted route configuration {vendor / 's.jsonl.routes.yml'}"])
    # a bundle without its route file: one line naming it
    (vendor / "s.jsonl.routes.yml").unlink()
    code, text, err = invoke(monkeypatch, capsys, "redact", "--check", str(checked))
    assert (code, text, len(err)) == (2, "", 1)
    assert err[0].startswith(f"error: {vendor / 's.jsonl.routes.yml'}: ")


@needs_corpus
def test_a_bundle_of_an_older_redact_says_exactly_what_the_vendor_needs(
        c3_bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    old = tmp_path / "s.jsonl"
    for name in ("s.jsonl", "wire.jsonl"):
        shutil.copy(c3_bundle.parent / name, tmp_path / name)
    manifest = json.loads(Path(f"{c3_bundle}.manifest.json").read_text("utf-8"))
    del manifest["route_file"]
    Path(f"{old}.manifest.json").write_text(json.dumps(manifest), "utf-8")
    assert invoke(monkeypatch, capsys, "redact", "--check", str(old)) == (2, "", [
        f"error: {old}.manifest.json: the manifest's verdicts were made with a route configuration, and the bundle "
        "(made by an older dsh-audit) holds none (hint: ask its sender for the route file they gave redact --routes "
        "(DSH's llm-pi-ai route configuration; its credentials and baseURL hosts may be replaced, its routes' api and "
        "models' contextWindow, maxTokens, reasoningEfforts and compat must stay) and pass it with --routes FILE; or "
        "ask for the bundle redacted again by this dsh-audit, which carries it)"])
    # the redacted route file is such a file: --check --routes takes it (as it takes the original)
    assert check_bundle(old, routes=routes_path(c3_bundle)).ok
    assert check_bundle(old, routes=C3_ROUTES).ok


def test_the_route_file_keeps_the_model_facts_and_replaces_hosts_and_credentials() -> None:
    config = parse_routes({"providers": {
        "gw": {"api": "openai-completions", "apiKeyEnv": "GW_KEY", "displayName": "Acme gateway",
               "baseURL": "https://svc:pw@llm.acme.internal:8443/v1", "cacheRetention": "long",
               "headers": {"X-Tenant": "acme-prod"},
               "models": [{"id": "coder", "name": "Acme Coder", "contextWindow": 65536, "maxTokens": 4096,
                           "reasoningEfforts": {"low": "low", "high": "high"}, "compat": {"supportsStore": False}}]},
        "deepseek-direct": {"api": "openai-completions", "baseURL": "https://api.deepseek.com/v1",
                            "models": [{"id": "m", "reasoningEfforts": False}]},
        "anthropic": {"models": [{"id": "claude-sonnet-4-5", "maxTokens": 32000}]}}})
    redactor = Redactor(Placeholders(b"salt"))
    document = redacted_routes(config, url=lambda u: redact_url(u, redactor), value=lambda v: redact_ascii(v, redactor))
    gw = document["providers"]["gw"]
    base = gw.pop("baseURL")
    assert len(base) == len("https://svc:pw@llm.acme.internal:8443/v1") and base.endswith("/v1")
    assert "svc" not in base and "pw@" not in base and "acme" not in base
    tenant = gw["headers"].pop("X-Tenant")
    assert len(tenant) == len("acme-prod") and tenant != "acme-prod" and tenant.isascii()
    assert document == {"providers": {
        "gw": {"api": "openai-completions", "cacheRetention": "long", "headers": {},
               "models": [{"id": "coder", "contextWindow": 65536, "maxTokens": 4096, "input": ["text"],
                           "reasoningEfforts": {"low": "low", "high": "high"},
                           "compat": {"supportsStore": False}}]},
        "deepseek-direct": {"api": "openai-completions", "baseURL": "https://api.deepseek.com/v1",
                            "models": [{"id": "m", "contextWindow": 262144, "maxTokens": 32768, "input": ["text"],
                                        "reasoningEfforts": False}]},
        "anthropic": {"api": "anthropic-messages", "models": [{"id": "claude-sonnet-4-5", "maxTokens": 32000}]}}}
    gw["baseURL"], gw["headers"]["X-Tenant"] = base, tenant
    again = parse_routes(document)
    assert {key: (m.api, m.context_window, m.max_tokens, m.reasoning, m.thinking_level_map, m.input, m.compat,
                  m.base_url, None if m.profile is None else m.profile.cache_retention)
            for key, m in again.models.items()} == {
        key: (m.api, m.context_window, m.max_tokens, m.reasoning, m.thinking_level_map, m.input, m.compat,
              m.base_url if key[0] != "gw" else base, None if m.profile is None else m.profile.cache_retention)
        for key, m in config.models.items()}


def test_a_base_url_loses_its_secrets_and_a_header_value_of_any_text_re_reads() -> None:
    """A key in a baseURL's path or query survived into the bundle's route file (only the host was
    replaced); a header value past Latin-1 made the redacted file unreadable (review of session 32)."""
    key = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789EF"
    config = parse_routes({"providers": {"gw": {
        "api": "openai-completions", "baseURL": f"http://127.0.0.1:18302/v1/{key}?api_key=hunter2secretvalue",
        "headers": {"X-Team": "équipe café"},
        "models": [{"id": "coder", "contextWindow": 65536, "maxTokens": 4096, "reasoningEfforts": False}]}}})
    redactor = Redactor(Placeholders(b"salt"))
    document = redacted_routes(config, url=lambda u: redact_url(u, redactor), value=lambda v: redact_ascii(v, redactor))
    text = json.dumps(document)
    assert key not in text and "hunter2secretvalue" not in text and "127.0.0.1" not in text
    value = document["providers"]["gw"]["headers"]["X-Team"]
    assert len(value) == len("équipe café") and value.isascii() and value.isprintable()
    assert parse_routes(document).models[("gw", "coder")].profile.headers == (("X-Team", value),)


# --- 1. a log redacted without routes: the note names its DSH home's route file -----------------------------


@needs_corpus
def test_the_note_names_the_dsh_home_route_file_redact_did_not_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "home"
    log = home / "sessions" / "proj" / "session-1" / "session.jsonl"
    log.parent.mkdir(parents=True)
    shutil.copy(_c3_log(), log)
    shutil.copy(C3_ROUTES, home / "cordis.patch.yml")
    out = tmp_path / "s.jsonl"
    code, text, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(out), "--capture",
                             str(C3 / "wire.jsonl"), "--salt", SALT)
    patch = home / "cordis.patch.yml"
    assert (code, err) == (0, [
        "warning: 6 request(s) cannot be rendered without DSH's route configuration: give redact --routes FILE to "
        f"bundle it redacted (this log's DSH home holds it in {patch}, which redact does not read by itself: --routes "
        f"{patch}); without it their diff verdicts compared nothing, so the redacted capture is not proven to match "
        "the redacted log", short_salt(SALT)])
    assert text.splitlines()[-3] == ("verdicts of requests, breaks, cache: unchanged; diff: unchanged, but 6 captured "
                                     "request(s) unrendered, not compared (see the warning)")
    assert not routes_path(out).exists()


# --- 3. the gateway's host goes, consistently; the SDK headers stay ------------------------------------------


@needs_corpus
def test_the_captured_gateway_host_is_a_placeholder_and_the_sdk_headers_stay(c3_bundle: Path) -> None:
    records = [json.loads(line) for line in (c3_bundle.parent / "wire.jsonl").read_text("utf-8").splitlines()]
    originals = [json.loads(line) for line in (C3 / "wire.jsonl").read_text("utf-8").splitlines()]
    assert [r["headers"]["host"] for r in records] == [GATEWAY] * 6
    assert [{k: v for k, v in r["headers"].items() if k not in ("host", "content-length")} for r in records] == \
        [{k: v for k, v in r["headers"].items() if k not in ("host", "content-length")} for r in originals]
    assert records[0]["headers"]["x-stainless-os"] == "Linux" and records[0]["path"] == "/v1/chat/completions"
    for name in ("s.jsonl", "wire.jsonl", "s.jsonl.routes.yml", "s.jsonl.manifest.json"):
        assert b"127.0.0.1" not in (c3_bundle.parent / name).read_bytes() and b"18302" not in \
            (c3_bundle.parent / name).read_bytes()


def test_a_host_is_replaced_alike_in_every_place_it_stands() -> None:
    redactor = Redactor(Placeholders(b"salt"))
    host = redact_host("gw-7.corp.example:8443", redactor)
    assert len(host) == 22 and host[4:5] + host[9:10] + host[17:18] == "..:" and host != "gw-7.corp.example:8443"
    assert _headers({"Host": "gw-7.corp.example:8443", "x-stainless-os": "Linux", "x-stainless-runtime": "node",
                     "x-forwarded-host": "gw-7.corp.example:8443"}, redactor, [], 0) == {
        "Host": host, "x-stainless-os": "Linux", "x-stainless-runtime": "node", "x-forwarded-host": host}
    assert redact_url("https://gw-7.corp.example:8443/v1/messages?beta=true", redactor) == \
        f"https://{host}/v1/messages?beta=true"
    assert redact_url("/v1/messages", redactor) == "/v1/messages"
    request = _har_part({"url": "http://gw-7.corp.example:8443/v1", "headers": [
        {"name": "Host", "value": "gw-7.corp.example:8443"}, {"name": "x-stainless-arch", "value": "x64"}]},
        redactor, [], None)
    assert request == {"url": f"http://{host}/v1", "headers": [{"name": "Host", "value": host},
                                                                {"name": "x-stainless-arch", "value": "x64"}]}
    assert redact_host("10.1.2.3", redactor) == redact_host("10.1.2.3:80", redactor)[:8]
    assert redact_host("api.anthropic.com", redactor) == "api.anthropic.com"  # a public endpoint identifies no one
    # the headers that may name it too: a proxy's, a URL-valued one, RFC 7239's Forwarded (review of session 32)
    found = _headers({"x-original-host": "gw-7.corp.example:8443", "origin": "https://gw-7.corp.example:8443",
                      "Forwarded": 'for=10.1.2.3;host="gw-7.corp.example:8443";proto=https'}, redactor, [], 0)
    assert found == {"x-original-host": host, "origin": f"https://{host}",
                     "Forwarded": f'for={redact_host("10.1.2.3", redactor)};host="{host}";proto=https'}


# --- 4. the log's and the capture's content strings, counted apart ------------------------------------------


@needs_corpus
def test_the_log_and_the_capture_count_their_own_strings(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    log = next((C1 / "session-logs").glob("*.jsonl"))
    result = redact(log, tmp_path / "a.jsonl", salt=SALT, capture=C1 / "wire.jsonl")
    assert (result.strings, result.capture_strings) == (407, 37)
    code, text, _ = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(tmp_path / "b.jsonl"), "--salt", SALT)
    assert (code, text.splitlines()[0]) == (0, f"wrote {tmp_path / 'b.jsonl'} (format v0, plain): 407 content "
                                               "string(s) replaced")


# --- 5. find_parent skips the child's own log among the logs beside it --------------------------------------


def test_find_parent_does_not_read_the_childs_own_header_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chat_log(tmp_path / "exports" / "other-name.jsonl", "s-parent")
    child = chat_log(tmp_path / "exports" / "child.jsonl", "s-child")
    lines = child.read_text("utf-8").splitlines(keepends=True)
    header: dict[str, Any] = json.loads(lines[0])
    child.write_text(json.dumps({**header, "parentSession": "s-parent"}) + "\n" + "".join(lines[1:]), "utf-8")
    read: list[str] = []
    original = Headers.get

    def get(self: Headers, path: Any) -> Any:
        read.append(Path(path).name)
        return original(self, path)

    monkeypatch.setattr(Headers, "get", get)
    headers = Headers()
    try:
        assert find_parent(child, "s-parent", headers=headers) == tmp_path / "exports" / "other-name.jsonl"
        assert find_parent(tmp_path / "exports" / "." / "child.jsonl", "s-none", headers=headers) is None
    finally:
        headers.close()
    assert read == ["other-name.jsonl"]  # the child's own log, among the logs beside it: never opened again


@needs_corpus
def test_a_vendor_host_detection_reads_cannot_be_replaced_and_redact_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    routes = tmp_path / "routes.yml"
    routes.write_text(C3_ROUTES.read_text("utf-8").replace("http://127.0.0.1:18302/v1",
                                                           "http://llm.deepseek.com.corp:18302/v1"), "utf-8")
    out = tmp_path / "s.jsonl"
    code, text, err = invoke(monkeypatch, capsys, "redact", str(_c3_log()), "-o", str(out), "--routes", str(routes),
                             "--salt", SALT)
    assert (code, err) == (1, [
        "note: the copy's verdicts were rendered with the bundle's redacted route file s.jsonl.routes.yml: a route "
        "whose internal baseURL host names a vendor that pi-ai's compat detection reads (deepseek.com, "
        "openrouter.ai...) renders otherwise once its host is replaced",
        f"note: the capture {C3 / 'wire.jsonl'}, which `check` finds for this log, was not redacted: pass --capture "
        f"{C3 / 'wire.jsonl'} to include it",
        "FAILED: cache verdicts differ on the redacted copy, so nothing was written"])
    assert not routes_path(out).exists() and not out.exists()  # a bundle that fails its own check is not left
