"""Hostile input, round 3: the files and values beside the logs (route files, price tables,
policies), found by fuzzing every command with them (issue 15).

Each case is the smallest input that showed a defect: exact exit codes and whole error lines,
never a traceback, a hang or unbounded work.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

import pytest

from dsh_audit import _config_read
from dsh_audit.cache import usd_cost
from dsh_audit.errors import UsageError
from dsh_audit.wire._piai_yaml import _parse_yaml
from _cli import chat_log, invoke, short_salt

ROUTE_HINT = "(hint: give --routes a YAML file with DSH's llm-pi-ai route configuration)"
SHAPE_HINT = "(hint: see DSH's llm-pi-ai configuration: providers.<id>.api, baseURL, models)"
C3 = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "live-pi" / "c3-openai-compat"
SHAPE = "the Price files section of docs/cache-accounting.md gives the shape"
PRICE_HINT = f"fix this key in the --prices file; {SHAPE}"


def dsh_log(path: Path) -> Path:
    return chat_log(path, "session-hostile-3")


def route(provider: str = "", model: str = "", *, api: str = "openai-completions",
          base_url: str = "http://127.0.0.1:1/v1") -> str:
    """A one-route llm-pi-ai row with extra provider and model lines (already indented)."""
    return ("- id: llm-pi-ai\n  config:\n    providers:\n      local-openai:\n"
            f"        api: {api}\n        baseURL: {base_url}\n{provider}"
            f"        models:\n          - id: local-coder\n{model}")


# -- route files (--routes) -----------------------------------------------------------------------

#: A route file nested past any recursion limit (the first case below).
NESTED = "a: " + "[" * 50_000 + "]" * 50_000 + "\n"

ROUTE_ERRORS = [
    # nesting past Python's recursion limit: RecursionError traceback
    (NESTED, f"route file nests mappings or lists too deeply {ROUTE_HINT}"),
    # an integer past Python's 4300-digit limit: ValueError traceback; then "not valid YAML"; now as
    # js-yaml reads it (a number past a double is a string, Number.isFinite), so DSH's schema refuses it
    (route(model="            contextWindow: " + "9" * 5000 + "\n"),
     f"route file: providers.local-openai.models[0].contextWindow: must be a positive integer {SHAPE_HINT}"),
    # api not a string: TypeError (unhashable) traceback
    (route(api="[1]"), "route file: providers.local-openai.api: unknown pi-ai api [1] (known: anthropic-messages, "
     "azure-openai-responses, bedrock-converse-stream, google-generative-ai, google-vertex, mistral-conversations, "
     f"openai-codex-responses, openai-completions, openai-responses) {SHAPE_HINT}"),
    # compat not a mapping, on the route and on a model: TypeError traceback
    (route(provider="        compat: 3\n"),
     f"route file: providers.local-openai.compat: must be a mapping of pi-ai compat switch names to values {SHAPE_HINT}"),
    (route(model="            compat: [1]\n"),
     "route file: providers.local-openai.models[0].compat: must be a mapping of pi-ai compat switch names to values "
     f"{SHAPE_HINT}"),
    # input not a list of strings: TypeError traceback (and a string became a tuple of letters)
    (route(model="            input: 5\n"),
     f"route file: providers.local-openai.models[0].input: must be a list of input kinds (text, image) {SHAPE_HINT}"),
    (route(model="            input: text\n"),
     f"route file: providers.local-openai.models[0].input: must be a list of input kinds (text, image) {SHAPE_HINT}"),
    # a modelOverrides entry that is not a mapping: TypeError traceback
    ("providers:\n  anthropic:\n    modelOverrides: {claude-sonnet-4-5: x}\n",
     f"route file: providers.anthropic.modelOverrides.claude-sonnet-4-5: must be a mapping of model fields {SHAPE_HINT}"),
    # a baseURL urlsplit refuses: ValueError traceback when rendering
    (route(base_url='"http://[::1/v1"'),
     "route file: providers.local-openai.baseURL: is not a URL (its host has a [ without a ] or a ] without a [) "
     f"{SHAPE_HINT}"),
    (route(base_url='"http://127.0.0.1/\\r\\nX: 1"'),
     f"route file: providers.local-openai.baseURL: is not a URL (it holds a control character) {SHAPE_HINT}"),
    # header values with CR/LF, names that are not tokens: DSH takes them, so each request of the route is
    # refused instead (tests/test_piai_fetch_headers.py), never sent or shown as extra header lines
    # a route file that is not UTF-8: the codec's own message before; now the byte offset
    (b"providers: \xff\n", f"route file is not UTF-8 text (byte 11) {ROUTE_HINT}"),
]


@contextmanager
def _frames_left(count: int) -> Iterator[None]:
    """The recursion limit set ``count`` frames above the caller's depth, then put back. PyYAML's
    scanner checks each token against every open flow level (quadratic in the depth it reaches):
    under Python's limit of 1000 frames the nesting case reached some 490 levels and took a second
    of CPU to fail, the same whatever the file's size; reaching fewer levels, it fails as it did,
    by a RecursionError, in a tenth of that."""
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + count)
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


@pytest.mark.parametrize(("text", "message"), ROUTE_ERRORS)
def test_bad_route_file_is_one_error_line(tmp_path, monkeypatch, capsys, text, message):
    log = dsh_log(tmp_path / "session.jsonl")
    routes = tmp_path / "routes.yml"
    routes.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    with _frames_left(300) if text is NESTED else nullcontext():
        assert invoke(monkeypatch, capsys, "render", str(log), "0", "--routes", str(routes)) == \
            (2, "", [f"error: {routes}: {message}"])


@pytest.mark.parametrize("command", [["render", "0"], ["cache"], ["check"]])
def test_route_file_fifo_is_refused_not_read(tmp_path, monkeypatch, capsys, command):
    """A FIFO given as --routes blocked the run forever (no writer)."""
    log = dsh_log(tmp_path / "session.jsonl")
    fifo = tmp_path / "routes.yml"
    os.mkfifo(fifo)
    code, out, err = invoke(monkeypatch, capsys, command[0], str(log), *command[1:], "--routes", str(fifo))
    assert (code, err) == (2, [f"error: {fifo}: is a FIFO, not a route file (hint: only regular files are read)"])


def test_route_file_over_1_mib_is_refused_before_parsing(tmp_path, monkeypatch, capsys):
    """PyYAML reads about 1 MiB/s: a 60 MiB comment (or 200,000 model entries) ran past 20 s."""
    log = dsh_log(tmp_path / "session.jsonl")
    routes = tmp_path / "routes.yml"
    routes.write_text("# " + "x" * (1 << 20) + "\n" + route(), encoding="utf-8")
    assert invoke(monkeypatch, capsys, "render", str(log), "0", "--routes", str(routes)) == \
        (2, "", [f"error: {routes}: route file is larger than 1 MiB; a route configuration is a few KiB {ROUTE_HINT}"])


def test_a_route_file_whose_read_fails_is_named_the_route_file(tmp_path, monkeypatch):
    """The failed read is worded from its parts (the system's words), "the" before the file."""
    def failing(path, *, what):
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    routes = tmp_path / "routes.yml"
    routes.write_text(route(), encoding="utf-8")
    monkeypatch.setattr(_config_read, "open_regular", failing)
    with pytest.raises(UsageError) as caught:
        _parse_yaml(str(routes), "give --routes a route file", what="route file", dialect="js-yaml")
    assert str(caught.value) == (f"{routes}: cannot read the route file: {os.strerror(errno.EIO)} "
                                 "(hint: give --routes a route file)")


def test_a_valid_route_file_with_headers_compat_and_input_still_renders(tmp_path, monkeypatch, capsys):
    """The new checks refuse only what pi-ai would: token names, plain values, mapping compat."""
    routes = tmp_path / "routes.yml"
    routes.write_text((C3 / "inputs" / "pi-ai-routes.patch.yml").read_text(encoding="utf-8").replace(
        "        api: openai-completions\n",
        "        api: openai-completions\n        headers: {X-Team: blue}\n        compat: {supportsStore: false}\n"
    ).replace("            maxTokens: 8192\n", "            maxTokens: 8192\n            input: [text]\n"),
        encoding="utf-8")
    log = next((C3 / "session-logs").glob("*.jsonl"))
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "0", "--routes", str(routes), "--headers")
    assert (code, err) == (0, [])
    assert out.split("\n")[:1] == ["POST /v1/chat/completions"]
    assert "\nx-team: blue\n" in out  # the SDKs lower-case every header name (pi-ai oracle)


