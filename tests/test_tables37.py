"""Every column explained, one table style (issue 14, session 37 tour items 5 and 8).

Before: `check --help` named neither "status", "capture" nor "findings"; `stats --help` told
"cache breaks" from "attribution breaks" nowhere; at 80 columns `stats` and `diff` were boxed
while every other command was compact; `requests` switched between "turn/step/attempt" and
"t/s/a" from one table to the next; captions wrapped at the table's width; a log's path was cut
in its middle, and two logs read the same in check's "log" column.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

import dsh_audit.cli
from _cli import invoke
from _golden import CORPUS
from dsh_audit.cli import cli
from dsh_audit.report._tables import BOXED_FROM
from dsh_audit.report.terminal import print_table
from dsh_audit.testing import LogBuilder

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
CHANGE = CORPUS / "live" / "c-change"
needs_corpus = pytest.mark.skipif(not (CHANGE / "wire.jsonl").is_file(), reason="../shared/corpus is absent")


def _listing_commands() -> list[str]:
    """Every command that prints tables: those with a --format option."""
    context = click.Context(cli)
    return [name for name in cli.list_commands(context)
            if any("--format" in param.opts for param in getattr(cli.get_command(context, name), "params", ()))]


def _runs(name: str, db: Path) -> list[list[str]]:
    """The runs of command ``name`` whose tables are checked: over the samples, and the corpus
    session with breaks and a capture where the command reads one."""
    capture = ["--capture", str(CHANGE / "wire.jsonl")]
    runs: dict[str, list[list[str]]] = {
        "stats": [["--db", str(db)]],
        "diff": [[str(CHANGE), *capture]],
        "usage": [[str(SAMPLES), "--by", by] for by in ("session", "model", "day", "request")],
        "check": [[str(SAMPLES)], [str(CHANGE), *capture]],
        "breaks": [[str(SAMPLES)], [str(CHANGE)]],
    }
    return runs.get(name, [[str(SAMPLES)]])


def _recorded(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    """Every command module's ``print_table`` recording the headers it is given, in every form
    (the columns, their short headers, the legend's words), and drawing the table as before."""
    seen: list[tuple[str, ...]] = []

    def recording(title: str, columns: Sequence[str], rows: Any, **options: Any) -> None:
        short: Mapping[str, str] = options.get("short") or {}
        seen.append((*columns, *short.values()))
        print_table(title, columns, rows, **options)

    for module in pkgutil.iter_modules(dsh_audit.cli.__path__):
        loaded = importlib.import_module(f"dsh_audit.cli.{module.name}")
        if getattr(loaded, "print_table", None) is print_table:
            monkeypatch.setattr(loaded, "print_table", recording)
    return seen


def _help(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str) -> str:
    code, out, _ = invoke(monkeypatch, capsys, name, "--help")
    assert code == 0
    return " ".join(out.split())


@needs_corpus
def test_every_header_a_listing_can_show_is_explained_in_its_help(monkeypatch, capsys, tmp_path: Path) -> None:
    """Each header of each table of each listing command, in every layout (80 and 200 columns,
    CSV), and its short header, is named in the command's --help (docs/cli.md is made of it)."""
    db = tmp_path / "fleet.sqlite"
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "no-home"))
    assert invoke(monkeypatch, capsys, "index", str(SAMPLES), str(CHANGE), "--db", str(db))[0] == 0
    commands = _listing_commands()
    assert {"sessions", "requests", "breaks", "cache", "usage", "check", "stats", "diff"} <= set(commands)
    missing: dict[str, set[str]] = {}
    for name in commands:
        helped = _help(monkeypatch, capsys, name)
        seen = _recorded(monkeypatch)
        for args in _runs(name, db):
            for columns, fmt in (("80", "table"), ("200", "table"), ("200", "csv")):
                monkeypatch.setenv("COLUMNS", columns)
                code, _, _ = invoke(monkeypatch, capsys, name, *args, "--format", fmt)
                assert code in (0, 1), (name, args)
        assert seen, name
        headers = {header for headers in seen for header in headers}
        gone = {header for header in headers if header not in helped}
        if gone:
            missing[name] = gone
        monkeypatch.undo()
        monkeypatch.setenv("DSH_HOME", str(tmp_path / "no-home"))
    assert missing == {}, missing


def _styles(lines: Sequence[str]) -> set[str]:
    """The table styles drawn in ``lines``: boxed (heavy corners) or compact (a rule of ─ only)."""
    found = set()
    for line in lines:
        if line.startswith("┏"):
            found.add("boxed")
        elif line and set(line) == {"─"}:
            found.add("compact")
    return found


