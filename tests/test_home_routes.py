"""A log that sits in a DSH home takes its route configuration from that home's patch layer
(``<home>/cordis.patch.yml``, DSH's ``homePatchPath``) when no ``--routes`` is given: a request on
a hand-declared pi-ai route is then rendered with no flag, the file used is named once per
session, ``--routes FILE`` still wins, a home without the file is as before, and a broken file is
one error naming it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dsh_audit.errors import UsageError
from dsh_audit.session import home_routes_file, home_routes_key, routes_from

from _cli import invoke

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
COMPAT = CORPUS / "live-pi" / "c3-openai-compat"
ROUTES = COMPAT / "inputs" / "pi-ai-routes.patch.yml"
SESSION = "session-e7611f7a-95b5-4af3-83c0-7c6d07d82016"

pytestmark = pytest.mark.skipif(not COMPAT.is_dir(), reason="the live-pi corpus is not beside the project")

FACTS = ("cannot render: no pi-ai model facts for local-openai/local-coder: a hand-declared route's models are "
         "described by DSH's route configuration, which the log does not record (hint: pass --routes FILE "
         "(DSH's llm-pi-ai route configuration), or declare the route in {} (the patch layer of the DSH home the log "
         "was recorded in, read when no --routes is given))")


def _home(tmp_path: Path, patch: str | None) -> Path:
    """A DSH home in ``tmp_path`` holding the c3 log (and the capture beside the home); its
    ``cordis.patch.yml`` is ``patch`` (none when None). Returns the log's path."""
    log = tmp_path / "home" / "sessions" / "--project--" / SESSION / "session.jsonl.zstd"
    log.parent.mkdir(parents=True)
    shutil.copyfile(COMPAT / "home" / "sessions" / "--home-dev-dsh-runs-c-c3-openai-compat-ws--" / SESSION /
                    "session.jsonl.zstd", log)
    shutil.copyfile(COMPAT / "wire.jsonl", tmp_path / "wire.jsonl")
    if patch is not None:
        (tmp_path / "home" / "cordis.patch.yml").write_text(patch, encoding="utf-8")
    return log


def _verdicts(out: str) -> list[tuple[str, str]]:
    return [(json.loads(line)["verdict"], json.loads(line)["note"]) for line in out.splitlines()]


def _note(tmp_path: Path) -> str:
    return (f"note: route configuration from {tmp_path / 'home' / 'cordis.patch.yml'} (the llm-pi-ai row of "
            "DSH's home patch layer; --routes FILE overrides it)")


def test_the_home_patch_layer_renders_every_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    log = _home(tmp_path, ROUTES.read_text(encoding="utf-8"))
    code, out, err = invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(tmp_path / "wire.jsonl"),
                            "--json")
    assert (code, _verdicts(out), err) == (0, [("identical", "order (no session header)")] * 6, [_note(tmp_path)])


def test_the_given_route_file_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    # The home's file sends local-coder's high effort as "medium"; the file given sends "high", as DSH did.
    log = _home(tmp_path, ROUTES.read_text(encoding="utf-8").replace("high: high", "high: medium"))
    code, out, err = invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(tmp_path / "wire.jsonl"),
                            "--json", "--routes", str(ROUTES))
    assert (code, _verdicts(out), err) == (0, [("identical", "order (no session header)")] * 6, [])
    code, out, err = invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(tmp_path / "wire.jsonl"),
                            "--json")
    assert (code, [verdict for verdict, _ in _verdicts(out)], err) == \
        (1, ["identical"] + ["different"] * 5, [_note(tmp_path)])  # the title call runs with thinking off


def test_a_broken_home_file_does_not_matter_when_a_route_file_is_given(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    log = _home(tmp_path, "- id: llm-pi-ai\n  config: [\n")
    code, out, err = invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(tmp_path / "wire.jsonl"),
                            "--json", "--routes", str(ROUTES))
    assert (code, _verdicts(out), err) == (0, [("identical", "order (no session header)")] * 6, [])


