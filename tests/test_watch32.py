"""``dsh-audit watch`` over a folder of many sessions looks at the folders, not into the files.

Each look for new logs used to run discovery again, which opens every log not named as DSH names
its logs (an export ``<id>.jsonl``) to peek at its first bytes: a watch polling a folder of 200
exports opened 200 files a second, 300 per change of one log. Now a look only looks at the folders
(and at the files discovery did not take for a log: one may become a log as it is written); while
none changed, no file is opened, and discovery runs again only when one did (a file created,
removed, renamed or written). A session id read from a log's header is read again only when
another file takes the log's path. Counted with an audit hook on ``open`` in a subprocess (the hook
does not outlive the test), as ``tests/test_watch_opens.py`` counts; real file watching.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from _cli import chat_log
from test_watch_fixes import _drive, _note

from dsh_audit.watch import WatchNote

_COUNTER = textwrap.dedent("""
    import json, os, sys, threading
    from dsh_audit.watch import WatchNote, watch

    root, late, source = sys.argv[1:4]
    opens, writing = {}, []

    def hook(event, args):
        if event == "open" and not writing and isinstance(args[0], (str, bytes)):
            path = os.path.realpath(os.fsdecode(args[0]))
            if path.startswith(root):
                opens[path] = opens.get(path, 0) + 1

    sys.addaudithook(hook)
    stop, started = threading.Event(), []
    for item in watch([root], stop=stop, rescan=0.02, poll=0.02, notifications=False, exit_after=30):
        if isinstance(item, WatchNote) and item.level == "started":
            started.append(item.session_id)
            if len(started) == 20:  # every export followed: the late one is written in place
                with open(source, "rb") as handle:
                    data = handle.read()
                writing.append(True)  # this open is the writer's, not the watch's
                with open(late, "r+b") as handle:
                    writing.clear()
                    handle.write(data)
            elif len(started) == 21:  # found without any folder changing; then some 25 looks more
                threading.Timer(0.5, stop.set).start()
    print(json.dumps({"started": sorted(started), "opens": opens}))
""")


def test_a_look_for_new_logs_opens_no_file_that_did_not_change(tmp_path: Path) -> None:
    root = tmp_path / "exports"
    logs = [chat_log(root / f"s{n:02d}.jsonl", f"s{n:02d}") for n in range(20)]
    late = root / "late.jsonl"  # created empty, as a writer does: not a log yet
    late.write_bytes(b"")
    source = chat_log(tmp_path / "staged" / "late.jsonl", "late")
    done = subprocess.run([sys.executable, "-c", _COUNTER, str(root.resolve()), str(late), str(source)],
                          capture_output=True, text=True, check=True, timeout=60)
    found = json.loads(done.stdout)
    assert found["started"] == sorted(["late", *(f"s{n:02d}" for n in range(20))])
    opens = {os.path.basename(path): n for path, n in found["opens"].items()}
    # each export: discovery's peek at its first bytes, its header read for its session id (exports
    # of one size, and those beside them, as every other command groups them: fuzz round 23, the
    # watch follows the file they read) and its follower; the late file, a log while empty too (as
    # every command takes an empty *.jsonl, session 46): its peek, its follower, and a look at its
    # header once written, one more when a look for new logs came while it was written. Never once
    # per look (some 25 looks; before, each export was opened at each: 25 times)
    late_opens = opens.pop("late.jsonl")
    assert opens == {log.name: 3 for log in logs} and late_opens in (3, 4), (opens, late_opens)


def test_a_copy_replaced_by_another_session_is_followed_as_that_session(tmp_path: Path) -> None:
    """Two files DSH's layout names for one session (a session folder copied into another
    project): one is followed, the other left out with a note. Another session's log then takes
    the copy's path: its id is read again, and it is followed as that session (its id was kept
    for the path, so it was taken for a copy that now differs and was never followed)."""
    kept = chat_log(tmp_path / "sessions" / "--p--" / "X" / "session.jsonl", "X")
    copy = tmp_path / "sessions" / "--q--" / "X" / "session.jsonl"
    copy.parent.mkdir(parents=True)
    copy.write_bytes(kept.read_bytes())
    other = chat_log(tmp_path / "staged" / "session.jsonl", "Y")
    items = _drive(tmp_path, [(_note("note"), lambda: os.replace(other, copy)),
                              (lambda item: isinstance(item, WatchNote) and item.level == "started"
                               and item.path == str(copy), lambda: None)], rescan=0.02, notifications=False)
    notes = [(item.level, item.path, item.session_id) for item in items if isinstance(item, WatchNote)]
    assert notes == [("watching", str(tmp_path / "sessions"), None), ("note", str(kept), "X"),
                     ("started", str(kept), "X"), ("started", str(copy), "Y")], items
