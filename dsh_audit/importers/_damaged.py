"""Another agent's log none of whose records can be read, named as what it is.

Format detection tells it (:func:`dsh_audit.log.sniff_format`): a Codex rollout or Claude Code
transcript every line of which is damaged (cut short, not UTF-8, not JSON) still begins each line
as records of its format do, and the error names the format, how many lines are damaged and the
first (:func:`every_record_damaged`, which the importers raise too when every record lacks what
they need). :func:`named_damaged` is that error in place of the DSH reader's refusal of such a
file's first line ("corrupt session log: header line is not valid JSON", the wrong format).
"""

from __future__ import annotations

from ..errors import DshAuditError, MalformedRecordError, UnreadableError
from ..log import every_record_damaged, sniff_format

__all__ = ["every_record_damaged", "named_damaged"]


def named_damaged(error: DshAuditError) -> DshAuditError:
    """``error``, a refusal of a file's first line (not JSON, not UTF-8), or, when format detection
    tells the file is a Codex rollout or Claude Code transcript every line of which is damaged, the
    error that says so (:attr:`~dsh_audit.log.FormatSniff.damaged`).

    Example:
        >>> error = MalformedRecordError("corrupt session log: header line is not valid JSON", path="-", line=1)
        >>> named_damaged(error) is error  # no file of that name: nothing else is known of it
        True
    """
    if not isinstance(error, (MalformedRecordError, UnreadableError)) or error.line != 1 or not error.path:
        return error
    try:
        return sniff_format(error.path).damaged or error
    except (DshAuditError, OSError):
        return error
