"""The secrets a redaction looks for, as data: each kind's pattern and the anchors that gate it.

These are the provider formats detectors such as ``detect-secrets`` also know (each with a prefix or a
shape no id or digest has), plus ``Authorization``, ``Bearer`` and ``Cookie`` values, private key
blocks, ``.env``-style assignments of names that say key, token, secret or password, and the password
of a URL. :mod:`._secrets` runs them (:func:`._secrets.find_secrets`); :mod:`._pem` joins a private key
block cut over several strings.
"""

from __future__ import annotations

__all__ = ["ANCHORS", "CONTEXT_KINDS", "KEYWORDS", "PATTERNS", "PEM_BEGIN", "PEM_END", "SECRET_KINDS"]

#: A private key block's BEGIN and END lines.
PEM_BEGIN = r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
PEM_END = r"-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
#: The words that make a name a credential's.
KEYWORDS = r"api[_-]?key|apikey|secret|token|passw(?:or)?d|passwd|pwd|credential|private[_-]?key|access[_-]?key"
_NAME = r"[A-Za-z0-9_.-]*(?:" + KEYWORDS + r")[A-Za-z0-9_.-]*"
# what else names a credential in an environment variable (``OPENAI_KEY``, ``DB_PASS``; upper case only:
# ``prompt_cache_key`` and ``monkey`` are no secrets) and in a URL's query string (``?key=``, ``&sig=``)
_ENV_NAME = r"(?-i:[A-Z0-9_]*_(?:KEY|PASS|PW|AUTH))"
_URL_NAME = r"key|auth|sig|[A-Za-z0-9_.-]*signature"
# a name that ends with a credential word (``MISTRAL_API_KEY``, ``auth_token``, ``client_secret``, ``x-api-key``;
# not ``max_tokens``, ``tokenizer`` or ``secret_name``), whose value is a secret in any assignment syntax
_CREDENTIAL = (r"(?<![A-Za-z0-9_.-])(?:(?:[A-Za-z0-9_.-]*[_.-])?(?:" + KEYWORDS + r"|pass|pw)|" + _ENV_NAME + r")")
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
# Letters and digits here are ASCII ones (not ``\b`` or ``\W``, which take ``は`` or ``é`` for a word's letter): a key
# glued to text of another script (``キーはsk-proj-...``, ``éAKIA...``) is still found (fuzz 24's \d review).
_AFTER = r"(?:(?<![A-Za-z0-9])|(?<=\\[nrt]))"
_START, _END = r"(?<![A-Za-z0-9_])", r"(?![A-Za-z0-9_])"  # ``\b`` of ASCII words, before and after one

# kind -> pattern; the ``v`` group (or the whole match) is the secret. Order matters: where two
# kinds match the same characters, the earlier one is reported (:func:`find_secrets`).
PATTERNS: dict[str, str] = {
    "private_key": PEM_BEGIN + r"(?P<v>.*?)(?:" + PEM_END + r"|\Z)",
    "anthropic_api_key": _AFTER + r"sk-ant-[A-Za-z0-9_-]{20,}",
    # DeepSeek: ``sk-`` and 32 lower-case hex digits (before OpenAI's, whose pattern matches it too)
    "deepseek_api_key": _AFTER + r"sk-[0-9a-f]{32}(?![A-Za-z0-9_-])",
    "openai_api_key": _AFTER + r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
    "aws_access_key_id": _AFTER + r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}" + _END,
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
    "slack_webhook": _START + r"hooks\.slack\.com/(?:services|workflows)/(?P<v>[A-Za-z0-9_/-]{20,})",
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
    "azure_api_key": r"(?i)" + _START + r"(?:api-key|ocp-apim-subscription-key)[\"']?[ \t]*[:=][ \t]*[\"']?"
                     r"(?P<v>[0-9a-f]{32})(?![A-Za-z0-9_-])",
    "jwt": _AFTER + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
    "authorization": r"(?i)" + _START + r"(?:proxy-)?authorization" + _END + r"[\"']?\s*[:=]\s*[\"']?(?P<v>(?:(?:bearer|basic|token|digest)\s+)?[^\s\"',;]{6,})",
    # a bearer token outside an ``Authorization`` header (``-H "Bearer ..."``, a token in prose): 16
    # characters or more, a digit among them, so ``Bearer authentication`` is no secret
    "bearer_token": _START + r"[Bb]earer[ \t]+(?P<v>(?=[A-Za-z0-9._~+/-]*[0-9])[A-Za-z0-9._~+/-]{16,}=*)",
    # a ``Cookie`` or ``Set-Cookie`` header's value (a session, whatever its cookies' names)
    "cookie": r"(?i)" + _START + r"(?:set-)?cookie[\"']?[ \t]*:[ \t]*[\"']?(?P<v>[^\s=;,:\"']+=[^\r\n\"']{2,})",
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
SECRET_KINDS = tuple(PATTERNS)

#: The kinds found by a name beside the value, not by the value's own shape: a value that is a
#: secret by its own name (:meth:`dsh_audit.redact.Redactor.named`) counts as that name says instead.
CONTEXT_KINDS = frozenset({"authorization", "bearer_token", "cookie", "env_assignment", "key_value", "url_parameter",
                           "azure_api_key", "credential_assignment"})

# What every match of a kind's pattern holds (one of these literals at least), and how far before the
# first of them in a text a match can start; None for a pattern that ignores case, whose anchors are
# looked for in the text folded to lower case (:func:`_fold`; each of those needs a ``:`` or ``=``,
# and may start anywhere before its anchor). A text without them is not searched with the pattern
# (:func:`find_secrets`): most strings of a log hold none, and ``str.find`` reads a text at C speed
# where a pattern starting with ``\b`` tries every position.
_NAMED = ("key", "secret", "token", "pass", "pw", "credential")  # in every name KEYWORDS matches
ANCHORS: dict[str, tuple[tuple[str, ...], int | None]] = {
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
