"""Fuzz round 11 (issue 15): session references over hostile DSH homes, the packaged pi-ai catalog
named by hostile logs, hostile route files and price files, ``watch`` over copies of one session,
``redact``'s ``--alone`` and ``--any-capture`` beside children with hostile ids, ``validate --json``
and ``check``'s table at 80 columns (docs/hostile-inputs.md, "Round 11").

Every test here is a case that held: its exact outcome is kept so that it stays so. The defects the
round found are listed in the docs section (found and open); none is shown here as a failing test.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import zstandard
from _cli import chat_log, invoke, short_salt
from test_tables38 import named_logs, no_capture
from test_piai_images import reply

from dsh_audit.testing import LogBuilder

ESC = "x\x1b]0;PWN\x07\u202e\x9b<b>[red]"
SHOWN = "x\\u001b]0;PWN\\u0007\\u202e\\u009b<b>[red]"  # as a listing or an error shows a session id
RAW = "\x1b\x07\x9b\u202e\x00"  # none of these from a log may reach stdout or stderr
CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
SUBAGENT = CORPUS / "live" / "g-subagent" / "session-logs"
PARENT_ID = "session-70444d8d-ee1d-43e9-8341-470b57f1019c"
CHILD_ID = "718aabf5-ac98-48d9-87ec-fa18653fd4d4"
needs_corpus = pytest.mark.skipif(not SUBAGENT.is_dir(), reason="../shared/corpus is absent")


def _clean(*texts: str) -> bool:
    """No raw control, C1, bidi or NUL character and no ``::`` line start in ``texts``."""
    text = "".join(texts)
    return not any(c in text for c in RAW) and not any(
        line.startswith("::") for t in texts for line in t.splitlines())


def _session(path: Path, session_id: str) -> Path:
    """The one-turn chat of :func:`chat_log` whose session id is ``session_id`` (any string, a lone
    surrogate too: written as JSON escapes, as DSH's JSON.stringify writes what it is given)."""
    log = chat_log(path, "SESSION-ID")
    log.write_text(log.read_text("utf-8").replace('"SESSION-ID"', json.dumps(session_id)), "utf-8")
    return log


def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *ids: str) -> Path:
    """A DSH home of one session per id, $DSH_HOME set to it."""
    for n, sid in enumerate(ids):
        _session(tmp_path / "sessions" / "p" / f"s{n}" / "session.jsonl", sid)
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    return tmp_path / "sessions"


def _pi_log(path: Path, provider: str, model: str, api: str = "openai-completions") -> Path:
    """A two-turn chat through pi-ai naming ``provider`` and ``model`` (any strings)."""
    b = LogBuilder(session_id="s-pi", provider="PROVIDER", model="MODEL", system="Sys.", tools=[],
                   reasoning_effort=None, max_tokens=1000)
    for prompt, answer in (("Hi.", "Hello."), ("Again.", "Yes.")):
        with b.turn(prompt):
            with b.step():
                reply(b, "PROVIDER", "MODEL", api, answer)
    text = "".join(line + "\n" for line in b.lines(packed=False))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.replace("PROVIDER", json.dumps(provider)[1:-1]).replace("MODEL", json.dumps(model)[1:-1]),
                    "utf-8")
    return path


# -- session references ---------------------------------------------------------------------------

def test_an_ambiguous_prefix_lists_hostile_ids_escaped(tmp_path, monkeypatch, capsys):
    sessions = _home(tmp_path, monkeypatch, "ab" + ESC, "ab\x1b[2Jy")
    code, out, err = invoke(monkeypatch, capsys, "show", "ab", "0")
    assert (code, out, err) == (2, "", [
        f"error: {sessions}: session id prefix 'ab' is ambiguous: ab\\u001b[2Jy, ab{SHOWN} "
        "(hint: type more of the id)"])


def test_a_glob_reference_is_a_prefix_never_a_pattern(tmp_path, monkeypatch, capsys):
    sessions = _home(tmp_path, monkeypatch, "g*?[x]", "other")
    code, out, err = invoke(monkeypatch, capsys, "show", "g*", "0")
    assert (code, err, json.loads(out)["session_id"]) == (0, [], "g*?[x]")
    code, out, err = invoke(monkeypatch, capsys, "show", "*", "0")
    assert (code, out, err) == (2, "", [
        f"error: {sessions}: no session log, session id or id prefix '*' here (hint: run `dsh-audit sessions` to see "
        "the ids, or pass a path)"])


