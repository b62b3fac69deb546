"""``dsh-audit redact`` on pi-ai routes: every verdict of a redacted log and its redacted capture is the
original's.

Each ``tests/data/piai_oracle/**/<case>.json`` holds a DSH log and the bodies pi-ai 0.82.1 sent for it
(recorded once; no test runs Node). Here each case's log and a ``wire.jsonl`` capture of those bodies
(with the ``x-api-key`` header pi-ai sends) are redacted with one salt and the case's route
configuration, and ``requests``, ``breaks``, ``cache`` and ``diff`` are re-derived on both pairs, with
the routes, outside :func:`dsh_audit.redact.redact`: Anthropic thinking signatures, replay envelopes
naming api, provider and model, tool-call ids with odd characters, images, compaction and title calls,
profile headers and texts that JavaScript's ``trim`` blanks all come out as they went in, and
``validate`` finds the same rules broken at the same places. The corpus's live-pi sessions (skipped
when ``../shared/corpus`` is absent) go the same way with their real captures and route files.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from _properties import full_run_only

from dsh_audit.capture import load_capture
from dsh_audit.errors import UsageError
from dsh_audit.redact import Placeholders, Redactor, check_bundle, redact, session_verdicts
from dsh_audit.redact._verdicts import digest
from dsh_audit.session import Session, open_session
from dsh_audit.validate import validate
from dsh_audit.wire import images_in_body, load_routes
from dsh_audit.wire._piai_js import js_blank
from dsh_audit.wire._piai_routes import parse_routes

from test_routes46 import loadable

ORACLE = Path(__file__).parent / "data" / "piai_oracle"
CASES = sorted([p.stem for p in ORACLE.glob("*.json")] + [f"images/{p.stem}" for p in (ORACLE / "images").glob("*.json")])
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
LIVE_PI = CORPUS / "live-pi"
SALT = "one salt for the log and its capture"
#: The pi-ai APIs whose captured requests dsh-audit pairs and renders, each case of them checked to
#: render (a case of another API is still redacted and compared, verdict for verdict, whatever ``diff``
#: makes of it).
AUDITED_APIS = {"anthropic-messages", "openai-completions"}
KEY = "sk-ant-api03-" + "Qz7_Lm3-" * 11 + "AA"  # the credential each captured request carries


def _load(case: str) -> dict[str, Any]:
    return json.loads((ORACLE / f"{case}.json").read_text("utf-8"))


def _write_case(record: dict[str, Any], folder: Path) -> tuple[Path, Path]:
    """The case's log and a wire.jsonl capture of pi-ai's bodies, in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "session.jsonl"
    log.write_text("".join(line + "\n" for line in record["log"]), "utf-8")
    lines = []
    for seq, request in enumerate(record["requests"], 1):
        body = request["body"]
        lines.append(json.dumps({"seq": seq, "method": request["method"], "path": request["path"],
                                 "headers": {**dict(request["headers"]), "x-api-key": KEY}, "kind": request["kind"],
                                 "body_bytes": len(body.encode("utf-8")), "body": body}))
    capture = folder / "wire.jsonl"
    capture.write_text("\n".join(lines) + "\n", "utf-8")
    return log, capture


def _opened(log: Path, routes: Any) -> Session:
    session = open_session(log)
    if routes is not None:
        session.use_routes(routes)
    return session


def _rules(log: Path) -> list[tuple[str, str, int | None, int | None]]:
    return [(f.rule, f.severity, f.line, f.seq) for f in validate(log)]


def _redacted(case: str, tmp_path: Path) -> tuple[dict[str, Any], Any, Path, Path, Any]:
    record = _load(case)
    # nine cases' route files are ones DSH refuses (test_routes46.py): redacted with what DSH loads of them
    routes = None if record["routes"] is None else parse_routes(loadable(record["routes"]))
    log, capture = _write_case(record, tmp_path / "in")
    (tmp_path / "out").mkdir()
    result = redact(log, tmp_path / "out" / "session.jsonl", salt=SALT, capture=capture, routes=routes)
    return record, routes, log, capture, result


def _values(log: Path, key: str) -> list[Any]:
    """Every value under ``key`` in the records of ``log``, in order."""
    found: list[Any] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                if k == key:
                    found.append(v)
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    for line in filter(None, log.read_text("utf-8").split("\n")):
        walk(json.loads(line))
    return found


