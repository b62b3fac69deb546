"""Fuzz round 12 (issue 15): the packaged pi-ai catalog's 37 providers and hostile route facts in
logs, ``usage``/``sessions``/``stats`` over a hostile home in every format and window, ``redact``'s
secrets in unusual encodings in kept parts, capture lanes over hostile ``wire.jsonl`` files, and the
HTML report of hostile strings (docs/hostile-inputs.md, "Round 12").

Every test here is a case that held: its exact outcome is kept so that it stays so. The defects the
round found are listed in the docs section (found and open); none is shown here as a failing test.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from _cli import chat_log, invoke, short_salt
from click.testing import CliRunner
from test_piai_images import reply

from dsh_audit.cli import cli
from dsh_audit.testing import LogBuilder, ToolCall

ESC = "x\x1b]0;PWN\x07\u202e\x9b<b>[red]\r\n::error::y"
RAW = "\x1b\x07\x08\x9b\u202e\u2066\x00\r"  # none of these from a log may reach stdout or stderr
CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
A_CHAT = CORPUS / "live" / "a-chat"
needs_corpus = pytest.mark.skipif(not A_CHAT.is_dir(), reason="../shared/corpus is absent")


def _clean(*texts: str) -> bool:
    """No raw control, C1, bidi or NUL character and no ``::`` line start in ``texts``."""
    text = "".join(texts)
    return not any(c in text for c in RAW) and not any(
        line.startswith("::") for t in texts for line in t.splitlines())


def _pi_log(path: Path, provider: str, model: str, api: str, *, context_window: str = "1000000",
            max_tokens: str = "1000", defaults: str = '{"maxTokens":true}') -> Path:
    """A two-turn chat through pi-ai naming ``provider``, ``model`` and ``api`` in its headers and replay
    envelopes, with ``request/context``'s contextWindow, the header's maxTokens and adapterDefaults
    written as the JSON texts given."""
    b = LogBuilder(session_id="s-pi", provider="PROVIDER", model="MODEL", system="Sys.", tools=[],
                   reasoning_effort=None, max_tokens=1000, adapter_defaults={"maxTokens": True})
    for prompt, answer in (("Hi.", "Hello."), ("Again.", "Yes.")):
        with b.turn(prompt):
            with b.step():
                reply(b, "PROVIDER", "MODEL", "API", answer)
    text = "".join(line + "\n" for line in b.lines(packed=False))
    for old, new in (('"contextWindow":1000000', '"contextWindow":' + context_window),
                     ('"maxTokens":1000', '"maxTokens":' + max_tokens),
                     ('"adapterDefaults":{"maxTokens":true}', '"adapterDefaults":' + defaults),
                     ('"PROVIDER"', json.dumps(provider)), ('"MODEL"', json.dumps(model)), ('"API"', json.dumps(api))):
        text = text.replace(old, new)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")
    return path


# -- the packaged pi-ai catalog: every provider, a model of several providers ----------------------

#: Each of pi-ai 0.82.1's 37 catalog providers, its first model and that model's API.
CATALOG = [
    ("amazon-bedrock", "amazon.nova-2-lite-v1:0", "bedrock-converse-stream"),
    ("ant-ling", "Ling-2.6-1T", "openai-completions"),
    ("anthropic", "claude-fable-5", "anthropic-messages"),
    ("azure-openai-responses", "gpt-4", "azure-openai-responses"),
    ("cerebras", "gemma-4-31b", "openai-completions"),
    ("cloudflare-ai-gateway", "claude-3-5-haiku", "anthropic-messages"),
    ("cloudflare-workers-ai", "@cf/google/gemma-4-26b-a4b-it", "openai-completions"),
    ("deepseek", "deepseek-v4-flash", "openai-completions"),
    ("fireworks", "accounts/fireworks/models/deepseek-v4-flash", "anthropic-messages"),
    ("github-copilot", "claude-haiku-4.5", "anthropic-messages"),
    ("google-vertex", "gemini-2.5-flash", "google-vertex"),
    ("google", "deep-research-max-preview-04-2026", "google-generative-ai"),
    ("groq", "llama-3.1-8b-instant", "openai-completions"),
    ("huggingface", "MiniMaxAI/MiniMax-M2", "openai-completions"),
    ("kimi-coding", "k3", "anthropic-messages"),
    ("minimax-cn", "MiniMax-M2.7", "anthropic-messages"),
    ("minimax", "MiniMax-M2.7", "anthropic-messages"),
    ("mistral", "codestral-latest", "mistral-conversations"),
    ("moonshotai-cn", "kimi-k2-0711-preview", "openai-completions"),
    ("moonshotai", "kimi-k2-0711-preview", "openai-completions"),
    ("nvidia", "meta/llama-3.1-70b-instruct", "openai-completions"),
    ("openai-codex", "gpt-5.3-codex-spark", "openai-codex-responses"),
    ("openai", "gpt-4", "openai-responses"),
    ("opencode-go", "minimax-m3", "anthropic-messages"),
    ("opencode", "claude-fable-5", "anthropic-messages"),
    ("openrouter", "ai21/jamba-large-1.7", "openai-completions"),
    ("qwen-token-plan-cn", "MiniMax-M2.5", "openai-completions"),
    ("qwen-token-plan", "MiniMax-M2.5", "openai-completions"),
    ("together", "MiniMaxAI/MiniMax-M2.7", "openai-completions"),
    ("vercel-ai-gateway", "alibaba/qwen-3-14b", "anthropic-messages"),
    ("xai", "grok-4.3", "openai-completions"),
    ("xiaomi-token-plan-ams", "mimo-v2-pro", "openai-completions"),
    ("xiaomi-token-plan-cn", "mimo-v2-pro", "openai-completions"),
    ("xiaomi-token-plan-sgp", "mimo-v2-pro", "openai-completions"),
    ("xiaomi", "mimo-v2-flash", "openai-completions"),
    ("zai-coding-cn", "glm-4.5-air", "openai-completions"),
    ("zai", "glm-4.5-air", "openai-completions"),
]
_RENDERED = ("anthropic-messages", "openai-completions", "openai-responses")
_NO_FORMAT = ("request 1 cannot be rendered: a known route with no wire format: pi-ai's replay envelope at seq 12; "
              "dsh-audit renders no '{}' bodies (it renders anthropic-messages, openai-completions, openai-responses "
              "and DeepSeek chat completions) (hint: no option renders it: DSH sent it in a format dsh-audit does not "
              "write, and --adapter would write another)")


def test_the_catalog_table_above_is_the_packaged_one():
    catalog = json.loads((Path(__file__).resolve().parent.parent / "dsh_audit" / "wire" / "piai_catalog.json")
                         .read_text("utf-8"))["providers"]
    first = [(name, *next((m, facts["api"]) for m, facts in entry["models"].items()))
             for name, entry in catalog.items()]
    assert first == CATALOG and len(CATALOG) == 37


@pytest.mark.parametrize(("provider", "model", "api"), CATALOG, ids=[row[0] for row in CATALOG])
def test_every_catalog_provider_renders_or_names_its_format(provider, model, api, tmp_path, monkeypatch, capsys):
    log = _pi_log(tmp_path / "s" / "session.jsonl", provider, model, api)
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "1")
    if api in _RENDERED:
        assert (code, err, json.loads(out)["model"]) == (0, [], model)
    else:
        assert (code, out, err) == (2, "", [f"error: {log}:7 seq 5: " + _NO_FORMAT.format(api)])
    code, out, err = invoke(monkeypatch, capsys, "cache", "--json", str(log))
    assert (code, err, [json.loads(line)["session_id"] for line in out.splitlines()]) == (0, [], ["s-pi"])


_CONFLICT = ("request 1 cannot be rendered: unknown route: provider '{p}': pi-ai's replay envelope at seq 12 shows api "
             "'{a}' but pi-ai's catalog says '{c}'; pass --routes FILE with the route configuration DSH had, or "
             "--adapter (hint: pass --routes FILE with the route configuration DSH had, or force a wire format with "
             "--adapter deepseek|anthropic|openai|responses)")


@pytest.mark.parametrize(("provider", "api", "catalog_api"), [
    ("anthropic", "anthropic-messages", None), ("cloudflare-ai-gateway", "anthropic-messages", None),
    ("github-copilot", "openai-completions", None), ("github-copilot", "anthropic-messages", "openai-completions"),
    ("opencode", "openai-responses", "anthropic-messages"), ("openrouter", "anthropic-messages", "openai-completions"),
])
def test_a_model_of_several_providers_is_routed_by_the_provider_named(provider, api, catalog_api, tmp_path,
                                                                      monkeypatch, capsys):
    """``claude-fable-5`` is a model of four catalog providers, on two APIs: the provider the log names
    decides; an envelope that contradicts that provider's entry is an unknown route, named."""
    log = _pi_log(tmp_path / "s" / "session.jsonl", provider, "claude-fable-5", api)
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "1")
    if catalog_api is None:
        assert (code, err, json.loads(out)["model"]) == (0, [], "claude-fable-5")
    else:
        assert (code, out, err) == (2, "", [f"error: {log}:7 seq 5: "
                                            + _CONFLICT.format(p=provider, a=api, c=catalog_api)])


