#!/usr/bin/env python3
"""Regenerate ``sample_logs/``: small, valid DSH v0 logs written by dsh_audit.testing.LogBuilder.

Every run writes the same bytes (fixed clock, counter ids, deterministic zstd). Layout as DSH's
JSONL persistence stores it (spec §1.1)::

    sample_logs/sessions/--home-dev-projects-demo--/<encoded session id>/session.jsonl.zstd
    sample_logs/chat/session.jsonl     plain copy, packed chunk rows
    sample_logs/tools/session.jsonl    plain copy, one event per line (packChunks off)

Usage:
    .venv/bin/python scripts/make_sample_logs.py [OUT_DIR]
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from dsh_audit.testing import LogBuilder, ToolCall, tool_schema

CWD = "/home/dev/projects/demo"
TOOLS = [
    tool_schema("read", "Read a text file from the workspace.", {"file_path": {"type": "string"}}),
    tool_schema("glob", "List workspace files matching a glob pattern.", {"pattern": {"type": "string"}}),
    tool_schema("bash", "Run a shell command and return its output.", {"command": {"type": "string"}}),
]
SNAPSHOT = {"kind": "plugin", "plugin": "@deepseek-ai/dsh-system-prompt", "form": "snapshot",
            "sections": [{"name": "sandbox:policy", "text": "File policy: workspace-write."}]}


def _builder(name: str, **options) -> LogBuilder:
    return LogBuilder(session_id=f"session-sample-{name}", cwd=CWD, tools=TOOLS, **options)


def chat() -> LogBuilder:
    """Two turns with reasoning, a runtime-context snapshot and a title call."""
    b = _builder("chat")
    with b.turn("Hi! Who are you, in one sentence?"):
        with b.step():
            b.user("Runtime context: file policy is workspace-write.", source=SNAPSHOT)
            b.header()
            b.title("Who are you")
            b.assistant("I am a coding agent running in DeepSeek Harness.",
                        reasoning="The user greets me and asks who I am. One sentence.")
    with b.turn("And what did I ask you a moment ago?"):
        with b.step():
            b.assistant("You asked who I am.", reasoning="They asked who I am.")
    return b


def tools() -> LogBuilder:
    """One turn, four steps: a read, a failing read, parallel glob + bash ("(no output)"), an answer."""
    b = _builder("tools")
    with b.turn("Look around the workspace and count the Python files."):
        with b.step():
            r = b.assistant("I'll read the notes first.", reasoning="Start with notes.md.",
                            tool_calls=[ToolCall("read", {"file_path": "notes.md"})])
            b.tool_result(r.call_ids[0], "1: # Notes\n2: demo project", meta={"lines": 2})
        with b.step():
            r = b.assistant(tool_calls=[ToolCall("read", {"file_path": "app.py"})],
                            reasoning="Now the source file.")
            b.tool_result(r.call_ids[0], 'Error: cannot read "app.py": not found', is_error=True,
                          error={"name": "FsError", "code": "FS_NOT_FOUND"})
        with b.step():
            r = b.assistant(reasoning="Glob for Python files and touch a marker in parallel.",
                            tool_calls=[ToolCall("glob", {"pattern": "**/*.py"}),
                                        ToolCall("bash", {"command": "touch .seen"})])
            b.tool_result(r.call_ids[0], "src/app.py\nsrc/util.py")
            b.tool_result(r.call_ids[1], "(no output)")
        with b.step():
            b.assistant("There are two Python files, both under src/.")
    return b


def change() -> LogBuilder:
    """Header changes between turns: model, effort, tool set, system prompt."""
    b = _builder("change")
    changes = [
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
                b.assistant("Done.")
    return b


def compaction() -> LogBuilder:
    """A long tool result pruned, then an automatic summary compaction, both before step/start."""
    b = _builder("compaction", context_window=4096)
    with b.turn("Read big.txt."):
        with b.step():
            r = b.assistant(tool_calls=[ToolCall("read", {"file_path": "big.txt"})])
            result = b.tool_result(r.call_ids[0], "\n".join(f"{i}: the quick brown fox" for i in range(1, 25)))
        with b.step():
            b.assistant("big.txt repeats one sentence 24 times.")
    b.start_turn("What was in it again?")
    b.prune(result)
    b.compaction("The user had big.txt read; it repeats one sentence 24 times.", keep=1)
    with b.step():
        b.assistant("It repeats one sentence 24 times.")
    b.end_turn()
    return b


def resume() -> LogBuilder:
    """Three processes: each new loop instance writes a ``resume`` header (the last one differs)."""
    b = _builder("resume")
    with b.turn("Remember the word alpha."):
        with b.step():
            b.assistant("Noted: alpha.")
    b.resume()
    with b.turn("I'm back. What was the word?"):
        with b.step():
            b.assistant("alpha")
    b.resume()
    b.configure(model="deepseek-v4-pro")
    with b.turn("Back again, on another model. The word?"):
        with b.step():
            b.assistant("Still alpha.")
    return b


def retry() -> LogBuilder:
    """Retries inside steps: an HTTP failure, then a cut-off stream retried on another model."""
    b = _builder("retry")
    with b.turn("List the files."):
        with b.step():
            b.retry(code="SERVER", message="provider answered HTTP 503")
            r = b.assistant(tool_calls=[ToolCall("glob", {"pattern": "*"})])
            b.tool_result(r.call_ids[0], "notes.md")
        with b.step():
            b.retry(code="TRANSPORT", message="connection reset", partial_text="There is one f")
            b.configure(model="deepseek-v4-pro")
            b.assistant("There is one file: notes.md.")
    return b


def fork() -> tuple[LogBuilder, LogBuilder]:
    """A parent whose turn 2 runs a one-shot fork child seeded with turn 1."""
    parent = _builder("fork-parent")
    with parent.turn("Read notes.md."):
        with parent.step():
            r = parent.assistant(tool_calls=[ToolCall("read", {"file_path": "notes.md"})])
            parent.tool_result(r.call_ids[0], "1: # Notes")
        with parent.step():
            parent.assistant("notes.md has one heading.")
    child = parent.fork(session_id="fork-child:review")
    with parent.turn("Ask a fork to review it."):
        with parent.step():
            r = parent.assistant(tool_calls=[ToolCall("fork", {"task": "Review notes.md in one word."})])
            with child.turn("Review notes.md in one word."):
                with child.step():
                    child.assistant("Fine.", reasoning="The file is tiny and fine.")
            parent.tool_result(r.call_ids[0], "Fine.")
        with parent.step():
            parent.assistant("The fork says: fine.")
    return parent, child


def build_samples() -> dict[str, LogBuilder]:
    """Every sample, by name, in a stable order."""
    parent, child = fork()
    return {"chat": chat(), "tools": tools(), "change": change(), "compaction": compaction(),
            "resume": resume(), "retry": retry(), "fork-parent": parent, "fork-child": child}


def _readme(samples: dict[str, LogBuilder], files: list[Path], out: Path) -> str:
    lines = ["# Sample logs", "",
             "Small, valid DSH v0 session logs written by `dsh_audit.testing.LogBuilder`. Generated by",
             "`scripts/make_sample_logs.py` (deterministic; do not edit by hand). Try:", "",
             "    dsh-audit requests sample_logs/", "    dsh-audit show sample_logs/tools/session.jsonl 2", "",
             "| sample | what it shows | file |", "|---|---|---|"]
    by_id = {b.session_id: name for name, b in samples.items()}
    for path in files:
        name = by_id.get(_session_id(path), "")
        doc = (_DOCS.get(name) or "").strip().splitlines()[0] if name else ""
        lines.append(f"| {name} | {doc} | `{path.relative_to(out)}` |")
    return "\n".join(lines) + "\n"


def _session_id(path: Path) -> str:
    import dsh_audit

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


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent / "sample_logs"
    for path in write_samples(out):
        print(f"{path.stat().st_size:6d}  {path.relative_to(out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
