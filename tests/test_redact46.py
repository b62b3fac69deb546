"""Session 46 (issue 15): what the manifest records of the captured bodies redact replaced whole
(``"replaced_whole"``) is carried from where they were replaced, as the summary's note's codings
(:class:`dsh_audit.redact._capture.ReplacedNote`), never read back from the note's words; the bundle and
the summary say what they said before.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from _cli import invoke
from test_redact33 import _inputs
from test_redact_body37 import BODY, KEY, SALT

from dsh_audit.redact import redact
from dsh_audit.redact._capture import ReplacedNote, replaced_note
from dsh_audit.redact._notes import replaced_whole


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _two_unreadable(tmp_path: Path, *, answer: bool = False) -> tuple[Path, Path]:
    """The one-request log and its capture: the response to its request under ``br``, and a telemetry
    upload under ``zstd`` (its ``answer`` under ``zstd`` instead), each holding the key in bytes no
    decoder here undoes (an upload read as captured is redacted as content: its key found and counted)."""
    log, capture = _inputs(tmp_path)
    record = json.loads(capture.read_text())
    record["response"] = {"headers": {"content-encoding": "br"}, "body_base64": _b64(b"\x1b\x10" + BODY.encode())}
    coded = {"headers": {"content-encoding": "zstd"}, "body_base64": _b64(b"\x28\xb5" + BODY.encode())}
    upload = ({"method": "POST", "path": "/v1/telemetry", "headers": {}, "body": "{}", "response": coded} if answer
              else {"method": "POST", "path": "/v1/telemetry", **coded})
    capture.write_text(json.dumps(record) + "\n" + json.dumps(upload) + "\n")
    return log, capture


def test_the_manifest_counts_the_codings_the_writer_listed(tmp_path: Path) -> None:
    log, capture = _two_unreadable(tmp_path)
    (tmp_path / "out").mkdir()
    result = redact(log, tmp_path / "out" / "session.jsonl", salt="s", capture=capture)
    assert result.mismatched == () and result.capture is not None
    said = "2 bodies replaced whole: their codings br, zstd could not be undone"
    assert result.notes[0] == said and isinstance(result.notes[0], ReplacedNote)
    assert result.notes[0].codings == ("br", "zstd")  # one a body, in the order they were replaced
    assert result.replaced_whole == (2, ("br", "zstd"))
    assert json.loads(result.manifest.read_bytes())["replaced_whole"] == {"count": 2, "codings": ["br", "zstd"]}
    assert not any(KEY.encode() in path.read_bytes() for path in (result.output, result.manifest, result.capture))
    assert result.secrets == {"openai_api_key": {"occurrences": 1, "distinct": 1}}  # the upload's, as content


def test_the_summary_says_what_it_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    log, capture = _two_unreadable(tmp_path, answer=True)
    (tmp_path / "out").mkdir()
    code, out, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(tmp_path / "out" / "session.jsonl"),
                            "--capture", str(capture), "--salt", SALT.decode())
    assert code == 0 and out.splitlines()[3] == (
        "secrets removed: none found in what could be read (2 bodies replaced whole, unread: see the note below)")
    assert err[0] == "note: 2 bodies replaced whole: their codings br, zstd could not be undone"


def test_no_words_are_read_back() -> None:
    """A line that only reads as the note (another note's text, a caller's) counts nothing; the note's
    codings count whatever its words."""
    words = "3 bodies replaced whole: their codings br, deflate could not be undone"
    assert replaced_note(["br", "deflate", "br"]) == words and replaced_whole([words]) == (0, ())
    note = replaced_note(["gzip"])
    assert (note, note.codings) == ("1 body replaced whole: its coding gzip could not be undone", ("gzip",))
    assert replaced_whole([note, words, replaced_note(["br", "gzip"])]) == (3, ("gzip", "br"))
