"""Secrets that always go, even from the parts a redaction keeps: a small, documented pattern set.

No maintained detector fits: ``detect-secrets`` (the best-known pure-Python one) scans lines of
files through process-wide settings, reports values without their offsets and flags every
high-entropy id (message ids, call ids and digests fill a DSH log). These patterns are the
provider formats those tools also know (each with a prefix or a shape no id or digest has: a
bare hex hash, a UUID, a git SHA or base64 image data is no secret), plus ``Authorization``,
``Bearer`` and ``Cookie`` values, private key blocks and ``.env``-style assignments of names that
say key, token, secret or password, and the password of a URL (``postgres://admin:...@db``). A key of a
provider's prefix is found after anything but a letter or a digit (``MY_TOKEN_sk-...``: :data:`_AFTER`),
and a text that holds percent-encoded characters is read decoded too (``%3Dsk-...``: :func:`_search`).
Each match is replaced by a placeholder of the same lengths;
only the kind is ever reported. A pattern runs only on a text that holds one of its anchors
(:data:`_ANCHORS`, found at C speed), with the same matches as every pattern run on every text.

A private key block runs from its ``-----BEGIN ... PRIVATE KEY-----`` line to its END line, or to
the end of the text when none follows. Split over several strings (the lines of a key as a JSON
array, two content blocks, a truncated key whose body is in the next string, streamed chunks
quoted as a JSON array), the strings after its header that read as key body (:func:`key_body`:
base64 lines, PEM header lines) continue it: :func:`private_key_open` tells a text that leaves a
block open. Its BEGIN line may itself be cut over any number of consecutive strings
(:func:`split_tail`, :func:`split_private_key`), and so may its END line: the strings up to an END
line, whole or cut, that read as pieces of a key (:func:`key_end`) are its body, however short.

Some values are secrets by the name they are found under alone, whatever their shape: a captured
HTTP header, cookie or query parameter named ``Authorization``, ``Cookie``, ``x-api-key``,
``api_key``, ``token``, ``password``... (:func:`header_kind`, :func:`credential_name`).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

__all__ = ["CONTEXT_KINDS", "SECRET_KINDS", "SecretMatch", "context_key", "cookie_secret", "credential_name",
           "cut_secrets", "find_secrets", "header_kind", "key_body", "key_end", "key_piece", "key_start",
           "private_key_closed", "private_key_cut", "private_key_end", "private_key_open", "scrub",
           "split_private_key", "split_tail"]

_KEYWORDS = r"api[_-]?key|apikey|secret|token|passw(?:or)?d|passwd|pwd|credential|private[_-]?key|access[_-]?key"
_NAME = r"[A-Za-z0-9_.-]*(?:" + _KEYWORDS + r")[A-Za-z0-9_.-]*"
# what else names a credential in an environment variable (``OPENAI_KEY``, ``DB_PASS``; upper case only:
# ``prompt_cache_key`` and ``monkey`` are no secrets) and in a URL's query string (``?key=``, ``&sig=``)
_ENV_NAME = r"(?-i:[A-Z0-9_]*_(?:KEY|PASS|PW|AUTH))"
_URL_NAME = r"key|auth|sig|[A-Za-z0-9_.-]*signature"
# a name that ends with a credential word (``MISTRAL_API_KEY``, ``auth_token``, ``client_secret``, ``x-api-key``;
# not ``max_tokens``, ``tokenizer`` or ``secret_name``), whose value is a secret in any assignment syntax
_CREDENTIAL = (r"(?<![A-Za-z0-9_.-])(?:(?:[A-Za-z0-9_.-]*[_.-])?(?:" + _KEYWORDS + r"|pass|pw)|" + _ENV_NAME + r")")
# a value of 8 characters or more with a letter and a digit (``os.environ``, ``get_key()``, ``64000``, ``${KEY}``,
# ``<your key>`` are none)
# (the letter and the digit are looked for in the value itself, lazily: a lookahead over every character
# up to a space would read the rest of a long text of ``\n`` escapes at each assignment in it, quadratic)
_VALUE_CHARS = r"[A-Za-z0-9_./+=~:@!%*^-]"
_VALUE = (r"(?P<v>(?=" + _VALUE_CHARS + r"*?[0-9])(?=" + _VALUE_CHARS + r"*?[A-Za-z])" + _VALUE_CHARS + r"{8,})(?!"
          + _VALUE_CHARS + r")")
# What may come right before a key of a provider's prefix (``sk-``, ``ghp_``, ``AKIA``...): anything but a letter or
# a digit (``task-0123...`` and ``disk-...`` hold no ``sk-`` key: a key glued to the word before it cannot be told
# from a longer token), so an underscore, a dash, a dot or a space may (``MY_TOKEN_sk-proj-...``, ``glob_ghp_...``), and
# so may the letter of a backslash escape written out (``"\\nghp_..."`` in text that is not JSON). A percent-encoded
# character before it (``%3Dsk-...``, ``Bearer%20sk-...``) is read decoded (:func:`_decode`).
_AFTER = r"(?:(?<![^\W_])|(?<=\\[nrt]))"
_PEM_BEGIN = r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
_PEM_END = r"-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"

# kind -> pattern; the ``v`` group (or the whole match) is the secret. Order matters: where two
# kinds match the same characters, the earlier one is reported (:func:`find_secrets`).
_PATTERNS: dict[str, str] = {
    "private_key": _PEM_BEGIN + r"(?P<v>.*?)(?:" + _PEM_END + r"|\Z)",
    "anthropic_api_key": _AFTER + r"sk-ant-[A-Za-z0-9_-]{20,}",
    # DeepSeek: ``sk-`` and 32 lower-case hex digits (before OpenAI's, whose pattern matches it too)
    "deepseek_api_key": _AFTER + r"sk-[0-9a-f]{32}(?![A-Za-z0-9_-])",
    "openai_api_key": _AFTER + r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
    "aws_access_key_id": _AFTER + r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b",
    # an AWS secret access key, 40 base64 characters, in an assignment of any syntax (``.env``,
    # ``~/.aws/credentials``' ``name = value``, YAML, JSON)
    "aws_secret_access_key": r"(?i)" + _AFTER + r"aws_?secret_?access_?key[\"']?[ \t]*[:=][ \t]*[\"']?"
                             r"(?P<v>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
    "github_token": _AFTER + r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})",
    # personal, deploy, runner, pipeline trigger, feed, CI job, OAuth app and incoming mail tokens
    "gitlab_token": _AFTER + r"gl(?:pat|dt|rt|ptt|ft|cbt|oas|imt)-[A-Za-z0-9_.-]{20,}",
    "google_api_key": _AFTER + r"AIza[0-9A-Za-z_-]{35}",
    # an OAuth access token and a client secret
    "google_oauth_token": _AFTER + r"(?:ya29\.[0-9A-Za-z_-]{20,}|GOCSPX-[0-9A-Za-z_-]{20,})",
    "slack_token": _AFTER + r"xox(?:[abposr]|e(?:\.xox[bp])?)-[0-9A-Za-z-]{10,}",
    "slack_webhook": r"\bhooks\.slack\.com/(?:services|workflows)/(?P<v>[A-Za-z0-9_/-]{20,})",
    "stripe_key": _AFTER + r"(?:[sr]k_(?:live|test)_[0-9A-Za-z]{16,}|whsec_[0-9A-Za-z]{24,})",
    "huggingface_token": _AFTER + r"hf_[A-Za-z0-9]{30,}",
    "npm_token": _AFTER + r"npm_[A-Za-z0-9]{36}",
    "pypi_token": _AFTER + r"pypi-AgE[A-Za-z0-9_-]{32,}",
    "groq_api_key": _AFTER + r"gsk_[A-Za-z0-9]{40,}",
    "xai_api_key": _AFTER + r"xai-[A-Za-z0-9]{40,}",
    # Twilio API key (``SK``) and account (``AC``) SIDs: two letters and 32 lower-case hex digits
    "twilio_key": _AFTER + r"(?:SK|AC)[0-9a-f]{32}(?![A-Za-z0-9_-])",
    # Databricks personal access tokens (``dapi``, 32 hex digits, an optional ``-N``)
    "databricks_token": _AFTER + r"dapi[0-9a-f]{32}(?:-[0-9])?(?![A-Za-z0-9_-])",
    "sendgrid_api_key": _AFTER + r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])",
    # a bot's id, a colon and its 35-character secret (which starts ``AA``)
    "telegram_bot_token": r"(?<![0-9])[0-9]{8,10}:(?P<v>AA[A-Za-z0-9_-]{33})(?![A-Za-z0-9_-])",
    # Azure keys (Cognitive Services, Azure OpenAI, API Management): 32 hex digits beside the header
    # that carries them
    "azure_api_key": r"(?i)\b(?:api-key|ocp-apim-subscription-key)[\"']?[ \t]*[:=][ \t]*[\"']?"
                     r"(?P<v>[0-9a-f]{32})(?![A-Za-z0-9_-])",
    "jwt": _AFTER + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
    "authorization": r"(?i)\b(?:proxy-)?authorization\b[\"']?\s*[:=]\s*[\"']?(?P<v>(?:(?:bearer|basic|token|digest)\s+)?[^\s\"',;]{6,})",
    # a bearer token outside an ``Authorization`` header (``-H "Bearer ..."``, a token in prose): 16
    # characters or more, a digit among them, so ``Bearer authentication`` is no secret
    "bearer_token": r"\b[Bb]earer[ \t]+(?P<v>(?=[A-Za-z0-9._~+/-]*[0-9])[A-Za-z0-9._~+/-]{16,}=*)",
    # a ``Cookie`` or ``Set-Cookie`` header's value (a session, whatever its cookies' names)
    "cookie": r"(?i)\b(?:set-)?cookie[\"']?[ \t]*:[ \t]*[\"']?(?P<v>[^\s=;,:\"']+=[^\r\n\"']{2,})",
    # (a value that is a variable's reference, ``$API_KEY`` or ``${API_KEY}``, is none)
    "env_assignment": r"(?im)^[ \t]*(?:export[ \t]+)?(?:" + _NAME + "|" + _ENV_NAME
                      + r")=[\"']?(?P<v>(?!\$)[^\s\"'#()]{4,})",
    "key_value": r"(?i)[\"']" + _NAME + r"[\"']\s*:\s*[\"'](?P<v>(?!\$\{)[^\"'\s]{6,})[\"']",
    # a credential in a URL's query string (``?api_key=...``, ``&access_token=...``, ``?key=...``)
    "url_parameter": r"(?i)[?&](?:" + _NAME + "|" + _URL_NAME + r")=(?P<v>[^&#\s\"'<>\\]{4,})",
    # a prefix-less key (Mistral's 32 characters, a Twilio auth token, a password) under a credential name
    # in any other syntax: inline ``-e MISTRAL_API_KEY=...``, YAML ``api_key: ...``, a keyword argument
    # ``api_key='...'``, ``os.environ["API_KEY"] = "..."``, a header ``x-api-key: ...``
    "credential_assignment": r"(?i)" + _CREDENTIAL + r"[\"']?\]?[ \t]*[:=][ \t]*[\"']?" + _VALUE,
    # the password of a URL's user information (``postgres://admin:...@db``, ``https://bob:...@git``, ``redis://:...@``):
    # the scheme, the user and the host stay. Not a reference or a mask (``${DB_PASS}``, ``$PASS``, ``{password}``,
    # ``%s``, ``<password>``, ``****``, ``xxxx``) nor the words ``password``, ``pass``, ``passwd``, ``pwd``, ``secret``
    # that stand for one in examples. (Last: a kind that also covers the URL, ``DB_PASSWORD=postgres://...``, wins.)
    "url_credentials": r"(?<=[A-Za-z0-9+.-])://[^\s/?#@:\"'<>\\]*:(?P<v>(?![$*{<]|%[s(]|x+@|(?i:pass(?:wo?r?d)?|pwd|secret)@)"
                       r"[^\s/?#\"'<>\\]+)@(?=[^\s/?#@\"'<>\\])",
}

#: The kinds of secret a summary can name.
SECRET_KINDS = tuple(_PATTERNS)

#: The kinds found by a name beside the value, not by the value's own shape: a value that is a
#: secret by its own name (:meth:`dsh_audit.redact.Redactor.named`) counts as that name says instead.
CONTEXT_KINDS = frozenset({"authorization", "bearer_token", "cookie", "env_assignment", "key_value", "url_parameter",
                           "azure_api_key", "credential_assignment"})

_COMPILED = [(kind, re.compile(pattern, re.S if kind == "private_key" else 0)) for kind, pattern in _PATTERNS.items()]

# What every match of a kind's pattern holds (one of these literals at least), and how far before the
# first of them in a text a match can start; None for a pattern that ignores case, whose anchors are
# looked for in the text folded to lower case (:func:`_fold`; each of those needs a ``:`` or ``=``,
# and may start anywhere before its anchor). A text without them is not searched with the pattern
# (:func:`find_secrets`): most strings of a log hold none, and ``str.find`` reads a text at C speed
# where a pattern starting with ``\b`` tries every position.
_NAMED = ("key", "secret", "token", "pass", "pw", "credential")  # in every name _KEYWORDS matches
_ANCHORS: dict[str, tuple[tuple[str, ...], int | None]] = {
    "private_key": (("-----BEGIN ",), 0),
    "anthropic_api_key": (("sk-ant-",), 0),
    "deepseek_api_key": (("sk-",), 0),
    "openai_api_key": (("sk-",), 0),
    "aws_access_key_id": (("AKIA", "ASIA", "ABIA", "ACCA"), 0),
    "aws_secret_access_key": (("aws",), None),
    "github_token": (("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), 0),
    "gitlab_token": (("glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glcbt-", "gloas-", "glimt-"), 0),
    "google_api_key": (("AIza",), 0),
    "google_oauth_token": (("ya29.", "GOCSPX-"), 0),
    "slack_token": (("xox",), 0),
    "slack_webhook": (("hooks.slack.com/",), 0),
    "stripe_key": (("sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_"), 0),
    "huggingface_token": (("hf_",), 0),
    "npm_token": (("npm_",), 0),
    "pypi_token": (("pypi-AgE",), 0),
    "groq_api_key": (("gsk_",), 0),
    "xai_api_key": (("xai-",), 0),
    "twilio_key": (("SK", "AC"), 0),
    "databricks_token": (("dapi",), 0),
    "sendgrid_api_key": (("SG.",), 0),
    "telegram_bot_token": ((":AA",), 10),  # after the bot's id, up to 10 digits
    "azure_api_key": (("api-key", "ocp-apim"), None),
    "jwt": (("eyJ",), 0),
    "authorization": (("authorization",), None),
    "bearer_token": (("earer",), 1),  # after its ``B`` or ``b``
    "cookie": (("cookie",), None),
    "env_assignment": (_NAMED + ("auth",), None),  # ``_ENV_NAME``'s ``_AUTH`` too
    "key_value": (_NAMED, None),
    "url_parameter": (_NAMED + ("auth", "sig"), None),
    "credential_assignment": (_NAMED + ("auth",), None),
    "url_credentials": (("://",), 0),
}
_GATED = [(kind, pattern, *_ANCHORS[kind]) for kind, pattern in _COMPILED]
_GATED_KEYLESS = [gated for gated in _GATED if gated[0] != "private_key"]
# any anchor of a pattern that heeds case (the longest first)
_ANY_ANCHOR = re.compile("|".join(re.escape(anchor) for anchor in sorted(
    {anchor for anchors, before in _ANCHORS.values() if before is not None for anchor in anchors},
    key=lambda anchor: (-len(anchor), anchor))))
# the characters other than ASCII ones that ``re`` reads as an ASCII letter when it ignores case (the
# Kelvin sign, a long s, a dotless i and a dotted capital I, whose lower case is two characters)
_FOLD = {0x212A: "k", 0x17F: "s", 0x131: "i", 0x130: "i"}

# What an object key must hold for a pattern to read its value as a secret beside it (``authorization``,
# ``cookie``, ``key_value``): a key without it gives its value no context (:func:`context_key`).
_CONTEXT_KEY = re.compile(r"(?i)authorization|cookie|" + _KEYWORDS)

# A name that makes a value a secret by itself (a HAR query parameter, header or form field): the
# keywords above, or ``key``, ``auth``, ``sig``, ``signature``... as a whole word of it. (Not
# ``session``: ``x-deepseek-harness-session-id`` is no secret; a cookie's name is read by itself.)
_CREDENTIAL_NAME = re.compile(r"(?i)" + _KEYWORDS + r"|authorization|signature|bearer|jwt|cookie"
                              r"|(?:^|[-_.])(?:key|auth|sig|csrf|xsrf)(?:$|[-_.])")
_SESSION_COOKIE = re.compile(r"(?i)sess|sid|auth|login|remember|identity")
_AUTHORIZATION_HEADER = re.compile(r"(?i)(?:proxy-)?authorization")
_COOKIE_HEADER = re.compile(r"(?i)(?:set-)?cookie2?")

# A percent-encoded ASCII character (``%3D``, ``%20``, ``%2F``): a URL's path or query string, a header value or a
# form body may hold a secret only decoded reads (``?next=https%3A%2F%2Fapi%3Fkey%3Dsk-...``, ``Bearer%20sk-...``,
# ``postgres%3A%2F%2Fadmin%3A...%40db``). A text is decoded again while it holds some (``%253D``), at most so often.
_PERCENT = re.compile(r"%[0-7][0-9A-Fa-f]")
_DECODINGS = 3

_BEGIN = re.compile(_PEM_BEGIN)
_END = re.compile(_PEM_END)
_BREAK = re.compile(r"\r\n|[\n\r]|\\n|\\r\\n")  # a line break, or one written as a ``\n`` escape in raw text
_MIXED = re.compile(r"(?=.*[A-Z])(?=.*[a-z])(?=.*[0-9+/]).*", re.S)
_BODY_LINE = re.compile(r"[A-Za-z0-9+/=]+|(?:Proc-Type|DEK-Info|Comment|Version|Hash)[ \t]*:[^\r\n]*")


@dataclass(frozen=True, slots=True)
class SecretMatch:
    """One secret found in a text: its kind and its span (the value is never kept)."""

    kind: str
    start: int
    end: int


def find_secrets(text: str) -> Iterator[SecretMatch]:
    """Every secret in ``text``, in order, without overlaps (an earlier kind in
    :data:`SECRET_KINDS` wins a tie).

    A pattern is run only on a text that holds one of its anchors (:data:`_ANCHORS`, found with
    ``str.find`` at C speed), from where its first match can start at the earliest: the same
    matches as every pattern run on the whole text (:func:`_full_scan`), in a fraction of the time.

    Example:
        >>> [m.kind for m in find_secrets("export OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwx")]
        ['openai_api_key']
    """
    yield from _search(text, _gated)


def _gated(text: str, whole: bool) -> list[SecretMatch]:
    """:func:`_find` with every pattern (``whole``) or every pattern but the private key's."""
    return _find(text, _GATED if whole else _GATED_KEYLESS)


