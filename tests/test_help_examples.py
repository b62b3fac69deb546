"""Every help example prints something meaningful on the bundled samples (tour36 F15).

Each command's ``Example:`` lines are read from its --help; the command before any ``| jq``
runs with ``$DSH_HOME`` at ``sample_logs/`` (``~/.dsh/sessions``, a bare command and ``latest``
read it), placeholder files mapped onto the samples and ``--jobs`` past 2 run with 2 (the same
process pool, half the workers to start; tests/test_fleet.py checks that it prints what a serial
run prints); it must exit 0 or 1 (findings) and print something. A ``jq`` filter that is a plain
path (``.a.b``) must select a value that is neither null nor a cost object (an amount was meant)
in at least one printed document.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from dsh_audit.cli import cli

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
ONE = SAMPLES / "tools" / "session.jsonl"
#: placeholders of the examples -> the sample they stand for
PLACES = {"~/.dsh/sessions/--home-me-proj--/session-1":
          str(SAMPLES / "sessions" / "--home-dev-projects-demo--" / "session-sample-change"),
          "~/.dsh/sessions": str(SAMPLES), "sample_logs/": str(SAMPLES) + "/", "recorded/": str(SAMPLES),
          "session.jsonl.zstd": str(ONE), "session.jsonl": str(ONE)}
#: examples left out, and why
SKIPPED = {"watch": "follows the logs until interrupted (tests/test_watch*.py run it with --exit-after)",
           "redact": "writes a bundle (tests/test_redact*.py check it)",
           "report": "writes a page, prints nothing (tests/test_html*.py check it)",
           "diff": "needs a capture (not bundled)"}
COMMANDS = ("sessions", "requests", "show", "render", "breaks", "explain", "cache", "usage", "check",
            "validate", "index", "stats")


def _examples(command: str) -> list[str]:
    out = CliRunner().invoke(cli, [command, "--help"], env={"COLUMNS": "200"}).output
    found = re.findall(r"^\s+(dsh-audit .+)$", out.split("Example", 1)[1], re.M) if "Example" in out else []
    return [line for line in found if line.split()[1] == command]


def _pick(document: Any, path: str) -> Any:
    for part in path.strip(".").split("."):
        if not isinstance(document, dict):
            return None
        document = document.get(part)
    return document


def _cases() -> list[tuple[str, str]]:
    return [(command, example) for command in COMMANDS for example in _examples(command)]


@pytest.fixture(scope="module")
def index_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The samples' index, as the index example makes it, made once: each stats example reads a copy."""
    db = tmp_path_factory.mktemp("index") / "audit.sqlite"
    CliRunner().invoke(cli, ["index", str(SAMPLES), "--db", str(db)], catch_exceptions=False)
    return db


@pytest.mark.parametrize(("command", "example"), _cases())
def test_each_help_example_prints_something_on_the_samples(command: str, example: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          request: pytest.FixtureRequest) -> None:
    assert command not in SKIPPED
    line, _, jq = example.partition("|")
    for place, sample in PLACES.items():
        line = re.sub(rf"(?<![\w/.]){re.escape(place)}", sample, line)
    args = shlex.split(line)[1:]
    if "--since" in args:  # the samples are dated 2027-01-15: a window that holds them
        args[args.index("--since") + 1] = "2027-01-01"
    if "--jobs" in args and int(args[args.index("--jobs") + 1]) > 2:  # the same pool with two workers:
        args[args.index("--jobs") + 1] = "2"  # each started worker imports the package (0.3-0.5 s of CPU)
    monkeypatch.chdir(tmp_path)
    if command == "stats":  # its index, as the index example makes it
        shutil.copyfile(request.getfixturevalue("index_db"), tmp_path / "audit.sqlite")
    result = CliRunner().invoke(cli, args, env={"DSH_HOME": str(SAMPLES), "COLUMNS": "200"},
                                catch_exceptions=False)
    assert result.exit_code in (0, 1), (example, result.output)
    assert result.output.strip() or any(tmp_path.iterdir()), example  # validate: its summary on stderr
    filters = shlex.split(jq)[1:] if jq.strip().startswith("jq") else []
    path = next((f for f in filters if re.fullmatch(r"(\.\w+)+", f)), None)
    if path is not None:
        lines = result.stdout.splitlines()
        try:
            documents = [json.loads(result.stdout)]
        except ValueError:
            documents = [json.loads(x) for x in lines if x.strip()]
        picked = [_pick(d, path) for d in documents]
        # a value, not null, and not a cost object where an amount was meant
        assert any(v is not None and not (isinstance(v, dict) and "total" in v) for v in picked), (example, picked[:3])


def test_every_command_with_examples_is_run_or_skipped_with_a_reason() -> None:
    assert {c for c in COMMANDS if _examples(c)} == set(COMMANDS)
    assert all(_examples(c) for c in SKIPPED)
