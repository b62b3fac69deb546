#!/usr/bin/env python3
"""Regenerate ``sample_logs/``: small, valid DSH v0 logs written by dsh_audit.testing.LogBuilder.

Every run writes the same bytes (fixed clock, counter ids, deterministic zstd). Layout as DSH's
JSONL persistence stores it (spec §1.1)::

    sample_logs/sessions/--home-dev-projects-demo--/<encoded session id>/session.jsonl.zstd
    sample_logs/chat/session.jsonl     plain copy, packed chunk rows
    sample_logs/tools/session.jsonl    plain copy, one event per line (packChunks off)

Usage (logged ``TokenUsage``): every model reply and compaction summary logs what DSH's native
DeepSeek adapter logs for a real DeepSeek answer (``mapUsage``, DSH
``packages/llm/llm-deepseek/src/translate.ts:54-59``; spec §5.6 ``TokenUsage``): ``inputTokens`` = the
cache misses (``prompt_tokens`` − hits), ``outputTokens`` (reasoning included), ``cacheReadTokens``
(DeepSeek always reports ``prompt_cache_hit_tokens``, 0 included) and ``reasoningTokens`` (0 without
reasoning), in that key order, as every ``live/`` request of the corpus logs them. Title calls and
failed attempts log none, as DSH (``session/title-llm-request`` has no usage field; an HTTP error
or a cut-off stream has no usage chunk).

The figures are ``FIGURES``: per session, ``(prompt tokens, cache-hit tokens)`` of each
usage-bearing call in log order. They are demo data derived from dsh-audit's own prediction:
``--derive`` builds the samples in a temporary folder, runs ``dsh-audit cache --json --tokenizer
estimate`` on them, takes each request's ``counted_tokens`` as its prompt size and its
``expected`` cache read (DeepSeek's rule: whole units of a prefix an earlier request sent, 0 for
the first request, only the unchanged prefix after a break) as its hit count, rebuilds, and repeats
until the figures stop changing; it prints the table to paste here. Every reply then reads what
the rules predict (``as_expected``), and each sample's intended break (a header change, a resume, a
compaction, a model switch on retry) still shows as ``break_explained``.

Usage:
    .venv/bin/python scripts/make_sample_logs.py [OUT_DIR]
    .venv/bin/python scripts/make_sample_logs.py --derive     print FIGURES recomputed
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import dsh_audit
from dsh_audit.testing import LogBuilder, Reply, ToolCall, tool_schema

CWD = "/home/dev/projects/demo"
TOOLS = [
    tool_schema("read", "Read a text file from the workspace.", {"file_path": {"type": "string"}}),
    tool_schema("glob", "List workspace files matching a glob pattern.", {"pattern": {"type": "string"}}),
    tool_schema("bash", "Run a shell command and return its output.", {"command": {"type": "string"}}),
]
SNAPSHOT = {"kind": "plugin", "plugin": "@deepseek-ai/dsh-system-prompt", "form": "snapshot",
            "sections": [{"name": "sandbox:policy", "text": "File policy: workspace-write."}]}


#: (prompt tokens, cache-hit tokens) of each usage-bearing call, by session id, in log order.
Figures = Mapping[str, Sequence[tuple[int, int]]]

# (regenerate with --derive; see the module docstring).
FIGURES: dict[str, tuple[tuple[int, int], ...]] = {
    "fork-child:review": ((289, 256),),
    "session-sample-change": ((193, 0), (216, 0), (236, 0), (208, 128), (237, 0)),
    "session-sample-chat": ((219, 0), (256, 128)),
    "session-sample-compaction": ((195, 0), (405, 128), (336, 256), (276, 0)),
    "session-sample-fork-parent": ((195, 0), (260, 128), (288, 256), (356, 256)),
    "session-sample-resume": ((197, 0), (223, 128), (250, 0)),
    "session-sample-retry": ((195, 128), (258, 0)),
    "session-sample-tools": ((205, 0), (292, 128), (375, 256), (516, 256)),
}


def estimate_tokens(text: str | None) -> int:
    """A bytes/4 token estimate of an output text (0 for none)."""
    return (len(text.encode("utf-8")) + 3) // 4 if text else 0


def deepseek_usage(prompt: int, hit: int, output: int, reasoning: int) -> dict[str, int]:
    """The usage DSH's DeepSeek adapter logs for a call (``mapUsage``): the prompt's cache misses,
    the output (reasoning included), the cache hits and the reasoning part of the output."""
    return {"inputTokens": prompt - hit, "outputTokens": output, "cacheReadTokens": hit, "reasoningTokens": reasoning}


class Usage:
    """Hands each reply and compaction summary its logged usage, from per-session figures."""

    def __init__(self, figures: Mapping[str, Sequence[tuple[int, int]]] | None = None) -> None:
        self.figures = FIGURES if figures is None else figures
        self.taken: dict[str, int] = {}

    def _next(self, b: LogBuilder) -> tuple[int, int]:
        n = self.taken.get(b.session_id, 0)
        self.taken[b.session_id] = n + 1
        known = self.figures.get(b.session_id, ())
        return known[n] if n < len(known) else (1, 0)  # a placeholder until --derive has run

    def _usage(self, b: LogBuilder, output: int, reasoning: int) -> dict[str, int]:
        prompt, hit = self._next(b)
        return deepseek_usage(prompt, hit, output, reasoning)

    def reply(self, b: LogBuilder, text: str | None = None, *, reasoning: str | None = None,
              tool_calls: Sequence[ToolCall] = ()) -> Reply:
        """``b.assistant`` with the usage DSH's DeepSeek adapter would log for it."""
        output = (estimate_tokens(reasoning) + estimate_tokens(text)
                  + sum(estimate_tokens(call.text()) for call in tool_calls))
        return b.assistant(text, reasoning=reasoning, tool_calls=tool_calls,
                           usage=self._usage(b, max(output, 1), estimate_tokens(reasoning)))

    def compaction(self, b: LogBuilder, summary: str, *, keep: int = 0) -> int:
        """``b.compaction`` with its summary call's usage (thinking off: no reasoning tokens)."""
        return b.compaction(summary, keep=keep, usage=self._usage(b, estimate_tokens(summary), 0))


