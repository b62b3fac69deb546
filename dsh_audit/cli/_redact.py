"""``dsh-audit redact``: a shareable copy of a session log, without secrets or content, that still
proves every break (and ``--check``, which verifies such a copy against its manifest)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import click

from .._shell import shell_word
from ..capture import find_capture
from ..errors import UsageError
from ._common import EXIT_FINDINGS, EXIT_OK, echo, echo_command, echo_fit, echo_note, echo_warning, echo_wrote
from ._logs import log_progress, one_log
from ._options import lenient_option
from ._output import STDOUT, echo_written, output_help, write_output
from ._output_guard import no_stdout

if TYPE_CHECKING:
    from ..redact import BundleCheck, Redaction

#: The salt's environment variable (click reads it as --salt, and takes an empty one as unset).
SALT_ENV = "DSH_AUDIT_REDACT_SALT"
#: A salt given shorter than this (in characters) is warned of: the salt undoes every placeholder, and a short one
#: is found from any known text of the bundle (a fixed DSH line) by trying salts: each guess costs a scrypt since
#: session 43 (issue 17: :mod:`dsh_audit.redact._derivation`; before, a fast hash, a 5-character salt in about a
#: minute), which slows the search of a short salt (some 15-20 guesses a second a core), never stops it.
SHORT_SALT = 16
#: The views that price a log, each finding its capture beside it unless given one (every command with --capture
#: but check, diff and breaks without --accounting): a bundle's capture they do not find is named for them.
_PRICING_VIEWS = "breaks --accounting, cache, explain, index, report, requests, sessions, usage and watch"

__all__ = ["redact_command"]


def _check(path: str, lenient: bool, routes: str | None) -> int:
    from ..redact import cause_hint, check_bundle

    with log_progress([path], label="checking"):
        result = check_bundle(path, lenient=lenient, routes=routes)
    if result.other_log is not None:  # a bundle renamed after redact: its verdicts are what proves it
        echo_note(f"the manifest was written for the log {result.other_log}, and this log is {os.path.basename(path)} "
                  "(renamed after redact?): the verdicts below are this log's")
    for category, recorded in result.recorded.items():
        same = result.found.get(category) == recorded
        state = "MISMATCH" if category in result.mismatched else "match"
        count = result.counts.get(category, 0)
        if category == "breaks":  # one row per request, a break or not
            what = f"{count} request(s), {result.breaks} break(s)"
        else:
            what = f"{count} {'diff row' if category == 'diff' else 'request'}(s)"
        if same and category in result.miscounted:  # the rows are the manifest's, its count of them is not
            what += _miscount(result, category)
        echo(f"{category}: {state} ({what})")
    if result.route_file is not None:
        echo_note(f"rendered with the bundle's redacted route configuration {result.route_file}")
    unproven = result.unproven  # captured requests compared with no rendered body: said loud, never a plain OK
    if unproven is not None:
        echo_warning(unproven)
    elif result.unrendered:
        echo_note(f"the manifest records {result.unrendered} captured request(s) as unrendered: their diff verdicts "
                  "compared no rendered body, here as when the bundle was made")
    if result.ok and unproven is not None:
        others = [c for c in result.recorded if c != "diff"]
        echo(f"OK for {', '.join(others)} and {result.compared} of {result.counts.get('diff', 0)} captured "
             f"request(s), {result.found_unrendered} unrendered: not compared (the bundle needs redact --routes "
             "FILE: see the warning)")
        return EXIT_OK
    if result.ok:
        echo(f"OK: every verdict of {path} matches its manifest")
        return EXIT_OK
    why = "" if result.capture_note is None else f": {result.capture_note}"
    echo(f"FAILED: {', '.join(result.mismatched)} verdicts differ from the manifest of {path}{why}")
    if result.family_note is not None:  # a child's parent redacted again (another derivation or salt)
        echo(f"cause: {result.family_note} (hint: {cause_hint(result.family_note)})")
    return EXIT_FINDINGS


def _miscount(result: BundleCheck, category: str) -> str:
    """What the manifest records otherwise of ``category``'s rows: their count, or (the diff's) how
    many captured requests were unrendered."""
    recorded = result.recorded_counts.get(category)
    if recorded is not None and recorded != result.counts.get(category):
        return f"; the manifest records {recorded}"
    return f"; the manifest records {result.unrendered} unrendered, {result.found_unrendered} found"


@click.command("redact")
@click.argument("path", type=click.Path(readable=False))
@click.option("-o", "--output", metavar="FILE", type=click.Path(), default=None,
              help=output_help("the redacted log (same format version as PATH)")
                   + " Compressed as DSH reads FILE's name: zstd for *.zstd (DSH's .jsonl.zstd), plain for "
                     "*.jsonl (a note says when PATH's differs), as PATH for another name and for '-'. With '-' "
                     "no manifest is kept.")
@click.option("--keep", multiple=True, type=click.Choice(["paths", "system", "titles", "tools"]),
              help="Keep this part verbatim (repeatable). Credentials in it (API keys, tokens, passwords) still go; "
                   "e-mail addresses, IPs, host names and paths in it are kept.")
@click.option("--redact-tool-names", is_flag=True, help="Replace tool names too (kept by default). Not with --keep tools, which keeps them.")
@click.option("--salt", default=None, metavar="TEXT",
              help="Placeholder salt: the same salt gives the same placeholders in every run. "
                   "Default: a random salt, never written anywhere (the manifest records only whether it was random "
                   "and an id telling salts apart), so a fork's parent and child need one given to both. A salt "
                   "given must be long and random (e.g. `openssl rand -hex 16`): whoever has it undoes every "
                   "placeholder, and a short salt is recovered from any known text of the bundle (a fixed line "
                   "DSH writes) by trying salts, each guess a slow scrypt (a salt shorter than 16 characters is "
                   "warned of). Prefer the "
                   "environment variable DSH_AUDIT_REDACT_SALT to a command-line argument.")
@click.option("--capture", "capture_path", type=click.Path(), default=None,
              help="A wire.jsonl or HAR capture, or a folder of JSON bodies, of the log's requests, redacted "
                   "with the same placeholders (streamed responses included; a folder becomes a new folder).")
@click.option("--capture-output", type=click.Path(), default=None, metavar="PATH",
              help="Where the redacted capture goes (default: for a wire.jsonl, wire.jsonl beside OUTPUT, where "
                   "the other commands find the copy's capture, unless a file is there or that folder is PATH's "
                   "or one of the 4 above it, where they would take it for PATH's capture; else OUTPUT.<the "
                   "capture's file or folder name>, beside OUTPUT.manifest.json).")
@click.option("--force", is_flag=True, help="Replace existing output files (never an input), and remove the capture "
                                            "OUTPUT's earlier manifest names when this run writes none there.")
@click.option("--check", "check", is_flag=True,
              help="Verify PATH, a redacted log: re-run requests, breaks, cache (and diff) and compare "
                   "every verdict with its manifest.")
@click.option("--alone", is_flag=True,
              help="Redact a fork or subagent child whose parent log lies beside it alone: its verdicts are compared "
                   "without the parent (by default the parent's redaction must lie beside OUTPUT, redacted first with "
                   "the same salt, and the verdicts are compared with the parent on both sides).")
@click.option("--any-capture", is_flag=True,
              help="Redact a capture none of whose requests is one of the log's (another session's capture is "
                   "refused by default).")
@click.option("--routes", metavar="FILE", type=click.Path(dir_okay=False), default=None,
              help="DSH's llm-pi-ai route configuration (YAML), for a log whose hand-declared pi-ai routes render "
                   "only with it. The bundle carries it redacted (OUTPUT.routes.yml: hosts and credentials "
                   "replaced, model facts kept), which --check reads; --check --routes FILE renders with FILE "
                   "instead. Not taken from a DSH home (redact names the home's file when it needs one).")
@lenient_option
def redact_command(path: str, output: str | None, keep: tuple[str, ...], redact_tool_names: bool, salt: str | None,
                   capture_path: str | None, capture_output: str | None, force: bool, check: bool, alone: bool,
                   any_capture: bool, routes: str | None, lenient: bool, max_version: int) -> int:
    """Write a copy of a session log without secrets or content that still proves every break.

    PATH is a log file, a session folder holding one log, or a session id, a unique id prefix or
    `latest`, looked up under $DSH_HOME/sessions (as `show` takes it).
    Every user, assistant, reasoning and tool text, tool arguments and results, file paths and
    the system prompt become deterministic placeholders of the same byte lengths; structure,
    seqs, turns, steps, ids, models, usage and times stay, so `requests`, `breaks`, `cache` and
    `diff` give the same verdicts on the copy. Secrets go even from kept parts; the summary
    names their kinds, never their values. A manifest (OUTPUT.manifest.json) records the
    verdicts' digest; --check verifies a copy against it. A log whose hand-declared pi-ai routes
    render only with DSH's route configuration needs --routes FILE; the bundle carries that file
    redacted (OUTPUT.routes.yml), and --check renders with it. Without it their captured requests
    are unrendered, their diff verdicts compare nothing, and redact says so (the manifest lists
    them; the `check` command it prints then leaves the capture out). A fork or subagent
    child whose parent log lies beside it needs its parent redacted first, with the same --salt,
    beside OUTPUT (as `breaks` finds a parent), or --alone. Exit 0 done (or check passed), 1 a
    verdict differs (nothing is written), 2 bad input (a capture of another session too, unless
    --any-capture).

    \b
    Example:
        dsh-audit redact session.jsonl.zstd -o out.jsonl.zstd --capture wire.jsonl
        dsh-audit redact --check out.jsonl.zstd
    """
    if check:
        return _check(str(one_log(path)), lenient, routes)
    if salt is None and os.environ.get(SALT_ENV) == "":
        raise UsageError(f"{SALT_ENV} is set but empty", hint="give it a non-empty salt, or unset it for a random one")
    if output is None:
        raise UsageError("no output path", hint="pass -o OUTPUT (or --check to verify a redacted log)")
    no_stdout(capture_output, option="--capture-output", what="redacted capture")
    path = str(one_log(path))  # a folder of one log, a session id, an id prefix or latest: that log
    if output != STDOUT:
        return _redact(path, output, keep=keep, redact_tool_names=redact_tool_names, salt=salt,
                       capture_path=capture_path, capture_output=capture_output, force=force, lenient=lenient,
                       routes=routes, alone=alone, any_capture=any_capture)
    if capture_path is not None and capture_output is None:
        raise UsageError("-o - leaves no folder for the redacted capture",
                         hint="pass --capture-output FILE too, or -o OUTPUT")
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory(prefix="dsh-audit-redact-") as folder:
        target = Path(folder) / Path(path).name
        status = _redact(path, str(target), keep=keep, redact_tool_names=redact_tool_names, salt=salt,
                         capture_path=capture_path, capture_output=capture_output, force=force, lenient=lenient,
                         routes=routes, piped=True, alone=alone, any_capture=any_capture)
        if target.exists():
            write_output(STDOUT, target.read_bytes(), what="redacted log")
    return status


def _redact(path: str, output: str, *, keep: tuple[str, ...], redact_tool_names: bool, salt: str | None,
            capture_path: str | None, capture_output: str | None, force: bool, lenient: bool,
            routes: str | None = None, piped: bool = False, alone: bool = False, any_capture: bool = False) -> int:
    """Redact ``path`` to ``output`` and say what was done (on stderr when ``piped``: the log goes
    to stdout, and its manifest is not kept)."""
    from ..redact import redact

    # The log is read twice: redacted as it is read, then the copy, to compare their verdicts.
    with log_progress([path], label="redacting", passes=2):
        result = redact(path, output, salt=salt, keep=keep, tool_names=not redact_tool_names, capture=capture_path,
                        capture_output=capture_output, force=force, lenient=lenient, routes=routes, alone=alone,
                        any_capture=any_capture)
    if not result.mismatched:  # a copy whose verdicts moved is not written (it would fail its own --check)
        _written(result, piped)
    for note in result.notes:  # an unproven bundle (captured requests unrendered) is a warning
        (echo_warning if getattr(note, "level", "note") == "warning" else echo_note)(note)
    found = find_capture(path) if capture_path is None else None
    if found is not None:
        echo_note(f"the capture {found}, which `check` finds for this log, was not redacted: pass --capture "
                  f"{shell_word(found)} to include it")
    if salt is not None and len(salt) < SHORT_SALT and not result.mismatched:  # of a bundle written; never the salt
        echo_warning(f"the salt given is {len(salt)} character(s) long: a short salt is recovered from any known text "
                     "of the bundle by trying every salt of its length (one scrypt a guess), and undoes every "
                     "placeholder: give a long random one, e.g. `openssl rand -hex 16`")
    if result.mismatched:
        echo(_failed(result), err=True)
        return EXIT_FINDINGS
    if not result.unrendered or "diff" not in result.verdicts:
        # what was compared: without the capture `check` finds, the recipient's check may differ (final read, s. 45)
        alone_said = "" if found is None else " (the log alone, without the capture beside it)"
        _say("verdicts of " + ", ".join(result.verdicts) + f": unchanged{alone_said}", piped)
    else:
        others = [c for c in result.verdicts if c != "diff"]
        _say(f"verdicts of {', '.join(others)}: unchanged; diff: unchanged, but {len(result.unrendered)} captured "
             "request(s) unrendered, not compared (see the warning)", piped)
    if not piped:
        _recipient(result)
    return EXIT_OK


def _written(result: Redaction, piped: bool) -> None:
    """What was written (the log, its capture, route file and manifest) and the secrets removed."""
    # each count its own: the log's strings, and the capture's beyond them (a rendered body takes the log's)
    counted = (f"{result.strings} content string(s) replaced" if result.capture is None else
               f"{result.strings} content string(s) replaced in the log, {result.capture_strings} more in the capture")
    written = f" (format v{result.format_version}, {'zstd' if result.compressed else 'plain'}): {counted}"
    echo_written(STDOUT if piped else str(result.output), written)
    if result.capture is not None:
        dropped = ", ".join(result.dropped_headers) or "none"
        named = ("; identifying headers pseudonymised: " + ", ".join(result.identity_headers)
                 if result.identity_headers else "")
        said = f": auth headers dropped: {dropped}{named}"
        echo_written(str(result.capture), said, piped=piped)
    if result.route_file is not None and not piped:
        echo_wrote(str(result.route_file), ": the route configuration, hosts and credentials redacted")
    if piped:
        echo_note("no manifest is kept with -o -: write the log to a FILE to verify it later with --check")
    else:
        echo_wrote(str(result.manifest), "")
    if result.secrets:
        kinds = ", ".join(f"{kind} {n['distinct']} ({n['occurrences']} occurrence(s))" for kind, n in result.secrets.items())
        _say(f"secrets removed: {kinds}", piped)
    elif result.replaced_whole[0]:  # no secret found in what was read: not "none found" of a body never read
        count = result.replaced_whole[0]
        _say(f"secrets removed: none found in what could be read ({count} {'body' if count == 1 else 'bodies'} "
             "replaced whole, unread: see the note below)", piped)
    else:
        _say("secrets removed: none found", piped)


def _say(text: str, piped: bool) -> None:
    """A line of the run's account: on stderr when the log went to stdout (``piped``), else on
    stdout, wrapped at spaces on a terminal (:func:`echo_fit`): no line wider than it."""
    if piped:
        echo(text, err=True)
    else:
        echo_fit(text)


def _failed(result: Redaction) -> str:
    """The one line of a redaction whose verdicts moved on the copy, which is therefore not written: what
    moved, and, when known, why and how to redo it (a child's parent redacted with another salt: the
    family again with one salt given, as the default one is random and no run can repeat it)."""
    from ..redact import cause_hint

    line = f"FAILED: {', '.join(result.mismatched)} verdicts differ on the redacted copy, so nothing was written"
    if result.cause is None:
        return line
    return f"{line}: {result.cause} (hint: {cause_hint(result.cause)})"


def _recipient(result: Redaction) -> None:
    """The commands a recipient of the bundle runs, as typed in bash or zsh from this folder
    (each path a :func:`shell_word`): its check against the manifest, and ``check`` with the
    bundle's capture and route file (which ``check`` does not find by itself). A capture some of whose
    requests redact could not render is left out (``--no-capture``, as ``check`` would otherwise find a
    ``wire.jsonl`` above the bundle): ``check`` reports each of them unrendered (DSH815), which fails
    its default policy, whatever the bundle holds. A capture the views do not find beside the log (not
    ``wire.jsonl`` there: :func:`_found`) is named for the views that price too, which else price the
    copy otherwise than the original (its usage from the capture unknown). A bundle without a capture is checked
    with ``--no-capture`` when ``check`` would find one for the copy (an earlier bundle's that ``--force`` could
    not remove, or one above it): the original's verdicts were taken with none."""
    words = ["dsh-audit", "check", shell_word(result.output)]
    unrendered = len(result.unrendered) if result.capture is not None else 0
    if result.capture is not None:
        words += ["--no-capture"] if unrendered else ["--capture", shell_word(result.capture)]
    elif find_capture(result.output) is not None:
        words.append("--no-capture")
    if result.route_file is not None:
        words += ["--routes", shell_word(result.route_file)]
    how = (f" without its capture (check would report its {unrendered} unrendered request(s), DSH815)"
           if unrendered else " with")
    echo_command("a recipient verifies it with", f"dsh-audit redact --check {shell_word(result.output)}")
    echo_command(f"and audits it{how}", " ".join(words))
    if result.capture is not None and not unrendered and not _found(result):
        echo(f"and prices it as the original with: --capture {shell_word(result.capture)} for each of "
             f"{_PRICING_VIEWS} (they do not find that capture by themselves)")


def _found(result: Redaction) -> bool:
    """Whether the views find the bundle's capture for its log by themselves (a ``wire.jsonl`` beside it:
    :func:`dsh_audit.capture.find_capture`), as they find the original's."""
    found = find_capture(result.output)
    try:
        return found is not None and result.capture is not None and os.path.samefile(found, result.capture)
    except OSError:
        return False


COMMANDS = [redact_command]
