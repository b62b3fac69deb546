"""DSH's route configuration composed from its home's layers (issue 12), and DSH's YAML readers.

DSH composes the llm-pi-ai row from patch layers in a fixed order (DSH 0.1.0-rc.8
``apps/cli/src/profile-boot.ts:122-151``): the bundles', the profile's own
``<home>/profiles/<name>/cordis.patch.yml``, the home's ``<home>/cordis.patch.yml``, then per-launch
``--patch`` overlays; a patch replaces the row's ``config`` whole (vendored include
``src/index.ts:121-124``). The plugin then lays ``<home>/settings.yaml``'s ``llm-pi-ai`` section
over it, objects merged key by key, lists replaced (``settings/src/index.ts:297-305``). The log
does not record the profile. DSH reads patch layers with js-yaml 4.2.0 and the settings document
with yaml 2.9.0, and both refuse a mapping that names a key twice.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_audit.errors import UsageError
from dsh_audit.session import open_session, route_renderer
from dsh_audit.testing import LogBuilder
from dsh_audit.wire._piai_home import PROFILE_HINT, home_route_files, load_home_routes
from dsh_audit.wire._piai_route_file import load_routes

from _cli import invoke
from test_piai_images import reply

URL = "http://127.0.0.1:18302/v1"


def route(high: str, *, model: str = "local-coder", key: str = "FAKE_KEY") -> str:
    """A patch layer declaring the hand-declared route local-openai, whose ``high`` effort is sent as ``high``."""
    return f"""\
- id: llm-pi-ai
  config:
    providers:
      local-openai:
        apiKeyEnv: {key}
        api: openai-completions
        baseURL: {URL}
        models:
          - id: {model}
            contextWindow: 1000000
            maxTokens: 8192
            reasoningEfforts:
              off:
              high: {high}
"""


def make_home(tmp_path: Path, *, profiles: dict[str, str | None] | None = None, home: str | None = None,
              settings: str | None = None) -> Path:
    """A DSH home: each profile (a folder with a package.json) with its patch layer (none when
    None), the home's patch layer and settings document when given."""
    root = tmp_path / "home"
    root.mkdir()
    for name, layer in (profiles or {}).items():
        (root / "profiles" / name).mkdir(parents=True)
        (root / "profiles" / name / "package.json").write_text("{}", encoding="utf-8")
        if layer is not None:
            (root / "profiles" / name / "cordis.patch.yml").write_text(layer, encoding="utf-8")
    (root / "profiles" / "node_modules").mkdir(parents=True, exist_ok=True)  # DSH's module fallback: no profile
    if home is not None:
        (root / "cordis.patch.yml").write_text(home, encoding="utf-8")
    if settings is not None:
        (root / "settings.yaml").write_text(settings, encoding="utf-8")
    return root


def efforts(routes: object) -> dict[str, object]:
    """model id -> its thinking level map, for every model of the routes."""
    return {model_id: model.thinking_level_map for (_, model_id), model in getattr(routes, "models").items()}


LEVELS = {"minimal": None, "low": None, "medium": None, "xhigh": None, "max": None}


def levels(high: str) -> dict[str, str | None]:
    return {**LEVELS, "high": high}


# --- which layers, in which order ---------------------------------------------------------------


def test_the_profile_layer_then_the_home_layer_replacing_config_whole(tmp_path: Path) -> None:
    home = make_home(tmp_path, profiles={"web": route("medium")})
    routes = load_home_routes(home, profile="web")
    assert routes is not None
    assert (efforts(routes), routes.layers, routes.source, routes.notes) == (
        {"local-coder": levels("medium")}, (str(home / "profiles" / "web" / "cordis.patch.yml"),),
        str(home / "profiles" / "web" / "cordis.patch.yml"), ())
    # the home layer outranks the profile's, and its config replaces the row's whole: no model of the profile's left
    (home / "cordis.patch.yml").write_text(route("high", model="other"), encoding="utf-8")
    routes = load_home_routes(home, profile="web")
    assert routes is not None
    assert (efforts(routes), routes.layers) == ({"other": levels("high")}, (str(home / "cordis.patch.yml"),))


def test_the_only_profile_of_a_home_is_the_one(tmp_path: Path) -> None:
    home = make_home(tmp_path, profiles={"tui": route("medium")})
    routes = load_home_routes(home)
    assert routes is not None and efforts(routes) == {"local-coder": levels("medium")}
    assert load_home_routes(home, profile="web") is None  # a profile named: its layer only (web has none)


