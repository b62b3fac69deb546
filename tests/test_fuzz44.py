"""Fuzz round 34B (session 44): ``stats --db`` on a path that is not UTF-8 (exit 3 before), HAR
request bodies with the Content-Encodings other than one gzip (``deflate``, ``gzip, gzip``, ``br``:
"holds no LLM call" before), and a Ctrl-C while dsh-audit starts (a traceback, or death by SIGINT).
The re-read of it: a body HAR tools stored decoded under ``br`` is kept (refused whole before), and a
stack of codings is one body within the ratio limit (two 100x layers were 10,000x)."""

from __future__ import annotations

import base64
import functools
import gzip
import json
import os
import random
import re
import subprocess
import sys
import textwrap
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from _cli import invoke, sigint_as_a_terminal_gives_it

ROOT = Path(__file__).resolve().parents[1]
CHAT = ROOT / "sample_logs" / "chat"
SCENARIO = ROOT.parent / "shared" / "corpus" / "live" / "a-chat"


def test_stats_reads_an_index_whose_path_is_not_utf8(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    folder = os.fsdecode(os.fsencode(tmp_path) + b"/bad\xff")  # a surrogate escape in the str
    os.mkdir(folder)
    db = os.path.join(folder, "i.sqlite")
    code, out, err = invoke(monkeypatch, capsys, "index", str(CHAT), "--db", db)
    said = re.sub(r" in [0-9.]+ s$", " in T s", "".join(out.splitlines() + err))
    assert (code, said) == (0, f"{tmp_path}/bad\\xff/i.sqlite: indexed 1, skipped 0 unchanged, of 1 log(s) in T s")
    code, out, err = invoke(monkeypatch, capsys, "stats", "--db", db, "--format", "csv")
    assert (code, err) == (0, [])
    totals = [line.rsplit(",", 2)[1:] for line in out.splitlines() if "fleet totals,requests" in line
              or "fleet totals,sessions" in line]
    assert totals == [["sessions", "1"], ["sessions refused", "0"], ["requests", "3"],
                      ["requests with cache reads known", "2"]]


def _raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-15)
    return packer.compress(data) + packer.flush()


def _gzip_gzip(body: bytes) -> bytes:
    return gzip.compress(gzip.compress(body, mtime=0), mtime=0)


#: (Content-Encoding, how the body was packed, postData.encoding) of every request of the a-chat
#: scenario: packed bytes as base64; None: the JSON text stored as sent before its coding, as HAR
#: tools store a body they decoded.
PACKED: list[tuple[str, Callable[[bytes], bytes] | None, str | None]] = [
    ("deflate", zlib.compress, "base64"),  # zlib data, as RFC 9110 names it
    ("Deflate ", _raw_deflate, "base64"),  # raw deflate, as some clients send it
    ("gzip, gzip", _gzip_gzip, "base64"),
    ("x-gzip, identity, deflate", lambda body: zlib.compress(gzip.compress(body, mtime=0)), "base64"),
    ("gzip, gzip", lambda body: gzip.compress(body, mtime=0), "base64"),  # a tool undid one layer
    ("deflate", zlib.compress, None),  # base64, no "encoding": told by its zlib header as gzip by its magic
    ("gzip", lambda body: gzip.compress(body, mtime=0), None),
    *((coding, None, None) for coding in ("br", "zstd", "gzip", "deflate", "gzip, gzip", "br, deflate")),
]


def _post_data(body: str, pack: Callable[[bytes], bytes] | None, encoding: str | None) -> dict[str, str]:
    if pack is None:
        return {"mimeType": "application/json", "text": body}
    text = base64.b64encode(pack(body.encode())).decode()
    return {"mimeType": "application/json", "text": text, **({"encoding": encoding} if encoding else {})}


def _har(tmp_path: Path, coding: str, pack: Callable[[bytes], bytes] | None, encoding: str | None = "base64") -> Path:
    records = [json.loads(line) for line in (SCENARIO / "wire.jsonl").read_text().splitlines() if line]
    entries = [{"request": {"method": r["method"], "url": "http://127.0.0.1" + r["path"],
                            "headers": [{"name": k, "value": v} for k, v in r["headers"].items()]
                            + [{"name": "Content-Encoding", "value": coding}],
                            "postData": _post_data(r["body"], pack, encoding)}}
               for r in records]
    har = tmp_path / "capture.har"
    har.write_text(json.dumps({"log": {"version": "1.2", "entries": entries}}))
    return har


