"""Hostile input, round 6 (issue 15): ``sessions``, ``usage`` and its price files, route files,
``redact --check``, ``watch``, session references, the importers and odd ``DSH_HOME`` values.

The round ran about 3,000 cases through the real CLI (``/tmp/fuzz6/fuzz.py``: each case a
subprocess under ``timeout 60`` and ``/usr/bin/time``; a case fails on exit 3, a traceback, an exit
2 without an ``error:`` line, a hang, more than 500 MB, a raw control character, interpreted Rich
markup or a ``::`` line on stdout or stderr, or a changed input). The defects it found in the
files this round owns, each with a test below that failed before its fix:

- a ``DSH_HOME`` whose sessions folder cannot be looked at (a name too long, no permission on the
  home) made ``show``/``explain``/``render`` with ``latest`` or an id, and ``watch``, exit 3
  (``PermissionError``/``OSError`` from ``Path.is_dir``). Now one line naming the path and why;
  ``watch`` reports it as an unreadable folder and goes on.
- a session log under the sessions root that cannot be opened (no permission, a FIFO, a device)
  was passed over silently when ``latest`` or an id prefix was looked up: ``show latest`` showed
  another session, ``show ID`` of that session said no such session. Now the lookup names the
  log it cannot open (an exact id of another session still resolves).
- route files DSH reads differently: a whole number written as a float (``contextWindow:
  131072.0``; DSH's schema is ``z.number().step(1).min(1)``) was refused; an empty ``baseURL``
  on a catalog route silently took the catalog's; an empty provider name or ``displayName`` and
  the removed ``provider``/``maxRetries``/``maxRetryDelayMs`` fields, all of which DSH refuses
  (``config.ts`` ``resolveProfiles``, ``rejectRemovedFields``), were accepted, and so was a
  header value past U+00FF, which fetch's ``Headers`` refuses (no ByteString). A NUL or other
  control character in a route file was ``not valid YAML: not valid YAML``, with no line.
- a Claude Code or Codex log with a line nested more than 512 levels deep after its first line
  (the DSH reader's limit, which refuses such a log) was imported: RecursionError in the
  serialisers, exit 3 (``show``, ``render``) or a per-session "dsh-audit bug" line (``requests``,
  ``cache``, ``usage``, ``sessions``). Now refused in one line naming the file and line.
- a Claude Code or Codex line holding a lone surrogate escape (``"\\ud800"``: valid JSON, which
  JavaScript's ``JSON.stringify`` writes) was skipped as "not JSON", and on the first line the
  log was not even recognised (orjson refuses such escapes). Now read as ``JSON.parse`` reads it.
- a price file's ``billed_as`` naming its own model loaded, and left every request of it
  unpriced with ``'billed_as' loops``. Now refused where it is written.

- ``sessions``, ``usage``, ``requests`` and ``cache`` with no PATH and a ``$DSH_HOME`` that cannot be
  looked at (a name too long) exited 3 from ``Path.is_dir``; now one error line naming the folder.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest


from _cli import chat_log, invoke
from dsh_audit.errors import UsageError
from dsh_audit.log import discover
from dsh_audit.wire import load_routes

LOOK_HINT = "(hint: give dsh-audit access to it (and to the folders above it), or pass another path or DSH_HOME)"
LOOKUP_HINT = ("(hint: make it readable or move it out of the sessions folder, or pass the log's path instead "
               "of a session id)")
ROUTE_HINT = "(hint: see DSH's llm-pi-ai configuration: providers.<id>.api, baseURL, models)"
YAML_HINT = "(hint: give --routes a YAML file with DSH's llm-pi-ai route configuration)"
GATEWAY = "providers:\n  gw:\n    api: openai-completions\n    baseURL: http://h/v1\n    models:\n      - id: m\n"


# -- DSH_HOME that cannot be looked at ------------------------------------------------------------

def _long_home(tmp_path: Path) -> Path:
    return tmp_path / ("L" * 300)  # one name past NAME_MAX: stat says "File name too long"


@pytest.mark.parametrize("command", ["show", "explain", "render"])
@pytest.mark.parametrize("ref", ["latest", "session-a"])
def test_a_sessions_folder_that_cannot_be_looked_at_is_named(tmp_path, monkeypatch, capsys, command, ref):
    home = _long_home(tmp_path)
    monkeypatch.setenv("DSH_HOME", str(home))
    code, out, err = invoke(monkeypatch, capsys, command, ref, "-1")
    assert (code, out, err) == (2, "", [f"error: {home}/sessions: cannot look at this path: File name too long "
                                        f"{LOOK_HINT}"])


def test_watch_reports_a_root_it_cannot_look_at_and_goes_on(tmp_path):
    home = _long_home(tmp_path)
    refused: dict[str, str] = {}
    assert discover([str(home / "sessions")], refused=refused) == []
    assert refused == {str(home / "sessions"): "File name too long"}
    with pytest.raises(Exception) as caught:
        discover([str(home / "sessions")])
    assert str(caught.value) == f"{home}/sessions: cannot look at this path: File name too long {LOOK_HINT}"


@pytest.mark.parametrize("command", ["sessions", "usage", "requests"])
def test_listing_commands_name_a_default_root_they_cannot_look_at(tmp_path, monkeypatch, capsys, command):
    home = _long_home(tmp_path)
    monkeypatch.setenv("DSH_HOME", str(home))
    code, _, err = invoke(monkeypatch, capsys, command)
    assert code == 2 and len(err) == 1 and err[0].startswith(f"error: {home}/sessions: ")


# -- a log under the sessions root that cannot be opened ------------------------------------------

def _root_with_a_fifo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    sessions = tmp_path / "home" / "sessions"
    chat_log(sessions / "-p-" / "session-a" / "session.jsonl", "session-alpha")
    chat_log(sessions / "-p-" / "session-b" / "session.jsonl", "session-beta")
    fifo = sessions / "-p-" / "session-c" / "session.jsonl"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    return fifo


@pytest.mark.parametrize(("ref", "what"), [("latest", "which session is latest"),
                                           ("session-", "which session 'session-' names"),
                                           ("session-gamma", "which session 'session-gamma' names")])
def test_a_lookup_names_the_log_it_cannot_open(tmp_path, monkeypatch, capsys, ref, what):
    fifo = _root_with_a_fifo(tmp_path, monkeypatch)
    code, out, err = invoke(monkeypatch, capsys, "show", ref, "-1")
    assert (code, out, err) == (2, "", [f"error: {fifo}: is a FIFO, not a log file, so {what} cannot be told "
                                        f"{LOOKUP_HINT}"])


def test_an_exact_id_still_resolves_beside_a_log_that_cannot_be_opened(tmp_path, monkeypatch, capsys):
    _root_with_a_fifo(tmp_path, monkeypatch)
    code, out, err = invoke(monkeypatch, capsys, "show", "session-beta", "0", "--compact")
    assert (code, err) == (0, [])
    assert out.startswith('{"index":0,"session_id":"session-beta",')


# -- route files: what DSH accepts and refuses ----------------------------------------------------

def test_route_counts_written_as_whole_floats_are_read_as_dsh_reads_them(tmp_path):
    path = tmp_path / "routes.yml"
    path.write_text(GATEWAY.replace("    models:", "    defaultMaxTokens: 4096.0\n    maxRequestImageBytes: 500.0\n"
                                                  "    models:") + "        contextWindow: 131072.0\n")
    model = load_routes(path).models[("gw", "m")]
    assert (model.context_window, model.max_tokens) == (131072, 4096)
    assert [type(v) for v in (model.context_window, model.max_tokens)] == [int, int]
    assert model.profile is not None and model.profile.max_request_image_bytes == 500


@pytest.mark.parametrize(("text", "message"), [
    (GATEWAY + "        contextWindow: 1.5\n", "providers.gw.models[0].contextWindow: must be a positive integer"),
    (GATEWAY + "        maxTokens: .inf\n", "providers.gw.models[0].maxTokens: must be a positive integer"),
    (GATEWAY.replace("    api:", "    maxRequestImageBytes: 0.5\n    api:"),
     "providers.gw.maxRequestImageBytes: must be a positive whole number of bytes"),
    ("providers:\n  anthropic:\n    baseURL: ''\n", "providers.anthropic.baseURL: is empty"),
    ("providers:\n  '':\n    api: openai-completions\n", "providers: a provider name is empty"),
    (GATEWAY.replace("    api:", "    displayName: ''\n    api:"), "providers.gw.displayName: is empty"),
    (GATEWAY.replace("    api:", "    maxRetries: 3\n    api:"),
     "providers.gw.maxRetries: was removed from DSH's configuration: compose recovery with dsh-llm-retry"),
    (GATEWAY.replace("    api:", "    provider: gw\n    api:"),
     "providers.gw.provider: was removed from DSH's configuration: the route is the providers key"),
])
def test_route_files_dsh_refuses_are_refused(tmp_path, text, message):
    path = tmp_path / "routes.yml"
    path.write_text(text)
    with pytest.raises(UsageError) as caught:
        load_routes(path)
    assert str(caught.value) == f"{path}: route file: {message} {ROUTE_HINT}"


@pytest.mark.parametrize(("text", "line", "code"), [("providers:\n  gw: \x00\n", 2, "0000"),
                                                    ("# \x1b[2J\nproviders: {}\n", 1, "001B"),
                                                    ("providers: {}\n\n\nx: \x85\x9b\n", 4, "009B")])
def test_a_control_character_in_a_route_file_is_named_with_its_line(tmp_path, monkeypatch, capsys, text, line, code):
    path = tmp_path / "routes.yml"
    path.write_text(text, encoding="utf-8")
    log = chat_log(tmp_path / "s" / "session.jsonl", "session-r")
    before = path.read_bytes()
    result = invoke(monkeypatch, capsys, "usage", str(log), "--routes", str(path))
    assert result == (2, "", [f"error: {path}: route file is not valid YAML at line {line}: special characters "
                              f"are not allowed (U+{code}) {YAML_HINT}"])
    assert path.read_bytes() == before


# -- price files ----------------------------------------------------------------------------------

def test_a_price_that_is_billed_as_itself_is_refused(tmp_path, monkeypatch, capsys):
    prices = tmp_path / "prices.json"
    prices.write_text('{"providers": {"deepseek": {"models": {"deepseek-v4-flash": {"billed_as": '
                      '"deepseek-v4-flash"}}}}}')
    log = chat_log(tmp_path / "s" / "session.jsonl", "session-p")
    result = invoke(monkeypatch, capsys, "usage", str(log), "--prices", str(prices))
    assert result == (2, "", [f"error: {prices}: price table key providers.deepseek.models.deepseek-v4-flash"
                              ".billed_as: names the model itself; give its rates instead (hint: fix this key in "
                              "the --prices file; "
                              "the Price files section of docs/cache-accounting.md gives the shape)"])


# -- importers: deep lines, lone surrogates -------------------------------------------------------

def _claude(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _claude_turn(session: str, text: str, tool_input: object) -> list[dict[str, object]]:
    return [
        {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": session,
         "timestamp": "2026-01-05T10:00:00Z", "message": {"role": "user", "content": text}},
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": session,
         "timestamp": "2026-01-05T10:00:01Z",
         "message": {"id": "m1", "role": "assistant", "model": "claude-sonnet-4-5",
                     "content": [{"type": "tool_use", "id": "t1", "name": "x", "input": tool_input}],
                     "usage": {"input_tokens": 3, "output_tokens": 1}}},
    ]


@pytest.mark.parametrize("command", [["requests"], ["cache"], ["usage"], ["sessions"], ["show", "-1"], ["render", "-1"]])
def test_an_imported_line_nested_too_deeply_is_refused(tmp_path, monkeypatch, capsys, command):
    deep: object = "x"
    for _ in range(600):
        deep = {"a": deep}
    log = _claude(tmp_path / "deep.jsonl", _claude_turn("s", "hi", deep))
    code, out, err = invoke(monkeypatch, capsys, command[0], str(log), *command[1:])
    assert code == 2 and err[-1] == (f"error: {log}:2: line nests JSON arrays or objects more than 512 levels deep; "
                                     "dsh-audit cannot process it (hint: the agent that wrote it may still read it; "
                                     "dsh-audit's recursive serialisers stop here)")


def test_an_imported_lone_surrogate_is_read_as_json_parse_reads_it(tmp_path, monkeypatch, capsys):
    log = _claude(tmp_path / "s.jsonl", _claude_turn("s\ud800", "hi \udc00", {"k": "v\ud800"}))
    code, out, err = invoke(monkeypatch, capsys, "show", str(log), "0", "--compact")
    assert (code, [line for line in err if not line.startswith("note: ")]) == (0, [])
    shown = json.loads(out)
    assert (shown["session_id"], shown["messages"][0]["content"][0]["text"]) == ("s\ud800", "hi \udc00")
    code, out, _ = invoke(monkeypatch, capsys, "sessions", str(log), "--json")
    assert code == 0 and json.loads(out)["session_id"] == "s\ud800"


# -- redact --check reads only its bundle --------------------------------------------------------

def _bundle(tmp_path: Path, monkeypatch, capsys) -> tuple[Path, Path]:
    """A redacted log with its manifest (requests, breaks and cache verdicts) in ``tmp_path/b``."""
    log = chat_log(tmp_path / "in" / "session.jsonl", "bundle")
    out = tmp_path / "b" / "session.jsonl"
    out.parent.mkdir()
    assert invoke(monkeypatch, capsys, "redact", str(log), "-o", str(out), "--salt", "s")[0] == 0
    return out, Path(f"{out}.manifest.json")


def test_a_manifest_that_is_not_a_regular_file_is_refused_without_reading(tmp_path, monkeypatch, capsys):
    out, manifest = _bundle(tmp_path, monkeypatch, capsys)
    manifest.unlink()
    manifest.symlink_to("/dev/zero")  # read whole, this grew without end
    code, stdout, err = invoke(monkeypatch, capsys, "redact", "--check", str(out))
    assert (code, stdout) == (2, "")
    assert err == [f"error: {manifest}: is a character device, not a redaction manifest (hint: only regular files "
                   "are read)"]


def test_a_manifest_cannot_point_the_check_outside_its_bundle(tmp_path, monkeypatch, capsys):
    out, manifest = _bundle(tmp_path, monkeypatch, capsys)
    data = json.loads(manifest.read_text("utf-8"))
    data["verdicts"]["diff"] = {"digest": "sha256:" + "0" * 64, "count": 1}
    for name in ("/etc/passwd", "../in/session.jsonl", "", "."):
        data["capture"] = name
        manifest.write_text(json.dumps(data), "utf-8")
        code, stdout, err = invoke(monkeypatch, capsys, "redact", "--check", str(out))
        assert (code, stdout) == (2, "")
        assert err == [f"error: {manifest}: the manifest names a capture outside the bundle's folder: {name!r} "
                       "(hint: keep the redacted capture beside the redacted log (redact --capture-output into "
                       "the folder of -o))"]
    data["capture"] = "wire.jsonl"  # inside, but gone: the hint says where it comes from
    manifest.write_text(json.dumps(data), "utf-8")
    code, stdout, err = invoke(monkeypatch, capsys, "redact", "--check", str(out))
    assert (code, stdout) == (2, "")
    assert err == [f"error: {out.parent / 'wire.jsonl'}: capture not found (hint: the "
                   "manifest's capture is the redacted capture `dsh-audit redact` wrote beside the log: restore "
                   "it from the bundle)"]


# -- an empty path is named as one, never read as the current folder -----------------------------

@pytest.mark.parametrize("args, message", [
    # every option that takes a path says it alike (round 14: one refusal for every such option)
    (["cache", "{log}", "--prices", ""],
     "Invalid value for '--prices': empty path (name a file or folder) (hint: see `dsh-audit cache --help`)"),
    (["stats", "--db", ""],
     "Invalid value for '--db': empty path (name a file or folder) (hint: see `dsh-audit stats --help`)"),
    (["redact", "{log}", "-o", ""],
     "Invalid value for '-o' / '--output': empty path (name a file or folder) (hint: see `dsh-audit redact --help`)"),
])
def test_an_empty_path_is_an_empty_path(tmp_path, monkeypatch, capsys, args, message):
    log = chat_log(tmp_path / "session.jsonl", "empty-paths")
    monkeypatch.chdir(tmp_path)
    code, stdout, err = invoke(monkeypatch, capsys, *(a.format(log=log) for a in args))
    assert (code, stdout, err) == (2, "", [f"error: {message}"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.jsonl"]