@pytest.mark.parametrize("value", ["1e308", "-1", "0", "1e400", "null", '"x\\u001b[2J"', "1" + "0" * 5000, "[1]",
                                   "{}", "true", "-0", "1.5", "9007199254740993"])
def test_a_hostile_context_window_neither_crashes_nor_stops_a_render(value, tmp_path, monkeypatch, capsys):
    log = _pi_log(tmp_path / "s" / "session.jsonl", "anthropic", "claude-sonnet-4-5", "anthropic-messages",
                  context_window=value)
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "1")
    assert (code, err, json.loads(out)["model"]) == (0, [], "claude-sonnet-4-5")
    code, out, err = invoke(monkeypatch, capsys, "usage", "--json", "--by", "model", str(log))
    assert code == 0 and _clean(out, *err)


@pytest.mark.parametrize(("value", "kind"), [('"x\\u001b"', "string"), ("[1]", "array"), ("{}", "object"),
                                             ("true", "boolean")])
def test_a_max_tokens_of_the_wrong_type_is_one_error(value, kind, tmp_path, monkeypatch, capsys):
    log = _pi_log(tmp_path / "s" / "session.jsonl", "openai", "gpt-4o", "openai-responses", max_tokens=value)
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "1")
    assert (code, out, err) == (2, "", [
        f"error: {log}:7 seq 5: the call's maxTokens is a JSON {kind}, not a number; dsh-audit cannot work out the "
        "output cap pi-ai sends from it (hint: the log was edited or damaged; `dsh-audit validate` lists what else "
        "is wrong in it)"])


