"""iter_attribute (streaming, bounded memory) agrees with attribute (whole list) on every live log."""

from __future__ import annotations

import pytest

import dsh_audit
from dsh_audit.attribution import attribute, iter_attribute
from dsh_audit.session import open_session

from _golden import CORPUS

LOGS = sorted((CORPUS / "live").glob("*/session-logs/*.jsonl")) + sorted(
    (CORPUS / "fixtures").glob("headless-snapshots/*/session.jsonl"))


@pytest.mark.skipif(not LOGS, reason="../shared/corpus is absent")
@pytest.mark.parametrize("path", LOGS, ids=[f"{p.parent.parent.name}/{p.name[:16]}" for p in LOGS])
def test_streaming_attribution_equals_batch(path):
    try:
        session = open_session(path, lenient=True)
    except dsh_audit.DshAuditError:
        pytest.skip("log refused")
    whole = attribute(session)
    streamed = sorted(iter_attribute(path, lenient=True), key=lambda t: t.request)
    if session.header.parent_session:
        # children: the streamed first request is "first" (the parent is not read)
        whole_items = [t for t in whole.transitions if t.previous_session_id is None]
        streamed = [t for t in streamed if t.request in {w.request for w in whole_items}]
        assert [t.request for t in streamed] == [t.request for t in whole_items]
        return
    assert streamed == list(whole.transitions)
