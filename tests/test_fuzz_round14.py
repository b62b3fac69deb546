"""Fuzz round 14 (docs/hostile-inputs.md): an option that takes a path refuses an empty one, a
usage error naming the option, before any log is read (``--capture ""`` read the current folder,
``validate --sarif ""`` ran the whole check before failing to write)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli import chat_log, invoke


@pytest.mark.parametrize(("command", "option"), [
    ("diff", "--capture"), ("redact", "--capture"), ("validate", "--sarif"), ("check", "--junit"),
    ("check", "--baseline"), ("cache", "--prices"), ("check", "--routes")])
def test_an_empty_path_option_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str], command: str, option: str) -> None:
    log = chat_log(tmp_path / "s" / "session.jsonl", "s-empty")
    monkeypatch.chdir(tmp_path)
    extra = ["-o", "out.jsonl", "--salt", "x"] if command == "redact" else []
    code, out, err = invoke(monkeypatch, capsys, command, str(log), *extra, option, "")
    assert (code, out, err) == (2, "", [f"error: Invalid value for '{option}': empty path (name a file or folder) "
                                        f"(hint: see `dsh-audit {command} --help`)"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s"]  # nothing written


def test_an_empty_variable_is_unset_not_an_empty_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    log = chat_log(tmp_path / "s" / "session.jsonl", "s-empty")
    monkeypatch.setenv("DSH_AUDIT_CACHE_PRICES", "")  # click reads an empty variable as not set
    code, _, err = invoke(monkeypatch, capsys, "cache", str(log))
    assert (code, err) == (0, [])


@pytest.mark.parametrize("tamper", [
    {"verdicts": {}}, {"capture": "wire\u0000.jsonl"}, {"capture": "x\ud800.jsonl"}, {"capture": "b" * 300},
    {"route_file": "r\u0000.yml", "routes": True}])
def test_a_tampered_manifest_is_refused_not_passed_or_crashed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str],
                                                              tamper: dict[str, object]) -> None:
    """A manifest with no verdict passed ``--check`` with nothing compared; names a file system
    cannot hold (NUL, a lone surrogate, a 300-byte name) exited 3."""
    import json

    log = chat_log(tmp_path / "s" / "session.jsonl", "s-bundle")
    monkeypatch.chdir(tmp_path)
    code, _, _ = invoke(monkeypatch, capsys, "redact", str(log), "-o", "r.jsonl", "--salt", "x")
    assert code == 0
    manifest = tmp_path / "r.jsonl.manifest.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text("utf-8")), **tamper}), "utf-8")
    code, out, err = invoke(monkeypatch, capsys, "redact", "--check", "r.jsonl")
    assert (code, out, err) == (2, "", ["error: r.jsonl.manifest.json: not a dsh-audit redaction manifest"
        " (hint: the manifest was edited or damaged after `dsh-audit redact` wrote it: ask the sender for the "
        "bundle again, or redact the log again with `dsh-audit redact LOG -o FILE`)"])


@pytest.mark.parametrize("args", [["diff", "{log}", "--capture", "{long}/wire.jsonl"],
                                  ["stats", "--db", "{long}/x.db"]])
def test_a_path_too_long_for_the_file_system_is_bad_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    """ENAMETOOLONG was an unexpected OSError, exit 3 (a bug); it is the path given: exit 2."""
    log = chat_log(tmp_path / "s" / "session.jsonl", "s-long")
    long = str(tmp_path / ("b" * 300))
    given = [a.format(log=log, long=long) for a in args]
    code, out, err = invoke(monkeypatch, capsys, *given)
    assert (code, out, err) == (2, "", [f"error: {given[-1]}: file name too long (hint: name a shorter path)"])


def test_watch_of_an_empty_path_is_a_usage_error_not_the_default_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    code, out, err = invoke(monkeypatch, capsys, "watch", "", "--exit-after", "0.1", "--polling")
    assert (code, out, err) == (2, "", ["error: empty path (hint: name a log, a session folder or a sessions root, "
                                        "or give none)"])
