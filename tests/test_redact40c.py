"""Session 40, fuzz round 25: what redact still kept of a request id, and a bundle that failed its own check.

D4. A request id kept its letters and digits past ASCII (``_ID_TOKEN`` was ``[A-Za-z0-9]+``): ``x-correlation-id:
    хост-бд.внутр:5432`` became ``хост-бд.внутр:0675``; ``١٠.٠.٠.٥:٨٠٨٠``, ``１０.０.０.５`` and ``srv.例え.jp:8080``
    kept their hosts. Each run past ASCII is now replaced, and a host in any script takes the host rule.
D5. ``redact`` of a v0 log to ``-o session.v2.jsonl`` exited 0, and ``redact --check`` of the copy then exited 2
    (DSH refuses a log whose name's generation is not its format version): refused at once, nothing written.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _cli import invoke

from dsh_audit.redact import Placeholders, Redactor
from dsh_audit.redact._capture import _headers
from dsh_audit.redact._hosts import redact_host

ROOT = Path(__file__).resolve().parent.parent
PLAIN = ROOT / "sample_logs" / "chat" / "session.jsonl"

# --- D4. a request id's letters, digits and hosts in any script ------------------------------------------------

IDS = {"x-correlation-id": "хост-бд.внутр:5432", "x-amzn-trace-id": "Root=١٠.٠.٠.٥:٨٠٨٠-abcdef12",
       "traceparent": "00-１０.０.０.５-srv.例え.jp:8080-01", "request-id": "node٣.corp:99-[fe80::١]:80",
       "x-request-id": "ип-бд-café-SJC-٣"}
PLANTED = ("хост", "бд", "внутр", "5432", "١٠", "٨٠٨٠", "١", "٣", "１０", "例え", "srv", "8080", "node", "corp",
           "fe80", "ип", "café", "abcdef12")


def test_a_request_id_past_ascii_keeps_no_run_and_its_hosts_take_their_placeholders() -> None:
    r = Redactor(Placeholders(b"b40"))
    out = _headers(IDS, r, [], None)
    assert out == {"x-correlation-id": "toxf-dc.jwwvm:9584", "x-amzn-trace-id": "Root=10.1.9.8:6384-babcdb04",
                   "traceparent": "32-10.6.2.9-bwk.vw.uc:8877-01", "request-id": "bwji8.gjkp:22-[100::53]:71",
                   "x-request-id": "vj-oj-nccc-SJC-6"}
    # an address in other digits takes its ASCII form's placeholder; a name in any script its host's
    assert [redact_host(h, r) for h in ("10.0.0.5:8080", "fe80::1", "хост-бд.внутр:5432")] == [
        "10.1.9.8:6384", "100::53", "toxf-dc.jwwvm:9584"]
    assert [len(v) for v in out.values()] == [len(v) for v in IDS.values()]
    text = json.dumps(out, ensure_ascii=False)
    assert (text.isascii(), [p for p in PLANTED if p in text]) == (True, [])


# --- D5. an output name of another DSH generation -------------------------------------------------------------


@pytest.mark.parametrize(("name", "fits"), [
    ("session.v2.jsonl", "session.jsonl"),
    ("session.v1.jsonl.zstd", "session.jsonl.zstd"),
], ids=["v2", "v1-zstd"])
def test_an_output_named_for_another_generation_is_refused_before_anything_is_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str,
        fits: str) -> None:
    """The defect: the copy was written (exit 0), and its own ``redact --check`` refused it (exit 2)."""
    shutil.copy(PLAIN, tmp_path / "in.jsonl")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out").mkdir()
    code, text, err = invoke(monkeypatch, capsys, "redact", "in.jsonl", "-o", f"out/{name}", "--salt", "s")
    generation = name.split(".")[1][1:]
    assert (code, text, err) == (2, "", [
        f"error: in.jsonl: the output name {name} is DSH generation v{generation}, and the log is format v0: DSH "
        f"and redact --check would refuse the copy (hint: pass -o {fits} in another folder, or a name that is no "
        "session[.vN].jsonl)"])
    assert list((tmp_path / "out").iterdir()) == []
