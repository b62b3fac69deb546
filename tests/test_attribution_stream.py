"""iter_attribute (streaming, bounded memory) agrees with attribute (whole list) on every live log."""

from __future__ import annotations

import functools

import pytest

import dsh_audit
from dsh_audit.attribution import attribute, attribute_group, attribute_opened, iter_attribute
from dsh_audit.cache import (cache_group, cache_report, given_capture, given_usage, ledger_group, load_prices,
                             session_ledger)
from dsh_audit.capture import NO_CAPTURE_ENV
from dsh_audit.session import Session, open_group, open_session

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


ROOTS = sorted({p for p in [*LOGS, *(CORPUS / "live").glob("*/home/sessions/*/*/session.jsonl.zstd")]})


@functools.cache
def _roots():
    """Each root corpus log (no fork or subagent child) as ``(path, its group read whole, session)``:
    opened once for the module (seven tests read them; opening the 22 logs whole costs about a CPU
    second each time), which no test changes. Opening reads no capture, whatever NO_CAPTURE_ENV says:
    the functions compared with it (``attribute_opened``, the ``*_group`` ones) look for one each call."""
    found = []
    for path in ROOTS:
        group = open_group([path], lenient=True)
        session = group.given[0]
        if isinstance(session, Session) and not session.header.parent_session:
            found.append((path, group, session))
    return tuple(found)


@pytest.mark.skipif(not ROOTS, reason="../shared/corpus is absent")
def test_a_log_given_alone_is_attributed_while_replayed_exactly_as_whole():
    """`breaks LOG` on a log that is no fork or subagent child holds no request
    (attribute_group's streamed path); its transitions equal the whole-session path's."""
    compared = 0
    for path, group, session in _roots():
        whole = attribute_opened(group)[str(path)]
        streamed = attribute_group([path], lenient=True)
        assert streamed.items == [whole], path
        assert streamed.ids == {session.id: str(path)}
        compared += 1
    assert compared >= 20, compared


def _found_usage(session):
    """The usage of the wire.jsonl found beside ``session``'s log (request index -> tokens; None
    without one), as ``cache LOG`` prices with it: the same as that file given with --capture."""
    return given_usage([session], given_capture([session], None)).get(session.id)


#: ``alone``: with --no-capture (DSH_AUDIT_NO_CAPTURE) each root log is read alone, while it is
#: replayed; else a live log's wire.jsonl is found beside it (up to four folders up): it is read
#: whole and priced and judged from the capture's usage, as cache_report is given it.
ALONE = pytest.mark.parametrize("alone", [True, False], ids=["no-capture", "found-capture"])


@pytest.mark.skipif(not ROOTS, reason="../shared/corpus is absent")
@ALONE
def test_a_log_given_alone_is_accounted_while_replayed_exactly_as_whole(alone, monkeypatch):
    """`cache LOG` and `usage LOG` on a root log given alone with no capture keep no request
    (cache_group's and ledger_group's streamed path); the report (verdicts, rules, cost) and the
    priced ledger equal those made over the whole session. With a capture found beside the log,
    both apply its usage as the whole session's report and ledger given it do."""
    from dsh_audit.cache import _session

    if alone:
        monkeypatch.setenv(NO_CAPTURE_ENV, "1")
    streams = []
    real = _session.account_log
    monkeypatch.setattr(_session, "account_log", lambda log, **kw: streams.append(log.path) or real(log, **kw))
    compared = priced = 0
    prices = load_prices()
    for path, group, session in _roots():
        captured = None if alone else _found_usage(session)
        whole = cache_report(session, attribution=list(attribute_opened(group)[str(path)].transitions),
                             captured=captured)
        streamed = cache_group([path], lenient=True)
        assert [r.to_json() for r in streamed.items] == [whole.to_json()], path
        ledger = ledger_group([path], prices=prices, lenient=True)  # `usage`: the same pass
        assert ledger.items == [session_ledger(session, prices=prices, cache=whole, captured=captured)], path
        compared += 1
        priced += any(e.usage_source == "capture" for e in ledger.items[0].entries)
    assert (compared, priced, len(streams)) == ((22, 0, 44) if alone else (22, 18, 8)), (compared, priced, len(streams))


def _copies(tmp_path):
    """Each root corpus log copied alone into its own folder (no capture beside it, so `check`
    may check it while it is replayed)."""
    for k, (path, _group, _session) in enumerate(_roots()):
        folder = tmp_path / f"log{k}"
        folder.mkdir()
        copy = folder / path.name
        copy.write_bytes(path.read_bytes())
        yield copy


