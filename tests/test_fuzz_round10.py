"""Fuzz round 10 (issue 15): pi-ai route files and the DSH home's profiles and settings, the
openai-responses, Anthropic and OpenRouter renderers on hostile logs, price files and ``usage``'s
options, session references over hostile trees, ``redact`` and ``watch`` (docs/hostile-inputs.md,
"Round 10").

The defects it found in files it could change, each with a test below that failed before its fix:

- two profiles of a DSH home whose patch layers hold a configuration that holds itself (``config: &r
  {..., self: *r}``, which DSH's YAML readers read) made every command on a log of that home exit 3
  (``RecursionError`` comparing the profiles' compositions, ``wire/_piai_home.py``);
- two profiles whose layers hold the same 1 KB mapping alias bomb (9**9 paths) were compared path
  by path, in C: every command on the home ran past 30 s;
- a price file's ``per_tokens`` and ``currency`` were ignored: rates written per thousand tokens were
  read per million, a thousand times too low, silently (``cache/_prices.py``);
- ``cache`` over the DSH home (no PATH) exited 3 when a log was a symlink loop (``os.stat`` in its
  sort by modification time, ``cli/_cache.py``);
- a route's ``input`` or ``defaultInput`` naming a kind pi-ai has not (``video``, an escape) was
  accepted; DSH's schema refuses it (``wire/_piai_routes.py``);
- ``diff`` of two JS-equal bodies spelled differently tokenised them with a regex that keeps state
  per character of a string: two 16 MiB bodies took 2 GB and 13 s (now 162 MB, 0.75 s), and the first
  differing byte was found a byte at a time in Python (``diff.py``);
- a settings document in JSON was read with Python's rules: ``NaN`` accepted, an integer of 5,000
  digits and 5,000 levels refused in Python's words (``wire/_piai_home.py``);
- a thinking signature nested past Python's parser (JSON all the same, which pi-ai's ``JSON.parse``
  reads) was said to be "not JSON", from a log "edited or damaged" (``wire/_responses.py``);

and one in a file another session held (``redact/*``), shown by a strict xfail until it is fixed:

- a tool call whose arguments nest deeper than dsh-audit parses (5,000 levels: DSH's ``JSON.parse``
  reads them, so the request cannot be rebuilt and is compared as log JSON) is redacted into a
  placeholder that is not JSON, which renders: ``redact`` exits 1, "cache verdicts differ".

The rest of the module is a compact sweep of the cases that already held, each with its exact
outcome.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _cli import chat_log, invoke, short_salt
from test_piai_images import reply
from test_routes_layers import make_home

from dsh_audit.testing import LogBuilder, ToolCall, tool_schema
from dsh_audit.wire import load_home_routes

ESC = "x\x1b]0;PWN\x07\u202e\x9b<b>[red]"
SHOWN = "x\\x1b]0;PWN\\x07\\u202e\\x9b<b>[red]"  # as an error line shows it (repr: no raw control)
LOCAL = ("local-openai", "local-coder", "openai-completions")
ROUTES = ("providers:\n  local-openai:\n    api: openai-completions\n    baseURL: http://127.0.0.1:1/v1\n"
          "    models:\n      - id: local-coder\n        contextWindow: {cw}\n        maxTokens: 8192\n")
CONFIG = ("{providers: {local-openai: {api: openai-completions, baseURL: 'http://x/v1', "
          "models: [{id: local-coder, contextWindow: 1000000}]}}}")

_FILE_HINT = "(hint: give --routes a YAML file with DSH's llm-pi-ai route configuration)"
_CONFIG_HINT = "(hint: see DSH's llm-pi-ai configuration: providers.<id>.api, baseURL, models)"


def _local_log(path: Path) -> Path:
    """A one-turn chat on the hand-declared pi-ai route local-openai (openai-completions)."""
    b = LogBuilder(session_id="s-local", provider=LOCAL[0], model=LOCAL[1], system="Sys.", tools=[],
                   reasoning_effort=None, max_tokens=1000)
    with b.turn("Hi."):
        with b.step():
            reply(b, *LOCAL, "Hello.")
    return b.write_jsonl(path)


def _mapping_bomb(indent: str) -> str:
    """Ten anchored mappings, each naming the one before under nine keys: 9**9 paths in 1 KB."""
    lines = ["m0: &m0 {" + ", ".join(f"k{j}: 1" for j in range(9)) + "}"]
    lines += [f"m{i}: &m{i} {{" + ", ".join(f"k{j}: *m{i - 1}" for j in range(9)) + "}" for i in range(1, 10)]
    return "".join(f"{indent}{line}\n" for line in lines)


# -- the DSH home's profiles: compositions compared -----------------------------------------------

def test_profiles_whose_configuration_holds_itself_compose_alike(tmp_path, monkeypatch, capsys):
    layer = f"- id: llm-pi-ai\n  config: &r {CONFIG[:-1]}, self: *r}}\n"
    home = make_home(tmp_path, profiles={"a": layer, "b": layer})
    log = _local_log(home / "sessions" / "--proj--" / "s" / "session.jsonl")
    routes = load_home_routes(home)
    assert routes is not None and (routes.layers, routes.notes, dict(routes.apis)) == (
        (str(home / "profiles" / "a" / "cordis.patch.yml"),), (), {"local-openai": "openai-completions"})
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "0")
    layer_file = home / "profiles" / "a" / "cordis.patch.yml"
    assert (code, err, json.loads(out)["model"]) == (0, [
        f"note: route configuration from {layer_file} (the llm-pi-ai row of DSH profile a's patch layer; "
        "--routes FILE overrides it)"], "local-coder")


def test_profiles_whose_configurations_hold_themselves_differently_are_not_guessed(tmp_path):
    layers = {name: f"- id: llm-pi-ai\n  config: &r {CONFIG[:-1].replace('http://x', url)}, self: *r}}\n"
              for name, url in (("a", "http://a"), ("b", "http://b"))}
    home = make_home(tmp_path, profiles=layers)
    routes = load_home_routes(home)
    assert routes is not None and (routes.layers, len(routes.notes)) == ((), 1)
    assert routes.notes[0].startswith(f"the profiles of DSH home {home} (a, b) compose different llm-pi-ai routes")


def test_an_alias_bomb_in_two_profiles_is_compared_once(tmp_path):
    """In a child process: before the fix the comparison ran in C, where no alarm interrupts it."""
    layer = ("- id: anchors\n  a:\n" + _mapping_bomb("    ") + f"- id: llm-pi-ai\n  config:\n    providers: "
             f"{CONFIG[12:-1]}\n    x: *m9\n")
    home = make_home(tmp_path, profiles={"a": layer, "b": layer})
    probe = ("import sys; from dsh_audit.wire import load_home_routes; r = load_home_routes(sys.argv[1]); "
             "print(r.layers, len(r.notes))")

    def run() -> str:
        return subprocess.run([sys.executable, "-c", probe, str(home)], capture_output=True, text=True, timeout=10,
                              check=True).stdout

    assert run() == f"('{home / 'profiles' / 'a' / 'cordis.patch.yml'}',) 0\n"
    other = layer.replace("k8: 1}", "k8: 2}")  # the same bomb but for one leaf: compared to that leaf, once
    (home / "profiles" / "b" / "cordis.patch.yml").write_text(other, encoding="utf-8")
    assert run() == "() 1\n"


# -- route files: input kinds -----------------------------------------------------------------------

@pytest.mark.parametrize(("key", "kinds"), [("input", '[image, "\\e[2J"]'), ("input", "[text, video]"),
                                            ("defaultInput", "[text, audio]")])
def test_a_route_declaring_an_input_kind_pi_ai_has_not_is_refused(key, kinds, tmp_path, monkeypatch, capsys):
    """DSH's schema takes ``text`` and ``image`` only (``config.ts`` ``z.array(z.union(MODALITIES))``,
    ``catalog.ts`` ``MODALITY_GATE``); any string was accepted, an escape included."""
    text = ROUTES.format(cw=1000000) + f"        input: {kinds}\n"
    where = "providers.local-openai.models[0].input: must be a list"
    if key == "defaultInput":
        text = ROUTES.format(cw=1000000).replace("    models:", f"    defaultInput: {kinds}\n    models:")
        where = "providers.local-openai.defaultInput: must be a non-empty list"
    args = _local(tmp_path, "render", "0", "--routes", _routes(tmp_path, text))
    code, out, err = invoke(monkeypatch, capsys, *args)
    assert (code, out, err) == (2, "", [f"error: {tmp_path}/routes.yml: route file: {where} of input kinds (text, "
                                        f"image) {_CONFIG_HINT}"])


# -- the settings document in JSON: read as JSON.parse reads it ----------------------------------

@pytest.mark.parametrize(("number", "err"), [
    ("NaN", "cannot read the settings file as JSON: 'NaN is not JSON' (hint: see DSH's settings document: a map of "
            "namespace sections, llm-pi-ai: {providers: ...})"),
    ("1" + "0" * 5000, "route configuration composed from {home}/cordis.patch.yml + {home}/s.json: "
                       "providers.local-openai.models[0].maxTokens: must be a positive integer " + _CONFIG_HINT),
    ("[" * 5000 + "]" * 5000, "cannot read the settings file as JSON: 'it nests objects or arrays too deeply' (hint: "
                              "see DSH's settings document: a map of namespace sections, llm-pi-ai: {providers: ...})"),
])
def test_a_json_settings_document_is_read_as_json_parse_reads_it(number, err, tmp_path, monkeypatch, capsys):
    """``NaN`` (which ``JSON.parse`` refuses) was read; an integer of 5,000 digits (Infinity to
    ``JSON.parse``) and 5,000 levels were refused in Python's words (``Exceeds the limit (4300 dig...``,
    ``maximum recursion depth exc...``)."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "cordis.patch.yml").write_text(f"- id: settings\n  config: {{path: {home}/s.json}}\n- id: llm-pi-ai\n"
                                           f"  config: {CONFIG}\n", "utf-8")
    (home / "s.json").write_text('{"llm-pi-ai": {"providers": {"local-openai": {"models": [{"id": "local-coder", '
                                 f'"maxTokens": {number}' + "}]}}}}", "utf-8")
    log = _local_log(home / "sessions" / "--proj--" / "s" / "session.jsonl")
    code, out, lines = invoke(monkeypatch, capsys, "render", str(log), "0")
    assert (code, out, lines) == (2, "", [f"error: {home}/s.json: " + err.replace("{home}", str(home))])