@pytest.mark.parametrize("coding, pack, encoding", PACKED)
def test_har_bodies_in_every_coding_the_standard_library_undoes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str], coding: str,
                                                                pack: Callable[[bytes], bytes] | None,
                                                                encoding: str | None) -> None:
    har = _har(tmp_path, coding, pack, encoding)
    code, out, err = invoke(monkeypatch, capsys, "diff", str(SCENARIO / "home" / "sessions"), "--capture", str(har))
    assert (code, err) == (0, [])
    assert out.splitlines()[-1] == "3 request(s): 3 identical; 0 capture(s) unexplained, 0 foreign: OK"


@functools.cache
def _gzipped_spaces() -> bytes:
    """16 MiB of spaces as gzip: about 1000x."""
    return gzip.compress(b" " * (16 << 20), mtime=0)


@functools.cache
def _stacked_bomb() -> tuple[bytes, bytes]:
    """8 MiB that gzip packs about 100x, packed again about 4x: each layer within the 200x limit,
    the body 400x (its layers: inner, outer)."""
    inner = random.Random(0).randbytes(20_000) * 419
    once = gzip.compress(inner, mtime=0)
    twice = gzip.compress(once, 9, mtime=0)
    assert len(inner) < 200 * len(once) and len(once) < 200 * len(twice) and len(inner) > 300 * len(twice)
    return once, twice


#: Bodies whose coding cannot be undone: read as captured, each entry said (review B 45: HEAD refused them
#: in one line, a whole capture unreadable for one body).
NOT_UNDONE = [
    ("br", lambda body: b"\x1b\xff\xff\x7f" + body,
     "the body's Content-Encoding br cannot be decoded (dsh-audit decodes gzip and deflate)"),
    ("zstd", lambda body: b"\x28\xb5\x2f\xfd" + body,
     "the body's Content-Encoding zstd cannot be decoded (dsh-audit decodes gzip and deflate)"),
    ("gzip, \x1b[31m", lambda body: gzip.compress(body, mtime=0),
     "the body's Content-Encoding that is not a coding name cannot be decoded (dsh-audit decodes gzip and deflate)"),
    ("deflate", lambda body: zlib.compress(body)[:-9], "the deflate body is cut off"),
    ("deflate", lambda body: zlib.compress(body) + b"junk", "the deflate body has 4 byte(s) after its deflate data"),
]


@pytest.mark.parametrize("coding, pack, said", NOT_UNDONE)
def test_har_bodies_not_undone_are_read_as_captured_and_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str], coding: str,
                                                             pack: Callable[[bytes], bytes], said: str) -> None:
    har = _har(tmp_path, coding, pack)
    code, out, err = invoke(monkeypatch, capsys, "diff", str(SCENARIO / "home" / "sessions"), "--capture", str(har))
    assert (code, err) == (1, [f"warning: {har}: entries[{n}]: its body is read as captured, not decoded: {said}"
                               for n in range(3)])
    assert out.splitlines()[-1] == "3 request(s): 0 identical, 3 different; 0 capture(s) unexplained, 0 foreign: FAILED"


#: Bodies past the decode limits: a bomb, however it is coded, is refused in one line.
REFUSED = [
    ("gzip, gzip", lambda body: gzip.compress(_gzipped_spaces(), mtime=0),  # the inner layer a bomb
     "entries[0]: the gzip body is refused as a decompression bomb: N gzip bytes expand to more than {spaces} "
     "bytes, past the limit of 200x (DSH_AUDIT_MAX_RATIO) (hint: if this is a real body, raise the limit: "
     "DSH_AUDIT_MAX_RATIO=2000 (0: no limit); see docs/hostile-inputs.md)"),
    ("gzip, gzip", lambda body: _stacked_bomb()[1],  # every layer counted against the body as captured
     "entries[0]: the gzip body is refused as a decompression bomb: N gzip bytes expand to more than {stacked} "
     "bytes, past the limit of 200x (DSH_AUDIT_MAX_RATIO) (hint: if this is a real body, raise the limit: "
     "DSH_AUDIT_MAX_RATIO=2000 (0: no limit); see docs/hostile-inputs.md)"),
    ("deflate", lambda body: _raw_deflate(b" " * (16 << 20)),
     "entries[0]: the deflate body is refused as a decompression bomb: N deflate bytes expand to more than "
     "5242880 bytes, past the limit of 200x (DSH_AUDIT_MAX_RATIO) (hint: if this is a real body, raise the "
     "limit: DSH_AUDIT_MAX_RATIO=2000 (0: no limit); see docs/hostile-inputs.md)"),
]


