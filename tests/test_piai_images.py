"""Images on the pi-ai routes (issue 12): whole bodies, DSH's refusals, and what the log lacks.

A DSH log records an image only as its attachment reference (``sha256`` id, media type, size);
the bytes pi-ai sends as base64 live in DSH's attachment store. Given the bytes (``images=``),
both pi-ai renderers write what pi-ai 0.82.1 writes: ``tests/data/piai_oracle/images/*.json`` holds
pi-ai's own bodies for sessions with images (recorded once; no test runs Node). Without them a
request with an image is ``unrendered`` with a reason naming what is missing, and every other
request and view of the session still works. The hand-written bodies below restate each rule
from DSH 0.1.0-rc.8 ``llm-pi-ai/src/context.ts`` and pi-ai's ``convertMessages``.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from dsh_audit.errors import RenderError
from dsh_audit.jsjson import stringify
from dsh_audit.session import Session, open_session, route_renderer
from dsh_audit.testing import LogBuilder, ToolCall, tool_schema
from dsh_audit.wire import OFFLOADED_IMAGE_TEXT, PiRoutes, images_in_body, make_renderer
from dsh_audit.wire._piai_facts import PiModel, RouteProfile
from dsh_audit.wire._piai_routes import parse_routes

from _cli import invoke
from test_wire_piai_oracle import opened as oracle_session  # the same session of a recorded case

ORACLE = Path(__file__).parent / "data" / "piai_oracle" / "images"
CASES = sorted(p.stem for p in ORACLE.glob("*.json"))
RUNTIME = "x-stainless-runtime-version"

SYSTEM = "Sys."
READ = tool_schema("read", "Read a file.", {"path": {"type": "string"}})
PNG = bytes(range(12))  # base64 AAECAwQFBgcICQoL
GIF = b"GIF89a"  # base64 R0lGODlh
PNG_ID = "sha256:" + hashlib.sha256(PNG).hexdigest()
GIF_ID = "sha256:" + hashlib.sha256(GIF).hexdigest()
IMAGES = {PNG_ID: PNG, GIF_ID: GIF}
EPHEMERAL = {"type": "ephemeral"}
#: A hand-declared openai-completions route whose model takes images.
LOCAL = PiModel(provider="local-openai", id="local-coder", api="openai-completions",
                base_url="http://127.0.0.1:18302/v1", context_window=131072, max_tokens=8192, reasoning=False,
                input=("text", "image"))


def image(data: bytes, key: str, media: str) -> dict[str, Any]:
    return {"type": "image", "attachment": {"attachmentId": key, "mediaType": media, "bytes": len(data),
                                            "width": 1, "height": 1}}


PNG_BLOCK = image(PNG, PNG_ID, "image/png")
GIF_BLOCK = image(GIF, GIF_ID, "image/gif")


def reply(b: LogBuilder, provider: str, model: str, api: str, *args: Any, **kwargs: Any) -> Any:
    """An assistant reply through pi-ai with the replay envelope DSH writes (no thinking)."""
    out = b.assistant(*args, **kwargs)
    message = b.event(out.seq)["data"]["message"]
    stop = "toolUse" if any(x["type"] == "tool-call" for x in message["content"]) else "stop"
    message["source"]["replayState"] = {
        "response": {"kind": "pi-ai", "version": 2, "api": api, "provider": provider, "model": model,
                     "responseId": f"msg_{out.seq}", "stopReason": stop},
        "blocks": [{"type": x["type"]} for x in message["content"]]}
    return out


def picture_session(provider: str, model: str, api: str) -> LogBuilder:
    """Turn 1 text only; turn 2 a prompt with text and an image, a read whose result is an image
    alone, and one whose result has a text around an image."""
    b = LogBuilder(session_id="pics", provider=provider, model=model, system=SYSTEM, tools=[READ],
                   reasoning_effort=None, max_tokens=1000)
    with b.turn("Hi."):
        with b.step():
            reply(b, provider, model, api, "Hello.")
    with b.turn([{"type": "text", "text": "Look:"}, PNG_BLOCK]):
        with b.step():
            r = reply(b, provider, model, api, None, tool_calls=[ToolCall("read", '{"path":"a.gif"}', id="c1"),
                                                                 ToolCall("read", '{"path":"b"}', id="c2")])
            b.tool_result(r.call_ids[0], [GIF_BLOCK])
            b.tool_result(r.call_ids[1], [{"type": "text", "text": "b:"}, PNG_BLOCK])
        with b.step():
            reply(b, provider, model, api, "Seen.")
    return b


def opened(b: LogBuilder, tmp_path: Path, models: dict[tuple[str, str], PiModel] | None = None) -> Session:
    session = open_session(b.write_jsonl(tmp_path / "session.jsonl"))
    if models is not None:
        session.use_routes(PiRoutes(apis={p: m.api for (p, _), m in models.items()}, models=models))
    return session


def with_fields(model: PiModel, **changes: Any) -> PiModel:
    return dataclasses.replace(model, **changes)


# --- pi-ai's own bodies -------------------------------------------------------------------------


def load(case: str) -> dict[str, Any]:
    return json.loads((ORACLE / f"{case}.json").read_text("utf-8"))


def test_the_image_oracle_set_is_whole() -> None:
    assert CASES == ["images-anthropic", "images-anthropic-offload", "images-openai", "images-openai-compat"]
    records = [load(case) for case in CASES]
    assert [len(r["requests"]) for r in records] == [5, 5, 5, 5]
    assert {r["pi_ai"] for r in records} == {"0.82.1"}
    assert {q["pi_ai_model"]["api"] for r in records for q in r["requests"]} == {"anthropic-messages",
                                                                                 "openai-completions"}
    for record in records:  # the stored bytes are the ones the log's references name
        assert all(key == "sha256:" + hashlib.sha256(base64.b64decode(data)).hexdigest()
                   for key, data in record["images"].items())


@pytest.mark.parametrize("case", CASES)
def test_every_image_body_and_header_set_is_pi_ais(case: str, tmp_path: Path) -> None:
    record = load(case)
    session = oracle_session(record, tmp_path)
    images = {key: base64.b64decode(data) for key, data in record["images"].items()}
    options = {"images": images, "offloaded_image_text": record["offloaded_image_text"]}
    run = route_renderer([session])
    requests = [r for r in session.requests if session.route(r).adapter in ("anthropic", "openai")]
    assert [r.index for r in requests] == [q["index"] for q in record["requests"]]
    for request, expected in zip(requests, record["requests"]):
        assert run(request, dict(options)) == expected["body"].encode("utf-8"), (case, request.index)
        wire = session.bodies._renderer(session.route(request).adapter).render(request, **options)
        assert (wire.method, wire.path) == (expected["method"], expected["path"])
        assert [[k, v] for k, v in wire.headers if k != RUNTIME] == expected["headers"]


@pytest.mark.parametrize("case", CASES)
def test_a_capture_gives_back_the_bytes_the_log_lacks(case: str, tmp_path: Path) -> None:
    """Each captured body holds its images' bytes, keyed by digest as the log names them: rendering
    with what ``images_in_body`` finds there reproduces the body (only offloaded images are absent)."""
    record = load(case)
    session = oracle_session(record, tmp_path)
    run = route_renderer([session])
    stored = {key: base64.b64decode(data) for key, data in record["images"].items()}
    for request, expected in zip(session.requests, record["requests"]):
        found = images_in_body(json.loads(expected["body"]))
        assert found and all(stored[key] == data for key, data in found.items())
        options = {"images": found, "offloaded_image_text": record["offloaded_image_text"]}
        assert run(request, options) == expected["body"].encode("utf-8")


# --- the rules, body by body --------------------------------------------------------------------


def test_anthropic_user_and_tool_result_images(tmp_path: Path) -> None:
    session = opened(picture_session("anthropic", "claude-sonnet-4-5", "anthropic-messages"), tmp_path)
    run = route_renderer([session])
    last = session.requests[-1]
    assert [r.index for r in session.requests] == [0, 1, 2]
    png = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAECAwQFBgcICQoL"}}
    gif = {"type": "image", "source": {"type": "base64", "media_type": "image/gif", "data": "R0lGODlh"}}
    expected = {"model": "claude-sonnet-4-5", "messages": [
        {"role": "user", "content": "Hi."},
        {"role": "assistant", "content": [{"type": "text", "text": "Hello."}]},
        # a user message with an image is a block array: texts and images in order
        {"role": "user", "content": [{"type": "text", "text": "Look:"}, png]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "read", "input": {"path": "a.gif"}},
                                          {"type": "tool_use", "id": "c2", "name": "read", "input": {"path": "b"}}]},
        # tool results with images: blocks; an image alone is led by "(see attached image)"
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "c1", "content": [
                {"type": "text", "text": "(see attached image)"}, gif], "is_error": False},
            {"type": "tool_result", "tool_use_id": "c2", "content": [{"type": "text", "text": "b:"}, png],
             "is_error": False, "cache_control": EPHEMERAL}]}],
        "max_tokens": 1000, "stream": True,
        "system": [{"type": "text", "text": SYSTEM, "cache_control": EPHEMERAL}],
        "tools": [{"name": "read", "description": "Read a file.", "eager_input_streaming": True,
                   "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
                   "cache_control": EPHEMERAL}],
        "thinking": {"type": "disabled"}}
    assert run(last, {"images": IMAGES}) == stringify(expected).encode("utf-8")
    assert run(session.requests[0], {}).startswith(b'{"model":"claude-sonnet-4-5"')  # no image: no bytes needed


def test_openai_user_and_tool_result_images(tmp_path: Path) -> None:
    session = opened(picture_session("local-openai", "local-coder", "openai-completions"), tmp_path,
                     {("local-openai", "local-coder"): LOCAL})
    run = route_renderer([session])
    png = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAECAwQFBgcICQoL"}}
    gif = {"type": "image_url", "image_url": {"url": "data:image/gif;base64,R0lGODlh"}}
    expected = {"model": "local-coder", "messages": [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Hi."},
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": [{"type": "text", "text": "Look:"}, png]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "read", "arguments": '{"path":"a.gif"}'}},
            {"id": "c2", "type": "function", "function": {"name": "read", "arguments": '{"path":"b"}'}}]},
        # tool messages stay text ("(see attached image)" for an image alone) ...
        {"role": "tool", "content": "(see attached image)", "tool_call_id": "c1"},
        {"role": "tool", "content": "b:", "tool_call_id": "c2"},
        # ... and the group's images follow in one user message
        {"role": "user", "content": [{"type": "text", "text": "Attached image(s) from tool result:"}, gif, png]}],
        "stream": True, "stream_options": {"include_usage": True}, "store": False, "max_completion_tokens": 1000,
        "tools": [{"type": "function", "function": {**READ, "strict": False}}]}
    assert run(session.requests[-1], {"images": IMAGES}) == stringify(expected).encode("utf-8")


def test_an_offloaded_image_needs_no_bytes(tmp_path: Path) -> None:
    """DSH replaces the oldest images over the route's ``maxRequestImageBytes`` before it reads any
    bytes: with every image offloaded the request renders without them."""
    model = with_fields(LOCAL, profile=RouteProfile(max_request_image_bytes=1))
    session = opened(picture_session("local-openai", "local-coder", "openai-completions"), tmp_path,
                     {("local-openai", "local-coder"): model})
    run = route_renderer([session])
    body = json.loads(run(session.requests[-1], {"offloaded_image_text": "[gone]"}))
    assert body["messages"][3:] == [
        {"role": "user", "content": "Look:[gone]"},
        body["messages"][4],
        {"role": "tool", "content": "[gone]", "tool_call_id": "c1"},
        {"role": "tool", "content": "b:[gone]", "tool_call_id": "c2"}]
    body = json.loads(run(session.requests[-1], {"images": IMAGES}))  # DSH's own text by default
    assert body["messages"][3] == {"role": "user", "content": "Look:" + OFFLOADED_IMAGE_TEXT}


# --- what cannot be rendered --------------------------------------------------------------------


def test_without_the_bytes_the_reason_names_what_is_missing(tmp_path: Path) -> None:
    session = opened(picture_session("anthropic", "claude-sonnet-4-5", "anthropic-messages"), tmp_path)
    request = session.requests[1]
    with pytest.raises(RenderError) as caught:
        make_renderer("anthropic").render(request)
    error = caught.value
    assert error.message == (f"the log holds only a reference to image {PNG_ID!r} (mediaType 'image/png', 12 "
                             "bytes), not the bytes pi-ai sends as base64: DSH reads them from its attachment store")
    assert error.hint == ("read the bytes from DSH's attachment store with --attachments DIR "
                          "(<DSH_HOME>/attachments/v1), or from a capture of the request with --capture FILE")
    assert (error.seq, error.dsh_code) == (request.message_seqs[2], None)
    with pytest.raises(RenderError) as caught:
        make_renderer("anthropic").render(session.requests[2], images={PNG_ID: PNG})
    assert caught.value.message == f"no bytes supplied for image attachment {GIF_ID!r}"
    assert caught.value.seq == session.requests[2].message_seqs[4]  # the tool result holding the GIF
    with pytest.raises(RenderError) as caught:
        make_renderer("anthropic").render(request, images={PNG_ID: PNG + b"!"})
    assert caught.value.message == (f"the bytes supplied for image {PNG_ID!r} do not match its logged reference "
                                    "(mediaType 'image/png', 12 bytes; 13 supplied): DSH's attachment store refuses "
                                    "such a read")
    assert caught.value.dsh_code == "ATTACHMENT_CORRUPT"


def test_a_model_without_image_input_is_refused_as_dsh_refuses_it(tmp_path: Path) -> None:
    """DSH's adapter refuses an image request for a model without image input before pi-ai sees
    it, so pi-ai's placeholder text for such models never reaches a DSH wire."""
    text_only = with_fields(LOCAL, input=("text",))
    session = opened(picture_session("local-openai", "local-coder", "openai-completions"), tmp_path,
                     {("local-openai", "local-coder"): text_only})
    run = route_renderer([session])
    assert json.loads(run(session.requests[0], {}))["messages"][1] == {"role": "user", "content": "Hi."}
    for request in session.requests[1:]:
        with pytest.raises(RenderError) as caught:
            run(request, {"images": IMAGES})
        assert caught.value.message == ("pi-ai model 'local-coder' does not support image input (its input is text); "
                                        "DSH's pi-ai adapter refuses the request")
        assert (caught.value.dsh_code, caught.value.seq) == ("UNSUPPORTED_CONTENT", request.message_seqs[2])


