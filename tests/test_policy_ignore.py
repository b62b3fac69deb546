"""Rule ids in ``ignore`` (a policy's key, ``validate --ignore`` and ``--rule``) and mixed policy files.

Issue 15: a typo cannot silently weaken the gate. Before, ``ignore = ["D"]``, ``["DSH"]`` or
``["XYZ"]`` loaded: the first two dropped every finding (``check`` passed with 0 failing), the
third none; ``validate --ignore ''`` dropped every rule and exited 0; and the top-level keys of a
``--policy`` file that also held a ``[tool.dsh-audit]`` table were silently not read. Now each
entry must name a rule or a family of rules (``DSH`` and one or two digits), checked by one
function for both commands, and a mixed policy file is refused; each is one error line, exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dsh_audit.errors import UsageError
from dsh_audit.gate import GATE_RULES, load_policy
from dsh_audit.validate import RULES, checked_rule_ids, select_rules

from _cli import chat_log, invoke

GATE_HINT = " (hint: give a rule id (DSH101-DSH832) or a family such as DSH3; see docs/rules.md)"
VALIDATE_HINT = " (hint: give a rule id (DSH101-DSH704) or a family such as DSH3; see docs/rules.md)"

BAD_ENTRIES = [
    ("", "an empty string would match every rule"),
    ("D", "'D' would match every rule"),
    ("dsh", "'dsh' would match every rule"),
    ("XYZ", "'XYZ' is not a rule id"),
    ("DSH9", "'DSH9' names no rule"),
    ("DSH299", "'DSH299' names no rule"),
    ("DSH8O1", "'DSH8O1' is not a rule id (did you mean 'DSH801'?)"),
    ("DSH-81", "'DSH-81' is not a rule id (did you mean 'DSH81'?)"),
    ("DSH8111", "'DSH8111' is not a rule id (did you mean 'DSH811'?)"),
]


@pytest.fixture()
def log(tmp_path: Path) -> Path:
    return chat_log(tmp_path / "logs" / "session.jsonl", "session-ignore")


@pytest.mark.parametrize(("entry", "problem"), BAD_ENTRIES)
@pytest.mark.parametrize("layout", ["plain", "pyproject"])
def test_a_bad_ignore_entry_in_a_policy_file_is_one_error(tmp_path, monkeypatch, capsys, log, entry, problem,
                                                          layout):
    policy = tmp_path / "policy.toml"
    table = "[tool.dsh-audit]\n" if layout == "pyproject" else ""
    policy.write_text(f"{table}ignore = [{json.dumps(entry)}]\n", encoding="utf-8")
    code, out, err = invoke(monkeypatch, capsys, "check", str(log), "--policy", str(policy))
    line = 2 if layout == "pyproject" else 1  # the line that writes the key
    assert (code, out, err) == (2, "", [f"error: {policy}:{line}: policy key 'ignore': {problem}{GATE_HINT}"])


def test_a_bad_ignore_entry_in_the_pyproject_found_is_one_error(tmp_path, monkeypatch, capsys, log):
    (tmp_path / "pyproject.toml").write_text('[tool.dsh-audit]\nignore = ["DSH4", "DSH"]\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "check", str(log))
    assert (code, out, err) == (2, "", [f"error: {tmp_path / 'pyproject.toml'}:2: policy key 'ignore': "
                                        f"'DSH' would match every rule{GATE_HINT}"])


@pytest.mark.parametrize(("entry", "problem"), [
    *BAD_ENTRIES[:6],
    ("DSH8", "'DSH8' names no rule"),  # the gate's family: validate has no DSH8xx rule
    ("DSH4O1", "'DSH4O1' is not a rule id (did you mean 'DSH401'?)"),
])
@pytest.mark.parametrize("option", ["--ignore", "--rule"])
def test_a_bad_rule_id_on_validate_is_a_usage_error(monkeypatch, capsys, log, entry, problem, option):
    code, out, err = invoke(monkeypatch, capsys, "validate", str(log), option, entry)
    assert (code, out, err) == (2, "", [f"error: {option}: {problem}{VALIDATE_HINT}"])


def test_ignore_takes_ids_and_families_of_validate_and_gate_rules(tmp_path, monkeypatch, capsys, log):
    policy = tmp_path / "policy.toml"
    policy.write_text('require-capture = true\n', encoding="utf-8")
    code, out, err = invoke(monkeypatch, capsys, "check", str(log), "--policy", str(policy), "--json")
    assert code == 1  # DSH810: the log has no capture
    assert [f["rule"] for f in json.loads(out)["sessions"][0]["findings"]] == ["DSH810"]
    for ignore in ('["DSH810"]', '["dsh81"]', '["DSH8", "DSH4"]'):
        policy.write_text(f"require-capture = true\nignore = {ignore}\n", encoding="utf-8")
        code, out, err = invoke(monkeypatch, capsys, "check", str(log), "--policy", str(policy), "--json")
        assert (code, json.loads(out)["sessions"][0]["findings"]) == (0, []), ignore


def test_one_function_checks_both():
    """validate's --ignore and the policy's ignore give the same verdict through checked_rule_ids."""
    assert checked_rule_ids(["dsh4", "DSH305", "DSH81"], [*RULES, *GATE_RULES], what="x") == ("DSH4", "DSH305", "DSH81")
    with pytest.raises(UsageError) as raised:
        select_rules(None, ["DSH"])
    assert raised.value.message == "--ignore: 'DSH' would match every rule"
    assert select_rules(["DSH1"], ["DSH10"]) == frozenset({"DSH110", "DSH111", "DSH112", "DSH113", "DSH114", "DSH120"})


def test_top_level_keys_beside_the_table_are_an_error(tmp_path, monkeypatch, capsys, log):
    policy = tmp_path / "p6.toml"
    policy.write_text('capture-fail = ["different"]\nignore = []\n[tool.dsh-audit]\nrequire-capture = false\n',
                      encoding="utf-8")
    code, out, err = invoke(monkeypatch, capsys, "check", str(log), "--policy", str(policy))
    assert (code, out, err) == (2, "", [
        f"error: {policy}: top-level key(s) 'capture-fail', 'ignore' beside [tool.dsh-audit] would be ignored "
        "(hint: move them into [tool.dsh-audit], or drop the table and keep the keys at top level)"])


def test_a_pyproject_with_other_tables_and_a_plain_policy_still_load(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\nname = "x"\n[tool.ruff]\nline-length = 120\n'
                         '[tool.dsh-audit]\nignore = ["DSH81"]\n', encoding="utf-8")
    assert load_policy(pyproject).ignore == ("DSH81",)
    plain = tmp_path / "dsh-audit.toml"
    plain.write_text('capture-fail = ["different"]\n[tool.ruff]\nline-length = 120\n', encoding="utf-8")
    assert load_policy(plain).capture_fail == ("different",)


_POLICY_HINT = "see the Policy section of docs/ci.md"
_CAUSES = ("header_change, compaction, prune, plugin_replace, resume, fork, subagent, retry, title_input, "
           "search_input, unexplained, unrecorded_mutation")


@pytest.mark.parametrize(("text", "error"), [
    ('validation-fail-severity = "eror"', "policy key 'validation-fail-severity' must be one of error, warning, info, "
     f"never (did you mean 'error'?) (hint: write validation-fail-severity = \"error\", say; {_POLICY_HINT})"),
    ('adapter = "antropic"', "policy key 'adapter' must be one of auto, deepseek, anthropic, openai, responses "
     f"(did you mean 'anthropic'?) (hint: write adapter = \"auto\", say; {_POLICY_HINT})"),
    ('adapter = "gemini"', "policy key 'adapter' must be one of auto, deepseek, anthropic, openai, responses (hint: "
     f"write adapter = \"auto\", say; {_POLICY_HINT})"),  # nothing close: no guess
    ("adapter = 3", "policy key 'adapter' must be one of auto, deepseek, anthropic, openai, responses (hint: "
     f"write adapter = \"auto\", say; {_POLICY_HINT})"),
    ('capture-fail = ["different", "diferent"]', "policy key 'capture-fail': unknown value 'diferent' (did you mean "
     f"'different'?) (hint: allowed: different, equivalent, unmatched, unexplained, unrendered; {_POLICY_HINT})"),
    ('capture-kinds = ["loops"]', "policy key 'capture-kinds': unknown value 'loops' (did you mean 'loop'?) (hint: "
     f"allowed: loop, compaction, title; {_POLICY_HINT})"),
    ('allowed-break-causes = ["header-change"]', "policy key 'allowed-break-causes': unknown value 'header-change' "
     f"(did you mean 'header_change'?) (hint: allowed: {_CAUSES}; {_POLICY_HINT})"),
])
def test_a_misspelt_policy_value_is_refused_with_the_closest_allowed_one(tmp_path: Path, text: str,
                                                                        error: str) -> None:
    """Issue: session 45's tour. A misspelt key was refused with the closest known one, a misspelt
    value of an enumerated key with the list alone; now each says the closest allowed value too."""
    policy = tmp_path / "policy.toml"
    policy.write_text(f"# a policy\n{text}\n", encoding="utf-8")
    with pytest.raises(UsageError) as raised:
        load_policy(policy)
    assert str(raised.value) == f"{policy}:2: {error}"
