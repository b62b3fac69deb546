"""Secrets that always go, even from the parts a redaction keeps: a small, documented pattern set.

No maintained detector fits: ``detect-secrets`` (the best-known pure-Python one) scans lines of
files through process-wide settings, reports values without their offsets and flags every
high-entropy id (message ids, call ids and digests fill a DSH log). These patterns are the
provider formats those tools also know, plus ``Authorization`` values, private key blocks and
``.env``-style assignments of names that say key, token, secret or password. Each match is
replaced by a placeholder of the same lengths; only the kind is ever reported.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

__all__ = ["SECRET_KINDS", "SecretMatch", "context_key", "find_secrets", "private_key_closed", "scrub"]

_KEYWORDS = r"api[_-]?key|apikey|secret|token|passw(?:or)?d|passwd|pwd|credential|private[_-]?key|access[_-]?key"
_NAME = r"[A-Za-z0-9_.-]*(?:" + _KEYWORDS + r")[A-Za-z0-9_.-]*"

# kind -> pattern; the ``v`` group (or the whole match) is the secret.
_PATTERNS: dict[str, str] = {
    "private_key": r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?P<v>.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    "anthropic_api_key": r"\bsk-ant-[A-Za-z0-9_-]{20,}",
    "openai_api_key": r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
    "aws_access_key_id": r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b",
    "github_token": r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})",
    "gitlab_token": r"\bglpat-[A-Za-z0-9_-]{20,}",
    "google_api_key": r"\bAIza[0-9A-Za-z_-]{35}",
    "slack_token": r"\bxox[abposr]-[0-9A-Za-z-]{10,}",
    "stripe_key": r"\b[sr]k_(?:live|test)_[0-9A-Za-z]{16,}",
    "huggingface_token": r"\bhf_[A-Za-z0-9]{30,}",
    "npm_token": r"\bnpm_[A-Za-z0-9]{36}",
    "jwt": r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
    "authorization": r"(?i)\b(?:proxy-)?authorization\b[\"']?\s*[:=]\s*[\"']?(?P<v>(?:(?:bearer|basic|token|digest)\s+)?[^\s\"',;]{6,})",
    "env_assignment": r"(?im)^[ \t]*(?:export[ \t]+)?" + _NAME + r"=[\"']?(?P<v>[^\s\"'#()]{4,})",
    "key_value": r"(?i)[\"']" + _NAME + r"[\"']\s*:\s*[\"'](?P<v>[^\"'\s]{6,})[\"']",
    # a credential in a URL's query string (``?api_key=...``, ``&access_token=...``)
    "url_parameter": r"(?i)[?&]" + _NAME + r"=(?P<v>[^&#\s\"'<>\\]{4,})",
}

#: The kinds of secret a summary can name.
SECRET_KINDS = tuple(_PATTERNS)

_COMPILED = [(kind, re.compile(pattern, re.S if kind == "private_key" else 0)) for kind, pattern in _PATTERNS.items()]

# What an object key must hold for a pattern to read its value as a secret beside it (``authorization``,
# ``key_value``): a key without it gives its value no context (:func:`context_key`).
_CONTEXT_KEY = re.compile(r"(?i)authorization|" + _KEYWORDS)


@dataclass(frozen=True, slots=True)
class SecretMatch:
    """One secret found in a text: its kind and its span (the value is never kept)."""

    kind: str
    start: int
    end: int


def find_secrets(text: str) -> Iterator[SecretMatch]:
    """Every secret in ``text``, in order, without overlaps (an earlier kind in
    :data:`SECRET_KINDS` wins a tie).

    Example:
        >>> [m.kind for m in find_secrets("export OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwx")]
        ['openai_api_key']
    """
    if len(text) < 8:
        return
    found: list[SecretMatch] = []
    for kind, pattern in _COMPILED:
        for match in pattern.finditer(text):
            start, end = match.span("v") if "v" in pattern.groupindex and match.group("v") is not None else match.span()
            if end > start and not any(s < end and start < e for _, s, e in ((m.kind, m.start, m.end) for m in found)):
                found.append(SecretMatch(kind, start, end))
    yield from sorted(found, key=lambda m: m.start)


def context_key(key: str) -> bool:
    """Whether an object key can make its value a secret (``"api_key": "..."``, ``"Authorization":
    "Bearer ..."``): only such a key's members are looked at as a whole (see
    :func:`dsh_audit.redact._placeholder.context_secrets`).

    Example:
        >>> context_key("OPENAI_API_KEY"), context_key("Proxy-Authorization"), context_key("command")
        (True, True, False)
    """
    return _CONTEXT_KEY.search(key) is not None


def private_key_closed(text: str, match: SecretMatch) -> bool:
    """Whether ``match``, a ``private_key`` match in ``text``, ends at its ``-----END`` line (not at the
    end of the text): only the pattern's END alternative leaves the text there."""
    return match.kind == "private_key" and text.startswith("-----END", match.end)


def scrub(text: str, replace: Callable[[str], str], found: Callable[[str], None] | None = None) -> str:
    """``text`` with every secret replaced by ``replace(secret)``; ``found(kind)`` is told of each."""
    matches = list(find_secrets(text))
    if not matches:
        return text
    out, last = [], 0
    for match in matches:
        if found is not None:
            found(match.kind)
        out.append(text[last:match.start])
        out.append(replace(text[match.start:match.end]))
        last = match.end
    out.append(text[last:])
    return "".join(out)
