"""Every refusal names its place and a hint (fuzz round 20, F1-F2).

A log that breaks DSH's format rules is refused as DSH refuses it, in DSH's words, at its line and
seq; the hint says which field breaks the rule and what DSH requires, that DSH refuses the log too
(no option reads it) and which ``dsh-audit validate`` rule lists it. A request pi-ai's adapter
refuses (a stop option, an effort the model does not offer) names the header's seq and the
options that settle it (``--routes FILE``, ``--adapter``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke
from test_piai_images import reply

from dsh_audit.testing import LogBuilder

CHAT = Path(__file__).resolve().parent.parent / "sample_logs" / "chat" / "session.jsonl"

#: How every seed refusal's hint ends, before the rule id.
TAIL = "; DSH refuses the log too (--lenient does not relax events); `dsh-audit validate FILE` lists every problem"


def _mutated(tmp_path: Path, seq: int, change: Callable[[dict[str, Any]], None]) -> Path:
    """The sample chat log with event ``seq`` changed by ``change``."""
    out = []
    for text in CHAT.read_text("utf-8").splitlines():
        record = json.loads(text)
        if record.get("seq") == seq:
            change(record)
        out.append(json.dumps(record))
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(out) + "\n", "utf-8")
    return path


def _config(change: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    return lambda record: change(record["data"]["header"]["config"])


def _data(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda record: record["data"].__setitem__(key, value)


# The request/header is seq 6 on line 8, the first user/message seq 4 on line 6, turn/start seq 1 on line 3,
# the first assistant/message seq 23 on line 20.
HEADER = "seed request/header at index 6"
CASES = [
    ("no-provider", 6, _config(lambda c: c.pop("provider")), 8, f"{HEADER} lacks provider/model",
     "config has no provider: DSH requires config.provider and config.model, non-empty strings", "DSH221"),
    ("empty-provider", 6, _config(lambda c: c.__setitem__("provider", "")), 8, f"{HEADER} lacks provider/model",
     'config.provider "" is not a non-empty string: DSH requires config.provider and config.model, non-empty strings',
     "DSH221"),
    ("number-provider", 6, _config(lambda c: c.__setitem__("provider", 7)), 8, f"{HEADER} lacks provider/model",
     "config.provider 7 is not a non-empty string: DSH requires config.provider and config.model, non-empty strings",
     "DSH221"),
    ("no-model", 6, _config(lambda c: c.pop("model")), 8, f"{HEADER} lacks provider/model",
     "config has no model: DSH requires config.provider and config.model, non-empty strings", "DSH221"),
    ("no-config", 6, lambda r: r["data"]["header"].pop("config"), 8, f"{HEADER} lacks provider/model",
     "the header has no config: DSH requires config.provider and config.model, non-empty strings", "DSH221"),
    ("list-config", 6, lambda r: r["data"]["header"].__setitem__("config", [1]), 8, f"{HEADER} lacks provider/model",
     "header.config [1] is not an object: DSH requires config.provider and config.model, non-empty strings",
     "DSH221"),
    ("no-header", 6, lambda r: r["data"].pop("header"), 8, f"{HEADER} lacks provider/model",
     "the event's data has no header: DSH requires config.provider and config.model, non-empty strings", "DSH221"),
    ("long-provider", 6, _config(lambda c: c.__setitem__("provider", ["p" * 300])), 8,
     f"{HEADER} lacks provider/model",
     f'config.provider ["{"p" * 197}… is not a non-empty string: DSH requires config.provider and config.model, '
     "non-empty strings", "DSH221"),
    ("no-content", 4, lambda r: r["data"].pop("content"), 6, "session event at seq 4 message has invalid content",
     "the message has no content: DSH requires content as an array of content blocks", "DSH120"),
    ("assistant-source", 23, lambda r: r["data"]["message"]["source"].__setitem__("kind", "user"), 20,
     "session event at seq 23 message must have model source",
     'DSH requires an assistant message\'s source as {"kind":"model"} with a non-empty string provider and model',
     "DSH120"),
    ("empty-effort", 6, _config(lambda c: c.__setitem__("reasoningEffort", "")), 8,
     f"{HEADER} has an invalid reasoningEffort",
     'config.reasoningEffort "" is not a non-empty string: DSH requires a non-empty string or no reasoningEffort',
     "DSH222"),
    ("string-content", 4, _data("content", "x"), 6, "session event at seq 4 message has invalid content",
     'message.content "x" is not an array: DSH requires content as an array of content blocks', "DSH120"),
    ("system-role", 4, _data("role", "system"), 6, 'session event at seq 4 message must have role "user"',
     'message.role "system" is not "user": DSH requires role "user" in a user/message', "DSH120"),
    ("no-role", 4, lambda r: r["data"].pop("role"), 6, 'session event at seq 4 message must have role "user"',
     'the message has no role: DSH requires role "user" in a user/message', "DSH120"),
    ("no-source-kind", 4, _data("source", {}), 6, "session event at seq 4 message has invalid source",
     "DSH requires the message's source as an object with a non-empty string kind", "DSH120"),
    ("float-time", 1, lambda r: r.__setitem__("time", 1800000000002.5), 3,
     "seed event at index 1 has an invalid event envelope",
     "time 1800000000002.5 is not a safe integer: DSH requires Date.now() milliseconds, an integer", "DSH111"),
    ("string-time", 1, lambda r: r.__setitem__("time", "2026-11-01T00:00:00Z"), 3,
     "seed event at index 1 has an invalid event envelope",
     'time "2026-11-01T00:00:00Z" is not a safe integer: DSH requires Date.now() milliseconds, an integer', "DSH111"),
    ("no-time", 1, lambda r: r.pop("time"), 3, "seed event at index 1 has an invalid event envelope",
     "the event has no time: DSH requires Date.now() milliseconds, an integer", "DSH111"),
    ("extra-key", 1, lambda r: r.__setitem__("meta\u001b[2J", 1), 3,
     "seed event at index 1 has an invalid event envelope",
     'key "meta\\u001b[2J" is not an envelope key: DSH allows type, seq, time, data, surfaceOp, sourceEventSeqs, '
     "ignorable", "DSH110"),
    ("no-data", 1, lambda r: r.pop("data"), 3, "seed event at index 1 has an invalid event envelope",
     "the event has no data: DSH requires data; it may be {}", "DSH112"),
    ("ignorable-false", 1, lambda r: r.__setitem__("ignorable", False), 3,
     "seed event at index 1 has an invalid event envelope",
     "ignorable false is not true: DSH allows only true; omit the key otherwise", "DSH113"),
    ("legacy-turn-start", 1, _data("trigger", None), 3,
     'session "session-sample-chat" contains malformed pre-react-loop turn/start at seq 1',
     "DSH upgrades a legacy turn/start, turn/end or steering/message only in its complete legacy shape; write the "
     "current shape", "DSH504"),
]


@pytest.mark.parametrize(("seq", "change", "line", "message", "requires", "rule"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_a_log_breaking_a_dsh_rule_is_refused_with_the_field_and_a_hint(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], seq: int,
        change: Callable[[dict[str, Any]], None], line: int, message: str, requires: str, rule: str) -> None:
    path = _mutated(tmp_path, seq, change)
    assert invoke(monkeypatch, capsys, "requests", str(path)) == (2, "", [
        f"error: {path}:{line} seq {seq}: {message} (hint: {requires}{TAIL} (rule {rule}))"])


def test_validate_names_the_rule_the_hint_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The hint's `dsh-audit validate FILE` does list the rule it names, at the same line."""
    path = _mutated(tmp_path, 1, lambda r: r.__setitem__("time", 1800000000002.5))
    code, out, _ = invoke(monkeypatch, capsys, "validate", str(path), "--format", "json")
    rows = [(f["rule"], f["line"], f["seq"]) for f in map(json.loads, out.splitlines()) if "rule" in f]
    assert code == 1 and ("DSH111", 3, 1) in rows


