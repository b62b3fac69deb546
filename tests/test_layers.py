"""Clean layers: no import cycles between subpackages, no reaching into another one's private
modules, one meaning per public name, and a ``--version`` that loads no library code.

Imports are read from the source with ``ast``, so an import inside a function or under
``TYPE_CHECKING`` counts as much as one at the top of a module.
"""

from __future__ import annotations

import ast
import functools
import importlib
import pkgutil
import subprocess
import sys
import types
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

import dsh_audit

PACKAGE = Path(dsh_audit.__file__).resolve().parent
ROOT = PACKAGE.parent


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(name: str) -> bool:
    """Whether ``dsh_audit.a.b`` names a module or package of the source tree (not an attribute)."""
    relative = Path(*name.split(".")[1:]) if "." in name else Path()
    return (PACKAGE / relative).with_suffix(".py").is_file() or (PACKAGE / relative / "__init__.py").is_file()


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of ``body`` and of the blocks in it, in source order: an import is one, so
    this finds each that ``ast.walk`` finds without visiting every expression (a sixth of its time)."""
    for node in body:
        yield node
        for block in ("body", "orelse", "finalbody", "handlers", "cases"):  # handlers, cases: their bodies
            yield from _statements(getattr(node, block, []))


@functools.cache  # the source does not change during a run: each file is parsed once, for every test
def _imports(path: Path) -> tuple[tuple[int, str], ...]:
    """Every ``(line, dotted target)`` a module imports; ``from M import n`` yields ``M`` and ``M.n``."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in _statements(ast.parse(path.read_text(), str(path)).body):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            found.extend((node.lineno, f"{module}.{alias.name}") for alias in node.names if alias.name != "*")
    return tuple(found)


def _layer(name: str) -> str:
    """The graph node of a module: ``dsh_audit`` itself, or ``dsh_audit.<first component>``."""
    parts = name.split(".")
    return ".".join(parts[:2])


def _edges() -> dict[tuple[str, str], list[str]]:
    """(importing layer, imported layer) -> the import sites, ``file:line target``."""
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        source = _layer(_module_name(path))
        for line, target in _imports(path):
            if target.split(".")[0] != "dsh_audit":
                continue
            # ``from .. import __version__`` imports an attribute of the top-level package
            layer = _layer(target) if _is_module(_layer(target)) else "dsh_audit"
            if layer != source:
                edges[(source, layer)].append(f"{path.relative_to(ROOT)}:{line} {target}")
    return edges


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle ``[a, b, ..., a]`` of the graph, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)) is not None:
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)) is not None:
            return cycle
    return None


def test_find_cycle_reports_a_cycle():
    assert _find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle_between_subpackages():
    edges = _edges()
    graph: dict[str, set[str]] = defaultdict(set)
    for source, target in edges:
        graph[source].add(target)
    assert "dsh_audit.log" in graph  # the scan sees imports at all
    cycle = _find_cycle(graph)
    if cycle is not None:
        sites = [f"  {a} -> {b}: {site}" for a, b in zip(cycle, cycle[1:]) for site in edges[(a, b)]]
        pytest.fail("import cycle " + " -> ".join(cycle) + "\n" + "\n".join(sites))


def _private_imports() -> list[str]:
    """``file:line imports dsh_audit.x._private`` for each import of another layer's private part."""
    found: dict[str, None] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        source = _layer(_module_name(path))
        for line, target in _imports(path):
            parts = target.split(".")
            if parts[0] != "dsh_audit" or _layer(target) == source:
                continue
            # dsh_audit._json, dsh_audit._version: the package's own helpers, shared by every layer
            private = [i for i, p in enumerate(parts) if i >= 2 and p.startswith("_") and not p.startswith("__")]
            if private:
                found[f"{path.relative_to(ROOT)}:{line} imports {'.'.join(parts[:private[0] + 1])}"] = None
    return list(found)


def test_no_import_of_another_subpackages_private_modules():
    found = _private_imports()
    assert found == [], "import from the package instead (export the name in its __init__):\n" + "\n".join(found)


def test_replay_is_the_subpackage():
    import dsh_audit.replay

    assert isinstance(dsh_audit.replay, types.ModuleType)
    assert callable(dsh_audit.replay.replay)
    subpackages = {name.split(".")[1] for _, name, _ in pkgutil.iter_modules(dsh_audit.__path__, "dsh_audit.")}
    assert not set(dsh_audit.__all__) & subpackages, "a public name shadows a subpackage"