def _builder(name: str, **options: Any) -> LogBuilder:
    return LogBuilder(session_id=f"session-sample-{name}", cwd=CWD, tools=TOOLS, **options)


def chat(usage: Usage | None = None) -> LogBuilder:
    """Two turns with reasoning, a runtime-context snapshot and a title call."""
    u = usage if usage is not None else Usage()
    b = _builder("chat")
    with b.turn("Hi! Who are you, in one sentence?"):
        with b.step():
            b.user("Runtime context: file policy is workspace-write.", source=SNAPSHOT)
            b.header()
            b.title("Who are you")
            u.reply(b, "I am a coding agent running in DeepSeek Harness.",
                        reasoning="The user greets me and asks who I am. One sentence.")
    with b.turn("And what did I ask you a moment ago?"):
        with b.step():
            u.reply(b, "You asked who I am.", reasoning="They asked who I am.")
    return b


def tools(usage: Usage | None = None) -> LogBuilder:
    """One turn, four steps: a read, a failing read, parallel glob + bash ("(no output)"), an answer."""
    u = usage if usage is not None else Usage()
    b = _builder("tools")
    with b.turn("Look around the workspace and count the Python files."):
        with b.step():
            r = u.reply(b, "I'll read the notes first.", reasoning="Start with notes.md.",
                            tool_calls=[ToolCall("read", {"file_path": "notes.md"})])
            b.tool_result(r.call_ids[0], "1: # Notes\n2: demo project", meta={"lines": 2})
        with b.step():
            r = u.reply(b, tool_calls=[ToolCall("read", {"file_path": "app.py"})],
                            reasoning="Now the source file.")
            b.tool_result(r.call_ids[0], 'Error: cannot read "app.py": not found', is_error=True,
                          error={"name": "FsError", "code": "FS_NOT_FOUND"})
        with b.step():
            r = u.reply(b, reasoning="Glob for Python files and touch a marker in parallel.",
                            tool_calls=[ToolCall("glob", {"pattern": "**/*.py"}),
                                        ToolCall("bash", {"command": "touch .seen"})])
            b.tool_result(r.call_ids[0], "src/app.py\nsrc/util.py")
            b.tool_result(r.call_ids[1], "(no output)")
        with b.step():
            u.reply(b, "There are two Python files, both under src/.")
    return b


def change(usage: Usage | None = None) -> LogBuilder:
    """Header changes between turns: model, effort, tool set, system prompt."""
    u = usage if usage is not None else Usage()
    b = _builder("change")
    changes: list[tuple[str, dict[str, Any]]] = [
        ("Hello.", {}),
        ("Switch to the pro model.", {"model": "deepseek-v4-pro"}),
        ("Think harder.", {"reasoning_effort": "max"}),
        ("Stop using the shell.", {"tools": TOOLS[:2]}),
        ("Enter plan mode.", {"system": "You are a helpful coding agent.\n\nPlan mode: do not edit files."}),
    ]
    for prompt, settings in changes:
        b.configure(**settings)
        with b.turn(prompt):
            with b.step():
                u.reply(b, "Done.")
    return b


