"""The one bounded reader of configuration files (``dsh_audit._pyproject``) and the search for the
nearest ``pyproject.toml`` (issue 15 leftover).

A FIFO, a device, a symlink loop or a dangling symlink named ``pyproject.toml`` on the way up is
one error line naming it and exit 2 on every command that reads the file (never read, never waited
on, never skipped); a folder of that name is not a pyproject.toml and the search goes on above it,
as pip (``os.path.isfile``) and black (``Path.is_file``) do.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from _cli import chat_log, invoke
from dsh_audit._config_read import ConfigFileError, read_bytes, read_json, read_toml
from dsh_audit._pyproject import find_pyproject
from dsh_audit.errors import UsageError

FOUND_HINT = "(hint: dsh-audit reads the nearest pyproject.toml: make it a regular file, or remove it)"
POLICY_FOUND_HINT = ("(hint: fix or move this pyproject.toml (the nearest to the current folder): dsh-audit reads "
                     "its [tool.dsh-audit] table)")
COMMANDS = ["check", "report", "cache", "usage"]


@pytest.fixture(autouse=True)
def _no_hang() -> Iterator[None]:
    """A read that blocks on a FIFO fails the test in seconds instead of stalling the suite."""
    def expire(signum: int, frame: object) -> None:
        raise TimeoutError("blocked: a FIFO was opened for reading")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


# -- the reader ----------------------------------------------------------------------------------

def _error(call: Callable[[], object]) -> tuple[str, str, int | None, int | None, str | None]:
    """What ``call`` raises: reason, whole line, TOML/JSON line and column, hint."""
    with pytest.raises(ConfigFileError) as caught:
        call()
    exc = caught.value
    return exc.reason, str(exc), exc.line, exc.column, exc.hint


@pytest.mark.parametrize(("text", "reason", "message", "line", "column"), [
    (b"a = 1\nb = = 2\n", "syntax", "policy file is not valid TOML: Invalid value (at line 2, column 5)", 2, 5),
    (b'[tool]\nx = "\xff"\n', "encoding", "policy file is not UTF-8 text (byte 12)", 2, None),
    (b"a = " + b"[" * 50_000 + b"]" * 50_000 + b"\n", "nesting", "policy file nests arrays or tables too deeply",
     None, None),
    (b"a = 1" + b"0" * 5000 + b"\n", "syntax", "policy file is not valid TOML: Exceeds the limit (4300 digits) for "
     "integer string conversion: value has 5001 digits", None, None),
])
def test_toml_errors_carry_path_reason_and_position(tmp_path, text, reason, message, line, column):
    path = tmp_path / "policy.toml"
    path.write_bytes(text)
    where = f"{path}:{line}" if line else str(path)
    assert _error(lambda: read_toml(path, what="policy file")) == (reason, f"{where}: {message}", line, column, None)


def test_json_errors_carry_the_position_json_gives(tmp_path):
    path = tmp_path / "prices.json"
    path.write_text('{\n  "a": 1,\n  "b": }\n', encoding="utf-8")
    assert _error(lambda: read_json(path, what="price table")) == (
        "syntax", f"{path}:3: price table is not valid JSON: Expecting value: line 3 column 8 (char 19)", 3, 8, None)


def test_a_file_over_the_limit_is_refused_unparsed(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_bytes(b"x" * ((1 << 20) + 1))  # not TOML: the size is judged first
    assert _error(lambda: read_toml(path, limit=1 << 20)) == (
        "size", f"{path}: pyproject.toml is larger than 1 MiB", None, None, None)
    assert read_bytes(path, what="file", limit=(1 << 20) + 1) == b"x" * ((1 << 20) + 1)
    assert _error(lambda: read_bytes(path, what="file", limit=1000)) == (
        "size", f"{path}: file is larger than 1000 bytes", None, None, None)


def test_special_files_loops_and_folders_are_refused_before_a_read(tmp_path):
    fifo, loop, folder = tmp_path / "fifo.toml", tmp_path / "loop.toml", tmp_path / "folder.toml"
    os.mkfifo(fifo)
    loop.symlink_to(loop)
    folder.mkdir()
    regular = "(hint: only regular files are read)"
    assert _error(lambda: read_toml(fifo, what="policy file")) == (
        "open", f"{fifo}: is a FIFO, not a policy file {regular}", None, None, "only regular files are read")
    assert _error(lambda: read_toml(loop, what="policy file")) == (
        "open", f"{loop}: cannot open: symlink loop", None, None, None)
    assert _error(lambda: read_toml(folder, what="policy file")) == (
        "open", f"{folder}: is a folder, not a policy file", None, None, None)
    assert _error(lambda: read_toml(tmp_path / "missing.toml")) == (
        "open", f"{tmp_path / 'missing.toml'}: cannot open: No such file or directory", None, None, None)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_a_file_without_read_permission_is_refused(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_text("a = 1\n", encoding="utf-8")
    path.chmod(0)
    assert _error(lambda: read_toml(path)) == ("open", f"{path}: cannot open: Permission denied", None, None, None)


def test_a_good_file_reads_and_the_error_is_a_usage_error(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_text('[tool.dsh-audit]\nadapter = "openai"\n', encoding="utf-8")
    assert read_toml(path) == {"tool": {"dsh-audit": {"adapter": "openai"}}}
    assert issubclass(ConfigFileError, UsageError)  # uncaught, still one line and exit 2


# -- the search ----------------------------------------------------------------------------------

def test_a_folder_named_pyproject_toml_is_passed_over(tmp_path):
    child = tmp_path / "a" / "b"
    (child / "pyproject.toml").mkdir(parents=True)
    (tmp_path / "a" / "pyproject.toml").mkdir()
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    assert find_pyproject(child) == tmp_path.resolve() / "pyproject.toml"
    assert find_pyproject(tmp_path / "a" / "pyproject.toml") == tmp_path.resolve() / "pyproject.toml"


def test_the_nearest_file_wins_over_one_further_up(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    assert find_pyproject(tmp_path / "a") == tmp_path.resolve() / "a" / "pyproject.toml"


@pytest.mark.parametrize(("make", "problem"), [
    (os.mkfifo, "is a FIFO, not a pyproject.toml"),
    (lambda path: path.symlink_to(path), "cannot open: symlink loop"),
    (lambda path: path.symlink_to(path.parent / "gone.toml"), "cannot open: dangling symlink"),
    (lambda path: path.symlink_to("/dev/null"), "is a character device, not a pyproject.toml"),
])
def test_a_special_pyproject_on_the_way_up_stops_the_search(tmp_path, make, problem):
    child = tmp_path / "a" / "b"
    child.mkdir(parents=True)
    special = tmp_path / "a" / "pyproject.toml"
    make(special)
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")  # never reached
    with pytest.raises(ConfigFileError) as caught:
        find_pyproject(child)
    expected = tmp_path.resolve() / "a" / "pyproject.toml"
    assert (caught.value.reason, str(caught.value)) == ("open", f"{expected}: {problem} {FOUND_HINT}")


# -- through the CLI -----------------------------------------------------------------------------

def _run(monkeypatch, capsys, tmp_path: Path, command: str) -> tuple[int, str, list[str]]:
    """``dsh-audit COMMAND LOG`` from ``tmp_path/work``, with ``tmp_path`` above it."""
    log = chat_log(tmp_path / "logs" / "session.jsonl", "pyproject-search")
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    monkeypatch.chdir(work)
    extra = ["-o", str(tmp_path / "r.html")] if command == "report" else []
    result = invoke(monkeypatch, capsys, command, str(log), *extra)
    assert not (tmp_path / "r.html").exists()
    return result


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("here", [True, False], ids=["in-the-folder", "above-it"])
def test_a_fifo_pyproject_is_one_error_line_not_a_hang(tmp_path, monkeypatch, capsys, command, here):
    fifo = (tmp_path / "work" if here else tmp_path) / "pyproject.toml"
    fifo.parent.mkdir(exist_ok=True)
    os.mkfifo(fifo)
    assert _run(monkeypatch, capsys, tmp_path, command) == (
        2, "", [f"error: {fifo.resolve()}: is a FIFO, not a pyproject.toml {FOUND_HINT}"])


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(("target", "problem"), [(None, "symlink loop"), ("gone.toml", "dangling symlink")],
                         ids=["loop", "dangling"])
def test_a_broken_symlink_pyproject_is_one_error_line(tmp_path, monkeypatch, capsys, command, target, problem):
    link = tmp_path / "pyproject.toml"
    link.symlink_to(target or link)
    assert _run(monkeypatch, capsys, tmp_path, command) == (
        2, "", [f"error: {tmp_path.resolve() / 'pyproject.toml'}: cannot open: {problem} {FOUND_HINT}"])


@pytest.mark.parametrize(("command", "message"), [
    ("check", f":1: pyproject.toml is not valid TOML: Invalid value (at line 1, column 7) {POLICY_FOUND_HINT}"),
    ("report", f":1: pyproject.toml is not valid TOML: Invalid value (at line 1, column 7) {POLICY_FOUND_HINT}"),
    ("cache", f":1: pyproject.toml is not valid TOML: Invalid value (at line 1, column 7) {POLICY_FOUND_HINT}"),
    ("usage", f":1: pyproject.toml is not valid TOML: Invalid value (at line 1, column 7) {POLICY_FOUND_HINT}"),
])
def test_a_folder_pyproject_is_passed_over_for_the_file_above(tmp_path, monkeypatch, capsys, command, message):
    (tmp_path / "work" / "pyproject.toml").mkdir(parents=True)
    above = tmp_path / "pyproject.toml"
    above.write_text("not = = toml\n", encoding="utf-8")  # its error proves it is the one read
    assert _run(monkeypatch, capsys, tmp_path, command) == (2, "", [f"error: {above.resolve()}{message}"])


@pytest.mark.parametrize("command", ["check", "report"])
def test_a_given_policy_fifo_is_refused_not_read(tmp_path, monkeypatch, capsys, command):
    log = chat_log(tmp_path / "logs" / "session.jsonl", "policy-fifo")
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    extra = ["-o", str(tmp_path / "r.html")] if command == "report" else []
    assert invoke(monkeypatch, capsys, command, str(log), "--policy", str(fifo), *extra) == (
        2, "", [f"error: {fifo}: is a FIFO, not a policy file (hint: only regular files are read)"])
