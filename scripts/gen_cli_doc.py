"""Generate docs/cli.md from the click commands' own help (``--check``: exit 1 when it is stale).

The conventions every command shares (session references, defaults, output formats, report files,
exit codes), the environment variables and shell completion come first; which command takes which
shared option is read from the commands themselves, so the lists cannot drift from the code.

tests/test_conventions.py compares :func:`render` with the file.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import click

from dsh_audit.cli import cli

DOC = Path(__file__).resolve().parent.parent / "docs" / "cli.md"

#: The console script's name (pyproject.toml ``[project.scripts]``): click's completion variable is made from it.
PROG = "dsh-audit"

#: Every environment variable dsh-audit reads, and what it sets (tests/test_people_round2.py checks
#: that each one the package names is here).
ENVIRONMENT = (
    ("DSH_HOME", "where sessions live: a command given no PATH reads `$DSH_HOME/sessions` (else "
                 "`~/.dsh/sessions`), and a session id, id prefix or `latest` is looked up there"),
    ("DSH_AUDIT_PAGER, PAGER, LESS", "the pager of a table or Markdown on a terminal (an empty value or `cat`: "
                                     "none; `LESS=FRX` when `LESS` is unset); `--no-pager` turns it off"),
    ("DSH_AUDIT_PROGRESS_DELAY", "seconds before a progress bar appears on a terminal (default `1`; `0`: at once)"),
    ("DSH_AUDIT_MAX_DECODED, DSH_AUDIT_MAX_RATIO", "the decoded-size and expansion limits that refuse a "
                                                   "decompression bomb (`docs/hostile-inputs.md`)"),
    ("DSH_AUDIT_PROFILE", "the DSH profile whose route layers are read (`--profile`)"),
    ("DSH_AUDIT_ADAPTER", "the wire format forced on every request a command renders (`--adapter`, which sets it "
                          "for the command; unset or `auto`: each request's route from the log)"),
    ("DSH_AUDIT_ATTACHMENTS", "the attachment store image requests are rendered from (`--attachments`)"),
    ("DSH_AUDIT_NO_CAPTURE", "set (not `0`): no capture is looked for beside a log (`--no-capture`, which sets it "
                             "for the command; `--capture` still gives one)"),
    ("DSH_AUDIT_REDACT_SALT", "`redact --salt`"),
    ("DSH_AUDIT_<COMMAND>_<OPTION>", "any option's default: OPTION is its long option without `--`, upper case, "
                                     "dashes as underscores (`check --policy`: `DSH_AUDIT_CHECK_POLICY`), as each "
                                     "command's help shows it; e.g. `DSH_AUDIT_USAGE_BY=day`, "
                                     "`DSH_AUDIT_REQUESTS_FORMAT=csv`; a flag takes `1`/`true`/`yes`/`on` or "
                                     "`0`/`false`/`no`/`off` (`DSH_AUDIT_REQUESTS_PAGER=0` is `--no-pager`). The older "
                                     "spelling after the option's Python parameter (`DSH_AUDIT_CHECK_POLICY_PATH`) is "
                                     "still read, after the new one. The option typed on the command line wins over "
                                     "a variable, also over one that asks for something else "
                                     "(`DSH_AUDIT_CHECK_JSON` set to `1` with `--format csv`: CSV); two such variables are an "
                                     "error naming both, and an error about a value read from a variable names it "
                                     "(an `xml` in `DSH_AUDIT_CHECK_FORMAT`: `DSH_AUDIT_CHECK_FORMAT=xml: ...`). Any other "
                                     "`DSH_AUDIT_` variable is named in "
                                     "a warning, with the closest one it may have meant"),
    ("DSH_AUDIT_TRACEBACK", "set: an unexpected error (exit `3`) shows its traceback instead of one line"),
    ("DSH_AUDIT_SLOW, DSH_AUDIT_HYPOTHESIS_PROFILE", "the test suite's (`tests/README.md`): the commands leave "
                                                     "them alone"),
    ("GITHUB_STEP_SUMMARY", "`check` appends its Markdown summary to this file"),
    ("COLUMNS", "the width of tables and wrapped lines when stdout is not a terminal (default 200)"),
)


def _names(items: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``: command names in backquotes."""
    quoted = [f"`{item}`" for item in items]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def conventions(commands: dict[str, click.Command]) -> str:
    """The ``Conventions`` section: what every command shares, with the commands that take each
    shared option read from their parameters."""

    def having(test: Callable[[click.Parameter], bool]) -> list[str]:
        return [name for name, command in commands.items() if any(test(p) for p in command.params)]

    def option(flag: str, *, shown: bool | None = None) -> Callable[[click.Parameter], bool]:
        """A test for the option ``flag``; ``shown``: only where its help lists it (True) or hides it (False)."""
        return lambda p: (isinstance(p, click.Option) and flag in (*p.opts, *p.secondary_opts)
                          and (shown is None or p.hidden is not shown))

    def argument(name: str, *, many: bool = False, required: bool = False) -> Callable[[click.Parameter], bool]:
        return lambda p: (isinstance(p, click.Argument) and p.name == name and (p.nargs == -1) == many
                          and p.required == required)

    many = having(argument("paths", many=True))
    optional = having(argument("path"))
    one = having(argument("path", required=True))
    referenced = [*many, *optional, *one]
    windowed = [name for name in having(option("--since")) if name in having(option("--until"))]
    since_only = [name for name in having(option("--since")) if name not in windowed]
    files = [f"`{name} {next(o for o in p.opts if o.startswith('--'))}`" for name, command in commands.items()
             for p in command.params if isinstance(p, click.Option) and "'-' writes it to stdout" in (p.help or "")]
    lines = [
        "## Conventions\n",
        "Every command follows these; `README.md` says why, and `tests/test_conventions.py`, "
        "`tests/test_cli_conventions.py` and `tests/test_conventions_round2.py` hold them.\n",
        "- **PATH.** A log file (`session.jsonl`, `session.jsonl.zstd`, `session.vN.jsonl[.zstd]`), a session "
        "folder or a sessions root (every log below it is found, the generation DSH would read is picked, and a "
        "session also found as a copy is read once). " + _names(referenced) + " also take a session reference: "
        "`latest` (the session `dsh-audit sessions` lists first), a session id, or a unique prefix of one (with or "
        "without its `session-`), looked up under `$DSH_HOME/sessions` (else `~/.dsh/sessions`). A path that "
        "exists always wins over an id, and a name with a `/` or a log's or capture's suffix is a path, unless no "
        "such path exists and it is a session's id as `sessions` shows it (`../../etc`, `session-a\\u001b`: an "
        "escaped character typed back); one that names two sessions so (typed as it is, and with its escapes read "
        "back) is an error naming both, as is a prefix that fits several sessions, naming up to five (exit `2`).",
        "- **No PATH.** " + _names(many + optional) + " read `$DSH_HOME/sessions` (else `~/.dsh/sessions`) when "
        "given none. " + _names(one) + " read one session and need it named (a folder must hold exactly one log).",
        "- **Order.** `requests`, `breaks`, `cache` and `check` (its table and every report of the run) list logs "
        "newest first by the log file's modification time when no PATH is given (equal ones by path; ordering "
        "reads no log), else the PATHS in the order given, each one's logs by path: a folder's own logs first, then "
        "each subfolder's in turn, names in the byte order of the file names (`LC_ALL=C ls`'s; no Unicode "
        "normalisation). `sessions` and `usage`'s rows "
        "of sessions, which read every log before they list, order by the last of each log's own timestamps "
        "(equal ones by path); `--sort cost` puts the costliest first (on `stats`' session ranking too).",
        "- **Time window.** `--since/--until WHEN` (" + _names(windowed)
        + ("; " + _names(since_only) + ": `--since` only" if since_only else "") + ") "
        "select by the logs' own timestamps: a date, `today` or `yesterday` (UTC days), a date-time "
        "(UTC unless it has an offset) or an age such as `24h` or `7d`; `--since` at or after `--until` is a usage "
        "error. A listing of sessions keeps the sessions active in the window, each whole; `usage` and `stats` sum "
        "only the requests sent in it (each command's `--help` says which).",
        "- **JSON.** `--json` (" + _names(having(option("--json"))) + ") prints JSON on stdout: one object per "
        "line (`check`: its JSON report on one line; `--json-report -` writes it indented).",
        "- **Formats.** `--format table|json|csv|markdown` (" + _names(having(option("--format"))) + "): `json` is "
        "what `--json` prints; `csv` is RFC 4180 with a header row and every column, each row led by a `table` "
        "column naming its table, tables apart by a blank line, a count or amount plain (money to the "
        "nano-dollar, as `--json` gives it), an unknown one (`?`, `$?`) an empty cell, and a text a spreadsheet "
        "would read as a formula led by `'`; `markdown` is a heading and a GitHub table per table, log text "
        "escaped.",
        "- **Tables.** A table fits the terminal (piped: `COLUMNS`, else 200 columns) without splitting a number, "
        "a date or an id: a narrow terminal leaves out a column with no value, then each command's lesser columns "
        "(the caption names them), and a run's tables share one style (boxed, or borderless when narrow). A "
        "line beside a table wraps at spaces; a log's path in it is never cut nor folded at a `/`: wider than the "
        "terminal, it stands whole on a line of its own (the terminal wraps it, and copies it whole), and so does "
        "a command to copy (`redact`'s `dsh-audit check ...`).",
        "- **Pager.** On a terminal, a table or Markdown goes through `$DSH_AUDIT_PAGER`, else `$PAGER`, else "
        "`less` (" + _names(having(option("--pager", shown=True))) + "; `--no-pager` prints directly). Output to a "
        "pipe or a file is never paged. " + _names(having(option("--pager", shown=False))) + " print no listing "
        "and never page: they accept `--pager/--no-pager` (a script may pass `--no-pager` to every command), "
        "and their help leaves it out.",
        "- **Report files.** " + ", ".join(files) + " write to stdout when FILE is `-`, and then nothing else "
        "goes to stdout; two outputs cannot both be `-`, nor name the same file (`--markdown` may name "
        "`$GITHUB_STEP_SUMMARY`: it is written once). An output never overwrites an input log.",
        "- **Parallel runs.** `--jobs N` (" + _names(having(option("--jobs"))) + ") and `--engine dask` ("
        + _names(having(option("--engine"))) + ") print what a serial run prints.",
        "- **Messages.** stdout carries the listing; warnings, notes and errors go to stderr as one line each "
        "(`warning:`, `note:`, `error: PATH: ... (hint: ...)`), log text escaped; on a terminal a warning or "
        "note wider than it is wrapped at spaces (a path never cut), an error never.",
        "- **Exit codes.** `0` clean, `1` findings that fail (`check`, `validate`, `diff`, `breaks`, `cache`, "
        "`redact`), `2` bad input or usage (and a gate, `check` or `validate`, given nothing to check), `3` an "
        "unexpected error (one line; `DSH_AUDIT_TRACEBACK=1` shows the traceback), `130` interrupted. A "
        "describing command given an empty folder or window lists nothing, says why in a note and exits `0`.",
        "",
    ]
    return "\n".join(lines)


