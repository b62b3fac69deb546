"""Image content as both DSH adapters see it: the recursive image walk, the request image bound
and the attachment bytes behind an ``image`` block.

Written from DSH 0.1.0-rc.8 ``packages/llm/llm/src/content.ts`` (``contentHasImage``,
``offloadRequestImages``), which the DeepSeek adapter (``llm-deepseek/src/serialize.ts``) and the
pi-ai adapter (``llm-pi-ai/src/context.ts``) both call, and
``packages/attachment/attachment/src/types.ts`` (``ImageAttachmentRef``). A log records an image
only as that reference (``{attachmentId: "sha256:<hex>", mediaType, bytes, width, height,
name?}``, spec §5.3); the bytes live in DSH's attachment store
(``<DSH_HOME>/attachments/v1/objects/<hex[:2]>/<hex>``, spec §1.1), which each adapter reads at
request time. A renderer is therefore handed them: ``images`` maps ``attachmentId`` to bytes.
A captured request body holds them too (:func:`images_in_body`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import math
from collections.abc import Mapping, Sequence
from typing import Any

from .._json import json_objects
from ..errors import RenderError

#: DSH's model-facing stand-in for an image removed to fit a request's image bound: the text block
#: ``offloadRequestImages`` puts where each oldest image was. A code constant of DSH, not in any
#: log: ``OFFLOADED_IMAGE_TEXT``, DSH 0.1.0-rc.8 ``packages/llm/llm/src/content.ts:7-8``.
OFFLOADED_IMAGE_TEXT = ("[image omitted to keep the request within its image limit; older images are omitted "
                        "first. If this image is still needed, read its file again when a path is available; "
                        "otherwise ask the user to attach it again.]")

#: How a user gives a renderer the bytes a logged image reference names: DSH's attachment store
#: (``--attachments``, every command that renders), or a capture of the request, whose clause comes
#: last so that a command without ``--capture`` (``render``) prints the hint without it.
IMAGE_BYTES_HINT = ("read the bytes from DSH's attachment store with --attachments DIR (<DSH_HOME>/attachments/v1)"
                    ", or from a capture of the request with --capture FILE")

__all__ = ["IMAGE_BYTES_HINT", "OFFLOADED_IMAGE_TEXT", "attachment_bytes", "has_image", "image_attachment", "images_in_body", "offload_images",
           "to_base64"]

Message = Mapping[str, Any]
Block = Mapping[str, Any]


def has_image(blocks: Any) -> bool:
    """Whether content holds an ``image`` block, nested tool results included (``contentHasImage``)."""
    for block in json_objects(blocks):
        if block.get("type") == "image":
            return True
        if block.get("type") == "tool-result" and has_image(block.get("content")):
            return True
    return False


def image_attachment(block: Block) -> Mapping[str, Any]:
    """An image block's ``attachment`` reference (an empty mapping when it is not an object)."""
    value = block.get("attachment")
    return value if isinstance(value, Mapping) else {}


def attachment_bytes(block: Block, images: Mapping[str, bytes]) -> bytes:
    """The bytes of an image block's attachment, looked up by its ``attachmentId``.

    Raises:
        RenderError: ``images`` holds no bytes for it (the hint is the mapping's ``missing_hint``
            when it has one: an attachment store names itself).
    """
    key = image_attachment(block).get("attachmentId")
    if not isinstance(key, str):  # nothing to look up: no store or capture could supply it
        raise RenderError("an image block names no attachment (no string attachmentId in its attachment)",
                          hint="the log is damaged here: DSH writes attachment: {attachmentId: 'sha256:<hex>'}")
    data = images.get(key)
    if data is None:
        hint = getattr(images, "missing_hint", None)
        raise RenderError(f"no bytes supplied for image attachment {key!r}",
                          hint=hint if isinstance(hint, str) else IMAGE_BYTES_HINT)
    return data


def to_base64(data: bytes) -> str:
    """Node's ``Buffer.from(data).toString('base64')``: standard alphabet, padded."""
    return base64.b64encode(data).decode("ascii")


# --- offloadRequestImages -----------------------------------------------------------------------


