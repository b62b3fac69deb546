"""Hypothesis strategies for DSH session logs: valid logs with ground truth, and targeted faults.

Use them to property-test anything that reads, writes or serialises the DSH format: a log
writer (compare its bytes with :meth:`GeneratedSession.log_bytes`), a request serialiser
(compare with :func:`dsh_audit.wire.render` over :func:`dsh_audit.requests`), or a checker
(every mutation must be caught with its expected code). See ``docs/property-testing.md``.

* :func:`sessions`: valid v0 logs built by :class:`~dsh_audit.testing.LogBuilder` (turns,
  steps, tools, reasoning, retries, compaction, prune, header changes, resume, runtime context,
  fork children, packed rows), each with the list of what was generated and its seqs.
* :func:`log_mutations` / :func:`mutated_logs`: one fault in a log (seq gap, bad replace range).
* :func:`body_mutations` / :func:`mutated_bodies` / :func:`mutated_captures`: one fault in a
  wire body (edited message, reordered tools, tool schema key order, timestamp in the system
  prompt, dropped ``reasoning_content``, re-serialised tool arguments, string vs block content).

Example:
    >>> from hypothesis import given, settings
    >>> import dsh_audit, tempfile
    >>> from dsh_audit.strategies import sessions
    >>> @settings(max_examples=5)
    ... @given(sessions(turns=(1, 2)))
    ... def test_every_step_is_a_request(session):
    ...     with tempfile.TemporaryDirectory() as folder:
    ...         requests = dsh_audit.requests(dsh_audit.load(session.write(folder)))
    ...     steps = {(e["data"]["turn"], e["data"]["step"]) for e in session.events if e["type"] == "step/start"}
    ...     assert {(r.turn, r.step) for r in requests if r.kind == "loop"} == steps
    >>> test_every_step_is_a_request()
"""

from ._log_mutations import LOG_MUTATIONS, log_mutations, mutated_logs
from ._model import (
    HAPPENING_KINDS,
    Expected,
    GeneratedSession,
    Happening,
    MutatedBody,
    MutatedCapture,
    MutatedLog,
    Mutation,
    log_file_name,
)
from ._options import InvalidStrategyArgument
from ._sessions import HEADER_CHANGE_KINDS, TOOL_SCHEMAS, sessions
from ._wire_mutations import WIRE_MUTATIONS, body_mutations, mutated_bodies, mutated_captures

__all__ = [
    "Expected",
    "GeneratedSession",
    "HAPPENING_KINDS",
    "HEADER_CHANGE_KINDS",
    "Happening",
    "InvalidStrategyArgument",
    "LOG_MUTATIONS",
    "MutatedBody",
    "MutatedCapture",
    "MutatedLog",
    "Mutation",
    "TOOL_SCHEMAS",
    "WIRE_MUTATIONS",
    "body_mutations",
    "log_file_name",
    "log_mutations",
    "mutated_bodies",
    "mutated_captures",
    "mutated_logs",
    "sessions",
]
