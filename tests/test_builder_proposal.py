"""``LogBuilder.proposal``: the header the next attempt will use, read-only and detached."""

from __future__ import annotations

import pytest

from dsh_audit.testing import LogBuilder, tool_schema

DEFAULT = {"config": {"provider": "deepseek-official", "model": "deepseek-v4-flash", "reasoningEffort": "high",
                      "maxTokens": 65536},
           "system": "You are a helpful coding agent."}


def test_default_proposal_is_the_canonical_first_header():
    assert LogBuilder().proposal == DEFAULT


def test_proposal_follows_configure_before_anything_is_written():
    b = LogBuilder()
    read = tool_schema("read", "Read a file.", {"path": {"type": "string"}})
    b.configure(model="deepseek-v4-pro", max_tokens=None, temperature=0.5, system=None, tools=[read],
                adapter_defaults={"maxTokens": True})
    assert b.proposal == {"config": {"provider": "deepseek-official", "model": "deepseek-v4-pro",
                                     "reasoningEffort": "high", "temperature": 0.5},
                          "adapterDefaults": {"maxTokens": True}, "tools": [read]}
    assert b.events == []


def test_proposal_is_the_header_the_next_attempt_writes():
    b = LogBuilder()
    b.configure(reasoning_effort="low")
    expected = b.proposal
    with b.turn("Hi"):
        with b.step():
            b.assistant("Hello!")
    headers = [e["data"]["header"] for e in b.events if e["type"] == "request/header"]
    assert headers == [expected]


def test_proposal_is_a_detached_copy_and_read_only():
    b = LogBuilder()
    b.proposal["config"]["model"] = "changed"
    b.proposal.clear()
    assert b.proposal == DEFAULT
    with pytest.raises(AttributeError):
        b.proposal = {}


def test_fork_child_starts_from_the_parent_proposal():
    b = LogBuilder(session_id="parent")
    b.configure(model="deepseek-v4-pro")
    with b.turn("Hi"):
        with b.step():
            b.assistant("Hello!")
    child = b.fork(session_id="child")
    assert isinstance(child, LogBuilder)
    assert child.proposal == b.proposal
    assert child.proposal["config"]["model"] == "deepseek-v4-pro"