# -- price tables (--prices, [tool.dsh-audit.prices]) ---------------------------------------------

def _rate(extra: str = "", cache_miss: str = "1") -> str:
    return ('{"providers": {"deepseek": {"models": {"deepseek-v4-flash": {"cache_miss": ' + cache_miss
            + ', "cache_read": 0.03, "output": 1.2' + extra + "}}}}}")


def _window(window: str) -> str:
    return '{"providers": {"deepseek": {"windows": [' + window + "]}}}"


PRICE_ERRORS = [
    # nesting past the recursion limit: RecursionError traceback
    ("prices.json", '{"providers": ' + "[" * 100_000 + "]" * 100_000 + "}",
     f"price table nests arrays or objects too deeply (hint: give --prices a JSON price table (or a TOML one, named "
     f"*.toml); {SHAPE})"),
    ("prices.toml", "a = " + "[" * 50_000 + "]" * 50_000 + "\n",
     f"price table nests arrays or objects too deeply (hint: give --prices a TOML price table; {SHAPE})"),
    # an integer past the double range: OverflowError traceback in math.isfinite
    ("prices.json", _rate(cache_miss="1" + "0" * 400),
     "price table key providers.deepseek.models.deepseek-v4-flash.cache_miss: a 401-digit number is above 1e+09, "
     f"not a price (hint: {PRICE_HINT})"),
    # a finite rate so large that the cost overflowed Decimal's precision (InvalidOperation, "a dsh-audit bug")
    ("prices.json", _rate(cache_miss="1e300"),
     "price table key providers.deepseek.models.deepseek-v4-flash.cache_miss: 1e+300 is above 1e+09, "
     f"not a price (hint: {PRICE_HINT})"),
    # offsets and hours that were accepted silently: +99:99, Arabic-Indic digits, a trailing newline
    ("prices.json", _window('{"utc_offset": "+99:99", "peak_hours": ["09:00-12:00"]}'),
     "price table key providers.deepseek.windows[0].utc_offset: \"+99:99\" is not +HH:MM (HH 00-23, MM 00-59) "
     f"(hint: {PRICE_HINT})"),
    ("prices.json", _window('{"utc_offset": "+\\u0660\\u0668:00", "peak_hours": ["09:00-12:00"]}'),
     "price table key providers.deepseek.windows[0].utc_offset: \"+٠٨:00\" is not +HH:MM (HH 00-23, MM 00-59) "
     f"(hint: {PRICE_HINT})"),
    ("prices.json", _window('{"peak_hours": ["09:00-12:00\\n"]}'),
     "price table key providers.deepseek.windows[0].peak_hours[0]: \"09:00-12:00\\n\" is not HH:MM-HH:MM "
     f"(start before end) (hint: {PRICE_HINT})"),
    ("prices.json", _window('{"peak_hours": ["09:75-12:00"]}'),
     "price table key providers.deepseek.windows[0].peak_hours[0]: \"09:75-12:00\" is not HH:MM-HH:MM "
     f"(start before end) (hint: {PRICE_HINT})"),
]


