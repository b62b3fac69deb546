"""pi-ai's Anthropic OAuth mode: what an OAuth token changes in an ``anthropic-messages`` request,
and the route setting that tells dsh-audit DSH's key was one.

pi-ai 0.82.1 decides per call, from the key alone (``api/anthropic-messages.js``
``isOAuthToken``, :636: the key contains ``sk-ant-oat``), that it talks to Anthropic as Claude
Code does. DSH's ``llm-pi-ai`` hands pi-ai such a key whenever its credential is one: a route
naming no credential keeps the catalog provider's own auth, and pi-ai's ``anthropic`` provider
reads ``ANTHROPIC_OAUTH_TOKEN`` before ``ANTHROPIC_API_KEY`` (``providers/anthropic.js:25``); a
pasted ``sk-ant-oat…`` key under ``apiKeyEnv`` is one too. The log records no key, so the key type
is a dsh-audit route setting (:class:`KeyedRouteProfile`, ``dshAudit: {keyType: oauth}`` in a
route file), API key by default.

What the mode changes, read from pi-ai's ``dist/`` (``createClient`` :640-690, ``buildParams``
:697-733, ``convertMessages`` :929, ``convertTools`` :1006, ``utils/deferred-tools.js``):

- ``system`` starts with the Claude Code identity block (:data:`CLAUDE_CODE_IDENTITY`), with the
  cache marker, and the system prompt follows as a second block (the identity alone without one);
- tool definitions and ``tool_use`` blocks name a tool in Claude Code's casing when its name
  matches one of Claude Code's case-insensitively (:func:`claude_code_name`: ``read`` ->
  ``Read``), and tools are deduplicated by that name;
- headers: ``anthropic-beta`` leads with ``claude-code-20250219,oauth-2025-04-20``, ``x-app: cli``
  follows pi-ai's ``user-agent`` (``claude-cli/2.1.75``, whose value DSH's attribution replaces in
  place), the key goes as ``authorization: Bearer`` (withheld, as every credential), and no
  ``x-session-affinity`` is sent. The GitHub Copilot client is built before this test
  (:640-662), so a ``github-copilot`` route never takes the mode.

Checked byte for byte against pi-ai's own requests (``tests/data/piai_oracle/oauth``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from ._piai_call import PiCall
from ._piai_facts import PiModel, RouteProfile

__all__ = ["CLAUDE_CODE_IDENTITY", "CLAUDE_CODE_VERSION", "KEY_TYPES", "OAUTH_BETA", "KeyedRouteProfile",
           "checked_key_type", "claude_code_name", "key_type_conflict", "key_type_of", "keyed", "keyed_profile",
           "oauth_betas", "route_key_type", "system_blocks", "tool_namer", "uses_oauth"]

#: The key types a route may declare (``dshAudit.keyType``): pi-ai's API-key mode and its OAuth mode.
KEY_TYPES = ("api-key", "oauth")
#: The Claude Code release pi-ai 0.82.1 names in an OAuth call's ``user-agent`` (``claude-cli/…``).
CLAUDE_CODE_VERSION = "2.1.75"
#: The first system block of every OAuth call.
CLAUDE_CODE_IDENTITY = "You are Claude Code, Anthropic's official CLI for Claude."
#: The beta an OAuth call always announces, after ``claude-code-20250219``.
OAUTH_BETA = "oauth-2025-04-20"
#: Claude Code 2.x's tool names in their canonical casing, as pi-ai 0.82.1 lists them.
_CLAUDE_CODE_TOOLS = ("Read", "Write", "Edit", "Bash", "Grep", "Glob", "AskUserQuestion", "EnterPlanMode",
                      "ExitPlanMode", "KillShell", "NotebookEdit", "Skill", "Task", "TaskOutput", "TodoWrite",
                      "WebFetch", "WebSearch")
_BY_LOWER = {name.lower(): name for name in _CLAUDE_CODE_TOOLS}
#: How an OAuth body's ``system`` begins, as serialised (the identity block, cache marker or not).
_IDENTITY_BYTES = b'"system":[{"type":"text","text":"' + CLAUDE_CODE_IDENTITY.encode() + b'"'


@dataclass(frozen=True, slots=True)
class KeyedRouteProfile(RouteProfile):
    """A :class:`~dsh_audit.wire.RouteProfile` that also says what kind of key DSH gave pi-ai on
    the route (the route file's ``dshAudit.keyType``, a dsh-audit setting DSH does not read).

    Attributes:
        key_type: ``oauth`` (an Anthropic OAuth token, ``sk-ant-oat…``) or ``api-key``.
    """

    key_type: str = "api-key"


def keyed_profile(profile: RouteProfile | None, key_type: str) -> KeyedRouteProfile:
    """``profile``'s settings (none: pi-ai's defaults) with the key type ``key_type``."""
    settings = profile or RouteProfile()
    return KeyedRouteProfile(**{f.name: getattr(settings, f.name) for f in fields(RouteProfile)}, key_type=key_type)


def checked_key_type(value: Any) -> str:
    """``value`` as a key type (:data:`KEY_TYPES`), checked as a route file's ``dshAudit.keyType`` is read.

    Raises:
        ValueError: ``value`` is no key type (the message names those there are).

    Example:
        >>> checked_key_type("oauth")
        'oauth'
    """
    if not isinstance(value, str) or value not in KEY_TYPES:
        raise ValueError(f"must be one of {', '.join(KEY_TYPES)} (the kind of key DSH gave pi-ai)")
    return value


def route_key_type(profile: RouteProfile | None) -> str | None:
    """The key type a route's settings declare (its ``dshAudit.keyType``: a :class:`KeyedRouteProfile`),
    checked as the reader checks it (:func:`checked_key_type`); None when they declare none.

    Raises:
        ValueError: the declared key type is none of :data:`KEY_TYPES`.

    Example:
        >>> route_key_type(keyed_profile(None, "oauth")), route_key_type(RouteProfile())
        ('oauth', None)
    """
    return checked_key_type(profile.key_type) if isinstance(profile, KeyedRouteProfile) else None


def keyed(call: PiCall, key_type: str) -> PiCall:
    """``call`` with its route's key type set to ``key_type`` (its other route settings kept)."""
    return replace(call, model=replace(call.model, profile=keyed_profile(call.model.profile, key_type)))