# -- pi-ai render refusals (F1) ---------------------------------------------------------------------

ROUTES = """providers:
  local-openai:
    api: openai-completions
    baseURL: http://127.0.0.1:18302/v1
    models:
      - id: local-coder
        contextWindow: 1000000
        maxTokens: 8192
"""


def _pi_chat(tmp_path: Path, *, effort: str | None, stop: bool = False) -> tuple[Path, Path]:
    """A one-turn chat through pi-ai's local-openai/local-coder route (header seq 3 on line 5), and
    a route file declaring local-coder without reasoningEfforts."""
    b = LogBuilder(session_id="s-pi", provider="local-openai", model="local-coder", system="Sys.", tools=[],
                   reasoning_effort=effort, max_tokens=1000)
    with b.turn("Hi."):
        with b.step():
            reply(b, "local-openai", "local-coder", "openai-completions", "Hello.")
    lines = b.lines(packed=False)
    if stop:
        lines = [t.replace('"maxTokens":1000', '"maxTokens":1000,"stop":["END"]') for t in lines]
    log, routes = tmp_path / "session.jsonl", tmp_path / "routes.yml"
    log.write_text("".join(t + "\n" for t in lines), "utf-8")
    routes.write_text(ROUTES, "utf-8")
    return log, routes


def _header_place(log: Path) -> tuple[int, int]:
    for number, text in enumerate(log.read_text("utf-8").splitlines(), 1):
        record = json.loads(text)
        if record.get("type") == "request/header":
            return number, record["seq"]
    raise AssertionError("no request/header")


