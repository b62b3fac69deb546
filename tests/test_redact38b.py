"""Session 38 (tour 38 findings 5, 6, 7, 14): what a redacted capture still told about its sender.

1. Identifying headers (DSH's ``x-deepseek-harness-user-id``, a stable per-install id; ``openai-organization``,
   ``chatgpt-account-id``...) become pseudonyms of the same length, the same for the same value; the
   session headers ``diff`` pairs by and ``anthropic-beta`` (the key type) stay; auth headers go.
2. An IPv4 placeholder lies in a documentation or reserved block (``192.0.2.x``, ``198.51.100.x``,
   ``203.0.113.x``; ``0/8``, ``10/8``, ``192.168/16`` for the other lengths); loopback stays loopback.
3. A ``wire.jsonl`` response object's ``headers`` are kept as a HAR response's (auth and cookies dropped).
4. A bundle whose captured requests are unrendered is unproven: redact's line about them is a warning
   (``level``), and ``check_bundle`` says how many were compared (``compared``, ``unproven``).
"""

from __future__ import annotations

import ipaddress
import json
import random
from pathlib import Path

import pytest
from _golden import CORPUS

from dsh_audit.redact import Placeholders, Redactor, check_bundle, redact
from dsh_audit.redact._capture import _har_headers, _headers, _record
from dsh_audit.redact._hosts import redact_host, redact_url

SALT = b"redact38b"
C_CHANGE = CORPUS / "live" / "c-change"
C3 = CORPUS / "live-pi" / "c3-openai-compat"
needs_corpus = pytest.mark.skipif(not (C_CHANGE.is_dir() and C3.is_dir()), reason="../shared/corpus is absent")
USER = "cfa76663-0228-491c-98ff-d93176390be7"


# --- 1. identifying headers ---------------------------------------------------------------------------------


def test_identifying_headers_become_pseudonyms_and_the_ones_diff_reads_stay() -> None:
    redactor, dropped = Redactor(Placeholders(SALT)), []
    headers = {"x-deepseek-harness-user-id": USER, "x-deepseek-harness-session-id": "session-x",
               "OpenAI-Organization": "org-AbC123", "chatgpt-account-id": "acct_42",
               "anthropic-beta": "oauth-2025-04-20", "x-api-key": "k", "x-session-affinity": "session-x",
               "user-agent": "ua/1", "content-length": "5"}
    assert _headers(headers, redactor, dropped, 7) == {
        "x-deepseek-harness-user-id": "cbd96254-6463-367f-08bc-a09536733fd0",  # a UUID stays a hex UUID shape
        "x-deepseek-harness-session-id": "session-x", "OpenAI-Organization": "ahw-YiD594",
        "chatgpt-account-id": "goep_38", "anthropic-beta": "oauth-2025-04-20", "x-session-affinity": "session-x",
        "user-agent": "ua/1", "content-length": "7"}
    assert dropped == ["x-api-key"]
    assert sorted(redactor.identity_headers) == ["chatgpt-account-id", "openai-organization",
                                                 "x-deepseek-harness-user-id"]
    # a HAR header list: the same pseudonym for the same value, whatever the name's letter case
    assert _har_headers([{"name": "X-DeepSeek-Harness-User-Id", "value": USER}], redactor, [], None) == [
        {"name": "X-DeepSeek-Harness-User-Id", "value": "cbd96254-6463-367f-08bc-a09536733fd0"}]


@needs_corpus
def test_the_install_id_of_a_shared_capture_is_one_pseudonym_and_the_bundle_proves_its_verdicts(
        tmp_path: Path) -> None:
    log = next((C_CHANGE / "session-logs").glob("*.jsonl"))
    result = redact(log, tmp_path / "cc.jsonl", salt="s", capture=C_CHANGE / "wire.jsonl")
    assert (result.identity_headers, result.dropped_headers, result.mismatched) == (
        ("x-deepseek-harness-user-id",), (), ())
    before = [json.loads(line) for line in (C_CHANGE / "wire.jsonl").read_text("utf-8").splitlines()]
    after = [json.loads(line) for line in (tmp_path / "wire.jsonl").read_text("utf-8").splitlines()]
    assert {r["headers"]["x-deepseek-harness-user-id"] for r in before} == {USER}
    assert {r["headers"]["x-deepseek-harness-user-id"] for r in after} == {"ded97302-9559-683c-90bb-d11680557ef1"}
    assert [r["headers"]["x-deepseek-harness-session-id"] for r in after] == \
        [r["headers"]["x-deepseek-harness-session-id"] for r in before]
    assert {r["headers"]["host"] for r in after} == {"127.3.4.6:29664"}  # was 127.0.0.1:18092: loopback stays so
    assert USER not in (tmp_path / "wire.jsonl").read_text("utf-8")
    check = check_bundle(tmp_path / "cc.jsonl")
    assert (check.ok, check.compared, check.unproven) == (True, 8, None)


# --- 2. an IPv4 placeholder names no one's machine ------------------------------------------------------------


