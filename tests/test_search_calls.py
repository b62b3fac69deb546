"""Web-search calls (``web/deepseek-search-llm-request``) are listed as requests of kind
``search``, render to their logged body, and every command handles them."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import dsh_audit
from dsh_audit.cli import cli
from dsh_audit.jsjson import stringify
from dsh_audit.testing import LogBuilder, ToolCall
from dsh_audit.wire import render

from _cli import invoke

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
def test_every_command_handles_search_calls(log_path, command, tmp_path, monkeypatch, capsys):
    args = [a.replace("{path}", str(log_path)) for a in command]
    if "{path}" not in command:
        args.append(str(log_path))
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, *args)  # never a traceback
    assert code == 0, (out, err)
    if args[0] == "requests":
        assert [json.loads(line)["kind"] for line in out.splitlines()] == ["search", "loop", "loop"]


def test_a_second_web_search_is_a_search_input_break_explained_by_its_record(tmp_path):
    """Each web search sends its own query: a later search call breaks the previous one's prefix,
    and its own record (which logs the body whole) explains it; breaks exits 0."""
    from dsh_audit.attribution import attribute_paths

    builder = LogBuilder(session_id="session-search2", cwd="/home/dev/p")
    records = []
    for query in ("first query", "second query"):
        with builder.turn(f"Find {query}."):
            with builder.step():
                builder.header()
                reply = builder.assistant(tool_calls=[ToolCall("web_search", {"query": query})])
                records.append(builder.append("web/deepseek-search-llm-request", {
                    "endpoint": "https://search.example/v1/messages", "apiVersion": "2023-06-01",
                    "body": {**BODY, "messages": [{"role": "user", "content": query}]}}))
                builder.tool_result(reply.call_ids[0], "1. notes")
            with builder.step():
                builder.assistant("Here.")
    path = builder.write_jsonl(tmp_path / "session.jsonl")
    (found,), failures = attribute_paths([path], adapter=None)
    assert failures == []
    searches = [(t.request, t.previous, t.relation, t.verdict, t.cause, t.evidence_seqs)
                for t in found.transitions if t.kind == "search"]
    assert searches == [(0, None, "search_call", "first", None, ()),
                        (3, 0, "search_call", "break", "search_input", (records[1],))]
    quoted = [e.to_json() for t in found.transitions if t.kind == "search" for e in t.evidence]
    assert quoted == [{"seq": records[1], "type": "web/deepseek-search-llm-request",
                       "data": {"endpoint": "https://search.example/v1/messages", "query": "second query"}}]
    result = CliRunner().invoke(cli, ["breaks", str(path)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
