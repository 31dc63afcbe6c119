"""Start-up of the light commands as processes (``tox -e bench``; see conftest.py).

Targets: ``soulframe prompt`` (a real workspace) and ``soulframe plugins`` each cost at most
2x ``soulframe --version``, measured in the same run, interleaved, as CPU time of the child
process (wall time is printed too: on a shared machine it mostly measures the other jobs).
``--version`` itself is shown beside ``python -c pass``. None of them may import numpy,
sqlite-vec, psycopg or the model (tests/core/prompt/test_prompt_cli.py checks that).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from prompt_support import example_agent

from .conftest import bytecode_env, process_timing


def test_light_commands_start_fast(tmp_path: Path, bench: Any) -> None:
    agent = example_agent(tmp_path)
    sf = [sys.executable, "-m", "soulframe"]
    t = process_timing({
        "pass": [sys.executable, "-c", "pass"],
        "version": [*sf, "--version"],
        "plugins": [*sf, "plugins"],
        "prompt": [*sf, "-w", str(agent.root), "prompt"],
    }, runs=9, env={**bytecode_env(), "SOULFRAME_HOME": str(tmp_path / "home")})  # state stays here
    for key, timing in t.items():
        bench.info(f"process: {key}", f"{timing.cpu * 1000:.1f} ms CPU, {timing.wall * 1000:.1f} ms wall (medians)")
    bench.info("soulframe --version", f"{t['version'].cpu / t['pass'].cpu:.1f}x python -c pass (CPU)")
    bench.speed("soulframe plugins (process)", t["plugins"].cpu, t["version"].cpu, target=2,
                baseline_name="soulframe --version")
    bench.speed("soulframe prompt (process)", t["prompt"].cpu, t["version"].cpu, target=2,
                baseline_name="soulframe --version")
