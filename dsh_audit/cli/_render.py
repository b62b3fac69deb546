"""``dsh-audit render``: the exact wire bytes of one request."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from .._shell import shell_word
from ..errors import DshAuditError, UnreadableError, UsageError
from ..log import open_regular
from ..report.terminal import page_listing, terminal_text
from ..session import EventLines, attachment_store, request_route, routes_from, routes_hint, window_conflicts
from ..wire import ADAPTERS, DEFAULT_HARNESS_VERSION, make_renderer
from ._common import EXIT_OK, echo_note, echo_warning
from ._logs import log_progress, one_log
from ._one_request import REQUEST_INDEX, RequestCommand, at_line, one_request
from ._options import ADAPTER_CHOICES, adapter_option, attachments_option, lenient_option, pager_option, routes_option

if TYPE_CHECKING:
    from ..replay import Request
    from ..session import RouteEvidence
    from ..wire import PiRoutes, WireRequest

__all__ = ["render_command"]


#: the largest compaction instruction file read (DSH's own is a few KB)
MAX_INSTRUCTION = 1 << 20


def _read_instruction(path: str | None) -> str | None:
    """The compaction instruction text of ``path``: a regular UTF-8 file of at most 1 MiB (a FIFO
    or ``/dev/zero`` is refused before a byte is read, never waited on or read without end)."""
    if path is None:
        return None
    hint = "give --compaction-instruction the text file of DSH's compaction instruction"
    try:
        with open_regular(path, what="compaction instruction file") as handle:
            raw = handle.read(MAX_INSTRUCTION + 1)
    except UnreadableError as exc:
        raise UsageError(exc.message, path=path, hint=hint) from None
    except OSError as exc:
        raise UsageError(f"cannot read the compaction instruction: {exc.strerror or exc}", path=path,
                         hint=hint) from None
    if len(raw) > MAX_INSTRUCTION:
        raise UsageError(f"the compaction instruction file is larger than {MAX_INSTRUCTION >> 20} MiB", path=path,
                         hint=hint)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"the compaction instruction is not UTF-8 text (byte {exc.start})", path=path,
                         hint=hint) from None


def _without_capture(error: DshAuditError) -> DshAuditError:
    """``error`` with the last alternative of its hint dropped when that names ``--capture``, an
    option render does not have (a missing image's hint offers the attachment store, or a capture
    of the request, which the commands that pair one take)."""
    head, sep, tail = (error.hint or "").rpartition(", or ")
    if sep and "--capture" in tail:
        error.hint = head
    return error


def _imported(request: Request) -> tuple[str, str, str] | None:
    """``(format, agent, what its log does not record)`` of a request imported from another
    agent's log (Claude Code, Codex: ``extra.format``), None for a DSH request."""
    from ..importers import unrecorded  # only for an imported log: the CLI starts without the importers

    found = request.extra.get("format")
    told = unrecorded(found) if isinstance(found, str) else None
    return None if told is None else (str(found), *told)


def _imported_hint(imported: tuple[str, str, str], log_path: str, index: int, hint: str | None) -> str:
    """The hint of a refusal to render request ``index`` of the imported log at ``log_path``: why, in
    the importer's terms (the agent's request is not in its log; render writes DSH's for the
    conversation), then the refusal's own ``hint`` (what DSH's route needs), then the command that
    shows the conversation, its path a :func:`~dsh_audit._shell.shell_word`, so it can be pasted."""
    fmt, agent, missing = imported
    then = f"; for DSH's route: {hint}" if hint else ""
    return (f"a {fmt} log records the conversation, not the request {agent} sent ({missing}): render writes only "
            f"what DSH's pi-ai route would send for that conversation{then}; "
            f"`dsh-audit show {shell_word(log_path)} {index}` prints the conversation as logged")


def _imported_note(log_path: str, imported: tuple[str, str, str], adapter: str) -> str:
    """What the body rendered for a request of an imported log is, and what is not known of the
    request the agent sent (the ``note:`` ``render`` writes on stderr)."""
    fmt, agent, missing = imported
    return (f"{log_path}: a {fmt} log: this body is what DSH's {adapter} route (pi-ai) would send for the "
            f"conversation as logged, not the request {agent} sent, which the log does not record ({missing}); "
            "its reasoning goes as DSH sends another agent's, not replayed natively")


def _wire(log_path: str, request: Request, evidence: RouteEvidence, *, adapter: str, config: PiRoutes | None,
          routed: bool, harness_version: str, instruction_file: str | None) -> WireRequest:
    """The wire request ``request`` of the log at ``log_path`` sends, by its route (``evidence``, and
    ``config``: the route configuration, given as --routes when ``routed``) or the ``adapter`` forced.

    Raises the refusal of a request that cannot be rendered with the seq it is about (the request's
    own: its header's, else its first chunk's, when the route is what refuses it), and the usage
    errors of the options.
    """
    route = request_route(request, evidence, forced=None if adapter == "auto" else adapter,
                          declared=config.apis if config is not None else None)
    # The request's place: its header's (whose config names the route), else its first chunk's.
    seq = request.config_seq
    if route.no_wire_format:
        raise UsageError(f"request {request.index} cannot be rendered: a known route with no wire format: "
                         f"{route.because}", path=log_path, seq=seq,
                         hint="no option renders it: DSH sent it in a format dsh-audit does not write, and "
                              "--adapter would write another")
    if route.adapter is None:
        raise UsageError(f"request {request.index} cannot be rendered: unknown route: {route.because}", path=log_path,
                         seq=seq, hint="pass --routes FILE with the route configuration DSH had, or force a wire "
                                       f"format with --adapter {'|'.join(ADAPTER_CHOICES)}")
    adapter = route.adapter
    if adapter not in ADAPTERS:
        raise UsageError(f"the {adapter!r} renderer is not installed in this build",
                         hint="known adapters: " + ", ".join(sorted(ADAPTERS)))
    options: dict[str, Any] = {"version": harness_version} if adapter == "deepseek" else \
        {"models": config.models} if config is not None else {}
    renderer = make_renderer(adapter, **options)
    instruction = _read_instruction(instruction_file)
    call_options: dict[str, Any] = {"compaction_instruction": instruction} if instruction is not None else {}
    try:
        images = attachment_store(log_path)
        if images is not None:
            call_options["images"] = images
        return renderer.render(request, **call_options)
    except DshAuditError as exc:
        if not routed and exc.hint:  # the recorded home's layer too, as check and diff name it
            exc.hint = routes_hint(log_path, exc.hint)
        raise _without_capture(exc).located(path=log_path) from None


