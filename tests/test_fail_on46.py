"""Issue 14 item 3 (session 46): ``--fail-on`` wherever a user may gate on prefix-cache breaks.

``cache`` had no ``--fail-on`` ("No such option"), while ``breaks`` had one. Both now take the same
option (one declaration, one rule of what fails: ``_options.breaks_fail``), so that on the same
logs and the same choice they exit alike: ``unexplained`` (default) fails on a break the log does
not explain, ``any`` on any break, ``never`` on none; ``DSH_AUDIT_CACHE_FAIL_ON`` sets it as every
option's variable does.
"""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from dsh_audit.cli import cli
from dsh_audit.cli._options import FAIL_ON_CHOICES, breaks_fail
from dsh_audit.testing import LogBuilder
from tests._cli import invoke

ROOT = Path(__file__).resolve().parent.parent
CHANGE = ROOT.parent / "shared" / "corpus" / "live" / "c-change" / "session-logs"  # five breaks, all explained
needs_corpus = pytest.mark.skipif(not CHANGE.is_dir(), reason="../shared/corpus is absent")
GATES = ("breaks", "cache")


@pytest.fixture(autouse=True)
def _no_caller_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DSH_AUDIT_BREAKS_FAIL_ON", "DSH_AUDIT_CACHE_FAIL_ON"):
        monkeypatch.delenv(name, raising=False)


def _turn(builder: LogBuilder, prompt: str, answer: str = "Sure.") -> None:
    with builder.turn(prompt):
        with builder.step():
            builder.assistant(answer)


def _unexplained(folder: Path) -> Path:
    """A fork whose child's seed differs from its parent's prompt with nothing logged: its one
    request is a break with cause ``unexplained``; the parent has none."""
    parent = LogBuilder(session_id="p-fork")
    _turn(parent, "one", "First answer.")
    child = parent.fork(session_id="c-fork")
    _turn(child, "review")
    _turn(parent, "two")
    child_log = child.write_jsonl(folder / "c-fork.jsonl")
    child_log.write_text(child_log.read_text(encoding="utf-8").replace('"text":"one"', '"text":"ONE"'),
                         encoding="utf-8")
    parent.write_jsonl(folder / "p-fork.jsonl")
    return folder


def _codes(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], logs: Path) -> dict[str, list[int]]:
    """Each gate's exit code for each choice, and with no --fail-on (the default, last)."""
    return {name: [invoke(monkeypatch, capsys, name, str(logs), "--json", *option)[0]
                   for option in [["--fail-on", choice] for choice in FAIL_ON_CHOICES] + [[]]]
            for name in GATES}


@needs_corpus
def test_explained_breaks_fail_only_any(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # unexplained, any, never, default
    assert _codes(monkeypatch, capsys, CHANGE) == {"breaks": [0, 1, 0, 0], "cache": [0, 1, 0, 0]}


def test_an_unexplained_break_fails_all_but_never(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert _codes(monkeypatch, capsys, _unexplained(tmp_path)) == {"breaks": [1, 1, 0, 1], "cache": [1, 1, 0, 1]}


def test_the_choice_changes_the_exit_code_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    logs = str(_unexplained(tmp_path))
    failing = invoke(monkeypatch, capsys, "cache", logs, "--json", "--fail-on", "unexplained")
    passing = invoke(monkeypatch, capsys, "cache", logs, "--json", "--fail-on", "never")
    assert (failing[0], passing[0]) == (1, 0)
    assert failing[1:] == passing[1:] and failing[1].count('"break_unexplained":1') == 1


def test_the_environment_variable_sets_it_and_the_option_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    logs = str(_unexplained(tmp_path))
    monkeypatch.setenv("DSH_AUDIT_CACHE_FAIL_ON", "never")
    assert invoke(monkeypatch, capsys, "cache", logs, "--json")[0] == 0
    assert invoke(monkeypatch, capsys, "breaks", logs, "--json")[0] == 1  # another command's variable
    assert invoke(monkeypatch, capsys, "cache", logs, "--json", "--fail-on", "unexplained")[0] == 1
    monkeypatch.setenv("DSH_AUDIT_CACHE_FAIL_ON", "sometimes")
    assert invoke(monkeypatch, capsys, "cache", logs) == (2, "", [
        "error: DSH_AUDIT_CACHE_FAIL_ON=sometimes: Invalid value for '--fail-on': 'sometimes' is not one of "
        "'unexplained', 'any', 'never'. (hint: see `dsh-audit cache --help`)"])


def test_one_option_on_every_gate() -> None:
    found = []
    for name in GATES:
        command = cli.get_command(click.Context(cli), name)
        assert command is not None
        option = next(p for p in command.params if isinstance(p, click.Option) and "--fail-on" in p.opts)
        found.append((option.name, tuple(option.type.choices), option.default, option.help))  # type: ignore[attr-defined]
    assert found[0] == found[1] and found[0][:3] == ("fail_on", ("unexplained", "any", "never"), "unexplained")


def test_the_rule() -> None:
    assert [[breaks_fail(choice, breaks=b, unexplained=u) for choice in FAIL_ON_CHOICES]
            for b, u in ((0, 0), (3, 0), (3, 1))] == [[False, False, False], [False, True, False], [True, True, False]]
