"""pi-ai routes benchmark: ``dsh-audit cache --json`` time per turn count, and its scaling exponent.

Generates DSH logs with :class:`dsh_audit.testing.LogBuilder` whose every request goes through a
pi-ai renderer: the catalog Anthropic route (``anthropic``/``claude-sonnet-4-5``) and the
hand-declared OpenAI chat-completions route of ``corpus/live-pi/c3-openai-compat`` (rendered with
its route file); and a Claude Code session file (``claude-code``: imported, on the Anthropic route). Each turn is one step: a prompt, an assistant reply with reasoning, text and a
tool call, and the tool's result; every request therefore carries the whole history, as in a
session that never compacts. The cache accounting renders each request's body (pi-ai's
``transformMessages`` and message conversion) and compares the prompts, so a renderer that
rebuilt every message per request would be quadratic in turns.

Each measurement is a fresh ``dsh-audit`` subprocess (wall time including start-up, best of
``--repeat``). ``--pythonpath DIR`` runs the commands against another checkout (a reference tree),
and ``--compare DIR`` also runs them there and checks the two outputs are byte-identical.

    .venv/bin/python benchmarks/bench_piai.py --turns 200 400 800 1600
    .venv/bin/python benchmarks/bench_piai.py --turns 200 400 --compare /tmp/ref-tree

Generated logs go to benchmarks/data/ (git-ignored) and are reused when present. Not part of the
test suite.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks" / "data"
CORPUS = ROOT.parent / "shared" / "corpus"
ROUTES = CORPUS / "live-pi" / "c3-openai-compat" / "inputs" / "pi-ai-routes.patch.yml"
DSH = ROOT / ".venv" / "bin" / "dsh-audit"

sys.path.insert(0, str(ROOT))
from dsh_audit.testing import LogBuilder, ToolCall  # noqa: E402  this checkout's log writer

#: family -> (provider, model, pi-ai API, the thinking signature, whether the route file is needed)
FAMILIES: dict[str, tuple[str, str, str, str, bool]] = {
    "anthropic": ("anthropic", "claude-sonnet-4-5", "anthropic-messages", "sig-", False),
    "openai": ("local-openai", "local-coder", "openai-completions", "reasoning_content", True),
    "claude-code": ("anthropic", "claude-sonnet-4-5", "anthropic-messages", "", False),  # an imported chain
}

_SCHEMA = {"type": "object", "properties": {"path": {"type": "string", "description": "file to read"}},
           "required": ["path"]}


def write_log(path: Path, family: str, turns: int) -> Path:
    """A log of ``turns`` one-step turns on ``family``'s route, each with a tool call and result;
    every reply carries pi-ai's replay envelope (so the route is known from the log, and the
    thinking is replayed natively)."""
    provider, model, api, signature, _ = FAMILIES[family]
    tools = [{"name": name, "description": f"The {name} tool.", "parameters": _SCHEMA}
             for name in ("read", "glob", "bash", "write")]
    builder = LogBuilder(session_id=f"bench-{provider}-{turns}", provider=provider, model=model,
                         system="You are a careful coding agent. " * 20, tools=tools,
                         context_window=131072 if family == "openai" else 1_000_000)  # the route file's
    for turn in range(turns):
        with builder.turn(f"Turn {turn}: please look at file number {turn} and tell me what it holds."):
            with builder.step():
                reply = builder.assistant(f"Reading file {turn}.", reasoning=f"I should read file {turn} first.",
                                          tool_calls=[ToolCall("read", {"path": f"src/file{turn}.py"})])
                response = {"kind": "pi-ai", "version": 2, "api": api, "provider": provider, "model": model,
                            "responseId": f"r-{turn}", "stopReason": "toolUse"}
                thinking = signature + (str(turn) if signature == "sig-" else "")
                blocks = [{"type": "reasoning", "thinkingSignature": thinking}, {"type": "text"}, {"type": "tool-call"}]
                builder.event(reply.seq)["data"]["message"]["source"]["replayState"] = {
                    "response": response, "blocks": blocks}
                builder.tool_result(reply.call_ids[0], f"# file {turn}\n" + "x = 1\n" * 40)
    path.parent.mkdir(parents=True, exist_ok=True)
    return builder.write_jsonl(path)


def write_claude_code(path: Path, turns: int) -> Path:
    """A Claude Code session file of ``turns`` tool rounds (2 x turns + 1 records: a prompt, then an
    assistant ``tool_use`` and its ``tool_result`` per round), one chain, as ``dsh-audit`` imports it:
    each request is a new tuple of the history's message objects, on the Anthropic route."""
    session = "11111111-2222-4333-8444-555555555555"
    records: list[dict[str, Any]] = []

    def add(kind: str, message: dict[str, Any], **extra: Any) -> None:
        uuid = f"00000000-0000-4000-8000-{len(records) + 1:012d}"
        records.append({"parentUuid": records[-1]["uuid"] if records else None, "isSidechain": False,
                        "userType": "external", "cwd": "/work/proj", "sessionId": session, "version": "2.0.29",
                        "type": kind, "message": message, "uuid": uuid,
                        "timestamp": f"2026-01-05T{10 + len(records) // 3600:02d}:{len(records) // 60 % 60:02d}:"
                                     f"{len(records) % 60:02d}.000Z", **extra})

    add("user", {"role": "user", "content": "Please read many files."})
    for turn in range(1, turns + 1):
        add("assistant", {"model": "claude-sonnet-4-5", "id": f"msg_{turn}", "type": "message", "role": "assistant",
                          "content": [{"type": "text", "text": f"Reading file {turn}."},
                                      {"type": "tool_use", "id": f"toolu_{turn}", "name": "Read",
                                       "input": {"file_path": f"/work/proj/f{turn}.py"}}],
                          "stop_reason": "tool_use", "stop_sequence": None,
                          "usage": {"input_tokens": 10, "cache_creation_input_tokens": 100,
                                    "cache_read_input_tokens": 1000 * turn, "output_tokens": 20}},
            requestId=f"req_{turn}")
        add("user", {"role": "user", "content": [{"tool_use_id": f"toolu_{turn}", "type": "tool_result",
                                                  "content": f"line {turn}\n" * 20}]})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def log_for(family: str, turns: int) -> Path:
    path = DATA / f"piai-{family}-{turns}.jsonl"
    if not path.exists():
        if family == "claude-code":
            write_claude_code(path, turns)
        else:
            write_log(path, family, turns)
    return path


