"""DSH's image path into pi-ai: the checks, the offload and ``userContent``.

Written from DSH 0.1.0-rc.8 ``packages/llm/llm-pi-ai/src/adapter.ts`` (``stream``: the model's image
input, the attachment service) and ``src/context.ts`` (``assertSupportedImageRoles``,
``toPiContextWithImages``, ``userContent``). A request with an image anywhere takes this path as a
whole; :func:`dsh_audit.wire._piai_context.pi_context` uses it. The image walk, the offload and the
attachment lookup are the ones both DSH adapters share (:mod:`dsh_audit.wire._images`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._json import json_objects
from ..errors import RenderError
from ._images import IMAGE_BYTES_HINT, attachment_bytes, has_image, image_attachment, offload_images, to_base64
from ._piai_facts import PiModel

__all__ = ["image_messages", "user_content"]


def _pi_image(block: Mapping[str, Any], images: Mapping[str, bytes] | None) -> dict[str, Any]:
    """DSH ``userContent``'s image: pi-ai ``ImageContent`` with the attachment's bytes in base64
    and the logged reference's ``mediaType`` (``llm-pi-ai/src/context.ts`` ``readImage``)."""
    attachment = image_attachment(block)
    key, media, size = attachment.get("attachmentId"), attachment.get("mediaType"), attachment.get("bytes")
    if images is None:
        raise RenderError(f"the log holds only a reference to image {key!r} (mediaType {media!r}, {size!r} bytes), "
                          "not the bytes pi-ai sends as base64: DSH reads them from its attachment store",
                          hint=IMAGE_BYTES_HINT)
    data = attachment_bytes(block, images)
    if not isinstance(media, str) or size != len(data):
        raise RenderError(f"the bytes supplied for image {key!r} do not match its logged reference (mediaType "
                          f"{media!r}, {size!r} bytes; {len(data)} supplied): DSH's attachment store refuses such "
                          "a read", dsh_code="ATTACHMENT_CORRUPT", hint=IMAGE_BYTES_HINT)
    return {"type": "image", "data": to_base64(data), "mimeType": media}


def user_content(blocks: Any, images: Mapping[str, bytes] | None) -> str | list[dict[str, Any]]:
    """DSH ``userContent``: non-empty texts and images in order, nested tool results flattened;
    a string when it holds no image."""
    content: list[dict[str, Any]] = []
    for block in json_objects(blocks):
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            if isinstance(text, str) and text:  # a text that is not a string counts as none, as elsewhere
                content.append({"type": "text", "text": text})
        elif kind == "image":
            content.append(_pi_image(block, images))
        elif kind == "tool-result":
            nested = user_content(block.get("content"), images)
            if isinstance(nested, list):
                content += nested
            elif nested:
                content.append({"type": "text", "text": nested})
    if all(b["type"] == "text" for b in content):
        return "".join(b["text"] for b in content)
    return content


def image_messages(messages: tuple[Mapping[str, Any], ...], model: PiModel | None, max_bytes: int | None,
                   offloaded_image_text: str | None) -> tuple[Mapping[str, Any], ...]:
    """DSH's checks and offload before an image request's conversion, in ``adapter.ts`` ``stream``
    and ``toPiContextWithImages`` order: the model (when given) must take image input, images only
    in user messages, then ``offloadRequestImages`` (the messages it returns, in the same order).

    Raises:
        RenderError: DSH refuses the request, or the offload needs its text; ``seq`` holds the
            index in ``messages`` of the message at fault, for the caller to turn into a log seq.
    """
    first = next(i for i, m in enumerate(messages) if has_image(m.get("content")))
    if model is not None and "image" not in model.input:
        raise RenderError(f"pi-ai model {model.id!r} does not support image input (its input is "
                          f"{', '.join(model.input) or 'none'}); DSH's pi-ai adapter refuses the request",
                          dsh_code="UNSUPPORTED_CONTENT", seq=first,
                          hint="a route file (--routes) that gives the model image input, if DSH's did")
    for index, message in enumerate(messages):
        if message.get("role") != "user" and has_image(message.get("content")):
            raise RenderError(f"pi-ai cannot represent an image in an in-history {message.get('role')} message",
                              dsh_code="UNSUPPORTED_CONTENT", seq=index)
    try:
        return tuple(offload_images(messages, max_bytes, offloaded_image_text))
    except RenderError as exc:
        exc.seq = first
        raise