def test_an_image_outside_a_user_message_is_refused(tmp_path: Path) -> None:
    b = picture_session("anthropic", "claude-sonnet-4-5", "anthropic-messages")
    seq = next(e["seq"] for e in b.records(packed=False) if e.get("type") == "assistant/message")
    b.event(seq)["data"]["message"]["content"].append(PNG_BLOCK)
    session = opened(b, tmp_path)
    with pytest.raises(RenderError) as caught:
        route_renderer([session])(session.requests[1], {"images": IMAGES})
    assert caught.value.message == "pi-ai cannot represent an image in an in-history assistant message"
    assert (caught.value.dsh_code, caught.value.seq) == ("UNSUPPORTED_CONTENT", seq)


def test_route_file_image_settings() -> None:
    routes = parse_routes({"providers": {"gw": {"api": "openai-completions", "baseURL": "http://h/v1",
                                                "defaultInput": ["text", "image"], "maxRequestImageBytes": 500,
                                                "models": [{"id": "a"}, {"id": "b", "input": ["text"]}]}}})
    assert [routes.models[("gw", m)].input for m in ("a", "b")] == [("text", "image"), ("text",)]
    assert routes.models[("gw", "a")].profile == RouteProfile(max_request_image_bytes=500)
    for key, value, what in (("maxRequestImageBytes", 0, "must be a positive whole number of bytes"),
                             ("defaultInput", [], "must be a non-empty list of input kinds (text, image)")):
        with pytest.raises(Exception) as caught:
            parse_routes({"providers": {"gw": {"api": "openai-completions", "baseURL": "http://h/v1",
                                               "models": [{"id": "a"}], key: value}}})
        assert str(caught.value) == f"providers.gw.{key}: {what}"


