"""Long values cut with a marker (issue 15 item 2): a log's value printed outside a table's cell
(a heading, a note, a warning) is cut with ``…`` to the terminal's width, so that a
20,000-character session id, title or model is a line, not one of 20,000 columns (``cache``'s
heading) nor 250 folded ones (``explain``'s, ``diff``'s note); ``--json`` keeps it whole.

Run in a real pseudo-terminal 80 columns wide, as a person sees it: stdout and stderr together."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from _terminal import in_terminal as terminal_run

from dsh_audit.testing import LogBuilder

LONG = 20_000
SESSION = "session-" + "A" * LONG
WIDTH = 80
#: The bound every line keeps: twice the terminal's width (a value is cut to the width; its line
#: holds a few words more, and a table's own lines fit the width). An error line, one line always,
#: quotes no log value here.
MOST = 2 * WIDTH


@pytest.fixture(scope="module")
def long_log(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A two-turn log whose session id, title, model and prompts are 20,000 characters long, and a
    capture of a send to that model that matches none of its requests."""
    root = tmp_path_factory.mktemp("long")
    b = LogBuilder(session_id=SESSION, model="m" * LONG, system="S" * LONG)
    with b.turn("U" * LONG), b.step():
        b.assistant("X" * LONG)
    b.title("T" * LONG)
    with b.turn("again"), b.step():
        b.assistant("Y")
    log = root / "p" / "session.jsonl"
    log.parent.mkdir()
    log.write_text("".join(line + "\n" for line in b.lines(packed=False)), "utf-8")
    capture = root / "capture.jsonl"
    body = json.dumps({"model": "m" * LONG, "messages": [{"role": "user", "content": "U" * LONG}]})
    capture.write_text(json.dumps({"method": "POST", "path": "/chat/completions", "headers": {}, "body": body}) + "\n")
    return log, capture


def in_terminal(*args: str) -> tuple[int, str]:
    """``dsh-audit ARGS`` in a pseudo-terminal of 80 columns (no pager): its exit code and what
    it printed on stdout and stderr, colour codes left out."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DSH_AUDIT_", "GITHUB_"))}
    env.update(COLUMNS=str(WIDTH), LINES="24", TERM="xterm", DSH_AUDIT_PAGER="cat", PAGER="cat")
    code, text, _ = terminal_run(list(args), columns=WIDTH, env=env, cwd=Path.cwd(), stderr_too=True)
    return code, text


@pytest.mark.parametrize("args", [
    ["requests", "LOG"], ["breaks", "--all", "LOG"], ["cache", "LOG"], ["explain", "LOG", "2"], ["usage", "LOG"],
    ["diff", "LOG", "--capture", "CAP"], ["validate", "LOG"], ["show", "LOG", "0"]], ids=lambda a: a[0])
def test_a_20000_character_id_title_and_model_are_cut_on_a_terminal(long_log, args):
    log, capture = long_log
    code, text = in_terminal(*[str(log) if a == "LOG" else str(capture) if a == "CAP" else a for a in args])
    assert code in (0, 1), text[-2000:]
    assert "Traceback" not in text
    if args[0] == "show":  # the request as JSON: lossless, the id whole
        assert json.loads(text)["session_id"] == SESSION
        return
    lines = text.split("\n")
    longest = max(lines, key=len)
    assert len(longest) <= MOST, (len(longest), longest[:200])
    assert len(lines) < 60, text[:2000]  # no value folded into 250 lines of 80 (explain, diff's note)
    assert "A" * 200 not in text and "m" * 200 not in text and "T" * 200 not in text
    if args[0] != "validate":  # validate names no session of a log it finds nothing in
        assert re.search(r"session-A+…", text), text[:2000]