def test_profiles_that_differ_are_not_guessed(tmp_path: Path) -> None:
    home = make_home(tmp_path, profiles={"tui": route("medium"), "web": None})
    routes = load_home_routes(home)
    assert routes is not None
    assert (dict(routes.models), routes.layers, routes.notes) == ({}, (), (
        f"the profiles of DSH home {home} (tui, web) compose different llm-pi-ai routes and the log does not "
        f"record which one ran: the home's own layers only are read; {PROFILE_HINT}",))
    # the same routes in every profile, or a home layer that sets them for all: nothing to guess
    (home / "profiles" / "web" / "cordis.patch.yml").write_text(route("medium"), encoding="utf-8")
    routes = load_home_routes(home)
    assert routes is not None and (efforts(routes), routes.notes) == ({"local-coder": levels("medium")}, ())
    (home / "profiles" / "web" / "cordis.patch.yml").write_text(route("low"), encoding="utf-8")
    (home / "cordis.patch.yml").write_text(route("high"), encoding="utf-8")
    routes = load_home_routes(home)
    assert routes is not None and (efforts(routes), routes.notes) == ({"local-coder": levels("high")}, ())


def test_a_home_without_layers_has_no_routes(tmp_path: Path) -> None:
    home = make_home(tmp_path, home="- id: settings\n  config: {}\n")
    assert load_home_routes(home) is None
    assert load_home_routes(tmp_path / "nowhere") is None
    assert home_route_files(home) == [str(home / "cordis.patch.yml")]