def compaction(usage: Usage | None = None) -> LogBuilder:
    """A long tool result pruned, then an automatic summary compaction, both before step/start."""
    u = usage if usage is not None else Usage()
    b = _builder("compaction", context_window=4096)
    with b.turn("Read big.txt."):
        with b.step():
            r = u.reply(b, tool_calls=[ToolCall("read", {"file_path": "big.txt"})])
            result = b.tool_result(r.call_ids[0], "\n".join(f"{i}: the quick brown fox" for i in range(1, 25)))
        with b.step():
            u.reply(b, "big.txt repeats one sentence 24 times.")
    b.start_turn("What was in it again?")
    b.prune(result)
    u.compaction(b, "The user had big.txt read; it repeats one sentence 24 times.", keep=1)
    with b.step():
        u.reply(b, "It repeats one sentence 24 times.")
    b.end_turn()
    return b


def resume(usage: Usage | None = None) -> LogBuilder:
    """Three processes: each new loop instance writes a ``resume`` header (the last one differs)."""
    u = usage if usage is not None else Usage()
    b = _builder("resume")
    with b.turn("Remember the word alpha."):
        with b.step():
            u.reply(b, "Noted: alpha.")
    b.resume()
    with b.turn("I'm back. What was the word?"):
        with b.step():
            u.reply(b, "alpha")
    b.resume()
    b.configure(model="deepseek-v4-pro")
    with b.turn("Back again, on another model. The word?"):
        with b.step():
            u.reply(b, "Still alpha.")
    return b


def retry(usage: Usage | None = None) -> LogBuilder:
    """Retries inside steps: an HTTP failure, then a cut-off stream retried on another model."""
    u = usage if usage is not None else Usage()
    b = _builder("retry")
    with b.turn("List the files."):
        with b.step():
            b.retry(code="SERVER", message="provider answered HTTP 503")
            r = u.reply(b, tool_calls=[ToolCall("glob", {"pattern": "*"})])
            b.tool_result(r.call_ids[0], "notes.md")
        with b.step():
            b.retry(code="TRANSPORT", message="connection reset", partial_text="There is one f")
            b.configure(model="deepseek-v4-pro")
            u.reply(b, "There is one file: notes.md.")
    return b


def fork(usage: Usage | None = None) -> tuple[LogBuilder, LogBuilder]:
    """A parent whose turn 2 runs a one-shot fork child seeded with turn 1."""
    u = usage if usage is not None else Usage()
    parent = _builder("fork-parent")
    with parent.turn("Read notes.md."):
        with parent.step():
            r = u.reply(parent, tool_calls=[ToolCall("read", {"file_path": "notes.md"})])
            parent.tool_result(r.call_ids[0], "1: # Notes")
        with parent.step():
            u.reply(parent, "notes.md has one heading.")
    child = parent.fork(session_id="fork-child:review")
    with parent.turn("Ask a fork to review it."):
        with parent.step():
            r = u.reply(parent, tool_calls=[ToolCall("fork", {"task": "Review notes.md in one word."})])
            with child.turn("Review notes.md in one word."):
                with child.step():
                    u.reply(child, "Fine.", reasoning="The file is tiny and fine.")
            parent.tool_result(r.call_ids[0], "Fine.")
        with parent.step():
            u.reply(parent, "The fork says: fine.")
    return parent, child


def build_samples(figures: Mapping[str, Sequence[tuple[int, int]]] | None = None) -> dict[str, LogBuilder]:
    """Every sample, by name, in a stable order (usage from ``figures``, default ``FIGURES``)."""
    usage = Usage(figures)
    parent, child = fork(usage)
    return {"chat": chat(usage), "tools": tools(usage), "change": change(usage), "compaction": compaction(usage),
            "resume": resume(usage), "retry": retry(usage), "fork-parent": parent, "fork-child": child}


def predicted_figures(root: Path) -> dict[str, tuple[tuple[int, int], ...]]:
    """``(counted_tokens, expected)`` of each usage-bearing request ``dsh-audit cache`` lists under
    ``root``, by session id."""
    command = [sys.executable, "-m", "dsh_audit", "cache", "--json", "--tokenizer", "estimate", "--no-pager",
               str(root)]
    done = subprocess.run(command, capture_output=True, text=True, check=False,
                          cwd=Path(__file__).resolve().parent.parent)
    if done.returncode not in (0, 1):  # 1: a break without an explanation (reported, not fatal here)
        raise SystemExit(f"dsh-audit cache failed ({done.returncode}): {done.stderr}")
    figures = {}
    for line in done.stdout.splitlines():
        report = json.loads(line)
        figures[report["session_id"]] = tuple((entry["counted_tokens"], entry["expected"])
                                              for entry in report["timeline"] if entry["prompt_tokens"] is not None)
    return dict(sorted(figures.items()))