@pytest.mark.parametrize("session_id", ["n\n::error::PWN", ESC, "\u202eevil", "[bold]m"])
def test_a_hostile_id_given_whole_names_its_session(session_id, tmp_path, monkeypatch, capsys):
    _home(tmp_path, monkeypatch, session_id, "other")
    code, out, err = invoke(monkeypatch, capsys, "show", session_id, "0")
    assert (code, err, json.loads(out)["session_id"]) == (0, [], session_id)
    assert _clean(out)


def test_an_ambiguous_prefix_of_thousands_lists_five(tmp_path, monkeypatch, capsys):
    sessions = _home(tmp_path, monkeypatch, *(f"session-pfx-{i:04d}" for i in range(200)))
    code, out, err = invoke(monkeypatch, capsys, "show", "pfx", "0")
    assert (code, out, err) == (2, "", [
        f"error: {sessions}: session id prefix 'pfx' is ambiguous: session-pfx-0000, session-pfx-0001, "
        "session-pfx-0002, session-pfx-0003, session-pfx-0004 and 195 more (hint: type more of the id)"])
    code, out, err = invoke(monkeypatch, capsys, "show", "pfx-0199", "0")
    assert (code, err, json.loads(out)["session_id"]) == (0, [], "session-pfx-0199")


def test_a_session_in_a_folder_not_named_in_utf8_is_found_by_id(tmp_path, monkeypatch, capsys):
    folder = Path(os.fsdecode(bytes(tmp_path / "sessions" / "p") + b"/bad\xff\xfe"))
    _session(folder / "session.jsonl", "nonutf")
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    code, out, err = invoke(monkeypatch, capsys, "show", "nonutf", "0")
    assert (code, err, json.loads(out)["session_id"]) == (0, [], "nonutf")


@pytest.mark.parametrize("kind", ["file", "fifo", "loop", "device"])
def test_a_sessions_folder_that_is_no_folder_is_one_error(kind, tmp_path, monkeypatch, capsys):
    """$DSH_HOME/sessions a file, a FIFO (never opened: no hang), a symlink loop or /dev/zero."""
    sessions = tmp_path / "sessions"
    {"file": lambda: sessions.write_text("x"), "fifo": lambda: os.mkfifo(sessions),
     "loop": lambda: sessions.symlink_to("sessions"), "device": lambda: sessions.symlink_to("/dev/zero")}[kind]()
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    code, out, err = invoke(monkeypatch, capsys, "show", "latest", "0")
    assert (code, out, err) == (2, "", [
        f"error: latest: no such file or folder, and not a session id: the sessions folder {sessions} "
        "($DSH_HOME/sessions) is not a folder (hint: pass the path of a log or a session folder, or a session id or "
        "`latest`: looked up in $DSH_HOME/sessions; set DSH_HOME to the DSH home that holds sessions/)"])


@pytest.mark.parametrize(("make", "what"), [(lambda p: p.symlink_to("/dev/zero"), "is a character device"),
                                            (os.mkfifo, "is a FIFO")])
def test_latest_beside_a_log_that_is_a_special_file_says_so(make, what, tmp_path, monkeypatch, capsys):
    _home(tmp_path, monkeypatch, "bee")
    special = tmp_path / "sessions" / "p" / "a" / "session.jsonl"
    special.parent.mkdir()
    make(special)
    code, out, err = invoke(monkeypatch, capsys, "show", "latest", "0")
    assert (code, out, err) == (2, "", [
        f"error: {special}: {what}, not a log file, so which session is latest cannot be told (hint: make it readable "
        "or move it out of the sessions folder, or pass the log's path instead of a session id)"])
    code, out, err = invoke(monkeypatch, capsys, "show", "bee", "0")  # an exact id is still found
    assert (code, err, json.loads(out)["session_id"]) == (0, [], "bee")


# -- the packaged pi-ai catalog: providers and models named by hostile logs ------------------------

_NO_FACTS = ("no pi-ai model facts for {}: a hand-declared route's models are described by DSH's route configuration, "
             "which the log does not record (hint: pass --routes FILE (DSH's llm-pi-ai route configuration), or record the "
             "log in a DSH home (<home>/sessions/...) and declare the route in <home>/cordis.patch.yml, read when no "
             "--routes is given)")