def uses_oauth(model: PiModel) -> bool:
    """Whether pi-ai talks to ``model`` in OAuth mode: its route declares an OAuth key and it is
    not GitHub Copilot's (whose client pi-ai builds first).

    Example:
        >>> from dsh_audit.wire import PIAI_CATALOG
        >>> from dataclasses import replace
        >>> claude = PIAI_CATALOG[("anthropic", "claude-sonnet-4-5")]
        >>> uses_oauth(claude), uses_oauth(replace(claude, profile=KeyedRouteProfile(key_type="oauth")))
        (False, True)
    """
    profile = model.profile
    return isinstance(profile, KeyedRouteProfile) and profile.key_type == "oauth" and model.provider != "github-copilot"


def claude_code_name(name: str) -> str:
    """pi-ai's ``toClaudeCodeName``: Claude Code's casing of a tool name that matches one of its
    tools case-insensitively, else the name as it is.

    Example:
        >>> [claude_code_name(n) for n in ("read", "BASH", "todowrite", "web_fetch", "Read")]
        ['Read', 'Bash', 'TodoWrite', 'web_fetch', 'Read']
    """
    return _BY_LOWER.get(name.lower(), name)


def _same(name: str) -> str:
    return name


def tool_namer(model: PiModel) -> Any:
    """The tool-name mapping pi-ai applies to ``model``'s tool definitions and ``tool_use`` blocks:
    :func:`claude_code_name` in OAuth mode, else none."""
    return claude_code_name if uses_oauth(model) else _same


def system_blocks(prompt: str | None, cache: Mapping[str, str] | None, *, oauth: bool) -> list[dict[str, Any]] | None:
    """The ``system`` field (``buildParams``): the identity block first in OAuth mode, then the
    system prompt (already sanitised), each with the cache marker; None when there is nothing."""
    blocks = [{"type": "text", "text": text, **({"cache_control": cache} if cache else {})}
              for text in ((CLAUDE_CODE_IDENTITY,) if oauth else ()) + ((prompt,) if prompt else ())]
    return blocks or None


def oauth_betas(betas: list[str]) -> str:
    """An OAuth call's ``anthropic-beta``: Claude Code's two betas, then the call's own."""
    return ",".join(["claude-code-20250219", OAUTH_BETA, *betas])


def key_type_of(body: bytes, headers: Mapping[str, str] | None = None) -> str:
    """The key type an Anthropic Messages request was made for: ``oauth`` when its body starts
    ``system`` with the Claude Code identity block or its ``anthropic-beta`` (``headers``, names
    lower-cased) holds ``oauth-2025-04-20``, else ``api-key`` (every OAuth call has both).

    Example:
        >>> key_type_of(b'{"model":"m","system":[{"type":"text","text":"Be brief."}]}')
        'api-key'
        >>> key_type_of(b'{"model":"m"}', {"anthropic-beta": "claude-code-20250219,oauth-2025-04-20"})
        'oauth'
    """
    beta = (headers or {}).get("anthropic-beta", "")
    sent = OAUTH_BETA in (part.strip() for part in beta.split(",")) or _IDENTITY_BYTES in body
    return "oauth" if sent else "api-key"


def key_type_conflict(expected: bytes, sent: bytes, headers: Mapping[str, str] | None = None) -> str | None:
    """When a rendered Anthropic body (``expected``) and the captured one (``sent``, with its
    lower-cased ``headers``) were made for different key types, a hint naming the route setting
    that renders the captured one; else None.

    A captured OAuth call shows ``oauth-2025-04-20`` in its ``anthropic-beta`` and the Claude Code
    identity block at the head of ``system``; the rendered body shows the block alone.

    Example:
        >>> sent = b'{"model":"m","system":[{"type":"text","text":"' + CLAUDE_CODE_IDENTITY.encode() + b'"}]}'
        >>> key_type_conflict(b'{"model":"m"}', sent).startswith("the capture was sent with an Anthropic OAuth")
        True
        >>> key_type_conflict(sent, sent) is None
        True
    """
    captured = key_type_of(sent, headers)
    if captured == key_type_of(expected):
        return None
    if captured == "oauth":
        return ("the capture was sent with an Anthropic OAuth token (the Claude Code identity block, anthropic-beta "
                f"{OAUTH_BETA}), rendered for an API key: give --routes FILE the route's `dshAudit: {{keyType: "
                "oauth}`")
    return ("the capture was sent with an Anthropic API key, rendered for an OAuth token: remove the route's "
            "`dshAudit: {keyType: oauth}` from --routes FILE")
