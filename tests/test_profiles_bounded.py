"""A DSH home with many profiles (issue 15): bounded work, and each layer parsed once.

Without ``--profile NAME`` or ``$DSH_AUDIT_PROFILE``, :func:`load_home_routes` parses every
profile's patch layer to learn whether they all compose alike (the log does not record the
profile; DSH takes it per launch, ``apps/cli/src/args.ts`` ``--profile <name>``). Past
``MAX_COMPARED_PROFILES`` profiles with a layer it parses none of them: the note says the profile
is not known and names ``--profile NAME`` (or ``$DSH_AUDIT_PROFILE``), and the home's own layers
alone are read. Each file is parsed once while it is unchanged (its size and modification time).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from dsh_audit.errors import UsageError
from dsh_audit.wire import _piai_yaml
from dsh_audit.wire._piai_home import MAX_COMPARED_PROFILES, PROFILE_HINT, home_route_files, load_home_routes

from _cli import invoke
from test_routes_layers import LEVELS, _layers_log, efforts, make_home, route

#: An hour ago: older than the memo's racy window, so a file stamped then is memoised.
OLD = time.time() - 3600


def levels(high: str) -> dict[str, str | None]:
    return {**LEVELS, "high": high}


def count_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the YAML reader parses from now on, in order (the memo's misses)."""
    parsed: list[str] = []
    real = _piai_yaml._parse_yaml

    def counting(name: str, hint: str, *, what: str, dialect: _piai_yaml.YamlDialect) -> object:
        parsed.append(os.path.basename(os.path.dirname(name)) + "/" + os.path.basename(name))
        return real(name, hint, what=what, dialect=dialect)

    monkeypatch.setattr(_piai_yaml, "_parse_yaml", counting)
    return parsed


def many(tmp_path: Path, count: int, *, home: str | None = None) -> Path:
    """A DSH home of ``count`` profiles p0..p<count-1>, each layer a different route (efforts
    medium and low alternate, so no two neighbours compose alike), every file stamped an hour ago."""
    root = make_home(tmp_path, profiles={f"p{i}": route("medium" if i % 2 else "low") for i in range(count)},
                     home=home)
    for folder, _, files in os.walk(root):
        for name in files:
            os.utime(os.path.join(folder, name), (OLD, OLD))
    return root


def bounded_note(home: Path, count: int) -> str:
    return (f"DSH home {home} has {count} profiles with a patch layer, more than the {MAX_COMPARED_PROFILES} "
            "compared, and the log does not record which one ran: the profile is not known and the home's own "
            f"layers only are read; {PROFILE_HINT}")


def test_the_bound_and_the_hint() -> None:
    assert MAX_COMPARED_PROFILES == 16
    assert PROFILE_HINT == ("name the DSH profile the session ran under (its dsh --profile NAME) with --profile NAME "
                            "(or $DSH_AUDIT_PROFILE)")


def test_past_the_bound_no_profile_layer_is_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = many(tmp_path, 200, home=route("high"))
    parsed = count_parses(monkeypatch)
    routes = load_home_routes(home)
    assert routes is not None
    assert (efforts(routes), routes.layers, routes.notes) == (
        {"local-coder": levels("high")}, (str(home / "cordis.patch.yml"),), (bounded_note(home, 200),))
    assert parsed == ["home/cordis.patch.yml"]
    # a named profile reads its own layer and the home's, whatever the count
    routes = load_home_routes(home, profile="p7")
    assert routes is not None and (efforts(routes), routes.notes) == ({"local-coder": levels("high")}, ())
    assert parsed == ["home/cordis.patch.yml", "p7/cordis.patch.yml"]