@pytest.mark.parametrize(("name", "text", "message"), PRICE_ERRORS)
def test_bad_price_table_is_one_error_line(tmp_path, monkeypatch, capsys, name, text, message):
    log = dsh_log(tmp_path / "session.jsonl")
    prices = tmp_path / name
    prices.write_text(text, encoding="utf-8")
    assert invoke(monkeypatch, capsys, "usage", str(log), "--prices", str(prices)) == \
        (2, "", [f"error: {prices}: {message}"])


@pytest.mark.parametrize("name", ["prices.json", "prices.toml"])
def test_price_table_fifo_is_refused_not_read(tmp_path, monkeypatch, capsys, name):
    """A FIFO given as --prices blocked the run forever."""
    log = dsh_log(tmp_path / "session.jsonl")
    fifo = tmp_path / name
    os.mkfifo(fifo)
    assert invoke(monkeypatch, capsys, "usage", str(log), "--prices", str(fifo)) == \
        (2, "", [f"error: {fifo}: is a FIFO, not a price table (hint: only regular files are read)"])


def test_price_table_over_16_mib_is_refused(tmp_path, monkeypatch, capsys):
    log = dsh_log(tmp_path / "session.jsonl")
    prices = tmp_path / "prices.json"
    prices.write_bytes(b'{"pad": "' + b"x" * (16 << 20) + b'", "providers": {}}')
    assert invoke(monkeypatch, capsys, "usage", str(log), "--prices", str(prices)) == \
        (2, "", [f"error: {prices}: price table is larger than 16 MiB "
                 f"(hint: give --prices a JSON price table (or a TOML one, named *.toml); {SHAPE})"])