@pytest.mark.parametrize(("provider", "model", "shown"), [
    ("__proto__", "m", "__proto__/m"), ("constructor", "m", "constructor/m"), ("toString", "m", "toString/m"),
    ("hasOwnProperty", "x", "hasOwnProperty/x"), ("__dict__", "__class__", "__dict__/__class__"),
    ("p" + ESC, "m", "p" + SHOWN + "/m"), ("\ud800", "m", "\\ud800/m"),
])
def test_a_provider_no_catalog_names_is_a_hand_declared_route(provider, model, shown, tmp_path, monkeypatch, capsys):
    log = _pi_log(tmp_path / "s" / "session.jsonl", provider, model)
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "1")
    assert (code, out, err) == (2, "", [f"error: {log}:7 seq 5: " + _NO_FACTS.format(shown)])  # the header's seq
    code, out, err = invoke(monkeypatch, capsys, "cache", "--json", str(log))
    assert (code, err, [json.loads(line)["session_id"] for line in out.splitlines()]) == (0, [], ["s-pi"])


@pytest.mark.parametrize(("model", "shown"), [("toString", "toString"), ("a/\x1b[2J\u2066b", "a/\\u001b[2J\\u2066b")])
def test_a_model_a_catalog_provider_has_not_is_named_escaped(model, shown, tmp_path, monkeypatch, capsys):
    provider = "anthropic" if model == "toString" else "openrouter"
    log = _pi_log(tmp_path / "s" / "session.jsonl", provider, model,
                  "anthropic-messages" if provider == "anthropic" else "openai-completions")
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "1")
    assert (code, out, len(err)) == (2, "", 1)
    assert err[0].startswith(f"error: {log}:7 seq 5: no pi-ai model facts for {provider}/{shown}: pi-ai 0.82.1's "
                             f"catalog has no such {provider} model, and the log does not record a model's facts "
                             "(hint: ")


@pytest.mark.parametrize("model", ["__proto__", "constructor"])
def test_a_catalog_provider_on_another_api_than_its_catalog_entry_is_refused(model, tmp_path, monkeypatch, capsys):
    log = _pi_log(tmp_path / "s" / "session.jsonl", "openai", model)
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "1")
    assert (code, out, len(err)) == (2, "", 1)
    assert err[0].startswith(f"error: {log}:7 seq 5: request 1 cannot be rendered: unknown route: provider 'openai': "
                             "pi-ai's replay envelope at seq 12 shows api 'openai-completions' but pi-ai's catalog "
                             "says 'openai-responses'; ")
    code, out, err = invoke(monkeypatch, capsys, "usage", str(log))
    assert (code, err) == (0, [f"warning: 2 request(s) unpriced: no price for model '{model}' (provider openai: give "
                               f"--prices FILE a [providers.openai.models.{model}] table of cache_miss, cache_read "
                               "and output rates)"])


def test_a_megabyte_model_name_is_cut_in_its_warning(tmp_path, monkeypatch, capsys):
    log = _pi_log(tmp_path / "s" / "session.jsonl", "openai", "g" * 1_000_000)
    code, out, err = invoke(monkeypatch, capsys, "usage", str(log))
    assert (code, len(err)) == (0, 1)
    assert err[0].startswith("warning: 2 request(s) unpriced: no price for model 'ggg") and len(err[0]) <= 2100


# -- route files naming hostile providers ----------------------------------------------------------

_ROUTE = ("providers:\n  {p}:\n    api: openai-completions\n    baseURL: http://127.0.0.1:1/v1\n    models:\n"
          "      - id: {m}\n        contextWindow: 1000000\n        maxTokens: 8192\n")


@pytest.mark.parametrize(("provider", "model", "declared"), [
    ("__proto__", "constructor", ("__proto__", "constructor")), ("toString", "valueOf", ("toString", "valueOf")),
    ("p\x1b[2J\u202e", "m\x9b", ('"p\\e[2J\\u202e"', '"m\\x9b"')),
])
def test_a_route_file_declaring_a_hostile_provider_renders_it(provider, model, declared, tmp_path, monkeypatch,
                                                              capsys):
    log = _pi_log(tmp_path / "s" / "session.jsonl", provider, model)
    routes = tmp_path / "routes.yml"
    routes.write_text(_ROUTE.format(p=declared[0], m=declared[1]), "utf-8")
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "1", "--routes", str(routes))
    body = json.loads(out)
    assert (code, err, body["model"], [m["role"] for m in body["messages"]]) == (
        0, [], model, ["system", "user", "assistant", "user"])


# -- price files -----------------------------------------------------------------------------------

