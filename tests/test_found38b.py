"""Session 38 (fuzz round 21, defects 1, 5, 6): what the index knows of a log's capture, a found
capture's torn tail, and the capture found past one that holds none of a log's requests."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from _golden import CORPUS
from dsh_audit.capture import NO_CAPTURE_ENV, find_capture
from dsh_audit.capture._find import capture_state
from dsh_audit.cli import cli
from dsh_audit.fleet import index_logs
from dsh_audit.fleet._audit import options_key
from dsh_audit.cache import load_prices

LIVE = CORPUS / "live"
SESSION = "session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3dd"
pytestmark = pytest.mark.skipif(not LIVE.is_dir(), reason="../shared/corpus is absent")


def _log(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(LIVE / "b-tools" / "session-logs" / f"{SESSION}.jsonl", folder))


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _indexed(log: Path, db: Path, **options: object) -> tuple[int, int]:
    result = index_logs([log], db, **options)  # type: ignore[arg-type]
    return result.indexed, result.skipped


def test_an_edited_given_capture_and_no_capture_re_index_the_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log, db = _log(tmp_path / "l"), tmp_path / "db.sqlite"
    given = Path(shutil.copy(LIVE / "b-tools" / "wire.jsonl", tmp_path / "given.jsonl"))
    assert _indexed(log, db, capture=given) == (1, 0)
    assert _indexed(log, db, capture=given) == (0, 1)
    info = given.stat()
    os.utime(given, ns=(info.st_atime_ns, info.st_mtime_ns + 10**9))  # same path, another capture
    assert _indexed(log, db, capture=given) == (1, 0)
    assert _indexed(log, db, capture=given) == (0, 1)
    assert _indexed(log, db) == (1, 0)
    monkeypatch.setenv(NO_CAPTURE_ENV, "1")  # --no-capture
    assert _indexed(log, db) == (1, 0)
    assert _indexed(log, db) == (0, 1)


def test_the_key_of_a_log_holds_the_capture_found_beside_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = _log(tmp_path / "l")
    key = {"lenient": False, "max_version": 4, "attribution": True, "cache": True, "prices": load_prices()}
    assert ";capture=none;" in options_key(**key, log=str(log))
    assert ";capture=" not in options_key(**key)  # the found one is known only with the log
    wire = Path(shutil.copy(LIVE / "b-tools" / "wire.jsonl", log.parent))
    info = wire.stat()
    state = f"{wire.resolve()}:{info.st_size}:{info.st_mtime_ns}"
    assert capture_state(log, None) == state
    assert f";capture={state};" in options_key(**key, log=str(log))
    os.utime(wire, ns=(info.st_atime_ns, info.st_mtime_ns + 1))
    assert f";capture={wire.resolve()}:{info.st_size}:{info.st_mtime_ns + 1};" in options_key(**key, log=str(log))
    monkeypatch.setenv(NO_CAPTURE_ENV, "1")
    assert ";capture=ignored;" in options_key(**key, log=str(log))
    assert ";capture=ignored;" in options_key(**key)


def test_a_found_capture_with_a_torn_tail_is_said_once_as_a_torn_tail_and_used(tmp_path: Path) -> None:
    log = _log(tmp_path / "l")
    data = (LIVE / "b-tools" / "wire.jsonl").read_bytes()
    cut = data[:-1].rfind(b"\n") + 1
    (log.parent / "wire.jsonl").write_bytes(data[:cut + 100])
    line = data[:cut].count(b"\n") + 1
    torn = f"warning: {log.parent / 'wire.jsonl'}: torn tail: line {line} has no terminating newline (100 bytes ignored)"
    for command in (["usage"], ["cache"], ["sessions"], ["breaks", "--accounting"], ["check"]):
        code, _, err = _run(*command, str(log.parent))
        said = torn.replace("warning: ", f"warning: {log}: ", 1) if command == ["sessions"] else torn  # per log
        assert err.splitlines().count(said) == 1, (command, err)
        assert "left out" not in err, (command, err)
        assert "not a JSON record" not in err, (command, err)


def test_a_nearer_capture_of_another_session_does_not_hide_this_sessions(tmp_path: Path) -> None:
    log = _log(tmp_path / "d" / "e")
    ours = Path(shutil.copy(LIVE / "b-tools" / "wire.jsonl", tmp_path))
    shutil.copy(LIVE / "a-chat" / "wire.jsonl", tmp_path / "d")  # another session's, nearer
    assert find_capture(log) == ours
    (tmp_path / "d" / "wire.jsonl").write_bytes(b"")  # empty: holds none of them either
    assert find_capture(log) == ours
    (tmp_path / "d" / "e" / "wire.jsonl").write_bytes(b"garbage\n")  # unreadable: its loader says why
    assert find_capture(log) == tmp_path / "d" / "e" / "wire.jsonl"
    os.remove(tmp_path / "d" / "e" / "wire.jsonl")
    os.remove(ours)  # every one holds none: the nearest is the one found (DSH810 says it holds none)
    assert find_capture(log) == tmp_path / "d" / "wire.jsonl"


def test_dsh810_says_what_the_capture_is(tmp_path: Path) -> None:
    log = _log(tmp_path / "l")
    (log.parent / "wire.jsonl").write_bytes(b"")
    code, text, _ = _run("check", "--json", str(log))
    assert code == 0
    assert (f"no capture: the capture found beside the log ({log.parent / 'wire.jsonl'}) holds none of its requests "
            "(it holds no captured request)") in text
    code, text, _ = _run("check", "--no-capture", "--json", str(log))
    assert code == 0
    assert "no capture given, and captures found beside the log are ignored (--no-capture)" in text
    assert "pass --capture FILE; without --no-capture, a wire.jsonl beside the log" in text
    assert "put a wire.jsonl" not in text


def test_an_edited_or_removed_found_capture_re_indexes_the_log(tmp_path: Path) -> None:
    """Needs index_log_key.patch (fleet/_index.py and fleet/_audit.py pass the log to options_key)."""
    log, db = _log(tmp_path / "l"), tmp_path / "db.sqlite"
    wire = Path(shutil.copy(LIVE / "b-tools" / "wire.jsonl", log.parent))
    assert _indexed(log, db) == (1, 0)
    assert _indexed(log, db) == (0, 1)
    info = wire.stat()
    os.utime(wire, ns=(info.st_atime_ns, info.st_mtime_ns + 10**9))
    assert _indexed(log, db) == (1, 0)
    assert _indexed(log, db) == (0, 1)
    os.remove(wire)
    assert _indexed(log, db) == (1, 0)
    assert _indexed(log, db) == (0, 1)
