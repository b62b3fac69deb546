"""Fuzz round 28's small defects (D3-D6, and diff's "OK" for a log it could not read).

D3: a repeated Codex ``token_count`` whose ``total_token_usage`` lost a count was taken as a new,
priced call, silently (5 requests, +54 % cost). D4: a table cut ``abcdefghij-2`` to ``abcdefgh…``,
which `show` refused as ambiguous (it also matches ``session-abcdefgh-1`` without ``session-``).
D5: watch's final line pricing a title call from the capture said ``"provisional": true``. D6:
check's DSH810 said "no capture given or found" where the wire.jsonl found beside the log is
another session's, which diff says. And diff printed ``...: OK`` for a log it refused (exit 2).
"""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest
from _cli import chat_log, invoke
from test_watch_fixes import SAFETY

from dsh_audit.capture import NO_CAPTURE_ENV
from dsh_audit.gate._findings import Judge
from dsh_audit.importers import import_codex
from dsh_audit.log import resolve_session
from dsh_audit.report.terminal import id_prefixes
from dsh_audit.watch import WatchRequest, watch

CODEX = (Path(__file__).parent / "data" / "importers" / "codex"
         / "rollout-2026-01-05T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl")
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "live"
needs_corpus = pytest.mark.skipif(not (CORPUS / "a-chat" / "wire.jsonl").is_file(), reason="../shared/corpus is absent")
#: What the warning of a token_count whose total cannot tell a call from a repeat says is done.
UNSURE = ("the open request ends here (the event resent whole right after gives it its usage); with none open it "
          "is a call unless it repeats the last last_token_usage or has none, or a compacted record follows it")


def _codex(tmp_path: Path, damage: str, line: int) -> Path:
    """The Codex fixture with the token_count of ``line`` damaged (12: line 10's, resent with a
    rate-limit update; 15: a call's end): its total's ``input_tokens`` deleted or made ``damage``'s
    JSON, or the total (``info``) made the JSON after ``total=`` (``info=``), or given a key
    ``new_tokens`` of the JSON after ``gained=``, or its ``last_token_usage`` made the total
    (``last=total``), times N (``last*N``), or given a key ``extra_tokens`` (``last+extra``);
    ``then-intact``: deleted, and with `` then-intact`` after another damage, the token_count resent
    whole after it (line 10's for 12); ``; N last=total``: the token_count of line N after it made so
    too (`` then-intact`` after it: and resent whole; `` since 15``: made the rise since line 15's
    total instead, both calls'). `` repeated``: the damaged event repeated word for word right after it (as Codex repeats one with a rate-limit
    update); `` then-last=J``: resent with its ``last_token_usage`` the JSON ``J``; `` alone``: line
    12, line 10's resend, holds ``info`` null (damage after a usage: Codex writes it null only before
    its first, fuzz 43)."""
    records = [json.loads(text) for text in CODEX.read_text(encoding="utf-8").splitlines()]
    damage, _, after = damage.partition("; ")
    if after:
        at = int(after.split()[0])
        if after.endswith(" then-intact"):
            records.insert(at, json.loads(json.dumps(records[at - 1])))
        later = records[at - 1]["payload"]["info"]
        since = records[14]["payload"]["info"]["total_token_usage"] if after.endswith(" since 15") else {}
        later["last_token_usage"] = {key: count - since.get(key, 0)
                                     for key, count in later["total_token_usage"].items()}
        if after.endswith(" repeated"):
            records.insert(at, json.loads(json.dumps(records[at - 1])))
    if damage.endswith(" alone"):
        damage = damage.removesuffix(" alone")
        records[11]["payload"]["info"] = None
    whole = json.loads(json.dumps(records[9 if line == 12 else line - 1]))
    info = records[line - 1]["payload"]["info"]
    intact = damage == "then-intact" or damage.endswith(" then-intact")
    damage, _, resent = damage.removesuffix(" then-intact").partition(" then-last=")
    repeated = damage.endswith(" repeated")
    damage = damage.removesuffix(" repeated")
    if damage.startswith("total="):
        info["total_token_usage"] = json.loads(damage.removeprefix("total="))
    elif damage.startswith("info="):
        records[line - 1]["payload"]["info"] = json.loads(damage.removeprefix("info="))
    elif damage == "last=total":
        info["last_token_usage"] = dict(info["total_token_usage"])
    elif damage.startswith("last*"):
        info["last_token_usage"] = {key: count * int(damage[5:]) for key, count in info["last_token_usage"].items()}
    elif damage == "last+extra":
        info["last_token_usage"]["extra_tokens"] = 7
    elif damage.startswith("gained="):
        info["total_token_usage"]["new_tokens"] = json.loads(damage.removeprefix("gained="))
    elif damage in ("deleted", "then-intact"):
        del info["total_token_usage"]["input_tokens"]
    else:
        info["total_token_usage"]["input_tokens"] = json.loads(damage)
    if intact:
        records.insert(line, whole)
    if repeated or resent:
        records.insert(line, json.loads(json.dumps(records[line - 1])))
    if resent:
        records[line]["payload"]["info"]["last_token_usage"] = json.loads(resent)
    path = tmp_path / "rollout-x.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


