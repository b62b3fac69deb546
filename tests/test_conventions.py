"""Tripwires for the project's conventions: exported names, CLI help, docs in sync."""

from __future__ import annotations

import importlib
import pkgutil

import click
from click.testing import CliRunner
import pytest

import dsh_audit
from dsh_audit.cli import cli

PACKAGES = sorted(
    name for _, name, is_pkg in pkgutil.walk_packages(dsh_audit.__path__, "dsh_audit.")
    if is_pkg and not name.split(".")[-1].startswith("_")
)


@pytest.mark.parametrize("name", ["dsh_audit", *PACKAGES])
def test_package_exports_a_sorted_exact_all(name):
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{name} has no __all__"
    assert list(exported) == sorted(exported), f"{name}.__all__ is not sorted"
    for symbol in exported:
        assert hasattr(module, symbol), f"{name}.__all__ names missing {symbol}"
    public = {n for n in vars(module) if not n.startswith("_")}
    submodules = {n for n in public if isinstance(getattr(module, n), type(importlib))}
    stray = public - set(exported) - submodules - {"annotations"}
    assert not stray, f"{name} exposes names outside __all__: {sorted(stray)}"


def _commands():
    context = click.Context(cli)  # the group imports each command's module on demand
    return [(name, cli.get_command(context, name)) for name in cli.list_commands(context)]


@pytest.mark.parametrize("name, command", _commands(), ids=[n for n, _ in _commands()])
def test_every_command_has_help_with_an_example(name, command):
    text = command.help or ""
    assert text.strip(), f"{name} has no help"
    assert "Example" in text, f"{name}'s help does not end with an example"
    for param in command.params:
        if isinstance(param, click.Option):
            assert param.help, f"{name} option {param.opts} has no help"


def test_version_option():
    """--version names what this version reads and renders, from constants the library agrees with."""
    from dsh_audit._version import DSH_RELEASE, LOG_FORMATS, PI_AI_RELEASE
    from dsh_audit.log import SUPPORTED_VERSIONS
    from dsh_audit.wire import _anthropic, _openai

    runner = CliRunner()
    result = runner.invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.output == (
        f"dsh-audit {dsh_audit.__version__}: reads DSH session logs of format v0-v4 (v0 as DSH 0.1.0-rc.8 reads "
        "it; --max-version 0 reads only v0, as that release does) and renders DSH's native DeepSeek requests and "
        "pi-ai 0.82.1's Anthropic and OpenAI ones\n")
    assert LOG_FORMATS == tuple(SUPPORTED_VERSIONS) and DSH_RELEASE == "0.1.0-rc.8"
    assert f"pi-ai **{PI_AI_RELEASE}**" in (_anthropic.__doc__ or "") and f"pi-ai **{PI_AI_RELEASE}**" in (
        _openai.__doc__ or "")


def test_cli_reference_is_generated_from_the_commands():
    import importlib.util
    from pathlib import Path

    script = Path(__file__).resolve().parent.parent / "scripts" / "gen_cli_doc.py"
    spec = importlib.util.spec_from_file_location("gen_cli_doc", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.DOC.read_text() == module.render(), "docs/cli.md is stale: run python scripts/gen_cli_doc.py"


def test_help_lists_every_command_once_in_workflow_order_with_whole_summaries():
    from dsh_audit.cli import _COMMANDS, _WORKFLOW

    result = CliRunner().invoke(cli, ["--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0
    names, section = [], None
    for line in result.output.splitlines():
        if line.endswith(":") and not line.startswith(" "):
            section = line
        elif section not in (None, "Options:") and line.startswith("  ") and not line.startswith("   "):
            names.append(line.split()[0])
    assert names == [name for _, section in _WORKFLOW for name in section]
    assert sorted(names) == sorted(_COMMANDS)
    assert [line for line in result.output.splitlines() if line.endswith(":") and not line.startswith(" ")] == [
        "Options:", *(f"{title}:" for title, _ in _WORKFLOW)]
    assert "..." not in result.output.split("\n", 1)[1]  # summaries are whole, wrapped, never cut