def _keyless(text: str, whole: bool) -> list[SecretMatch]:
    """:func:`_find` with every pattern but the private key's, whatever ``whole`` says (strings joined:
    :func:`cut_secrets`)."""
    return _find(text, _GATED_KEYLESS)


def _search(text: str, scan: Callable[[str, bool], list[SecretMatch]]) -> list[SecretMatch]:
    """The secrets ``scan`` finds in ``text`` (``scan(text, True)``), and those it finds in ``text`` with its
    percent-encoded characters decoded (``scan(decoded, False)``: no private key block, which no URL holds)
    that overlap none of them, each as the span of ``text`` that encodes it (:func:`_decode`): in order,
    without overlaps (a secret as written wins over one only decoding shows).

    Example:
        >>> text = "GET /cb?next=https%3A%2F%2Fapi.example.com%2Fv1%3Fkey%3Dsk-proj-Ab3dEf5hIj7lMn9pQr1tUv"
        >>> [(m.kind, text[m.start:m.end]) for m in _search(text, _gated)]
        [('openai_api_key', 'sk-proj-Ab3dEf5hIj7lMn9pQr1tUv')]
        >>> text = "dsn=postgres%3A%2F%2Fadmin%3AS3cr%2540tQ7%40db"
        >>> [(m.kind, text[m.start:m.end]) for m in _search(text, _gated)]
        [('url_credentials', 'S3cr%2540tQ7')]
    """
    found = scan(text, True)
    decoding = _decode(text)
    if decoding is None:
        return found
    decoded, levels = decoding
    starts = [match.start for match in found]
    extra = []
    for match in scan(decoded, False):
        start, end = _encoded(match.start, levels), _encoded(match.end, levels)
        at = bisect.bisect_left(starts, start)
        if not ((at < len(found) and found[at].start < end) or (at > 0 and found[at - 1].end > start)):
            extra.append(SecretMatch(match.kind, start, end))
    return sorted(found + extra, key=lambda match: match.start) if extra else found


