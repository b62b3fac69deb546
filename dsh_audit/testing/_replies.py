"""The builder's assistant side: a reply's chunk stream and ``assistant/message``, then the
``tool/call`` and ``tool/result`` events that answer its tool calls.

Chunks follow the stream shapes and assembly of spec §5.4-§5.5; the events come in the order the
agent loop writes them (spec §7.1).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..jsjson import stringify
from . import _parts as P
from ._state import BuilderState

__all__ = ["ReplyMixin"]

_AUTO: Any = object()


class ReplyMixin(BuilderState):
    """Methods of :class:`~dsh_audit.testing.LogBuilder` that write model replies and tool results."""

    def _chunk(self, chunk: dict[str, Any]) -> int:
        return self.append("assistant/chunk", {"turn": self._turn, "step": self._step, "chunk": chunk})

    def _stream(self, blocks: list[dict[str, Any]], delta_size: int) -> list[int]:
        seqs = []
        for index, block in enumerate(blocks):
            kind = block["type"]
            seqs.append(self._chunk({"type": "block-start", "index": index, "blockType": kind}))
            if kind == "tool-call":
                for piece in ["", *P.split(block["arguments"], delta_size)]:
                    seqs.append(self._chunk({"type": "tool-call-delta", "index": index, "id": block["id"],
                                             "name": block["name"], "argumentsDelta": piece}))
            else:
                for piece in P.split(block["text"], delta_size):
                    seqs.append(self._chunk({"type": f"{kind}-delta", "index": index, "text": piece}))
        for index, block in enumerate(blocks):
            seqs.append(self._chunk({"type": "block-end", "index": index, "block": block}))
        return seqs

    def _auto_usage(self, blocks: list[dict[str, Any]]) -> dict[str, Any]:
        prompt = sum(len(stringify(self._events[s]["data"])) for s in self._surface)
        output = sum(len(stringify(b)) for b in blocks)
        return {"inputTokens": prompt // 4 + 100, "outputTokens": output // 4 + 1}

    def assistant(self, text: str | None = None, *, reasoning: str | None = None,
                  tool_calls: Sequence[P.ToolCall] = (), usage: Any = _AUTO,
                  finish: str | dict[str, Any] | None = None, delta_size: int = 16) -> P.Reply:
        """One successful attempt: header/context if owed, the chunk stream, ``assistant/message``.

        The stream is ``block-start`` and deltas per block (reasoning, text, then each tool call),
        every ``block-end``, ``usage``, ``finish``; the message cites exactly those chunk seqs.

        Args:
            text: the answer text block, if any.
            reasoning: the reasoning block, if any (comes first).
            tool_calls: calls the reply makes; answer each with :meth:`tool_result`.
            usage: a ``TokenUsage`` dict, None for no usage chunk, or automatic figures.
            finish: finish kind; ``tool-calls`` when calls were made, else ``stop``.
            delta_size: characters per streamed delta.
        """
        self._before_attempt()
        blocks: list[dict[str, Any]] = []
        if reasoning is not None:
            blocks.append({"type": "reasoning", "text": reasoning})
        if text is not None:
            blocks.append({"type": "text", "text": text})
        call_ids = []
        for call in tool_calls:
            call_id = call.id or self.ids.call()
            call_ids.append(call_id)
            blocks.append({"type": "tool-call", "id": call_id, "name": call.name, "arguments": call.text()})
        seqs = self._stream(blocks, delta_size)
        usage_value = self._auto_usage(blocks) if usage is _AUTO else usage
        if usage_value is not None:
            seqs.append(self._chunk({"type": "usage", "usage": usage_value}))
        reason = finish or ("tool-calls" if tool_calls else "stop")
        seqs.append(self._chunk({"type": "finish", "reason": {"kind": reason} if isinstance(reason, str) else reason}))
        config = self._logged_header["config"] if self._logged_header else self._proposal["config"]
        message_id = self.ids.next()
        data: dict[str, Any] = {"turn": self._turn, "step": self._step, "message": {
            "role": "assistant", "content": blocks,
            "source": {"kind": "model", "provider": config["provider"], "model": config["model"]},
            "id": message_id}}
        if usage_value is not None:
            data["usage"] = usage_value
        seq = self.append("assistant/message", data, source_event_seqs=seqs, surface_op="append")
        for block in blocks:
            if block["type"] == "tool-call":
                self._calls[block["id"]] = {"name": block["name"], "arguments": block["arguments"],
                                            "turn": self._turn, "step": self._step, "seq": None}
        return P.Reply(seq, tuple(seqs), tuple(call_ids), message_id)

    def tool_call(self, call_id: str) -> int:
        """Write the log-only ``tool/call`` for a call the last reply made (once)."""
        call = self._calls[call_id]
        if call["seq"] is None:
            call["seq"] = self.append("tool/call", {"turn": call["turn"], "step": call["step"], "callId": call_id,
                                                    "name": call["name"], "arguments": call["arguments"]})
        return int(call["seq"])

    def tool_result(self, call_id: str, content: str | list[dict[str, Any]], *, is_error: bool = False,
                    error: dict[str, Any] | None = None, meta: Any = None) -> int:
        """``tool/call`` (if not yet written) then the ``tool/result`` citing it; returns its seq.

        Args:
            call_id: a call id from :attr:`Reply.call_ids`.
            content: the result text (or content blocks); DSH writes ``"(no output)"`` for none.
            is_error: the ``isError`` flag the model sees.
            error: the log-only ``{name, code}`` error record.
            meta: tool-specific log-only metadata.
        """
        call_seq = self.tool_call(call_id)
        call = self._calls[call_id]
        data: dict[str, Any] = {"turn": call["turn"], "step": call["step"], "message": {
            "source": {"kind": "tool", "callId": call_id},
            "content": [{"type": "tool-result", "toolCallId": call_id, "content": P.text_blocks(content),
                         "isError": is_error}],
            "role": "user", "id": self.ids.next()}}
        if error is not None:
            data["error"] = error
        if meta is not None:
            data["meta"] = meta
        return self.append("tool/result", data, source_event_seqs=[call_seq], surface_op="append")
