"""``run_cli``: the real ``soulframe`` command line, in this process by default.

A ``python -m soulframe`` subprocess costs about a second (interpreter, plugins, click) on
a loaded two-core machine, and hundreds of tests run the CLI. In process, each call is
the same ``soulframe.cli.main`` a user's shell runs, with what a subprocess would have
given it rebuilt around the call and taken down after it:

- stdin empty (or ``input``) and not a terminal, stdout and stderr captured apart;
- the environment (``env`` added to ``os.environ``) and the working directory (``cwd``),
  both restored afterwards, with whatever a command set in ``os.environ`` undone;
- the interpreter's default warning filters (pytest's would show deprecation warnings a
  user never sees) and a fresh once-per-location registry;
- logging as a new process has it: the handler ``-v`` installs is removed, so the next
  call's ``-v`` writes to that call's stderr; the one module-level cache of file contents
  (the bootstrap files' reads) starts empty;
- an uncaught exception is exit code 1 with its traceback on stderr, as Python does.

``process=True`` runs a real subprocess instead. A test asks for it, with a comment saying
why, when the process itself is what it checks: what gets imported at start-up, a signal,
a terminal, output written by a child process, a crash's exit.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import traceback
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# The filters Python starts with (no -W, no PYTHONWARNINGS): what a user's process shows.
_DEFAULT_FILTERS = [
    ("default", DeprecationWarning, "__main__"),
    ("ignore", DeprecationWarning, None),
    ("ignore", PendingDeprecationWarning, None),
    ("ignore", ImportWarning, None),
    ("ignore", ResourceWarning, None),
]


def run_cli(*args: str, env: dict[str, str] | None = None, cwd: str | os.PathLike[str] | None = None,
            check: bool = False, input: str | None = None, process: bool = False,
            ) -> subprocess.CompletedProcess[str]:
    """Run ``soulframe ARGS`` as a user would and return its exit code, stdout and stderr
    (a :class:`subprocess.CompletedProcess`; ``check=True`` raises
    :class:`subprocess.CalledProcessError` on a non-zero exit). ``input`` is piped to
    stdin; without it stdin is empty, as under cron or CI, so a command that would ask
    must not wait for an answer."""
    if process:
        full_env = {**os.environ, **(env or {})}
        return subprocess.run([sys.executable, "-m", "soulframe", *args], capture_output=True,
                              input=input, stdin=subprocess.DEVNULL if input is None else None,
                              text=True, env=full_env, cwd=cwd, check=check, timeout=300)
    done = _in_process(list(args), env or {}, cwd, input)
    if check:
        done.check_returncode()
    return done


def _in_process(args: list[str], env: dict[str, str], cwd: str | os.PathLike[str] | None,
                input: str | None) -> subprocess.CompletedProcess[str]:
    from click.testing import CliRunner
    from soulframe.cli import main

    runner = CliRunner()
    code = 0
    with _like_a_new_process(env, cwd), runner.isolation(input=input) as (out, err, _):
        try:
            main(args)
        except SystemExit as exc:
            code = _exit_code(exc.code)
        except Exception:  # as the interpreter does: the traceback on stderr, exit 1
            traceback.print_exc(file=sys.stderr)
            code = 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
        stdout = out.getvalue().decode("utf-8", "replace")
        stderr = err.getvalue().decode("utf-8", "replace") if err is not None else ""
    return subprocess.CompletedProcess(["soulframe", *args], code, stdout, stderr)


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # sys.exit("message"): printed, exit 1
    return 1


@contextmanager
def _like_a_new_process(env: dict[str, str], cwd: str | os.PathLike[str] | None) -> Iterator[None]:
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    logger = logging.getLogger("soulframe")
    saved_logger = (logger.level, logger.propagate, list(logger.handlers))
    os.environ.update(env)
    # the bootstrap files' read cache (keyed by mtime, size and inode) lives as long as the
    # process: a file rewritten in place within one clock tick would be served stale
    source = sys.modules.get("soulframe_workspace.source")
    if source is not None:
        source.clear_cache()
    if cwd is not None:
        os.chdir(Path(cwd))
    try:
        with warnings.catch_warnings():  # restores showwarning, which main() replaces
            warnings.resetwarnings()
            for action, category, module in _DEFAULT_FILTERS:
                warnings.filterwarnings(action, category=category, module=module or "")
            yield
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        _reset_logging(logger, saved_logger)


def _reset_logging(logger: logging.Logger, saved: tuple[int, bool, list[logging.Handler]]) -> None:
    from soulframe._engine import logs

    # ``-v`` installs one handler per process, on the stderr of the moment: drop it so the
    # next call's ``-v`` writes to that call's stderr, as a fresh process would
    logs._handler = None
    level, propagate, handlers = saved
    logger.setLevel(level)
    logger.propagate = propagate
    logger.handlers[:] = handlers

