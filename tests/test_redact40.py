"""Session 40, redact as a new user met it: the audit command redact prints works for a bundle whose captured
requests it could not render (hand-declared pi-ai routes redacted without ``--routes``); the copy's compression
follows the name of ``-o``, as DSH reads a log's; README says which command prints the recipient's ``check``.

The c3 test (live-pi, a hand-declared ``openai-completions`` route) skips when ``../shared/corpus`` is absent.
"""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import pytest
import zstandard
from _cli import invoke, short_salt

ROOT = Path(__file__).resolve().parent.parent
C3 = ROOT.parent / "shared" / "corpus" / "live-pi" / "c3-openai-compat"
needs_corpus = pytest.mark.skipif(not C3.is_dir(), reason="../shared/corpus is absent")
PLAIN = ROOT / "sample_logs" / "chat" / "session.jsonl"
ZSTD = ROOT / "sample_logs" / "sessions" / "--home-dev-projects-demo--" / "session-sample-retry" / "session.jsonl.zstd"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


# --- 1. a bundle with unrendered requests: one warning, and an audit command that passes --------------------


@needs_corpus
def test_redact_without_routes_says_it_once_and_prints_an_audit_command_that_passes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The defect: the printed ``check OUT --capture OUT.wire.jsonl`` failed (exit 1, 6 x DSH815)."""
    log = tmp_path / "c3.jsonl"
    shutil.copy(next((C3 / "session-logs").glob("*.jsonl")), log)
    shutil.copy(C3 / "wire.jsonl", tmp_path / "wire.jsonl")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "red").mkdir()
    code, text, err = invoke(monkeypatch, capsys, "redact", "c3.jsonl", "-o", "red/c3.jsonl", "--capture",
                             "wire.jsonl", "--salt", "s")
    assert (code, err) == (0, [
        "warning: 6 request(s) cannot be rendered without DSH's route configuration: give redact --routes FILE to "
        "bundle it redacted; without it their diff verdicts compared nothing, so the redacted capture is not proven "
        "to match the redacted log", short_salt("s")])
    assert text.splitlines()[-2:] == [
        "a recipient verifies it with: dsh-audit redact --check red/c3.jsonl",
        "and audits it without its capture (check would report its 6 unrendered request(s), DSH815): "
        "dsh-audit check red/c3.jsonl --no-capture"]
    command = shlex.split(text.splitlines()[-1].split(": ", 1)[1])
    # the wire.jsonl above red/ is the original capture, which check would find without --no-capture
    code, table, _ = invoke(monkeypatch, capsys, *command[1:])
    assert (code, table.splitlines()[-1]) == (0, "PASSED: 1 log(s), 6 request(s), 0 error(s), 0 warning(s), 1 info, "
                                                 "0 failing (policy: defaults)")


# --- 7. the copy is compressed as its name says, as DSH reads it ----------------------------------------------


@pytest.mark.parametrize(("source", "name", "zstd", "note"), [
    (PLAIN, "c.jsonl", False, None),
    (PLAIN, "c.jsonl.zstd", True, "note: written zstd: the log was plain; -o c.jsonl keeps it"),
    (ZSTD, "c.jsonl", False, "note: written plain: the log was zstd; -o c.jsonl.zstd keeps it"),
    (ZSTD, "c.jsonl.zstd", True, None),
    (ZSTD, "c.log", True, None),  # a name DSH gives no log: the input's compression
], ids=["plain-plain", "plain-zstd", "zstd-plain", "zstd-zstd", "zstd-other"])
def test_the_copy_is_compressed_as_its_name_says_and_checks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], source: Path,
        name: str, zstd: bool, note: str | None) -> None:
    """The defect: ``redact LOG.jsonl.zstd -o c.jsonl`` wrote zstd bytes into a ``.jsonl``, which DSH reads as text."""
    shutil.copy(source, tmp_path / f"in{''.join(source.suffixes)}")
    monkeypatch.chdir(tmp_path)
    code, text, err = invoke(monkeypatch, capsys, "redact", f"in{''.join(source.suffixes)}", "-o", name, "--salt", "s")
    assert (code, err, text.splitlines()[0].split(": ")[0]) == (
        0, ([] if note is None else [note]) + [short_salt("s")], f"wrote {name} (format v0, {'zstd' if zstd else 'plain'})")
    data = (tmp_path / name).read_bytes()
    assert (data[:4] == ZSTD_MAGIC, data[:2]) == (zstd, data[:2] if zstd else b'{"')
    if zstd:  # as DSH writes it: the header line alone in frame 1, every frame whole lines
        frames = []
        while data:
            frame = zstandard.ZstdDecompressor().decompressobj()
            frames.append(frame.decompress(data))
            data = frame.unused_data
        assert (frames[0].count(b"\n"), frames[0].endswith(b"\n"), all(f.endswith(b"\n") for f in frames)) == (
            1, True, True)
    manifest = json.loads((tmp_path / f"{name}.manifest.json").read_text("utf-8"))
    assert (manifest["compression"], manifest["log"]) == ("zstd" if zstd else "none", name)
    code, checked, err = invoke(monkeypatch, capsys, "redact", "--check", name)
    assert (code, checked.splitlines()[-1], err) == (0, f"OK: every verdict of {name} matches its manifest", [])


# --- 15a. README: plain redact prints the recipient's check command ------------------------------------------


def test_readme_says_which_redact_prints_the_recipients_check_command() -> None:
    rows = [line for line in (ROOT / "README.md").read_text("utf-8").splitlines()
            if line.startswith("| Share a session without its secrets")]
    assert rows == [
        "| Share a session without its secrets or content, breaks still provable | `dsh-audit redact PATH -o OUT "
        "[--capture wire.jsonl] [--routes FILE] [--keep system\\|tools\\|paths\\|titles]` ends with the `check` "
        "command a recipient runs (the redacted capture is `wire.jsonl` beside `OUT`, where every view finds it, or "
        "`OUT.wire.jsonl`, then named with `--capture`, when that name is taken; `--routes OUT.routes.yml` after "
        "`--routes`); `dsh-audit redact --check OUT` verifies a bundle against its manifest (`docs/redact.md`) |"]