def settle_figures(start: Mapping[str, Sequence[tuple[int, int]]], write: Callable[[Figures, Path], Path],
                   rounds: int = 8) -> dict[str, tuple[tuple[int, int], ...]]:
    """Write the logs with ``figures`` (``write(figures, tmp)`` returns the root it wrote) and take
    dsh-audit's predicted prompts and hits as the next figures, from ``start``, until they stop changing."""
    figures: dict[str, tuple[tuple[int, int], ...]] = {k: tuple(v) for k, v in start.items()}
    for _ in range(rounds):
        with tempfile.TemporaryDirectory(prefix="dsh-samples-") as tmp:
            found = predicted_figures(write(figures, Path(tmp)))
        if found == figures:
            return figures
        figures = found
    raise SystemExit(f"the figures did not settle in {rounds} rounds")


def _write_samples_to(figures: Figures, tmp: Path) -> Path:
    for builder in build_samples(figures).values():
        builder.write_to_root(tmp / "sessions")
    return tmp / "sessions"


def derive_figures(rounds: int = 8) -> dict[str, tuple[tuple[int, int], ...]]:
    """Rebuild the samples with dsh-audit's predicted hits until the figures stop changing."""
    return settle_figures(FIGURES, _write_samples_to, rounds)


def _readme(samples: dict[str, LogBuilder], files: list[Path], out: Path) -> str:
    lines = ["# Sample logs", "",
             "Small, valid DSH v0 session logs written by `dsh_audit.testing.LogBuilder`. Generated by",
             "`scripts/make_sample_logs.py` (deterministic; do not edit by hand). Try:", "",
             "    dsh-audit requests sample_logs/", "    dsh-audit show sample_logs/tools/session.jsonl 2",
             "    dsh-audit cache sample_logs/sessions", "",
             "Each reply logs the usage DSH's DeepSeek adapter logs (cache misses, cache reads, output,",
             "reasoning), its cache reads as the provider rules predict them; title calls and failed",
             "attempts log none, as in DSH.", "",
             "| sample | what it shows | file |", "|---|---|---|"]
    by_id = {b.session_id: name for name, b in samples.items()}
    for path in files:
        name = by_id.get(_session_id(path), "")
        doc = (_DOCS.get(name) or "").strip().splitlines()[0] if name else ""
        lines.append(f"| {name} | {doc} | `{path.relative_to(out)}` |")
    return "\n".join(lines) + "\n"


def _session_id(path: Path) -> str:
    log = dsh_audit.load(path)
    log.close()
    return log.header.id


_DOCS = {"chat": chat.__doc__, "tools": tools.__doc__, "change": change.__doc__, "compaction": compaction.__doc__,
         "resume": resume.__doc__, "retry": retry.__doc__, "fork-parent": fork.__doc__,
         "fork-child": "The fork child: seeded with the parent's first turn; its first header says resume."}


def write_samples(out: Path) -> list[Path]:
    """Write every sample under ``out`` (replacing what is there); returns the files written."""
    for sub in ("sessions", "chat", "tools"):
        shutil.rmtree(out / sub, ignore_errors=True)
    samples = build_samples()
    written = [b.write_to_root(out / "sessions") for b in samples.values()]
    written.append(samples["chat"].write_jsonl(out / "chat" / "session.jsonl"))
    written.append(samples["tools"].write_jsonl(out / "tools" / "session.jsonl", packed=False))
    readme = out / "README.md"
    readme.write_text(_readme(samples, written, out), encoding="utf-8")
    return [*written, readme]


def script_main(argv: list[str], write: Callable[[Path], list[Path]],
                derive: Callable[[], Mapping[str, tuple[tuple[int, int], ...]]]) -> int:
    """A sample script's command line: ``--derive`` prints the ``FIGURES`` table ``derive`` makes
    (to paste into the script); otherwise ``write`` writes the samples under ``argv[1]`` (default:
    the project's ``sample_logs/``) and each file written is listed with its size."""
    if argv[1:] == ["--derive"]:
        print("FIGURES: dict[str, tuple[tuple[int, int], ...]] = {")
        for session_id, pairs in derive().items():
            print(f"    {session_id!r}: {pairs!r},")
        print("}")
        return 0
    out = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent / "sample_logs"
    for path in write(out):
        print(f"{path.stat().st_size:6d}  {path.relative_to(out)}")
    return 0


if __name__ == "__main__":
    sys.exit(script_main(sys.argv, write_samples, derive_figures))