@pytest.mark.parametrize("defaults", ['{"maxTokens":true,"reasoningEffort":true}', '{"maxTokens":"x\\u001b"}', "[]",
                                      '"s"', '{"__proto__":true,"maxTokens":1}', '{"x\\u009b":true}'])
def test_hostile_adapter_defaults_are_refused_as_dsh_refuses_them(defaults, tmp_path, monkeypatch, capsys):
    log = _pi_log(tmp_path / "s" / "session.jsonl", "deepseek", "deepseek-v4-flash", "openai-completions",
                  defaults=defaults)
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "1")
    assert (code, out, err) == (2, "", [
        f"error: {log}:7 seq 5: seed request/header at index 5 has invalid adapterDefaults (hint: DSH accepts "
        'adapterDefaults only as an object whose keys are "reasoningEffort" or "maxTokens", each true and each set '
        "in the header's config; DSH refuses the log too (--lenient does not relax events); `dsh-audit validate FILE` "
        "lists every problem (rule DSH223))"])


# -- usage, sessions and stats over a hostile home -------------------------------------------------

HOSTILE = (ESC, "=cmd|' /C calc'!A0", "+1+1", "@SUM(A1)", "\ud800", 'a,b"c\nd', "<script>alert(1)</script>", "[/]")


@pytest.fixture(scope="module")
def hostile_sessions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A DSH home's ``sessions`` folder of one session per hostile value (its id, title, cwd and,
    every second one, its model), three days apart: written once for the module, as the commands
    below only read it."""
    home = tmp_path_factory.mktemp("hostile-home")
    for n, value in enumerate(HOSTILE):
        b = LogBuilder(session_id=f"s{n}-{value}", id_seed=f"seed{n}", created_at=1_800_000_000_000 + n * 259_200_000,
                       model="deepseek-v4-flash" if n % 2 == 0 else value, system="S" * 3000, cwd="/home/" + value)
        for t in range(3):
            with b.turn(f"t{t}"), b.step():
                b.assistant("a", usage={"inputTokens": 1000 + t, "outputTokens": 10, "cacheReadTokens": 500 * t})
        b.title(value)
        path = home / "sessions" / f"--p{n}--" / f"s{n}" / "session.jsonl"
        path.parent.mkdir(parents=True)
        path.write_text("".join(json.dumps(json.loads(line)) + "\n" for line in b.lines(packed=False)), "utf-8")
    return home / "sessions"


def _hostile_home(sessions: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """$DSH_HOME set to the home of ``sessions`` (the ``hostile_sessions`` fixture), 80 columns."""
    monkeypatch.setenv("DSH_HOME", str(sessions.parent))
    monkeypatch.setenv("COLUMNS", "80")
    return sessions


@pytest.fixture(scope="module")
def hostile_index(hostile_sessions: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    """``dsh-audit index`` of the hostile home, made once: ``stats`` only reads it."""
    db = str(tmp_path_factory.mktemp("hostile-index") / "a.sqlite")
    with pytest.MonkeyPatch.context() as monkeypatch:
        _hostile_home(hostile_sessions, monkeypatch)
        result = CliRunner().invoke(cli, ["index", str(hostile_sessions), "--db", db], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return db


def _no_formula(out: str) -> bool:
    """No CSV cell a spreadsheet reads as a formula (``=``, ``+``, ``@``)."""
    return not any(cell[:1] in ("=", "+", "@") for row in csv.reader(io.StringIO(out)) for cell in row)


@pytest.mark.parametrize("fmt", ["table", "json", "csv", "markdown"])
def test_usage_by_every_grouping_keeps_hostile_text_inert(fmt, hostile_sessions, monkeypatch, capsys):
    _hostile_home(hostile_sessions, monkeypatch)
    for by in ("session", "turn", "day", "model", "window", "request"):
        code, out, err = invoke(monkeypatch, capsys, "usage", "--by", by, "--format", fmt)
        assert code == 0 and _clean(out.replace("\r\n", "\n"), *err), by
        if fmt == "json":
            assert all(isinstance(json.loads(line), dict) for line in out.splitlines())
        if fmt == "csv":
            assert _no_formula(out), by


@pytest.mark.parametrize("fmt", ["table", "json", "csv", "markdown"])
def test_sessions_lists_the_same_with_and_without_paths(fmt, hostile_sessions, monkeypatch, capsys):
    sessions = _hostile_home(hostile_sessions, monkeypatch)
    runs = [invoke(monkeypatch, capsys, "sessions", "--format", fmt, *paths)
            for paths in ((), (str(sessions),), (str(sessions), str(sessions)))]
    assert runs[0] == runs[1] == runs[2] and runs[0][0] == 0 and runs[0][2] == []
    assert _clean(runs[0][1].replace("\r\n", "\n"))
    if fmt == "json":
        assert [json.loads(line)["title"] for line in runs[0][1].splitlines()] == list(reversed(HOSTILE))
    if fmt == "csv":
        assert _no_formula(runs[0][1])
    if fmt == "markdown":
        assert "\\<script\\>alert(1)\\</script\\>" in runs[0][1] and "<script>" not in runs[0][1]


def test_csv_quotes_each_hostile_title_as_text(hostile_sessions, monkeypatch, capsys):
    _hostile_home(hostile_sessions, monkeypatch)
    code, out, err = invoke(monkeypatch, capsys, "sessions", "--format", "csv")
    header, *rows = list(csv.reader(io.StringIO(out)))
    titles = [row[header.index("title")] for row in rows if len(row) == len(header)]
    assert (code, err, titles) == (0, [], [
        "[/]", "<script>alert(1)</script>", 'a,b"c\\u000ad', "\\ud800", "'@SUM(A1)", "'+1+1", "'=cmd|' /C calc'!A0",
        "x\\u001b]0;PWN\\u0007\\u202e\\u009b<b>[red]\\u000d\\u000a::error::y"])


_WHEN = ("(give a date (2026-11-01), today or yesterday (UTC days), a date-time (2026-11-01T08:30, or with an offset such as +01:00 or Z; UTC when "
         "none) or an age such as 90s, 30m, 12h, 7d or 2w)")


@pytest.mark.parametrize("value", ["\x1b[2J", "", "-1d", "1e308d", "2027-02-30", "2027-01-15T25:00",
                                   "2027-01-15T08:30+99:00", "nan"])
@pytest.mark.parametrize(("option", "command"), [("--since", "usage"), ("--until", "sessions")])
def test_an_unreadable_window_bound_is_one_error(value, option, command, hostile_sessions, monkeypatch, capsys):
    _hostile_home(hostile_sessions, monkeypatch)
    code, out, err = invoke(monkeypatch, capsys, command, option, value)
    shown = repr(value)
    assert (code, out, err) == (2, "", [
        f"error: Invalid value for '{option}': cannot read {option} {shown} {_WHEN} (hint: see `dsh-audit {command} "
        "--help`)"])


@pytest.mark.parametrize(("args", "note"), [
    (("--since", "9999-12-31"), "note: --since 9999-12-31T00:00:00Z: 8 of 8 log(s) with no activity in that window "
                                "(by the logs' own timestamps) left out"),
    (("--until", "0001-01-01"), "note: --until 0001-01-02T00:00:00Z: 8 of 8 log(s) with no activity in that window "
                                "(by the logs' own timestamps) left out"),
    (("--until", "99999999999w"), "note: --until -6.048e+16 s after the epoch (outside the years 1-9999): 8 of 8 "
                                  "log(s) with no activity in that window (by the logs' own timestamps) left out"),
])
def test_a_window_past_every_log_is_a_note(args, note, hostile_sessions, monkeypatch, capsys):
    _hostile_home(hostile_sessions, monkeypatch)
    code, out, err = invoke(monkeypatch, capsys, "sessions", "--json", *args)
    assert (code, out, err) == (0, "", [note])


@pytest.mark.parametrize("fmt", ["table", "json", "csv", "markdown"])
def test_stats_of_a_hostile_index_is_inert(fmt, hostile_sessions, hostile_index, monkeypatch, capsys):
    _hostile_home(hostile_sessions, monkeypatch)
    db = hostile_index
    for extra in ((), ("--top", "0")):
        code, out, err = invoke(monkeypatch, capsys, "stats", "--db", db, "--format", fmt, *extra)
        assert code == 0 and _clean(out.replace("\r\n", "\n"), *err), extra
        if fmt == "csv":
            assert _no_formula(out)


def test_the_html_report_carries_hostile_strings_as_data(hostile_sessions, monkeypatch, capsys):
    _hostile_home(hostile_sessions, monkeypatch)
    code, out, err = invoke(monkeypatch, capsys, "report", "-o", "-")
    assert (code, err) == (0, ["wrote stdout: 8 log(s), 32 request(s), check passed: no breaks"])
    assert re.findall(r"<script[^>]*>", out) == ['<script type="application/json" id="dsh-data">', "<script>"]
    assert "alert(1)</script>" not in out and "<b>[red]" not in out and "[/]" in out
    assert not any(c in out for c in "\x1b\x07\x9b\u202e\x00")


# -- redact: secrets in unusual encodings, in kept parts -------------------------------------------

#: Secrets planted in the system prompt (kept with --keep system), and the value of each that must go.
SECRETS = [
    ("key sk-proj-Ab3dEf5hIj7lMn9pQr1tUv here", "Ab3dEf5hIj7lMn9pQr1tUv"),
    ("GET /x?next=https%3A%2F%2Fa.b%2Fv1%3Fkey%3Dsk-proj-Pq3dEf5hIj7lMn9pQr1tZz", "Pq3dEf5hIj7lMn9pQr1tZz"),
    ("u=" + "".join(f"%{ord(c):02X}" for c in "sk-proj-Wq3dEf5hIj7lMn9pQr1tWw"), "%57%71%33"),
    ("u=" + "".join(f"%25{ord(c):02X}" for c in "sk-proj-Xq3dEf5hIj7lMn9pQr1tXx"), "%2558%2571%2533"),
    ("clone https://bob:S3cretPassW0rd99@git.example.com/repo.git", "S3cretPassW0rd99"),
    ("dsn=postgres%3A%2F%2Fadmin%3AHunter2Zq8pass%40db", "Hunter2Zq8pass"),
    ("token ghp_Ab3dEf5hIj7lMn9pQr1tUvAb3dEf5hIj7l", "ghp_Ab3dEf5hIj7lMn9pQr1tUvAb3dEf5hIj7l"),
    ("AKIAIOSFODNN7EXAMPL3 in text", "AKIAIOSFODNN7EXAMPL3"),
    ("curl -H 'Authorization: Bearer Zx9Bearer0Tok3nValue'", "Zx9Bearer0Tok3nValue"),
]


def test_redact_takes_encoded_secrets_from_a_kept_system_prompt(tmp_path, monkeypatch, capsys):
    b = LogBuilder(session_id="s-red", id_seed="r", system="Sys " + " ".join(text for text, _ in SECRETS))
    with b.turn("Hi"), b.step():
        b.assistant("Hello")
    log = b.write_jsonl(tmp_path / "s" / "session.jsonl", packed=False)
    out_path = tmp_path / "o" / "o.jsonl"
    out_path.parent.mkdir()
    code, out, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(out_path), "--salt", "s", "--keep",
                            "system")
    assert (code, err) == (0, [short_salt("s")])
    assert out.splitlines()[-4:-2] == [  # before the recipient's two commands
        "secrets removed: authorization 1 (1 occurrence(s)), aws_access_key_id 1 (1 occurrence(s)), github_token 1 "
        "(1 occurrence(s)), openai_api_key 4 (4 occurrence(s)), url_credentials 2 (2 occurrence(s))",
        "verdicts of requests, breaks, cache: unchanged"]
    text = out_path.read_text("utf-8")
    system = next(json.loads(line)["data"]["header"]["system"] for line in text.splitlines()
                  if '"request/header"' in line)
    assert system.startswith("Sys key ") and len(system.encode()) == len(b.events[5]["data"]["header"]["system"]
                                                                         .encode())
    assert [value for _, value in SECRETS if value in text] == []


def test_redact_takes_a_key_cut_across_two_tool_results(tmp_path, monkeypatch, capsys):
    b = LogBuilder(session_id="s-cut", id_seed="c")
    with b.turn("Read it."):
        with b.step():
            call = b.assistant("Reading.", tool_calls=[ToolCall("read", {"path": "a.txt"}, id="call_1")])
            b.tool_result(call.call_ids[0], [{"type": "text", "text": "sk-proj-Sp1itAcr0ss"},
                                             {"type": "text", "text": "ItemsQw9xAbCdEf"}])
        with b.step():
            b.assistant("Done.")
    log = b.write_jsonl(tmp_path / "s" / "session.jsonl", packed=False)
    out_path = tmp_path / "o" / "o.jsonl"
    out_path.parent.mkdir()
    code, out, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(out_path), "--salt", "s", "--keep",
                            "tools")
    assert (code, err, out.splitlines()[-4]) == (0, [short_salt("s")], "secrets removed: openai_api_key 1 (1 occurrence(s))")
    assert "Sp1itAcr0ss" not in out_path.read_text("utf-8") and "ItemsQw9x" not in out_path.read_text("utf-8")


def test_redact_writes_no_raw_c1_or_bidi_from_a_session_id(tmp_path, monkeypatch, capsys):
    """Round 11's defect, closed since: a C1 CSI or a bidi override in a kept id is written escaped."""
    log = chat_log(tmp_path / "r1" / "session.jsonl", "SID")
    log.write_text(log.read_text("utf-8").replace('"SID"', json.dumps("sid-\x9b\u202e\u2066-x")), "utf-8")
    code, out, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(tmp_path / "r1" / "out.jsonl"),
                            "--salt", "s")
    text = (tmp_path / "r1" / "out.jsonl").read_text("utf-8")
    assert (code, err) == (0, [short_salt("s")]) and not any(c in text for c in "\x9b\u202e\u2066")
    assert {json.loads(line).get("id") for line in text.splitlines()} >= {"sid-\x9b\u202e\u2066-x"}


