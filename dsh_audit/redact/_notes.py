"""What :func:`dsh_audit.redact.redact` says of a capture it could not prove everything with: requests
that match none of the log's, requests it could not render, and what a body folder holds beside its bodies;
and of a copy whose name gave it another compression than its log's."""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any, ClassVar

from .._shell import shell_word
from ..capture import CapturedRequest
from ..errors import UsageError
from ._capture import META_SUFFIX, ReplacedNote

__all__ = ["Unproven", "compression_note", "left_out_note", "replaced_whole", "unmatched_note", "unrendered_note"]


class Unproven(str):
    """A line of :attr:`.Redaction.notes` that is a warning, not a note: the bundle is not proven
    whole (captured requests unrendered, their diff verdicts compared nothing). Its :attr:`level` is
    ``"warning"``: a command says it as ``warning: TEXT`` (as ``echo_warning`` reads a line's level).

    Example:
        >>> line = Unproven("6 captured request(s) unrendered")
        >>> line.level, getattr("left out 1 entry", "level", "note"), line == str(line)
        ('warning', 'note', True)
    """

    __slots__ = ()
    level: ClassVar[str] = "warning"


def replaced_whole(notes: Sequence[str]) -> tuple[int, tuple[str, ...]]:
    """How many bodies the capture's redaction replaced whole and their distinct codings, as the writer
    that replaced them listed them (the :attr:`~dsh_audit.redact._capture.ReplacedNote.codings` its note
    carries, one note per capture; no note's words are read): for the manifest, so a recipient of the
    bundle can tell a body was blanked, and the summary, which then claims no "none found".

    Example:
        >>> from dsh_audit.redact._capture import replaced_note
        >>> replaced_whole([replaced_note(["br", "deflate", "br"]), "3 bodies replaced whole: its coding x"])
        (3, ('br', 'deflate'))
        >>> replaced_whole([])
        (0, ())
    """
    codings = [coding for note in notes if isinstance(note, ReplacedNote) for coding in note.codings]
    return len(codings), tuple(dict.fromkeys(codings))


def unmatched_note(rows: list[Any], captures: Sequence[CapturedRequest], capture: Path, *,
                   any_capture: bool) -> list[str]:
    """A note on the captured requests that match none of the log's (``rows``: the diff verdicts);
    refused when none matches at all, unless ``any_capture``.

    Raises:
        UsageError: a capture of one or more requests, none of them one of the log's.
    """
    captured = len(captures)
    matched = sum(1 for row in rows if row[0] is not None and row[1] is not None)
    strays = [row for row in rows if row[0] is None and row[1] is not None]
    if not strays:
        return []
    # a foreign row is a capture naming another session in DSH's header, or one without it that is not an LLM call
    named = {c.position for c in captures if c.session_id is not None}
    foreign = sum(1 for row in strays if row[3] == "foreign" and row[1] in named)
    by_position = {c.position: c for c in captures}
    undone = [note for row in strays if row[3] == "foreign" and row[1] not in named and row[1] in by_position
              and (note := by_position[row[1]].undecoded_note()) is not None]
    other = sum(1 for row in strays if row[3] == "foreign") - foreign - len(undone)
    counts = [f"{foreign} of another session"] * bool(foreign) + [f"{other} not LLM call(s)"] * bool(other)
    counts += [f"{len(undone)} read as captured: {'; '.join(dict.fromkeys(undone))}"] * bool(undone)
    whose = f" ({', '.join(counts)})" if counts else ""
    if not matched and captured and not any_capture:
        ask = ("is it the capture of another session?" if foreign or other else
               "the warning at its line says what to store instead")  # undone codings alone: maybe this run's
        raise UsageError(f"none of the {captured} captured request(s) is one of this log's{whose}: {ask}",
                         path=str(capture),
                         hint="pass the capture of this session (or --any-capture to redact it anyway)")
    return [f"{len(strays)} of {captured} captured request(s) match none of the log's requests{whose}: they are "
            "redacted as content, and prove nothing about this log"]


def unrendered_note(unrendered: tuple[tuple[int | None, str], ...], *, routed: bool,
                    home_files: Sequence[str] = ()) -> Unproven:
    """What :func:`dsh_audit.redact.redact` says of the captured requests it could not render: how many and
    what settles it. When every one of them renders only with DSH's route configuration (and none was given),
    that alone, with ``home_files``, the route files of the DSH home the log sits in, which redact does not
    read by itself, named; else each reason once, with how many it holds for."""
    if not routed and all("--routes" in reason for _, reason in unrendered):
        return Unproven(f"{len(unrendered)} request(s) cannot be rendered without DSH's route configuration: give "
                        f"redact --routes FILE to bundle it redacted{_home(home_files)}; without it their diff "
                        "verdicts compared nothing, so the redacted capture is not proven to match the redacted log")
    counts: dict[str, int] = {}
    for _, reason in unrendered:
        counts[reason] = counts.get(reason, 0) + 1
    why = "; ".join(reason if n == 1 else f"{n} x {reason}" for reason, n in counts.items())
    settle = ""
    if not routed and any("--routes" in reason for reason in counts):
        settle = (f"; redact again with --routes FILE{_home(home_files)}: the bundle then carries it, redacted, "
                  "for --check")
    return Unproven(f"{len(unrendered)} captured request(s) unrendered ({why}): their diff verdicts compared "
                    f"nothing, so the redacted capture is not proven to match the redacted log{settle}")


def _home(home_files: Sequence[str]) -> str:
    """Where the DSH home of the log keeps its route configuration (``home_files``), said in brackets."""
    if len(home_files) == 1:
        return (f" (this log's DSH home holds it in {home_files[0]}, which redact does not read by itself: "
                f"--routes {shell_word(home_files[0])})")
    if home_files:
        return f" (this log's DSH home composes it from {', '.join(home_files)}, which redact does not read by itself)"
    return ""


def left_out_note(folder: Path, written: Collection[str]) -> list[str]:
    """A note on what a body folder holds beside its bodies and their sidecars (not copied)."""
    others = sorted(p.name for p in folder.iterdir() if p.name not in written)
    if not others:
        return []
    orphans = sum(name.endswith(META_SUFFIX) for name in others)
    one = len(others) == 1
    return [f"left out {len(others)} entr{'y' if one else 'ies'} of the capture folder that {'is' if one else 'are'} "
            f"neither a body nor a body's sidecar ({orphans} sidecar(s) without a body)"]


def compression_note(output: Path, zstd: bool) -> str:
    """What redact says when the name of its ``output`` gave the copy another compression than its log's
    (``zstd``: the copy's): DSH reads a log's compression by its name, so the name wins, and the name
    that would have kept the log's is named.

    Example:
        >>> compression_note(Path("red/c1.jsonl"), zstd=False)
        'written plain: the log was zstd; -o red/c1.jsonl.zstd keeps it'
    """
    name = os.fspath(output)
    kept = name[:-len(".zstd")] if zstd else f"{name}.zstd"
    return (f"written {'zstd' if zstd else 'plain'}: the log was {'plain' if zstd else 'zstd'}; "
            f"-o {shell_word(kept)} keeps it")
