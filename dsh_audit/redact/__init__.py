"""Redaction: share a session log that holds no secrets and no content, yet proves every break.

:func:`redact` replaces every user, assistant, reasoning and tool text, tool arguments and
results, file paths and the system prompt by deterministic, salted placeholders of the same
lengths (UTF-8 bytes and JSON escaping), so every prefix relation, break, cache verdict and
capture diff of the log stays what it was; secrets go even from the parts kept. A manifest
beside the output records a digest of those verdicts, and :func:`check_bundle` re-derives them.
See ``docs/redact.md``.

Example:
    >>> from dsh_audit.redact import Placeholders
    >>> p = Placeholders(b"salt")
    >>> p.text("same") == p.text("same") != p.text("diff")
    True
"""

from ._placeholder import Placeholders
from ._bundle import BundleCheck, check_bundle
from ._family import cause_hint, family_hint
from ._manifest import manifest_path, routes_path
from ._redact import Redaction, redact
from ._keys import CONTENT_KEYS, HEADER_KEYS, KEEP_CHOICES, PATH_KEYS, STRUCTURAL_KEYS
from ._redactor import Redactor
from ._patterns import SECRET_KINDS
from ._secrets import SecretMatch, find_secrets, scrub
from ._verdicts import CATEGORIES, session_verdicts

__all__ = [
    "BundleCheck",
    "CATEGORIES",
    "CONTENT_KEYS",
    "HEADER_KEYS",
    "KEEP_CHOICES",
    "PATH_KEYS",
    "Placeholders",
    "Redaction",
    "Redactor",
    "SECRET_KINDS",
    "STRUCTURAL_KEYS",
    "SecretMatch",
    "cause_hint",
    "check_bundle",
    "family_hint",
    "find_secrets",
    "manifest_path",
    "redact",
    "routes_path",
    "scrub",
    "session_verdicts",
]