# -- the openai-responses renderer: a signature nested past the parser ---------------------------

def test_a_reasoning_signature_too_deep_to_parse_is_not_called_not_json(tmp_path, monkeypatch, capsys):
    """5,000 levels of arrays are JSON, which pi-ai's ``JSON.parse`` reads: the request was said to be
    one DSH could not have sent, from a log "edited or damaged"; it is one dsh-audit cannot rebuild."""
    args = _resp(tmp_path, "render", "1", signature="[" * 5000 + "]" * 5000)
    code, out, err = invoke(monkeypatch, capsys, *args)
    assert (code, out, err) == (2, "", [
        f"error: {args[1]}:18 seq 16: a reasoning block's thinking signature nests JSON objects or arrays too deep for "
        "dsh-audit to parse; DSH's JSON.parse reads it, so the body it sent cannot be rebuilt (hint: the request is "
        "compared as log JSON where a view needs its prompt)"])


# -- diff: two large bodies that differ in spelling only ---------------------------------------------

DIFF_PROBE = """
import resource, sys
from dsh_audit.diff import diff_bodies

big = "q" * (8 << 20)
expected = ('{"model":"m","messages":[{"role":"user","content":"' + big + '"}],"x":"a/b"}').encode()
actual = expected.replace(b'"a/b"', b'"a\\\\/b"')
with open("/proc/self/status", encoding="ascii") as status:
    size = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (size + (256 << 20), size + (256 << 20)))
found = diff_bodies(expected, actual)
print(found.verdict, found.first_offset, [(d.path, d.change) for d in found.differences])
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="the address space is measured from /proc (Linux)")
def test_a_long_string_in_bodies_equal_but_for_spelling_is_read_in_bounded_memory():
    """Telling how two JS-equal bodies are spelled tokenised them with ``"(?:[^"\\\\]|\\\\.)*"``, for which
    Python's regex engine keeps state per character: two 16 MiB bodies took 2 GB and 13 s (an 8 MiB
    string: about 1 GB); the first differing byte was looked for a byte at a time in Python."""
    done = subprocess.run([sys.executable, "-c", DIFF_PROBE], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (
        0, f"equivalent {(8 << 20) + 61} [('x', 'string escaping')]\n", "")


# -- cache over the DSH home: a log that is a symlink loop ---------------------------------------

def test_cache_of_the_home_reports_a_symlink_loop_and_reads_the_rest(tmp_path, monkeypatch, capsys):
    """``cache`` without PATH sorts the home's logs by modification time: a log that is a symlink loop
    made it exit 3 (``OSError: Too many levels of symbolic links`` from ``os.stat``)."""
    chat_log(tmp_path / "sessions" / "p" / "ok" / "session.jsonl", "ok")
    loop = tmp_path / "sessions" / "p" / "loop" / "session.jsonl"
    loop.parent.mkdir()
    loop.symlink_to("session.jsonl")
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    code, out, err = invoke(monkeypatch, capsys, "cache", "--json")
    assert (code, err, [json.loads(line)["session_id"] for line in out.splitlines()]) == (
        2, [f"error: {loop}: cannot open: symlink loop"], ["ok"])


# -- price files: the unit of their rates ---------------------------------------------------------

@pytest.mark.parametrize(("key", "value", "shown", "unit"), [
    ("per_tokens", 1000, "1000", "per 1000000 tokens"),
    ("per_tokens", True, "true", "per 1000000 tokens"),
    ("currency", "EUR", '"EUR"', "in USD"),
    ("currency", ESC, '"x\\u001b]0;PWN\\u0007\\u202e\\u009b<b>[red]"', "in USD"),
])
def test_a_price_file_of_another_unit_is_refused(key, value, shown, unit, tmp_path, monkeypatch, capsys):
    """A price file's ``per_tokens`` and ``currency`` were ignored: rates written per 1000 tokens were
    read per million, a thousand times too low, without a word."""
    log = chat_log(tmp_path / "s" / "session.jsonl", "s")
    prices = tmp_path / "p.json"
    prices.write_text(json.dumps({key: value, "providers": {"deepseek": {"models": {"deepseek-v4-flash": [
        {"cache_miss": 0.3, "cache_read": 0.03, "output": 0.5}]}}}}), "utf-8")
    code, out, err = invoke(monkeypatch, capsys, "usage", str(log), "--prices", str(prices))
    packaged = "1000000" if key == "per_tokens" else '"USD"'  # as JSON writes it
    assert (code, out, err) == (2, "", [
        f"error: {prices}: price table key {key}: {shown} is not the packaged table's "
        f"{packaged}: every rate is read {unit} (leave it out and give the rates "
        f"{unit}) (hint: fix this key in the --prices file; "
        f"the Price files section of docs/cache-accounting.md gives the shape)"])
    assert "\x1b" not in "".join(err)


def test_a_price_file_naming_the_packaged_unit_is_read(tmp_path, monkeypatch, capsys):
    log = chat_log(tmp_path / "s" / "session.jsonl", "s")
    prices = tmp_path / "p.toml"
    prices.write_text('per_tokens = 1000000.0\ncurrency = "USD"\n[providers.deepseek.models]\n'
                      '"deepseek-v4-flash" = {cache_miss = 0.3, cache_read = 0.03, output = 0.5}\n', "utf-8")
    code, out, err = invoke(monkeypatch, capsys, "usage", str(log), "--prices", str(prices), "--json")
    assert (code, err, json.loads(out)["sessions"]) == (0, [], 1)


# -- redact: arguments nested deeper than dsh-audit parses -----------------------------------------

def test_redact_keeps_arguments_too_deep_to_parse_unrenderable(tmp_path, monkeypatch, capsys):
    """Arguments nested 5,000 deep are JSON the parser cannot read: redaction replaces only their
    strings, so the redacted request stays unrenderable as the original is (before: a same-length
    placeholder that is no JSON rendered as ``{}`` and the cache verdict changed)."""
    b = LogBuilder(session_id="deep", provider="anthropic", model="claude-sonnet-4-5", system="Sys.",
                   tools=[tool_schema("read", "Read.", {"path": {"type": "string"}})], reasoning_effort=None,
                   max_tokens=1000)
    with b.turn("Hi."):
        with b.step():
            r = reply(b, "anthropic", "claude-sonnet-4-5", "anthropic-messages", None,
                      tool_calls=[ToolCall("read", "[" * 5000 + "]" * 5000, id="toolu_1")])
            b.tool_result(r.call_ids[0], "A")
        with b.step():
            reply(b, "anthropic", "claude-sonnet-4-5", "anthropic-messages", "Done.")
    log = b.write_jsonl(tmp_path / "session.jsonl")
    code, out, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(tmp_path / "r.jsonl"), "--salt", "s")
    assert (code, err, out.splitlines()[-3]) == (0, [short_salt("s")], "verdicts of requests, breaks, cache: unchanged")


# -- the sweep: cases that held, each with its exact outcome ----------------------------------------

RS1 = {"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": "Look."}],
       "encrypted_content": "E1"}
PNG = bytes(range(12))
PNG_ID = "sha256:" + hashlib.sha256(PNG).hexdigest()


def _responses_log(path: Path, *, signature: str = json.dumps(RS1), call_id: str = "call_1|fc_1",
                   tool: str = "read", media: str | None = None) -> Path:
    """A two-step turn on pi-ai's openai-responses route (gpt-5): a reasoning block with ``signature``,
    a tool call ``call_id`` to ``tool``, then an answer; the prompt holds an image of ``media``."""
    b = LogBuilder(session_id="s-resp", provider="openai", model="gpt-5", system="Sys.",
                   tools=[tool_schema(tool, "Read.", {"path": {"type": "string"}})], reasoning_effort="high",
                   max_tokens=None, context_window=None)
    prompt: Any = "Hi."
    if media is not None:
        prompt = [{"type": "text", "text": "see"}, {"type": "image", "attachment": {
            "attachmentId": PNG_ID, "mediaType": media, "bytes": len(PNG), "width": 1, "height": 1}}]
    with b.turn(prompt):
        with b.step():
            r = reply(b, "openai", "gpt-5", "openai-responses", None, reasoning="Look.",
                      tool_calls=[ToolCall(tool, '{"path":"a"}', id=call_id)])
            b.event(r.seq)["data"]["message"]["source"]["replayState"]["blocks"][0]["thinkingSignature"] = signature
            b.tool_result(r.call_ids[0], "A")
        with b.step():
            reply(b, "openai", "gpt-5", "openai-responses", "Done.")
    return b.write_jsonl(path)


def _routes(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "routes.yml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


def _fifo(tmp_path: Path, name: str) -> Path:
    os.mkfifo(tmp_path / name)
    return tmp_path / name


_BOMB9 = "".join(f"a{i}: &a{i} {{" + ", ".join(f"k{j}: *a{i - 1}" if i else f"k{j}: 1" for j in range(9)) + "}\n"
                 for i in range(10))

def _local(t: Path, command: str, *rest: object) -> list[str]:
    return [command, str(_local_log(t / "s" / "session.jsonl")), *map(str, rest)]


def _resp(t: Path, command: str, *rest: object, **log: Any) -> list[str]:
    return [command, str(_responses_log(t / "s" / "session.jsonl", **log)), *map(str, rest)]


def _log(t: Path, command: str, *rest: object) -> list[str]:
    return [command, str(chat_log(t / "s" / "session.jsonl", "s")), *map(str, rest)]


def _priced(t: Path, table: Any) -> list[str]:
    (t / "p.json").write_text(table if isinstance(table, str) else json.dumps(table), "utf-8")
    return _log(t, "usage", "--prices", t / "p.json")


def _home(t: Path, m: pytest.MonkeyPatch, *args: str) -> list[str]:
    """``args`` over a DSH home of the sessions abc1, abc2 and :data:`ESC`."""
    for n, sid in enumerate(("abc1", "abc2", ESC)):
        chat_log(t / "sessions" / "p" / f"s{n}" / "session.jsonl", sid)
    m.setenv("DSH_HOME", str(t))
    return list(args)


_FLASH = {"cache_miss": 0.3, "cache_read": 0.03, "output": 0.5}
_WHEN = ("(give a date (2026-11-01), today or yesterday (UTC days), a date-time (2026-11-01T08:30, or with an offset such as +01:00 or Z; UTC when "
         "none) or an age such as 90s, 30m, 12h, 7d or 2w) (hint: see `dsh-audit usage --help`)")


#: (case, a function of tmp_path and monkeypatch giving the command line, exit code, the whole of stderr with ``{T}``
#: for tmp_path). Each held before this round's fixes.
SWEEP: list[tuple[str, Any, int, list[str]]] = [
    ("routes: a 3,000-digit hex contextWindow",
     lambda t, m: _local(t, "render", "0", "--routes", _routes(t, ROUTES.format(cw="0x" + "f" * 3000))),
     2, ["error: {T}/routes.yml: route file: providers.local-openai.models[0].contextWindow: must be a positive "
         "integer " + _CONFIG_HINT]),
    ("routes: a python tag",
     lambda t, m: _local(t, "render", "0", "--routes",
                         _routes(t, ROUTES.format(cw="!!python/object/apply:os.system ['true']"))),
     2, ["error: {T}/routes.yml: route file is not valid YAML at line 7: could not determine a constructor for the tag "
         "'tag:yaml.org,2002:python/object/apply:os.system' " + _FILE_HINT]),
    ("routes: 1 and '1' as keys",
     lambda t, m: _local(t, "render", "0", "--routes", _routes(t, "providers: {1: {}, '1': {}}\n")),
     2, ["error: {T}/routes.yml: route file is not valid YAML at line 1: duplicated mapping key '1' (DSH's YAML reader "
         "refuses it) " + _FILE_HINT]),
    ("routes: UTF-16",
     lambda t, m: _local(t, "render", "0", "--routes", _routes(t, ROUTES.format(cw=1000).encode("utf-16"))),
     2, ["error: {T}/routes.yml: route file is not UTF-8 text (byte 0) " + _FILE_HINT]),
    ("routes: a tab",
     lambda t, m: _local(t, "render", "0", "--routes", _routes(t, ROUTES.format(cw=1000).replace("    api", "\tapi"))),
     2, ["error: {T}/routes.yml: route file is not valid YAML at line 3: found character '\\t' that cannot start any "
         "token " + _FILE_HINT]),
    ("routes: an unknown api with escapes", lambda t, m: _local(t, "render", "0", "--routes", _routes(
        t, ROUTES.format(cw=1000).replace("openai-completions", '"\\e[2J\\u202e"'))),
     2, ["error: {T}/routes.yml: route file: providers.local-openai.api: unknown pi-ai api '\\x1b[2J\\u202e' (known: "
         "anthropic-messages, azure-openai-responses, bedrock-converse-stream, google-generative-ai, "
         "google-vertex, mistral-conversations, openai-codex-responses, openai-completions, openai-responses) "
         + _CONFIG_HINT]),
    ("routes: a FIFO", lambda t, m: _local(t, "render", "0", "--routes", _fifo(t, "routes.yml")),
     2, ["error: {T}/routes.yml: is a FIFO, not a route file (hint: only regular files are read)"]),
    ("routes: a compat alias bomb", lambda t, m: _local(t, "render", "0", "--routes", _routes(
        t, _BOMB9 + ROUTES.format(cw=1000000).replace("    models:", "    compat: *a9\n    models:"))), 2,
     # refused at its first switch, as DSH's compat gate refuses a name no wire protocol declares: the aliases are
     # never expanded
     ["error: {T}/routes.yml: route file: providers.local-openai.compat.k0: no wire protocol declares it (DSH's "
      "compat gate); the configurable switches are supportsStore, supportsDeveloperRole, supportsReasoningEffort, "
      "supportsUsageInStreaming, maxTokensField, requiresToolResultName, requiresAssistantAfterToolResult, "
      "requiresThinkingAsText, requiresReasoningContentOnAssistantMessages, thinkingFormat, chatTemplateKwargs, "
      "supportsStrictMode, cacheControlFormat, supportsLongCacheRetention, supportsEagerToolInputStreaming, "
      "supportsCacheControlOnTools, supportsTemperature, forceAdaptiveThinking, allowEmptySignature, "
      "supportsStrictTools " + _CONFIG_HINT]),
    ("routes: maxTokens 2**64", lambda t, m: _local(t, "render", "0", "--routes", _routes(
        t, ROUTES.format(cw=1000000).replace("8192", "18446744073709551616"))), 0, []),
    ("responses: a signature that is not JSON", lambda t, m: _resp(t, "render", "1", signature="{not json"),
     2, ["error: {T}/s/session.jsonl:18 seq 16: a reasoning block's thinking signature is not JSON: pi-ai's openai-responses "
         "conversion JSON.parses it to replay the reasoning item and throws, so DSH could not have sent this request "
         "(hint: the log was edited or damaged; `dsh-audit validate` lists what else is wrong in it)"]),
    ("responses: escapes in a signature, a call id, a tool name",
     lambda t, m: _resp(t, "explain", "1", signature=json.dumps({"id": ESC, "type": "reasoning"}),
                        call_id=f"{ESC}|{ESC}", tool=ESC), 0, []),
    ("responses: a 100,000-character call id", lambda t, m: _resp(t, "cache", "--json", call_id="c" * 100000 + "|f"),
     0, []),
    ("responses: an image of an odd media type, no bytes", lambda t, m: _resp(t, "render", "0", media="image/x\x1b[2J"),
     2, ["error: {T}/s/session.jsonl:6 seq 4: the log holds only a reference to image '" + PNG_ID + "' (mediaType "
         "'image/x\\x1b[2J', 12 bytes), not the bytes pi-ai sends as base64: DSH reads them from its attachment store "
         "(hint: read the bytes from DSH's attachment store with --attachments DIR (<DSH_HOME>/attachments/v1))"]),
    ("prices: 100,000 levels", lambda t, m: _priced(t, '{"providers":' + "[" * 100000 + "]" * 100000 + "}"),
     2, ["error: {T}/p.json: price table nests arrays or objects too deeply (hint: give --prices a JSON price table (or a "
         "TOML one, named *.toml); the Price files section of docs/cache-accounting.md gives the shape)"]),
    # the log's deepseek-official usage logs no cacheReadTokens: unpriced, said once (docs/cache-accounting.md)
    ("prices: a tier above 10**400 tokens", lambda t, m: _priced(t, {"providers": {"deepseek": {"models": {
        "deepseek-v4-flash": [dict(_FLASH, tiers=[dict(_FLASH, prompt_tokens_above=10 ** 400)])]}}}}), 0,
     ["warning: 1 request(s) unpriced: cache reads not logged (deepseek-official logs cacheReadTokens only when "
      "the API reported them: the prompt's split into hits and misses is unknown)"]),
    ("prices: billed_as an escape", lambda t, m: _priced(t, {"providers": {"deepseek": {"models": {
        "deepseek-v4-flash": [{"billed_as": ESC}]}}}}),
     2, ["error: {T}/p.json: price table key providers.deepseek.models.deepseek-v4-flash[0].billed_as: no model "
         '"x\\u001b]0;PWN\\u0007\\u202e\\u009b<b>[red]" in the price table (hint: fix this key in the --prices file; '
         f"the Price files section of docs/cache-accounting.md gives the shape)"]),
    ("usage: --since 30 February", lambda t, m: _log(t, "usage", "--since", "2026-02-30"),
     2, ["error: Invalid value for '--since': cannot read --since '2026-02-30' " + _WHEN]),
    ("usage: --since an escape", lambda t, m: _log(t, "usage", "--since", ESC),
     2, [f"error: Invalid value for '--since': cannot read --since '{SHOWN}' " + _WHEN]),
    ("usage: --until 20 digits of days", lambda t, m: _log(t, "usage", "--until", "99999999999999999999d", "--json"),
     0, ["note: --until -8.64e+24 s after the epoch (outside the years 1-9999): 1 of 1 log(s) with no activity in "
         "that window (by the logs' own timestamps) left out"]),
    ("usage: --since year 1 at +14:00, by window",
     lambda t, m: _log(t, "usage", "--since", "0001-01-01T00:00:00+14:00", "--by", "window", "--json"), 0, []),
    ("usage: --by an escape", lambda t, m: _log(t, "usage", "--by", ESC),
     2, [f"error: Invalid value for '--by': '{SHOWN}' is not one of 'session', 'turn', 'day', 'model', 'window', "
         "'request'. (hint: see `dsh-audit usage --help`)"]),
    ("refs: an ambiguous prefix", lambda t, m: _home(t, m, "show", "abc", "0"),
     2, ["error: {T}/sessions: session id prefix 'abc' is ambiguous: abc1, abc2 (hint: type more of the id)"]),
    ("refs: a prefix with an escape", lambda t, m: _home(t, m, "show", "x\x1b]0;P", "0"), 0, []),
    ("refs: no such escape", lambda t, m: _home(t, m, "explain", "\x1b[2J", "0"),
     2, ["error: {T}/sessions: no session log, session id or id prefix '\\u001b[2J' here (hint: run `dsh-audit sessions` "
         "to see the ids, or pass a path)"]),
]


@pytest.mark.parametrize(("case", "command", "code", "err"), SWEEP, ids=[c[0] for c in SWEEP])
def test_sweep(case, command, code, err, tmp_path, monkeypatch, capsys):
    args = command(tmp_path, monkeypatch)
    got, out, lines = invoke(monkeypatch, capsys, *args)
    assert (got, lines) == (code, [line.replace("{T}", str(tmp_path)) for line in err])
    assert not any(c in out + "".join(lines) for c in "\x1b\x07\x9b\u202e")