def _decode(text: str) -> tuple[str, list[list[int]]] | None:
    """``text`` with each percent-encoded ASCII character decoded (``%3D`` is ``=``; what that makes is
    decoded again while it holds some, at most :data:`_DECODINGS` times), and for each decoding the
    positions of the characters it decoded, in what it made (:func:`_encoded`); None when ``text``
    holds none. (A character outside ASCII stays encoded: no secret's pattern reads one.)

    Example:
        >>> _decode("a%3Db%253Dc"), _decode("100% sure")
        (('a=b=c', [[1, 3], [3]]), None)
    """
    if "%" not in text or _PERCENT.search(text) is None:
        return None
    levels: list[list[int]] = []
    decoded = text
    for _ in range(_DECODINGS):
        pieces: list[str] = []
        positions: list[int] = []
        at = length = 0
        for match in _PERCENT.finditer(decoded):
            pieces.append(decoded[at:match.start()])
            length += match.start() - at
            positions.append(length)
            pieces.append(chr(int(match.group()[1:], 16)))
            length += 1
            at = match.end()
        if not positions:
            break
        pieces.append(decoded[at:])
        decoded = "".join(pieces)
        levels.append(positions)
    return decoded, levels


def _encoded(index: int, levels: list[list[int]]) -> int:
    """Where the character at ``index`` of a text :func:`_decode` made starts in the text it decoded (or,
    ``index`` its length, where that text ends): each character it decoded was three.

    Example:
        >>> decoded, levels = _decode("a%3Db%253Dc")
        >>> [_encoded(index, levels) for index in range(len(decoded) + 1)]
        [0, 1, 4, 5, 10, 11]
    """
    for positions in reversed(levels):
        index += 2 * bisect.bisect_left(positions, index)
    return index