# -- capture lanes over hostile wire.jsonl files ---------------------------------------------------

def _wire(tmp_path: Path, records: list[dict[str, Any]], *, text: str | None = None) -> Path:
    """``records`` as a wire.jsonl (each changed body's digest and size dropped), or ``text`` as it is."""
    original = {json.loads(line)["body"] for line in (A_CHAT / "wire.jsonl").read_text("utf-8").splitlines()}
    lines = []
    for record in records:
        if record.get("body") not in original:
            record = {k: v for k, v in record.items() if k not in ("body_sha256", "body_bytes")}
        lines.append(json.dumps(record) + "\n")
    path = tmp_path / "w" / "wire.jsonl"
    path.parent.mkdir()
    path.write_text("".join(lines) if text is None else text, "utf-8")
    return path


def _records() -> list[dict[str, Any]]:
    return [json.loads(line) for line in (A_CHAT / "wire.jsonl").read_text("utf-8").splitlines()]


def _verdicts(out: str) -> list[tuple[int | None, str]]:
    """Each row's request index and verdict."""
    return [(row["index"], row["verdict"]) for row in map(json.loads, out.splitlines())]


_PAIRED = [(0, "identical"), (1, "identical"), (2, "identical")]
# this session's records whose body cannot be read pair by session header and order, `different`
_UNREADABLE = [(0, "different"), (1, "different"), (2, "different")]
_NONE = [(0, "unmatched"), (1, "unmatched"), (2, "unmatched"), (None, "foreign"), (None, "foreign"), (None, "foreign")]