@pytest.mark.parametrize(("address", "placeholder"), [
    ("127.0.0.1:18092", "127.9.7.5:48981"),  # loopback stays loopback
    ("1.2.3.4", "0.1.3.8"),  # 7 characters: 0.0.0.0/8
    ("10.0.0.7", "10.8.8.9"),  # 8: 10.0.0.0/8
    ("8.8.8.8", "0.0.5.5"),
    ("172.16.5.4", "192.0.2.20"),  # 9-14: a documentation block
    ("10.77.66.55", "203.0.113.4"),
    ("100.64.12.1", "203.0.113.4"),
    ("192.168.100.200:8080", "192.168.235.115:4799"),  # 15: 192.168.0.0/16
])
def test_an_ipv4_address_becomes_a_documentation_or_reserved_one(address: str, placeholder: str) -> None:
    assert redact_host(address, Redactor(Placeholders(SALT))) == placeholder


def test_every_ipv4_placeholder_is_as_long_reserved_and_deterministic() -> None:
    draw = random.Random(38)
    redactor, again = Redactor(Placeholders(SALT)), Redactor(Placeholders(SALT))
    documentation = [ipaddress.ip_network(n) for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24")]
    # where a placeholder goes once its length's blocks hold no free one (session 39: each address its own)
    spill = [ipaddress.ip_network(n) for n in ("0.0.0.0/8", "240.0.0.0/4")]
    others = {7: ipaddress.ip_network("0.0.0.0/8"), 8: ipaddress.ip_network("10.0.0.0/8"),
              15: ipaddress.ip_network("192.168.0.0/16")}
    seen = set()
    for _ in range(600):
        quad = ".".join(str(draw.choice([draw.randrange(10), draw.randrange(10, 100), draw.randrange(100, 256)]))
                        for _ in range(4))
        url = f"http://{quad}:8080/v1"
        redacted = redact_url(url, redactor)
        assert len(redacted) == len(url) and redacted == redact_url(url, again)
        address = ipaddress.ip_address(redacted[7:redacted.index(":", 7)])
        if quad.startswith("127."):
            assert address.is_loopback
        elif len(quad) in others:
            assert address in others[len(quad)] or any(address in block for block in spill), (quad, address)
        else:
            assert any(address in block for block in documentation + spill), (quad, address)
        seen.add(len(quad))
    assert seen == set(range(7, 16))


# --- 3. a wire.jsonl response's headers -----------------------------------------------------------------------


def test_a_wire_jsonl_responses_headers_are_kept_as_a_har_responses() -> None:
    record = {"seq": 1, "method": "POST", "path": "/chat/completions", "headers": {"content-type": "application/json"},
              "body": "{}", "response": {"status": 200, "headers": {
                  "Content-Encoding": "gzip", "Set-Cookie": "sid=abc", "content-type": "application/json",
                  "openai-organization": "org-AbC123", "x-request-id": "req_123", "content-length": "321"},
                  "body": '{"id":"x","choices":[]}'}}
    dropped: list[str] = []
    redacted = _record(record, b"{}", Redactor(Placeholders(SALT)), dropped)
    assert redacted["response"] == {"status": 200, "headers": {
        "Content-Encoding": "gzip", "content-type": "application/json", "openai-organization": "ahw-YiD594",
        "x-request-id": "req_123", "content-length": "321"}, "body": '{"id":"x","choices":[]}'}
    assert dropped == ["set-cookie"]
    record["response"]["headers"] = [{"name": "Set-Cookie", "value": "sid=abc"},
                                     {"name": "Content-Encoding", "value": "gzip"}]  # HAR's list form
    dropped = []
    assert _record(record, b"{}", Redactor(Placeholders(SALT)), dropped)["response"]["headers"] == [
        {"name": "Content-Encoding", "value": "gzip"}]
    assert dropped == ["set-cookie"]


# --- 4. an unproven bundle ------------------------------------------------------------------------------------


@needs_corpus
def test_a_bundle_with_unrendered_requests_is_unproven_and_says_so(tmp_path: Path) -> None:
    log = next((C3 / "session-logs").glob("*.jsonl"))
    result = redact(log, tmp_path / "c3.jsonl", salt="s", capture=C3 / "wire.jsonl")
    assert (len(result.unrendered), result.mismatched) == (6, ())
    warned = [note for note in result.notes if getattr(note, "level", "note") == "warning"]
    assert warned == ["6 request(s) cannot be rendered without DSH's route configuration: give redact --routes FILE "
                      "to bundle it redacted; without it their diff verdicts compared nothing, so the redacted capture "
                      "is not proven to match the redacted log"]
    check = check_bundle(tmp_path / "c3.jsonl")
    assert (check.ok, check.compared, check.found_unrendered, check.counts["diff"]) == (True, 0, 6, 6)
    assert check.unproven == (
        f"6 of the 6 captured request(s) of {tmp_path / 'c3.jsonl'} unrendered: their diff verdicts compared no "
        "rendered body, so its capture is not proven to match its log; the bundle carries no route configuration "
        "(redacted without --routes): ask its sender to redact it again with --routes FILE (DSH's llm-pi-ai route "
        "configuration), which the bundle then carries redacted")
    assert getattr(check.unproven, "level", None) == "warning"
    routed = redact(log, tmp_path / "c3r.jsonl", salt="s", capture=C3 / "wire.jsonl",
                    routes=C3 / "inputs" / "pi-ai-routes.patch.yml")
    assert (routed.unrendered, [n for n in routed.notes if getattr(n, "level", "note") == "warning"]) == ((), [])
    check = check_bundle(tmp_path / "c3r.jsonl")
    assert (check.ok, check.compared, check.unproven) == (True, 6, None)
