"""``dsh-audit redact``: a shareable copy of a session log, without secrets or content, that still
proves every break (and ``--check``, which verifies such a copy against its manifest)."""

from __future__ import annotations

import click

from ..errors import UsageError
from ._common import EXIT_FINDINGS, EXIT_OK, STDOUT, echo, echo_note, lenient_option, output_help, write_output

__all__ = ["redact_command"]


def _check(path: str, lenient: bool) -> int:
    from ..redact import check_bundle

    result = check_bundle(path, lenient=lenient)
    for category, recorded in result.recorded.items():
        state = "match" if result.found.get(category) == recorded else "MISMATCH"
        echo(f"{category}: {state} ({result.counts.get(category, 0)} verdict(s))")
    if result.ok:
        echo(f"OK: every verdict of {path} matches its manifest")
        return EXIT_OK
    echo(f"FAILED: {', '.join(result.mismatched)} differ from the manifest of {path}")
    return EXIT_FINDINGS


@click.command("redact")
@click.argument("path", type=click.Path())
@click.option("-o", "--output", metavar="FILE", type=click.Path(dir_okay=False), default=None,
              help=output_help("the redacted log (same format version and compression as PATH)")
                   + " With '-' no manifest is kept.")
@click.option("--keep", multiple=True, type=click.Choice(["paths", "system", "titles", "tools"]),
              help="Keep this part verbatim (repeatable); secrets in it still go.")
@click.option("--redact-tool-names", is_flag=True, help="Replace tool names too (kept by default).")
@click.option("--salt", default=None, metavar="TEXT",
              help="Placeholder salt: the same salt gives the same placeholders in every run. "
                   "Default: a random salt, never written anywhere. Prefer the environment "
                   "variable DSH_AUDIT_REDACT_SALT to a command-line argument.")
@click.option("--capture", "capture_path", type=click.Path(), default=None,
              help="A wire.jsonl or HAR capture, or a folder of JSON bodies, of the log's requests, redacted "
                   "with the same placeholders (streamed responses included; a folder becomes a new folder).")
@click.option("--capture-output", type=click.Path(), default=None, metavar="PATH",
              help="Where the redacted capture goes (default: the capture's file or folder name beside --output).")
@click.option("--force", is_flag=True, help="Replace existing output files (never an input).")
@click.option("--check", "check", is_flag=True,
              help="Verify PATH, a redacted log: re-run requests, breaks, cache (and diff) and compare "
                   "every verdict with its manifest.")
@lenient_option
def redact_command(path: str, output: str | None, keep: tuple[str, ...], redact_tool_names: bool, salt: str | None,
                   capture_path: str | None, capture_output: str | None, force: bool, check: bool, lenient: bool,
                   max_version: int) -> int:
    """Write a copy of a session log without secrets or content that still proves every break.

    Every user, assistant, reasoning and tool text, tool arguments and results, file paths and
    the system prompt become deterministic placeholders of the same byte lengths; structure,
    seqs, turns, steps, ids, models, usage and times stay, so `requests`, `breaks`, `cache` and
    `diff` give the same verdicts on the copy. Secrets go even from kept parts; the summary
    names their kinds, never their values. A manifest (OUTPUT.manifest.json) records the
    verdicts' digest; --check verifies a copy against it. Exit 0 done (or check passed), 1 a
    verdict differs, 2 bad input.

    \b
    Example:
        dsh-audit redact session.jsonl.zstd -o out.jsonl.zstd --capture wire.jsonl
        dsh-audit redact --check out.jsonl.zstd
    """
    if check:
        return _check(path, lenient)
    if output is None:
        raise UsageError("no output path", hint="pass -o OUTPUT (or --check to verify a redacted log)")
    if output != STDOUT:
        return _redact(path, output, keep=keep, redact_tool_names=redact_tool_names, salt=salt,
                       capture_path=capture_path, capture_output=capture_output, force=force, lenient=lenient)
    if capture_path is not None and capture_output is None:
        raise UsageError("-o - leaves no folder for the redacted capture",
                         hint="pass --capture-output FILE too, or -o OUTPUT")
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory(prefix="dsh-audit-redact-") as folder:
        target = Path(folder) / Path(path).name
        status = _redact(path, str(target), keep=keep, redact_tool_names=redact_tool_names, salt=salt,
                         capture_path=capture_path, capture_output=capture_output, force=force, lenient=lenient,
                         piped=True)
        if target.exists():
            write_output(STDOUT, target.read_bytes(), what="redacted log")
    return status


def _redact(path: str, output: str, *, keep: tuple[str, ...], redact_tool_names: bool, salt: str | None,
            capture_path: str | None, capture_output: str | None, force: bool, lenient: bool,
            piped: bool = False) -> int:
    """Redact ``path`` to ``output`` and say what was done (on stderr when ``piped``: the log goes
    to stdout, and its manifest is not kept)."""
    from ..redact import redact

    result = redact(path, output, salt=salt, keep=keep, tool_names=not redact_tool_names, capture=capture_path,
                    capture_output=capture_output, force=force, lenient=lenient)
    echo(f"wrote {'stdout' if piped else result.output} (format v{result.format_version}, "
         f"{'zstd' if result.compressed else 'plain'}): {result.strings} content string(s) replaced", err=piped)
    if result.capture is not None:
        dropped = ", ".join(result.dropped_headers) or "none"
        echo(f"wrote {result.capture}: auth headers dropped: {dropped}", err=piped)
    if piped:
        echo_note("no manifest is kept with -o -: write the log to a FILE to verify it later with --check")
    else:
        echo(f"wrote {result.manifest}")
    if result.secrets:
        kinds = ", ".join(f"{kind} {n['distinct']} ({n['occurrences']} occurrence(s))" for kind, n in result.secrets.items())
        echo(f"secrets removed: {kinds}", err=piped)
    else:
        echo("secrets removed: none found", err=piped)
    for note in result.notes:
        echo_note(note)
    if result.mismatched:
        echo(f"FAILED: {', '.join(result.mismatched)} verdicts differ on the redacted copy", err=True)
        return EXIT_FINDINGS
    echo("verdicts of " + ", ".join(result.verdicts) + ": unchanged", err=piped)
    return EXIT_OK


COMMANDS = [redact_command]
