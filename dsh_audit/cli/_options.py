"""The options many commands share, as decorators: how a log is read (``--lenient``,
``--max-version``), what it is compared with, rendered and priced by (``--capture``, ``--adapter``,
``--routes``, ``--profile``, ``--attachments``, ``--prices``, ``--openai-zdr``), how much of the
work is done (``--accounting/--no-accounting``, ``--no-attribution``), how tables are printed
(``--format``, ``--json``, ``--pager``), and where the work runs (``--jobs``, ``--engine``); the same
option, help and environment variable on every command that takes it, and one spelling for each
meaning (an older one still read, hidden: :data:`RETIRED_SPELLINGS`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

import click

from ..errors import DshAuditError
from ._given import give_way

__all__ = ["ADAPTER_CHOICES", "RETIRED_SPELLINGS", "accounting_option", "adapter_option", "attachments_option",
           "attribution_option", "breaks_fail", "capture_option", "engine_options", "fail_on_option", "jobs_option",
           "json_option", "lenient_option", "listing_options", "openai_zdr_option", "pager_option", "prices_option",
           "routes_option", "stated_zdr"]

#: The ``--adapter`` choices (DSH's wire formats), besides ``auto``.
ADAPTER_CHOICES = ("deepseek", "anthropic", "openai", "responses")

#: Older spellings of a shared option -> the option they mean now; each still works on the command
#: that had it, as a hidden alias (tests/test_cli_conventions.py keeps them off every other command).
RETIRED_SPELLINGS = {"--no-cost": "--no-accounting", "--no-breaks": "--no-accounting",
                     "--no-cache": "--no-accounting", "--cost": "--accounting"}


def json_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True,
                        help="One JSON object per line on stdout, for other tools.")(func)


#: The ``--format`` choices (:data:`dsh_audit.report.terminal.LISTING_FORMATS`; not imported here:
#: --version loads no library code).
_FORMATS = ("table", "json", "csv", "markdown")


def listing_options(func: Callable[..., Any] | None = None, *, json_flag: bool = True,
                    formats_help: str = "json is what --json prints",
                    json_help: str = "One JSON object per line on stdout, for other tools") -> Callable[..., Any]:
    """``--format table|json|csv|markdown``, ``--pager/--no-pager`` and (``json_flag``) ``--json``:
    how a command that prints tables prints them, the same on every such command.

    The command runs inside :func:`dsh_audit.report.terminal.listing`, so that its
    :func:`~dsh_audit.report.terminal.print_table` calls write the format chosen. With
    ``json_flag`` the command gets ``as_json`` (``--json``, or ``--format json``); without it it
    reads :func:`~dsh_audit.report.terminal.listing_format`. ``json_help`` says what ``--json`` prints.
    """
    if func is None:
        return functools.partial(listing_options, json_flag=json_flag, formats_help=formats_help,
                                 json_help=json_help)
    command = func

    @functools.wraps(command)
    def run(*args: Any, output_format: str, pager: bool, **kwargs: Any) -> Any:
        from ..report.terminal import listing

        chosen = output_format
        if json_flag:
            if kwargs["as_json"] and output_format != "json":
                dropped = give_way("as_json", "output_format", typed=("--json", f"--format {output_format}"),
                                   clash=lambda first, second: f"{first} and {second} ask for two formats",
                                   hint="--json is --format json: give one of them")
                chosen = output_format if dropped == "as_json" else "json"
            elif kwargs["as_json"]:
                chosen = "json"
            kwargs["as_json"] = chosen == "json"
        with listing(chosen, pager=pager):
            return command(*args, **kwargs)

    options = [click.option("--format", "output_format", type=click.Choice(_FORMATS), default="table",
                            show_default=True,
                            help="How tables are printed: a table for people, json, csv (RFC 4180: a header "
                                 "row and every column per table, each row led by a table column naming its "
                                 "table, tables apart by a blank line; an amount in a money column or a token count a "
                                 "plain number, empty when unknown; a text cell a "
                                 "spreadsheet would read as a formula starts with ') or markdown (a heading "
                                 f"and a GitHub table per table, log text escaped); {formats_help}."),
               click.option("--pager/--no-pager", default=True, help=_pager_help("a table or Markdown"))]
    if json_flag:
        options.insert(0, click.option("--json", "as_json", is_flag=True,
                                       help=f"{json_help} (the same as --format json)."))
    wrapped: Callable[..., Any] = run
    for option in reversed(options):
        wrapped = option(wrapped)
    return wrapped


def _pager_help(what: str) -> str:
    """The help of ``--pager/--no-pager`` (``pager``) on a command that shows ``what`` on a terminal."""
    return (f"On a terminal, show {what} through $DSH_AUDIT_PAGER, else $PAGER, else less (LESS=FRX when "
            "LESS is unset: output that fits the screen is not paged); an empty value or cat means no pager. "
            "--no-pager prints directly.")


def pager_option(what: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--pager/--no-pager`` on a command that prints no table but may print a screenful or more
    (``show``, ``explain``, ``render``): the same option, the same pager as :func:`listing_options`.
    The command runs inside :func:`dsh_audit.report.terminal.listing`; its first line on stdout
    starts the pager (:func:`echo`, or :func:`dsh_audit.report.terminal.page_listing` before
    output written otherwise)."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        command = func

        @functools.wraps(command)
        def run(*args: Any, pager: bool, **kwargs: Any) -> Any:
            from ..report.terminal import listing

            with listing("table", pager=pager):
                return command(*args, **kwargs)

        wrapped: Callable[..., Any] = click.option("--pager/--no-pager", default=True, help=_pager_help(what))(run)
        return wrapped

    return decorate


def lenient_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--lenient`` and ``--max-version``: how strictly a log is read (passed as ``read_options``)."""
    func = click.option("--max-version", type=click.IntRange(0, 4), default=4, show_default=True,
                        help="Newest log format version to read; 0 reproduces DSH 0.1.0-rc.8, "
                             "which reads only v0.")(func)
    return click.option("--lenient", is_flag=True,
                        help="Accept headers DSH refuses only for metadata (missing version or "
                             "delegationDepth, non-absolute cwd), as for tokenised test fixtures.")(func)