_FLASH = {"cache_miss": 0.3, "cache_read": 0.03, "output": 0.5}
_DOCS = "the Price files section of docs/cache-accounting.md gives the shape"
_SHAPE = f"(hint: fix this key in the --prices file; {_DOCS})"
_PYPROJECT_SHAPE = ("(hint: fix this key under [tool.dsh-audit.prices] of this pyproject.toml, the nearest to the "
                    f"current folder; {_DOCS})")
_RATE = "providers.deepseek.models.deepseek-v4-flash[0]"


def _rates(**rate: Any) -> dict[str, Any]:
    return {"providers": {"deepseek": {"models": {"deepseek-v4-flash": [dict(_FLASH, **rate)]}}}}


@pytest.mark.parametrize(("table", "message"), [
    # a key is named as TOML writes it (quoted, every control and non-ASCII character escaped), as
    # the price table's warnings name it (dsh_audit._pyproject.dotted_key)
    ({**_rates(), "k" + ESC: 1}, f'price table key "k{SHOWN}": unknown key; known: currency, gaps, note, per_tokens, '
                                 "providers, schema"),
    ({**_rates(), "[bold]x[/]": 1}, 'price table key "[bold]x[/]": unknown key; known: currency, gaps, note, '
                                    "per_tokens, providers, schema"),
    ({**_rates(), "a\x00b": 1}, 'price table key "a\\u0000b": unknown key; known: currency, gaps, note, per_tokens, '
                                "providers, schema"),
    (_rates(**{"[link=http://x]y": 1}), f'price table key {_RATE}."[link=http://x]y": unknown key; known: billed_as, '

                                        "cache_miss, cache_read, cache_write_1h, cache_write_5m, corroborated, from, "
                                        "off_peak, output, retrieved, source, tiers, verified"),
    (_rates(cache_miss=1e308), f"price table key {_RATE}.cache_miss: 1e+308 is above 1e+09, not a price"),
    ('{"providers": {"deepseek": {"models": {"deepseek-v4-flash": [{"cache_miss": 1e400, "cache_read": 0.03, '
     '"output": 0.5}]}}}}', f"price table key {_RATE}.cache_miss: 1e400 is above 1e+09, not a price"),
    ('{"providers": {"deepseek": {"models": {"deepseek-v4-flash": [{"cache_miss": NaN, "cache_read": 0.03, '
     '"output": 0.5}]}}}}', f"price table key {_RATE}.cache_miss: NaN is not a rate (a number >= 0)"),
    ('{"providers": {"deepseek": {"models": {"deepseek-v4-flash": [{"cache_miss": Infinity, "cache_read": 0.03, '
     '"output": 0.5}]}}}}', f"price table key {_RATE}.cache_miss: Infinity is above 1e+09, not a price"),
    (_rates(cache_miss="0.3\x1b[2J"),
     f"price table key {_RATE}.cache_miss: \"0.3\\u001b[2J\" is not a rate (a number >= 0)"),
    (_rates(**{"from": "\x1b[2J"}), f"price table key {_RATE}.from: \"\\u001b[2J\" is not an ISO date or date-time"),
])
@pytest.mark.parametrize("command", ["usage", "sessions"])
def test_a_hostile_price_file_is_one_line(table, message, command, tmp_path, monkeypatch, capsys):
    log = chat_log(tmp_path / "s" / "session.jsonl", "s")
    prices = tmp_path / "p.json"
    prices.write_text(table if isinstance(table, str) else json.dumps(table), "utf-8")
    code, out, err = invoke(monkeypatch, capsys, command, str(log), "--prices", str(prices))
    assert (code, out, err) == (2, "", [f"error: {prices}: {message} {_SHAPE}"])


def test_a_megabyte_price_key_is_cut(tmp_path, monkeypatch, capsys):
    log = chat_log(tmp_path / "s" / "session.jsonl", "s")
    prices = tmp_path / "p.json"
    prices.write_text(json.dumps({**_rates(), "k" * 1_000_000: 1}), "utf-8")
    code, out, err = invoke(monkeypatch, capsys, "usage", str(log), "--prices", str(prices))
    assert (code, out, len(err)) == (2, "", 1)
    assert err[0].startswith(f"error: {prices}: price table key kkk") and len(err[0]) <= 2100