@pytest.mark.parametrize("patch", [None, "[]\n", "- id: llm-pi-ai\n  disabled: false\n- id: other\n  config: !!js x\n"])
def test_a_home_without_the_row_is_as_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str], patch: str | None) -> None:
    log = _home(tmp_path, patch)
    code, out, err = invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(tmp_path / "wire.jsonl"),
                            "--json")
    assert (code, _verdicts(out), err) == (1, [("unrendered", "order (no session header); " + FACTS.format(
        tmp_path / "home" / "cordis.patch.yml"))] * 6, [])  # the home's layer named, as check names it


def test_a_broken_home_file_is_one_error_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    log = _home(tmp_path, "- id: llm-pi-ai\n  config: [\n")
    code, out, err = invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(tmp_path / "wire.jsonl"))
    assert (code, out, err) == (2, "", [
        f"error: {tmp_path / 'home' / 'cordis.patch.yml'}: route file is not valid YAML at line 3: expected the "
        "node content, but found '<stream end>' (hint: give --routes a YAML file with DSH's llm-pi-ai route "
        "configuration)"])


def test_a_layer_that_is_no_patch_list_is_refused_as_dsh_refuses_it(tmp_path: Path) -> None:
    log = _home(tmp_path, "providers: {}\n")
    with pytest.raises(UsageError) as raised:
        routes_from(None, log=log)
    assert str(raised.value) == (f"{tmp_path / 'home' / 'cordis.patch.yml'}: route file: rows: a patch layer must be "
                                 "a top-level YAML list of patch rows (hint: see DSH's llm-pi-ai configuration: "
                                 "providers.<id>.api, baseURL, models)")


def test_the_index_key_follows_the_home_file(tmp_path: Path) -> None:
    log = _home(tmp_path, None)
    assert (home_routes_file(log), home_routes_key(log)) == (None, None)
    (tmp_path / "home" / "cordis.patch.yml").write_text("[]\n", encoding="utf-8")
    first = home_routes_key(log)
    (tmp_path / "home" / "cordis.patch.yml").write_text("[] # edited\n", encoding="utf-8")
    assert home_routes_file(log) == str(tmp_path / "home" / "cordis.patch.yml")
    assert first is not None and first.startswith("home:") and home_routes_key(log) not in (None, first)
    assert home_routes_file(tmp_path / "wire.jsonl") is None  # not in a DSH home


def test_render_takes_the_home_file_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    log = _home(tmp_path, ROUTES.read_text(encoding="utf-8"))
    found = invoke(monkeypatch, capsys, "render", str(log), "1")
    given = invoke(monkeypatch, capsys, "render", str(COMPAT / "session-logs" / f"{SESSION}.jsonl"), "1",
                   "--routes", str(ROUTES))
    assert found[:2] == given[:2] and found[0] == 0 and given[2] == []
    assert found[2] == [_note(tmp_path)]  # render says where its routes came from, as diff and check do


def test_watch_reads_the_home_routes_and_names_a_broken_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    log = _home(tmp_path, ROUTES.read_text(encoding="utf-8"))
    args = ("watch", str(log), "--json", "--since", "2000-01-01", "--idle-exit", "0.2", "--polling")

    def followed() -> tuple[int, list[str]]:
        code, out, _ = invoke(monkeypatch, capsys, *args)
        lines = [json.loads(line) for line in out.splitlines()]
        assert code == 0
        return sum(line["type"] == "request" for line in lines), [line["message"] for line in lines
                                                                   if line["type"] == "error"]

    # (a route file is read once per process: the broken one first)
    (tmp_path / "home" / "cordis.patch.yml").write_text("- id: llm-pi-ai\n  config: [\n", encoding="utf-8")
    assert followed() == (0, ["route file is not valid YAML at line 3: expected the node content, but found "
                              "'<stream end>'"])
    (tmp_path / "home" / "cordis.patch.yml").write_text(ROUTES.read_text(encoding="utf-8"), encoding="utf-8")
    assert followed() == (6, [])


def test_a_home_file_that_is_a_symlink_loop_is_an_error_not_absent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    log = _home(tmp_path, None)
    layer = tmp_path / "home" / "cordis.patch.yml"
    layer.symlink_to(layer)  # DSH's loadOptionalPatches skips only a missing layer
    code, out, err = invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(tmp_path / "wire.jsonl"))
    assert (code, out) == (2, "")
    assert err == [f"error: {layer}: cannot open: symlink loop (hint: give --routes a YAML file with DSH's "
                   "llm-pi-ai route configuration)"]