def _ignore_found(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """``--no-capture``: no capture is looked for beside a log, in worker processes too
    (:data:`dsh_audit.capture.NO_CAPTURE_ENV`, read by :func:`dsh_audit.capture.find_capture`)."""
    from ..capture import NO_CAPTURE_ENV

    if value:
        _set_for_command(ctx, NO_CAPTURE_ENV, "1")


def capture_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--capture PATH`` (``capture``): what was sent, compared with every log as ``check`` compares
    it (default: the ``wire.jsonl`` :func:`dsh_audit.capture.find_capture` finds beside each log);
    and ``--no-capture``, which looks for none (a capture found is optional evidence: one that
    cannot be read is left out with a warning; this leaves every found one out, silently)."""
    func = click.option("--no-capture", is_flag=True, expose_value=False, callback=_ignore_found,
                        help="Look for no wire.jsonl beside the logs: read each log alone "
                             "(--capture still gives one).")(func)
    return click.option("--capture", "capture", type=click.Path(exists=True),
                        help="What was sent, for every log: wire.jsonl, HAR 1.2 or a folder of bodies. "
                             "Default: a wire.jsonl beside each log or up to four folders above it "
                             "(--no-capture: none).")(func)


def _use_profile(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    """Make ``value`` the DSH profile of every log for this command (``$DSH_AUDIT_PROFILE``)."""
    from ..session import PROFILE_ENV

    if value is not None:
        from ..wire import check_profile  # only a named profile loads the renderers that check it

        try:
            check_profile(value)
        except DshAuditError as exc:
            raise click.BadParameter(exc.message, ctx=ctx, param=param) from None
        _set_for_command(ctx, PROFILE_ENV, value)


def routes_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--routes FILE`` (``routes``): DSH's llm-pi-ai route configuration, for facts a log lacks;
    and ``--profile NAME``, the DSH profile whose layers give it when no file is given (read from
    the environment by :func:`dsh_audit.session.routes_from`, so it takes no parameter)."""
    func = click.option("--profile", metavar="NAME", default=None, expose_value=False, callback=_use_profile,
                        help="The DSH profile the sessions ran under (the log does not record it): its "
                             "<DSH_HOME>/profiles/NAME/cordis.patch.yml is read under the home's own layers "
                             "when no --routes is given. Default: $DSH_AUDIT_PROFILE, else the home's only "
                             "profile, else the home's layers alone.")(func)
    return click.option("--routes", metavar="FILE", type=click.Path(dir_okay=False), default=None,
                        help="DSH's llm-pi-ai route configuration (YAML: the llm-pi-ai row, its config, or "
                             "its providers): routes and model facts of hand-declared pi-ai providers, "
                             "which a log does not record. Default: the layers of the DSH home the log is "
                             "in (its profile's and its own cordis.patch.yml, its settings.yaml).")(func)


def prices_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--prices FILE`` (``prices_path``): the price file of every command that prices requests."""
    return click.option("--prices", "prices_path", type=click.Path(dir_okay=False), default=None,
                        help="A price file (JSON or TOML) overriding or extending the packaged table and "
                             "pyproject's [tool.dsh-audit.prices].")(func)


def openai_zdr_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--openai-zdr/--no-openai-zdr`` (``openai_zdr``): the organization's OpenAI Zero Data
    Retention status, on every command that judges the prefix cache (:func:`stated_zdr`)."""
    return click.option(
        "--openai-zdr/--no-openai-zdr", "openai_zdr", default=None,
        help="Whether the OpenAI organization has Zero Data Retention, which decides OpenAI's default "
             "prompt-cache retention (docs/cache-accounting.md). Default: as the nearest pyproject.toml's "
             "[tool.dsh-audit.cache] openai-zero-data-retention states it, else not stated.")(func)


def stated_zdr(flag: bool | None) -> bool | None:
    """The organization's Zero Data Retention status: ``flag`` when given, else the nearest
    ``pyproject.toml``'s (raises :class:`~dsh_audit.errors.UsageError` on a bad value)."""
    from ..cache import pyproject_zero_data_retention

    return flag if flag is not None else pyproject_zero_data_retention()


def jobs_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--jobs/-j N`` (``jobs``): worker processes, one session log per task (0: every CPU)."""
    return click.option("--jobs", "-j", type=click.IntRange(min=0), default=1, show_default=True,
                        help="Worker processes, one session log each; 0 uses every CPU. "
                             "Output is identical to a serial run.")(func)


def engine_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--engine local|dask`` and ``--scheduler ADDRESS`` (``engine``, ``scheduler``)."""
    func = click.option("--scheduler", metavar="ADDRESS", default=None,
                        help="Dask scheduler address (tcp://host:8786) for --engine dask.")(func)
    return click.option("--engine", type=click.Choice(["local", "dask"]), default="local", show_default=True,
                        help="Where sessions run: local processes (--jobs) or a Dask cluster "
                             "(needs pip install 'dsh-audit[dask]').")(func)


def _use_attachments(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    """Make the store ``value`` names every log's for this command (``$DSH_AUDIT_ATTACHMENTS``, which
    worker processes inherit), restoring the environment when the command ends."""
    from ..session import ATTACHMENTS_ENV, attachment_root

    if value is None:
        return
    root = attachment_root(value)
    if root is None:
        raise click.BadParameter(f"no attachment store in {value!r}: none of it, its v1 folder or its "
                                 "attachments/v1 folder holds an objects folder", ctx=ctx, param=param)
    _set_for_command(ctx, ATTACHMENTS_ENV, os.path.abspath(root))


def _set_for_command(ctx: click.Context, name: str, value: str | None) -> None:
    """Set environment variable ``name`` (which worker processes inherit; None: unset it) until the
    command ends."""
    before = os.environ.get(name)
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value

    def restore() -> None:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before

    ctx.call_on_close(restore)


def attachments_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--attachments DIR``: the attachment store image requests are rendered from, for every log
    (default: the store of the DSH home a log sits in, else ``$DSH_HOME``'s). The command reads it
    from the environment (:func:`dsh_audit.session.attachment_store`), so it takes no parameter."""
    return click.option("--attachments", metavar="DIR", type=click.Path(file_okay=False), default=None,
                        expose_value=False, callback=_use_attachments,
                        help="DSH's attachment store (<DSH_HOME>/attachments/v1, that folder's parent or the "
                             "DSH home), where the bytes of a logged image are read from. Default: the store "
                             "of the DSH home the log is in, else $DSH_HOME's (else ~/.dsh's). A capture's "
                             "image bytes win.")(func)


def accounting_option(*, default: bool, gives: str,
                      alias: str | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--accounting/--no-accounting`` (``accounting``): whether each log's cache accounting is
    read (what ``cache`` computes: expected cache reads, what each request lost and what that cost),
    which ``gives`` says what the command shows from; on by ``default`` or not. ``alias``: the
    command's older spelling (:data:`RETIRED_SPELLINGS`), still read, hidden from the help, with its
    own environment variable."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        wrapped: Callable[..., Any] = func
        if alias is not None:
            wrapped = _with_alias(func, alias, RETIRED_SPELLINGS[alias] == "--accounting")
        turn = "--no-accounting skips it: faster" if default else "--accounting reads it: as slow as `cache`"
        return click.option("--accounting/--no-accounting", "accounting", default=default, show_default=True,
                            callback=_note_typed if alias is not None else None,
                            help=f"Read each log's cache accounting, as `cache` does: {gives}. {turn}.")(wrapped)

    return decorate


#: ``ctx.meta`` key: the names of ``--accounting/--no-accounting`` and its alias in the order typed.
_TYPED = "dsh_audit.accounting_typed"


def _note_typed(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Remember that ``param`` was typed on the command line: click processes typed options in the
    order they were typed, so the last one noted is the one typed last."""
    if ctx.get_parameter_source(param.name or "") == click.core.ParameterSource.COMMANDLINE:
        ctx.meta.setdefault(_TYPED, []).append(param.name)
    return value


def _with_alias(command: Callable[..., Any], alias: str, means: bool) -> Callable[..., Any]:
    """``command`` with the hidden flag ``alias`` (parameter named after it, as before) standing for
    ``accounting`` = ``means`` when given, unless ``--accounting/--no-accounting`` was typed after it
    (or typed while the alias came from its environment variable): the last one typed wins, as for
    every click flag."""
    name = alias.removeprefix("--").replace("-", "_")

    @functools.wraps(command)
    def run(*args: Any, accounting: bool, **kwargs: Any) -> Any:
        given = kwargs.pop(name)
        typed = click.get_current_context().meta.get(_TYPED, [])
        alias_wins = given and (not typed or typed[-1] == name)
        return command(*args, accounting=means if alias_wins else accounting, **kwargs)

    return click.option(alias, name, is_flag=True, hidden=True, callback=_note_typed,
                        help=f"The older spelling of --{'' if means else 'no-'}accounting.")(run)


def attribution_option(gives: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--no-attribution`` (``no_attribution``): every break left unattributed, with no cause; ``gives``
    says what the command shows then."""
    return click.option("--no-attribution", "no_attribution", is_flag=True,
                        help=f"Skip break attribution: faster, every break unattributed (no cause); {gives}.")


#: ``--fail-on``'s choices, on every command that gates on prefix-cache breaks (``breaks``, ``cache``):
#: which breaks make its exit code 1 (:func:`breaks_fail`).
FAIL_ON_CHOICES = ("unexplained", "any", "never")


def fail_on_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--fail-on unexplained|any|never`` (``fail_on``): which prefix-cache breaks make the exit
    code 1, the same option, help and meaning (:func:`breaks_fail`) on every command that takes it,
    each command's own environment variable setting it (``DSH_AUDIT_<COMMAND>_FAIL_ON``)."""
    return click.option("--fail-on", "fail_on", type=click.Choice(FAIL_ON_CHOICES), default="unexplained",
                        show_default=True,
                        help="Which prefix-cache breaks make the exit code 1: unexplained, those the log does not "
                             "explain (cause unexplained or unrecorded_mutation: `cache`'s break_unexplained, "
                             "`check`'s DSH821); any, every break (`breaks` lists them; `cache` counts "
                             "break_unattributed ones too); never, none (bad input still exits 2).")(func)


def breaks_fail(fail_on: str, *, breaks: int, unexplained: int) -> bool:
    """Whether a run whose logs hold ``breaks`` prefix-cache breaks, ``unexplained`` of them
    unexplained (:attr:`dsh_audit.attribution.Transition.is_unexplained`), fails ``--fail-on
    fail_on`` (:data:`FAIL_ON_CHOICES`): the one rule of ``breaks`` and ``cache``.

    Example:
        >>> [breaks_fail(choice, breaks=2, unexplained=0) for choice in FAIL_ON_CHOICES]
        [False, True, False]
        >>> [breaks_fail(choice, breaks=2, unexplained=1) for choice in FAIL_ON_CHOICES]
        [True, True, False]
    """
    if fail_on == "any":
        return breaks > 0
    return fail_on == "unexplained" and unexplained > 0


def _use_adapter(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """Force ``value`` (not ``auto``) on every request of this command, in worker processes too: the
    library's route decisions read it from ``$DSH_AUDIT_ADAPTER`` (:func:`dsh_audit.session.request_route`)."""
    from ..session import ADAPTER_ENV

    if value != "auto":
        _set_for_command(ctx, ADAPTER_ENV, value)
    elif ctx.get_parameter_source(param.name or "") != click.core.ParameterSource.DEFAULT:
        _set_for_command(ctx, ADAPTER_ENV, None)  # --adapter auto typed: each request's own route
    return value


def adapter_option(func: Callable[..., Any] | None = None, *, expose: bool = True) -> Callable[..., Any]:
    """``--adapter auto|deepseek|anthropic|openai|responses`` (``adapter``, when ``expose``): the wire
    format every body of the command is rendered in, the same option on every command that renders
    one. It is forced through ``$DSH_AUDIT_ADAPTER`` for the command, which every route decision of
    the library reads (in worker processes too), so a command that passes it nowhere need not take it."""
    if func is None:
        return functools.partial(adapter_option, expose=expose)
    return click.option("--adapter", type=click.Choice(("auto", *ADAPTER_CHOICES)), default="auto",
                        show_default=True, callback=_use_adapter, expose_value=expose,
                        help="Which DSH adapter's wire format requests are rendered in: auto takes each "
                             "request's route from the log (the provider its header names and the adapter "
                             "the log shows serving it, else --routes); any other forces that format on every "
                             "request (docs/routes.md).")(func)
