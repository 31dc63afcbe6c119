"""Shared fixtures. Every test runs with HOME and the config dirs pointed at a temporary
directory, so nothing reads or writes the real ~/.soulframe, ~/.agents or user config."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_runner import run_cli

REPO = Path(__file__).resolve().parent.parent

# Property tests judge correctness, not speed: on a loaded machine (CI beside other work, two
# cores) Hypothesis' "input generation is slow" check and per-example deadline fail tests
# whose code is right. Speed is measured in tests/benchmarks.
from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile("soulframe", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("soulframe")

if os.environ.get("PYTEST_XDIST_WORKER"):
    # Parallel workers (pytest -n) already keep every core busy: a BLAS that also spreads
    # each matrix product over all cores only makes its threads spin-wait for one another
    # (measured: a third more CPU for the same recall run). Set before NumPy loads, in this
    # worker and the command-line subprocesses it starts.
    for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
        os.environ.setdefault(_var, "1")


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    # one cache for the session: the offline model's arranged weights (~90 MB) are built once,
    # not once per test (tests of the cache itself pass their own directory)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache"))
    for var in ("SOULFRAME_CONFIG", "SOULFRAME_WORKSPACE", "SOULFRAME_DISABLE_PLUGINS",
                "SOULFRAME_DSN", "SOULFRAME_HOME", "OPENAI_API_KEY", "GEMINI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    yield home


@pytest.fixture(scope="session")
def shared_minilm():
    """The offline model (``local`` provider), loaded once per test process and shared by
    every test that embeds in-process: loading it is most of a small test's time. Whether
    it is installed is each test's business (``available()``)."""
    from soulframe_embeddings.local import LocalProvider

    return LocalProvider()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty workspace directory."""
    ws = tmp_path / "ws"
    ws.mkdir(mode=0o700)
    return ws


@pytest.fixture
def no_pip_config(monkeypatch: pytest.MonkeyPatch) -> None:
    """No pip configuration but what a test sets (PIP_CONFIG_FILE=/dev/null reads no file, no
    PIP_* or proxy variable): the machine running the tests may have its own."""
    for name in list(os.environ):
        if name.upper().startswith("PIP_") or name.lower() in ("http_proxy", "https_proxy", "all_proxy"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)


@pytest.fixture
def cli():
    """``cli("prompt", "--json")`` runs the real command line (in process; ``process=True``
    for a subprocess, see tests/cli_runner.py)."""
    return run_cli


# a real PostgreSQL with pgvector for the managed-mode tests (started once, on first use)
from pg_fixtures import pg_dsn, pg_server  # noqa: E402, F401


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n logical`` (tox.ini) starts half again as many workers as CPUs: much of the suite
    waits on what it started (the command line as a process, MCP servers, PostgreSQL, HTTP
    stand-ins), and on two CPUs three workers finish in 4 minutes where two took 5."""
    return max(1, (os.cpu_count() or 1) * 3 // 2)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # A connection pool or connection left for the garbage collector warns (ResourceWarning)
    # from a finaliser, which Python reports as an "unraisable" exception: both fail the
    # tests that use the server. Only PostgreSQL's warnings: the garbage collector may run
    # here on what an earlier test on this worker left (an unclosed pipe, say).
    for item in items:
        if "pg_server" in getattr(item, "fixturenames", ()) or item.get_closest_marker("postgres"):
            item.add_marker(pytest.mark.filterwarnings(
                "error:PostgreSQL .* connection pool was never closed:ResourceWarning"))
            item.add_marker(pytest.mark.filterwarnings(
                "error:.*was deleted while still open:ResourceWarning"))  # psycopg's own
            item.add_marker(pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning"))


# --------------------------------------------------------------------------- the adversarial tally
# Each test process counts its attacks (tests/tally.py); an xdist worker hands its counts to
# the controller, which prints one line for the whole run.


def pytest_sessionfinish(session: pytest.Session) -> None:
    from tally import TALLY

    if hasattr(session.config, "workeroutput"):
        session.config.workeroutput["adversarial"] = TALLY.to_dict()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    from tally import TALLY

    TALLY.add(getattr(node, "workeroutput", {}).get("adversarial", {}))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    from tally import TALLY

    for line in TALLY.summary():
        terminalreporter.write_line(line)