def test_without_a_home_layer_past_the_bound_nothing_is_parsed(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    home = many(tmp_path, 200)
    parsed = count_parses(monkeypatch)
    routes = load_home_routes(home)
    assert routes is not None
    assert (dict(routes.models), routes.layers, routes.notes) == ({}, (), (bounded_note(home, 200),))
    assert parsed == []


def test_at_the_bound_every_layer_is_compared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = many(tmp_path, MAX_COMPARED_PROFILES)
    parsed = count_parses(monkeypatch)
    routes = load_home_routes(home)
    assert routes is not None and routes.notes == (
        f"the profiles of DSH home {home} ({', '.join(sorted(f'p{i}' for i in range(16)))}) compose different "
        f"llm-pi-ai routes and the log does not record which one ran: the home's own layers only are read; "
        f"{PROFILE_HINT}",)
    assert sorted(parsed) == sorted(f"p{i}/cordis.patch.yml" for i in range(16))


def test_profiles_without_a_layer_do_not_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """200 profiles, one with a layer: it is compared with the others (the home's layers alone)."""
    home = make_home(tmp_path, profiles={f"p{i}": route("medium") if i == 3 else None for i in range(200)})
    parsed = count_parses(monkeypatch)
    routes = load_home_routes(home)
    assert routes is not None and routes.notes == (
        f"the profiles of DSH home {home} ({', '.join(sorted(f'p{i}' for i in range(200))[:16])}, ... (200 in all)) "
        "compose different llm-pi-ai routes and the log does not record which one ran: the home's own layers only "
        f"are read; {PROFILE_HINT}",)
    assert parsed == ["p3/cordis.patch.yml"]


def test_each_file_is_parsed_once_while_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = many(tmp_path, 2, home=route("high"))
    (home / "settings.yaml").write_text("llm-pi-ai:\n  providers:\n    local-openai:\n      defaultMaxTokens: 64\n",
                                        encoding="utf-8")
    os.utime(home / "settings.yaml", (OLD, OLD))
    parsed = count_parses(monkeypatch)
    first = load_home_routes(home)
    assert sorted(parsed) == ["home/cordis.patch.yml", "home/settings.yaml", "p0/cordis.patch.yml",
                              "p1/cordis.patch.yml"]
    second = load_home_routes(home)
    assert len(parsed) == 4 and second == first  # a second load reads no file again
    # a changed file is read again, and only it
    (home / "profiles" / "p0" / "cordis.patch.yml").write_text(route("medium"), encoding="utf-8")
    os.utime(home / "profiles" / "p0" / "cordis.patch.yml", (OLD - 60, OLD - 60))
    third = load_home_routes(home)
    assert parsed[4:] == ["p0/cordis.patch.yml"] and third == first
    # a file written just now is parsed on every read (its stamp may not change on a quick edit)
    (home / "settings.yaml").write_text("llm-pi-ai: {}\n", encoding="utf-8")
    load_home_routes(home)
    load_home_routes(home)
    assert parsed[5:] == ["home/settings.yaml", "home/settings.yaml"]


def test_a_broken_layer_is_reported_each_time_and_parsed_once(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    home = many(tmp_path, 1, home="- id: llm-pi-ai\n  config: {providers: [unclosed\n")
    os.utime(home / "cordis.patch.yml", (OLD, OLD))
    parsed = count_parses(monkeypatch)
    messages = []
    for _ in range(2):
        with pytest.raises(UsageError) as caught:
            load_home_routes(home)
        messages.append((caught.value.message, caught.value.path))
    assert messages[0] == messages[1] and messages[0][1] == str(home / "cordis.patch.yml")
    assert messages[0][0] == "route file is not valid YAML at line 3: expected ',' or ']', but got '<stream end>'"
    assert parsed == ["home/cordis.patch.yml"]  # read first: the profiles' layers are not reached


def test_the_command_warns_once_and_renders_with_the_home_layer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("DSH_AUDIT_PROFILE", raising=False)
    home = many(tmp_path, 200, home=route("high"))
    log = _layers_log(home)
    parsed = count_parses(monkeypatch)
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "0")
    assert (code, out.endswith('"reasoning_effort":"high"}')) == (0, True)
    assert f"warning: {bounded_note(home, 200)}" in err
    assert not any(name.startswith("p") for name in parsed)
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "0", "--profile", "p1")
    assert (code, out.endswith('"reasoning_effort":"high"}')) == (0, True)  # the home layer outranks p1's
    assert not any("profiles with a patch layer" in line for line in err)


def test_the_inputs_are_the_files_read(tmp_path: Path) -> None:
    """``home_route_files``: what an index can hash instead of every profile's layer."""
    home = many(tmp_path, 200, home=route("high"))
    assert home_route_files(home) == [str(home / "cordis.patch.yml")]
    assert home_route_files(home, profile="p7") == [str(home / "profiles" / "p7" / "cordis.patch.yml"),
                                                      str(home / "cordis.patch.yml")]
    assert home_route_files(home, profile="nobody") == [str(home / "cordis.patch.yml")]
    assert home_route_files(home, profile="../p7") == []  # refused by load_home_routes: nothing read
    (tmp_path / "few").mkdir()
    few = many(tmp_path / "few", 3)
    assert home_route_files(few) == [str(few / "profiles" / f"p{i}" / "cordis.patch.yml") for i in range(3)]
