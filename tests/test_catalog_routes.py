"""Every pi-ai built-in provider whose models share one API is a route without a route file
(DSH's ``sharedCatalogApi``, pi-ai 0.82.1 ``dist/providers/data/*.json``), not only the four the
corpus shows; a provider whose models speak several APIs needs the log's envelope or a file."""

from __future__ import annotations

from dsh_audit.session import route_for


def test_catalog_providers_route_by_their_one_api() -> None:
    assert [(route_for(p).adapter, route_for(p).api, route_for(p).because) for p in ("zai", "kimi-coding", "openai")] == [
        ("openai", "openai-completions", "pi-ai's catalog"),
        ("anthropic", "anthropic-messages", "pi-ai's catalog"),
        ("responses", "openai-responses", "pi-ai's catalog")]


def test_a_catalog_api_without_a_renderer_says_so() -> None:
    google = route_for("google")
    assert (google.adapter, google.api) == (None, "google-generative-ai")
    assert google.because.startswith("pi-ai's catalog; dsh-audit renders no 'google-generative-ai' bodies")


def test_a_provider_of_several_apis_needs_evidence_or_a_file() -> None:
    fireworks = route_for("fireworks")
    assert (fireworks.adapter, fireworks.api) == (None, None)
    assert fireworks.because == ("provider 'fireworks': the log shows no message from its adapter; pass --routes "
                                 "FILE (DSH's llm-pi-ai route configuration) or --adapter")
    assert route_for("deepseek-official").adapter == "deepseek"