def environment() -> str:
    """The ``Environment variables`` and ``Shell completion`` sections."""
    variable = "_" + PROG.replace("-", "_").upper() + "_COMPLETE"
    rows = ["| variable | what it sets |", "|---|---|"]
    rows += [f"| {', '.join(f'`{name}`' for name in names.split(', '))} | {text} |" for names, text in ENVIRONMENT]
    return "\n".join([
        "## Environment variables\n",
        *rows,
        "",
        "## Shell completion\n",
        "Commands, options and choices complete in bash, zsh and fish (click's completion):\n",
        "```sh",
        f'eval "$({variable}=bash_source {PROG})"   # in ~/.bashrc',
        f'eval "$({variable}=zsh_source {PROG})"    # in ~/.zshrc',
        f"{variable}=fish_source {PROG} | source    # in ~/.config/fish/completions/{PROG}.fish",
        "```\n",
    ])


def render() -> str:
    parts = ["# Command reference\n",
             "Generated from the commands' own help by `python scripts/gen_cli_doc.py`; "
             "`tests/test_conventions.py` fails when it is out of date.\n"]
    settings = {k: v for k, v in cli.context_settings.items() if k != "auto_envvar_prefix"}
    # The commands' own context class: its help formatter wraps only at whitespace, as --help does.
    context = cli.context_class(cli, info_name=PROG, terminal_width=100, max_content_width=100, **settings)
    commands: dict[str, click.Command] = {}
    for name in cli.list_commands(context):
        command = cli.get_command(context, name)
        assert command is not None, name
        commands[name] = command
    parts.append(conventions(commands))
    parts.append(environment())
    # A context's get_help, as --help calls it: it shows each option's environment variable.
    parts.append(f"## {PROG}\n\n```text\n" + context.get_help().rstrip() + "\n```\n")
    for name, command in commands.items():
        sub = command.context_class(command, info_name=name, parent=context,
                                    terminal_width=100, max_content_width=100, **settings)
        parts.append(f"## {PROG} {name}\n\n```text\n" + sub.get_help().rstrip() + "\n```\n")
    return "\n".join(parts)


def main() -> int:
    text = render()
    if "--check" in sys.argv:
        if not DOC.exists() or DOC.read_text() != text:
            print(f"{DOC} is out of date: run python scripts/gen_cli_doc.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
