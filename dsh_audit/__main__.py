"""``python -m dsh_audit``: the ``dsh-audit`` console script."""

import sys

try:
    from .cli import main
except KeyboardInterrupt:  # Ctrl-C while the program is still starting: the same exit as later
    sys.stderr.write("aborted\n")
    sys.exit(130)

main()
