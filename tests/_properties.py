"""Helpers shared by the property suites: write a generated log, replay it, compare requests."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

import dsh_audit
from dsh_audit.jsjson import stringify
from dsh_audit.replay import Request
from dsh_audit.strategies import GeneratedSession

from dsh_audit.validate import validate, validate_paths

__all__ = ["examples", "folder", "full_run_only", "identity", "replay_file", "row", "validate", "validate_paths",
           "written"]

# Slow property runs (tests/README.md, "Slow property runs"). True runs every ``@pytest.mark.slow``
# property with its full example count: DSH_AUDIT_SLOW=1, or ``pytest -m slow`` (conftest.py sets it).
FULL_RUN = os.environ.get("DSH_AUDIT_SLOW", "") not in ("", "0")


def examples(short: int, full: int | None = None) -> int:
    """``max_examples`` for a property marked ``@pytest.mark.slow``: ``short`` in the default run
    (the ``ci`` profile), ``full`` (default: the profile's own count, 100 in ``ci``) in a full run
    (``pytest -m slow``, DSH_AUDIT_SLOW=1) and in any other profile (``thorough`` explores)."""
    count = settings.default.max_examples if full is None else full
    if FULL_RUN or settings.get_current_profile_name() != "ci":
        return count
    return min(short, count)


def full_run_only(why: str) -> tuple[pytest.MarkDecorator, pytest.MarkDecorator]:
    """The marks of a test, or of a ``pytest.param``, that only the full run runs (``pytest -m slow``,
    DSH_AUDIT_SLOW=1): ``slow``, and a skip in the default run. ``why`` names the test the default
    run keeps that checks the same rule, as the skip's reason says it."""
    return pytest.mark.slow, pytest.mark.skipif(not FULL_RUN, reason=f"DSH_AUDIT_SLOW=1 runs it: {why}")


# Request fields known as soon as the attempt's first chunk is logged (spec §7.3 step 3).
_IDENTITY = ("index", "kind", "session_id", "turn", "step", "attempt", "step_start_seq", "first_chunk_seq",
             "header_seq", "header_reason", "message_count", "messages_sha256", "header", "context")


@contextmanager
def folder() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="dsh-prop-") as name:
        yield Path(name)


def replay_file(path: Path, **options: Any) -> list[Request]:
    return dsh_audit.requests(dsh_audit.load(path, **options))


def row(request: Request) -> str:
    """Everything about a request, messages included, as exact JSON text."""
    return stringify(request.to_json())


def identity(request: Request) -> str:
    summary = request.summary()
    return stringify({k: summary[k] for k in _IDENTITY} | {"message_seqs": list(request.message_seqs)})


@contextmanager
def written(session: GeneratedSession, **options: Any) -> Iterator[list[Path]]:
    """The session (and its fork children) written to a temporary folder."""
    with folder() as where:
        yield session.write_all(where, **options)