_TOTAL = "total_token_usage "
_GAINED = _TOTAL + "gained new_tokens, which the last total did not hold"
_RESENT = ": the call it ends is kept with no usage (the event resent whole right after gives it its usage)"
_MOVED = _TOTAL + "moved by other than its last_token_usage (Codex adds each call's to it)"
#: What the warning of a last_token_usage made the total after a damaged token_count says.
_HELD = ("last_token_usage holds more than total_token_usage rose by since the last whole total, less the calls "
         "priced since (Codex adds each call's to it)" + _RESENT)
#: What a variant that loses a call's usage for good logs instead (requests, output, $, unknown).
_LOST = {("info={}", 15): (4, 170, 0.006937, 1), ("info={}", 16): (4, 82, 0.005932, 1),
         ("deleted; 16 last=total", 15): (4, 82, 0.005932, 1), ('"x"; 16 last=total', 15): (4, 82, 0.005932, 1),
         ("info=[]; 16 last=total", 15): (4, 70, 0.005249, 2), ("deleted; 15 last=total", 12): (4, 170, 0.006937, 1),
         ('info="x"; 15 last=total', 12): (4, 170, 0.006937, 1), ("deleted; 24 last=total", 16): (4, 152, 0.006521, 1),
         ("last=total repeated", 15): (4, 182, 0.00762, 0), ("deleted; 16 last=total repeated", 15): (4, 82, 0.005932, 1),
         ("deleted alone; 15 last=total", 10): (4, 170, 0.006937, 1), ("info=null", 15): (4, 170, 0.006937, 1),
         ("info=null", 16): (4, 82, 0.005932, 1), ("last*2; 24 last=total since 15", 16): (4, 152, 0.006521, 1)}