@pytest.mark.parametrize(("value", "message"), [
    ("nan", f"price table key {_RATE}.cache_miss: nan is not a rate (a number >= 0) {_PYPROJECT_SHAPE}"),
    ("inf", f"price table key {_RATE}.cache_miss: inf is above 1e+09, not a price {_PYPROJECT_SHAPE}"),
    ("1" + "0" * 4000, f"price table key {_RATE}.cache_miss: a 4001-digit number is above 1e+09, not a price "
                       f"{_PYPROJECT_SHAPE}"),
])
def test_a_hostile_pyproject_price_is_one_line(value, message, tmp_path, monkeypatch, capsys):
    log = chat_log(tmp_path / "s" / "session.jsonl", "s")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.dsh-audit.prices.providers.deepseek.models]\n"deepseek-v4-flash" = '
        f"[{{cache_miss = {value}, cache_read = 0.03, output = 0.5}}]\n", "utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "sessions", str(log))
    assert (code, out, err) == (2, "", [f"error: {tmp_path}/pyproject.toml [tool.dsh-audit.prices]: {message}"])


# -- watch: one session in several files ----------------------------------------------------------

SAMPLE = Path(__file__).resolve().parent.parent / "sample_logs" / "sessions" / "--home-dev-projects-demo--" / \
    "session-sample-change" / "session.jsonl.zstd"


def test_watch_follows_one_session_in_two_files_once_beside_special_files(tmp_path, monkeypatch, capsys):
    """DSH's zstd log and a plain export of it, and beside them logs that are a symlink to themselves
    and to /dev/zero: the session is followed once (a note says which file), the special files are
    never read, each said once as a log that cannot be read (fuzz round 17 D1: a ``*.jsonl`` that
    cannot be opened is refused, never skipped unseen), and the watch ends."""
    dsh = tmp_path / "home" / "sessions" / "--p--" / "session-sample-change" / "session.jsonl.zstd"
    dsh.parent.mkdir(parents=True)
    shutil.copy(SAMPLE, dsh)
    export = tmp_path / "session-logs"
    export.mkdir()
    (export / "session-sample-change.jsonl").write_bytes(
        zstandard.ZstdDecompressor().stream_reader(SAMPLE.read_bytes(), read_across_frames=True).read())
    (export / "loop.jsonl").symlink_to("loop.jsonl")
    (export / "zero.jsonl").symlink_to("/dev/zero")
    code, out, err = invoke(monkeypatch, capsys, "watch", str(tmp_path), "--json", "--polling", "--idle-exit", "0.5",
                            "--since", "2000-01-01")
    rows = [json.loads(line) for line in out.splitlines()]
    refused = [f"{export / 'loop.jsonl'}: cannot open: symlink loop",
               f"{export / 'zero.jsonl'}: is a character device, not a log file (hint: only regular files are read)"]
    assert (code, sorted(err)) == (0, [f"error: {message}" for message in refused])
    assert sorted(row["message"] for row in rows if row["type"] == "error") == refused
    assert [(row["type"], row.get("index")) for row in rows if row["type"] not in ("watching", "started", "error")] == [
        ("note", None), ("request", 0), ("break", 1), ("break", 2), ("break", 3), ("break", 4), ("summary", None)]
    assert rows[1]["message"] == (
        f"one session in two files under {tmp_path}/: read "
        "home/sessions/--p--/session-sample-change/session.jsonl.zstd, "
        "not session-logs/session-sample-change.jsonl (the same lines)")
    assert {k: rows[-1][k] for k in ("sessions", "requests", "breaks", "errors")} == {
        "sessions": 1, "requests": 5, "breaks": 4, "errors": 2}


# -- redact: --alone and --any-capture beside children with hostile ids ---------------------------

def _family(tmp_path: Path, parent_id: str, child_id: str) -> tuple[Path, Path]:
    """The corpus's subagent parent and child, beside each other, their ids replaced."""
    folder = tmp_path / "logs"
    folder.mkdir()
    logs = []
    for name, source in (("parent", f"{PARENT_ID}.jsonl"), ("child", f"{CHILD_ID}.jsonl")):
        text = (SUBAGENT / source).read_text("utf-8")
        text = text.replace(PARENT_ID, json.dumps(parent_id)[1:-1]).replace(CHILD_ID, json.dumps(child_id)[1:-1])
        (folder / f"{name}.jsonl").write_text(text, "utf-8")
        logs.append(folder / f"{name}.jsonl")
    return logs[0], logs[1]


