"""``dsh-audit watch`` opens a log no more at start-up than following it needs.

Grouping the files of one session (a log and its export or copy, :mod:`dsh_audit.watch`) needs
each file's session id; reading every log's header for it, before any follower exists, opened each
log once more than the watch did before copies were grouped (4 opens where 3 do). A log that
discovery would never compare with another (no other file has its name, and DSH's home and files
outside it are not found together) is not opened for its id: its follower's ``started`` note says
it. Counted with an audit hook on ``open`` in a subprocess (the hook does not outlive the test), as
``tests/test_opens.py`` counts every other command's opens, with real file watching as the other
watch tests run it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _cli import chat_log

WATCH = ("--since", "100000d", "--idle-exit", "0.3", "--polling", "--json")

_COUNTER = textwrap.dedent("""
    import json, os, sys
    from click.testing import CliRunner
    from dsh_audit.cli import cli

    runs = []
    for argv, paths in json.loads(sys.argv[1]):
        runs.append((argv, {os.path.realpath(p): 0 for p in paths}))
    logs = {path: counts for _, counts in runs for path in counts}

    def hook(event, args):
        if event == "open" and isinstance(args[0], (str, bytes)):
            path = os.path.realpath(os.fsdecode(args[0]))
            if path in logs:
                logs[path][path] += 1

    sys.addaudithook(hook)
    found = []
    for argv, opens in runs:
        result = CliRunner().invoke(cli, argv)
        found.append({"exit": result.exit_code, "output": result.output, "opens": dict(opens)})  # as it ended
    print(json.dumps(found))
""")

Watched = dict[str, tuple[int, str, dict[str, int]]]

#: The cases below, each a watched folder and its logs (made by :func:`_case`).
CASES = ("alone", "folders", "export")


def _case(tmp_path: Path, case: str) -> tuple[Path, list[Path]]:
    """The watched root and the logs of each case: a log alone; sessions each in its own folder;
    DSH's log and an export of it outside DSH's layout."""
    if case == "alone":
        return tmp_path, [chat_log(tmp_path / "s" / "session-one.jsonl", "one")]
    root = tmp_path / "sessions"
    if case == "folders":
        return root, [chat_log(root / "--p--" / sid / "session.jsonl", sid) for sid in ("a", "b", "c")]
    kept = chat_log(root / "--p--" / "s1" / "session.jsonl", "s1")
    export = root / "exports" / "s1.jsonl"
    export.parent.mkdir()
    export.write_bytes(kept.read_bytes())
    return root, [kept, export]


@pytest.fixture(scope="module")
def watched(tmp_path_factory: pytest.TempPathFactory) -> Watched:
    """Exit code, output and the opens of each log of ``dsh-audit watch root``, for each of
    :data:`CASES` (in a folder of its own), the watches run in turn in one subprocess (one start for
    them all)."""
    cases = {case: _case(tmp_path_factory.mktemp(case), case) for case in CASES}
    jobs = [(["watch", str(root), *WATCH], [str(p) for p in logs]) for root, logs in cases.values()]
    done = subprocess.run([sys.executable, "-c", _COUNTER, json.dumps(jobs)], capture_output=True, text=True,
                          check=True, timeout=60)
    results = {}
    for (case, (root, logs)), found in zip(cases.items(), json.loads(done.stdout)):
        real = {str(p.resolve()): p.name if p.parent == root else f"{p.parent.name}/{p.name}" for p in logs}
        results[case] = (found["exit"], found["output"], {real[p]: n for p, n in found["opens"].items()})
    return results


def _items(output: str, kind: str) -> list[dict[str, object]]:
    return [item for item in map(json.loads, output.splitlines()) if item["type"] == kind]


def _started(output: str) -> list[str]:
    """The session of each log followed, sorted."""
    return sorted(str(item["session_id"]) for item in _items(output, "started"))


def test_a_log_alone_is_opened_as_often_as_following_it_needs(watched: Watched) -> None:
    # discovery's peek at its first bytes (not named as DSH names its logs), its last activity
    # (for --since) and its follower: never once more for its session id
    code, output, opens = watched["alone"]
    assert (code, _started(output)) == (0, ["one"])
    assert opens == {"s/session-one.jsonl": 3}


def test_sessions_each_in_its_own_folder_are_not_opened_for_their_ids(watched: Watched) -> None:
    code, output, opens = watched["folders"]
    assert (code, _started(output)) == (0, ["a", "b", "c"])
    # its last activity and its follower (DSH's layout: no peek at the file to tell it is a log)
    assert opens == {"a/session.jsonl": 2, "b/session.jsonl": 2, "c/session.jsonl": 2}


def test_files_that_may_hold_one_session_are_still_read_for_their_ids(watched: Watched) -> None:
    # DSH's log and an export of it outside DSH's layout: discovery compares them by their headers'
    # ids, so the watch reads each one's id, then compares them (ids again, then the lines); the
    # export is also peeked at by discovery; DSH's log is followed, the export is not
    code, output, opens = watched["export"]
    assert (code, _started(output)) == (0, ["s1"])
    assert [str(item["message"]).startswith("one session in two files") for item in _items(output, "note")] == [True]
    assert opens == {"s1/session.jsonl": 5, "exports/s1.jsonl": 4}