def _find(text: str, gated: list[tuple[str, re.Pattern[str], tuple[str, ...], int | None]]) -> list[SecretMatch]:
    """:func:`find_secrets` with the patterns of ``gated`` (all, or all but one kind)."""
    if len(text) < 8:
        return []
    assigns = ":" in text or "=" in text
    anchored = _ANY_ANCHOR.search(text) is not None  # one search for all: most texts hold none
    if not (assigns or anchored):
        return []
    folded = None
    runs: list[tuple[str, re.Pattern[str], int]] = []
    for kind, pattern, anchors, before in gated:
        if before is None:  # a pattern that ignores case, and needs a ``:`` or ``=``
            if not assigns:
                continue
            if folded is None:
                folded = _fold(text)
            if any(anchor in folded for anchor in anchors):
                runs.append((kind, pattern, 0))
            continue
        if not anchored:
            continue
        first = -1
        for anchor in anchors:
            at = text.find(anchor)
            if at >= 0 and (first < 0 or at < first):
                first = at
        if first >= 0:
            runs.append((kind, pattern, max(first - before, 0)))
    return _collect(text, runs)


def cut_secrets(texts: Sequence[str]) -> Iterator[tuple[SecretMatch, list[tuple[int, int, int]]]]:
    """Each secret other than a private key (whose blocks :func:`split_private_key` and
    :func:`key_end` join) that ``texts``, consecutive strings of one message or list read joined,
    hold cut over two or more of them (``"... sk-proj-Zq7Lm"``, ``"2Xv9Pw4Zq7Lm2Xv9 ..."``): its match in
    the joined text, and for each string it covers (in order) its index and the span of it there. A
    secret whole in one string is that string's own (:func:`find_secrets`). Each string is read once.

    Example:
        >>> [(m.kind, parts) for m, parts in cut_secrets(["use sk-proj-Zq7Lm2", "Xv9Pw4Zq7Lm2Xv9Pw4 now"])]
        [('openai_api_key', [(0, 4, 18), (1, 0, 18)])]
    """
    if len(texts) < 2:
        return
    starts = []
    at = 0
    for text in texts:
        starts.append(at)
        at += len(text)
    joined = "".join(texts)
    for match in _search(joined, _keyless):
        first = bisect.bisect_right(starts, match.start) - 1
        last = bisect.bisect_right(starts, match.end - 1) - 1
        if first == last:
            continue
        parts = []
        for n in range(first, last + 1):
            start, end = max(match.start - starts[n], 0), min(match.end - starts[n], len(texts[n]))
            if end > start:
                parts.append((n, start, end))
        yield match, parts


