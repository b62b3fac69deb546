"""Issue 15, session 46: the capture the views find for a log (a ``wire.jsonl`` beside it or up to four
folders above) is evidence: no output may replace it, ``redact``'s included, and with ``--no-capture`` too.
Each refusal is one line, exit 2, the capture byte for byte the same."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from dsh_audit.log import ProtectedInputs
from _cli import chat_log, invoke

CAPTURE = b'{"not": "read by any refused run"}\n'


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def setting(tmp_path: Path, *, above: bool) -> tuple[Path, Path]:
    """A log in ``p/s/`` and a capture beside it, or (``above``) in ``p/``."""
    root = Path(os.path.realpath(tmp_path))
    log = chat_log(root / "p" / "s" / "session-ev.jsonl", "session-ev")
    capture = (log.parent if not above else log.parent.parent) / "wire.jsonl"
    capture.write_bytes(CAPTURE)
    return log, capture


@pytest.mark.parametrize("above", [False, True])
def test_redact_output_over_the_found_capture_is_refused(tmp_path, monkeypatch, capsys, above):
    log, capture = setting(tmp_path, above=above)
    before = digest(capture)
    result = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(capture), "--force")
    assert result == (2, "", [f"error: {capture}: the output would overwrite the input {capture} "
                              "(hint: give -o another path)"])
    assert digest(capture) == before
    assert sorted(p.name for p in capture.parent.iterdir()) == sorted(["wire.jsonl", *(["s"] if above else
                                                                                       ["session-ev.jsonl"])])


def test_redact_capture_output_over_the_found_capture_is_refused(tmp_path, monkeypatch, capsys):
    log, capture = setting(tmp_path, above=True)
    other = tmp_path / "other.wire.jsonl"
    other.write_bytes(CAPTURE)
    before = digest(capture)
    out = tmp_path / "out" / "r.jsonl"
    out.parent.mkdir()
    result = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(out), "--capture", str(other),
                    "--capture-output", str(capture), "--force")
    assert result == (2, "", [f"error: {capture}: the capture output would overwrite the input {capture} "
                              "(hint: give --capture-output another path)"])
    assert digest(capture) == before
    assert list(out.parent.iterdir()) == []


OUTPUTS = [
    (("check", "--json-report"), "JSON report", "--json-report"),
    (("check", "--junit"), "JUnit report", "--junit"),
    (("check", "--sarif"), "SARIF report", "--sarif"),
    (("check", "--markdown"), "Markdown summary", "--markdown"),
    (("report", "-o"), "HTML report", "-o"),
    (("validate", "--sarif"), "SARIF report", "--sarif"),
    (("index", "--db"), "index", "--db"),
]


@pytest.mark.parametrize(("words", "what", "option"), OUTPUTS)
@pytest.mark.parametrize("ignored", [False, True])
def test_every_output_over_a_capture_above_the_log_is_refused(tmp_path, monkeypatch, capsys, words, what, option,
                                                              ignored):
    log, capture = setting(tmp_path, above=True)
    before = digest(capture)
    command, flag = words
    extra = ["--no-capture"] if ignored and command != "validate" else []  # validate reads no capture at all
    result = invoke(monkeypatch, capsys, command, str(log), *extra, flag, str(capture))
    assert result == (2, "", [f"error: {capture}: the {what} would overwrite the input {capture} "
                              f"(hint: give {option} another path)"])
    assert digest(capture) == before


def test_step_summary_over_a_capture_above_the_log_is_refused(tmp_path, monkeypatch, capsys):
    log, capture = setting(tmp_path, above=True)
    before = digest(capture)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(capture))
    code, out, err = invoke(monkeypatch, capsys, "check", str(log), "--no-capture")
    assert (code, out) == (2, "")
    assert err == [f"error: {capture}: the GITHUB_STEP_SUMMARY would overwrite the input {capture} "
                   "(hint: point GITHUB_STEP_SUMMARY at another file)"]
    assert digest(capture) == before


def test_captures_near_lists_each_wire_jsonl_the_views_search(tmp_path):
    root = Path(os.path.realpath(tmp_path))
    deep = root / "a" / "b" / "c" / "d" / "e" / "f"
    deep.mkdir(parents=True)
    for folder in (root / "a", root / "a" / "b", deep):  # a is five folders above f: past the search
        (folder / "wire.jsonl").write_bytes(CAPTURE)
    log = deep / "session.jsonl"
    expected = [str(deep / "wire.jsonl"), str(root / "a" / "b" / "wire.jsonl")]
    assert ProtectedInputs.captures_near(log, folder=False) == expected
    assert ProtectedInputs.captures_near(deep) == expected
    evidence = ProtectedInputs.of([log], settings=False)
    assert evidence.input_at(root / "a" / "b" / "wire.jsonl") == str(root / "a" / "b" / "wire.jsonl")
    assert evidence.input_at(root / "a" / "wire.jsonl") is None
