"""Reading what a command wrote to a pseudo-terminal (tests that need a real tty)."""

from __future__ import annotations

import os


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
