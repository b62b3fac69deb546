"""What each request of a session is judged with: its cache rule (by provider, model and the
adapter of its route), its family's token counter, its prompt, built from its own route's
rendered body, and the retention that body asks for."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..replay import Request
from ..session import Bodies
from ..wire import PromptPieces
from ._earlier import _model
from ._prefix import PromptBuilder
from ._retention_body import retention_body
from ._rule_data import rule_for
from ._rules import CacheRule, Retention
from ._tokens import TokenCounter, make_counter

__all__ = ["RequestRules"]


@dataclass
class _Family:
    rule: CacheRule  # the first rule of the family seen (the report's)
    count: TokenCounter  # the family's tokenizer, shared by every route of the family


class RequestRules:
    """The rules, token counters and prompt builders of one session's requests, each made once.

    ``unit``, ``tokenizer`` and ``zero_data_retention`` as :func:`~dsh_audit.cache.analyze_cache`
    takes them; ``bodies``: the session's rendered bodies (None: prompts are not read from wire
    bodies). ``foreign`` holds the bodies of other sessions' requests that a request of this one
    continues (a fork child's parent), by session id.
    """

    def __init__(self, *, unit: int | None, tokenizer: str, bodies: Bodies | None,
                 zero_data_retention: bool | None = None) -> None:
        self.unit, self.tokenizer, self.bodies = unit, tokenizer, bodies
        self.zero_data_retention = zero_data_retention
        self.families: dict[str, _Family] = {}
        self.builders: dict[tuple[str, str], PromptBuilder] = {}  # per (family, wire adapter)
        self.rules: dict[tuple[str | None, str | None, str | None], CacheRule] = {}
        # Other sessions' requests this one's may read (a fork child's parent): their bodies.
        self.foreign: dict[str, Bodies | None] = {}

    def rule(self, provider: str | None, model: str | None, adapter: str | None) -> CacheRule:
        """The cache rule of a request of ``provider``/``model`` sent by ``adapter`` (its route's)."""
        rule = self.rules.get((provider, model, adapter))
        if rule is None:
            rule = self.rules[(provider, model, adapter)] = rule_for(
                provider, model, unit=self.unit, adapter=adapter).with_zero_data_retention(self.zero_data_retention)
        return rule

    def family(self, rule: CacheRule) -> _Family:
        """The rule's family: its token counter, and the first of its rules seen (the report's)."""
        found = self.families.get(rule.family)
        if found is None:
            found = self.families[rule.family] = _Family(rule, make_counter(rule.tokenizer, method=self.tokenizer))
        return found

    def body_source(self, request: Request) -> Bodies | None:
        """The rendered bodies ``request`` is read from: its own session's (another session's for
        a request of :attr:`foreign`)."""
        if request.session_id in self.foreign:
            return self.foreign[request.session_id]
        return self.bodies

    def builder(self, rule: CacheRule) -> PromptBuilder:
        """The prompt builder of a rule's wire format: one per family and adapter, so that each
        request's prompt is its own route's body (the session renders each body once per adapter)."""
        key = (rule.family, rule.wire_adapter)
        found = self.builders.get(key)
        if found is None:
            adapter, source = rule.wire_adapter, self.body_source
            wired = self.bodies is not None

            def render(request: Request) -> bytes | None:
                bodies = source(request)
                return None if bodies is None else bodies.body(request, adapter)

            def pieces(request: Request) -> PromptPieces | None:
                bodies = source(request)
                return None if bodies is None else bodies.pieces(request, adapter)

            def value(request: Request) -> dict[str, Any] | None:
                bodies = source(request)
                return None if bodies is None else bodies.value(request, adapter)

            found = self.builders[key] = PromptBuilder(
                rule, render=render if wired else None, pieces=pieces if wired else None,
                value=value if wired else None, count=self.family(rule).count)
        return found

    def retention(self, rule: CacheRule, request: Request) -> Retention | None:
        """The retention the request's rendered body asks for (None: the rule's ``ttl_seconds``).

        Without a body (no wire bodies, or one that cannot be rendered) an Anthropic request keeps
        its rule's TTL, and an OpenAI one gets what its model's default and a 24h request agree on
        (:meth:`CacheRule.retention`): OpenAI's default is not ``in_memory`` for every model.
        """
        if rule.retention_marker is None and rule.retention_key is None:
            return None
        body = None
        bodies = self.body_source(request)
        if bodies is not None:
            value = bodies.value(request, rule.wire_adapter)  # the body just built: kept
            if value is not None:
                # Its markers and retention key, written without its long texts (a huge tool result
                # is not written out to find them; nothing outside a string changes).
                return rule.retention(retention_body(value))
            body = bodies.body(request, rule.wire_adapter)
        return rule.retention(body, model=_model(request)[1])

