"""A capture given with ``--capture`` to a view that prices from it and compares with it (``usage``,
``cache``, ``check``) is opened once: the read that keeps each response's usage is the load the
comparison takes (:func:`dsh_audit.capture.load_capture` of the file :func:`~dsh_audit.capture.read_capture`
read with ``keep``, unchanged since). Opens are counted with an audit hook in a subprocess, as
``tests/test_opens.py`` counts a log's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dsh_audit.capture import load_capture, read_capture
from dsh_audit.errors import CaptureError

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
SCENARIO = CORPUS / "live" / "f-fork"

_COUNTER = textwrap.dedent("""
    import json, os, sys
    from click.testing import CliRunner
    from dsh_audit.cli import cli

    capture = os.path.realpath(sys.argv[2])
    counts = {}
    current = [None]

    def hook(event, args):
        if event == "open" and current[0] and isinstance(args[0], (str, bytes)):
            if os.path.realpath(os.fsdecode(args[0])) == capture:
                counts[current[0]]["opens"] += 1

    sys.addaudithook(hook)
    for n, (name, argv) in enumerate(json.loads(sys.argv[1]), start=1):
        os.utime(capture, ns=(n, n))  # a file touched since: the last command's read is not handed over
        counts[name] = {"opens": 0}
        current[0] = name
        result = CliRunner().invoke(cli, argv)
        current[0] = None
        counts[name]["exit"] = result.exit_code
    print(json.dumps(counts))
""")


@pytest.mark.skipif(not SCENARIO.is_dir(), reason="../shared/corpus is absent")
def test_priced_and_compared_capture_is_opened_once(tmp_path: Path) -> None:
    capture = tmp_path / "wire.jsonl"
    shutil.copyfile(SCENARIO / "wire.jsonl", capture)
    logs = sorted(str(p) for p in (SCENARIO / "session-logs").glob("*.jsonl"))
    given = ["--capture", str(capture)]
    commands = [(name, [name, "--json", *logs, *given]) for name in ("usage", "cache", "check")]
    out = subprocess.run([sys.executable, "-c", _COUNTER, json.dumps(commands), str(capture)], capture_output=True,
                         text=True, check=True).stdout
    assert json.loads(out) == {"usage": {"opens": 1, "exit": 0}, "cache": {"opens": 1, "exit": 0},
                               "check": {"opens": 1, "exit": 0}}


def _records(count: int) -> bytes:
    lines = [{"method": "POST", "path": "/chat/completions", "headers": {},
              "body": json.dumps({"messages": [{"role": "user", "content": f"hi {n}"}]}),
              "response": {"usage": {"prompt_tokens": 10 + n, "completion_tokens": 1}}} for n in range(count)]
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def _usage(record: object) -> object:
    return record["response"]["usage"]["prompt_tokens"] if isinstance(record, dict) else None


def test_load_after_a_kept_read_hands_the_same_requests_over(tmp_path: Path) -> None:
    path = tmp_path / "wire.jsonl"
    path.write_bytes(_records(3))
    read = read_capture(path, warnings=[], keep=_usage)
    assert read.records == [10, 11, 12]
    again = load_capture(path)
    assert again == read.requests and again is not read.requests
    assert all(a is b for a, b in zip(again, read.requests))  # the same objects: not read again
    assert [r.body for r in again] == [r.body for r in load_capture(path, format="wire-jsonl")]
    assert read_capture(path, warnings=[], keep=_usage).records == [10, 11, 12]


def test_a_changed_file_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "wire.jsonl"
    path.write_bytes(_records(2))
    read = read_capture(path, warnings=[], keep=_usage)
    path.write_bytes(_records(3))
    os.utime(path, ns=(1, 1))
    again = load_capture(path)
    assert [r.position for r in again] == [0, 1, 2] and again[0] is not read.requests[0]


def test_a_torn_tail_is_said_again_and_refused_where_it_was(tmp_path: Path) -> None:
    path = tmp_path / "wire.jsonl"
    path.write_bytes(_records(2) + b'{"method": "PO')
    first: list[str] = []
    assert len(read_capture(path, warnings=first, keep=_usage).requests) == 2
    second: list[str] = []
    assert len(load_capture(path, warnings=second)) == 2
    assert second == first and len(first) == 1 and "torn tail: line 3" in first[0]
    with pytest.raises(CaptureError, match="line 3: not a JSON record"):
        load_capture(path)