@pytest.mark.parametrize(("damage", "line", "why"), [
    ("deleted", 12, _TOTAL + "lacks input_tokens"), ("then-intact", 12, _TOTAL + "lacks input_tokens"),
    ('"3000"', 12, _TOTAL + 'input_tokens is a string "3000", not a number'),
    ("null", 12, _TOTAL + "input_tokens is null, not a number"),
    ("true", 12, _TOTAL + "input_tokens is a boolean true, not a number"),
    ("then-intact", 15, _TOTAL + "lacks input_tokens"),
    ('total="x" then-intact', 12, _TOTAL + 'is a string "x", not an object'),
    ("total=[] then-intact", 15, _TOTAL + "is an array [], not an object"),
    ("1 then-intact", 12, _TOTAL + "went down (it only adds up)"),
    ("1 then-intact", 15, _TOTAL + "went down (it only adds up)"),
    ("1000000003000 then-intact", 12,
     _TOTAL + "input_tokens rose by 1,000,000,000,000 at once, past the 1,000,000,000 tokens a call holds"),
    ("gained=0", 12, _GAINED), ("gained=1000000000000 then-intact", 12, _GAINED),
    ('info="x"', 12, 'info is a string "x", not an object'),
    ('info="x" then-intact', 12, 'info is a string "x", not an object'),
    ("info={}", 12, None), ("info=[] then-intact", 15, "info is an array [], not an object"),
    ("null", 10, _TOTAL + "input_tokens is null, not a number"),
    ('"3000"', 10, _TOTAL + 'input_tokens is a string "3000", not a number'),
    ("1 then-intact", 10, _MOVED + _RESENT), ("1000000003000 then-intact", 10, _MOVED + _RESENT), ("info=[]", 10, "info is an array [], not an object"),
    ("info={}", 10, "info has no last_token_usage" + _RESENT), ("info={}", 15, "info has no last_token_usage" + _RESENT),
    ("info={}", 16, "info has no last_token_usage" + _RESENT),
    ("info={} then-intact", 15, "info has no last_token_usage" + _RESENT),
    ("then-intact", 16, _TOTAL + "lacks input_tokens"), ('total="x" then-intact', 16, _TOTAL + 'is a string "x", not an object'),
    ("null then-intact", 16, _TOTAL + "input_tokens is null, not a number"),
    ("last=total", 15, _MOVED + ": the call it ends is priced from the totals' difference"),
    ("last=total", 24, _MOVED + ": the call it ends is priced from the totals' difference"), ("last=total", 10, None),
    ("deleted; 16 last=total", 15, _TOTAL + "lacks input_tokens"), ("deleted; 15 last=total", 12, _TOTAL + "lacks input_tokens"),
    ('"x"; 16 last=total', 15, _TOTAL + 'input_tokens is a string "x", not a number'),
    ('info="x"; 15 last=total', 12, 'info is a string "x", not an object'),
    ("info=[]; 16 last=total", 15, "info is an array [], not an object"),
    ("deleted; 24 last=total", 16, _TOTAL + "lacks input_tokens"),
    ("deleted; 16 last=total then-intact", 15, _TOTAL + "lacks input_tokens"),
    ("last=total then-intact", 16, _MOVED + ": the call it ends is priced from the totals' difference"),
    ("last=total repeated", 15, _MOVED + ": the call it ends is priced from the totals' difference"),
    ("deleted; 16 last=total repeated", 15, _TOTAL + "lacks input_tokens"),
    ("last=total then-last=null", 15, _MOVED + ": the call it ends is priced from the totals' difference"),
    ('last=total then-last="x"', 15, _MOVED + ": the call it ends is priced from the totals' difference"),
    ("last=total then-last=[]", 15, _MOVED + ": the call it ends is priced from the totals' difference"),
    ("deleted alone", 10, _TOTAL + "lacks input_tokens"),
    ("deleted alone; 15 last=total", 10, _TOTAL + "lacks input_tokens"),
    ("last+extra", 10, _TOTAL + "lacks extra_tokens"), ("1.5", 12, _TOTAL + "input_tokens is a number 1.5, not a count"),
    ("-1", 10, _TOTAL + "input_tokens is a number -1, not a count"), ("last*0", 10, _MOVED + _RESENT),
    ("last*0", 24, _MOVED + ": the call it ends is priced from the totals' difference"),
    ("info=null", 15, "info is null, not an object"), ("info=null", 16, "info is null, not an object"),
    ("last*2; 24 last=total since 15", 16, _MOVED + ": the call it ends is priced from the totals' difference"),
    ("deleted repeated", 12, _TOTAL + "lacks input_tokens"), ('total="x" repeated', 15, _TOTAL + 'is a string "x", not an object'),
    ('info="x" repeated', 12, 'info is a string "x", not an object')])