@pytest.mark.parametrize("coding, pack, said", REFUSED)
def test_har_bombs_are_refused_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str], coding: str,
                                          pack: Callable[[bytes], bytes], said: str) -> None:
    monkeypatch.delenv("DSH_AUDIT_MAX_RATIO", raising=False)
    monkeypatch.delenv("DSH_AUDIT_MAX_DECODED", raising=False)
    har = _har(tmp_path, coding, pack)
    code, out, err = invoke(monkeypatch, capsys, "diff", str(SCENARIO / "home" / "sessions"), "--capture", str(har))
    bytes_read = re.compile(r"bomb: \d+ ")  # how far zlib had read: its build's own
    # a stack's refusal: its inner layer's bytes and 4 MiB, the first piece past the ratio's floor
    said = said.format(stacked=len(_stacked_bomb()[0]) + (4 << 20), spaces=len(_gzipped_spaces()) + (4 << 20))
    assert (code, out, [bytes_read.sub("bomb: N ", line) for line in err]) == (2, "", [f"error: {har}: {said}"])


#: A ``sitecustomize`` that makes the run send itself SIGINT at a chosen moment (``HOOKS``): the
#: command runs as a person runs it, ``python -m dsh_audit`` or the console script.
CTRL_C_AT = textwrap.dedent("""
    import atexit, os, signal, sys
    def ctrl_c():
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(100_000):  # Python runs its handler in here
            pass
    {hook}
""")
SCRIPT = Path(sys.executable).parent / "dsh-audit"
HOOKS = {
    # while the command line's modules load: click's import is the synchronisation point
    "start-up": textwrap.dedent("""
        class AtClick:
            def find_spec(self, name, path=None, target=None):
                if name == "click":
                    sys.meta_path.remove(self)
                    ctrl_c()
        sys.meta_path.insert(0, AtClick())"""),
    # in a string of code (exec: a dataclass's methods as a module loads), as the command starts:
    # CPython notes it, and under ``python -m`` ended by SIGINT (rc -2) after the ``aborted``
    "in exec": textwrap.dedent("""
        import dsh_audit.cli as cli
        cli._escape_unencodable_stdout = lambda: exec("ctrl_c()", {"ctrl_c": ctrl_c})"""),
    # after the command's work, before main decides the exit code (its stdout given back)
    "after the work": textwrap.dedent("""
        import dsh_audit.cli as cli
        given = cli._discard_stdout_when_gone
        def restore_then_ctrl_c():
            restore = given()
            return lambda: (restore(), ctrl_c())
        cli._discard_stdout_when_gone = restore_then_ctrl_c"""),
    # as the interpreter exits: the exit code is decided (before: death by SIGINT, rc -2)
    "interpreter exit": "atexit.register(ctrl_c)",
}
VERSION = "dsh-audit 0.1.0: reads DSH session logs"


@pytest.mark.parametrize("how", ["script", "module"])
@pytest.mark.parametrize("moment, code, said", [("start-up", 130, "aborted\n"), ("in exec", 130, "aborted\n"),
                                                ("after the work", 130, "aborted\n"), ("interpreter exit", 0, "")])
def test_a_ctrl_c_from_the_first_line_of_dsh_audit_is_exit_130_and_aborted(tmp_path: Path, how: str, moment: str,
                                                                           code: int, said: str) -> None:
    if how == "script" and not SCRIPT.exists():
        pytest.skip("needs the installed dsh-audit script")
    (tmp_path / "sitecustomize.py").write_text(CTRL_C_AT.format(hook=HOOKS[moment]))
    command = [str(SCRIPT)] if how == "script" else [sys.executable, "-m", "dsh_audit"]
    run = subprocess.run([*command, "--version"], capture_output=True, text=True, timeout=60, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])},
                         preexec_fn=sigint_as_a_terminal_gives_it)
    printed = VERSION if moment in ("after the work", "interpreter exit") else ""
    assert (run.returncode, run.stdout[:len(VERSION)], run.stderr) == (code, printed, said)
