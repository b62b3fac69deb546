#!/usr/bin/env python3
"""Write ``sample_logs/generated/``: logs drawn from ``dsh_audit.strategies.sessions`` with a fixed seed.

The draw is deterministic (a database-less, generate-only run with the ``@seed`` below), so every
run writes the same bytes; ``tests/test_strategies.py`` regenerates them and compares byte for
byte. Layout::

    sample_logs/generated/<encoded session id>/session.jsonl.zstd   a rich session (packed rows)
    sample_logs/generated/<encoded child id>/session.jsonl.zstd     its fork child
    sample_logs/generated/README.md                                 what the sample holds

Usage:
    .venv/bin/python scripts/make_strategy_sample.py [OUT_DIR]
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, seed, settings

from dsh_audit.strategies import GeneratedSession, sessions

SEED = 20260501
STRATEGY = sessions(turns=(3, 3), max_steps=3, retries=(1, 1), compactions=(1, 1), prunes=(1, 1),
                    header_changes=(2, 2), resumes=(1, 1), forks=(1, 1), runtime_context=True,
                    packed=True, session_id="generated-sample")


def draw_sample() -> GeneratedSession:
    """The sample session: the first example hypothesis draws with :data:`SEED`."""
    drawn: list[GeneratedSession] = []

    @seed(SEED)
    @settings(max_examples=1, database=None, phases=[Phase.generate], derandomize=False, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(STRATEGY)
    def take(session: GeneratedSession) -> None:
        if not drawn:
            drawn.append(session)

    take()
    return drawn[0]


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


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent / "sample_logs"
    for path in write_sample(out):
        print(f"{path.stat().st_size:6d}  {path.relative_to(out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
