"""What review 40 B found in watch and the route hints.

1. A newline in a title broke a watch line in two (``fit_lines`` split the line at it before it
   escaped it): every field is escaped on its own now, as `sessions` shows a title
   (``Who\\u000aare``), folded or not. (Folding moves no field: tests/test_tour40_diff.py.)
4. A bundle's route file was named by the hint whenever its manifest named it, even when the
   file was not there: the hint falls through to the DSH home's then.
5. The hint was cached twice (``diff``'s dict, ``check``'s ``Judge``): one cache now, of the
   manifest's read, in :mod:`dsh_audit.session` (the ``pool`` one: tests/test_interrupts.py).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from dsh_audit.cli._watch import _folded
from dsh_audit import _manifest_file
from dsh_audit.session import routes_hint
from test_views33 import _request

HOSTILE = _request(title="Who\nare \x1b[31myou", model="m\x1b]0;x\x07", cause="header\nchange",
                   fields=("mo\ndel",))


@pytest.mark.parametrize(("width", "lines"), [
    (80, ["2026-12-02 11:23:45  session-514c4bc2  Who\\u000aare \\u001b[31myou  #9 t3/s1/a1",
          "  m\\u001b]0;x\\u0007  prompt 8927  cache 0 (0 expected)  $0.0337  break_explained",
          "  BREAK header\\u000achange lost 8927 ($0.0308) fields mo\\u000adel",
          "  evidence seqs 179"]),
    (200, ["2026-12-02 11:23:45  session-514c4bc2  Who\\u000aare \\u001b[31myou  #9 t3/s1/a1  m\\u001b]0;x\\u0007  "
           "prompt 8927  cache 0 (0 expected)  $0.0337  break_explained",
           "  BREAK header\\u000achange lost 8927 ($0.0308) fields mo\\u000adel evidence seqs 179"]),
])
def test_a_watch_line_escapes_a_newline_and_esc_inside_its_field(width: int, lines: list[str]) -> None:
    shown = _folded(HOSTILE, "session-514c4bc2", None, width)
    assert shown == lines
    assert not any(ch in line for line in shown for ch in "\n\x1b\x07")


def _bundle(tmp_path: Path) -> tuple[Path, str]:
    log = tmp_path / "r.jsonl"
    (tmp_path / "r.jsonl.manifest.json").write_text(json.dumps({"tool": "dsh-audit", "route_file": "r.jsonl.routes.yml"}))
    return log, "pass --routes FILE (DSH's llm-pi-ai route configuration)"


def test_a_bundles_route_file_is_named_only_when_it_is_there(tmp_path: Path) -> None:
    log, hint = _bundle(tmp_path)
    home = (f"{hint}, or record the log in a DSH home (<home>/sessions/...) and declare the route in "
            "<home>/cordis.patch.yml, read when no --routes is given")
    assert routes_hint(log, hint) == home  # the manifest names it, the bundle lost it
    (tmp_path / "r.jsonl.routes.yml").write_text("{}\n")  # appears later: named then
    assert routes_hint(log, hint) == (
        f"pass --routes {tmp_path}/r.jsonl.routes.yml (DSH's llm-pi-ai route configuration), the redacted route "
        "file of this bundle (its manifest names it)")
    (tmp_path / "r.jsonl.routes.yml").unlink()
    (tmp_path / "r.jsonl.routes.yml").mkdir()  # a folder is no route file
    assert routes_hint(log, hint) == home


def test_a_bundles_manifest_is_read_once_while_it_stays_the_same(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    log, hint = _bundle(tmp_path)
    (tmp_path / "r.jsonl.routes.yml").write_text("{}\n")
    old = time.time_ns() - 60 * 10**9  # past the 2 s a file just written is read again (dsh_audit._stamp)
    os.utime(tmp_path / "r.jsonl.manifest.json", ns=(old, old))
    opened: list[str] = []
    real = _manifest_file.open_regular

    def counting(path: Any, **kwargs: Any) -> Any:
        opened.append(str(path))
        return real(path, **kwargs)

    monkeypatch.setattr(_manifest_file, "open_regular", counting)
    said = {routes_hint(log, hint) for _ in range(3)}
    assert len(said) == 1 and opened == [f"{log}.manifest.json"]  # diff and check ask once a row
    (tmp_path / "r.jsonl.manifest.json").write_text(json.dumps({"tool": "dsh-audit", "route_file": "../x.yml"}))
    assert routes_hint(log, hint).startswith(f"{hint}, or record") and len(opened) == 2  # an edit is read again


def test_the_attribution_doc_names_each_key_an_effort_change_carries() -> None:
    """Item 6: ``breaks --json``/``explain --json`` give ``route`` with ``wire`` or ``reasoning``
    off the DeepSeek route, ``thinking`` on it; docs/attribution.md says each key (it said
    ``thinking`` only)."""
    from dsh_audit.attribution._header_diff import diff_headers, on_route

    [change] = diff_headers({"config": {"reasoningEffort": "high"}}, {"config": {"reasoningEffort": "off"}})
    bodies = (b'{"reasoning_effort":"high"}', b'{"model":"m"}')
    keys = [sorted(on_route([change], routes, given)[0].detail or {}) for routes, given in [
        (("deepseek", "deepseek"), None), (("anthropic", "anthropic"), None), (("openai", "openai"), bodies)]]
    assert keys == [["thinking"], ["reasoning", "route"], ["route", "wire"]]
    doc = (Path(__file__).resolve().parents[1] / "docs" / "attribution.md").read_text(encoding="utf-8")
    said = doc[doc.index("In `breaks --json` and `explain --json`, a `reasoningEffort` entry"):]
    said = said[:said.index("\n\n", said.index("`thinking`\nappears only"))]
    assert all(f'"{key}"' in said for key in ("thinking", "route", "wire", "reasoning", "path", "before", "after"))