def test_top_level_names_resolve_lazily():
    for name in dsh_audit.__all__:
        assert getattr(dsh_audit, name) is not None
    from dsh_audit.errors import DshAuditError
    from dsh_audit.log import read_log
    from dsh_audit.replay import Request

    assert (dsh_audit.DshAuditError, dsh_audit.read_log, dsh_audit.Request) == (DshAuditError, read_log, Request)
    with pytest.raises(AttributeError):
        dsh_audit.no_such_name  # noqa: B018


#: Public names that still mean different things in different packages (to be renamed); the test
#: fails when one is added, and when one of these is resolved (then drop it from here).
KNOWN_HOMONYMS = {"Finding", "VERDICTS", "common_prefix"}


def test_one_meaning_per_public_name():
    meanings: dict[str, dict[int, list[str]]] = defaultdict(lambda: defaultdict(list))
    names = ["dsh_audit"] + sorted(
        name for _, name, _ in pkgutil.walk_packages(dsh_audit.__path__, "dsh_audit.")
        if not any(part.startswith("_") for part in name.split(".")))
    for name in names:
        module = importlib.import_module(name)
        for symbol in getattr(module, "__all__", ()):
            meanings[symbol][id(getattr(module, symbol))].append(name)
    homonyms = {symbol: sorted(m for ms in by_id.values() for m in ms)
                for symbol, by_id in meanings.items() if len(by_id) > 1}
    assert set(homonyms) == KNOWN_HOMONYMS, homonyms


def test_command_table_matches_the_command_modules():
    from dsh_audit import cli as cli_package

    table = cli_package._COMMANDS
    by_module: dict[str, set[str]] = defaultdict(set)
    for command, module in table.items():
        by_module[module].add(command)
    for module, commands in by_module.items():
        defined = {c.name for c in importlib.import_module(f"dsh_audit.cli.{module}").COMMANDS}
        assert defined == commands, f"dsh_audit.cli.{module} defines {sorted(defined)}"
    context = click.Context(cli_package.cli)
    assert sorted(cli_package.cli.list_commands(context)) == sorted(table)  # in workflow order (--help)
    for name in table:
        command = cli_package.cli.get_command(context, name)
        assert command is not None and command.name == name
    assert cli_package.cli.get_command(context, "no-such-command") is None


# Lists, on stderr at exit, every module the run loaded: ``-X importtime`` alone misses the modules
# ``importlib.import_module`` loads (the CLI's commands, a package's lazily resolved names).
_LIST_MODULES = ("import atexit, sys; atexit.register(lambda: sys.stderr.write("
                 "''.join(f'imported: {m}\\n' for m in sorted(sys.modules))))")


