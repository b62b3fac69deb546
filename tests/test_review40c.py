"""Session 40, review C: what it found besides the zone leak (tests/test_redact40b.py) and the cache minimums
and render hint (tests/test_importers40.py).

4. docs named functions of ``_pyproject`` that live in ``dsh_audit/_config_read.py`` now: every ``_module.name``
   a doc names must be one.
5. ``redact -o R.JSONL.ZSTD`` read no compression from a suffix in capitals: a plain log was written plain into it,
   with no note.
"""

from __future__ import annotations

import importlib
import re
import shutil
from pathlib import Path

import pytest
from _cli import invoke, short_salt

from dsh_audit.redact._log import name_compression

ROOT = Path(__file__).resolve().parent.parent
PLAIN = ROOT / "sample_logs" / "chat" / "session.jsonl"
#: A private module's function as a doc names it: `_config_read.read_json(` or `_pyproject.check_tool_tables`.
_NAMED = re.compile(r"`(_[a-z0-9_]+)\.([a-z_][a-z0-9_]*)[`(]")


def _modules() -> dict[str, list[str]]:
    """Each private module's name (``_config_read``) -> the dotted names of the modules so called."""
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "dsh_audit").rglob("_*.py")):
        found.setdefault(path.stem, []).append(".".join(path.relative_to(ROOT).with_suffix("").parts))
    return found


def test_every_private_function_a_doc_names_is_in_a_module_of_that_name() -> None:
    modules = _modules()
    named = [(doc.name, m[1], m[2]) for doc in sorted((ROOT / "docs").glob("*.md"))
             for m in _NAMED.finditer(doc.read_text("utf-8")) if m[2] != "py"]
    missing = [(doc, f"{module}.{name}") for doc, module, name in named
               if not any(_defined(dotted, name) for dotted in modules.get(module, []))]
    assert ("hostile-inputs.md", "_config_read", "read_json") in named and missing == []


def _defined(dotted: str, name: str) -> bool:
    """Whether module ``dotted`` defines ``name`` (``_pyproject`` imports ``read_bytes``: not its own)."""
    found = getattr(importlib.import_module(dotted), name, None)
    return found is not None and getattr(found, "__module__", dotted) == dotted


@pytest.mark.parametrize(("name", "zstd"), [
    ("r.jsonl.zstd", True), ("x.log.zstd", True), ("R.JSONL.ZSTD", True), ("r.Jsonl.Zstd", True),
    ("r.jsonl", False), ("R.JSONL", False), ("r.zstd.jsonl", False), ("r.log", None), ("r.zst", None)])
def test_a_log_name_says_its_compression_in_either_case(name: str, zstd: bool | None) -> None:
    assert name_compression(Path(name)) is zstd


def test_a_plain_log_written_to_a_name_in_capitals_is_zstd_with_its_note(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(PLAIN, tmp_path / "in.jsonl")
    monkeypatch.chdir(tmp_path)
    code, text, err = invoke(monkeypatch, capsys, "redact", "in.jsonl", "-o", "R.JSONL.ZSTD", "--salt", "s")
    assert (code, err, text.splitlines()[0].split(": ")[0]) == (
        0, ["note: written zstd: the log was plain; -o R.JSONL keeps it", short_salt("s")], "wrote R.JSONL.ZSTD (format v0, zstd)")
    assert (tmp_path / "R.JSONL.ZSTD").read_bytes()[:4] == b"\x28\xb5\x2f\xfd"
