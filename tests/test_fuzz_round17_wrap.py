"""Fuzz round 17 (issue 15, /tmp/fuzz17.md D10): on a narrow terminal a hint's command was folded
inside its paths (``dsh-audit diff /tmp/fuzz17/work/`` / ``08-tty-wrap/home/...``), so that the
command copied from it no longer worked: a backquoted command's words are never folded."""

from __future__ import annotations

from dsh_audit.report._fit_text import fit_lines


def test_a_hints_command_is_wrapped_between_its_words_only() -> None:
    line = ("b/session.jsonl:1: seq 3: DSH815 error: no send (hint: run `dsh-audit diff "
            "/tmp/a-very-long/path/to/the/home/sessions/p/session-x/session.jsonl --capture "
            "/tmp/a-very-long/path/wire.jsonl` for the alignment)")
    assert fit_lines(line, 40) == [
        "b/session.jsonl:1: seq 3: DSH815 error:",
        "  no send (hint: run `dsh-audit diff",
        "  /tmp/a-very-long/path/to/the/home/sessions/p/session-x/session.jsonl",
        "  --capture",
        "  /tmp/a-very-long/path/wire.jsonl` for",
        "  the alignment)"]


def test_a_long_word_outside_a_command_still_folds() -> None:
    assert fit_lines('{"a":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22]}', 30) == [
        '{"a":[1,2,3,4,5,6,7,8,9,10,11,', "  12,13,14,15,16,17,18,19,20,", "  21,22]}"]