def test_a_total_that_lost_a_count_neither_splits_nor_merges_calls_and_is_warned_of(
        damage: str, line: int, why: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """D3: the usage of the intact rollout (4 requests, 182 output tokens, $0.00762), and one
    warning naming the line; an intact repeat after the damaged event (of a repeat, or of the
    event that ended a call) is a repeat still. Session 42: so for every damaged total (no
    object, a count gone down or risen past what a call holds), not only one that lost a count
    (a non-object or lower total resent whole was a fifth call: $0.01177). Re-read D: so for a
    total that gains a key (a fifth call, $0.01177, with no warning, or one blaming intact
    lines), and an ``info`` that is no object or empty (a fifth call, unpriced; ``[]`` that ended
    a call, resent whole, a fifth call: the resend now gives the call its usage). Session 42
    (fuzz 30a C1-C5), one rule: a whole total is the last plus its own last_token_usage. So the
    first call's total is judged too (C1: a fifth call, $0.01177, unsaid); a resend after a tool's
    output still gives the call its usage (C2: a fifth call); a compaction's damaged event resent
    whole is no phantom call (C3: the summarising call stayed ``loop``); ``info`` ``{}`` ending
    a call is said (C4: usage lost unsaid); a last_token_usage that is the total is priced from
    the totals' difference (C5: $0.01177, unsaid). Session 43: a last_token_usage made the total
    right after another damaged event (no whole total to take the difference from) is unpriced,
    said once on its own line (it was priced from the cumulative total, unsaid: $0.01177 to
    $0.014141; after ``info`` ``[]``, both calls lost); the event resent whole after it gives it its
    usage, as after a last_token_usage made the total alone (each was a fifth call). Review 43 B:
    such an event repeated word for word (a rate-limit update) is said once, no fifth call (it was one,
    unpriced, said again); resent with a ``last_token_usage`` that is no object it is a repeat (it was
    an AttributeError, exit 3); and a first total damaged, its resend lost, then a ``last_token_usage``
    made the total is unpriced, said, as the rise must hold the call priced before it too (it was
    priced from the total, unsaid: $0.01177). Fuzz 43 (re-read F): a call priced from the totals'
    difference is held by a later total too (counted twice, +22 %); the first call's resend after a
    ``last_token_usage`` that gained a key, or a total count ``1.5`` (a fifth call); a
    ``last_token_usage`` of zeros (priced $0, unsaid); ``info`` null after a usage (two calls merged,
    unsaid); a damaged event repeated word for word (said twice)."""
    log = _codex(tmp_path, damage, line)
    code, out, err = invoke(monkeypatch, capsys, "usage", str(log), "--json")
    totals = json.loads(out)["totals"]
    assert (code, totals["requests"], totals["tokens"]["output"], totals["cost_usd"]["total"],
            totals["usage_unknown_requests"]) == (0, *_LOST.get((damage, line), (4, 182, 0.00762, 0)))
    assert [request.kind for request in import_codex(log).requests] == ["loop", "loop", "compaction", "loop"]
    then = "" if why is None or ": " in why else f": {UNSURE}"
    later = damage.partition("; ")[2].split(" ")[0]
    null = [f"warning: {log}:12: token_count info is null, not an object: {UNSURE}"] if " alone" in damage else []
    assert err == ([] if why is None else [f"warning: {log}:{line}: token_count {why}{then}"]) + null + (
        [f"warning: {log}:{later}: token_count {_HELD}"] if later else [])


def test_every_cut_id_names_its_session_as_show_matches_a_prefix(tmp_path: Path) -> None:
    """D4: ``abcdefgh…`` would name both ids (the first without its ``session-``): the second is
    cut one character later, and each cut resolves to its own session."""
    ids = ["session-abcdefgh-1", "abcdefghij-2", "longer-identifier-one"]
    cuts = id_prefixes(ids, mark="…")
    assert cuts == {"session-abcdefgh-1": "session-abcdefgh…", "abcdefghij-2": "abcdefghi…",
                    "longer-identifier-one": "longer-i…"}
    root = tmp_path / "sessions"
    logs = {sid: chat_log(root / "p" / sid / "session.jsonl", sid) for sid in ids}
    assert {sid: resolve_session(cut, root=root) for sid, cut in cuts.items()} == logs


def _provisional_fields(item: WatchRequest) -> tuple[Any, ...]:
    return item.index, item.provisional, item.update, item.usage_source


@needs_corpus
def test_watch_s_final_priced_line_is_not_provisional(tmp_path: Path) -> None:
    """D5: a-chat's log whole when the watch began, no capture beside it; the capture written as
    the watch ends. The title call, shown unpriced, comes again priced from it as the watch ends:
    that line is final (``"provisional": false``), its JSON line whole but for where and when."""
    logs = tmp_path / "chat" / "session-logs"
    logs.mkdir(parents=True)
    for log in (CORPUS / "a-chat" / "session-logs").glob("*.jsonl"):
        shutil.copyfile(log, logs / log.name)
    stop, shown = threading.Event(), []
    for item in watch([logs], stop=stop, since=0, exit_after=SAFETY, poll=0.02, notifications=False):
        if isinstance(item, WatchRequest):
            shown.append(item)
            if item.index == 2:
                shutil.copyfile(CORPUS / "a-chat" / "wire.jsonl", logs.parent / "wire.jsonl")
                stop.set()
    assert list(map(_provisional_fields, shown)) == [(0, False, False, None), (1, False, False, "log"),
                                                    (2, False, False, "log"), (0, False, True, "capture")]
    last = shown[-1].to_json()
    assert (last.pop("seen_at") is not None, last.pop("path")) == (True, str(next(logs.glob("*.jsonl"))))
    assert last == {
        "type": "request", "session_id": "session-2b096b61-0a34-4da6-abec-4e87161c2c0b", "title": "Fake session title",
        "index": 0, "kind": "title", "turn": None, "step": None, "attempt": 1, "model": "deepseek-v4-flash",
        "sent_at": "2026-12-02T11:02:07Z", "prompt_tokens": None, "expected_cache_read": 0, "reusable_cache_read": 0,
        # judged while no capture was there: priced only, its verdict kept (no restater, review rA of session 44)
        "actual_cache_read": None, "classification": "usage_unknown",
        "cost_usd": {"cache_miss": 2.1e-05, "cache_read": 0.0, "cache_write": 0.0, "output": 3e-06, "total": 2.4e-05},
        "lost_tokens": 0, "lost_cost_usd": 0.0, "verdict": "first", "cause": None, "relation": "title_call",
        "previous": None, "fields": [], "evidence_seqs": [], "transition": None, "history": True,
        "provisional": False, "update": True, "usage_source": "capture"}


@needs_corpus
@pytest.mark.parametrize("beside", ["other", "unreadable", "ignored", "arrives"])
def test_check_says_the_capture_found_is_another_session_s(beside: str, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """D6: a-chat's log beside b-tools' wire.jsonl: DSH810 says that capture holds none of its
    requests, as diff's note does, with a hint that fits. One that cannot be read keeps its own
    DSH802 and DSH810's words for none; found ones ignored (--no-capture) say so. The log's own
    capture that arrives after its comparison, before its judgement (a proxy still writing it), was
    not read: none was found, and DSH810 says so (it said the capture holds none of its requests)."""
    log = tmp_path / next((CORPUS / "a-chat" / "session-logs").glob("*.jsonl")).name
    shutil.copyfile(CORPUS / "a-chat" / "session-logs" / log.name, log)
    wire = tmp_path / "wire.jsonl"
    if beside == "unreadable":
        wire.write_text("not json\n", encoding="utf-8")
    elif beside == "arrives":
        judge = Judge.session

        def arriving(self: Judge, *args: Any, **kwargs: Any) -> list[Any]:
            shutil.copyfile(CORPUS / "a-chat" / "wire.jsonl", wire)  # every one of the log's requests
            return judge(self, *args, **kwargs)

        monkeypatch.setattr(Judge, "session", arriving)
    else:
        shutil.copyfile(CORPUS / "b-tools" / "wire.jsonl", wire)
    if beside == "ignored":
        monkeypatch.setenv(NO_CAPTURE_ENV, "1")
    code, out, _ = invoke(monkeypatch, capsys, "check", str(tmp_path), "--json")
    findings = [(f["rule"], f["path"], f["message"], f["hint"]) for f in json.loads(out)["findings"]]
    other = (f"no capture: the capture found beside the log ({wire}) holds none of its requests (it holds requests "
             "of session(s) session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3dd)",
             "pass --capture FILE naming the log's capture, or put the wire.jsonl holding its requests beside it "
             "or up to four folders above it")
    none = ("no capture given or found beside the log (wire.jsonl)",
            "pass --capture FILE, or put a wire.jsonl holding the log's requests beside it or up to four folders "
            "above it")
    ignored = ("no capture given, and captures found beside the log are ignored (--no-capture)",
               "pass --capture FILE; without --no-capture, a wire.jsonl beside the log or up to four folders above it "
               "is compared")
    unread = (f"no capture compared: the capture found beside the log ({wire}) cannot be read (DSH802)",
              "repair or remove that file (its DSH802 says where it breaks), or pass --capture FILE")
    said = {"other": other, "unreadable": unread, "ignored": ignored, "arrives": none}[beside]
    assert (code, findings[0]) == (1 if beside == "unreadable" else 0, ("DSH810", str(log), *said))
    assert [f[0] for f in findings[1:]] == (["DSH802"] if beside == "unreadable" else [])
    assert wire.is_file()  # "arrives": it was beside the log when the log was judged


@needs_corpus
def test_diff_says_no_ok_for_a_log_it_could_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Older: a log whose header is damaged, compared with a-chat's capture: its error, exit 2, and
    the summary line says FAILED (it said OK)."""
    log = tmp_path / "bad.jsonl"
    log.write_text('{"type":"session"\n', encoding="utf-8")
    code, out, err = invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(CORPUS / "a-chat" / "wire.jsonl"))
    assert (code, out.splitlines()[-1]) == (2, "0 request(s): 0 identical; 0 capture(s) unexplained, 3 foreign: FAILED")
    assert err == [f"error: {log}:1: corrupt session log: header line is not valid JSON (hint: this is not a DSH "
                   "session log, or its first line is damaged; nor is it a session the claude-code or codex importer "
                   "recognises)"]
