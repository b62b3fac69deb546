import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

# -- the rewritten test modules are kept ----------------------------------------------------------
# pytest rewrites the asserts of every test module and of its plugins' packages (hypothesis's, some
# 75 modules, imported below) and keeps the result in __pycache__ (``*-pytest-*.pyc``) only where
# ``sys.dont_write_bytecode`` is false: with PYTHONDONTWRITEBYTECODE set (as on this project's
# machines) each run and each xdist worker rewrote and compiled all of them again. From here on they
# are written (atomically: workers beside each other share them) and read by the next import; the
# processes the tests start still inherit the setting.
sys.dont_write_bytecode = False


# -- hypothesis profiles (property tests: tests/test_properties*.py) ------------------------------
# ``ci`` is the default: derandomized (the same examples on every run and machine), no example
# database, no deadline (CI machines are slow and shared). ``thorough`` explores: many more random
# examples, failures saved in .hypothesis/. Pick one with ``pytest --hypothesis-profile=thorough``
# (or DSH_AUDIT_HYPOTHESIS_PROFILE=thorough).
import gc  # noqa: E402
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
    if not hasattr(config, "workerinput"):
        _compile_package()


# -- the package's bytecode, once -----------------------------------------------------------------
def _compile_package() -> None:
    """Byte-compile ``dsh_audit`` before any test imports it (once, in the controller, before
    pytest-xdist starts its workers): with ``PYTHONDONTWRITEBYTECODE`` set (as on this project's
    machines) Python never writes a ``.pyc``, so each worker and each of the ~130 ``dsh-audit``
    subprocesses the suite starts compiled every module it imports from source again (0.45 s of CPU
    for one `check`, 0.3 s of it compiling); an explicit compile writes them whatever that setting
    says, and skips a module whose ``.pyc`` is current (a few ms when nothing changed)."""
    import compileall

    compileall.compile_dir(str(Path(__file__).resolve().parent.parent / "dsh_audit"), quiet=2)


# -- the longest files first ----------------------------------------------------------------------
#: The test files that take longest on one core in a fresh clone (where mypy runs cold), longest
#: first (measured in session 35: each file's CPU, its children's included, and its wall time in a
#: full run): their CPU, the processes they start, and waits on watchers and signals. ``--dist
#: loadfile`` hands each worker the next whole file in collection order (``--no-loadscope-reorder``,
#: pyproject.toml); started first, the long files leave the many short ones to fill the gaps, so
#: the workers end together. xdist's own order (most tests first) ran these
#: files of 1-30 tests last, one worker alone with mypy at the end. A file that grows past a few
#: seconds belongs here.
LONGEST_FIRST = ("test_fleet.py", "test_huge_line.py", "test_watch.py", "test_typing.py", "test_one_story.py",
                 "test_interrupts.py", "test_redact_piai.py", "test_properties_mutations.py", "test_html_report.py",
                 "test_attribution_stream.py", "test_cost_views.py", "test_progress_more.py", "test_strategies.py",
                 "test_stdout_encoding.py", "test_redact_secrets_round3.py", "test_progress.py", "test_holidays33.py",
                 "test_html_round3.py", "test_fuzz_round12.py", "test_redact.py", "test_capture_memory.py",
                 "test_bombs.py", "test_html_report_sessions.py", "test_table_formats.py",
                 "test_redact_routes_round2.py", "test_dask_paths.py", "test_report_stream.py", "test_views33.py",
                 "test_properties_replay.py",
                 # session 41 (a full run's wall per file): files of a few seconds that ran unlisted, by name
                 "test_capture_round31.py", "test_doctests.py", "test_capture_once36.py", "test_watch_copies38.py",
                 "test_tables37.py", "test_dask41.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: k for k, name in enumerate(LONGEST_FIRST)}
    # by file name after the ranked files: every worker the same order, whichever way it collected
    # (below); stable: each file keeps its tests' order
    items.sort(key=lambda item: (rank.get(item.path.name, len(rank)), str(item.path)))


# -- the workers share the cold start ---------------------------------------------------------------
#: Every worker collects every file. In a fresh clone no file has its bytecode yet: each worker
#: compiles the package and rewrites and compiles each test file's asserts (about 8 s of CPU of its
#: 11 s of collection), and writes the result to ``__pycache__`` for the next import. Collecting in
#: the same order, the workers did all of it twice at once; the odd-numbered ones import the files
#: from the last one back, so each finds about half already written by the other and only loads it
#: (measured in session 36: 7 s of collection CPU per worker instead of 11). Collection only:
#: pytest_collection_modifyitems puts the tests back in one order, the same on every worker.
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")[2:]  # gw0, gw1, ...
_BACKWARDS = _WORKER.isdigit() and int(_WORKER) % 2 == 1


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):
    outcome = yield
    # a folder's files (pytest.Directory: pytest 8; before it, every worker keeps pytest's order)
    if _BACKWARDS and isinstance(collector, getattr(pytest, "Directory", ())):
        outcome.get_result().result.reverse()


# -- the collected tests are frozen out of the garbage collector's walks ----------------------------
def pytest_collection_finish(session: pytest.Session) -> None:
    """Every worker collects every file: thousands of test items, modules and their constants, alive
    until the run ends. Frozen (``gc.freeze``), the collector's full collections during the run no
    longer walk them each time (measured: a third of the time spent in collections). Objects the
    tests make are collected as before."""
    gc.collect()
    gc.freeze()


# -- one headless Chromium per worker -------------------------------------------------------------
@pytest.fixture(scope="session")
def browser(tmp_path_factory):
    """Debian's headless Chromium (``test_html_report._driver``; skips when it is absent), started
    once per run, i.e. once per xdist worker, not once per browser test file: a start costs about a
    second. Every test first loads its own freshly written report, the page keeps no storage, and a
    test that emulates a phone clears the override in ``finally``, so no test sees another's state."""
    from test_html_report import _driver  # a test module: imported only when a browser test runs

    driver = _driver(tmp_path_factory.mktemp("chrome-profile"))
    yield driver
    driver.quit()


# -- the CLI in process ---------------------------------------------------------------------------
@pytest.fixture
def cli80(tmp_path, monkeypatch, capsys):
    """``dsh-audit ARGS`` through the real entry point, from ``tmp_path`` at 80 columns:
    ``cli80(*args)`` gives the exit code, stdout and stderr lines (``_cli.invoke``)."""
    from _cli import invoke

    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.chdir(tmp_path)
    return lambda *args: invoke(monkeypatch, capsys, *args)