@pytest.mark.parametrize("name", ["", ".", "..", "node_modules", "a/b", "a\\b"])
def test_a_profile_name_dsh_refuses(name: str, tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        load_home_routes(make_home(tmp_path), profile=name)
    assert (caught.value.message, caught.value.hint) == (f"invalid DSH profile name {name!r}", PROFILE_HINT)


# --- how a patch applies ------------------------------------------------------------------------


def test_patches_apply_as_the_include_applies_them(tmp_path: Path) -> None:
    layer = route("medium") + (
        "- id: llm-pi-ai\n  name: '@someone/other-plugin'\n  config: {providers: {}}\n"  # another plugin's: skipped
        "- id: llm-pi-ai\n  disabled: false\n"  # names no config: the config stays
        "- id: nothing-here\n  config: {}\n")
    routes = load_home_routes(make_home(tmp_path, home=layer))
    assert routes is not None and efforts(routes) == {"local-coder": levels("medium")}


def test_an_inserted_row_is_the_row_later_patches_target(tmp_path: Path) -> None:
    layer = ("- insert:\n    - id: group\n      group: true\n      config:\n"
             "        - id: llm-pi-ai\n          name: '@deepseek-ai/dsh-llm-pi-ai'\n") + route("high")
    routes = load_home_routes(make_home(tmp_path, home=layer))
    assert routes is not None and efforts(routes) == {"local-coder": levels("high")}


# --- the settings document ----------------------------------------------------------------------


def test_the_settings_section_merges_over_the_layers(tmp_path: Path) -> None:
    settings = """\
theme: dark
llm-pi-ai:
  providers:
    local-openai:
      apiKeyEnv: OTHER_KEY
      models:
        - id: settings-model
          reasoningEfforts: {high: max}
"""
    home = make_home(tmp_path, profiles={"web": route("medium")}, settings=settings)
    routes = load_home_routes(home)
    assert routes is not None
    # the profile's api and baseURL stay (objects merge); its models list is replaced (lists do not)
    model = routes.models[("local-openai", "settings-model")]
    assert (list(routes.models), model.api, model.base_url, model.thinking_level_map) == (
        [("local-openai", "settings-model")], "openai-completions", URL, {**LEVELS, "off": None, "high": "max"})
    assert routes.layers == (str(home / "profiles" / "web" / "cordis.patch.yml"), str(home / "settings.yaml"))
    assert home_route_files(home) == [str(home / "profiles" / "web" / "cordis.patch.yml"), str(home / "settings.yaml")]


def test_a_settings_section_alone_declares_routes(tmp_path: Path) -> None:
    settings = "llm-pi-ai:\n" + "".join(f"  {line}\n" for line in route("high").splitlines()[2:])
    home = make_home(tmp_path, settings=settings)
    routes = load_home_routes(home)
    assert routes is not None and (efforts(routes), routes.layers) == (
        {"local-coder": levels("high")}, (str(home / "settings.yaml"),))


def test_the_settings_row_places_or_disables_the_document(tmp_path: Path) -> None:
    other = tmp_path / "elsewhere.yaml"
    other.write_text("llm-pi-ai:\n  providers:\n    local-openai:\n      models: [{id: moved}]\n", encoding="utf-8")
    home = make_home(tmp_path, home=route("medium") + f"- id: settings\n  config: {{path: '{other}'}}\n",
                     settings="llm-pi-ai: {providers: {local-openai: {models: [{id: unused}]}}}\n")
    routes = load_home_routes(home)
    assert routes is not None and list(routes.models) == [("local-openai", "moved")]
    (home / "cordis.patch.yml").write_text(route("medium") + "- id: settings\n  disabled: true\n", encoding="utf-8")
    routes = load_home_routes(home)
    assert routes is not None and list(routes.models) == [("local-openai", "local-coder")]
    (home / "cordis.patch.yml").write_text(route("medium") + "- id: settings\n  config: {path: !!js x()}\n",
                                           encoding="utf-8")
    routes = load_home_routes(home)
    assert routes is not None and routes.notes == (
        f"DSH's settings document is placed by the settings row's config.path !!js 'x()' ({home / 'cordis.patch.yml'})"
        ", which does not say where from here: its llm-pi-ai section is not read",)


def test_a_json_settings_document_named_by_the_settings_row(tmp_path: Path) -> None:
    other = tmp_path / "settings.json"  # JSON.parse keeps a key's last value
    other.write_text('{"llm-pi-ai": {"providers": {"local-openai": {"models": [{"id": "first"}]}}},'
                     ' "llm-pi-ai": {"providers": {"local-openai": {"models": [{"id": "last"}]}}}}', encoding="utf-8")
    layer = route("medium") + f"- id: settings\n  config: {{path: '{other}'}}\n- insert: [{{id: [1]}}, 2]\n"
    routes = load_home_routes(make_home(tmp_path, home=layer))
    assert routes is not None and (list(routes.models), routes.layers) == (
        [("local-openai", "last")], (str(tmp_path / "home" / "cordis.patch.yml"), str(other)))
    other.write_text("[1]", encoding="utf-8")
    with pytest.raises(UsageError) as caught:
        load_home_routes(tmp_path / "home")
    assert (caught.value.message, caught.value.path) == ("settings file must be a map of namespace sections",
                                                         str(other))


# --- a session rendered with the composed routes ------------------------------------------------


def _layers_log(home: Path) -> Path:
    """A one-turn session on the hand-declared route local-openai, effort high, in ``home``."""
    b = LogBuilder(session_id="layers", provider="local-openai", model="local-coder", system="Sys.", tools=[],
                   reasoning_effort="high", max_tokens=1000)
    with b.turn("Hi."):
        with b.step():
            reply(b, "local-openai", "local-coder", "openai-completions", "Hello.")
    return b.write_jsonl(home / "sessions" / "--proj--" / "layers" / "session.jsonl")


def test_a_request_renders_with_the_profile_it_ran_under(tmp_path: Path) -> None:
    home = make_home(tmp_path, profiles={"tui": route("medium"), "web": route("high")})
    session = open_session(_layers_log(home))
    body = ('{"model":"local-coder","messages":[{"role":"developer","content":"Sys."},{"role":"user","content":'
            '"Hi."}],"stream":true,"stream_options":{"include_usage":true},"store":false,'
            '"max_completion_tokens":1000,"reasoning_effort":"%s"}')
    for profile, sent in (("tui", "medium"), ("web", "high")):
        session.use_routes(load_home_routes(home, profile=profile))
        assert route_renderer([session])(session.requests[0], {}) == (body % sent).encode()


# --- DSH's YAML readers -------------------------------------------------------------------------


def test_a_route_file_naming_a_key_twice_is_refused(tmp_path: Path, monkeypatch, capsys) -> None:
    routes = tmp_path / "routes.yml"
    routes.write_text(route("high").replace("        api: openai-completions\n",
                                            "        api: openai-completions\n        api: anthropic-messages\n"),
                      encoding="utf-8")
    log = tmp_path / "s.jsonl"
    LogBuilder(session_id="s").write_jsonl(log)
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "0", "--routes", str(routes))
    assert (code, out) == (2, "")
    assert err == [f"error: {routes}: route file is not valid YAML at line 7: duplicated mapping key 'api' (DSH's "
                   "YAML reader refuses it) (hint: give --routes a YAML file with DSH's llm-pi-ai route "
                   "configuration)"]