@needs_corpus
@pytest.mark.parametrize(("name", "make", "code", "verdicts"), [
    ("every record twice", lambda w: w + w, 1, [(0, "identical"), (0, "identical"), (1, "identical"),
                                                (2, "identical"), (None, "unmatched"), (None, "unmatched")]),
    ("every seq 1", lambda w: [dict(r, seq=1) for r in w], 0, _PAIRED),
    ("each record three times in a row", lambda w: [r for r in w for _ in range(3)], 0,
     [pair for pair in _PAIRED for _ in range(3)]),
    ("hostile seqs", lambda w: [dict(r, seq=s) for r, s in zip(w, [ESC, 1e308, -1])], 0, _PAIRED),
    ("bodies not JSON", lambda w: [dict(r, body="not json {") for r in w], 1, _UNREADABLE),
    ("bodies null", lambda w: [dict(r, body=None) for r in w], 1, _UNREADABLE),
    ("hostile headers", lambda w: [dict(r, headers=dict(r["headers"], **{"x-deepseek-harness-session-id": ESC}),
                                        path=ESC, method=ESC, kind=ESC) for r in w], 1, _NONE),
    ("response hostile", lambda w: [dict(r, response={"script": {"text": ESC}, "usage": ESC}) for r in w], 0,
     _PAIRED),
])
def test_diff_over_a_hostile_capture(name, make, code, verdicts, tmp_path, monkeypatch, capsys):
    log = next((A_CHAT / "session-logs").iterdir())
    wire = _wire(tmp_path, make(_records()))
    got, out, err = invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(wire), "--json")
    assert (got, _verdicts(out)) == (code, verdicts), name
    assert _clean(out, *err)
    got, out, err = invoke(monkeypatch, capsys, "check", str(log), "--capture", str(wire))
    assert got in (0, 1) and _clean(out, *err)


