"""``dsh-audit watch --on-break CMD``: the command run for each break, in the background, never
through a shell; its stdout is the watch's stderr (the watch's stdout is its own stream), and a
run that fails is an ``error:`` line (with --json also a ``{"type":"error"}`` line), counted."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import threading
import time
from dataclasses import dataclass

import click

from ..report import dumps_line
from ..watch import WatchNote, WatchRequest
from ._common import echo_error

__all__ = ["_Hooks"]

_HOOK_TIMEOUT = 60.0  # seconds an --on-break command may run
_HOOK_STDOUT = 2  # an --on-break command writes its stdout to the watch's stderr (file descriptor 2)
#: A word of an --on-break command that a shell would read as syntax (it is run without one): an
#: operator alone (``;``, ``|``, ``>>``, ``&&``, ``2>``), a word ending in ``;`` or ``&``, or one
#: holding a redirection's ``>``/``<`` at its start, a ``|``, ``$`` or a backquote.
_SHELL_WORD = re.compile(r"^\d*[<>|&;]+$|[;&]$|^\d*[<>]|[|$`]")
#: Commands that read shell syntax themselves (``sh -c '...'``): no hint for their words.
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "busybox", "env"})


@dataclass(frozen=True, slots=True)
class _Break:
    """The break an --on-break run was for, as its failure names it: the log (``path``), its
    session and the words of the error line (``text``)."""

    path: str
    session_id: str
    text: str
_HOOK_GRACE = 1.0  # seconds between asking a hook's processes to end and killing them


def _end_group(process: subprocess.Popen[bytes]) -> None:
    """End a hook and every process it started (its own process group): SIGTERM, then SIGKILL
    after :data:`_HOOK_GRACE` seconds."""
    for signum in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, signum)
        except OSError:  # already gone
            pass
        try:
            process.wait(_HOOK_GRACE)
            return
        except subprocess.TimeoutExpired:
            continue


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return str(signum)


def shell_hint(command: list[str]) -> str:
    """A failed run's hint when its ``command`` holds shell syntax (:data:`_SHELL_WORD`), which
    --on-break passes to the program as words, run without a shell: name the words and say how to
    run them in one (``sh -c '...'``); empty otherwise, or when the program is a shell itself.

    Example:
        >>> print(shell_hint(["cat", ">>", "f;", "echo", "$HOME"]))
         (hint: --on-break runs CMD without a shell, so '>>', 'f;', '$HOME' reach cat as words: give --on-break "sh -c '...'" to run it in a shell)
        >>> shell_hint(["sh", "-c", "cat >> f; exit 3"]), shell_hint(["notify-send", "cache break"])
        ('', '')
    """
    if not command or os.path.basename(command[0]) in _SHELLS:
        return ""
    found = [word for word in command[1:] if " " not in word and _SHELL_WORD.search(word)]
    if not found:
        return ""
    shown = ", ".join(shlex.quote(word) for word in dict.fromkeys(found[:4]))
    return (f" (hint: --on-break runs CMD without a shell, so {shown} reach {shlex.quote(command[0])} as words: "
            f"give --on-break \"sh -c '...'\" to run it in a shell)")


class _Hooks:
    """The ``--on-break`` command, run in the background for each break (never through a shell),
    each run in its own process group so that the watch can end it and whatever it started. A run
    that fails (exits non-zero, cannot be started, is ended for taking too long) is one ``error:``
    line naming the command and the break, and counted (:attr:`failures`)."""

    def __init__(self, command: list[str], *, as_json: bool = False) -> None:
        self.command = command
        self.as_json = as_json  # a failed run is also a {"type":"error"} line in the JSON stream
        self.running: set[subprocess.Popen[bytes]] = set()
        self.lock = threading.Lock()
        self.ended = False
        self.active = 0  # runs started and not yet over
        self.failures = 0  # runs that failed, for the summary's errors
        self.provisional: set[tuple[str, int]] = set()  # breaks run for that were shown as provisional

    def start(self, item: WatchRequest) -> None:
        """Run the command with the break as one JSON line (ending in a newline) on its stdin, once
        per break: not again for the update of a provisional break it already ran for."""
        key = (item.session_id, item.index)
        again = item.update and key in self.provisional
        if item.provisional:
            self.provisional.add(key)
        else:
            self.provisional.discard(key)
        if again:
            return
        with self.lock:
            self.active += 1
        payload = (dumps_line(item.to_json()) + "\n").encode()
        which = _Break(item.path, item.session_id, f"the break at request #{item.index} of session {item.session_id}")
        try:
            threading.Thread(target=self._run, args=(payload, which), name="on-break", daemon=True).start()
        except RuntimeError as exc:  # no thread can be started now
            self._failed(f"cannot be started: {exc}", which)
            with self.lock:
                self.active -= 1

    def _failed(self, why: str, which: _Break) -> None:
        """One run failed: an ``error:`` line (the command shell-quoted; :func:`echo` keeps it on one
        line and shows its controls), with --json also a ``{"type":"error"}`` line in the stream (as
        a log that cannot be read is), counted once (the summary's errors)."""
        message = (f"--on-break {shlex.join(self.command)}: {why} (run for {which.text}; the watch goes on)"
                   + shell_hint(self.command))
        with self.lock:  # one run's lines whole: the hooks' threads write beside the watch's
            self.failures += 1
            echo_error(message)
            if self.as_json:
                note = WatchNote(time.time(), which.path, "error", message, session_id=which.session_id)
                click.echo(dumps_line(note.to_json()))

    def _run(self, payload: bytes, which: _Break) -> None:
        try:
            with self.lock:
                if self.ended:
                    self.active -= 1
                    return
                # its stdout is the watch's stderr: the watch's stdout is its own stream (the JSON
                # lines a consumer parses, the text lines), never spliced with the command's output
                process = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=_HOOK_STDOUT,
                                           start_new_session=True)
                self.running.add(process)
        except (OSError, subprocess.SubprocessError) as exc:
            self._failed(f"cannot be started: {getattr(exc, 'strerror', None) or exc}", which)
            with self.lock:
                self.active -= 1  # after it is counted: the summary waits for every run to be over
            return
        try:
            process.communicate(payload, timeout=_HOOK_TIMEOUT)
        except subprocess.TimeoutExpired:
            _end_group(process)
            self._failed(f"still running after {_HOOK_TIMEOUT:g} s: ended", which)
        except (OSError, subprocess.SubprocessError) as exc:
            _end_group(process)
            self._failed(f"failed: {exc}", which)
        else:
            self._exited(process.returncode, which)
        finally:
            with self.lock:
                self.running.discard(process)
                self.active -= 1

    def _exited(self, status: int, which: _Break) -> None:
        """A run that ended: an error unless it exited 0 (or the watch, stopping, ended it)."""
        with self.lock:
            ended = self.ended  # Ctrl-C or SIGTERM ended the run with the watch: no failure of its own
        if status > 0 and not ended:
            self._failed(f"exited with status {status}", which)
        elif status < 0 and not ended:
            self._failed(f"was ended by signal {_signal_name(-status)}", which)

    def wait(self, interrupted: threading.Event) -> None:
        """Let the runs still going finish (each within its time limit) unless ``interrupted``."""
        while not interrupted.is_set():
            with self.lock:
                if not self.active:
                    return
            interrupted.wait(0.05)

    def end(self) -> None:
        """The watch ends: no new run starts, and every running one is ended (with what it started)."""
        with self.lock:
            self.ended = True
            running = list(self.running)
        for process in running:
            _end_group(process)