def _image_sizes(blocks: Sequence[Block], out: list[int]) -> None:
    for block in blocks:
        if block.get("type") == "image":
            out.append(math.ceil(int(image_attachment(block).get("bytes") or 0) / 3) * 4)
        elif block.get("type") == "tool-result":
            _image_sizes(json_objects(block.get("content")), out)


def _offload(blocks: list[Block], remaining: list[int], text: str) -> list[Block]:
    out: list[Block] = []
    for block in blocks:
        if block.get("type") == "image" and remaining[0] > 0:
            remaining[0] -= 1
            out.append({"type": "text", "text": text})
        elif block.get("type") == "tool-result":
            out.append({**block, "content": _offload(json_objects(block.get("content")), remaining, text)})
        else:
            out.append(block)
    return out


def offload_images(messages: Sequence[Message], max_bytes: int | None, text: str | None = None) -> list[Message]:
    """DSH ``offloadRequestImages``: replace the oldest images, counted by the base64 size of
    their logged ``bytes``, until the total fits ``max_bytes`` (None: no bound). Each replaced
    image becomes a text block of ``text`` (None: DSH's :data:`OFFLOADED_IMAGE_TEXT`).

    Example:
        >>> image = {"type": "image", "attachment": {"attachmentId": "sha256:ab", "bytes": 3}}
        >>> [message] = offload_images([{"role": "user", "content": [image, image]}], 4)
        >>> message["content"][0] == {"type": "text", "text": OFFLOADED_IMAGE_TEXT}, message["content"][1] is image
        (True, True)
    """
    if max_bytes is None:
        return list(messages)
    sizes: list[int] = []
    for message in messages:
        _image_sizes(json_objects(message.get("content")), sizes)
    total, count = sum(sizes), 0
    for size in sizes:
        if total <= max_bytes:
            break
        total -= size
        count += 1
    if count == 0:
        return list(messages)
    remaining = [count]
    stand_in = OFFLOADED_IMAGE_TEXT if text is None else text
    return [{**m, "content": _offload(json_objects(m.get("content")), remaining, stand_in)} for m in messages]


# --- image bytes a captured body carries --------------------------------------------------------


def _base64_of(node: Mapping[str, Any]) -> str | None:
    """The base64 data of one wire image: Anthropic's ``{type: image, source: {type: base64,
    data}}``, a chat-completions ``{type: image_url, image_url: {url: "data:...;base64,..."}}`` or
    a Responses ``{type: input_image, image_url: "data:...;base64,..."}``."""
    kind = node.get("type")
    if kind == "image":
        source = node.get("source")
        if isinstance(source, Mapping) and source.get("type") == "base64" and isinstance(source.get("data"), str):
            return str(source["data"])
        return None
    if kind == "image_url":
        inner = node.get("image_url")
        url = inner.get("url") if isinstance(inner, Mapping) else None
    elif kind == "input_image":
        url = node.get("image_url")
    else:
        return None
    if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
        return url.partition(";base64,")[2]
    return None


def images_in_body(body: Any) -> dict[str, bytes]:
    """The image bytes a wire body carries (a parsed JSON body of any adapter), keyed as DSH's
    log names them: ``sha256:<hex digest of the bytes>`` (DSH's attachment store keys an image by
    that digest and checks it on every read), so a log's reference finds its own bytes and no
    others. Data that is not valid base64 is skipped.

    Example:
        >>> images_in_body({"messages": [{"role": "user", "content": [{"type": "image_url",
        ...     "image_url": {"url": "data:image/png;base64,AQID"}}]}]})
        {'sha256:039058c6f2c0cb492c533b0a4d14ef77cc0f78abccced5287d84a1a2011cfb81': b'\\x01\\x02\\x03'}
    """
    found: dict[str, bytes] = {}
    stack = [body]
    while stack:  # iterative: a captured body's nesting depth is not ours to trust
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(reversed(node))
        elif isinstance(node, Mapping):
            data = _base64_of(node)
            if data is None:
                stack.extend(reversed(list(node.values())))
                continue
            try:
                raw = base64.b64decode(data, validate=True)
            except (binascii.Error, ValueError):
                continue
            found.setdefault("sha256:" + hashlib.sha256(raw).hexdigest(), raw)
    return found