# --- the session around such a request ----------------------------------------------------------


def test_diff_and_cache_go_on_around_an_unrendered_image_request(tmp_path: Path, monkeypatch, capsys) -> None:
    """A capture gives back the bytes the log names by digest: its image requests are compared;
    a captured image of other bytes is not the logged one, and its requests stay unrendered."""
    b = picture_session("anthropic", "claude-sonnet-4-5", "anthropic-messages")
    log = b.write_jsonl(tmp_path / "session.jsonl")
    session = open_session(log)
    renderer = make_renderer("anthropic")
    capture = tmp_path / "wire.jsonl"
    bodies = [renderer.render(r, images=IMAGES).body_text for r in session.requests]
    capture.write_text("".join(json.dumps({"method": "POST", "path": "/v1/messages", "body": body}) + "\n"
                               for body in bodies), "utf-8")
    code, out, _ = invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(capture), "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0
    assert [(r["index"], r["verdict"], r["note"]) for r in rows] == [
        (0, "identical", "order (no session header)"),
        (1, "identical", "order (no session header); image bytes from capture"),
        (2, "identical", "order (no session header); image bytes from capture")]
    other = base64.b64encode(b"not the logged picture").decode("ascii")
    forged = [body.replace(base64.b64encode(IMAGES[PNG_ID]).decode("ascii"), other) for body in bodies]
    assert forged[1] != bodies[1]
    capture.write_text("".join(json.dumps({"method": "POST", "path": "/v1/messages", "body": body}) + "\n"
                               for body in forged), "utf-8")
    code, out, _ = invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(capture), "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    reason = (f"cannot render: no bytes supplied for image attachment {PNG_ID!r}"  # none with its digest
              " (hint: read the bytes from DSH's attachment store with --attachments DIR (<DSH_HOME>/attachments/v1), "
              "or from a capture of the request with --capture FILE)")
    assert code == 1
    assert [(r["index"], r["verdict"], r["note"]) for r in rows] == [
        (0, "identical", "order (no session header)"),
        (1, "unrendered", "order (no session header); " + reason),
        (2, "unrendered", "order (no session header); " + reason)]
    code, out, _ = invoke(monkeypatch, capsys, "cache", str(log), "--json")
    summary = json.loads(out.splitlines()[0])
    assert code == 0
    assert [(t["index"], t["prompt_source"]) for t in summary["timeline"]] == [
        (0, "wire:anthropic"), (1, "json"), (2, "json")]
    assert summary["breaks"] == 0
