#!/usr/bin/env python3
"""Write ``sample_logs/generated/``: logs drawn from ``dsh_audit.strategies.sessions`` with a fixed seed.

The draw is deterministic (a database-less, generate-only run with the ``@seed`` below), so every
run writes the same bytes; ``tests/test_strategies.py`` regenerates them and compares byte for
byte.

Each usage-bearing call (a reply, a compaction summary) then logs the usage DSH's DeepSeek adapter
logs (``packages/llm/llm-deepseek/src/translate.ts`` ``mapUsage``: ``inputTokens`` the prompt
less its cache hits, ``cacheReadTokens`` the hits, ``outputTokens``, ``reasoningTokens``), so
every request the sample implies is priced (the strategies log prompt tokens alone, which DSH's
native adapter logs only when the API reported no cache hits: their split is unknown). The
figures are ``FIGURES``, derived as ``scripts/make_sample_logs.py`` derives its own: ``--derive``
writes the sample in a temporary folder, runs ``dsh-audit cache --json --tokenizer estimate`` on
it, takes each request's ``counted_tokens`` as its prompt size and its ``expected`` cache read as
its hits, and repeats until they stop changing; it prints the table to paste here. A fork child's
seed holds its parent's calls, with the parent's usage.

Layout::

    sample_logs/generated/<encoded session id>/session.jsonl.zstd   a rich session (packed rows)
    sample_logs/generated/<encoded child id>/session.jsonl.zstd     its fork child
    sample_logs/generated/README.md                                 what the sample holds

Usage:
    .venv/bin/python scripts/make_strategy_sample.py [OUT_DIR]
    .venv/bin/python scripts/make_strategy_sample.py --derive     print FIGURES recomputed
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings

from dsh_audit.strategies import GeneratedSession, sessions
from dsh_audit.testing import LogBuilder

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the samples' script, beside this one
from make_sample_logs import Figures, deepseek_usage, estimate_tokens, script_main, settle_figures  # noqa: E402

SEED = 20260501
STRATEGY = sessions(turns=(3, 3), max_steps=3, retries=(1, 1), compactions=(1, 1), prunes=(1, 1),
                    header_changes=(2, 2), resumes=(1, 1), forks=(1, 1), runtime_context=True,
                    packed=True, session_id="generated-sample")

# (prompt tokens, cache-hit tokens) of each usage-bearing call a session makes itself, in log order
# (regenerate with --derive; see the module docstring).
FIGURES: dict[str, tuple[tuple[int, int], ...]] = {
    "generated-sample": ((209, 128), (384, 128), (247, 0), (280, 0), (313, 256)),
    "generated-sample-fork-1": ((264, 128),),
}
#: The events that log a call's usage, and the chunk that carries it too.
_USAGE_EVENTS = ("assistant/message", "compaction/summary")


def _usage(data: Mapping[str, Any], figure: tuple[int, int] | None) -> dict[str, int]:
    """The usage DSH's DeepSeek adapter logs for a call whose event data is ``data``: its prompt
    split into misses and hits by ``figure`` (None: the drawn prompt, no hit, until --derive has
    run), its drawn output, and the reasoning part of it (its reasoning blocks, estimated)."""
    drawn = data["usage"]
    prompt, hit = figure if figure is not None else (drawn["inputTokens"], 0)
    message = data.get("message")
    blocks = message.get("content") if isinstance(message, dict) else None
    reasoning = sum(estimate_tokens(b["text"]) for b in blocks or ()
                    if isinstance(b, dict) and b.get("type") == "reasoning")
    return deepseek_usage(prompt, hit, drawn["outputTokens"], min(reasoning, drawn["outputTokens"]))


def _calls(builder: LogBuilder) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(seq, event)`` of every call whose usage the log records, in log order."""
    for seq in range(builder.next_seq):
        event = builder.event(seq)
        data = event.get("data")
        if event["type"] in _USAGE_EVENTS and isinstance(data, dict) and isinstance(data.get("usage"), dict):
            yield seq, event


def _log_usage(builder: LogBuilder, figures: Sequence[tuple[int, int]], *, parent: LogBuilder | None = None,
               seed_length: int = 0) -> None:
    """Rewrite the usage of every call ``builder`` logged, in place (its message's usage chunk too):
    ``figures`` in order for its own calls, the parent's usage for a fork child's seed calls."""
    own = iter(figures)
    for seq, event in _calls(builder):
        if parent is not None and seq < seed_length:
            usage = dict(parent.event(seq)["data"]["usage"])  # the seed is the parent's, byte for byte
        else:
            usage = _usage(event["data"], next(own, None))
        event["data"]["usage"] = usage
        for source in event.get("sourceEventSeqs") or ():
            chunk = builder.event(source).get("data", {}).get("chunk")
            if isinstance(chunk, dict) and chunk.get("type") == "usage":
                chunk["usage"] = usage


def record_usage(session: GeneratedSession, figures: Mapping[str, Sequence[tuple[int, int]]] | None = None) -> None:
    """Give every call of the drawn ``session`` and its children DSH-shaped usage (:data:`FIGURES`)."""
    figures = FIGURES if figures is None else figures
    _log_usage(session.builder, figures.get(session.session_id, ()))
    for child in session.children:
        _log_usage(child.builder, figures.get(child.session_id, ()), parent=session.builder,
                   seed_length=child.header_record.get("seedLength") or 0)


def draw_sample(figures: Mapping[str, Sequence[tuple[int, int]]] | None = None) -> GeneratedSession:
    """The sample session: the first example hypothesis draws with :data:`SEED`, its calls logging
    the usage of ``figures`` (default :data:`FIGURES`: :func:`record_usage`)."""
    drawn: list[GeneratedSession] = []

    @seed(SEED)
    @settings(max_examples=1, database=None, phases=[Phase.generate], derandomize=False, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(STRATEGY)
    def take(session: GeneratedSession) -> None:
        if not drawn:
            drawn.append(session)

    take()
    record_usage(drawn[0], figures)
    return drawn[0]


def _write_drawn(figures: Figures, tmp: Path) -> Path:
    draw_sample(figures).write_all(tmp, compressed=True)
    return tmp


def derive_figures(rounds: int = 8) -> dict[str, tuple[tuple[int, int], ...]]:
    """Rewrite the sample with dsh-audit's predicted hits until the figures stop changing."""
    return settle_figures(FIGURES, _write_drawn, rounds)


def _readme(session: GeneratedSession, files: list[Path], out: Path) -> str:
    lines = ["# Generated sample logs", "",
             "Drawn from `dsh_audit.strategies.sessions` with a fixed seed by `scripts/make_strategy_sample.py`",
             "(deterministic; do not edit by hand). What the generator did (the ground truth):", "",
             "| session | happening | seq | reason | fields |", "|---|---|---|---|---|"]
    for item in [session, *session.children]:
        for h in item.truth:
            lines.append(f"| {item.session_id} | {h.kind} | {h.seq} | {h.reason or ''} | {', '.join(h.fields)} |")
    lines += ["", "Files:", ""] + [f"- `{p.relative_to(out)}`" for p in files]
    return "\n".join(lines) + "\n"


def write_sample(out: Path) -> list[Path]:
    """Write the generated sample under ``out/generated`` (replacing it); returns the files."""
    target = out / "generated"
    shutil.rmtree(target, ignore_errors=True)
    session = draw_sample()
    files = session.write_all(target, compressed=True)
    readme = target / "README.md"
    readme.write_text(_readme(session, files, target), encoding="utf-8")
    return [*files, readme]


if __name__ == "__main__":
    sys.exit(script_main(sys.argv, write_sample, derive_figures))
