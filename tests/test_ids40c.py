"""Session 40 (fuzz 25, D2), with table_ids.patch: a session id is never cut in its middle.

``check`` at 40 and 56 columns showed ``session-2b096b…0a34-4da6-ffff``, ``usage`` and the
``sessions`` blocks at 40 likewise: a middle cut names no session (`show` refuses it). A column
of ids (print_table's ``ids``) now keeps its ids whole: a table leaves a column out for them, and
a block of lines a row wraps an id whole after a ``-``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from test_ids40b import IDS, _home, needs_corpus

from dsh_audit.cli import cli
from dsh_audit.log import resolve_session

#: The ids as the narrow tables show them: the shortest unique prefixes, whole.
SHORT = {"session-2b096b61-0a34-4da6-abec", "session-2b096b61-0a34-4da6-ffff", "session-2b096b61-0a35"}


def _shown_ids(out: str, key: str) -> list[str]:
    """Each ``key  VALUE`` block line's value, joined with the lines it wraps onto."""
    lines = out.splitlines()
    found = []
    for at, line in enumerate(lines):
        if line.startswith(key + " ") and "2b096b61" in line:
            value = line.split()[1]
            while at + 1 < len(lines) and value.endswith("-") and lines[at + 1].startswith(" "):
                at += 1
                value += lines[at].strip()
            found.append(value)
    return found


@needs_corpus
@pytest.mark.parametrize(("command", "columns", "key"), [
    ("check", 40, "session"), ("check", 56, "session"), ("usage", 40, "session"), ("sessions", 40, "id"),
])
def test_a_narrow_table_never_cuts_an_id(tmp_path: Path, command: str, columns: int, key: str) -> None:
    root = _home(tmp_path)
    args = [command] if command == "sessions" else [command, str(root)]
    result = CliRunner().invoke(cli, args, env={"COLUMNS": str(columns), "DSH_HOME": str(tmp_path)},
                                catch_exceptions=False)
    assert result.exit_code == 0
    shown = _shown_ids(result.stdout, key)
    assert sorted(shown) == sorted(SHORT)
    assert sorted(resolve_session(i, root=root).parent.name for i in shown) == sorted(IDS)
