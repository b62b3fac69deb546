"""Session 38 (fuzz round 21, defect 8): ``redact`` leaves no IPv4 literal in a redacted capture. Before, a
URL's query (``referer: ...?ip=172.16.0.1``), a request header it did not list (``x-note``) and every
response header kept theirs. Now each IPv4 literal of a URL (path, query, fragment), a HAR ``queryString``
item, a kept request header and a response header takes :func:`dsh_audit.redact._hosts.redact_host`'s
placeholder of that address (the one it has in ``host`` or ``x-forwarded-for``: same length, a block that
names no one's machine, the same for the same salt), except in the headers a verdict reads verbatim (DSH's
and pi-ai's session headers, ``anthropic-beta``); the verdicts and ``redact --check`` are unchanged.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke
from _golden import CORPUS

from dsh_audit.redact import Placeholders, Redactor, redact
from dsh_audit.redact._capture import _har_headers, _named_items
from dsh_audit.redact._hosts import redact_addresses, redact_host, redact_url

SCENARIO = CORPUS / "live" / "a-chat"
SALT = "ips38"
QUAD = re.compile(r"(?<![0-9.])\d{1,3}(?:\.\d{1,3}){3}(?![0-9])")


def _redactor() -> Redactor:
    return Redactor(Placeholders(SALT.encode()))


def test_every_ipv4_literal_of_a_text_takes_the_host_placeholder_and_nothing_else_changes() -> None:
    r = _redactor()
    assert [redact_host(a, r) for a in ("10.0.0.7", "172.16.0.1", "9.9.9.9", "100.64.0.1", "127.0.0.1")] == \
        ["10.0.4.5", "192.0.2.40", "0.4.6.5", "192.0.2.22", "127.2.2.0"]
    text = "from 172.16.0.1, not 1.2.3.4.5, 300.1.1.1, 1.2.3, v1.2.3.4a or 10.0.0.7."
    assert redact_addresses(text, r) == "from 192.0.2.40, not 1.2.3.4.5, 300.1.1.1, 1.2.3, v1.2.3.4a or 10.0.4.5."
    assert redact_addresses("no address here", r) == "no address here"


def test_a_url_loses_the_addresses_of_its_path_query_and_fragment() -> None:
    r = _redactor()
    assert redact_url("https://api.deepseek.com/v1/10.0.0.7/x?ip=172.16.0.1&n=2#at=9.9.9.9", r) == \
        "https://api.deepseek.com/v1/10.0.4.5/x?ip=192.0.2.40&n=2#at=0.4.6.5"
    # the host's address and the query's same address: one placeholder (the port drawn as before)
    assert redact_url("http://10.0.0.7:8080/a?ip=10.0.0.7", r) == "http://10.0.4.5:1737/a?ip=10.0.4.5"
    assert redact_url("/v1/chat/completions?client=100.64.0.1", r) == "/v1/chat/completions?client=192.0.2.22"


def test_har_headers_and_query_items_lose_their_addresses_but_session_headers_stay() -> None:
    r = _redactor()
    headers = [{"name": "X-Note", "value": "seen from 9.9.9.9"}, {"name": "x-server-ip", "value": "100.64.0.1"},
               {"name": "x-session-affinity", "value": "10.0.0.7"}, {"name": "anthropic-beta", "value": "b-1.2.3.4"},
               {"name": "content-type", "value": "application/json"}]
    assert _har_headers(headers, r, [], None) == [
        {"name": "X-Note", "value": "seen from 0.4.6.5"}, {"name": "x-server-ip", "value": "192.0.2.22"},
        {"name": "x-session-affinity", "value": "10.0.0.7"}, {"name": "anthropic-beta", "value": "b-1.2.3.4"},
        {"name": "content-type", "value": "application/json"}]
    items = [{"name": "ip", "value": "172.16.0.1"}, {"name": "n", "value": "2"}]
    assert _named_items(items, r, kept=True) == [{"name": "ip", "value": "192.0.2.40"}, {"name": "n", "value": "2"}]


def _planted(record: dict[str, Any]) -> dict[str, Any]:
    headers = {**record["headers"], "referer": "http://10.20.30.40:8080/a?ip=172.16.0.1",
               "x-note": "relayed by 9.9.9.9", "user-agent": record["headers"]["user-agent"] + " via 10.0.0.7",
               "x-session-affinity": "not-a-session 10.0.0.7"}
    response = {**record["response"], "headers": {"content-type": "application/json", "x-server-ip": "100.64.0.1"}}
    return {**record, "headers": headers, "response": response}


@pytest.mark.skipif(not SCENARIO.is_dir(), reason="../shared/corpus is absent")
def test_a_redacted_capture_holds_no_original_ipv4_and_its_verdicts_stay(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    log = next((SCENARIO / "session-logs").glob("*.jsonl"))
    records = [_planted(json.loads(line)) for line in (SCENARIO / "wire.jsonl").read_text("utf-8").splitlines()]
    wire = tmp_path / "wire.jsonl"
    wire.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    (tmp_path / "out").mkdir()
    result = redact(log, tmp_path / "out" / "session.jsonl", salt=SALT, capture=wire)
    assert (result.mismatched, result.notes) == ((), ())
    assert result.capture is not None
    written = [json.loads(line) for line in result.capture.read_text("utf-8").splitlines()]
    assert len(written) == len(records) == 3
    r = _redactor()
    for before, after in zip(records, written):
        headers = after["headers"]
        assert headers["referer"] == f"http://{redact_host('10.20.30.40:8080', r)}/a?ip=192.0.2.40"
        assert headers["x-note"] == "relayed by 0.4.6.5"
        assert headers["user-agent"] == before["headers"]["user-agent"].replace("10.0.0.7", "10.0.4.5")
        assert headers["x-session-affinity"] == "not-a-session 10.0.0.7"  # read verbatim by diff's pairing
        assert headers["host"] == redact_host(before["headers"]["host"], r)
        assert after["response"]["headers"] == {"content-type": "application/json", "x-server-ip": "192.0.2.22"}
        # every other address is gone: only the session header's, which a verdict reads, stays
        left = {q for q in QUAD.findall(json.dumps({k: v for k, v in after.items() if k != "body"}))}
        assert left & {"10.20.30.40", "172.16.0.1", "9.9.9.9", "100.64.0.1", "127.0.0.1"} == set()
    code, _, err = invoke(monkeypatch, capsys, "redact", "--check", str(result.output))
    assert (code, err) == (0, [])