def test_an_effort_the_route_does_not_offer_names_the_header_and_the_options(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    log, routes = _pi_chat(tmp_path, effort="high")
    line, seq = _header_place(log)
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "-1", "--routes", str(routes))
    assert (code, out, err) == (2, "", [
        f"error: {log}:{line} seq {seq}: pi-ai model local-openai/local-coder does not support reasoning effort 'high' "
        "(hint: DSH's pi-ai adapter refuses it too, unless the route offers the level: declare it in the model's "
        "reasoningEfforts (providers.local-openai.models[].reasoningEfforts) in the file given as --routes FILE, "
        "or force another wire format with --adapter)"])
    # A route file that offers the level renders it (another file: --routes is read once a process).
    offering = tmp_path / "offering.yml"
    offering.write_text(ROUTES + "        reasoningEfforts: {high: high}\n", "utf-8")
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "-1", "--routes", str(offering))
    assert (code, json.loads(out)["reasoning_effort"], err) == (0, "high", [])


def test_a_stop_option_names_the_header_and_the_options(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    log, routes = _pi_chat(tmp_path, effort=None, stop=True)
    line, seq = _header_place(log)
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "-1", "--routes", str(routes))
    assert (code, out, err) == (2, "", [
        f"error: {log}:{line} seq {seq}: llm-pi-ai does not support a stop option (hint: DSH's pi-ai adapter refuses "
        "it too; if DSH sent the request on another route, --routes FILE (DSH's llm-pi-ai route configuration) names "
        "its api, or force another wire format with --adapter)"])


def test_an_unknown_route_names_the_header_line_and_seq(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    b = LogBuilder(session_id="s-gw", provider="my-gateway", model="m", system="Sys.", tools=[],
                   reasoning_effort=None, max_tokens=1000)
    with b.turn("Hi."):
        with b.step():
            reply(b, "deepseek-official", "m", "openai-completions", "Hello.")
    log = tmp_path / "gateway.jsonl"
    text = "".join(t + "\n" for t in b.lines(packed=False)).replace('"replayState"', '"replay"')  # no evidence
    log.write_text(text.replace('"provider":"my-gateway","model":"m","replay',
                                '"provider":"deepseek-official","model":"m","replay'), "utf-8")
    line, seq = _header_place(log)
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "-1")
    assert (code, out, err) == (2, "", [
        f"error: {log}:{line} seq {seq}: request 0 cannot be rendered: unknown route: provider 'my-gateway': the log "
        "shows no message from its adapter; pass --routes FILE (DSH's llm-pi-ai route configuration) or --adapter "
        "(hint: pass --routes FILE with the route configuration DSH had, or force a wire format with --adapter "
        "deepseek|anthropic|openai|responses)"])


def test_a_deepseek_effort_refusal_names_the_header_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    path = _mutated(tmp_path, 6, _config(lambda c: c.__setitem__("reasoningEffort", "extreme")))
    code, out, err = invoke(monkeypatch, capsys, "render", str(path), "1")
    assert (code, out, err) == (2, "", [f"error: {path}:8 seq 6: DeepSeek does not support reasoning effort 'extreme'"])
