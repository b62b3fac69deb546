"""Session 44 (issues 14/15): what check says of a log it cannot compare or read, in one line a person
reads, the same as the other commands say it.

- A pi-ai capture (its sends name no session) found above two logs in two folders: check compared it
  with each folder's logs apart and said, of the log it holds nothing of, "its 11 captured request(s)
  name no session", where diff, comparing both logs with it at once, named the session it holds.
- A v4 header with three mistyped fields was refused in a line of 480-580 characters: each value
  whole, each field named again in the hint, DSH's refusal template (the id again) quoted.
- Re-read D: that rewording also hid, behind a baseline this version wrote, a header fault added since
  (an unknown key, isSeeded gone, a seedLength) or a value changed: only a baseline of the earlier wording
  (no ``message_wording``) is matched without those words.
- Review B: a v2+ header's isSeeded/seedLength fault went unnamed beside another fault, and a cut value
  could end inside an escape; a second log of the capture's session was told its own id was "another"
  session's; and a baseline session 43 wrote no longer matched either reworded finding (DSH801, DSH810).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _cli import invoke

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
CHAT = "home/sessions/--home-dev-dsh-runs-a-a-chat-ws--/session-2b096b61-0a34-4da6-abec-4e87161c2c0b/session.jsonl.zstd"
PI_ID = "session-514c4bc2-e0ec-419e-84d4-2f666d536239"


FOUND = "no capture: the capture found beside the log (home/wire.jsonl) holds none of its requests"
TWIN = "home/sessions/twin/x/session.jsonl"
# the capture's scenario, the log of its DSH810, what that says after FOUND, what session 43 (a9fe6c1) said
HELD = {
    "held-by-another-folder": ("c1-anthropic-tools", CHAT, f"(it holds requests of session(s) {PI_ID})",
                               "(its 11 captured request(s) name no session)"),
    # a second log of the capture's session id (another route, another folder) holds none of its requests:
    # its own id is no other session (it said "it holds requests of session(s)" its own id)
    "twin-of-the-held-session": ("c3-openai-compat", TWIN, "(its 6 captured request(s) name no session)",
                                 "(its 6 captured request(s) name no session)"),
}


@pytest.mark.skipif(not (CORPUS / "live-pi").is_dir(), reason="../shared/corpus is absent")
@pytest.mark.parametrize("case", sorted(HELD))
def test_check_and_diff_name_the_session_a_pi_ai_capture_found_holds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], case: str) -> None:
    scenario, log, holds, before = HELD[case]
    pi = CORPUS / "live-pi" / scenario
    twin = case.startswith("twin")
    for home in (pi / "home",) if twin else (pi / "home", CORPUS / "live" / "a-chat" / "home"):
        shutil.copytree(home / "sessions", tmp_path / "home" / "sessions", dirs_exist_ok=True)
    shutil.copyfile(pi / "wire.jsonl", tmp_path / "home" / "wire.jsonl")
    if twin:
        c1 = CORPUS / "live-pi" / "c1-anthropic-tools" / "session-logs" / f"{PI_ID}.jsonl"
        (tmp_path / TWIN).parent.mkdir(parents=True)
        twin_id = "session-e7611f7a-95b5-4af3-83c0-7c6d07d82016"  # the c3 capture's own session
        (tmp_path / TWIN).write_text(c1.read_text("utf-8").replace(PI_ID, twin_id), "utf-8")
    monkeypatch.chdir(tmp_path)
    said = f"{FOUND} {holds}"
    code, out, _ = invoke(monkeypatch, capsys, "check", "home/sessions", "--json-report", "b.json")
    report = json.loads((tmp_path / "b.json").read_text("utf-8"))
    assert [(f["path"], f["message"]) for f in report["findings"] if f["rule"] == "DSH810"] == [(log, said)]
    if not twin:
        assert invoke(monkeypatch, capsys, "diff", "home/sessions")[2][0] == (
            f"note: {CHAT}: {said}; not compared (--capture FILE names one)")
    # the same report as session 43 wrote it (no message_wording), a baseline: only the clause moved, so it
    # still matches
    del report["message_wording"]
    for finding in report["findings"]:
        if finding["rule"] == "DSH810":
            finding["message"] = f"{FOUND} {before}"
    (tmp_path / "b.json").write_text(json.dumps(report), "utf-8")
    code, out, _ = invoke(monkeypatch, capsys, "check", "home/sessions", "--baseline", "b.json", "--json")
    assert (code, {f["baselined"] for f in json.loads(out)["findings"]}) == (0, {True})


SID = "session-0f6c2b1e-6a55-4f1e-9e43-2b8c4f7a9d10"
RC8 = (f'DSH 0.1.0-rc.8, which reads only v0, refuses it as: session "{SID}" uses log format v{{}}, but this harness '
       "reads only v0: the log was written by a newer harness")
VALIDATE = "`dsh-audit validate FILE` lists every header field DSH refuses"
# a header's fields, the DSH801 line check prints, the message session 43 (a9fe6c1) wrote in a baseline
HEADERS = {
    # 584 characters before: each value whole, the fields named again; DSH's own refusal stays in its words
    "three-mistyped": (
        {"version": 4, "createdAt": "2026-12-07T18:29:24.123Z", "isSeeded": False, "delegationDepth": "0",
         "agentPreset": {"name": "standard", "tools": ["read", "write", "bash"]}},
        'createdAt "2026-12-07T18:29:2… is a string, not an integer; delegationDepth "0" is a string, not an '
        'integer; agentPreset {"name":"standard",… is an object, not a string; ' + RC8.format(4)
        + f" (hint: {VALIDATE} (DSH208, DSH209, DSH211))",
        'createdAt is a string "2026-12-07T18:29:24.123Z", not an integer; delegationDepth is a string "0", not an '
        'integer; agentPreset is an object {"name":"standard","tools":["read","write","bash"]}, not a string; '
        + RC8.format(4)),
    # isSeeded and seedLength were named only when nothing else was wrong; a value is cut between whole
    # escapes (it ended in "\u0…")
    "v2-faults-beside-another": (
        {"version": 2, "createdAt": 1796209334504, "isSeeded": "yes\u001b]0;pwn\u001b]1", "seedLength": 3,
         "delegationDepth": -1},
        'delegationDepth is not a whole number of 0 or more; isSeeded "yes\\u001b]0;pwn… is a string, not a '
        f"boolean (v2); a seedLength (v0 and v1 only; v2 says isSeeded); {RC8.format(2)} (hint: {VALIDATE} "
        "(DSH209, DSH216))",
        f"delegationDepth is not a whole number of 0 or more; {RC8.format(2)}"),
}


@pytest.mark.parametrize("case", sorted(HEADERS))
def test_a_refused_header_names_every_fault_in_one_line_and_a_session_43_baseline_still_matches(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], case: str) -> None:
    fields, said, before = HEADERS[case]
    name = f"session.v{fields['version']}.jsonl"  # DSH opens a log whose name says its header's version
    (tmp_path / name).write_text(json.dumps({"type": "session", "id": SID, **fields}) + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "check", name, "--json-report", "b.json")
    refused = (f"{name}:1: DSH801 error (fails the gate: fail-on-refusal): corrupt session log: first line "
               f"is not a session header of v{fields['version']}: ")
    assert (code, err, [line for line in out.splitlines() if " DSH801 " in line]) == (1, [], [refused + said])
    # the same report as session 43 (a9fe6c1) wrote it, a baseline: only dsh-audit's words moved, so it still
    # matches (gate._findings.reworded_free) and the gate passes
    report = json.loads((tmp_path / "b.json").read_text("utf-8"))
    assert report.pop("message_wording") == 2  # session 43 wrote none: wording 1
    for finding in report["findings"]:
        if finding["rule"] == "DSH801":
            finding["message"] = refused.split(": ", 3)[3] + before
    (tmp_path / "b.json").write_text(json.dumps(report), "utf-8")
    code, out, err = invoke(monkeypatch, capsys, "check", name, "--baseline", "b.json", "--json")
    assert (code, err, [(f["rule"], f["baselined"]) for f in json.loads(out)["findings"]][0]) == (
        0, [], ("DSH801", True))


BAD = {"type": "session", "version": 4, "id": "s-bad", "createdAt": "yesterday", "isSeeded": False,
       "delegationDepth": 0, "cwd": "/w"}
AT = 'corrupt session log: first line is not a session header of v4: createdAt "{}" is a string, not an integer'
# how the log changes after this version wrote the baseline, what its DSH801 then says after AT
CHANGED = {
    "unknown-key-added": (dict(BAD, orgin="subagent"), '; unknown key "orgin" (a v4 header has exact keys)'),
    "isSeeded-removed": ({k: v for k, v in BAD.items() if k != "isSeeded"}, "; no boolean isSeeded (v4)"),
    "seedLength-added": (dict(BAD, seedLength=3), "; a seedLength (v0 and v1 only; v4 says isSeeded)"),
    "value-changed": (dict(BAD, createdAt="tomorrow"), ""),
}


@pytest.mark.parametrize("case", sorted(CHANGED))
def test_a_baseline_of_this_wording_keeps_a_header_fault_added_since_new(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], case: str) -> None:
    header, added = CHANGED[case]
    log = tmp_path / "logs" / "session.v4.jsonl"
    log.parent.mkdir()
    log.write_text(json.dumps(BAD) + "\n", "utf-8")
    monkeypatch.chdir(tmp_path)
    assert invoke(monkeypatch, capsys, "check", "logs", "--json-report", "b.json")[0] == 1
    log.write_text(json.dumps(header) + "\n", "utf-8")
    code, out, err = invoke(monkeypatch, capsys, "check", "logs", "--baseline", "b.json", "--json")
    found = [(f["message"].split("; DSH 0.1.0")[0], "baselined" in f) for f in json.loads(out)["findings"]
             if f["rule"] == "DSH801"]
    assert (code, err, found) == (1, ["note: 1 baseline entry no longer occurs"],
                                  [(AT.format(header["createdAt"]) + added, False)])
    # the same baseline without its message_wording (session 43 wrote none) matches it: only words moved
    report = json.loads((tmp_path / "b.json").read_text("utf-8"))
    for wording, said in ((None, (0, [])), ("2", (2, [
            "error: b.json: the baseline's message_wording is a string ('2'), not a whole number: this dsh-audit "
            "reads message_wording 1 and 2 (hint: write the baseline with `dsh-audit check PATHS --json-report FILE` and pass that FILE)"]))):
        report["message_wording"] = wording
        (tmp_path / "b.json").write_text(json.dumps({k: v for k, v in report.items() if v is not None}), "utf-8")
        assert invoke(monkeypatch, capsys, "check", "logs", "--baseline", "b.json")[::2] == said
