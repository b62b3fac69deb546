"""Round 40: the importers as a Claude Code / Codex user meets them.

``render`` of an imported request says what its body is (DSH's request for the logged conversation,
not the agent's) and, when it refuses, why in the importer's terms; the Codex models are priced; and
``cache``'s rules line gives the minimum of each model a session used when they differ.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from dsh_audit.cache import load_prices
from dsh_audit.cli import cli
from dsh_audit.cli._common import run_guarded

DATA = Path(__file__).parent / "data" / "importers"
CLAUDE = DATA / "claude-code" / "7d3c6a52-1f0e-4c2b-9a8e-2b1f5c0d9e11.jsonl"
CODEX = DATA / "codex" / "rollout-2026-01-05T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"
SENT = datetime(2026, 1, 5, 10, tzinfo=UTC).timestamp()  # the sample rollout's day


def _run(monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes], *args: object
         ) -> tuple[int, bytes, str]:
    """``dsh-audit ARGS`` in process, piped: exit code, stdout bytes, stderr text."""
    monkeypatch.setenv("COLUMNS", "1000")  # one line per note or error, whatever its length
    monkeypatch.setattr(sys, "argv", ["dsh-audit", *map(str, args)])
    code = run_guarded(cli)
    out = capsysbinary.readouterr()
    return code, out.out, out.err.decode("utf-8")


_CLAUDE_BODY = (
    b'{"model":"claude-sonnet-4-5-20250929","messages":[{"role":"user","content":"Add a YAML config loader to '
    b'app.py"},{"role":"assistant","content":[{"type":"text","text":"I should read app.py before editing it."},'
    b'{"type":"text","text":"I\'ll look at app.py first."},{"type":"tool_use","id":"toolu_01","name":"Read",'
    b'"input":{"file_path":"/work/proj/app.py"}}]},{"role":"user","content":[{"type":"tool_result",'
    b'"tool_use_id":"toolu_01","content":"def main():\\n    print(\\"hi\\")\\n","is_error":false,'
    b'"cache_control":{"type":"ephemeral"}}]}],"max_tokens":64000,"stream":true,"thinking":{"type":"disabled"}}'
)


def test_render_of_a_claude_code_request_says_what_the_body_is(monkeypatch, capsysbinary):
    code, out, err = _run(monkeypatch, capsysbinary, "render", CLAUDE, 1)
    assert (code, out) == (0, _CLAUDE_BODY)
    assert err == (
        f"note: {CLAUDE}: a claude-code log: this body is what DSH's anthropic route (pi-ai) would send for the "
        "conversation as logged, not the request Claude Code sent, which the log does not record (no system "
        "prompt, no tool schemas, and not the exact prompt: system reminders, attachments and cache_control "
        "markers are not all logged); its reasoning goes as DSH sends another agent's, not replayed natively\n")


def test_render_refusal_of_a_codex_request_says_why_in_codex_terms(monkeypatch, capsysbinary, tmp_path):
    code, out, err = _run(monkeypatch, capsysbinary, "render", CODEX, -1)
    assert (code, out) == (2, b"")
    assert err == (
        f"error: {CODEX}:19 seq 19: no pi-ai model facts for openai/gpt-5-codex: pi-ai 0.82.1's catalog has no "
        "such openai model, and the log does not record a model's facts (hint: a codex log records the "
        "conversation, not the request Codex sent (no tool schemas, no system prompt in versions that do not "
        "log base_instructions, and not the request body it sent): render writes only what DSH's pi-ai route "
        "would send for that conversation; for DSH's route: declare the model with --routes FILE (DSH's "
        "llm-pi-ai route configuration: providers.openai.models, with its contextWindow, maxTokens and "
        f"reasoningEfforts); `dsh-audit show {CODEX} 3` prints the conversation as logged)\n")
    assert "cordis.patch.yml" not in err  # no DSH home holds a Codex rollout
    # the command names the log as a shell reads it back, to be pasted (review C of session 40: ``LOG``)
    spaced = tmp_path / "my logs" / CODEX.name
    spaced.parent.mkdir()
    spaced.write_bytes(CODEX.read_bytes())
    code, _, err = _run(monkeypatch, capsysbinary, "render", spaced, -1)
    assert (code, err.endswith(f"; `dsh-audit show '{spaced}' 3` prints the conversation as logged)\n")) == (2, True)


# (model, cache miss, cache read, output, where the rate was read)
_CODEX_RATES = [
    ("gpt-5-codex", 1.25, 0.125, 10.0, "https://developers.openai.com/api/docs/models/gpt-5-codex "),
    ("codex-mini-latest", 1.5, 0.375, 6.0, "https://developers.openai.com/api/docs/models/codex-mini-latest.md "),
    ("gpt-5.1-codex", 1.25, 0.125, 10.0, "https://fernando-nog.netlify.app/gpt-coding-model-costs-2026/ "),
    ("gpt-5.1-codex-max", 1.25, 0.125, 10.0, "https://help.openai.com/en/articles/20001106 "),
    ("gpt-5.1-codex-mini", 0.25, 0.025, 2.0, "https://openrouter.ai/openai/gpt-5.1-codex-mini-20251113 "),
    ("gpt-5.2-codex", 1.75, 0.175, 14.0, "https://help.openai.com/en/articles/20001106 "),
    ("gpt-5.3-codex", 1.75, 0.175, 14.0, "https://registry.npmjs.org/@earendil-works/pi-ai/-/pi-ai-0.82.1.tgz "),
]


@pytest.mark.parametrize(("model", "miss", "read", "output", "source"), _CODEX_RATES)
def test_codex_models_are_priced_with_their_source(model, miss, read, output, source):
    quote = load_prices(search_from="/").quote("openai", model, SENT)
    assert not isinstance(quote, str), quote
    assert (quote.billed_as, quote.rates.to_json()) == (model, {"cache_miss": miss, "cache_read": read,
                                                                  "output": output})
    assert quote.source.startswith(source)
    assert quote.retrieved == ("2026-12-03" if model == "gpt-5.3-codex" else "2026-12-07")


def test_a_codex_model_with_no_rate_found_stays_unpriced():
    assert load_prices(search_from="/").quote("openai", "gpt-5-codex-mini", SENT) == \
        "no price for model 'gpt-5-codex-mini'"


def test_cache_rules_line_gives_each_models_minimum_when_they_differ(monkeypatch, capsysbinary, tmp_path):
    """A Claude Code session that moves from sonnet-4-5 (minimum 1024) to opus-4-5 (4096) after its
    compaction: the rules line names both, as its last request is judged by opus' minimum."""
    lines = CLAUDE.read_bytes().splitlines(keepends=True)
    opus = [line.replace(b"claude-sonnet-4-5-20250929", b"claude-opus-4-5-20251101") if b'"msg_04D"' in line
            else line for line in lines]
    assert opus != lines
    log = tmp_path / CLAUDE.name
    log.write_bytes(b"".join(opus))
    code, out, _ = _run(monkeypatch, capsysbinary, "cache", log)
    rules = [line for line in out.decode("utf-8").splitlines() if line.startswith("rules:")]
    assert (code, rules) == (0, [
        "rules: anthropic unit 1 min 1024 for claude-sonnet-4-5-20250929, 4096 for claude-opus-4-5-20251101 ttl "
        "300s (platform.claude.com/docs/en/build-with-claude/prompt-caching, 2026-10)"])
    # --json says the same of each model, beside the family's default (review C of session 40: 1024 alone)
    assert _json_minimums(monkeypatch, capsysbinary, log) == (1024, {
        "claude-sonnet-4-5-20250929": 1024, "claude-opus-4-5-20251101": 4096})
    # one model: its own minimum, not the family's default (1024)
    log.write_bytes(CLAUDE.read_bytes().replace(b"claude-sonnet-4-5-20250929", b"claude-opus-4-5-20251101"))
    code, out, _ = _run(monkeypatch, capsysbinary, "cache", log)
    assert (code, "rules: anthropic unit 1 min 4096 ttl 300s " in out.decode("utf-8")) == (0, True)
    assert _json_minimums(monkeypatch, capsysbinary, log) == (1024, {"claude-opus-4-5-20251101": 4096})


def _json_minimums(monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes], log: Path
                   ) -> tuple[int, dict[str, int]]:
    """``cache --json LOG``'s anthropic rule: its default minimum and each model's (it exits 0)."""
    code, out, _ = _run(monkeypatch, capsysbinary, "cache", "--json", log)
    rule = json.loads(out)["rules"]["anthropic"]
    assert code == 0
    return rule["min_cacheable_tokens"], rule["min_cacheable_tokens_by_model"]
