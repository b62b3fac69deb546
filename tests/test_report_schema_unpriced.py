"""The JSON report of a session no rate prices is valid against docs/report-schema.json: its costs
are null (unknown, never 0) and it says how many requests were unpriced."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from dsh_audit.gate import run_check
from dsh_audit.report import format_json

ROOT = Path(__file__).resolve().parent.parent
C3 = ROOT.parent / "shared" / "corpus" / "live-pi" / "c3-openai-compat"


@pytest.mark.skipif(not C3.is_dir(), reason="../shared/corpus is absent")
def test_an_unpriced_session_report_is_valid_and_says_unknown() -> None:
    result = run_check([C3 / "session-logs"], routes=str(C3 / "inputs" / "pi-ai-routes.patch.yml"))
    data = json.loads(format_json(result))
    schema = json.loads((ROOT / "docs" / "report-schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(data)
    cost = data["sessions"][0]["cost"]
    assert {k: cost[k] for k in ("cost_usd", "no_cache_cost_usd", "off_peak_cost_usd", "break_cost_usd",
                                 "unpriced", "unpriced_requests", "cost_complete")} == {
        # no break lost a token: the break cost is 0, not unknown (docs/cache-accounting.md: a loss
        # with no lost token costs $0.0000, 0 in JSON, whatever was priced)
        "cost_usd": None, "no_cache_cost_usd": None, "off_peak_cost_usd": None, "break_cost_usd": 0.0,
        "unpriced": {"no price for model 'local-coder'": 6}, "unpriced_requests": 6, "cost_complete": False}