def test_usd_cost_past_28_digits_is_a_number_not_invalid_operation():
    """Decimal's default 28 digits could not hold a cost to the nano-dollar past 1e19 USD."""
    assert usd_cost(10**30, 0.3, 10**6) == 3e23
    assert usd_cost(10**6, 1e300, 10**6) == 1e300
    assert usd_cost(3, 0.1, 1) == 0.3  # the exact path is unchanged


#: The hints of a policy file that is not TOML: the nearest pyproject.toml's, and a --policy file's.
_FOUND = ("fix or move this pyproject.toml (the nearest to the current folder): dsh-audit reads its "
          "[tool.dsh-audit] table")
_GIVEN = "fix this file, or give another --policy FILE; see the Policy section of docs/ci.md"


# -- policies -------------------------------------------------------------------------------------

@pytest.mark.parametrize("found", [False, True])
def test_policy_integer_past_the_digit_limit_is_one_error_line(tmp_path, monkeypatch, capsys, found):
    """tomllib raises a plain ValueError (not TOMLDecodeError) for it: a traceback before."""
    log = dsh_log(tmp_path / "session.jsonl")
    policy = tmp_path / ("pyproject.toml" if found else "policy.toml")
    policy.write_text("[tool.dsh-audit]\nmin-cache-hit-ratio = 1" + "0" * 5000 + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    args = ["check", str(log)] if found else ["check", str(log), "--policy", str(policy)]
    assert invoke(monkeypatch, capsys, *args) == \
        (2, "", [f"error: {policy}: {'pyproject.toml' if found else 'policy file'} is not valid TOML: Exceeds the "
                 "limit (4300 digits) for integer string conversion: value has 5001 digits (hint: "
                 + (_FOUND if found else _GIVEN) + ")"])


# -- option values --------------------------------------------------------------------------------

def test_stats_top_past_sqlite_integers_lists_every_session(tmp_path, monkeypatch, capsys):
    """``LIMIT ?`` cannot bind an integer past 2**63 - 1: an OverflowError traceback before."""
    (tmp_path / "logs").mkdir()
    dsh_log(tmp_path / "logs" / "session.jsonl")
    db = str(tmp_path / "audit.sqlite")
    assert invoke(monkeypatch, capsys, "index", str(tmp_path / "logs"), "--db", db)[0] == 0
    expected = invoke(monkeypatch, capsys, "stats", "--db", db, "--top", "1", "--json")
    assert expected[0] == 0 and expected[2] == []
    assert invoke(monkeypatch, capsys, "stats", "--db", db, "--top", "1" + "0" * 22, "--json") == expected


def test_a_window_before_year_1000_is_shown_with_four_digit_years(tmp_path, monkeypatch, capsys):
    """strftime's %Y wrote year 1 as "1-01-02T00:00:00Z"; a bound outside datetime's years was a bare repr."""
    log = dsh_log(tmp_path / "session.jsonl")
    out = str(tmp_path / "r.html")
    hint = "(by the logs' own timestamps) (hint: widen or drop --since/--until)"
    # report describes: an empty window is a page with no log and exit 0 (README: Exit codes); check gates
    assert invoke(monkeypatch, capsys, "report", str(log), "--until", "0001-01-01", "-o", out)[::2] == \
        (0, ["note: --until 0001-01-02T00:00:00Z: 1 of 1 log(s) with no activity in that window (by the logs' own "
             "timestamps) left out"])
    assert invoke(monkeypatch, capsys, "check", str(log), "--until", "0001-01-01")[::2] == \
        (2, ["note: --until 0001-01-02T00:00:00Z: 1 of 1 log(s) with no activity in that window (by the logs' own "
             "timestamps) left out",
             f"error: {log}: no session log has activity in --until 0001-01-02T00:00:00Z {hint}"])
    assert invoke(monkeypatch, capsys, "check", str(log), "--until", "0001-01-01T00:00:00+14:00")[::2] == \
        (2, ["note: --until -6.21356e+10 s after the epoch (outside the years 1-9999): 1 of 1 log(s) with no activity "
             "in that window (by the logs' own timestamps) left out",
             f"error: {log}: no session log has activity in --until -6.21356e+10 s after the epoch (outside the years "
             f"1-9999) {hint}"])


# -- captures -------------------------------------------------------------------------------------

def test_a_gzip_bomb_in_a_har_body_is_called_a_gzip_body_not_a_zstd_log(tmp_path, monkeypatch, capsys):
    """The refusal said "zstd bytes" and "real DSH logs expand 3-6x; if this is a real log" for a gzip body."""
    import base64
    import gzip
    import json

    packed = base64.b64encode(gzip.compress(b" " * (8 << 20), compresslevel=9, mtime=0)).decode()
    entry = {"request": {"method": "POST", "url": "http://h/chat/completions",
                         "headers": [{"name": "content-encoding", "value": "gzip"}],
                         "postData": {"mimeType": "application/json", "text": packed, "encoding": "base64"}}}
    har = tmp_path / "capture.har"
    har.write_text(json.dumps({"log": {"entries": [entry]}}), encoding="utf-8")
    log = dsh_log(tmp_path / "session.jsonl")
    code, out, err = invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(har))
    assert (code, out, len(err)) == (2, "", 1)
    assert err[0].startswith(f"error: {har}: entries[0]: the gzip body is refused as a decompression bomb: ")
    assert " gzip bytes expand to more than 5242880 bytes, past the limit of 200x (DSH_AUDIT_MAX_RATIO) (hint: if " \
           "this is a real body, raise the limit: DSH_AUDIT_MAX_RATIO=2000 (0: no limit); see docs/hostile-inputs.md)" \
           in err[0]