@pytest.mark.skipif(not ROOTS, reason="../shared/corpus is absent")
def test_check_for_its_reports_keeps_the_cache_totals_and_breaks_not_a_record_per_request(tmp_path):
    """`check`'s reports show a session's cache sums, counts and cost and its breaks, never a
    request's verdict or an extension: with ``lean`` a log checked as it is replayed keeps no
    verdict, no ledger entry and no transition but the breaks, each as its outline (no quoted event
    data); its totals and findings are the same."""
    from dsh_audit.gate import run_check

    compared = 0
    for copy in _copies(tmp_path):
        kept = run_check([copy], lenient=True, outline=True).sessions[0]
        totals = run_check([copy], lenient=True, outline=True, lean=True).sessions[0]
        if kept.cache is None:
            continue
        assert totals.cache is not None and totals.cache.verdicts == (), copy
        assert totals.cache.to_json(timeline=False) == kept.cache.to_json(timeline=False), copy
        assert totals.findings == kept.findings, copy
        assert totals.transitions == tuple(t.outline() for t in kept.transitions if t.verdict == "break"), copy
        compared += bool(kept.cache.verdicts)
    assert compared >= 10


@pytest.mark.parametrize("seed", range(3))
def test_exact_sum_is_usd_total_of_every_value_added(seed):
    import random

    from dsh_audit.cache import ExactSum, usd_total

    rng = random.Random(seed)
    for _ in range(500):
        values = [round(rng.uniform(-1, 1) * 10 ** rng.randint(-9, 4), rng.randint(0, 12))
                  for _ in range(rng.randint(0, 60))]
        total = ExactSum()
        for value in values:
            total.add(value)
        assert total.usd() == usd_total(values), values


def test_check_of_a_log_alone_is_made_while_replayed_exactly_as_whole(tmp_path, monkeypatch):
    """`check LOG` (outline=True) on a root log with no capture keeps no request: its findings,
    transitions, cache report, title and span equal the whole-session check's, and its requests
    are the outlines of the whole session's."""
    from dsh_audit.gate import RequestOutline, run_check
    from dsh_audit.gate._run import _Checker

    streamed_calls = []
    real = _Checker.streamed

    def spy(self, log, routes):
        streamed_calls.append(log.path)
        return real(self, log, routes)

    monkeypatch.setattr(_Checker, "streamed", spy)
    compared = 0
    for copy in _copies(tmp_path):
        whole = run_check([copy], lenient=True).sessions[0]
        streamed = run_check([copy], lenient=True, outline=True).sessions[0]
        assert streamed_calls[-1] == str(copy)
        assert streamed.findings == whole.findings, copy
        assert streamed.transitions == whole.transitions, copy
        assert streamed.cache.to_json() == whole.cache.to_json(), copy
        assert streamed.requests == tuple(map(RequestOutline.of, whole.requests)), copy
        assert (streamed.title, streamed.first_time, streamed.last_time, streamed.parent_id) == \
            (whole.title, whole.first_time, whole.last_time, whole.parent_id), copy
        compared += 1
    assert compared >= 20 and len(streamed_calls) == compared, compared


@pytest.mark.skipif(not ROOTS, reason="../shared/corpus is absent")
@ALONE
def test_index_of_a_log_alone_is_made_while_replayed_exactly_as_whole(alone, monkeypatch):
    """`index LOG` on a root log with no capture keeps no request (audit_group's streamed path): its
    record (every request, break and cost row) equals the one made from the whole session; with a
    capture found beside the log, the one made from the whole session given its usage."""
    from dsh_audit.attribution import attribute_opened as attribute_whole
    from dsh_audit.fleet import audit_group
    from dsh_audit.fleet._audit import _base, _record

    if alone:
        monkeypatch.setenv(NO_CAPTURE_ENV, "1")
    compared = priced = 0
    prices = load_prices()
    for path, group, session in _roots():
        captured = None if alone else _found_usage(session)
        base = _base(str(path), lenient=True, max_version=4, attribution=True, cache=True, prices=prices)
        whole = _record(base, session, attribute_whole(group)[str(path)], cache=True, prices=prices,
                        captured=captured)
        streamed = audit_group([path], lenient=True, prices=prices)
        assert streamed.items == [whole], path
        compared += 1
        priced += captured is not None
    assert (compared, priced) == (22, 0 if alone else 18), (compared, priced)


def test_a_transition_outline_keeps_what_lists_a_break():
    from dsh_audit.attribution import FieldChange, Transition
    from dsh_audit.session import Evidence

    full = Transition("s", 4, 3, "s", "loop", "break", "header_change", ("prune",),
                      fields=(FieldChange("system", 10, 12, True, {"diff": ["-a", "+b"]}),),
                      evidence=(Evidence(7, "request/header", {"config": {"model": "m"}}, "s"),),
                      context=(Evidence(6, "plan/mode", {"mode": "plan"}),), detail="system changed")
    outline = full.outline()
    assert outline == Transition("s", 4, 3, "s", "loop", "break", "header_change", ("prune",),
                                 fields=(FieldChange("system", None, None, True),),
                                 evidence=(Evidence(7, "request/header", {}, "s"),), detail="system changed")
    assert (outline.evidence_seqs, outline.field_names, outline.is_unexplained) == ((7,), ("system",), False)