def _imported_modules(*args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run ``python -m M ARGS`` or ``python -c CODE ARGS`` in a fresh interpreter: the result and
    every module it imported."""
    option, target, *rest = args
    code = f"import runpy; runpy.run_module({target!r}, run_name='__main__', alter_sys=True)" if option == "-m" \
        else target
    result = subprocess.run([sys.executable, "-c", f"{_LIST_MODULES}\n{code}", *rest], capture_output=True,
                            text=True, cwd=ROOT, timeout=60)
    modules = {line.removeprefix("imported: ") for line in result.stderr.splitlines() if line.startswith("imported: ")}
    return result, modules


def test_version_imports_no_library_code():
    result, modules = _imported_modules("-m", "dsh_audit", "--version")
    assert result.returncode == 0, result.stderr[-2000:]
    assert dsh_audit.__version__ in result.stdout
    heavy = {"deepdiff", "rich", "dsh_audit.cache", "dsh_audit.gate", "dsh_audit.report"} & modules
    assert not heavy, f"--version imports {sorted(heavy)}"
    allowed = {"dsh_audit", "dsh_audit.__main__", "dsh_audit._lazy", "dsh_audit._version", "dsh_audit.cli",
               "dsh_audit.cli._common", "dsh_audit.errors"}
    extra = sorted(m for m in modules if m.split(".")[0] == "dsh_audit" and m not in allowed)
    assert extra == [], f"--version imports {extra}"


def test_importing_the_cli_loads_no_command():
    result, modules = _imported_modules("-c", "import dsh_audit.cli")
    assert result.returncode == 0, result.stderr[-2000:]
    assert not {"deepdiff", "rich"} & modules
    assert not [m for m in modules if m.startswith("dsh_audit.cli._") and m != "dsh_audit.cli._common"]


#: What a command on one log never needs: other formatters, cache accounting, the gate, the fleet
#: index, the process pool, and the third-party modules only some paths use (issue 11: start-up).
_NOT_FOR_ONE_LOG = {"dsh_audit.report._html", "dsh_audit.report._junit", "dsh_audit.report._sarif",
                    "dsh_audit.report._markdown", "dsh_audit.report._check_json", "dsh_audit.cache", "dsh_audit.gate",
                    "dsh_audit.fleet._audit", "dsh_audit.fleet._index", "dsh_audit.fleet._stats", "dsh_audit.diff",
                    "dsh_audit.capture", "dsh_audit.redact", "dsh_audit.watch", "deepdiff", "yaml", "sqlite3",
                    "multiprocessing", "concurrent.futures", "tomllib"}


@pytest.mark.parametrize("args, needed, heavy", [
    # requests looks for a capture beside the log, as usage prices from it (session 41), and reads
    # none when there is none: no loader, no comparison, no cache accounting
    (["requests", "sample_logs/tools/session.jsonl", "--json"], {"dsh_audit.session", "dsh_audit.report._json"},
     _NOT_FOR_ONE_LOG - {"dsh_audit.capture"} | {"dsh_audit.capture._compare", "dsh_audit.capture._loaders",
                                                   "dsh_audit.attribution", "rich", "dsh_audit.wire",
                                                   "dsh_audit.validate", "dsh_audit.importers", "subprocess",
                                                   "decimal"}),
    # breaks looks for a capture beside the log, as check does (dsh_audit.capture.find_capture), and
    # compares none: it loads no body comparison, and renders no body of a log with no break
    (["breaks", "sample_logs/chat/session.jsonl"], {"dsh_audit.attribution"},
     _NOT_FOR_ONE_LOG - {"dsh_audit.capture"} | {"dsh_audit.capture._compare", "dsh_audit.capture._loaders",
                                                   "dsh_audit.validate", "dsh_audit.importers", "dsh_audit.wire",
                                                   "tempfile"}),
], ids=["requests", "breaks"])
def test_a_command_on_one_log_imports_only_what_it_needs(args, needed, heavy):
    result, modules = _imported_modules("-m", "dsh_audit", *args)
    assert result.returncode == 0, result.stderr[-2000:]
    assert needed <= modules  # the scan sees the command's own imports
    assert sorted(heavy & modules) == [], f"{args[0]} imports {sorted(heavy & modules)}"


def test_attribution_loads_the_renderers_at_its_first_body_comparison_not_at_import():
    """``breaks`` renders only the bodies of the breaks it finds: importing the attribution loads no
    module of dsh_audit.wire; comparing two captured bodies with cache markers does."""
    code = ("import sys\nfrom dsh_audit.attribution import captured_extends\n"
            "print(sorted(m for m in sys.modules if m.startswith('dsh_audit.wire')))\n"
            "print(captured_extends(b'{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",'\n"
            "    b'\"text\":\"a\",\"cache_control\":{\"type\":\"ephemeral\"}}]}]}', b'{\"model\":\"m\",\"messages\":'\n"
            "    b'[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"user\",\"content\":\"b\"}]}'))\n"
            "print('dsh_audit.wire' in sys.modules)")
    result, _ = _imported_modules("-c", code)
    assert (result.returncode, result.stdout) == (0, "[]\n(True, None)\nTrue\n"), result.stderr[-2000:]


def test_lazy_package_names_resolve_to_their_modules():
    """Each package that resolves its names on first use lists every public name, and only those,
    in ``_LAZY``, and ``dir()`` shows them before any is used."""
    lazy = [name for name in ["dsh_audit"] + [n for _, n, is_pkg in pkgutil.walk_packages(dsh_audit.__path__, "dsh_audit.")
                                              if is_pkg]
            if hasattr(importlib.import_module(name), "_LAZY")]
    assert {"dsh_audit", "dsh_audit.cache", "dsh_audit.fleet", "dsh_audit.report"} <= set(lazy)
    for name in lazy:
        module = importlib.import_module(name)
        assert set(module._LAZY) == set(module.__all__) - {"__version__"}, name
        assert set(module.__all__) <= set(dir(module)), name
        for symbol, source in module._LAZY.items():
            assert getattr(module, symbol) is getattr(importlib.import_module(source, name), symbol), (name, symbol)
        with pytest.raises(AttributeError):
            getattr(module, "no_such_name")
