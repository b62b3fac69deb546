"""Session 40: one way every table shortens a session id, and review A's smaller findings.

1. ``sessions`` cut an id to its shortest unique prefix with ``…`` (``session-sample-co…``),
   ``check`` to the room it had (``session-sample-compa…``, no caption), ``usage`` not at all, then
   in its middle (``session-sam…e-compaction``, which `show` refuses). Every table now shortens one
   as :func:`~dsh_audit.report._fit_text.id_prefixes` says, never in its middle.
2. On a stdout that cannot write ``…`` the cut showed its escape, ``session-sample-t\\u2026``, which
   `show` read as a path: the cut now has no mark there, and `show` takes the prefix as shown.
3. The help of ``check`` and ``stats`` says what is true (stderr not while paged; unknown sums).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from _cli import invoke_encoded
from click.testing import CliRunner

from dsh_audit.cli import cli
from dsh_audit.log import resolve_session

SAMPLES = Path(__file__).resolve().parent.parent / "sample_logs"
#: The home's ids as every table too narrow for whole ids shows them (as `sessions` does).
SHOWN = {"session-sample-t…", "session-sample-chan…", "session-sample-f…", "fork-chi…", "session-sample-co…",
         "session-sample-res…", "session-sample-chat", "session-sample-ret…"}


def _run(columns: int, *args: str) -> str:
    """``dsh-audit ARGS`` with the samples as the DSH home, piped at ``columns``: its stdout (exit 0)."""
    result = CliRunner().invoke(cli, list(args), env={"DSH_HOME": str(SAMPLES), "COLUMNS": str(columns)},
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize(("columns", "args", "caption"), [
    (80, ("sessions",), "id: shortest unique prefix; title: cut to fit (--json for whole ids and titles)"),
    (80, ("check", str(SAMPLES / "sessions")), "session: shortest unique prefix of its id (--json for whole ids)"),
    (80, ("usage", str(SAMPLES / "sessions")), "session ids: shortest unique prefix (--json for whole ids)"),
    (56, ("usage", str(SAMPLES / "sessions")), "(?: none logged); session ids: shortest unique prefix"),
], ids=["sessions-80", "check-80", "usage-80", "usage-56"])
def test_every_table_shortens_an_id_as_sessions_does(columns: int, args: tuple[str, ...], caption: str) -> None:
    out = _run(columns, *args)
    ids = {word for word in re.findall(r"(?:session-sample|fork-chi)\S*", out) if "/" not in word}
    assert ids == SHOWN
    assert caption in out


def test_an_ascii_stdout_cuts_an_id_with_no_mark_that_show_takes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DSH_HOME", str(SAMPLES))
    code, out, _ = invoke_encoded(monkeypatch, "ascii", "sessions")
    shown = [line.rsplit("|", 1)[-1] for line in out.decode("ascii").splitlines()[3:11]]
    assert code == 0 and shown == [
        "session-sample-t", "session-sample-chan", "session-sample-f", "fork-chi", "session-sample-co",
        "session-sample-res", "session-sample-chat", "session-sample-ret"]
    found = [resolve_session(prefix, root=SAMPLES / "sessions").parent.name for prefix in shown]
    assert found == ["session-sample-tools", "session-sample-change", "session-sample-fork-parent",
                     "fork-child~003Areview", "session-sample-compaction", "session-sample-resume",
                     "session-sample-chat", "session-sample-retry"]


@pytest.mark.parametrize(("command", "said"), [
    ("check", "the table, the findings and the verdict on stderr, not while paged"),
    ("check", "session-sample-co…, any other's with \"…\": `show` takes either"),
    ("stats", "\"≥N\", a lower bound, when a request that logged usage lacked them (--json: prompt_unknown_requests"),
    ("stats", "--json's cost.tokens and totals.tokens are null when no request logged usage"),
], ids=["check-paged", "check-ids", "stats-bound", "stats-null"])
def test_the_help_says_what_is_true(command: str, said: str) -> None:
    result = CliRunner().invoke(cli, [command, "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0 and said in " ".join(result.stdout.split())