def _texts(log: Path) -> list[str]:
    """Every ``text`` string of the records of ``log`` but streamed deltas (chunk events and rows,
    ``stream`` arrays)."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                if k == "text" and isinstance(v, str):
                    found.append(v)
                elif k not in ("chunk", "stream", "texts"):
                    walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    for line in filter(None, log.read_text("utf-8").split("\n")):
        record = json.loads(line)
        if record.get("type") != "assistant/chunk":
            walk(record)
    return found


#: What the redacted log keeps as it is: thinking, text and thought signatures (signed, empty-signed,
#: JSON ones such as OpenAI's ``{"v":1,"id":...,"phase":...}``), replay envelopes (kind, version, api,
#: provider, model, response ids), tool-call ids with odd characters, models.
KEPT = ("thinkingSignature", "textSignature", "thoughtSignature", "response", "toolCallId", "model")
#: Cases whose verdicts are also compared row for row (not only by digest), each pair read from its files.
ROWS = {"anth-switch-45-46", "ids-local-openai", "images/images-openai-compat", "auto-compactions-openai",
        "oai-profile-headers", "trim-anthropic"}
#: Cases only the slow run redacts (``pytest -m slow``, DSH_AUDIT_SLOW=1), each with the case the default
#: run redacts that is the same session on the same pi-ai API: the same log under another route compat,
#: retention or affinity setting (the ``oai-compat-*`` and ``*-retention-*`` cases), or the same kind of
#: records with another window, another model list or other efforts. The default run's case checks the
#: same rule on them (every verdict stays); what differs is how pi-ai renders them, which
#: test_wire_piai_oracle.py checks on every case, byte for byte, in the default run too.
SLOW_CASES = {
    "anth-46-efforts": "anth-opus-47-efforts", "anth-fable-sonnet-5": "anth-opus-47-efforts",
    "anth-haiku-budgets": "anth-max-tokens-caps", "anth-declared-adaptive": "anth-declared",
    "anth-clamp-14000": "anth-clamp-9000", "anth-clamp-30000": "anth-clamp-9000",
    "anth-affinity": "anth-profile-headers", "anth-retention-long": "anth-profile-headers",
    "anth-retention-none": "anth-profile-headers", "anth-retention-short-budgets": "anth-profile-headers",
    "auto-compactions-haiku-route": "auto-compactions-anthropic", "auto-compactions-opus-47": "auto-compactions-anthropic",
    "auto-compactions-openrouter-claude": "auto-compactions-openai",
    "ids-openai-provider": "ids-local-openai", "resp-ids-declared": "resp-ids-openai",
    "images/images-anthropic-offload": "images/images-anthropic", "images/images-openai": "images/images-openai-compat",
    "resp-images-offload": "resp-images",
    **dict.fromkeys(["oai-affinity-openrouter", "oai-compat-cache-long", "oai-compat-chat-template", "oai-compat-deepseek",
                     "oai-compat-openrouter", "oai-compat-qwen-tpl", "oai-compat-routing", "oai-compat-string",
                     "oai-compat-together", "oai-compat-zai", "oai-deepseek-url", "oai-moonshot-url",
                     "oai-retention-long"], "oai-same-model"),
    "openrouter-deepseek-models": "openrouter-anthropic-models", "or-llama-mistral-models": "openrouter-anthropic-models",
    "openrouter-gpt5-models": "or-kimi-glm-models", "or-grok-gemini-models": "or-kimi-glm-models",
    "or-qwen-models": "or-kimi-glm-models",
    "resp-clamp-20000": "resp-clamp-9000", "resp-catalog-rest": "resp-efforts-gpt5", "resp-efforts-gpt52": "resp-efforts-gpt5",
    "resp-efforts-gpt54": "resp-efforts-gpt5", "resp-efforts-gpt56": "resp-efforts-gpt5", "resp-efforts-o": "resp-efforts-gpt5",
    "resp-headers-none": "resp-retention-long", "resp-retention-long-nolong": "resp-retention-long",
    "resp-retention-none": "resp-retention-long",
}
DEFAULT_CASES = [case for case in CASES if case not in SLOW_CASES]


@pytest.mark.parametrize("case", [pytest.param(case, marks=full_run_only(
    "test_redact_piai.SLOW_CASES names the case of the same session the default run redacts")) if case in SLOW_CASES
    else case for case in CASES])
def test_every_verdict_of_every_case_stays(tmp_path, case):
    record, routes, log, capture, result = _redacted(case, tmp_path)
    assert result.mismatched == ()
    # the files written, read again: their verdicts are the original's (whose digests redact recorded)
    after = session_verdicts(_opened(result.output, routes), load_capture(result.capture))
    assert {category: digest(rows) for category, rows in after.items()} == result.verdicts
    if case in ROWS:
        assert session_verdicts(_opened(log, routes), load_capture(capture)) == after
    # no proof when nothing renders: captured requests are paired with theirs and rendered (identical, or
    # different where the case replays history pi-ai changes; a capture aligned by order leaves some
    # unmatched, on the original as here), none is unrendered
    verdicts = Counter(row[3] for row in after["diff"])
    if {request["pi_ai_model"]["api"] for request in record["requests"]} <= AUDITED_APIS:
        assert "unrendered" not in verdicts and verdicts["identical"] + verdicts["different"] > 0
    assert _rules(result.output) == _rules(log)  # validate: the same rules broken at the same places
    for key in KEPT:
        assert _values(result.output, key) == _values(log, key), key
    # pi-ai drops a text or thinking block that JavaScript's ``trim`` leaves empty (U+FEFF, U+3000,
    # U+2028...; not U+0085 or U+001C, which Python's ``isspace`` counts): a placeholder is blank for both
    # exactly when its text is (a streamed delta, which no verdict reads, may not: its leading spaces are
    # hidden among punctuation)
    texts, new = _texts(log), _texts(result.output)
    assert [(js_blank(t), t.isspace(), len(t.encode("utf-8", "surrogatepass"))) for t in new] == [
        (js_blank(t), t.isspace(), len(t.encode("utf-8", "surrogatepass"))) for t in texts]


@pytest.mark.parametrize("cases", [CASES, DEFAULT_CASES], ids=["every", "default-run"])
def test_the_cases_hold_what_the_audit_names(cases):
    """Signatures, replay envelopes, odd tool ids, images, compaction and title calls, profile headers
    and texts only JavaScript's ``trim`` blanks are all in the cases checked above, and in those the
    default run checks (the slow run checks every case)."""
    records = [_load(case) for case in cases]
    logs = "\n".join(line for record in records for line in record["log"])
    assert all(f'"{key}"' in logs for key in ("thinkingSignature", "replayState", "attachmentId", "toolCallId"))
    assert {q["kind"] for record in records for q in record["requests"]} >= {"loop", "title", "compaction"}
    assert any(dict(q["headers"]).get("x-team") for record in records for q in record["requests"])
    texts = [block.get("text") for line in _load("trim-anthropic")["log"] for block in _blocks(json.loads(line))]
    assert any(isinstance(t, str) and js_blank(t) and not t.isspace() for t in texts)
    assert "trim-anthropic" in cases and {q["pi_ai_model"]["api"] for record in records for q in record["requests"]} == {
        "anthropic-messages", "openai-completions", "openai-responses"}


def test_each_case_left_to_the_slow_run_names_a_default_run_case_of_the_same_session():
    """A case run by default, on the same pi-ai API (with the very same log for the route settings)."""
    for case, kept in SLOW_CASES.items():
        slow, fast = _load(case), _load(kept)
        assert kept in DEFAULT_CASES and case in CASES, case
        assert {q["pi_ai_model"]["api"] for q in slow["requests"]} == {q["pi_ai_model"]["api"] for q in fast["requests"]}
        if case.startswith(("oai-", "anth-affinity", "anth-retention-short")):
            assert slow["log"] == fast["log"], case


def _blocks(value: Any) -> list[dict[str, Any]]:
    """Every object of ``value`` that has a ``text``."""
    if isinstance(value, dict):
        return ([value] if "text" in value else []) + [b for v in value.values() for b in _blocks(v)]
    if isinstance(value, list):
        return [b for v in value for b in _blocks(v)]
    return []


def test_images_get_stand_ins_that_the_redacted_log_and_capture_name_alike(tmp_path):
    record, _, log, capture, result = _redacted("images/images-anthropic", tmp_path)
    ids = sorted(set(_values(log, "attachmentId")))
    new_ids = sorted(set(_values(result.output, "attachmentId")))
    assert len(ids) == len(new_ids) == 3 and not set(ids) & set(new_ids)
    placeholders = Placeholders(SALT.encode())
    sizes = {a["attachmentId"]: a["bytes"] for a in _values(log, "attachment")}
    assert new_ids == sorted(placeholders.image_id(i, sizes[i]) for i in ids)
    originals: dict[str, bytes] = {}
    redacted: dict[str, bytes] = {}
    for before, after in zip(load_capture(capture), load_capture(result.capture)):
        originals.update(images_in_body(json.loads(before.body)))
        redacted.update(images_in_body(json.loads(after.body)))
        assert len(after.body) == len(before.body)
    assert sorted(originals) == ids and sorted(redacted) == new_ids
    text = result.capture.read_text("utf-8")
    assert not any(base64.b64encode(data).decode() in text for data in originals.values())
    assert all(redacted[placeholders.image_id(i, len(data))] == placeholders.image(i, len(data))
               for i, data in originals.items())


def test_an_image_reference_gets_a_stand_in_only_when_it_is_one_dsh_could_send():
    """A reference names its image by the SHA-256 of its bytes and gives their size; one larger than
    any image DSH sends (or a hostile size) keeps its name at once, as do other names and sizes."""
    name = "sha256:" + "ab" * 32
    redactor = Redactor(Placeholders(b"s"))
    refs = [{"attachmentId": name, "bytes": size} for size in (40, 32 << 20, (32 << 20) + 1, 10**15, -1, 2.0, True)]
    refs += [{"attachmentId": "sha256:AB", "bytes": 40}, {"attachmentId": name}]
    out = [redactor.record({"type": "user/message", "seq": 1, "data": ref})["data"]["attachmentId"] for ref in refs]
    assert [new != ref["attachmentId"] for new, ref in zip(out, refs)] == [True, True] + [False] * 7
    assert out[0] == Placeholders(b"s").image_id(name, 40) == "sha256:" + hashlib.sha256(
        Placeholders(b"s").image(name, 40)).hexdigest()


def test_the_capture_loses_its_credential_and_the_summary_counts_it(tmp_path):
    record, _, _, _, result = _redacted("anth-opus-47-efforts", tmp_path)
    assert result.dropped_headers == ("x-api-key",)
    assert result.secrets == {"anthropic_api_key": {"occurrences": len(record["requests"]), "distinct": 1}}
    assert KEY not in result.capture.read_text("utf-8") and KEY[20:40] not in result.capture.read_text("utf-8")


@pytest.fixture
def quick_keys(monkeypatch):
    """Each salt's key material from a BLAKE2b of it instead of its scrypt (some 85 ms of CPU a salt,
    the 40 salts below cost 3.4 s): the properties below hold for any key, and forty salts draw forty
    unrelated keys either way. Only ``PlainPlaceholders`` sees it: ``_derivation.derived``'s memo is
    never filled with these keys, so no other test reads one."""
    from dsh_audit.redact import _plain

    monkeypatch.setattr(_plain, "derived", lambda salt: ("", hashlib.blake2b(salt, person=b"test-keys").digest()[:32]))


@pytest.mark.parametrize("text", ["!", ".", "\u3000!", "\ufeff", "\ufeff\u3000", "\x85", "\x1c.", " \t-", "\u2028é", "\b"])
def test_a_placeholder_is_blank_exactly_when_its_text_is(text, quick_keys):
    for salt in range(40):
        new = Placeholders(str(salt).encode()).text(text)
        assert (js_blank(new), new.isspace(), len(new.encode())) == (js_blank(text), text.isspace(), len(text.encode()))


def test_a_streamed_delta_keeps_no_space_in_place(quick_keys):
    """Deltas (which no verdict reads) mostly start with a space, one per word: theirs are hidden among
    punctuation, as every space after a text's first character is."""
    for salt in range(40):
        redactor = Redactor(Placeholders(str(salt).encode()))
        assert all(redactor.delta(d)[0] != d[0] for d in (" the", " quick", "\n\nSo", "\u3000fox"))
        assert " " not in redactor.delta(" the quick") and " " not in redactor.content("a b c")


