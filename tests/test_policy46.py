"""Issue 15, session 46: a policy file dsh-audit reads nothing from is refused when named, never run
with the defaults in silence: ``[tool.DSH-AUDIT]`` (a table name compared without case), a ``--policy``
file with no ``[tool.dsh-audit]`` table and no policy key (empty, or only ``[tool.black]``). An empty
``[tool.dsh-audit]`` states the defaults; a ``pyproject.toml`` found, not named, may hold no table."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_audit.errors import UsageError
from dsh_audit.gate import Policy, load_policy
from _cli import chat_log, invoke

NO_TABLE = ("has no [tool.dsh-audit] table (nor a policy key at its top level) (hint: give the policy file meant, "
            "or write its keys under [tool.dsh-audit] (an empty table keeps the defaults on purpose); see the Policy "
            "section of docs/ci.md)")


@pytest.mark.parametrize("name", ["DSH-AUDIT", "Dsh-Audit", "dsh-AUDIT", "DSH_AUDIT"])
def test_a_table_named_so_in_other_case_is_refused(tmp_path, monkeypatch, capsys, name):
    log = chat_log(tmp_path / "s.jsonl", "session-pol")
    policy = tmp_path / "policy.toml"
    policy.write_text(f"[tool.{name}]\nmin-cache-hit-ratio = 0.99\n", encoding="utf-8")
    result = invoke(monkeypatch, capsys, "check", str(log), "--policy", str(policy))
    assert result == (2, "", [f"error: {policy}:1: [tool.{name}] is not read: dsh-audit's table is [tool.dsh-audit] "
                              "(hint: rename the table to [tool.dsh-audit])"])


@pytest.mark.parametrize("text", ["", "\n# nothing\n", "[tool.black]\nline-length = 100\n",
                                  "[project]\nname = 'x'\n[tool.ruff]\nline-length = 1\n"])
def test_a_named_policy_file_with_nothing_to_read_is_refused(tmp_path, monkeypatch, capsys, text):
    log = chat_log(tmp_path / "s.jsonl", "session-pol")
    policy = tmp_path / "policy.toml"
    policy.write_text(text, encoding="utf-8")
    result = invoke(monkeypatch, capsys, "check", str(log), "--policy", str(policy))
    assert result == (2, "", [f"error: {policy}: {NO_TABLE}"])
    with pytest.raises(UsageError) as caught:
        load_policy(policy)
    assert str(caught.value) == f"{policy}: {NO_TABLE}"


def test_an_empty_table_named_states_the_defaults(tmp_path, monkeypatch, capsys):
    policy = tmp_path / "policy.toml"
    policy.write_text("[tool.dsh-audit]\n[tool.black]\nline-length = 1\n", encoding="utf-8")
    assert load_policy(policy) == Policy(source=str(policy))
    log = chat_log(tmp_path / "s.jsonl", "session-pol")
    code, out, err = invoke(monkeypatch, capsys, "check", str(log), "--policy", str(policy), "--no-capture")
    assert (code, err) == (0, [])
    assert out.splitlines()[-1] == (f"PASSED: 1 log(s), 1 request(s), 0 error(s), 0 warning(s), 1 info, 0 failing "
                                    f"(policy: {policy})")


def test_a_plain_policy_file_still_reads(tmp_path):
    policy = tmp_path / "dsh-audit.toml"
    policy.write_text("min-cache-hit-ratio = 0.5\n[tool.black]\nline-length = 1\n", encoding="utf-8")
    assert load_policy(policy) == Policy(min_cache_hit_ratio=0.5, source=str(policy))


def test_a_found_pyproject_without_the_table_keeps_the_defaults(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text("[tool.black]\nline-length = 1\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    assert load_policy(None, search_from=tmp_path / "sub") == Policy()
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    assert load_policy(None, search_from=tmp_path / "sub") == Policy()
