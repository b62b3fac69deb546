"""Session 33b: two bundles in one folder, and what a recipient runs (dsh-audit issue 17).

1. The redacted capture was named after the input capture (``wire.jsonl``, the name of every DSH
   capture), so two bundles in one folder wrote the same file, and ``--force`` broke the first one's
   ``--check`` with a bare MISMATCH. The first bundle's is ``wire.jsonl`` (where the views find a log's
   capture: session 42), a later one's ``OUT.<the capture's name>``, as the manifest
   (``OUT.manifest.json``) and the route file (``OUT.routes.yml``) are named; a bundle of the earlier
   naming still checks (its manifest names its capture), and a capture of another session is named.
2. ``redact`` ends with the commands a recipient runs (``check`` does not find ``OUT.wire.jsonl`` or
   ``OUT.routes.yml`` by itself), and says so when it leaves out the capture ``check`` finds for the log.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli import invoke, short_salt

from dsh_audit.redact import check_bundle, redact

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
A, B = CORPUS / "live" / "a-chat", CORPUS / "live" / "b-tools"
C1 = CORPUS / "live-pi" / "c1-anthropic-tools"
C3 = CORPUS / "live-pi" / "c3-openai-compat"
needs_corpus = pytest.mark.skipif(not all(case.is_dir() for case in (A, B, C1, C3)), reason="../shared/corpus is absent")
A_ID, B_ID = "session-2b096b61-0a34-4da6-abec-4e87161c2c0b", "session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3dd"


def _log(case: Path) -> Path:
    return next(case.glob("home/sessions/*/*/session.jsonl.zstd"))


def _check_lines(rows: int, breaks: int, diff: str) -> str:
    return (f"requests: match ({rows} request(s))\nbreaks: match ({rows} request(s), {breaks} break(s))\n"
            f"cache: match ({rows} request(s))\ndiff: {diff}\n")


@needs_corpus
def test_two_bundles_in_one_folder_each_carry_their_own_capture_and_both_check(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    a = redact(_log(A), tmp_path / "a.jsonl.zstd", capture=A / "wire.jsonl", salt="s")
    b = redact(_log(B), tmp_path / "b.jsonl.zstd", capture=B / "wire.jsonl", salt="s")
    assert (a.capture, b.capture) == (tmp_path / "wire.jsonl", tmp_path / "b.jsonl.zstd.wire.jsonl")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "a.jsonl.zstd", "a.jsonl.zstd.manifest.json",
        "b.jsonl.zstd", "b.jsonl.zstd.manifest.json", "b.jsonl.zstd.wire.jsonl", "wire.jsonl"]
    for result in (a, b):
        code, text, err = invoke(monkeypatch, capsys, "redact", "--check", str(result.output))
        assert (code, err, text.splitlines()[-1]) == (
            0, [], f"OK: every verdict of {result.output} matches its manifest")


@needs_corpus
def test_a_bundle_of_the_earlier_naming_checks_and_another_sessions_capture_is_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    wire = tmp_path / "wire.jsonl"  # the earlier default of both: the second run's --force wrote over the first's
    a = redact(_log(A), tmp_path / "a.jsonl.zstd", capture=A / "wire.jsonl", capture_output=wire, salt="s")
    b = redact(_log(B), tmp_path / "b.jsonl.zstd", capture=B / "wire.jsonl", salt="s")
    wire.write_bytes(Path(f"{b.output}.wire.jsonl").read_bytes())  # --force over a's capture is refused now
    assert invoke(monkeypatch, capsys, "redact", "--check", str(b.output)) == (
        0, _check_lines(9, 0, "match (9 diff row(s))") + f"OK: every verdict of {b.output} matches its manifest\n", [])
    assert invoke(monkeypatch, capsys, "redact", "--check", str(a.output)) == (
        1, _check_lines(3, 0, "MISMATCH (12 diff row(s))")
        + f"FAILED: diff verdicts differ from the manifest of {a.output}: the capture wire.jsonl holds session "
          f"{B_ID}'s requests, not {A_ID}'s\n", [])


@needs_corpus
def test_a_pi_ai_capture_of_another_session_is_named_by_its_requests(tmp_path: Path) -> None:
    """A pi-ai capture carries no DSH session header: none of its requests is one of the log's."""
    c1 = redact(_log(C1), tmp_path / "c1.jsonl.zstd", capture=C1 / "wire.jsonl", salt="s")
    c3 = redact(_log(C3), tmp_path / "c3.jsonl.zstd", capture=C3 / "wire.jsonl", salt="s")
    assert c1.capture is not None and c3.capture is not None
    c1.capture.write_bytes(c3.capture.read_bytes())
    check = check_bundle(c1.output)
    assert (check.mismatched, check.capture_note) == (("diff",), (
        "none of the 6 request(s) of the capture wire.jsonl is one of "
        "session-514c4bc2-e0ec-419e-84d4-2f666d536239's: it holds another session's"))


@needs_corpus
def test_redact_ends_with_the_recipients_commands_and_names_the_capture_it_left_out(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    log, out = _log(A), tmp_path / "a b.jsonl.zstd"
    assert invoke(monkeypatch, capsys, "redact", str(log), "-o", str(out), "--salt", "s") == (0, (
        f"wrote {out} (format v0, zstd): 274 content string(s) replaced\n"
        f"wrote {out}.manifest.json\n"
        "secrets removed: none found\n"
        "verdicts of requests, breaks, cache: unchanged (the log alone, without the capture beside it)\n"
        f"a recipient verifies it with: dsh-audit redact --check '{out}'\n"
        f"and audits it with: dsh-audit check '{out}'\n"),
        [f"note: the capture {A / 'wire.jsonl'}, which `check` finds for this log, was not redacted: pass --capture "
         f"{A / 'wire.jsonl'} to include it", short_salt("s")])
    code, text, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(out), "--salt", "s", "--force",
                             "--capture", str(A / "wire.jsonl"))
    assert (code, err, text.splitlines()[-3:]) == (0, [short_salt("s")], [
        "verdicts of requests, breaks, cache, diff: unchanged",
        f"a recipient verifies it with: dsh-audit redact --check '{out}'",
        f"and audits it with: dsh-audit check '{out}' --capture {tmp_path / 'wire.jsonl'}"])
    code, text, err = invoke(monkeypatch, capsys, "check", str(out))  # its capture found beside it
    assert (code, err, text.splitlines()[-1]) == (  # its title call is priced from the capture
        0, ["note: 1 request(s) priced from the capture's usage (their log holds none)"], "PASSED: 1 log(s), 3 request(s), 0 error(s), 0 warning(s), 0 info, 0 failing (policy: defaults)")
