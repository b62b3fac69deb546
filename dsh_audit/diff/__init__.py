"""Comparing two request bodies: a byte verdict, then a structural diff with JSON paths.

Verdicts:

- ``identical``: the same bytes.
- ``equivalent``: different bytes, the same JSON value as JavaScript sees it (numbers compare as
  doubles, so ``1.0`` equals ``1``; ``true`` never equals ``1``). The reasons are named:
  ``key order``, ``whitespace``, ``number spelling``, ``string escaping``, each with the paths
  where it happens. Equivalent bodies still differ byte for byte, so they do not share a
  provider's prefix cache past the first differing byte.
- ``different``: a different JSON value (or a body that is not JSON).

Structure: arrays are aligned by content (``difflib`` over each element's ``JSON.stringify``),
so a removed message is one ``removed`` difference, not a shift of every later message, and an
element found on both sides at other places is ``moved``. The aligned element pairs are compared
with deepdiff. deepdiff ignores object key order, so key order is checked separately and
reported as ``key order`` differences too.

Example:
    >>> diff_bodies(b'{"a":1}', b'{"a":1.0}').equivalence
    ('number spelling',)
"""

from ._bodies import diff_bodies
from ._model import VERDICTS, BodyDiff, Difference, format_path
from ._said import captures_said, requests_said

__all__ = ["BodyDiff", "Difference", "VERDICTS", "captures_said", "diff_bodies", "format_path", "requests_said"]
