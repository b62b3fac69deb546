"""Shared helpers for comparing dsh-audit with DSH's golden reconstructions in ../shared/corpus."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dsh_audit
from dsh_audit.errors import DshAuditError

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
FIELDS = ("turn", "step", "step_start_seq", "first_chunk_seq", "header_seq", "header_reason",
          "message_count", "messages_sha256")


def golden_files() -> list[Path]:
    return sorted(CORPUS.rglob("*.golden.json")) if CORPUS.is_dir() else []


def log_for(golden: Path) -> Path:
    name = golden.name[: -len(".golden.json")]
    if golden.parent.name == "golden":
        return golden.parent.parent / "session-logs" / name
    return golden.parent / name


def dsh_error_text(load: Any) -> str | None:
    return None if load == "ok" else load["error"]


def compare(golden_path: Path) -> list[str]:
    """Every disagreement between dsh-audit and one golden file, as readable lines."""
    golden = json.loads(golden_path.read_text())
    log_path = log_for(golden_path)
    problems: list[str] = []
    as_is_error: str | None = None
    try:
        requests = [r for r in dsh_audit.requests(dsh_audit.load(log_path)) if r.kind == "loop" and r.attempt == 1]
    except DshAuditError as exc:
        as_is_error = exc.message
        requests = []
    expected_error = dsh_error_text(golden["load"])
    if expected_error is None and as_is_error is not None:
        return [f"DSH loads it, dsh-audit refuses: {as_is_error}"]
    if expected_error is not None:
        if as_is_error is None:
            problems.append(f"DSH refuses ({expected_error[:120]}), dsh-audit accepts")
        elif not same_cause(expected_error, as_is_error):
            problems.append(f"different refusal: DSH {expected_error[:160]!r} vs ours {as_is_error[:160]!r}")
        adapted = golden.get("adapted") or {}
        if golden.get("requests_basis") != "adapted-header":
            adapted_error = dsh_error_text(adapted.get("load", "ok"))
            if adapted_error and "oracle:" not in adapted_error:
                try:
                    dsh_audit.requests(dsh_audit.load(log_path, lenient=True))
                    problems.append(f"DSH refuses the adapted log ({adapted_error[:100]}), lenient accepts")
                except DshAuditError as exc:
                    if not same_cause(adapted_error, exc.message):
                        problems.append(f"different lenient refusal: {adapted_error[:120]!r} vs {exc.message[:120]!r}")
            return problems
        try:
            requests = [r for r in dsh_audit.requests(dsh_audit.load(log_path, lenient=True))
                        if r.kind == "loop" and r.attempt == 1]
        except DshAuditError as exc:
            return problems + [f"lenient read refuses: {exc}"]
    want = golden["requests"]
    if len(want) != len(requests):
        problems.append(f"request count {len(requests)} != golden {len(want)}")
    for ours, theirs in zip(requests, want):
        for key in FIELDS:
            value = ours.message_count if key == "message_count" else getattr(ours, key)
            if value != theirs[key]:
                problems.append(f"request {theirs['index']}: {key} {value!r} != golden {theirs[key]!r}")
        if ours.header != theirs["header"]:
            problems.append(f"request {theirs['index']}: header differs")
    return problems


def same_cause(dsh: str, ours: str) -> bool:
    """Whether our refusal names the cause DSH names (DSH's text minus wrappers and paths)."""
    core = dsh.split(" (raw log:")[0]
    for prefix in ("stored session ",):
        if core.startswith(prefix) and "failed validation: Error: " in core:
            core = core.split("failed validation: Error: ", 1)[1]
    core = core.split(" — ")[0]
    return core in ours or ours in core
