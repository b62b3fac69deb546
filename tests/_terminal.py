"""Reading what a command wrote to a pseudo-terminal (tests that need a real tty)."""

from __future__ import annotations

import fcntl
import os
import re
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

#: What rich draws around the text of a progress bar: colours, the bar itself, line clearing.
#: A terminal's colour and cursor sequences.
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
DRAWING = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|[\xe2][\x94\x95][\x80-\xbf]")


def read_terminal(main: int) -> bytes:
    """Everything written to the terminal whose main side is ``main``, until the command closes it."""
    chunks = []
    while True:
        try:
            data = os.read(main, 65536)
        except OSError:  # the command closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks)


def run_dsh_audit(args: list[str], *, tty: bool, env: dict[str, str],
                  cwd: Path | None = None) -> tuple[int, bytes, bytes]:
    """Run dsh-audit with stdout piped and stderr a pseudo-terminal (``tty``) or a pipe: its exit
    code, stdout and what it wrote to stderr."""
    command = [sys.executable, "-m", "dsh_audit", *args]
    if not tty:
        done = subprocess.run(command, capture_output=True, env=env, timeout=60, cwd=cwd)
        return done.returncode, done.stdout, done.stderr
    import pty

    main, child = pty.openpty()
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=child, env=env, cwd=cwd) as process:
        os.close(child)
        out: list[bytes] = []
        reader = threading.Thread(target=lambda: out.append(process.stdout.read() if process.stdout else b""))
        reader.start()  # stdout is read beside the terminal, so that neither blocks the command
        written = read_terminal(main)
        reader.join()
        code = process.wait(60)
    os.close(main)
    return code, out[0], written


def in_terminal(args: list[str], *, columns: int, env: dict[str, str], cwd: Path,
                stderr_too: bool = False) -> tuple[int, str, bytes]:
    """Run dsh-audit with stdout a real pseudo-terminal ``columns`` wide: its exit code, what it
    drew (colour sequences removed, ``\\r\\n`` as ``\\n``) and its stderr; with ``stderr_too``,
    stderr on the terminal as well, as a person sees both interleaved (the stderr returned is then empty)."""
    main, child = os.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    with subprocess.Popen([sys.executable, "-m", "dsh_audit", *args], stdout=child,
                          stderr=child if stderr_too else subprocess.PIPE,
                          stdin=subprocess.DEVNULL, env=env, cwd=cwd) as process:
        os.close(child)
        written = read_terminal(main)
        err = process.stderr.read() if process.stderr else b""
        code = process.wait(60)
    os.close(main)
    return code, ANSI.sub("", written.decode().replace("\r\n", "\n")), err