@needs_corpus
@pytest.mark.parametrize(("make", "message"), [
    (lambda w: [dict(r, body=5) for r in w],
     "line 1: body is a JSON number, not text (hint: each record needs `body` (text) or `body_base64`)"),
    (lambda w: [dict(r, headers=[1, 2]) for r in w],
     'line 1: headers must be an object of name to value (hint: write headers as {"content-type": '
     '"application/json", ...})'),
    (lambda w: [dict(r, body_sha256="0" * 64) for r in w],
     "line 1: body does not match its body_sha256 (hint: the capture was edited or re-encoded; recapture or drop "
     "body_sha256)"),
])
def test_a_capture_record_of_the_wrong_shape_is_one_error(make, message, tmp_path, monkeypatch, capsys):
    log = next((A_CHAT / "session-logs").iterdir())
    records = make(_records())
    wire = _wire(tmp_path, records, text="".join(json.dumps(r) + "\n" for r in records))
    for command in (["diff", str(log)], ["check", str(log)],
                    ["redact", str(log), "-o", str(tmp_path / "o.jsonl"), "--salt", "s", "--any-capture"]):
        code, out, err = invoke(monkeypatch, capsys, *command, "--capture", str(wire))
        assert (code, out, err) == (2, "", [f"error: {wire}: {message}"]), command[0]


