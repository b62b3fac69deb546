"""The options ``check`` and ``report`` share: the policy, the baseline (read, protected and
applied), and how sessions are rendered, priced, read and chosen."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import click

from ..gate import Baseline, CheckResult, Policy, apply_baseline, load_baseline
from ..log import ProtectedInputs
from ..session import forced_adapter
from ._check_files import _same_file
from ._common import echo_note
from ._given import give_way
from ._options import (adapter_option, attachments_option, engine_options, jobs_option, lenient_option,
                       openai_zdr_option, prices_option, routes_option)
from ._output import STDOUT
from ._when import time_options


def _policy_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--policy", "policy_path", type=click.Path(exists=True, dir_okay=False, readable=False),
                        help="A TOML policy file ([tool.dsh-audit] table or top-level keys). Default: the "
                             "nearest pyproject.toml's [tool.dsh-audit], else the strict defaults.")(func)


def _baseline_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--baseline FILE`` and ``--no-baseline``: the findings ``check`` and ``report`` accept."""
    func = click.option("--no-baseline", is_flag=True,
                        help="Judge every finding as it is: no baseline, not even the one the policy's "
                             "[tool.dsh-audit.check] names.")(func)
    return click.option("--baseline", "baseline_path", metavar="FILE", type=click.Path(dir_okay=False, readable=False),
                        help="Accept the findings of FILE, a JSON report an earlier check wrote (--json-report "
                             "FILE): those found again are reported as baselined and do not fail (see docs/ci.md). "
                             "Default: baseline in the policy's [tool.dsh-audit.check].")(func)


def _one_baseline(given: str | None, off: bool) -> tuple[str | None, bool]:
    """``--baseline FILE`` (``given``) and ``--no-baseline`` (``off``) as a run applies them: when
    both are given, the one read from its DSH_AUDIT_ variable gives way to the one typed
    (:func:`give_way`).

    Raises:
        UsageError: both were typed, or both read from variables.
    """
    if not off or given is None:
        return given, off
    dropped = give_way("baseline_path", "no_baseline", typed=("--baseline FILE", "--no-baseline"),
                       clash=lambda first, second: f"{first} and {second} ask for two things", hint="give one of them")
    return (None, True) if dropped == "baseline_path" else (given, False)


def _baseline(given: str | None, *, off: bool, policy: Policy, writes: str | None = None) -> Baseline | None:
    """The baseline a run applies: ``given`` (``--baseline FILE``), else the policy's; none with
    ``off`` (``--no-baseline``; the two settled by :func:`_one_baseline`), nor when its file does
    not exist yet and ``writes`` (check's ``--json-report FILE``) names it: the first baseline is
    written by a run without one, and a note says so. Read before any report is written
    (``--json-report`` may name it, to update it).

    Raises:
        UsageError: the baseline cannot be read (for a missing one, the hint names the command that
            writes it).
    """
    if off:
        return None
    path = given if given is not None else policy.baseline
    if path is None:
        return None
    if writes is not None and writes != STDOUT and not os.path.lexists(path) and _same_file(path, writes):
        echo_note(f"the baseline {path} does not exist yet: checked without one, and --json-report {writes} "
                  "writes it")
        return None
    return load_baseline(path, configured=given is None)


def _protect_baseline(protected: ProtectedInputs, given: str | None, *, off: bool, policy: Policy) -> None:
    """Add the baseline a run reads (``--baseline FILE``, else the policy's) to ``protected``: no
    report but check's ``--json-report`` (guarded before) may be written over it. A folder named as
    the baseline is refused when the baseline is read, not taken as a folder of inputs here."""
    path = None if off else (given if given is not None else policy.baseline)
    if path is not None and path != "" and not os.path.isdir(path):
        protected.add(path)


def _with_baseline(result: CheckResult, baseline: Baseline | None) -> CheckResult:
    """``result`` with the findings ``baseline`` accepts marked, and its notes on stderr."""
    if baseline is None:
        return result
    result = apply_baseline(result, baseline)
    for note in result.baseline_said():  # in baseline entries, not lines (a folded run is one)
        echo_note(note)
    return result


def _typed_adapter(policy: Policy, adapter: str) -> Policy:
    """``policy`` with the adapter in force over its key ``adapter``: the ``--adapter`` typed (or
    set in its variable), else the one ``$DSH_AUDIT_ADAPTER`` forces (:func:`forced_adapter`, which
    renders every request then), so that the reports say the format the run used; neither given,
    the policy's key stands."""
    source = click.get_current_context().get_parameter_source("adapter")
    if source not in (None, click.core.ParameterSource.DEFAULT):
        return replace(policy, adapter=adapter)
    forced = forced_adapter()
    return policy if forced is None else replace(policy, adapter=forced)


def _session_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """The options ``check`` and ``report`` share after their own, in this order: how requests
    are rendered (--adapter, --routes, --attachments), priced (--prices, --openai-zdr), read (--lenient,
    --max-version), run (--jobs), chosen by time (--since, --until) and by engine."""
    for option in reversed((adapter_option, routes_option, attachments_option, prices_option, openai_zdr_option, lenient_option,
                            jobs_option, time_options, engine_options)):
        func = option(func)
    return func
