"""Generate docs/cli.md from the click commands' own help (``--check``: exit 1 when it is stale).

tests/test_conventions.py compares :func:`render` with the file.
"""

from __future__ import annotations

import sys
from pathlib import Path

from dsh_audit.cli import cli

DOC = Path(__file__).resolve().parent.parent / "docs" / "cli.md"


def render() -> str:
    parts = ["# Command reference\n",
             "Generated from the commands' own help by `python scripts/gen_cli_doc.py`; "
             "`tests/test_conventions.py` fails when it is out of date.\n"]
    settings = {k: v for k, v in cli.context_settings.items() if k != "auto_envvar_prefix"}
    # The commands' own context class: its help formatter wraps only at whitespace, as --help does.
    context = cli.context_class(cli, info_name="dsh-audit", terminal_width=100, max_content_width=100, **settings)
    parts.append("## dsh-audit\n\n```text\n" + cli.get_help(context).rstrip() + "\n```\n")
    for name in cli.list_commands(context):
        command = cli.get_command(context, name)
        assert command is not None, name
        sub = command.context_class(command, info_name=name, parent=context,
                                    terminal_width=100, max_content_width=100, **settings)
        parts.append(f"## dsh-audit {name}\n\n```text\n" + command.get_help(sub).rstrip() + "\n```\n")
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