def _full_scan(text: str) -> list[SecretMatch]:
    """What :func:`find_secrets` finds, by every pattern run on the whole text (no anchors): what it
    must equal (the tests compare them)."""
    return _search(text, _every)


def _every(text: str, whole: bool) -> list[SecretMatch]:
    """Every pattern (but the private key's, unless ``whole``) run on the whole text."""
    if len(text) < 8:
        return []
    return _collect(text, [(kind, pattern, 0) for kind, pattern in _COMPILED if whole or kind != "private_key"])


def _collect(text: str, runs: Iterable[tuple[str, re.Pattern[str], int]]) -> list[SecretMatch]:
    """The matches of each pattern of ``runs`` (a kind, its pattern and where to start it), in the
    order of :data:`SECRET_KINDS`, kept in text order and without overlaps (an earlier kind wins)."""
    # the matches kept so far, in order and without overlaps: a new one is checked against its two
    # neighbours only (not against every match: a text of many secrets, a long stream, stays linear)
    found: list[SecretMatch] = []
    starts: list[int] = []
    for kind, pattern, pos in runs:
        for match in pattern.finditer(text, pos):
            start, end = match.span("v") if "v" in pattern.groupindex and match.group("v") is not None else match.span()
            at = bisect.bisect_left(starts, start)
            overlaps = (at < len(found) and found[at].start < end) or (at > 0 and found[at - 1].end > start)
            if end > start and not overlaps:
                found.insert(at, SecretMatch(kind, start, end))
                starts.insert(at, start)
    return found


