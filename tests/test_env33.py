"""Every option's environment variable is named after its long option, ``DSH_AUDIT_<COMMAND>_<OPTION>``,
and shown in its ``--help``; click's older name after the Python parameter still works; a
``DSH_AUDIT_*`` variable no command reads is named in a warning (issue 14; tour 33, finding 10:
``DSH_AUDIT_CHECK_POLICY=strict.toml dsh-audit check`` gated with the default policy)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
from pathlib import Path

import click
import pytest
from click.core import ParameterSource

from dsh_audit.cli import _VARIABLES, cli

from _cli import invoke

ROOT = Path(__file__).resolve().parent.parent
CHAT = ROOT / "sample_logs" / "chat" / "session.jsonl"
STRICT = "min-cache-hit-ratio = 0.9\n"  # the chat sample reads 128 of 347 prompt tokens from the cache


def _options() -> list[tuple[str, click.Command, click.Option]]:
    context = click.Context(cli)  # the group imports each command's module on demand
    found = []
    for name in cli.list_commands(context):
        command = cli.get_command(context, name)
        assert command is not None, name
        found += [(name, command, param) for param in command.params if isinstance(param, click.Option)]
    return found


OPTIONS = _options()


def _long(option: click.Option) -> str:
    longs = [opt for opt in option.opts if opt.startswith("--")]
    assert longs, f"{option.opts} has no long option to name its variable after"
    return longs[0]


def expected(command: str, option: click.Option) -> str:
    """The rule, spelled out here rather than taken from the code under test."""
    return "DSH_AUDIT_" + command.upper() + "_" + _long(option)[2:].upper().replace("-", "_")


@pytest.fixture(autouse=True)
def _no_caller_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [name for name in os.environ if name.startswith("DSH_AUDIT_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("COLUMNS", "200")


# -- 1. the names ------------------------------------------------------------------------------------

def test_every_option_is_named_after_its_long_option() -> None:
    named = {(command, option.name): option.envvar for command, _, option in OPTIONS}
    assert named == {(command, option.name): expected(command, option) for command, _, option in OPTIONS}
    # spot checks of the rule, written out whole
    assert {named[key] for key in [("check", "policy_path"), ("check", "json_path"), ("requests", "output_format"),
                                   ("render", "instruction_file"), ("check", "jobs"), ("breaks", "pager")]} == {
        "DSH_AUDIT_CHECK_POLICY", "DSH_AUDIT_CHECK_JSON_REPORT", "DSH_AUDIT_REQUESTS_FORMAT",
        "DSH_AUDIT_RENDER_COMPACTION_INSTRUCTION", "DSH_AUDIT_CHECK_JOBS", "DSH_AUDIT_BREAKS_PAGER"}


def test_a_variable_names_one_option_and_no_global_setting() -> None:
    """No option's variable is another option's older spelling, nor one of the global variables."""
    owners: dict[str, set[tuple[str, str | None]]] = {}
    for command, _, option in OPTIONS:
        for name in {expected(command, option), f"DSH_AUDIT_{command.upper()}_{(option.name or '').upper()}"}:
            owners.setdefault(name, set()).add((command, option.name))
    assert {name: owner for name, owner in owners.items() if len(owner) > 1} == {}
    assert sorted(set(owners) & _VARIABLES) == []


def _parsed(command: click.Command, name: str, args: list[str]) -> tuple[dict[str, object], click.Context]:
    root = click.Context(cli, info_name="dsh-audit", **cli.context_settings)
    with command.make_context(name, args, parent=root, resilient_parsing=True) as context:
        return dict(context.params), context


def _value(option: click.Option, tmp_path: Path) -> tuple[str, list[str]]:
    """A value for the option's variable, and the command line that gives the option the same."""
    long = _long(option)
    if option.is_flag:
        return ("0", [option.secondary_opts[0]]) if option.default is True else ("1", [long])
    if isinstance(option.type, click.Choice):
        text = str(option.type.choices[-1])
    elif isinstance(option.type, click.Path):
        text = str(CHAT if option.type.file_okay else tmp_path)
    elif isinstance(option.type, click.types.StringParamType):
        text = "2026-11-01"  # a WHEN, a profile name, a version
    else:
        text = "2"  # a count, a format version, seconds
    return text, [long, text]


@pytest.mark.parametrize(("command", "option"), [(c, o) for c, _, o in OPTIONS],
                         ids=[f"{c}{_long(o)}" for c, _, o in OPTIONS])
