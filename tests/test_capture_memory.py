"""A capture too large for memory is one error line and exit 2 in ``diff`` and ``check``.

The commands run in a subprocess whose address space is limited (``RLIMIT_AS``): the limit is set
inside that process once the CLI is imported (:data:`LIMITED`), at its size then plus
:data:`HEADROOM`, so it does not depend on how much the interpreter and its libraries map on a
machine; :func:`test_the_limit_leaves_room_for_a_normal_run` shows a run with a small capture
fits in it. The large captures are sparse files of :data:`LARGE` bytes: they take no disk, and
reading one whole asks for more memory than the limit at once (the HAR file, a body file or a
sidecar), or a line that never ends is read until the memory runs out (``wire.jsonl``).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _cli import chat_log, invoke

needs_proc = pytest.mark.skipif(not Path("/proc/self/status").exists(),
                                reason="the address-space limit is measured from /proc (Linux)")

HEADROOM = 64 << 20  # a small run needs about 20 MiB more once the CLI is imported
LARGE = 1 << 30
TOO_LARGE = "the capture does not fit in memory (hint: compare a smaller capture, e.g. one session's requests)"

LIMITED = textwrap.dedent("""
    import resource, sys

    headroom = int(sys.argv.pop(1))
    from dsh_audit.cli import main

    with open("/proc/self/status", encoding="ascii") as status:
        size = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (size + headroom, size + headroom))
    sys.argv[0] = "dsh-audit"
    main()
""")


def _run(*args: str) -> tuple[int, str, list[str]]:
    """``dsh-audit ARGS`` in a process limited to its size plus HEADROOM: exit code, stdout, stderr lines."""
    done = subprocess.run([sys.executable, "-c", LIMITED, str(HEADROOM), *args], capture_output=True, text=True,
                          timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout, done.stderr.splitlines()


def _sparse(path: Path, head: bytes) -> Path:
    """``head``, then zero bytes up to LARGE (a hole: nothing is written)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(head)
        handle.truncate(LARGE)
    return path


def _capture(tmp_path: Path, kind: str) -> tuple[Path, Path]:
    """A capture of ``kind`` with one part too large for memory: (the --capture path, the path its error names)."""
    if kind == "har":  # read whole, then parsed
        har = _sparse(tmp_path / "capture.har", b'{"log": {"entries": [{"request": {"postData": {"text": "')
        return har, har
    if kind == "wire-jsonl":  # read line by line: the second line never ends
        wire = _sparse(tmp_path / "wire.jsonl",
                       b'{"method": "POST", "path": "/chat/completions", "headers": {}, "body": "{}"}\n'
                       b'{"method": "POST", "path": "/chat/completions", "headers": {}, "body": "')
        return wire, wire
    folder = tmp_path / "bodies"
    folder.mkdir()
    (folder / "1.json").write_bytes(b"{}")
    # the error names the folder given, not the file in it that did not fit
    if kind == "body":
        _sparse(folder / "2.json", b"{")
    else:
        _sparse(folder / "1.meta.json", b'{"method": "POST", "path": "')  # a sidecar
    return folder, folder


@needs_proc
@pytest.mark.parametrize(("kind", "command"), [
    ("wire-jsonl", "diff"), ("wire-jsonl", "check"), ("body", "diff"), ("body", "check"),
    ("har", "diff"), ("sidecar", "diff"),  # read whole as a body file is; check reaches the loader as above
])
def test_a_capture_too_large_for_memory_is_one_line(tmp_path: Path, kind: str, command: str) -> None:
    log = chat_log(tmp_path / "session-1" / "session.jsonl", "s1")
    capture, named = _capture(tmp_path, kind)
    assert _run(command, str(log), "--capture", str(capture)) == (2, "", [f"error: {named}: {TOO_LARGE}"])


@needs_proc
@pytest.mark.parametrize("command", ["diff", "check"])
def test_the_limit_leaves_room_for_a_normal_run(tmp_path: Path, command: str) -> None:
    """The same limit, a capture that fits: the run ends normally (its one request is unmatched; diff
    says the capture holds no LLM call)."""
    log = chat_log(tmp_path / "session-1" / "session.jsonl", "s1")
    wire = tmp_path / "wire.jsonl"
    wire.write_text('{"method": "POST", "path": "/chat/completions", "headers": {}, "body": "{}"}\n', encoding="utf-8")
    code, out, err = _run(command, str(log), "--capture", str(wire))
    note = [f"note: no request matched: {wire} holds no LLM call (nothing a request could be paired with): give the "
            "capture of s1's run with --capture FILE"]
    assert (code, err) == (1, note if command == "diff" else [])
    assert "unmatched" in out


def test_a_body_folder_too_large_to_list_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Sniffing lists a body folder: a listing that does not fit in memory (millions of files, too
    many to make here) is the same one line. The one allocation that fails is the listing's."""
    log = chat_log(tmp_path / "session-1" / "session.jsonl", "s1")
    folder = tmp_path / "bodies"
    folder.mkdir()
    (folder / "1.json").write_bytes(b"{}")
    listing = Path.iterdir

    def too_many(self: Path) -> object:
        if self == folder:
            raise MemoryError
        return listing(self)

    monkeypatch.setattr(Path, "iterdir", too_many)
    for command in ("diff", "check"):
        assert invoke(monkeypatch, capsys, command, str(log), "--capture", str(folder)) == (
            2, "", [f"error: {folder}: {TOO_LARGE}"]), command
