"""``python -m dsh_audit`` and the ``dsh-audit`` console script: one entry, :func:`main` (pyproject's
``[project.scripts]`` names it), which takes Ctrl-C over in its first statement, before the command
line's modules load (fuzz round 34B: a Ctrl-C while click loaded printed a KeyboardInterrupt
traceback, or killed the run by SIGINT). Only what runs before it is Python's own: the interpreter's
start-up, ``site``, ``runpy``, this package's ``__init__`` and this module's one import, ``signal``
(docs/hostile-inputs.md); nothing else is imported before the guard (``threading`` was: 6 of 40
Ctrl-Cs at start-up landed in these two imports, session 44's re-read)."""

import signal
import sys
from types import FrameType  # loaded by site already


def main() -> None:
    """Run the command line; a Ctrl-C from here on ends it with exit 130 and one line ``aborted``."""
    early = _take_ctrl_c()
    try:
        from .cli import main as run

        if early:  # the command line's own handler takes it over from Python's (cli.main)
            if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
                raise KeyboardInterrupt  # the first Ctrl-C came, and a finalizer swallowed it
            signal.signal(signal.SIGINT, signal.default_int_handler)
        run(exiting=True)
    except KeyboardInterrupt:  # while the command line loaded, or before its handler took over
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the exit is not cut short by a second one
        sys.stderr.write("aborted\n")
        sys.exit(130)
    finally:
        _forget_interrupted_strings()


def _forget_interrupted_strings() -> None:
    """Clear CPython's note that a string of code (``exec``/``eval`` of text: a dataclass's or a
    namedtuple's methods as a module loads) ended in KeyboardInterrupt. The note outlives the
    handling of the interrupt, and under ``python -m`` the interpreter then ends itself by SIGINT
    (rc -2) instead of with exit 130 (fuzz round 34B, seen in an strace); evaluating a string resets it.
    CPython-specific (3.10 to 3.13: ``run_eval_code_obj`` clears ``_Py_UnhandledKeyboardInterrupt``);
    elsewhere it is a harmless constant."""
    eval("0")  # noqa: S307 - a constant, for its side effect on the interpreter's state


def _take_ctrl_c() -> bool:
    """Raise the first Ctrl-C as KeyboardInterrupt, and ignore the ones after it (a terminal's and the
    copy a CI runner forwards), where Python's handler has SIGINT (ignored, ``nohup``: it stays so).
    Off the main thread (:func:`main` called by a host program) ``signal.signal`` raises ValueError,
    and the host's handling stands."""
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return False
    try:
        signal.signal(signal.SIGINT, _first_ctrl_c)
    except ValueError:  # not the main thread: only it may set a handler
        return False
    return True


def _first_ctrl_c(signum: int, frame: FrameType | None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt


if __name__ == "__main__":
    main()