@needs_corpus
@pytest.mark.parametrize(("edit", "message"), [
    (lambda t: t.replace('"seq": 1,', '"seq": NaN,', 1),
     "line 1: not a JSON record (NaN is not JSON) (hint: a wire.jsonl capture has one JSON object per line)"),
    (lambda t: t.split("\n", 1)[0] + "\ngarbage\x1b[2J\n" + t.split("\n", 1)[1],
     "line 2: not a JSON record (Expecting value: line 1 column 1 (char 0)) (hint: a wire.jsonl capture has one JSON "
     "object per line)"),
    (lambda t: "[]\n", "not a capture format dsh-audit knows (hint: expected a wire.jsonl file, a HAR 1.2 file or a "
                       "folder of *.json bodies)"),
])
def test_a_capture_that_is_not_json_lines_is_one_error(edit, message, tmp_path, monkeypatch, capsys):
    log = next((A_CHAT / "session-logs").iterdir())
    wire = _wire(tmp_path, [], text=edit((A_CHAT / "wire.jsonl").read_text("utf-8")))
    code, out, err = invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(wire))
    assert (code, out, err) == (2, "", [f"error: {wire}: {message}"])


@needs_corpus
def test_a_capture_of_many_requests_sharing_bodies_stays_bounded(tmp_path, monkeypatch, capsys):
    """300 records, the session's three bodies over and over: each loop request pairs once, the title
    request with every title send (100), the other 198 are sends the log does not explain."""
    log = next((A_CHAT / "session-logs").iterdir())
    wire = _wire(tmp_path, [dict(record, seq=n) for n in range(100) for record in _records()])
    code, out, err = invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(wire), "--json")
    rows = _verdicts(out)
    assert (code, len(rows), rows.count((0, "identical")), rows.count((None, "unmatched"))) == (1, 300, 100, 198)
    assert [row for row in rows if row[0] != 0 and row[0] is not None] == [(1, "identical"), (2, "identical")]