def test_every_option_reads_its_variable_and_its_older_spelling(command: str, option: click.Option, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    cmd = cli.get_command(click.Context(cli), command)
    assert cmd is not None and option.name is not None
    text, args = _value(option, tmp_path)
    given, _ = _parsed(cmd, command, args)
    for variable in (expected(command, option), f"DSH_AUDIT_{command.upper()}_{option.name.upper()}"):
        monkeypatch.setenv(variable, text)
        from_env, context = _parsed(cmd, command, [])
        monkeypatch.delenv(variable)
        assert (variable, context.get_parameter_source(option.name)) == (variable, ParameterSource.ENVIRONMENT)
        assert from_env == given, variable


def _run_check(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path,
               **variables: str) -> tuple[int, str, list[str]]:
    """``dsh-audit check`` with no PATH on a DSH home holding the chat sample, strict.toml beside it."""
    home = tmp_path / "home"
    session = home / "sessions" / "--home-me-proj--" / "session-sample-chat"
    session.mkdir(parents=True)
    shutil.copyfile(CHAT, session / "session.jsonl")
    (tmp_path / "strict.toml").write_text(STRICT, encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # no pyproject.toml above it
    monkeypatch.setenv("DSH_HOME", str(home))
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    return invoke(monkeypatch, capsys, "check")


# -- 2. the tour's repro, the older spelling ---------------------------------------------------------

def test_the_tours_policy_variable_gates_with_strict_toml(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = _run_check(monkeypatch, capsys, tmp_path, DSH_AUDIT_CHECK_POLICY="strict.toml")
    assert (code, err) == (1, [])
    assert out.splitlines()[-1].startswith("FAILED: ") and out.splitlines()[-1].endswith(" (policy: strict.toml)")


def test_without_the_variable_check_passes_on_the_defaults(monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The test above can fail: the same run on the default policy passes."""
    code, out, err = _run_check(monkeypatch, capsys, tmp_path)
    assert (code, err) == (0, [])
    assert out.splitlines()[-1].startswith("PASSED: ") and out.splitlines()[-1].endswith(" (policy: defaults)")


def test_the_older_policy_spelling_still_gates(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                               tmp_path: Path) -> None:
    code, out, err = _run_check(monkeypatch, capsys, tmp_path, DSH_AUDIT_CHECK_POLICY_PATH="strict.toml")
    assert (code, err) == (1, [])
    assert out.splitlines()[-1].endswith(" (policy: strict.toml)")


def test_the_older_format_spelling_still_works_and_the_new_one_wins(monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DSH_AUDIT_REQUESTS_OUTPUT_FORMAT", "csv")
    code, out, err = invoke(monkeypatch, capsys, "requests", str(CHAT))
    assert (code, err) == (0, [])
    assert out.splitlines()[0] == "table,log,session,#,turn/step/attempt,kind,header,msgs,input,cache read,output,finish"
    monkeypatch.setenv("DSH_AUDIT_REQUESTS_FORMAT", "json")
    code, out, err = invoke(monkeypatch, capsys, "requests", str(CHAT))
    assert (code, err) == (0, [])
    assert [json.loads(line)["index"] for line in out.splitlines()] == [0, 1, 2]


@pytest.mark.parametrize(("value", "as_json"), [("1", True), ("yes", True), ("0", False), ("off", False)])
def test_a_flag_variable_takes_clicks_booleans(value: str, as_json: bool, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DSH_AUDIT_REQUESTS_JSON", value)
    code, out, err = invoke(monkeypatch, capsys, "requests", str(CHAT))
    assert (code, err, out.startswith("{")) == (0, [], as_json)


def test_a_bad_value_from_the_command_line_names_no_variable(monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """--help shows each variable, but an error about a value typed on the command line does not."""
    code, out, err = invoke(monkeypatch, capsys, "requests", str(CHAT), "--jobs", "x")
    assert (code, out, err) == (2, "", ["error: Invalid value for '--jobs' / '-j': 'x' is not a valid integer "
                                        "range. (hint: see `dsh-audit requests --help`)"])


# -- 3. unknown variables ----------------------------------------------------------------------------

def test_an_unknown_variable_is_named_with_the_closest_one_and_the_run_goes_on(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    plain = invoke(monkeypatch, capsys, "requests", str(CHAT), "--json")
    monkeypatch.setenv("DSH_AUDIT_CHECK_POLICY_PATHX", "strict.toml")
    code, out, err = invoke(monkeypatch, capsys, "requests", str(CHAT), "--json")
    assert (code, out) == plain[:2] and plain[2] == []
    assert err == ["warning: DSH_AUDIT_CHECK_POLICY_PATHX is not a dsh-audit variable "
                   "(did you mean DSH_AUDIT_CHECK_POLICY?)"]


def test_each_unknown_variable_is_said_once_and_one_far_from_all_without_a_guess(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("DSH_AUDIT_Q", "DSH_AUDIT_PAGR", "DSH_AUDIT_REQUESTS_FORMATT", "DSH_AUDIT_X\x1b[2J"):
        monkeypatch.setenv(name, "1")
    code, out, err = invoke(monkeypatch, capsys, "requests", str(CHAT), "--json")
    assert code == 0 and out
    assert err == [
        "warning: DSH_AUDIT_PAGR is not a dsh-audit variable (did you mean DSH_AUDIT_PAGER?)",
        "warning: DSH_AUDIT_Q is not a dsh-audit variable",
        "warning: DSH_AUDIT_REQUESTS_FORMATT is not a dsh-audit variable (did you mean DSH_AUDIT_REQUESTS_FORMAT?)",
        "warning: DSH_AUDIT_X\\u001b[2J is not a dsh-audit variable"]


def test_the_unknown_variable_warning_fails_no_gate(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = _run_check(monkeypatch, capsys, tmp_path, DSH_AUDIT_CHECK_POLICYS="strict.toml")
    assert (code, err) == (0, ["warning: DSH_AUDIT_CHECK_POLICYS is not a dsh-audit variable "
                               "(did you mean DSH_AUDIT_CHECK_POLICY?)"])
    assert out.splitlines()[-1].endswith(" (policy: defaults)")


def test_variables_of_other_commands_and_global_ones_are_known(monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    known = {"DSH_AUDIT_CHECK_POLICY": "ci.toml", "DSH_AUDIT_CHECK_POLICY_PATH": "ci.toml",
             "DSH_AUDIT_RENDER_COMPACTION_INSTRUCTION": "i.txt", "DSH_AUDIT_STATS_TOP": "3",
             "DSH_AUDIT_REDACT_SALT": "s", "DSH_AUDIT_PAGER": "cat", "DSH_AUDIT_PROGRESS_DELAY": "5",
             "DSH_AUDIT_TRACEBACK": "1", "DSH_AUDIT_SLOW": "0", "DSH_AUDIT_HYPOTHESIS_PROFILE": "ci"}
    for name, value in known.items():
        monkeypatch.setenv(name, value)
    code, out, err = invoke(monkeypatch, capsys, "requests", str(CHAT), "--json")
    assert (code, err) == (0, []) and out


def test_the_version_option_has_no_variable(monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """click's DSH_AUDIT_VERSION turned every command into --version; it is no setting now."""
    monkeypatch.setenv("DSH_AUDIT_VERSION", "1")
    code, out, err = invoke(monkeypatch, capsys, "requests", str(CHAT), "--json")
    assert code == 0 and out.startswith("{")
    assert err == ["warning: DSH_AUDIT_VERSION is not a dsh-audit variable (did you mean DSH_AUDIT_SHOW_MAX_VERSION?)"]


# -- 4. help and docs --------------------------------------------------------------------------------

@pytest.mark.parametrize("command", sorted({c for c, _, _ in OPTIONS}))
def test_help_at_80_columns_shows_each_variable_whole(command: str, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = invoke(monkeypatch, capsys, command, "--help")
    assert (code, err) == (0, [])
    lines = out.splitlines()
    wanted = [expected(command, option) for c, _, option in OPTIONS if c == command and not option.hidden]
    assert re.findall(r"\[env var: (\S+?)[;\]]", " ".join(out.split())) == wanted
    assert [name for name in wanted if not any(re.search(rf"(?<!\w){name}(?!\w)", line) for line in lines)] == []
    assert max(len(line) for line in lines) <= 80
    assert all("[env" not in line or "[env var:" in line for line in lines)


def test_the_reference_lists_every_global_variable() -> None:
    """The variables never warned about are the ones docs/cli.md's table names (an option's aside)."""
    script = ROOT / "scripts" / "gen_cli_doc.py"
    spec = importlib.util.spec_from_file_location("gen_cli_doc", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    listed = {name for names, _ in module.ENVIRONMENT for name in names.split(", ") if name.startswith("DSH_AUDIT_")}
    assert listed - _VARIABLES == {"DSH_AUDIT_REDACT_SALT", "DSH_AUDIT_<COMMAND>_<OPTION>"}
    assert _VARIABLES <= listed
    text = module.render()
    assert text.count("[env var: DSH_AUDIT_CHECK_POLICY]") == 1 and "DSH_AUDIT_CHECK_POLICY_PATH" in text