def run_cache(log: Path, family: str, pythonpath: str | None) -> tuple[float, bytes]:
    """Wall time of one ``dsh-audit cache --json`` run and its stdout."""
    argv = [str(DSH), "cache", str(log), "--json"]
    if FAMILIES[family][4]:
        argv += ["--routes", str(ROUTES)]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.decode(errors='replace')[-400:]}")
    return seconds, done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, nargs="+", default=[200, 400, 800, 1600])
    parser.add_argument("--families", nargs="+", choices=sorted(FAMILIES), default=["anthropic", "openai"])
    parser.add_argument("--repeat", type=int, default=1, help="runs per measurement (best kept)")
    parser.add_argument("--pythonpath", help="run the commands with this PYTHONPATH (another checkout)")
    parser.add_argument("--compare", help="also run with this PYTHONPATH and require identical output")
    args = parser.parse_args()
    if any(FAMILIES[f][4] for f in args.families) and not ROUTES.is_file():
        raise SystemExit(f"{ROUTES} is missing: run with --families anthropic")
    print(f"{'family':<10} {'turns':>6} {'seconds':>8}" + (f" {'compare':>8} {'same':>5}" if args.compare else ""))
    for family in args.families:
        times: list[tuple[int, float]] = []
        for turns in args.turns:
            log = log_for(family, turns)
            runs = [run_cache(log, family, args.pythonpath) for _ in range(args.repeat)]
            seconds, output = min(runs)[0], runs[0][1]
            times.append((turns, seconds))
            line = f"{family:<10} {turns:>6} {seconds:>8.2f}"
            if args.compare:
                other_seconds, other = min(run_cache(log, family, args.compare) for _ in range(args.repeat))
                line += f" {other_seconds:>8.2f} {str(other == output):>5}"
            print(line, flush=True)
        if len(times) >= 2:
            (n1, t1), (n2, t2) = times[-2], times[-1]
            print(f"{family:<10} exponent {math.log(t2 / t1) / math.log(n2 / n1):.2f} ({n1} -> {n2} turns)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
