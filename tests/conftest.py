import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


# -- hypothesis profiles (property tests: tests/test_properties*.py) ------------------------------
# ``ci`` is the default: derandomized (the same examples on every run and machine), no example
# database, no deadline (CI machines are slow and shared). ``thorough`` explores: many more random
# examples, failures saved in .hypothesis/. Pick one with ``pytest --hypothesis-profile=thorough``
# (or DSH_AUDIT_HYPOTHESIS_PROFILE=thorough).
import os  # noqa: E402

import pytest  # noqa: E402

if os.environ.get("PYTEST_XDIST_WORKER"):
    # A pytest-xdist worker starts with COLUMNS=80 and LINES=24 in its environment, which a serial
    # run does not have; the width tests set COLUMNS themselves and expect none otherwise.
    for _name in ("COLUMNS", "LINES"):
        os.environ.pop(_name, None)

from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile("ci", max_examples=100, derandomize=True, database=None, deadline=None,
                          print_blob=True, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=600, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("DSH_AUDIT_HYPOTHESIS_PROFILE", "ci"))


# -- slow property runs ---------------------------------------------------------------------------
# The heaviest properties are marked ``@pytest.mark.slow`` and take
# ``@settings(max_examples=examples(short))`` (``_properties.examples``): the default run gives them
# ``short`` examples (every property still runs, derandomized); ``pytest -m slow`` (only the slow
# tests) or DSH_AUDIT_SLOW=1 (the whole suite) gives them their full count. See tests/README.md.
def pytest_configure(config: pytest.Config) -> None:
    import _properties

    if (config.getoption("markexpr", "") or "").strip() == "slow":
        _properties.FULL_RUN = True


# -- the CLI in process ---------------------------------------------------------------------------
@pytest.fixture
def cli80(tmp_path, monkeypatch, capsys):
    """``dsh-audit ARGS`` through the real entry point, from ``tmp_path`` at 80 columns:
    ``cli80(*args)`` gives the exit code, stdout and stderr lines (``_cli.invoke``)."""
    from _cli import invoke

    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.chdir(tmp_path)
    return lambda *args: invoke(monkeypatch, capsys, *args)