def _fold(text: str) -> str:
    """``text`` in lower case, each character a pattern that ignores case reads as an ASCII letter made
    that letter (``K``, the Kelvin sign, is a ``k`` to ``re``; so are ``ſ`` an ``s``, ``ı`` and ``İ`` an
    ``i``), so an anchor of such a pattern is in the folded text wherever the pattern can match.

    Example:
        >>> _fold("API_KEY"), _fold("\u212aey ſecret")
        ('api_key', 'key secret')
    """
    return text.lower() if text.isascii() else text.translate(_FOLD).lower()


def context_key(key: str) -> bool:
    """Whether an object key can make its value a secret (``"api_key": "..."``, ``"Authorization":
    "Bearer ..."``): only such a key's members are looked at as a whole (see
    :func:`dsh_audit.redact._json_secrets.context_secrets`).

    Example:
        >>> context_key("OPENAI_API_KEY"), context_key("Proxy-Authorization"), context_key("command")
        (True, True, False)
    """
    return _CONTEXT_KEY.search(key) is not None


def private_key_closed(text: str, match: SecretMatch) -> bool:
    """Whether ``match``, a ``private_key`` match in ``text``, ends at its ``-----END`` line (not at the
    end of the text): only the pattern's END alternative leaves the text there."""
    return match.kind == "private_key" and text.startswith("-----END", match.end)


def credential_name(name: str) -> bool:
    """Whether a value found under ``name`` (a query parameter, form field, cookie or header name) is
    a secret by that name alone, whatever its shape.

    Example:
        >>> [credential_name(n) for n in ("api_key", "key", "X-Goog-Api-Key", "sig", "page", "monkey", "session-id")]
        [True, True, True, True, False, False, False]
    """
    return _CREDENTIAL_NAME.search(name) is not None


def cookie_secret(name: str) -> bool:
    """Whether a cookie named ``name`` holds a secret by its name (a session, a login, a token).

    Example:
        >>> [cookie_secret(n) for n in ("sessionid", "JSESSIONID", "connect.sid", "auth_token", "theme")]
        [True, True, True, True, False]
    """
    return credential_name(name) or _SESSION_COOKIE.search(name) is not None


