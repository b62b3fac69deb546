"""DSH's stand-in for an offloaded image, shipped (issue 12).

When a request's images exceed its image bound, DSH's ``offloadRequestImages`` replaces the oldest
ones with a text block of ``OFFLOADED_IMAGE_TEXT`` (DSH 0.1.0-rc.8 ``packages/llm/llm/src/content.ts:7-8``,
used at ``:49``). The text is a code constant the log never holds, so it is shipped: a request
whose images are offloaded renders with no option and no image bytes, on the native DeepSeek route
and on a pi-ai route whose ``maxRequestImageBytes`` is small; ``offloaded_image_text=`` still
overrides it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_audit.jsjson import stringify
from dsh_audit.session import ATTACHMENTS_ENV, open_session
from dsh_audit.wire import DeepSeekRenderer
from dsh_audit.wire._images import OFFLOADED_IMAGE_TEXT, offload_images

from _cli import invoke
from test_attachments import BLOCK, picture_log
from test_piai_images import picture_session

#: DSH 0.1.0-rc.8 ``content.ts:7-8``, spelled out here so that a change of the shipped text fails.
DSH_TEXT = ("[image omitted to keep the request within its image limit; older images are omitted first. If this "
            "image is still needed, read its file again when a path is available; otherwise ask the user to "
            "attach it again.]")


@pytest.fixture(autouse=True)
def no_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No attachment store anywhere: an offloaded image needs no bytes."""
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "empty-home"))
    monkeypatch.delenv(ATTACHMENTS_ENV, raising=False)


def test_the_shipped_text_is_dshs() -> None:
    assert OFFLOADED_IMAGE_TEXT == DSH_TEXT


def test_offload_uses_dshs_text_unless_told_otherwise() -> None:
    messages = [{"role": "user", "content": [{"type": "text", "text": "a"}, BLOCK]},
                {"role": "tool", "content": [{"type": "tool-result", "content": [BLOCK]}]}]
    # 16 bytes are 24 in base64: a 30-byte bound keeps the newest image, a 0-byte one none
    assert offload_images(messages, 30) == [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": DSH_TEXT}]},
        messages[1]]
    assert offload_images(messages, 0, "[gone]") == [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "[gone]"}]},
        {"role": "tool", "content": [{"type": "tool-result", "content": [{"type": "text", "text": "[gone]"}]}]}]
    assert offload_images(messages, 48) == messages


def test_the_deepseek_route_renders_an_offloaded_image_with_no_argument(tmp_path: Path) -> None:
    request = open_session(picture_log(tmp_path / "session.jsonl")).requests[1]
    wire = DeepSeekRenderer(max_request_image_bytes=4).render(request, images={})
    assert wire.body_text == (
        '{"model":"deepseek-v4-flash","messages":[{"role":"system","content":"You are a helpful coding agent."},'
        '{"role":"user","content":"Hi."},{"role":"assistant","content":"Hello."},{"role":"user","content":'
        + stringify("Look:" + DSH_TEXT) + '}],"stream":true,"stream_options":{"include_usage":true},'
        '"thinking":{"type":"enabled"},"reasoning_effort":"high","max_tokens":65536}')
    override = DeepSeekRenderer(max_request_image_bytes=4).render(request, images={}, offloaded_image_text="[gone]")
    assert override.body_text == wire.body_text.replace(stringify("Look:" + DSH_TEXT), '"Look:[gone]"')


ROUTES = """\
providers:
  local-openai:
    api: openai-completions
    baseURL: http://127.0.0.1:18302/v1
    maxRequestImageBytes: 1
    models:
      - id: local-coder
        contextWindow: 1000000
        maxTokens: 8192
        input: [text, image]
"""


def test_a_pi_ai_route_renders_offloaded_images_from_the_cli(tmp_path: Path, monkeypatch, capsys) -> None:
    """Every image over the route's 1-byte bound is DSH's text: ``render`` needs no image bytes and
    no option for it."""
    log = picture_session("local-openai", "local-coder", "openai-completions").write_jsonl(tmp_path / "s.jsonl")
    routes = tmp_path / "routes.yml"
    routes.write_text(ROUTES, encoding="utf-8")
    text = stringify(DSH_TEXT)[1:-1]
    assert invoke(monkeypatch, capsys, "render", str(log), "-1", "--routes", str(routes)) == (0, (
        '{"model":"local-coder","messages":[{"role":"system","content":"Sys."},{"role":"user","content":"Hi."},'
        '{"role":"assistant","content":"Hello."},{"role":"user","content":"Look:' + text + '"},'
        '{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"read",'
        '"arguments":"{\\"path\\":\\"a.gif\\"}"}},{"id":"c2","type":"function","function":{"name":"read",'
        '"arguments":"{\\"path\\":\\"b\\"}"}}]},{"role":"tool","content":"' + text + '","tool_call_id":"c1"},'
        '{"role":"tool","content":"b:' + text + '","tool_call_id":"c2"}],"stream":true,'
        '"stream_options":{"include_usage":true},"store":false,"max_completion_tokens":1000,"tools":[{"type":'
        '"function","function":{"name":"read","description":"Read a file.","parameters":{"type":"object",'
        '"properties":{"path":{"type":"string"}},"required":["path"]},"strict":false}}]}'), [])