@needs_corpus
@pytest.mark.parametrize(("parent_id", "child_id"), [
    ("session-" + ESC, "c" + ESC), ("../../etc/passwd", "../child"), ("session-*", "*"),
    ("session-p\n::error::PWN", "c\r\n::warning::x"), ("[bold]p", "[link=http://x]c"),
])
def test_redact_alone_names_a_hostile_parent_escaped(parent_id, child_id, tmp_path, monkeypatch, capsys):
    parent, child = _family(tmp_path, parent_id, child_id)
    code, out, err = invoke(monkeypatch, capsys, "redact", str(child), "-o", str(tmp_path / "c.jsonl"), "--salt", "s")
    assert (code, out, len(err)) == (2, "", 1)
    assert err[0].startswith(f"error: {child}: this log is a child of {parent}, beside it, which its breaks and cache ")
    code, out, err = invoke(monkeypatch, capsys, "redact", str(child), "-o", str(tmp_path / "c.jsonl"), "--salt", "s",
                            "--alone")
    assert (code, err) == (0, [
        f"note: redacted alone: its verdicts were compared without its parent log {parent} (beside it, breaks compares "
        "the two); redact the parent too, with the same salt, to give the recipient both", short_salt("s")])
    assert _clean(out) and out.splitlines()[-3] == "verdicts of requests, breaks, cache: unchanged"
    code, out, err = invoke(monkeypatch, capsys, "redact", "--check", str(tmp_path / "c.jsonl"))
    assert (code, err) == (0, [])


@needs_corpus
def test_redact_any_capture_takes_another_sessions_capture_as_content(tmp_path, monkeypatch, capsys):
    _parent, child = _family(tmp_path, "session-" + ESC, "c" + ESC)
    wire = CORPUS / "live" / "a-chat" / "wire.jsonl"
    args = ["redact", str(child), "-o", str(tmp_path / "c.jsonl"), "--salt", "s", "--alone", "--capture", str(wire)]
    code, out, err = invoke(monkeypatch, capsys, *args)
    assert (code, out, err) == (2, "", [
        f"error: {wire}: none of the 3 captured request(s) is one of this log's (3 of another session): is it the "
        "capture of another session? (hint: pass the capture of this session (or --any-capture to redact it anyway))"])
    code, out, err = invoke(monkeypatch, capsys, *args, "--any-capture")
    # session 42b: the capture is c.jsonl.wire.jsonl (wire.jsonl there would be the original's), named for the views
    assert (code, out.splitlines()[-4]) == (0, "verdicts of requests, breaks, cache, diff: unchanged")
    assert err[-2:] == ["note: 3 of 3 captured request(s) match none of the log's requests (3 of another session): "
                        "they are redacted as content, and prove nothing about this log", short_salt("s")]


# -- validate --json and check's table at 80 columns over hostile ids ------------------------------

HOSTILE_IDS = ("ab" + ESC, "n\n::error::PWN", "\u202eevil", "z\x00z", "s\ud800x", "h" * 300, "[link=http://x]m[/link]")


def test_validate_json_ends_in_one_summary_line(tmp_path, monkeypatch, capsys):
    sessions = _home(tmp_path, monkeypatch, *HOSTILE_IDS)
    code, out, err = invoke(monkeypatch, capsys, "validate", "--json", str(sessions))
    assert (code, err, [json.loads(line) for line in out.splitlines()]) == (0, [], [
        {"type": "summary", "passed": True, "counts": {"error": 0, "warning": 0, "info": 0}, "files": 7, "rules": {}}])


def test_check_table_at_80_columns_shows_hostile_ids_inert(tmp_path, monkeypatch, capsys):
    sessions = _home(tmp_path, monkeypatch, *HOSTILE_IDS)
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = invoke(monkeypatch, capsys, "check", str(sessions))
    lines = out.splitlines()
    assert (code, err, lines[-2:]) == (0, [], [
        "PASSED: 7 log(s), 7 request(s), 0 error(s), 0 warning(s), 7 info, 0 failing", "  (policy: defaults)"])
    # each log's path whole on its own line under the table (session 38: never cut, nor left out)
    logs = named_logs(sorted(sessions.rglob("session.jsonl")))
    assert lines[-5 - len(logs):-5] == logs
    # then the info finding the "findings" column counts, said once for the 7 logs (session 42)
    assert lines[-5:-2] == no_capture(7, column=True)  # its 7 rows say none: the column says which
    assert _clean(out) and max(len(line) for line in lines if line not in logs) <= 80
    # each id cut at its end to its shortest unique prefix (of 8 characters or more, as every table
    # cuts one: session 40), which keeps capture and cost, never inside an escape
    for shown in ("abx\\u001b]0;P\u2026", "n\\u000a::erro\u2026", "\\u202eevil", "z\\u0000z", "s\\ud800x",
                  "hhhhhhhh\u2026", "[link=ht\u2026"):
        assert sum(shown in line for line in lines) == 1, shown