def header_kind(name: str) -> str | None:
    """The kind of secret an HTTP header's value is by its name alone (None: it says nothing):
    ``authorization`` (and ``Proxy-Authorization``), ``cookie`` (``Cookie``, ``Set-Cookie``), or
    ``key_value`` for another credential name (``x-api-key``, ``anthropic-api-key``, ``x-auth-token``...).

    Example:
        >>> [header_kind(n) for n in ("Authorization", "Set-Cookie", "x-api-key", "Content-Type")]
        ['authorization', 'cookie', 'key_value', None]
    """
    if _AUTHORIZATION_HEADER.fullmatch(name):
        return "authorization"
    if _COOKIE_HEADER.fullmatch(name):
        return "cookie"
    return "key_value" if credential_name(name) else None


def key_body(text: str) -> tuple[int, bool] | None:
    """How much of ``text`` reads as the body of a private key block (base64 lines, PEM header lines
    such as ``Proc-Type:``, blank lines), up to its END line when it holds one: that length and
    whether the END line follows; None when a line before that reads as something else (prose), or
    when, without an END line, what it holds does not look like key material (base64 mixes upper and
    lower case letters with digits or ``+``/``/``, or ends in ``=`` padding: ``thanks`` and
    ``/home/dev/project`` are no key).

    Example:
        >>> key_body("MIIEabc+/=\\\\nQUJD\\n"), key_body("QUJD\\n-----END RSA PRIVATE KEY-----\\nok")
        ((17, False), (5, True))
        >>> key_body("hello world"), key_body("thanks"), key_body("/home/dev/project"), key_body("AbC="), key_body("")
        (None, None, None, (4, False), (0, False))
    """
    end = _END.search(text)
    body = text if end is None else text[:end.start()]
    material = []
    for line in _BREAK.split(body):
        line = line.strip(" \t")
        if line and _BODY_LINE.fullmatch(line) is None:
            return None
        material.append(line)
    found = "".join(material)
    if end is None and found and not (found.endswith("=") or ":" in found or _MIXED.fullmatch(found)):
        return None  # one word, a path: no key material without its END line
    return len(body), end is not None


def key_start(text: str) -> int | None:
    """Where the body of the last private key block of ``text`` starts, when no END line follows its
    BEGIN line (None: none is left open): what of it ``text`` holds, ``text[key_start(text):]``, is
    the ``v`` of its ``private_key`` match (which runs to the end of the text).

    Example:
        >>> key_start("key:\\n-----BEGIN RSA PRIVATE KEY-----\\nMIIE"), key_start("no key")
        (36, None)
    """
    last = None
    for last in _BEGIN.finditer(text):
        pass
    return None if last is None or _END.search(text, last.end()) is not None else last.end()


def private_key_open(text: str) -> int | None:
    """Where the body of a private key block that ``text`` leaves open starts: its last BEGIN line,
    with no END line after it and nothing but key body (:func:`key_body`) after that; None when
    ``text`` leaves none open. A later string that reads as key body continues that block.

    Example:
        >>> private_key_open("key:\\n-----BEGIN RSA PRIVATE KEY-----")
        36
        >>> private_key_open("-----BEGIN RSA PRIVATE KEY-----\\nab c") is None  # prose after the header
        True
    """
    last = None
    for last in _BEGIN.finditer(text):
        pass
    if last is None:
        return None
    found = key_body(text[last.end():])
    return last.end() if found is not None and not found[1] else None


#: How much of the end of the strings before one may hold the start of a BEGIN (or END) line that
#: this string ends (the longest such line is shorter).
_SPLIT = 64
_HEADER_CHARS = frozenset("-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ")
# What a piece of a private key block between its BEGIN and END lines may hold, cut anywhere: base64,
# line breaks (a ``\\n`` escape too), the characters of PEM header lines (``Proc-Type: 4,ENCRYPTED``)
# and of a cut END line
_PIECE = re.compile(r"[A-Za-z0-9+/=:, \t\r\n\\-]*")


def private_key_end(text: str) -> int | None:
    """Where the first END line of a private key block in ``text`` starts (None: it holds none).

    Example:
        >>> private_key_end("QUJD\\n-----END RSA PRIVATE KEY-----\\n"), private_key_end("-----END RSA PRIV")
        (5, None)
    """
    end = _END.search(text)
    return None if end is None else end.start()


def key_piece(text: str, start: int = 0) -> bool:
    """Whether ``text`` from ``start`` reads as a piece of a private key block cut anywhere, between
    its BEGIN and END lines (:func:`key_end`): base64, line breaks, the characters of PEM header lines
    and of a cut END line, however short.

    Example:
        >>> key_piece("MIIE"), key_piece("Ab\\nCd=="), key_piece("-----END RSA PRIV"), key_piece("that's all")
        (True, True, True, False)
    """
    return _PIECE.fullmatch(text, start) is not None