@pytest.fixture(scope="module")
def samples_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The samples' index, made once for every width (`stats` only reads it), with no DSH home."""
    folder = tmp_path_factory.mktemp("fleet")
    db = folder / "fleet.sqlite"
    result = CliRunner().invoke(cli, ["index", str(SAMPLES), "--db", str(db)],
                                env={"DSH_HOME": str(folder / "no-home")})
    assert result.exit_code == 0, result.output
    return db


@needs_corpus
@pytest.mark.parametrize("columns", [80, BOXED_FROM - 1, BOXED_FROM, 160])
def test_one_style_at_a_width_for_every_command(monkeypatch, capsys, tmp_path: Path, columns: int,
                                                samples_db: Path) -> None:
    """Compact below BOXED_FROM columns, for `stats` and `diff` as for the others; from it, boxed
    where the boxes cost no column nor a wrapped cell (`breaks` of c-change and `usage` of the
    samples need more than 100 columns boxed)."""
    db = samples_db
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "no-home"))
    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.chdir(ROOT)  # the samples by a relative path: the same cells wherever the tree is
    for args in (["stats", "--db", str(db)], ["diff", str(CHANGE), "--capture", str(CHANGE / "wire.jsonl")],
                 ["sessions", "sample_logs"], ["breaks", str(CHANGE)], ["check", str(CHANGE)],
                 ["usage", "sample_logs"]):
        code, out, _ = invoke(monkeypatch, capsys, *args)
        assert code in (0, 1)
        wide = columns >= 160 or args[0] not in ("breaks", "usage")
        assert _styles(out.splitlines()) == ({"boxed"} if columns >= BOXED_FROM and wide else {"compact"}), (args, columns)


def test_a_caption_wraps_at_the_terminal_not_the_table(monkeypatch, capsys) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    print_table("t", ["a", "b"], [["1", "x"]], caption="one two three four five six seven eight nine ten eleven")
    assert capsys.readouterr().out.splitlines() == [
        "t", "a  b", "────", "1  x", "one two three four five six seven eight nine ten eleven"]


def _session(path: Path, session_id: str, turns: int) -> None:
    builder = LogBuilder(session_id=session_id)
    for turn in range(turns):
        with builder.turn(f"question {turn}"):
            with builder.step():
                builder.assistant("Hello", usage={"inputTokens": 131, "outputTokens": 8, "cacheReadTokens": 0})
    builder.write_jsonl(path, packed=False)


def test_requests_choose_one_place_header_for_the_whole_run(monkeypatch, capsys, tmp_path: Path) -> None:
    """A table that fits "turn/step/attempt" beside one that needs "t/s/a": both say "t/s/a"."""
    home = tmp_path / "sessions"
    _session(home / "--p--" / "s-a" / "session.jsonl", "s-a", 1)
    _session(home / "--p--" / "s-b" / "session.jsonl", "s-b", 12)  # a wider "#" and total
    monkeypatch.setenv("COLUMNS", "78")

    def heads(*args: str) -> list[str]:
        code, out, _ = invoke(monkeypatch, capsys, "requests", *args)
        assert code == 0
        return [word for line in out.splitlines() if not line.startswith("t/s/a:")  # the legend
                for word in line.split() if word in ("t/s/a", "turn/step/attempt")]

    assert heads(str(home / "--p--" / "s-a")) == ["turn/step/attempt"]  # alone, it has the room
    assert heads(str(home / "--p--" / "s-b")) == ["t/s/a"]
    assert heads(str(home)) == ["t/s/a", "t/s/a"]


def test_a_long_log_path_is_whole_on_its_line(monkeypatch, capsys, tmp_path: Path) -> None:
    path = tmp_path / "sessions" / ("--home-dev-" + "a-very-long-project-name-" * 3 + "-") / "s-x" / "session.jsonl"
    _session(path, "s-x", 1)
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = invoke(monkeypatch, capsys, "requests", str(path))
    assert code == 0
    assert out.splitlines()[:2] == [str(path), "session s-x"]


def _two_logs(tmp_path: Path) -> Iterator[Path]:
    for name in ("s-one", "s-two"):
        path = tmp_path / "sessions" / ("--home-dev-" + "long-project-" * 4 + "-") / name / "session.jsonl"
        _session(path, name, 1)
        yield path


@pytest.mark.parametrize("columns", [80, 120, 160, 200])
def test_check_never_shows_two_logs_alike(monkeypatch, capsys, tmp_path: Path, columns: int) -> None:
    """Before: "/tmp/tour37/ho…sion.jsonl.zstd" on both rows of check's "log" column."""
    paths = [str(p) for p in _two_logs(tmp_path)]
    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    code, out, _ = invoke(monkeypatch, capsys, "check", str(tmp_path / "sessions"))
    assert code == 0
    rows = [line for line in out.splitlines() if re.search(r"\bok\b", line)]
    assert len(rows) == 2
    assert "…" not in "".join(rows)
    shown = [path for path in paths if any(path in row for row in rows)]
    assert shown in ([], paths)
