"""Only regular files are logs (issue 15): a FIFO, a device, a symlink loop, an unreadable folder
or an empty path is one error line naming it and exit 2, never a hang, a skip or a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dsh_audit.log import discover, read_log
from dsh_audit.errors import UnreadableError

from test_hostile_outputs import dsh_log, invoke


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """``dsh-audit ARGS`` in a subprocess: a hang is a failure, not a stuck suite."""
    return subprocess.run([sys.executable, "-m", "dsh_audit", *args], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("command", ["requests", "validate", "check", "cache"])
def test_fifo_named_like_a_log_is_refused_not_read(tmp_path, command):
    fifo = tmp_path / "s" / "session.jsonl"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    result = run(command, str(fifo))
    assert "Traceback" not in result.stderr
    assert result.returncode == 2, result  # check too: its DSH801 row fails, its reports are written
    assert f"{fifo}: is a FIFO, not a log file (hint: only regular files are read)" in result.stderr


def test_fifo_in_a_folder_is_reported_not_skipped(tmp_path):
    dsh_log(tmp_path / "a" / "session.jsonl")
    fifo = tmp_path / "b" / "session.jsonl"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    result = run("check", str(tmp_path))
    assert "Traceback" not in result.stderr
    assert result.returncode in (1, 2), result
    assert "is a FIFO, not a log file" in result.stdout + result.stderr


def test_dev_zero_symlink_is_refused(tmp_path, monkeypatch, capsys):
    link = tmp_path / "session.jsonl"
    link.symlink_to("/dev/zero")
    assert invoke(monkeypatch, capsys, "requests", str(link)) == (
        2, "", [f"error: {link}: is a character device, not a log file (hint: only regular files are read)"])


def test_symlink_loop_is_one_line(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "s"
    folder.mkdir()
    loop = folder / "session.jsonl"
    loop.symlink_to(loop)
    line = f"error: {loop}: cannot open: symlink loop"
    assert invoke(monkeypatch, capsys, "requests", str(loop)) == (2, "", [line])
    assert invoke(monkeypatch, capsys, "requests", str(folder)) == (2, "", [line])
    with pytest.raises(UnreadableError, match="symlink loop"):
        read_log(loop)


@pytest.mark.parametrize("command", ["requests", "validate", "check", "breaks", "cache", "usage", "index"])
def test_empty_path_is_a_usage_error(tmp_path, monkeypatch, capsys, command):
    monkeypatch.chdir(tmp_path)
    dsh_log(tmp_path / "session.jsonl")  # the current folder holds a log: it must not be audited
    code, out, err = invoke(monkeypatch, capsys, command, "")
    assert (code, out) == (2, "")
    assert err == ["error: empty path (hint: name a log, a session folder or a sessions root)"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.jsonl"]


def test_unreadable_folder_is_reported(tmp_path, monkeypatch):
    dsh_log(tmp_path / "a" / "session.jsonl")
    locked = tmp_path / "b"
    locked.mkdir()
    real_walk = os.walk

    def walk(top, onerror=None, **kw):  # as root, chmod 000 does not stop reading: simulate it
        yield from real_walk(top, onerror=onerror, **kw)
        onerror(PermissionError(13, "Permission denied", str(locked)))

    monkeypatch.setattr("dsh_audit.log._discover.os.walk", walk)
    with pytest.raises(UnreadableError) as caught:
        discover([tmp_path])
    assert str(caught.value) == (f"{locked}: cannot read folder: Permission denied "
                                 "(hint: give dsh-audit read access to it, or leave it out)")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_unreadable_log_is_one_line(tmp_path, monkeypatch, capsys):
    log = dsh_log(tmp_path / "session.jsonl")
    log.chmod(0)
    assert invoke(monkeypatch, capsys, "requests", str(log)) == (
        2, "", [f"error: {log}: cannot open: Permission denied"])


def test_a_log_the_system_refuses_to_open_is_one_line_even_as_root(tmp_path, monkeypatch, capsys):
    """The same refusal as a chmod 000 log, for a run as root (which reads every file): the open
    that every reader goes through fails with EACCES for this one path."""
    import errno

    log = dsh_log(tmp_path / "session.jsonl")
    real_open = os.open

    def refusing(path, flags, *args, **kwargs):
        if os.fspath(path) == str(log):
            raise PermissionError(errno.EACCES, "Permission denied", str(log))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr("dsh_audit.log._outputs.os.open", refusing)
    for command in ("requests", "breaks", "cache", "validate"):
        assert invoke(monkeypatch, capsys, command, str(log)) == (
            2, "", [f"error: {log}: cannot open: Permission denied"]), command
    code, out, err = invoke(monkeypatch, capsys, "check", str(log))  # a finding of its own: every report written
    assert (code, err) == (2, [f"error: {log}: cannot open: Permission denied"])
    assert f"{log}: DSH801 error (fails the gate: fail-on-refusal): cannot open: Permission denied" in " ".join(out.split())
