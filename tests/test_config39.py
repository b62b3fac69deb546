"""Session 39, fuzz round 22: configuration that is wrong says so, where, and how to fix it.

- A policy value of the wrong kind (``ignore = "DSH100"``, ``min-cache-hit-ratio = nan``,
  ``capture-fail = 3``, ``[tool] dsh-audit = 5``) is one error naming the line that writes it
  (when exactly one line does: :func:`dsh_audit._pyproject.key_line`), with a hint of the form.
- A misspelt tool table (``[tool.dsh_audit.prices...]``) is refused by every command that reads
  ``pyproject.toml`` (``usage``, ``sessions``, ``cache`` too), not only by ``check``: its prices
  were dropped in silence.
- A price file's provider whose rates a request through it is not priced from, asked as a quote
  asks it (a model another table prices for it, an earlier or a later layer's; ``deepseek-official``,
  which the price table calls ``deepseek``, read without that table's peak window; a case variant;
  one with no model) is a warning of the :class:`~dsh_audit.cache.PriceBook`
  (``PriceBook.warnings``), naming the provider and the table's providers; ``index`` and ``watch``
  print them too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli import invoke

from dsh_audit._pyproject import key_line
from dsh_audit.cache import LedgerEntry, Tokens, UsageRow, load_prices
from dsh_audit.cli._usage import _lacking_caption

ROOT = Path(__file__).resolve().parent.parent
SESSIONS = str(ROOT / "sample_logs" / "sessions")
_POLICY = "see the Policy section of docs/ci.md"
_TABLE = f"[tool.dsh-audit] must be a table (hint: write the policy keys under a [tool.dsh-audit] header; {_POLICY})"
_RATIO = ("policy key 'min-cache-hit-ratio' must be a number from 0 to 1 (hint: write min-cache-hit-ratio = 0.5, "
          f"say (0 turns the rule off); {_POLICY})")
_MISSPELT = ("[tool.dsh_audit] is not read: dsh-audit's table is [tool.dsh-audit] (hint: rename the table to "
             "[tool.dsh-audit])")
_RATE = {"cache_miss": 100, "cache_read": 1, "output": 100}


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], text: str,
         *args: str) -> tuple[int, str, list[str]]:
    """``dsh-audit ARGS`` in ``tmp_path``, whose pyproject.toml holds ``text``."""
    (tmp_path / "pyproject.toml").write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return invoke(monkeypatch, capsys, *args)


# -- 1: a policy value's error names its line and the form -----------------------------------------------

@pytest.mark.parametrize(("text", "error"), [
    ('[tool.dsh-audit]\nignore = "DSH100"\n',
     f":2: policy key 'ignore' must be a list of strings (hint: write ignore = [\"...\"]; {_POLICY})"),
    ("# min-cache-hit-ratio = 0.5\n[tool.dsh-audit]\nrequire-capture = false\nmin-cache-hit-ratio = nan\n",
     f":4: {_RATIO}"),
    ("[tool.dsh-audit]\nmin-cache-hit-ratio = true\n", f":2: {_RATIO}"),
    ("[tool.dsh-audit]\ncapture-fail = 3\n",
     f":2: policy key 'capture-fail' must be a list of strings (hint: write capture-fail = [\"...\"]; {_POLICY})"),
    ('[tool.dsh-audit]\ncapture-fail = ["different", "odd"]\n',
     ":2: policy key 'capture-fail': unknown value 'odd' (hint: allowed: different, equivalent, unmatched, "
     f"unexplained, unrendered; {_POLICY})"),
    ("[tool.dsh-audit]\nrequire-capture = 1\n", ":2: policy key 'require-capture' must be true or false (hint: "
                                                f"write require-capture = true or require-capture = false; {_POLICY})"),
    ('[tool.dsh-audit]\nadapter = "gemini"\n', ":2: policy key 'adapter' must be one of auto, deepseek, anthropic, "
                                               f"openai, responses (hint: write adapter = \"auto\", say; {_POLICY})"),
    ("[tool]\ndsh-audit = 5\n", f":2: {_TABLE}"),
    ("[tool]\r\ndsh-audit = 5\r\n", f":2: {_TABLE}"),  # CRLF line ends (a file saved on Windows)
    ('[tool.dsh-audit]\r\n\r\nignore = "DSH100"\r\n',
     f":3: policy key 'ignore' must be a list of strings (hint: write ignore = [\"...\"]; {_POLICY})"),
    ("[tool]\ndsh-audit = [1]\n", f":2: {_TABLE}"),
    ('[[tool.dsh-audit]]\nadapter = "openai"\n', f": {_TABLE}"),  # an array of tables: no one line writes it
    # a multi-line value has no one line: the error names the file alone
    ('[tool.dsh-audit]\nignore = """\nDSH100"""\n',
     f": policy key 'ignore' must be a list of strings (hint: write ignore = [\"...\"]; {_POLICY})"),
])
def test_a_policy_value_error_names_its_line_and_the_form(text: str, error: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(tmp_path, monkeypatch, capsys, text, "check", SESSIONS) == (
        2, "", [f"error: {tmp_path / 'pyproject.toml'}{error}"])


def test_a_policy_file_value_error_names_its_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    policy = tmp_path / "dsh-audit.toml"
    policy.write_text("require-capture = true\n\nfail-on-refusal = \"yes\"\n", encoding="utf-8")
    assert invoke(monkeypatch, capsys, "check", SESSIONS, "--policy", str(policy)) == (2, "", [
        f"error: {policy}:3: policy key 'fail-on-refusal' must be true or false (hint: write fail-on-refusal = true "
        f"or fail-on-refusal = false; {_POLICY})"])


@pytest.mark.parametrize(("text", "table", "key", "value", "line"), [
    ('[tool.dsh-audit]\nignore = "x"\n', ("tool", "dsh-audit"), "ignore", "x", 2),
    ('ignore = "x"\n[tool.dsh-audit]\nignore = "x"\n', (), "ignore", "x", 1),
    ('ignore = "x"\n[tool.dsh-audit]\nignore = "x"\n', ("tool", "dsh-audit"), "ignore", "x", 3),
    ('[tool.dsh-audit]\n  "ignore" = "x"  # why\n', ("tool", "dsh-audit"), "ignore", "x", 2),
    ('[tool.dsh-audit]\nignore = "y"\n', ("tool", "dsh-audit"), "ignore", "x", None),  # another value
    ('[tool.other]\nignore = "x"\n', ("tool", "dsh-audit"), "ignore", "x", None),  # another table
    ('[tool]\ndsh-audit.ignore = "x"\n', ("tool", "dsh-audit"), "ignore", "x", None),  # a dotted key
    ('[tool.dsh-audit]\nignore = "x"\n[tool.dsh-audit.check]\nignore = "x"\n', ("tool", "dsh-audit"), "ignore",
     "x", 2),
    ('[tool.dsh-audit]\na = """\nignore = "x"\n"""\nignore = "x"\n', ("tool", "dsh-audit"), "ignore", "x", None),
    ('[tool.dsh-audit]\nignore = [\n  "x",\n]\n', ("tool", "dsh-audit"), "ignore", ["x"], None),
    ('[tool.dsh-audit]\nignore = {a = 1}\n', ("tool", "dsh-audit"), "ignore", {"a": 1}, 2),
    ('[tool]\nother = 1\n[tool.dsh_audit.prices]\n[tool.dsh_audit.check]\n', ("tool", "dsh_audit"), None, None, 3),
    ('[tool]\ndsh_audit.x = 1\n[tool.dsh_audit.prices]\n', ("tool", "dsh_audit"), None, None, None),
    # CRLF line ends count as TOML counts them; U+2028 or U+0085 in a comment ends no line
    ('[tool.dsh-audit]\r\n# a\r\nignore = "x"\r\n', ("tool", "dsh-audit"), "ignore", "x", 3),
    ('[tool]\r\n[tool.dsh_audit.prices]  # x\r\n', ("tool", "dsh_audit"), None, None, 2),
    ('# a\u2028b\x85c\r\n[tool.dsh-audit]\r\nignore = "x"\r\n', ("tool", "dsh-audit"), "ignore", "x", 3),
])
def test_key_line_names_one_line_exactly_or_none(text: str, table: tuple[str, ...], key: str | None, value: object,
                                                 line: int | None, tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(text, encoding="utf-8")
    assert key_line(str(path), table, key, value) == line
    assert key_line(str(tmp_path / "missing.toml"), table, key, value) is None


# -- 2: a misspelt tool table is refused by every command that reads pyproject.toml -------------------------

_PRICES = ("[tool.dsh_audit.prices.providers.deepseek.models.deepseek-v4-flash]\n"
           "cache_miss = 100\ncache_read = 1\noutput = 100\n")


@pytest.mark.parametrize("args", [
    ("usage", SESSIONS), ("usage", SESSIONS, "--openai-zdr"), ("sessions", SESSIONS), ("cache", SESSIONS),
    ("check", SESSIONS), ("check", SESSIONS, "--no-openai-zdr")])
def test_a_misspelt_tool_table_is_refused_by_every_command(args: tuple[str, ...], tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(tmp_path, monkeypatch, capsys, _PRICES, *args) == (
        2, "", [f"error: {tmp_path / 'pyproject.toml'}:1: {_MISSPELT}"])


@pytest.mark.parametrize("command", ["usage", "sessions", "cache"])
def test_a_tool_key_that_is_no_table_is_refused_by_every_command(command: str, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(tmp_path, monkeypatch, capsys, "[tool]\ndsh-audit = 5\n", command, SESSIONS, "--openai-zdr") == (
        2, "", [f"error: {tmp_path / 'pyproject.toml'}:2: {_TABLE}"])


def test_the_library_refuses_a_misspelt_table_too(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(_PRICES, encoding="utf-8")
    with pytest.raises(Exception) as caught:
        load_prices(search_from=tmp_path)
    assert str(caught.value) == f"{tmp_path / 'pyproject.toml'}:1: {_MISSPELT}"


def test_a_right_table_still_prices(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(_PRICES.replace("dsh_audit", "dsh-audit"), encoding="utf-8")
    quote = load_prices(search_from=tmp_path).quote("deepseek-official", "deepseek-v4-flash", 1796209398.0)
    assert not isinstance(quote, str)
    assert (quote.rates.cache_miss, quote.window) == (100.0, "off-peak")  # no off-peak rate: the rate all day


# -- 3: a price file's provider that prices no request is a warning ------------------------------------------

_KNOWN = "the price table's providers are anthropic, deepseek, openai"


def _warnings(tmp_path: Path, providers: dict[str, object]) -> list[str]:
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"providers": providers}), encoding="utf-8")
    return [text.replace(str(path), "P") for text in load_prices(path, search_from=tmp_path).warnings]


@pytest.mark.parametrize(("provider", "models"), [
    ("deepseek-official", {"deepseek-v4-flash": _RATE}), ("deepseek-official", {}),
    ("DeepSeek-Official", {"deepseek-v9": _RATE}), ("DEEPSEEK", {"deepseek-v9": _RATE})])
def test_a_provider_the_price_table_calls_otherwise_is_a_warning(provider: str, models: dict[str, object],
                                                                 tmp_path: Path) -> None:
    assert _warnings(tmp_path, {provider: {"models": models}}) == [
        f"P: price table key providers.{provider}: no provider table is named so: the price table calls it "
        f"'deepseek' (hint: write its models and windows under providers.deepseek; {_KNOWN})"]


def test_a_family_provider_id_of_new_models_is_read_without_the_family_window(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"providers": {"deepseek-official": {"models": {"deepseek-v9": _RATE}}}}),
                    encoding="utf-8")
    book = load_prices(path, search_from=tmp_path)
    quote = book.quote("deepseek-official", "deepseek-v9", 1796209398.0)  # a weekday's peak hour, +08:00
    assert not isinstance(quote, str)
    assert (quote.provider, quote.window, quote.rates.cache_miss) == ("deepseek-official", "standard", 100.0)
    assert [text.replace(str(path), "P") for text in book.warnings] == [
        "P: price table key providers.deepseek-official: its rates are read without the peak window of the table "
        "the price table calls 'deepseek' (hint: write its models under providers.deepseek to price them in that "
        f"window; {_KNOWN})"]


_ELSEWHERE = ("(hint: a request is priced from its provider's family's table, then from the first other table by name "
              f"that holds the model: give the rates there, or remove them here; {_KNOWN})")


def test_a_new_provider_of_known_models_is_a_warning(tmp_path: Path) -> None:
    models = {name: _RATE for name in ("deepseek-v4-flash", "gpt-5.4", "deepseek-v4-pro", "claude-sonnet-4-5", "m",
                                       "deepseek-v4-flash-20260101", "deepseek-chat")}
    assert _warnings(tmp_path, {"nosuchprovider": {"models": models}}) == [
        "P: price table key providers.nosuchprovider: a request through provider nosuchprovider is priced from "
        "anthropic for \"claude-sonnet-4-5\", from deepseek for \"deepseek-chat\", \"deepseek-v4-flash\", "
        "\"deepseek-v4-flash-20260101\" and 1 more, from openai for \"gpt-5.4\", never from this table " + _ELSEWHERE]


def test_the_warning_asks_the_lookup_a_quote_makes(tmp_path: Path) -> None:
    # a table named before the family's own in name order is read for other providers, never for its own
    assert _warnings(tmp_path, {"aaa": {"models": {"gpt-5.4": _RATE, "claude-sonnet-4-5-20250929": _RATE}}}) == [
        "P: price table key providers.aaa: a request through provider aaa is priced from anthropic for "
        "\"claude-sonnet-4-5-20250929\", from openai for \"gpt-5.4\", never from this table " + _ELSEWHERE]
    book = load_prices(tmp_path / "p.json", search_from=tmp_path)
    quotes = [book.quote(provider, model, 1796209398.0) for provider, model in (
        ("aaa", "gpt-5.4"), ("deepseek-official", "gpt-5.4"), ("aaa", "claude-sonnet-4-5-20250929"))]
    assert [(q.provider, q.billed_as) for q in quotes if not isinstance(q, str)] == [
        ("openai", "gpt-5.4"), ("aaa", "gpt-5.4"), ("anthropic", "claude-sonnet-4-5")]

@pytest.mark.parametrize("provider", ["nosuchprovider", "deepseek", "a\x1bb"])
def test_a_provider_with_no_model_is_a_warning(provider: str, tmp_path: Path) -> None:
    key = "providers." + (provider if provider.isascii() and provider.isalnum() else json.dumps(provider))
    assert _warnings(tmp_path, {provider: {"models": {}}}) == [
        f"P: price table key {key}: holds no model and no window: it prices nothing "
        f"(hint: give it its models, or remove it; {_KNOWN})"]


@pytest.mark.parametrize("providers", [
    {"local-openai": {"models": {"local-coder": _RATE}}},  # a gateway's own table (docs/cache-accounting.md)
    {"deepseek": {"models": {"deepseek-v4-flash": _RATE, "deepseek-v9": _RATE}}},
    {"openai-compatible": {"models": {"local-coder": _RATE}}},  # the openai table has no window to miss
    {"deepseek": {"windows": []}},
])
def test_a_provider_whose_rates_are_read_is_no_warning(providers: dict[str, object], tmp_path: Path) -> None:
    assert _warnings(tmp_path, providers) == []


def test_the_warning_quotes_a_provider_and_model_with_a_control_character(tmp_path: Path) -> None:
    # "0\x1b" sorts before "a\x1bb": a request through "a\x1bb" for the model both hold is priced from it
    assert _warnings(tmp_path, {"0\x1b": {"models": {"m\x1b[2J": _RATE}},
                                "a\x1bb": {"models": {"gpt-5.4": _RATE, "m\x1b[2J": _RATE}}}) == [
        'P: price table key providers."a\\u001bb": a request through provider "a\\u001bb" is priced from "0\\u001b" '
        "for \"m\\u001b[2J\", from openai for \"gpt-5.4\", never from this table " + _ELSEWHERE]


def test_the_warning_names_the_pyproject_table_and_the_tables_before_it(tmp_path: Path) -> None:
    # local-coder through local-openai (the deepseek rule: no table of it holds local-coder) is then
    # priced from the first table by name that does: the later file's gateway, whose rate is read
    (tmp_path / "pyproject.toml").write_text(
        '[tool.dsh-audit.prices.providers.local-openai.models.local-coder]\n'
        'cache_miss = 1\ncache_read = 0.1\noutput = 2\n'
        '[tool.dsh-audit.prices.providers.deepseek-official.models.deepseek-v4-pro]\n'
        'cache_miss = 1\ncache_read = 0.1\noutput = 2\n', encoding="utf-8")
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"providers": {"gateway": {"models": {"local-coder": _RATE}}}}), encoding="utf-8")
    book = load_prices(path, search_from=tmp_path)
    assert book.warnings == (
        f"{tmp_path / 'pyproject.toml'} [tool.dsh-audit.prices]: price table key providers.local-openai: a request "
        "through provider local-openai is priced from gateway for \"local-coder\", never from this table "
        + _ELSEWHERE,
        f"{tmp_path / 'pyproject.toml'} [tool.dsh-audit.prices]: price table key providers.deepseek-official: no "
        "provider table is named so: the price table calls it 'deepseek' (hint: write its models and windows under "
        f"providers.deepseek; {_KNOWN})")
    quotes = [book.quote(provider, "local-coder", 1796209398.0) for provider in (
        "gateway", "local-openai", "openrouter", None)]
    assert [(q.provider, q.rates.cache_miss) for q in quotes if not isinstance(q, str)] == [("gateway", 100.0)] * 4


@pytest.mark.parametrize("command", ["usage", "sessions", "cache", "check"])
def test_a_price_file_provider_that_prices_nothing_is_one_warning_line(command: str, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"providers": {"deepseek-official": {"models": {"deepseek-v4-flash": _RATE}}}}),
                    encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, _, err = invoke(monkeypatch, capsys, command, SESSIONS, "--prices", str(path))
    assert code == 0
    assert [line for line in err if "p.json" in line] == [
        f"warning: {path}: price table key providers.deepseek-official: no provider table is named so: the price "
        f"table calls it 'deepseek' (hint: write its models and windows under providers.deepseek; {_KNOWN})"]


@pytest.mark.parametrize("args", [("index", SESSIONS, "--db", "i.sqlite"), ("watch", SESSIONS, "--exit-after", "0.1")])
def test_index_and_watch_say_a_price_file_warning_too(args: tuple[str, ...], tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"providers": {"gateway": {"models": {"gpt-5.4": _RATE}}}}), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, _, err = invoke(monkeypatch, capsys, *args, "--prices", str(path))
    assert code == 0
    assert [line for line in err if line.startswith("warning:")] == [
        f"warning: {path}: price table key providers.gateway: a request through provider gateway is priced from "
        "openai for \"gpt-5.4\", never from this table " + _ELSEWHERE]


# -- 4: the usage caption counts each request that logged usage without some count once -------------------

def test_the_usage_caption_counts_each_request_lacking_a_count_once() -> None:
    lacking = [("inputTokens",)] * 2 + [("outputTokens",)] * 3 + [("inputTokens", "cacheReadTokens")]
    total = UsageRow("total")
    for index, unlogged in enumerate([*lacking, (), ()]):
        total.add(LedgerEntry(index, "main", 1, 1, 0, 1796209398.0, "deepseek-official", "deepseek-v4-flash",
                              "standard", Tokens(cache_miss=10, output=5), None, unlogged=unlogged))
    total.add(LedgerEntry(9, "main", 1, 1, 0, None, "deepseek-official", "m", "standard", None, None,
                          unlogged=("inputTokens",)))  # no usage logged: counted apart (usage_unknown)
    assert (total.requests, total.usage_partial, total.tokens_unknown, total.usage_unknown) == (
        9, 6, {"cache_miss": 3, "cache_read": 1, "output": 3}, 1)
    assert _lacking_caption(total) == ("; cache miss, cache read, output: ≥N sums the requests that logged a count, "
                                       "? when none did (6 request(s) logged none: unpriced)")
