"""Each captured body is read once by a redaction (session 37), and a bundle's route file keeps each
route's key type (issue 12).

The counts are exact: ``redact`` parses a captured body only when it needs its value (its images, a
compaction's instruction, or whether a body that is not the render is JSON), and then once; a streamed
response's ``data:`` payloads are parsed once each.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dsh_audit.errors import UsageError
from dsh_audit.redact import Placeholders, redact
from dsh_audit.redact import _bodies, _response
from dsh_audit.redact._bodies import LogRedactor
from dsh_audit.redact._routes import redacted_routes
from dsh_audit.wire import PiRoutes, load_routes
from dsh_audit.wire._anthropic_oauth import KeyedRouteProfile
from dsh_audit.wire._piai_routes import parse_routes

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "live" / "e-compaction"
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(64))).decode("ascii")


def _counting(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[Any]:
    """Every call of ``module.name`` recorded (its first argument) while the test runs."""
    calls: list[Any] = []
    real: Callable[..., Any] = getattr(module, name)

    def counted(first: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(first)
        return real(first, *args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def _record(seq: int, body: str, headers: dict[str, str]) -> str:
    data = body.encode("utf-8")
    return json.dumps({"seq": seq, "method": "POST", "path": "/chat/completions", "headers": headers,
                       "body_bytes": len(data), "body_sha256": hashlib.sha256(data).hexdigest(), "body": body}) + "\n"


def _capture(tmp_path: Path, change: Callable[[str], str], extra: list[str]) -> tuple[Path, int]:
    """The corpus compaction session's capture with each body changed by ``change``, then ``extra``
    bodies that no request explains; and how many bodies it holds."""
    records = [json.loads(line) for line in (CORPUS / "wire.jsonl").read_text("utf-8").splitlines()]
    headers = records[0]["headers"]
    lines = [_record(r["seq"], change(r["body"]), r["headers"]) for r in records]
    lines += [_record(len(records) + n + 1, body, headers) for n, body in enumerate(extra)]
    wire = tmp_path / "wire.jsonl"
    wire.write_text("".join(lines), "utf-8")
    return wire, len(lines)


def _log() -> Path:
    return next(CORPUS.glob("home/sessions/*/*/session.jsonl.zstd"))


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is absent")
def test_a_body_that_is_the_render_is_not_parsed_and_a_compaction_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nine captured bodies, each the render of its request: only the compaction's is parsed (for
    the instruction it is rendered with), once."""
    wire, count = _capture(tmp_path, lambda body: body, [])
    parses = _counting(monkeypatch, _bodies, "parse_json")
    result = redact(_log(), tmp_path / "out.jsonl.zstd", salt="s37", capture=wire)
    assert (count, result.mismatched) == (9, ())
    assert [json.loads(body)["messages"][-1]["content"][:41] for body in parses] == [
        "You are now acting as a compaction engine"]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is absent")
def test_every_captured_body_is_parsed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A capture of N = 11 bodies none of which is its render (a space after each JSON body, then a
    body that is no JSON and one that carries an image): each is parsed exactly once, the compaction's
    and the image's (read for their values before they are rewritten) too."""
    image = json.dumps({"model": "m", "messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}]}]})
    wire, count = _capture(tmp_path, lambda body: body + " ", ["not json {", image])
    parses = _counting(monkeypatch, _bodies, "parse_json")
    result = redact(_log(), tmp_path / "out.jsonl.zstd", salt="s37", capture=wire, any_capture=True)
    assert result.mismatched == ()
    bodies = [json.loads(line)["body"].encode("utf-8") for line in wire.read_text("utf-8").splitlines()]
    assert (count, len(parses)) == (11, 11)
    assert sorted(parses) == sorted(bodies)  # each body once, none twice
    written = [json.loads(line)["body"] for line in (tmp_path / "out.jsonl.zstd.wire.jsonl").read_text("utf-8")
               .splitlines()]
    assert PNG not in written[-1] and len(written[-1]) == len(image)


def test_a_streamed_response_parses_each_payload_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """K = 3 JSON ``data:`` payloads, a ``[DONE]`` (which opens as a JSON array would) and an event
    name: each payload read once, in order (not the whole text once and each payload twice)."""
    text = "".join(f'data: {{"choices":[{{"delta":{{"content":"part {n}"}}}}]}}\n\n' for n in range(3))
    text = "event: message\n" + text + "data: [DONE]\n\n"
    parses = _counting(monkeypatch, _response, "_json")
    out = _response.redact_response_text(text, LogRedactor(Placeholders(b"s37")))
    assert parses == [f'{{"choices":[{{"delta":{{"content":"part {n}"}}}}]}}' for n in range(3)] + ["[DONE]"]
    assert out.count("data: ") == 4 and out.endswith("data: [DONE]\n\n") and "part 1" not in out
    assert out.startswith('event: message\ndata: {"choices":[{"delta":{"content":"')


# -- the key type in a bundle's route file ----------------------------------------------------------


def _routes(key_type: str | None) -> PiRoutes:
    settings = {} if key_type is None else {"dshAudit": {"keyType": key_type}}
    return parse_routes({"providers": {"gw": {"api": "anthropic-messages", "baseURL": "https://gw.example.com/a",
                                              **settings, "models": [{"id": "claude-gw"}]}}})


def _redacted(config: PiRoutes) -> dict[str, Any]:
    return redacted_routes(config, url=lambda url: url, value=lambda text: text)


@pytest.mark.parametrize("key_type", ["oauth", "api-key"])
def test_a_declared_key_type_is_kept_and_reads_back(key_type: str, tmp_path: Path) -> None:
    document = _redacted(_routes(key_type))
    assert document == {"providers": {"gw": {
        "api": "anthropic-messages", "baseURL": "https://gw.example.com/a", "dshAudit": {"keyType": key_type},
        "models": [{"id": "claude-gw", "contextWindow": 262144, "maxTokens": 32768, "input": ["text"],
                    "reasoningEfforts": False}]}}}
    path = tmp_path / "routes.yml"
    path.write_text(json.dumps(document), "utf-8")
    profile = load_routes(path).models[("gw", "claude-gw")].profile
    assert isinstance(profile, KeyedRouteProfile) and profile.key_type == key_type


def test_no_key_type_is_written_where_none_was_declared() -> None:
    assert "dshAudit" not in _redacted(_routes(None))["providers"]["gw"]


def test_a_key_type_the_reader_refuses_is_refused_before_it_is_written() -> None:
    config = _routes("oauth")
    model = config.models[("gw", "claude-gw")]
    bad = PiRoutes(config.apis, {("gw", "claude-gw"): dataclasses.replace(model,
                                                                        profile=KeyedRouteProfile(key_type="bearer"))})
    with pytest.raises(UsageError) as caught:
        _redacted(bad)
    assert caught.value.message == ("route 'gw': dshAudit.keyType must be one of api-key, oauth (the kind of key DSH "
                                    "gave pi-ai)")


def test_a_route_whose_models_are_keyed_differently_is_refused() -> None:
    config = parse_routes({"providers": {"gw": {"api": "anthropic-messages", "baseURL": "https://gw.example.com/a",
                                                "models": [{"id": "one"}, {"id": "two"}]}}})
    models = {key: dataclasses.replace(model, profile=KeyedRouteProfile(key_type=kind))
              for (key, model), kind in zip(config.models.items(), ("oauth", "api-key"))}
    with pytest.raises(UsageError) as caught:
        _redacted(PiRoutes(config.apis, models))
    assert caught.value.message == ("route 'gw': dshAudit.keyType differs between the route's models (one route, "
                                    "one kind of key)")
