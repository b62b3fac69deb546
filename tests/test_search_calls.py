"""Web-search calls (``web/deepseek-search-llm-request``) are listed as requests of kind
``search``, render to their logged body, and every command handles them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import dsh_audit
from dsh_audit.jsjson import stringify
from dsh_audit.testing import LogBuilder, ToolCall
from dsh_audit.wire import render

BODY = {"model": "deepseek-search", "max_tokens": 1024, "system": "Search the web.",
        "messages": [{"role": "user", "content": "dsh-audit release notes"}]}


@pytest.fixture()
def log_path(tmp_path):
    builder = LogBuilder(session_id="session-search", cwd="/home/dev/p")
    with builder.turn("Find the release notes."):
        with builder.step():
            builder.header()
            reply = builder.assistant(tool_calls=[ToolCall("web_search", {"query": "dsh-audit release notes"})])
            builder.append("web/deepseek-search-llm-request",
                           {"endpoint": "https://search.example/v1/messages", "apiVersion": "2023-06-01",
                            "body": BODY})
            builder.tool_result(reply.call_ids[0], "1. notes")
        with builder.step():
            builder.assistant("Here they are.")
    return builder.write_jsonl(tmp_path / "session.jsonl")


def test_search_call_is_a_request_with_its_literal_body(log_path):
    requests = dsh_audit.requests(dsh_audit.load(log_path))
    assert [r.kind for r in requests] == ["search", "loop", "loop"]
    search = requests[0]
    assert search.messages == tuple(BODY["messages"])
    assert search.extra["endpoint"] == "https://search.example/v1/messages"
    wire = render(search)
    assert wire.body == stringify(BODY).encode() and wire.path == "https://search.example/v1/messages"


@pytest.mark.parametrize("command", [["requests", "--json"], ["breaks", "--json"], ["cache", "--json"],
                                     ["validate"], ["check"], ["render", "{path}", "0"],
                                     ["report", "-o", "report.html"], ["index", "--db", "audit.sqlite"]])
def test_every_command_handles_search_calls(log_path, command, tmp_path):
    args = [a.replace("{path}", str(log_path)) for a in command]
    if "{path}" not in command:
        args.append(str(log_path))
    result = subprocess.run([sys.executable, "-m", "dsh_audit", *args], capture_output=True, text=True,
                            cwd=tmp_path)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 0, result.stdout + result.stderr
    if args[0] == "requests":
        assert [json.loads(line)["kind"] for line in result.stdout.splitlines()] == ["search", "loop", "loop"]
