"""The builder's non-happy-path events: retries, compaction, pruning, resume, fork, title calls.

Each method writes what DSH writes for that situation (spec §7.1-§7.2, §8.4, §9), in order, so a
log built with them replays to the requests DSH would have sent. Texts such as the compaction
checkpoint preamble and the prune marker are this project's own wording, not DSH's.
"""

from __future__ import annotations

import copy
from typing import Any, TypeVar

from ..jsjson import stringify
from . import _parts as P
from ._state import BuilderState

__all__ = ["MaintenanceMixin"]

CHECKPOINT_PREAMBLE = ("Checkpoint: earlier conversation was condensed into the summary below. "
                       "Continue from the messages that follow.")
PRUNE_MARKER = "\n\n[... middle of this tool result pruned ...]\n\n"
_AUTO: Any = object()
_Builder = TypeVar("_Builder", bound="MaintenanceMixin")


def _tokens(value: Any) -> int:
    return len(stringify(value)) // 4


class MaintenanceMixin(BuilderState):
    """Methods of :class:`~dsh_audit.testing.LogBuilder` beyond turns, steps and replies."""

    def retry(self, *, code: str = "SERVER", message: str = "provider answered HTTP 503",
              partial_text: str | None = None, usage: dict[str, Any] | None = None,
              llm_retry: bool = True, max_retries: int = 2, delay_ms: int = 1000) -> P.Reply:
        """A failed attempt inside the open step, then (by default) the retry plugin's events.

        Writes header/context if owed, optionally a partial text block, an optional usage chunk
        and ``finish {kind:'error', failure:{message, code}}``; then ``llm/retry`` and
        ``llm/retry-started``. The next :meth:`assistant` is another attempt of the same step.
        """
        self._before_attempt()
        seqs = []
        if partial_text:
            seqs.append(self._chunk({"type": "block-start", "index": 0, "blockType": "text"}))
            for piece in P.split(partial_text, 16):
                seqs.append(self._chunk({"type": "text-delta", "index": 0, "text": piece}))
        if usage is not None:
            seqs.append(self._chunk({"type": "usage", "usage": usage}))
        failure = {"message": message, "code": code}
        seqs.append(self._chunk({"type": "finish", "reason": {"kind": "error", "failure": failure}}))
        if llm_retry:
            retry_id = self.ids.next()
            number = self._attempts
            provider = (self._logged_header or self._proposal)["config"]["provider"]
            self.append("llm/retry", {
                "retryId": retry_id, "turn": self._turn, "step": self._step, "provider": provider,
                "mode": "normal", "policyKey": stringify(["normal", max_retries, [code]]), "retry": number,
                "maxRetries": max_retries, "delayMs": delay_ms, "failure": failure})
            self.append("llm/retry-started", {"retryId": retry_id, "turn": self._turn, "step": self._step,
                                              "retry": number})
        return P.Reply(None, tuple(seqs))

    def compaction(self, summary: str, *, keep: int = 0, usage: Any = _AUTO,
                   max_tokens: int = 8192, command: bool | None = None) -> int:
        """A summary compaction of the surface head; returns the checkpoint ``user/message`` seq.

        Between turns it is a manual ``/compact`` (``command/run`` … ``command/done``, ``turn:
        null``); inside an open turn, before ``step/start``, it is the automatic kind (spec §9.1).

        Args:
            summary: the summary text the compaction call returned.
            keep: how many of the newest surface nodes stay outside the compacted region.
            usage: the summary call's usage (None omits it; default: estimated).
            max_tokens: the summary call's ``maxTokens``.
            command: force (True) or suppress (False) the ``command/*`` wrapper.
        """
        region = list(self._surface[:len(self._surface) - keep] if keep else self._surface)
        if not region:
            raise ValueError("nothing on the surface to compact")
        manual = not self._turn_open if command is None else command
        compaction_id = self.ids.next()
        command_id = f"cmd-{self.ids.next()[:8]}-1" if manual else None
        ids: dict[str, Any] = {"compactionId": compaction_id}
        if command_id:
            ids["sourceCommandId"] = command_id
            self.append("command/run", {"commandId": command_id, "name": "compact", "args": "",
                                        "source": {"kind": "user"}})
        turn = self._turn if self._turn_open else None
        start = self.append("compaction/start", {**ids, "turn": turn})
        shadowed_tokens = sum(_tokens(self._message(s)) for s in region)
        config = (self._logged_header or self._proposal)["config"]
        blocks = [{"type": "text", "text": summary}]
        data: dict[str, Any] = {**ids, "summary": blocks, "rawOutput": copy.deepcopy(blocks), "llmStreamCall": True,
                                "shadowedRange": {"start": region[0], "end": region[-1]},
                                "shadowedSeqs": region, "shadowedTokenCount": shadowed_tokens,
                                "provider": config["provider"], "model": config["model"], "maxTokens": max_tokens}
        usage_value = {"inputTokens": shadowed_tokens + 60, "outputTokens": _tokens(summary) + 1} \
            if usage is _AUTO else usage
        if usage_value is not None:
            data["usage"] = usage_value
        summary_seq = self.append("compaction/summary", data)
        content = [{"type": "text", "text": CHECKPOINT_PREAMBLE + "\n\n<compacted-summary>"},
                   *copy.deepcopy(blocks), {"type": "text", "text": "</compacted-summary>"}]
        source = {"kind": "plugin", "plugin": "compact", **ids}
        checkpoint = self.append("user/message", P.user_message(content, source, self.ids.next()),
                                 source_event_seqs=[start, summary_seq, *region],
                                 surface_op={"op": "replace", "start": region[0], "end": region[-1]})
        self.append("compaction/end", {**ids, "turn": turn})
        if command_id:
            self.append("command/done", {"commandId": command_id, "kind": "success",
                                         "text": f"Compacted {len(region)} history items.",
                                         "sourceEventSeq": summary_seq})
            self.flush()
        return checkpoint

    def prune(self, seq: int, *, head_chars: int = 24, tail_chars: int = 12) -> int:
        """Prune the middle of tool result ``seq`` (spec §9.1 step 1); returns the replacement seq.

        Writes ``compaction/prune`` and then a ``tool/result`` replacing exactly that node, with
        identical data except the text, which keeps its head and tail around a marker.
        """
        original = self._events[seq]
        if original["type"] != "tool/result" or seq not in self._surface:
            raise ValueError(f"seq {seq} is not a tool/result on the surface")
        data = copy.deepcopy(original["data"])
        block = data["message"]["content"][0]
        text = "".join(b.get("text", "") for b in block["content"])
        block["content"] = [{"type": "text", "text": text[:head_chars] + PRUNE_MARKER + text[-tail_chars:]}]
        self.append("compaction/prune", {"shadowedRange": {"start": seq, "end": seq}, "shadowedSeqs": [seq],
                                         "shadowedTokenCount": _tokens(original["data"]["message"])})
        return self.append("tool/result", data, source_event_seqs=[seq],
                           surface_op={"op": "replace", "start": seq, "end": seq})

    def end_seed(self) -> int:
        """Write ``session/end-seed`` in a batch of its own (a process starting over the log)."""
        self.flush()
        seq = self.append("session/end-seed", {})
        self.flush()
        return seq

    def resume(self) -> int:
        """A new process over this log: ``session/end-seed``; the next header says ``resume``."""
        if self._turn_open:
            raise ValueError("close the open turn before resuming (DSH would add crash-repair closers)")
        seq = self.end_seed()
        self._instance_header = False
        return seq

    def fork(self: _Builder, *, session_id: str, boundary: int | None = None,
             origin: str | None = "subagent") -> _Builder:
        """A child log seeded with ``events[0..boundary]`` (spec §9.6); returns its builder.

        ``boundary`` defaults to the last ``turn/end``. The child's header carries
        ``parentSession``, ``seedLength = boundary + 1``, ``origin`` and a delegation depth one
        deeper; its events start with the seed, then ``session/end-seed``; its first request
        writes a ``resume`` header.
        """
        if boundary is None:
            ends = [e["seq"] for e in self._events if e["type"] == "turn/end"]
            if not ends:
                raise ValueError("no turn/end to fork at")
            boundary = ends[-1]
        child = type(self)(session_id=session_id, cwd=self.cwd, created_at=self.clock.now,
                           context_window=self.context_window, clock_step_ms=self.clock.step_ms,
                           parent_session=self.session_id, seed_length=boundary + 1, origin=origin,
                           delegation_depth=self.delegation_depth + 1)
        child.configure(**_proposal_kwargs(self._proposal))
        for event in copy.deepcopy(self._events[:boundary + 1]):
            child.append(event["type"], event["data"], source_event_seqs=event.get("sourceEventSeqs"),
                         surface_op=event.get("surfaceOp"), time=event["time"])
            child._absorb(event)
        child.flush()
        child.end_seed()
        return child

    def _absorb(self, event: dict[str, Any]) -> None:
        """Take the writer state a seeded event implies (turn, header, context)."""
        data = event["data"]
        if event["type"] == "turn/start":
            self._turn = data["turn"]
        elif event["type"] == "request/header":
            self._logged_header = copy.deepcopy(data["header"])
            self._proposal = copy.deepcopy(data["header"])
        elif event["type"] == "request/context":
            self._context = copy.deepcopy(data)

    def title(self, title: str, *, message_seqs: list[int] | None = None,
              title_provider: str = "session-title-first-prompt-llm", max_tokens: int = 64) -> int:
        """An auxiliary title call (``session/title-llm-request``) and its ``session/title``."""
        seqs = message_seqs if message_seqs is not None else [
            s for s in self._surface
            if self._events[s]["type"] == "user/message" and self._events[s]["data"]["source"]["kind"] == "user"]
        texts = [{"seq": s, "text": self._events[s]["data"]["content"][0].get("text", "")} for s in seqs]
        config = (self._logged_header or self._proposal)["config"]
        route = {"provider": config["provider"], "model": config["model"]}
        prompt = P.user_message("Title this session from these messages:\n" + stringify(texts),
                                {"kind": "plugin", "plugin": "session-title"}, self.ids.next())
        seq = self.append("session/title-llm-request", {
            "titleProvider": title_provider, "messageSeqs": seqs, "route": route,
            "system": "Reply with a short plain-text title for this coding session.",
            "messages": [prompt], "maxTokens": max_tokens})
        self.append("session/title", {"title": title, "messageSeqs": seqs,
                                      "source": {"kind": "provider", "provider": title_provider, "model": route}})
        return seq

    def _message(self, seq: int) -> Any:
        event = self._events[seq]
        return event["data"] if event["type"] == "user/message" else event["data"]["message"]


def _proposal_kwargs(header: dict[str, Any]) -> dict[str, Any]:
    config = header["config"]
    return {"provider": config["provider"], "model": config["model"],
            "reasoning_effort": config.get("reasoningEffort"), "temperature": config.get("temperature"),
            "max_tokens": config.get("maxTokens"), "stop": config.get("stop"),
            "adapter_defaults": header.get("adapterDefaults"), "system": header.get("system"),
            "tools": header.get("tools")}
