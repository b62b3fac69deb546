"""The Dask engine on a real cluster whose workers run in another folder: paths given relative to
the user's folder (logs, --capture, --routes, --prices) are read as a serial run reads them, and
the output is byte-identical to a serial run's; a failing task ends with the serial run's one
error line, at once (no traceback, no wait for the client's close timeout)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from _cli import chat_log, invoke
from dsh_audit.errors import UnreadableError
from dsh_audit.runner._dask import _in_folder

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
CHANGE = CORPUS / "live" / "c-change"
needs_corpus = pytest.mark.skipif(not CHANGE.is_dir(), reason="../shared/corpus is absent")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A real local cluster (scheduler and one worker process) whose worker runs in a folder of its
    own; yields the scheduler address and that folder. Dask is imported here, not when the
    module is collected: every xdist worker collects every file, and Dask takes a quarter second."""
    distributed = pytest.importorskip("distributed")
    elsewhere = tmp_path_factory.mktemp("worker-home")
    here = os.getcwd()
    os.chdir(elsewhere)  # the worker process starts here and stays here
    try:
        local = distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True,
                                         dashboard_address="127.0.0.1:0")  # never 8787: a run beside may hold it
    finally:
        os.chdir(here)
    with local:
        yield local.scheduler_address, elsewhere


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two chat logs under project/logs, a route and a price file, the cwd project/sub."""
    root = tmp_path / "project"
    chat_log(root / "logs" / "one" / "session.jsonl", "session-one")
    chat_log(root / "logs" / "two" / "session.jsonl", "session-two")
    (root / "routes.yml").write_text("providers:\n  anthropic:\n    cacheRetention: long\n", encoding="utf-8")
    (root / "prices.toml").write_text("[providers.deepseek.models.deepseek-v4-flash]\n"
                                      "cache_miss = 7\ncache_read = 1\noutput = 9\n", encoding="utf-8")
    (root / "sub").mkdir()
    monkeypatch.chdir(root / "sub")
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "no-home"))
    return root


# The commands whose output names each log.
_NAMING = {"requests", "cache", "check"}


def _cli(*args: str) -> tuple[int, str, str, float]:
    """``dsh-audit ARGS`` as its own process (a generator left open shows at interpreter exit)."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "dsh_audit", *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "COLUMNS": "200"}, check=False)
    return done.returncode, done.stdout, done.stderr, time.monotonic() - started


def test_the_worker_runs_elsewhere(cluster: tuple[str, Path]) -> None:
    """The premise of every test here: a relative path is not found from the worker's own folder."""
    address, elsewhere = cluster
    distributed = pytest.importorskip("distributed")
    with distributed.Client(address, set_as_default=False) as client:
        assert list(client.run(os.getcwd).values()) == [str(elsewhere)]


@pytest.mark.parametrize("args", [
    ("requests",), ("requests", "--json"), ("validate",), ("breaks",),
    ("usage", "--prices", "../prices.toml"), ("cache", "--json"),
    ("check", "--routes", "../routes.yml", "--prices", "../prices.toml"),
], ids=lambda a: " ".join(a))
def test_relative_paths_print_what_a_serial_run_prints(cluster: tuple[str, Path], project: Path, args: tuple[str, ...],
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    command, *options = args
    serial = invoke(monkeypatch, capsys, command, "../logs", *options)
    on_dask = invoke(monkeypatch, capsys, command, "../logs", *options, "--engine", "dask", "--scheduler", cluster[0])
    assert on_dask == serial
    assert serial[0] == 0
    if command in _NAMING:  # the logs named as given, never as the worker would have to open them
        assert "../logs/one/session.jsonl" in serial[1] and str(project) not in serial[1]


@needs_corpus
def test_check_with_a_relative_capture_and_routes_is_the_serial_verdict(
        cluster: tuple[str, Path], project: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A capture that differs from the log in one byte: DSH811 fails the build, the capture named as given."""
    log = next((CHANGE / "session-logs").glob("session-*.jsonl"))
    shutil.copy(log, project / "logs" / "one" / "session.jsonl")
    records = [json.loads(line) for line in (CHANGE / "wire.jsonl").read_text(encoding="utf-8").splitlines()]
    body = records[2]["body"].replace("You are a coding agent", "You are a codinG agent", 1).encode()
    records[2].update(body=body.decode(), body_bytes=len(body), body_sha256=hashlib.sha256(body).hexdigest())
    (project / "captures").mkdir()
    (project / "captures" / "wire.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    args = ("check", "../logs/one", "--capture", "../captures/wire.jsonl", "--routes", "../routes.yml")
    serial = invoke(monkeypatch, capsys, *args)
    on_dask = invoke(monkeypatch, capsys, *args, "--engine", "dask", "--scheduler", cluster[0])
    assert on_dask == serial
    code, out, err = serial
    assert (code, err) == (1, ["note: 1 request(s) priced from the capture's usage (their log holds none)"])  # its title call is priced from the capture
    assert ("../logs/one/session.jsonl:34: seq 32: request 2: DSH811 error (fails the gate: capture-fail): loop request 2 is different vs "
            "../captures/wire.jsonl line 3 at byte 134 (messages[0].content) (hint: run `dsh-audit diff "
            "../logs/one/session.jsonl --capture ../captures/wire.jsonl --routes ../routes.yml` for the JSON paths "
            "that differ)") in out.splitlines()


def test_a_failing_task_prints_the_serial_error_and_ends_at_once(cluster: tuple[str, Path], project: Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """validate stops at the first log it cannot read; the Dask client is already closed then."""
    os.mkfifo(project / "logs" / "pipe.jsonl")
    args = ("validate", "../logs/one/session.jsonl", "../logs/pipe.jsonl", "../logs/two/session.jsonl")
    error = "error: ../logs/pipe.jsonl: is a FIFO, not a log file (hint: only regular files are read)"
    assert invoke(monkeypatch, capsys, *args) == (2, "", [error])
    code, out, err, took = _cli(*args, "--engine", "dask", "--scheduler", cluster[0])
    assert (code, out, err) == (2, "", error + "\n")  # no traceback of the client's close
    assert took < 15


def test_a_task_runs_in_the_clients_folder_and_gives_the_workers_back(tmp_path: Path) -> None:
    """On a worker: the client's folder while the task runs, the worker's own after; a folder the
    worker does not have is the log's error, said in one line."""
    here = os.getcwd()
    assert _in_folder(str(tmp_path), lambda unit: (unit, os.getcwd()), "a.jsonl") == ("a.jsonl", str(tmp_path))
    assert os.getcwd() == here
    with pytest.raises(UnreadableError) as caught:
        _in_folder(str(tmp_path / "gone"), lambda unit: unit, "a.jsonl")
    assert str(caught.value) == (f"the Dask worker cannot use this run's working directory {tmp_path / 'gone'}: "
                                 "No such file or directory (hint: the workers must see the files under the same "
                                 "paths: a shared file system)")
    assert os.getcwd() == here