def private_key_cut(text: str) -> bool:
    """Whether ``text`` leaves a private key block open as a piece of one (:func:`key_end`): its last
    BEGIN line has no END line after it and nothing but what a piece of a key holds, however short
    (``"-----BEGIN RSA PRIVATE KEY-----\\nMIIE"``, which :func:`private_key_open` does not call key
    material alone). Whether the block runs on is then for the strings after it to say (an END line).

    Example:
        >>> private_key_cut("-----BEGIN RSA PRIVATE KEY-----\\nMIIE")
        True
        >>> private_key_cut("-----BEGIN RSA PRIVATE KEY----- ok!"), private_key_cut("no key")
        (False, False)
    """
    last = None
    for last in _BEGIN.finditer(text):
        pass
    return last is not None and _END.search(text, last.end()) is None and key_piece(text, last.end())


def split_tail(tail: str, text: str) -> str:
    """What :func:`split_private_key` needs of the consecutive strings up to ``text`` (``tail``: what
    it needed of those before it, ``""`` for none): the end of them joined, as far back as a BEGIN
    (or END) line that runs into the next string may start. A BEGIN line holds no character that
    parts it, so a line cut over any number of strings is found in the joined end of them; keeping
    only that end keeps the work of each string bounded, however many there are.

    Example:
        >>> tail = ""
        >>> for piece in ("note: -----BEG", "IN", " RSA PRIV"):
        ...     tail = split_tail(tail, piece)
        >>> tail, split_tail(tail, "no key")
        ('note: -----BEGIN RSA PRIV', '')
    """
    if not text:
        return tail
    if text[-1] not in _HEADER_CHARS:  # no BEGIN or END line runs on past this string
        return ""
    return (tail + text[-_SPLIT:])[-_SPLIT:]


def split_private_key(before: str, text: str) -> tuple[int, int, bool] | None:
    """The body of a private key block whose BEGIN line starts at the end of ``before`` (the end of
    the consecutive strings before ``text``, joined: :func:`split_tail`; items of a list, content
    blocks) and ends in ``text`` (``"-----BEGIN RSA PRIV"``, ``"ATE KEY-----\\nMIIE..."``; or
    ``"-----BEG"``, ``"IN RSA PRIV"``, ``"ATE KEY-----\\nMIIE..."``): where it starts and ends in
    ``text`` (at its END line, or at the end of ``text``) and whether its END line is there; None
    when no BEGIN line runs across into ``text``.

    Example:
        >>> split_private_key("key: -----BEGIN RSA PRIV", "ATE KEY-----\\nMIIEab\\n-----END RSA PRIVATE KEY-----")
        (12, 20, True)
        >>> split_private_key(split_tail(split_tail("", "-----BEG"), "IN RSA PRIV"), "ATE KEY-----\\nMIIE")
        (12, 17, False)
        >>> split_private_key("-----BEGIN EC PRIVATE KEY-----", "MHcC"), split_private_key("a -", "-- b")
        (None, None)
    """
    tail = before[-_SPLIT:]
    if not tail or tail[-1] not in _HEADER_CHARS:  # no BEGIN line can be cut here
        return None
    joined = tail + text[:_SPLIT]
    for match in _BEGIN.finditer(joined):
        if match.start() < len(tail) < match.end():
            start = match.end() - len(tail)
            end = _END.search(text, start)
            return start, len(text) if end is None else end.start(), end is not None
    return None


def key_end(texts: Iterable[str], tail: str = "") -> int | None:
    """How many of ``texts`` (the strings after the one where a private key block's BEGIN line ends,
    in order; ``tail``: that string's :func:`split_tail`, where an END line may start) its body runs
    over, up to and including the string its END line ends in (the line whole in one string, or cut
    over consecutive ones): when every string before that line reads as a piece of a key, cut
    anywhere (base64, line breaks, PEM header lines: however short, ``"MIIE"``, ``"Ab"``); None when a
    string that does not (prose), or the end of ``texts``, comes first. It reads each string once, and
    stops there.

    Example:
        >>> key_end(["MIIE", "pAIB\\nAAK", "CAQ==\\n-----END RSA PRIV", "ATE KEY-----", "thanks"])
        4
        >>> key_end(["MIIE", "pAIB", "that's all", "-----END RSA PRIVATE KEY-----"]), key_end(["MIIE", "pAIB"])
        (None, None)
    """
    for n, text in enumerate(texts):
        end = _END.search(text)
        if end is not None:
            return n + 1 if key_piece(text[:end.start()]) else None
        if tail:
            head = tail + text[:_SPLIT]
            if any(match.start() < len(tail) < match.end() for match in _END.finditer(head)):
                return n + 1
        if not key_piece(text):
            return None
        tail = split_tail(tail, text)
    return None


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
