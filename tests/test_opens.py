"""Every command reads each log once (counted with an audit hook on ``open``, in a subprocess so
the hook does not outlive the test). Logs are given as files: discovering a folder also peeks at
the first 64 bytes of each file not named like a DSH log, to tell logs from other JSONL files."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
SCENARIO = CORPUS / "live" / "f-fork"

_COUNTER = textwrap.dedent("""
    import json, os, sys
    from click.testing import CliRunner
    from dsh_audit.cli import cli

    logs = {os.path.realpath(p) for p in sys.argv[2:]}
    counts = {}
    current = [None]

    def hook(event, args):
        if event == "open" and current[0] and isinstance(args[0], (str, bytes)):
            path = os.path.realpath(os.fsdecode(args[0]))
            if path in logs:
                counts[current[0]][path] = counts[current[0]].get(path, 0) + 1

    sys.addaudithook(hook)
    for name, argv in json.loads(sys.argv[1]):
        counts[name] = {}
        current[0] = name
        result = CliRunner().invoke(cli, argv)
        current[0] = None
        counts[name]["exit"] = repr(result.exception) if result.exception else result.output[:0]
    print(json.dumps(counts))
""")


@pytest.mark.skipif(not SCENARIO.is_dir(), reason="../shared/corpus is absent")
def test_every_command_opens_each_log_once(tmp_path: Path) -> None:
    folder = SCENARIO / "session-logs"
    logs = sorted(str(p) for p in folder.glob("*.jsonl"))
    assert len(logs) == 2  # a parent and its fork child
    one = logs[0]
    capture = ["--capture", str(SCENARIO / "wire.jsonl")]
    commands = [
        ("requests", ["requests", "--json", *logs]),
        ("breaks", ["breaks", "--json", *logs]),
        ("cache", ["cache", "--json", *logs]),
        ("validate", ["validate", *logs]),
        ("index", ["index", *logs, "--db", str(tmp_path / "i.sqlite")]),
        ("diff", ["diff", one, *capture]),
        ("explain", ["explain", one, "0"]),
        ("show", ["show", one, "0"]),
        ("render", ["render", one, "0"]),
        ("check", ["check", *logs, *capture]),
        ("report", ["report", *logs, *capture, "-o", str(tmp_path / "r.html")]),
        ("redact", ["redact", one, "-o", str(tmp_path / "redacted.jsonl"), "--salt", "s", "--alone", *capture]),
    ]
    out = subprocess.run([sys.executable, "-c", _COUNTER, json.dumps(commands), *logs], capture_output=True,
                         text=True, check=True).stdout
    counts = json.loads(out)
    real = {str(Path(p).resolve()): p for p in logs}
    opened = {name: {real[p]: n for p, n in c.items() if p != "exit"} for name, c in counts.items()}
    single = {name: {one: 1} for name in ("diff", "show", "render")}
    # redact reads the fork child once, and its parent's header once (for the child ids texts may
    # name, and to say the child was redacted --alone)
    single["redact"] = {one: 1, logs[1]: 1}
    # explain on the fork child reads its parent (found beside it) once, to compare with;
    # check and report run the validation rules over the lines of the session's own read;
    # validate proves the child's seed equal to its parent's prefix from running hashes kept in
    # its one pass (a seed that differs is read again, for the finding's exact seq and line).
    both = {name: dict.fromkeys(logs, 1) for name in ("requests", "breaks", "cache", "index", "explain", "check",
                                                       "report", "validate")}
    assert opened == {**both, **single}
    assert {name: c["exit"] for name, c in counts.items()} == dict.fromkeys(opened, "")  # no command failed