def test_a_key_is_named_twice_as_each_of_dshs_readers_names_keys(tmp_path: Path) -> None:
    # js-yaml names a key by String(key): 1 and "1" are one key in a patch layer...
    home = make_home(tmp_path, home=route("high") + "- id: x\n  config: {1: a, '1': b}\n")
    with pytest.raises(UsageError) as caught:
        load_home_routes(home)
    assert (caught.value.message, caught.value.path) == (
        "route file is not valid YAML at line 16: duplicated mapping key '1' (DSH's YAML reader refuses it)",
        str(home / "cordis.patch.yml"))
    # ... the yaml package by value: two keys in the settings document, where 1 and 1.0 are one
    (home / "cordis.patch.yml").write_text(route("high"), encoding="utf-8")
    (home / "settings.yaml").write_text("other: {1: a, '1': b}\n", encoding="utf-8")
    assert load_home_routes(home) is not None
    (home / "settings.yaml").write_text("other:\n  1: a\n  1.0: b\n", encoding="utf-8")
    with pytest.raises(UsageError) as caught:
        load_home_routes(home)
    assert (caught.value.message, caught.value.path) == (
        "settings file is not valid YAML at line 3: duplicated mapping key 1 (DSH's YAML reader refuses it)",
        str(home / "settings.yaml"))


def test_merge_keys_and_dates_are_read_as_dsh_reads_them(tmp_path: Path) -> None:
    """js-yaml's JSON schema has no ``<<`` merge and no timestamps: ``<<`` is a key like another
    (so a route does not take what it names) and a date is a string."""
    routes = tmp_path / "routes.yml"
    routes.write_text("providers:\n  local:\n    api: openai-completions\n    baseURL: 'http://x/v1'\n"
                      "    models: [{id: 2024-01-01}]\n", encoding="utf-8")
    assert list(load_routes(routes).models) == [("local", "2024-01-01")]
    routes.write_text("defaults: &d {api: openai-completions, baseURL: 'http://x/v1'}\nproviders:\n  local:\n"
                      "    <<: *d\n    models: [{id: m}]\n", encoding="utf-8")
    with pytest.raises(UsageError) as caught:
        load_routes(routes)
    assert caught.value.message == ("route file: providers.local.models[0]: needs an api: the catalog does not "
                                    "describe it, so set the route's api")


def test_render_takes_the_profile_from_the_command_line(tmp_path: Path, monkeypatch, capsys) -> None:
    """``--profile NAME`` (every command with ``--routes``) names the profile the log cannot."""
    monkeypatch.delenv("DSH_AUDIT_PROFILE", raising=False)
    log = _layers_log(make_home(tmp_path, profiles={"tui": route("medium"), "web": route("high")}))
    for profile, sent in (("tui", "medium"), ("web", "high")):
        code, out, err = invoke(monkeypatch, capsys, "render", str(log), "0", "--profile", profile)
        assert (code, out.endswith(f'"reasoning_effort":"{sent}"}}')) == (0, True), err
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "0")
    assert code == 2 and err[-1].startswith("error: ") and "--profile NAME" in " ".join(err)
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "0", "--profile", "../tui")
    assert (code, out) == (2, "") and "invalid DSH profile name '../tui'" in err[-1]
    assert "DSH_AUDIT_PROFILE" not in __import__("os").environ  # set for the command only


def test_a_profile_that_does_not_exist_is_refused_as_dsh_refuses_it(tmp_path: Path) -> None:
    """``--profile wrok`` for ``work``: DSH says the profile does not exist (app-boot profile.ts);
    dsh-audit read the home's layers alone and said nothing. A shipped template (web, headless) is
    created by DSH on first use, so naming one that is absent is no mistake."""
    home = make_home(tmp_path, profiles={"work": route("medium"), "other": None})
    with pytest.raises(UsageError) as caught:
        load_home_routes(home, profile="wrok")
    assert (caught.value.message, caught.value.path, caught.value.hint) == (
        "DSH profile 'wrok' does not exist in this DSH home", str(home), "its profiles: other, work")
    assert load_home_routes(home, profile="headless") is None
    assert load_home_routes(home, profile="work") is not None
