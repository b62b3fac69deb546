"""Errors raised by dsh-audit. The CLI turns each into one line and exit code 2.

Hierarchy::

    DshAuditError                 root: every error the library raises on purpose
    ├── InputError                a log or capture we cannot read as given
    │   ├── UnreadableError       missing file, not zstd, not UTF-8, empty, folder without logs
    │   ├── MalformedRecordError  a line that is not a valid record (JSON, header, packed row, envelope)
    │   ├── UnsupportedFormatError  DSH refuses the content: other format version, unknown
    │   │                           required event type, retired legacy shapes
    │   └── CorruptLogError       DSH's corruption verdicts: seq gap or bad line before a turn/end
    ├── ReplayError               the log reads but its surface or header fold is inconsistent
    ├── CaptureError              a capture file we cannot read or align
    ├── RenderError               a request the adapter would refuse, or that needs facts the
    │   │                         log lacks (image bytes, the compaction instruction)
    │   └── AttachmentError       an image object in DSH's attachment store that cannot be used
    │                             (unreadable, too large, its bytes not the digest naming them)
    ├── UsageError                bad options or arguments
    └── InternalError             an exception no code meant to raise: a dsh-audit bug, shown as
                                  one line (:meth:`InternalError.unexpected`), exit code 3

Every error carries ``path``, ``line`` (1-based physical line of the decoded log, 1 = header)
and ``seq`` when known, plus a ``hint`` that says how to fix or work around it. A message
refusing a misspelt name suggests the closest known one (:func:`closest`, :func:`did_you_mean`),
in every layer the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

__all__ = [
    "AttachmentError",
    "CaptureError",
    "CorruptLogError",
    "DamagedLogError",
    "DshAuditError",
    "InputError",
    "MalformedRecordError",
    "RenderError",
    "InternalError",
    "ReplayError",
    "UnreadableError",
    "UnsupportedFormatError",
    "UsageError",
    "closest",
    "did_you_mean",
]


class DshAuditError(Exception):
    """Root of every error dsh-audit raises deliberately."""

    code = "error"

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        seq: int | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.seq = seq
        self.hint = hint

    def located(self, *, path: str | None = None) -> "DshAuditError":
        """Fill in the path when the raiser did not know it; returns self."""
        if self.path is None:
            self.path = path
        return self

    def where(self) -> str:
        parts = [self.path or "<input>"]
        if self.line is not None:
            parts[0] += f":{self.line}"
        if self.seq is not None:
            parts.append(f"seq {self.seq}")
        return " ".join(parts)

    def __str__(self) -> str:
        known = bool(self.path) or self.line is not None or self.seq is not None
        text = f"{self.where()}: {self.message}" if known else self.message  # a usage error has no place
        if self.hint:
            text += f" (hint: {self.hint})"
        return text

    def to_json(self) -> dict[str, object]:
        return {
            "error": self.code,
            "message": self.message,
            "path": self.path,
            "line": self.line,
            "seq": self.seq,
            "hint": self.hint,
        }


class InputError(DshAuditError):
    code = "input"


class UnreadableError(InputError):
    code = "unreadable"


class MalformedRecordError(InputError):
    code = "malformed"


class DamagedLogError(MalformedRecordError):
    """Another agent's log (a Codex rollout, a Claude Code transcript) every record of which is
    damaged, named as such where its format is sniffed (:func:`dsh_audit.log.sniff_format`): an
    error already said in its own words, never re-worded as a DSH log's or an importer's."""


class UnsupportedFormatError(InputError):
    """DSH's ``SessionFormatUnsupportedError`` and its legacy-shape refusals."""

    code = "unsupported"


class CorruptLogError(InputError):
    """DSH's ``SessionPersistenceCorruptionError`` family."""

    code = "corrupt"


class ReplayError(DshAuditError):
    code = "replay"


class CaptureError(DshAuditError):
    code = "capture"


class RenderError(DshAuditError):
    """A request cannot be rendered to wire bytes: the adapter refuses it, or a fact is missing.

    ``dsh_code`` is the error code DSH's adapter would raise for the same request (for example
    ``UNSUPPORTED_CONTENT``), or ``None`` when DSH would send it and only the log lacks a fact.
    """

    code = "render"

    def __init__(self, message: str, *, dsh_code: str | None = None, **where: Any) -> None:
        super().__init__(message, **where)
        self.dsh_code = dsh_code


class AttachmentError(RenderError):
    """An object of DSH's attachment store that cannot give a request its image: it cannot be read
    as a file, is larger than the bound, or its bytes do not hash to the digest that names it
    (``dsh_code`` as DSH's store says it: ``ATTACHMENT_CORRUPT``, ``ATTACHMENT_READ_FAILED``). The
    message names the object's path; the request is not rendered, as DSH would not send it."""


class UsageError(DshAuditError):
    code = "usage"


class InternalError(DshAuditError):
    """An exception that no code of dsh-audit raises on purpose: a bug, described in one line."""

    code = "internal"

    @classmethod
    def unexpected(cls, exc: BaseException, *, path: str | None = None) -> "InternalError":
        """``exc`` as one line: its type, its message and the innermost frame that raised it.

        Example:
            >>> try:
            ...     {}["key"]
            ... except KeyError as exc:
            ...     str(InternalError.unexpected(exc)).startswith("unexpected KeyError: 'key' at ")
            True
        """
        import traceback

        last = traceback.extract_tb(exc.__traceback__)[-1:]
        at = f" at {last[0].filename}:{last[0].lineno}" if last else ""
        if isinstance(exc, MemoryError):
            return cls(f"ran out of memory{at}", path=path,
                       hint="the input may be a decompression bomb or hold a huge line: see the limits "
                            "in docs/hostile-inputs.md, or run one log at a time (--jobs 1)")
        return cls(f"unexpected {type(exc).__name__}: {exc}{at}", path=path,
                   hint="this is a dsh-audit bug; please report it with the log if you can share it "
                        "(DSH_AUDIT_TRACEBACK=1 shows the traceback)")


def closest(word: str, known: Iterable[str], *, cutoff: float = 0.6) -> str | None:
    """The name of ``known`` closest to the misspelt ``word`` (difflib's ratio at least
    ``cutoff``), or None: what every message refusing an unknown name suggests. difflib is
    imported here, not with this module, which every command loads: most runs never misspell.

    Example:
        >>> closest("tool/reslt", ["tool/result", "turn"]), closest("zzz", ["baseline"])
        ('tool/result', None)
    """
    import difflib

    close = difflib.get_close_matches(word, list(known), n=1, cutoff=cutoff)
    return close[0] if close else None


def did_you_mean(word: str, known: Iterable[str], *, cutoff: float = 0.6,
                 shown: Callable[[str], str] = repr) -> str:
    """`` (did you mean X?)``, X the :func:`closest` name of ``known`` as ``shown`` writes it,
    else the empty string: the tail of a message refusing a misspelt name.

    Example:
        >>> did_you_mean("baselin", ["baseline"]), did_you_mean("zzz", ["baseline"])
        (" (did you mean 'baseline'?)", '')
        >>> did_you_mean("orgin", ["origin"], shown=str)
        ' (did you mean origin?)'
    """
    near = closest(word, known, cutoff=cutoff)
    return f" (did you mean {shown(near)}?)" if near is not None else ""