def test_a_bundle_made_with_routes_is_checked_with_them(tmp_path):
    record, routes, _, _, result = _redacted("oai-compat-qwen", tmp_path)
    assert json.loads(result.manifest.read_text("utf-8"))["routes"] is True
    assert check_bundle(result.output, routes=routes).ok
    assert check_bundle(result.output).ok  # the bundle carries its redacted route file


# -- the corpus's live-pi sessions ---------------------------------------------------------------

LIVE = [("c1-anthropic-tools", "zstd"), ("c3-openai-compat", "zstd"), ("c3-openai-compat", "plain")]


@pytest.mark.skipif(not LIVE_PI.is_dir(), reason="../shared/corpus/live-pi is absent")
@pytest.mark.parametrize(("scenario", "form"), LIVE, ids=[f"{s}-{f}" for s, f in LIVE])
def test_a_live_pi_session_and_its_capture_keep_every_verdict(tmp_path, scenario, form):
    folder = LIVE_PI / scenario
    log = next((folder / "home").rglob("session.jsonl.zstd")) if form == "zstd" else next(
        (folder / "session-logs").glob("*.jsonl"))
    routes = folder / "inputs" / "pi-ai-routes.patch.yml"
    result = redact(log, tmp_path / log.name, salt=SALT, capture=folder / "wire.jsonl", routes=routes)
    assert (result.mismatched, result.compressed, result.secrets) == ((), form == "zstd", {})
    config = load_routes(routes)
    before = session_verdicts(_opened(log, config), load_capture(folder / "wire.jsonl"))
    after = session_verdicts(_opened(result.output, config), load_capture(result.capture))
    assert after == before
    assert Counter(row[3] for row in after["diff"]) == {"identical": 11 if scenario.startswith("c1") else 6}
    assert _rules(result.output) == _rules(log)
    assert check_bundle(result.output, routes=routes).ok
    assert hashlib.sha256(result.output.read_bytes()).digest() != hashlib.sha256(log.read_bytes()).digest()