@click.command("render", cls=RequestCommand)
@click.argument("path", type=click.Path(readable=False))
@click.argument("index", type=REQUEST_INDEX)
@adapter_option
@click.option("--headers", "with_headers", is_flag=True,
              help="Write the request line and headers (no authorization) and a blank line before the body.")
@click.option("--compaction-instruction", "instruction_file", type=click.Path(dir_okay=False),
              help="File holding DSH's compaction instruction text (needed for compaction requests; "
                   "the log does not record it).")
@click.option("--harness-version", default=DEFAULT_HARNESS_VERSION, show_default=True,
              help="DSH version written in the user-agent header (deepseek adapter).")
@routes_option
@attachments_option
@lenient_option
@pager_option("the body")
def render_command(path: str, index: int, adapter: str, with_headers: bool, instruction_file: str | None,
                   harness_version: str, routes: str | None, lenient: bool, max_version: int) -> int:
    """Write the exact body bytes request INDEX of one log sends (binary, no trailing newline).

    INDEX is the '#' column of `dsh-audit requests`; a negative INDEX counts from the end (-1 is
    the last request, -2 the one before) and may come before or after PATH. The wire format is the request's own route
    (a Claude request through pi-ai's Anthropic route is written as Anthropic Messages), unless
    --adapter forces one. Compaction requests need the instruction text
    DSH appends (--compaction-instruction). Image bytes are read from DSH's attachment store
    (--attachments; default: the store of the DSH home the log is in, else $DSH_HOME's).

    \b
    Example:
        dsh-audit render session.jsonl 3 | sha256sum
        dsh-audit render latest -1 --headers
    """
    config = routes_from(routes)
    log = one_log(path)
    event_lines = EventLines()  # each event's line: a refusal of the request names its seq's line
    with log_progress([log], label="render"):
        log_path, request, evidence = one_request(str(log), index, lenient=lenient, max_version=max_version,
                                                  lines=event_lines)
    config = config if routes is not None else routes_from(None, log=log_path)  # the log's DSH home's, if any
    for warning in (*config.notes, *window_conflicts(evidence, config)) if config is not None else ():
        echo_warning(warning)  # the home layers taken and what they leave open; where the log contradicts them
    imported = _imported(request)
    try:
        # an imported log is in no DSH home: its refusal names no home layer (routed)
        wire = _wire(log_path, request, evidence, adapter=adapter, config=config,
                     routed=routes is not None or imported is not None, harness_version=harness_version,
                     instruction_file=instruction_file)
    except DshAuditError as exc:
        if imported is not None:
            exc.hint = _imported_hint(imported, log_path, request.index, exc.hint)
            exc.line = exc.seq if exc.line is None else exc.line  # an imported request's seqs are its lines
        raise at_line(exc, event_lines) from None
    if imported is not None:
        echo_note(_imported_note(log_path, imported, wire.adapter))
    terminal = sys.stdout.isatty()  # before the pager takes stdout: the body is shown escaped there too
    page_listing()  # on a terminal: the pager, before the first line
    if with_headers:
        click.echo(_header_block(wire.method, wire.path, wire.headers, terminal=terminal), nl=False)
    if terminal:
        # A terminal would act on the C1 controls and bidi overrides JSON.stringify leaves raw in a
        # body (log text): show them escaped; a pipe or a file gets the exact bytes.
        click.echo(terminal_text(wire.body.decode("utf-8", "surrogateescape")))
        echo_note("stdout is a terminal: characters it would act on are shown escaped; pipe or "
                  "redirect the output for the exact body bytes")
    else:
        click.echo(wire.body, nl=False)  # bytes go to the binary stream untouched
    return EXIT_OK


def _header_block(method: str, path: str, headers: tuple[tuple[str, str], ...], *, terminal: bool) -> bytes | str:
    """The request line and header lines ``--headers`` writes before the body, escaped as the rest of
    render's output (a header value from the log, a session id, must not add lines or act on a terminal).

    A pipe gets the bytes the wire carries: fetch sends a header value one byte per character
    (a ByteString, U+00A0 to U+00FF as one byte each), so they are written as latin-1, not UTF-8;
    a terminal gets the characters as text. The C1 controls (U+0080 to U+009F, which fetch sends as
    one byte each too) are written as their escapes on both, as every control from a log is
    (docs/hostile-inputs.md): a pipe is often read on a terminal. A character no wire carries (past
    U+00FF: pi-ai refuses such a request) is written as its escape."""
    text = "\n".join([terminal_text(f"{method} {path}"),
                      *(terminal_text(f"{name}: {value}") for name, value in headers)]) + "\n\n"
    return text if terminal else text.encode("latin-1", "backslashreplace")


COMMANDS = [render_command]
