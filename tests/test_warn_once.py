"""A warning that every log of a run shares (the route layers of their DSH home, read for each
log) is printed once per command run, not once per log: `index` over 51 sessions of one home
printed the same profile warning 51 times."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_audit.testing import LogBuilder

from _cli import invoke


def test_the_same_warning_of_many_logs_is_printed_once_per_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "home"
    for name in ("a", "b", "c"):
        b = LogBuilder(session_id=f"s-{name}", provider="gateway", model="m")
        with b.turn("Hi"):
            with b.step():
                b.assistant("Hello")
        b.write_jsonl(home / "sessions" / "--p--" / f"s-{name}" / "session.jsonl")
    routes = tmp_path / "routes.yml"  # declares a window the logs contradict: one warning per log before
    routes.write_text("providers:\n  gateway:\n    api: openai-completions\n    baseURL: http://h/v1\n"
                      "    models: [{id: m, contextWindow: 4096}]\n", encoding="utf-8")
    for _ in range(2):  # and again in the next run of the same process
        code, _, err = invoke(monkeypatch, capsys, "cache", str(home / "sessions"), "--routes", str(routes))
        warnings = [line for line in err if line.startswith("warning:")]
        assert code in (0, 1) and len(warnings) == len(set(warnings)) >= 1, err
