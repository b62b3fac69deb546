"""Fuzz round 9 (issue 15): discovery of one session held in several files, the DSH home's route
layers and ``--profile``, session references and time windows over hostile trees, every output
for log text in fields earlier rounds did not target, and Ctrl-C / SIGTERM during discovery
(docs/hostile-inputs.md, "Round 9").

The defects it found, each with a test below that failed before its fix:

- ``index`` of a folder holding a log that is a symlink loop exited 3 (``RuntimeError: Symlink
  loop``: the index resolved every path with :meth:`Path.resolve`); after that, the loop made
  every other log of its project folder fail with the loop's error (the group's stat raised), so a
  readable session was left out of the index;
- ``check --markdown`` (also ``$GITHUB_STEP_SUMMARY``) wrote a session id, path or finding message
  with its raw ESC, BEL, C1, bidi and DEL characters: ``check --markdown -`` put a log's terminal
  escapes on the terminal;
- ``check --junit`` wrote the C1, bidi, DEL and CR characters XML can hold raw, and a log path
  holding a line break followed by ``::error::`` put a workflow command line on stdout with
  ``--junit -``; they are now character references (``&#x3a;:error::``), the same text to an XML
  reader;
- every JSON output (``--json``, ``check --json``, ``show``) wrote DEL (U+007F) raw, the one
  control character the JSON writer left as it was: now ``\u007f`` like the C1 controls;

- a folder nested past about 990 levels below a searched path made every command that searches
  folders exit 3 (``RecursionError`` from :func:`os.walk`, which recurses per level in Python
  3.11): discovery now walks the tree with a stack of folders, in the same order;

and two in files this round did not own (``report/terminal.py`` was being rewritten by another
session), shown by strict xfail tests until they are fixed:

- a table cell is wrapped at its spaces, so log text holding a line break and blanks before
  ``::warning file=a::PWN`` (the break escaped as ``\\u000a``) puts ``::warning`` at the start of
  a line of the table (``usage --by session`` at 60 columns; ``sessions``, ``check`` at others): a
  workflow command when the table is printed in a CI log;

- the settings document's ``llm-pi-ai`` section is merged into the patch layer's config key by
  key (``wire/_piai_home.py`` ``_merge_layers``) following every alias: a mapping alias bomb
  under the same key in both (1 KB each) takes exponential time and memory (9**9 merges: past 60 s).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import xml.etree.ElementTree as ET
from contextlib import closing
from pathlib import Path

import pytest
from _cli import chat_log, invoke

from dsh_audit.wire import load_home_routes

HOSTILE = "id\x1b]0;PWN\x07\u202e\x9b2J\x7f|<b>"


def _hostile_log(path: Path) -> Path:
    """The one-turn chat of :func:`chat_log` whose session id is :data:`HOSTILE`."""
    log = chat_log(path, "HOSTILE")
    text = log.read_text("utf-8")
    assert text.count('"HOSTILE"') == 1
    log.write_text(text.replace('"HOSTILE"', json.dumps(HOSTILE)), "utf-8")
    return log


# -- index: a symlink loop among the logs ---------------------------------------------------------

def test_index_reports_a_symlink_loop_and_indexes_its_neighbours(tmp_path, monkeypatch, capsys):
    chat_log(tmp_path / "logs" / "ok" / "session.jsonl", "ok")
    loop = tmp_path / "logs" / "loop" / "session.jsonl"
    loop.parent.mkdir()
    loop.symlink_to("session.jsonl")
    db = tmp_path / "i.db"
    code, out, err = invoke(monkeypatch, capsys, "index", str(tmp_path / "logs"), "--db", str(db))
    assert (code, err) == (2, [f"error: {loop}: cannot open: symlink loop"])
    assert out.startswith(f"{db}: indexed 2 (1 refused, stored with their error), skipped 0 unchanged, of 2 log(s) in ")
    with closing(sqlite3.connect(db)) as connection:
        rows = connection.execute("SELECT session_id, error FROM sessions ORDER BY path").fetchall()
    assert rows == [(None, f"{loop}: cannot open: symlink loop"), ("ok", None)]


# -- check's documents: log text never a terminal's command ----------------------------------------

def test_check_markdown_shows_control_and_bidi_characters_escaped(tmp_path, monkeypatch, capsys):
    log = _hostile_log(tmp_path / "s" / "session.jsonl")
    code, out, err = invoke(monkeypatch, capsys, "check", str(log), "--markdown", "-")
    shown = str(log).replace("_", "\\_")  # Markdown's emphasis character, escaped
    # the log's deepseek-official usage logs no cacheReadTokens: its hits are unknown, so it is unpriced
    # ("$?", never an exact figure: docs/cache-accounting.md, "Unpriced requests")
    row = (f"| ✅ pass | {shown} | id\\\\u001b\\]0;PWN\\\\u0007\\\\u202e\\\\u009b2J\\\\u007f\\|\\<b\\> | 1 | none | 0 | n/a "
           "| \\$? (1 unpriced) | \\$? | \\$? | 1 |")  # cost, with no cache, off-peak
    assert (code, err[:1], out.splitlines()[6]) == (0, ["dsh-audit check"], row)
    # check's table and verdict on stderr beside the report (session 40): escaped there too
    assert not any(c in out + "".join(err) for c in "\x1b\x07\u202e\x9b\x7f")


def test_check_junit_shows_active_characters_as_the_terminal_does_in_names(tmp_path, monkeypatch, capsys):
    log = _hostile_log(tmp_path / "s" / "session.jsonl")
    monkeypatch.chdir(tmp_path)  # the testsuite names the log's path relative to the run's folder
    code, out, err = invoke(monkeypatch, capsys, "check", str(log), "--junit", "-")
    # session 44: as the terminal shows it, never a character reference an XML reader decodes to the raw character
    name = "s/session.jsonl (id\\u001b]0;PWN\\u0007\\u202e\\u009b2J\\u007f|&lt;b&gt;)"
    assert (code, err[:1], out.splitlines()[2]) == \
        (0, ["dsh-audit check"], f'  <testsuite name="{name}" file="{log}" tests="2" failures="0" errors="0" '
         'skipped="0" time="0">')
    assert not any(c in out + "".join(err) for c in "\x1b\x07\u202e\x9b\x7f")
    assert ET.fromstring(out.encode())[0].get("name") == \
        "s/session.jsonl (id\\u001b]0;PWN\\u0007\\u202e\\u009b2J\\u007f|<b>)"


def test_check_junit_starts_no_workflow_command_from_a_path(tmp_path, monkeypatch, capsys):
    log = chat_log(tmp_path / "x\r\n::error::PWN" / "session.jsonl", "s")
    code, out, err = invoke(monkeypatch, capsys, "check", str(tmp_path), "--junit", "-")
    shown = str(log).replace("\r\n::", "\\u000d\\u000a::")  # session 44: the path's line break is no line
    assert (code, err[:1], out.splitlines()[4]) == \
        (0, ["dsh-audit check"], f"      <system-out>{shown}: DSH810 info: no capture given or found beside the log "
         "(wire.jsonl) (hint: pass --capture FILE, or put a wire.jsonl holding the log's requests beside it or up to "
         "four folders above it)</system-out>")
    assert not [line for line in out.splitlines() if line.lstrip().startswith("::")] and "\r" not in out
    assert not [line for line in err if line.lstrip().startswith("::")] and "\r" not in "".join(err)
    assert shown + ": DSH810" in ET.fromstring(out.encode())[0][0][0].text
    # the file attribute is a machine field: the path itself to an XML reader (a CI viewer opens it)
    assert ET.fromstring(out.encode())[0].get("file") == str(log)


def test_a_wrapped_table_cell_starts_no_workflow_command(tmp_path, monkeypatch, capsys):
    log = chat_log(tmp_path / "s" / "session.jsonl", "SID")
    log.write_text(log.read_text("utf-8").replace('"SID"', json.dumps("x\n  ::warning file=a::PWN")), "utf-8")
    monkeypatch.setenv("COLUMNS", "60")
    code, out, err = invoke(monkeypatch, capsys, "usage", str(log), "--by", "session")
    # the one warning: its deepseek-official usage logs no cacheReadTokens (docs/cache-accounting.md)
    assert (code, [e for e in err if "cache reads not logged" not in e],
            [line for line in out.splitlines() if line.lstrip().startswith("::")]) == (0, [], [])


# -- the DSH home's settings document: an alias bomb merged key by key ------------------------------

def _mapping_bomb(indent: str) -> str:
    lines = ["m0: &m0 {" + ", ".join(f"k{j}: 1" for j in range(9)) + "}"]
    lines += [f"m{i}: &m{i} {{" + ", ".join(f"k{j}: *m{i - 1}" for j in range(9)) + "}" for i in range(1, 10)]
    return "".join(f"{indent}{line}\n" for line in lines)


def test_a_settings_alias_bomb_merged_with_one_in_the_patch_layer_is_bounded(tmp_path):
    (tmp_path / "cordis.patch.yml").write_text(
        "- id: anchors\n  a:\n" + _mapping_bomb("    ") + "- id: llm-pi-ai\n  config:\n    providers: {p: {api: "
        "openai-completions, baseURL: 'http://x', models: [{id: m}]}}\n    x: *m9\n", "utf-8")
    (tmp_path / "settings.yaml").write_text("anchors:\n" + _mapping_bomb("  ") + "llm-pi-ai:\n  x: *m9\n", "utf-8")

    def stop(signum, frame):
        raise TimeoutError("the merge ran past 2 s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, 2.0)
    try:
        routes = load_home_routes(tmp_path)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert routes is not None and routes.layers == (str(tmp_path / "cordis.patch.yml"), str(tmp_path / "settings.yaml"))


def test_json_escapes_del_like_the_other_controls(tmp_path, monkeypatch, capsys):
    log = _hostile_log(tmp_path / "s" / "session.jsonl")
    code, out, err = invoke(monkeypatch, capsys, "sessions", str(log), "--json", "--no-cost")
    assert (code, err, json.loads(out)["session_id"]) == (0, [], HOSTILE)
    assert '"session_id":"id\\u001b]0;PWN\\u0007\\u202e\\u009b2J\\u007f|<b>"' in out
    assert "\x7f" not in out


# -- discovery: a folder nested deeper than Python's recursion limit --------------------------------

def _nest(top: Path, depth: int) -> Path:
    """``top/d/d/.../d``, ``depth`` folders deep, each made beside the one above it through an open
    handle on that one (``dir_fd``): a path of n levels costs the kernel n look-ups, and making (and
    removing) each level by its whole path cost the setup 1100**2/2 of them. pathlib's
    ``mkdir(parents=True)`` would recurse once per level."""
    handle = os.open(top, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=handle)
            handle, above = os.open("d", os.O_RDONLY, dir_fd=handle), handle
            os.close(above)
    finally:
        os.close(handle)
    return top.joinpath(*["d"] * depth)


def _unnest(top: Path) -> None:
    """Remove what :func:`_nest` made under ``top`` (and the files in its folders), the deepest first,
    through handles as it was made: pytest's clean-up of old temporary folders (shutil.rmtree)
    recurses per level."""
    handles = [os.open(top, os.O_RDONLY)]
    try:
        while "d" in os.listdir(handles[-1]):
            handles.append(os.open("d", os.O_RDONLY, dir_fd=handles[-1]))
        while len(handles) > 1:
            below = handles.pop()
            for name in os.listdir(below):
                os.unlink(name, dir_fd=below)
            os.close(below)
            os.rmdir("d", dir_fd=handles[-1])
    finally:
        for handle in handles:
            os.close(handle)


def test_a_log_1100_folders_deep_is_found(tmp_path, monkeypatch, capsys):
    try:
        log = chat_log(_nest(tmp_path, 1100) / "session.jsonl", "deep")
        chat_log(tmp_path / "top" / "session.jsonl", "top")
        code, out, err = invoke(monkeypatch, capsys, "sessions", str(tmp_path), "--json", "--no-cost")
        found = sorted((json.loads(line)["session_id"], json.loads(line)["path"]) for line in out.splitlines())
        assert (code, err, found) == (0, [], [("deep", str(log)), ("top", str(tmp_path / "top" / "session.jsonl"))])
    finally:
        _unnest(tmp_path)