# -- environment variables and the redaction salt ------------------------------------------------

@pytest.mark.parametrize("variable", ["DSH_AUDIT_MAX_RATIO", "DSH_AUDIT_MAX_DECODED"])
@pytest.mark.parametrize("value", ["²", "9" * 5000])
def test_a_limit_int_cannot_read_is_a_usage_error_not_a_bug(tmp_path, monkeypatch, capsys, variable, value):
    """isdigit() and \\d accept "²", and 5000 digits pass the pattern; int() refused both ("a dsh-audit bug")."""
    log = dsh_log(tmp_path / "session.jsonl")
    monkeypatch.setenv(variable, value)
    what, hint = ("is not a whole number", "give decoded bytes per compressed byte, e.g. 1000; 0 means no limit") \
        if variable == "DSH_AUDIT_MAX_RATIO" else \
        ("is not a size", "give bytes with an optional K, M, G or T suffix, e.g. 16G; 0 means no limit")
    shown = repr(value) if len(value) < 40 else f"{value[:40]!r}... (5,000 characters)"  # not echoed whole
    assert invoke(monkeypatch, capsys, "requests", str(log)) == \
        (2, "", [f"error: {variable}={shown} {what} (hint: {hint})"])


def test_a_salt_that_is_not_utf8_redacts_with_its_bytes(tmp_path, monkeypatch, capsys):
    """argv bytes that are not UTF-8 reach Python as lone surrogates: salt.encode("utf-8") raised."""
    from dsh_audit.redact import redact

    log = dsh_log(tmp_path / "session.jsonl")
    out = tmp_path / "cli.jsonl"
    salt = b"\xff\xfe".decode("utf-8", "surrogateescape")
    code, _, err = invoke(monkeypatch, capsys, "redact", str(log), "--salt", salt, "-o", str(out))
    assert (code, err) == (0, [short_salt(salt)])
    redact(log, tmp_path / "api.jsonl", salt=b"\xff\xfe")
    assert out.read_bytes() == (tmp_path / "api.jsonl").read_bytes()


# -- the index database ---------------------------------------------------------------------------

def test_index_errors_name_a_lock_or_a_read_only_file_not_a_foreign_database(tmp_path):
    """A locked or read-only index was "not a dsh-audit index" with a hint to delete it (issue 15)."""
    import sqlite3

    from dsh_audit.fleet._db import index_error

    db = tmp_path / "audit.sqlite"
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")
    errors = []
    connection = sqlite3.connect(db, timeout=0)
    try:
        connection.execute("SELECT * FROM t")
    except sqlite3.Error as exc:
        errors.append(exc)
    connection.close()
    holder.execute("ROLLBACK")
    holder.close()
    try:
        connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        connection.execute("INSERT INTO t VALUES (1)")
    except sqlite3.Error as exc:
        errors.append(exc)
    connection.close()
    (tmp_path / "text.sqlite").write_text("hello")
    try:
        sqlite3.connect(tmp_path / "text.sqlite").execute("SELECT * FROM sqlite_master")
    except sqlite3.Error as exc:
        errors.append(exc)
    assert [str(index_error(e, "a.sqlite", hint="delete it")) for e in errors] == [
        "a.sqlite: the index is locked by another program: database is locked (hint: wait until the other "
        "`dsh-audit index` (or program) holding --db is done, then run again)",
        "a.sqlite: the index is read-only: attempt to write a readonly database (hint: give a --db file this "
        "user can write)",
        "a.sqlite: not a dsh-audit index: file is not a database (hint: delete it)",
    ]
