"""Generate a large, valid DSH v0 session log for benchmarks (plain or zstd, packed rows).

The log is a long coding session: every turn is a user prompt, a runtime-context snapshot now
and then, reasoning plus a tool call (packed reasoning and tool-call rows), a tool result of a
few KB, then a text answer. Every ``--compact-every`` turns an automatic compaction replaces the
surface head with a summary (as DSH's compaction-basic does), so the live surface stays bounded
the way it does in real long sessions; a prune replaces an old tool result in between (every
``--prune-every`` turns). The result is accepted by ``dsh-audit requests`` without lenient mode.

``--compact-every 0`` never compacts: the history grows until the end of the log, as in a session
that never reaches its compaction threshold, so every request carries every earlier message
(prunes still shorten one old tool result now and then; ``--prune-every 0`` turns them off too).
A zstd log is written as one frame per turn by default; ``--frames batch`` writes one frame per
append batch instead, at the points where DSH flushes (turn start, user message, the streamed
assistant message with its tool call, the tool result, the next step start, the turn's end).

    python benchmarks/generate.py --mb 100 -o benchmarks/data/100mb.jsonl.zstd
    python benchmarks/generate.py --mb 10 --compact-every 0 --frames batch -o benchmarks/data/growing-10mb.jsonl.zstd

``write_log`` is the same generator for other scripts (benchmarks/bench_commands.py imports it).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from pathlib import Path
from typing import Any

import orjson
import zstandard

SYSTEM = "You are a coding agent powered by DeepSeek Harness. " * 40
TOOLS = [{"name": f"tool_{i}", "description": f"Tool number {i}. " * 8,
          "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
                         "required": ["path"]}} for i in range(12)]
WORDS = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma "
         "tau upsilon phi chi psi omega file read write patch test build deploy error value").split()


class Writer:
    def __init__(self, out: Any, rng: random.Random) -> None:
        self.out = out
        self.rng = rng
        self.seq = 0
        self.time = 1_790_000_000_000
        self.batch: list[bytes] = []
        self.written = 0  # bytes flushed by flush(), the header excluded
        self.surface: list[int] = []
        self.kinds: dict[int, str] = {}

    def words(self, n: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(n))

    def emit(self, record: dict[str, Any]) -> None:
        self.batch.append(orjson.dumps(record))

    def event(self, etype: str, data: Any, *, sources: list[int] | None = None, op: Any = None) -> int:
        self.time += self.rng.randint(1, 40)
        record: dict[str, Any] = {"type": etype, "seq": self.seq, "time": self.time, "data": data}
        if sources is not None:
            record["sourceEventSeqs"] = sources
        if op is not None:
            record["surfaceOp"] = op
        self.emit(record)
        seq = self.seq
        self.seq += 1
        if op == "append":
            self.surface.append(seq)
            self.kinds[seq] = etype
        elif isinstance(op, dict):
            start = self.surface.index(op["start"])
            end = self.surface.index(op["end"])
            self.surface[start:end + 1] = [seq]
            self.kinds[seq] = etype
        return seq

    def row(self, tag: str, turn: int, step: int, index: int, texts: list[str], **extra: Any) -> list[int]:
        seqs = list(range(self.seq, self.seq + len(texts)))
        data: dict[str, Any] = {"turn": turn, "step": step, "index": index, **extra,
                                "dt": [self.rng.randint(0, 9) for _ in texts[1:]]}
        data["args" if tag == "tool-call-chunks" else "texts"] = texts
        self.emit({"type": tag, "seq0": self.seq, "time0": self.time, "data": data})
        self.seq += len(texts)
        self.time += sum(data["dt"])
        return seqs

    def flush(self, frames: bool = True) -> None:
        if not self.batch:
            return
        payload = b"\n".join(self.batch) + b"\n"
        self.out(payload)
        self.written += len(payload)
        self.batch = []


def assistant(w: Writer, turn: int, step: int, *, tool: bool) -> tuple[int, str | None]:
    chunk = lambda c: w.event("assistant/chunk", {"turn": turn, "step": step, "chunk": c})  # noqa: E731
    seqs = [chunk({"type": "block-start", "index": 0, "blockType": "reasoning"})]
    reasoning = [w.words(3) + " " for _ in range(w.rng.randint(20, 60))]
    seqs += w.row("reasoning-chunks", turn, step, 0, reasoning)
    seqs.append(chunk({"type": "block-end", "index": 0, "block": {"type": "reasoning", "text": "".join(reasoning)}}))
    content: list[dict[str, Any]] = [{"type": "reasoning", "text": "".join(reasoning)}]
    call_id = None
    if tool:
        call_id = f"call_{turn}_{step}"
        args = ['{"path": "', f"src/{w.words(1)}.py", '", "limit": ', str(w.rng.randint(10, 900)), "}"]
        seqs.append(chunk({"type": "block-start", "index": 1, "blockType": "tool-call"}))
        seqs += w.row("tool-call-chunks", turn, step, 1, args, id=call_id, name="tool_3")
        block = {"type": "tool-call", "id": call_id, "name": "tool_3", "arguments": "".join(args)}
        seqs.append(chunk({"type": "block-end", "index": 1, "block": block}))
        content.append(block)
    else:
        text = [w.words(4) + " " for _ in range(w.rng.randint(10, 40))]
        seqs.append(chunk({"type": "block-start", "index": 1, "blockType": "text"}))
        seqs += w.row("text-chunks", turn, step, 1, text)
        seqs.append(chunk({"type": "block-end", "index": 1, "block": {"type": "text", "text": "".join(text)}}))
        content.append({"type": "text", "text": "".join(text)})
    usage = {"inputTokens": w.rng.randint(50, 900), "outputTokens": w.rng.randint(20, 400),
             "cacheReadTokens": w.rng.randint(0, 50_000) // 64 * 64}
    seqs.append(chunk({"type": "usage", "usage": usage}))
    seqs.append(chunk({"type": "finish", "reason": {"kind": "tool-calls" if tool else "stop"}}))
    message = {"role": "assistant", "content": content,
               "source": {"kind": "model", "provider": "deepseek-official", "model": "deepseek-v4-flash"},
               "id": f"a-{w.seq}"}
    seq = w.event("assistant/message", {"turn": turn, "step": step, "message": message, "usage": usage},
                  sources=seqs, op="append")
    return seq, call_id


def tool_message(call_id: str, text: str, seq: int) -> dict[str, Any]:
    return {"source": {"kind": "tool", "callId": call_id},
            "content": [{"type": "tool-result", "toolCallId": call_id, "content": [{"type": "text", "text": text}],
                         "isError": False}], "role": "user", "id": f"r-{seq}"}


def compaction(w: Writer, turn: int, counter: int) -> None:
    head = w.surface[: max(1, len(w.surface) - 6)]
    start = w.event("compaction/start", {"compactionId": f"k{counter}", "turn": turn})
    summary = w.event("compaction/summary", {
        "compactionId": f"k{counter}", "summary": [{"type": "text", "text": w.words(200)}],
        "shadowedRange": {"start": head[0], "end": head[-1]}, "shadowedSeqs": head, "shadowedTokenCount": 9000,
        "provider": "deepseek-official", "model": "deepseek-v4-flash", "maxTokens": 8192,
        "usage": {"inputTokens": 100, "outputTokens": 300, "cacheReadTokens": 8000},
        "rawOutput": "summary", "llmStreamCall": True})
    w.event("user/message", {"content": [{"type": "text", "text": "<compacted-summary>" + w.words(200) + "</compacted-summary>"}],
                             "source": {"kind": "plugin", "plugin": "compact", "compactionId": f"k{counter}"},
                             "role": "user", "id": f"c-{w.seq}"},
            sources=[start, summary, *head], op={"op": "replace", "start": head[0], "end": head[-1]})
    w.event("compaction/end", {"compactionId": f"k{counter}", "turn": turn})


def prune(w: Writer, originals: dict[int, dict[str, Any]]) -> None:
    candidates = [s for s in w.surface if w.kinds.get(s) == "tool/result" and s in originals]
    if not candidates:
        return
    target = candidates[0]
    data = originals.pop(target)
    w.event("compaction/prune", {"shadowedRange": {"start": target, "end": target}, "shadowedSeqs": [target],
                                 "shadowedTokenCount": 700})
    message = dict(data["message"])
    block = dict(message["content"][0])
    block["content"] = [{"type": "text", "text": "[... tool result middle pruned ...]"}]
    message["content"] = [block]
    w.event("tool/result", {**data, "message": message}, sources=[target], op={"op": "replace", "start": target, "end": target})


def generate(write: Any, target_bytes: int, *, seed: int, compact_every: int, result_kb: int, zstd_frames: bool,
             prune_every: int = 7, frames: str = "turn") -> int:
    """Write a log of about ``target_bytes`` through ``write`` (one call per frame); return the turn count.

    ``compact_every=0`` never compacts (growing history), ``prune_every=0`` never prunes;
    ``frames="batch"`` calls ``write`` once per DSH append batch instead of once per turn.
    """
    if frames not in ("turn", "batch"):
        raise ValueError(f"frames must be 'turn' or 'batch', not {frames!r}")
    rng = random.Random(seed)
    w = Writer(write, rng)
    batch_end = w.flush if frames == "batch" else (lambda: None)
    header = {"type": "session", "version": 0, "id": f"session-bench-{seed}", "createdAt": w.time,
              "cwd": "/home/bench/project", "delegationDepth": 0}
    write(orjson.dumps(header) + b"\n")
    originals: dict[int, dict[str, Any]] = {}
    turn = 0
    while w.written < target_bytes:
        turn += 1
        w.event("turn/start", {"turn": turn})
        if compact_every and turn > 1 and turn % compact_every == 0:
            compaction(w, turn, turn)
        elif prune_every and turn > 1 and turn % prune_every == 0:
            prune(w, originals)
        batch_end()
        w.event("step/start", {"turn": turn, "step": 1})
        w.event("user/message", {"content": [{"type": "text", "text": w.words(rng.randint(5, 60))}],
                                 "source": {"kind": "user"}, "role": "user", "id": f"u-{w.seq}"}, op="append")
        if turn == 1:
            w.event("request/header", {"header": {"config": {"provider": "deepseek-official", "model": "deepseek-v4-flash",
                                                             "maxTokens": 256000, "reasoningEffort": "high"},
                                                  "adapterDefaults": {"reasoningEffort": True, "maxTokens": True},
                                                  "system": SYSTEM, "tools": TOOLS}, "reason": "initial"})
            w.event("request/context", {"provider": "deepseek-official", "model": "deepseek-v4-flash", "contextWindow": 1_000_000})
        batch_end()
        _, call_id = assistant(w, turn, 1, tool=True)
        assert call_id is not None
        w.event("tool/call", {"turn": turn, "step": 1, "callId": call_id, "name": "tool_3", "arguments": "{}"})
        batch_end()
        text = w.words(result_kb * 1024 // 6)
        seq = w.seq
        data = {"turn": turn, "step": 1, "message": tool_message(call_id, text, seq)}
        w.event("tool/result", data, sources=[seq - 1], op="append")
        if prune_every:
            originals[seq] = data  # only prune() reads these: growing logs without prunes keep none
        w.event("step/end", {"turn": turn, "step": 1})
        batch_end()
        w.event("step/start", {"turn": turn, "step": 2})
        batch_end()
        assistant(w, turn, 2, tool=False)
        w.event("step/end", {"turn": turn, "step": 2})
        w.event("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
        w.flush(zstd_frames)
    return turn


def write_log(path: str | Path, mb: float, *, seed: int = 1, compact_every: int = 40, prune_every: int = 7,
              result_kb: int = 4, frames: str = "turn") -> int:
    """Write a log of about ``mb`` decoded MB to ``path`` (.jsonl or .jsonl.zstd); return the turn count."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        if path.name.endswith(".zstd"):
            compressor = zstandard.ZstdCompressor(level=3, write_checksum=True)
            write = lambda b: handle.write(compressor.compress(b))  # noqa: E731  one frame per batch, as DSH
        else:
            write = handle.write
        return generate(write, int(mb * 1_000_000), seed=seed, compact_every=compact_every, result_kb=result_kb,
                        zstd_frames=True, prune_every=prune_every, frames=frames)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, required=True, help="approximate decompressed size in MB")
    parser.add_argument("-o", "--output", required=True, help=".jsonl or .jsonl.zstd")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--compact-every", type=int, default=40, help="turns between compactions; 0: never "
                        "(growing history)")
    parser.add_argument("--prune-every", type=int, default=7, help="turns between prunes; 0: never")
    parser.add_argument("--result-kb", type=int, default=4)
    parser.add_argument("--frames", choices=("turn", "batch"), default="turn",
                        help="zstd frames: one per turn, or one per DSH append batch")
    args = parser.parse_args()
    path = Path(args.output)
    turns = write_log(path, args.mb, seed=args.seed, compact_every=args.compact_every, prune_every=args.prune_every,
                      result_kb=args.result_kb, frames=args.frames)
    print(f"{path}: {turns} turns, {os.path.getsize(path) / 1e6:.1f} MB on disk", file=sys.stderr)


if __name__ == "__main__":
    main()
