"""An error several logs share is said once per run (session 34): a ``--capture`` that cannot be read
is every log's error, and was printed once per log (three identical lines for three logs), as a
warning every log shares is said once."""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli import invoke
from test_capture_isolation34 import _root

ERROR = ("error: g.jsonl: not a capture format dsh-audit knows (hint: expected a wire.jsonl file, a HAR 1.2 file "
         "or a folder of *.json bodies)")


@pytest.mark.parametrize("command", ["breaks", "cache", "usage"])
def test_a_capture_every_log_shares_is_one_error(command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    _root(tmp_path, None)
    (tmp_path / "g.jsonl").write_text("garbage\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, _, err = invoke(monkeypatch, capsys, command, "root", "--capture", "g.jsonl")
    assert (code, err) == (2, [ERROR])
