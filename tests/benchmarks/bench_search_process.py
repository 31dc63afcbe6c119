"""`soulframe memory search` as a whole process, beside `soulframe --version`, and the
offline model's load time cold (no weight cache) and warm (memory-mapped cache).

Target (issue: memory as users get it): a whole-process `memory search` with the model takes
at most 3x the median of `soulframe --version` on the same machine. The machine is shared,
so the figures are medians, printed as ratios against the baseline measured in the same run.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from soulframe_embeddings.local import LocalProvider

from .conftest import bytecode_env, process_timing

pytestmark = pytest.mark.skipif(not LocalProvider().available(), reason="offline model not installed")

def test_memory_search_process_beside_version(tmp_path: Path, bench: Any) -> None:
    env = bytecode_env()
    soulframe = [sys.executable, "-m", "soulframe"]
    ws = tmp_path / "agent"
    subprocess.run([*soulframe, "init", str(ws)], check=True, capture_output=True, env=env)
    for note in ("Tomas keeps his spare house key under the blue flowerpot",
                 "Dr Okafor moved the knee appointment to 3 December",
                 "Lena switched teams and now reports to Marcus"):
        subprocess.run([*soulframe, "-w", str(ws), "memory", "remember", note], check=True,
                       capture_output=True, env=env)
    search = [*soulframe, "-w", str(ws), "memory", "search", "where is the spare key"]
    t = process_timing({"version": [*soulframe, "--version"], "hybrid": search,
                        "keyword": [*search, "--channel", "keyword"]}, runs=7, env=env)
    bench.info("memory search process (keyword)", f"{t['keyword'].cpu / t['version'].cpu:.2f}x --version (CPU)")
    bench.speed("memory search (hybrid, model) process", t["hybrid"].cpu, t["version"].cpu, target=3,
                baseline_name="soulframe --version")


def _load_seconds(cache_dir: Path | None) -> float:
    """Median CPU seconds of loading the model and embedding a first query in a fresh
    process (threads included; the imports are outside the timing: both cases pay them)."""
    code = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from soulframe_embeddings.local import LocalProvider\n"
        "import numpy, tokenizers\n"
        "t = time.process_time()\n"
        "arg = sys.argv[1]\n"
        "p = LocalProvider(weight_cache=arg != '-', cache_dir=None if arg == '-' else Path(arg))\n"
        "p.embed_query('warm up the first forward pass too')\n"
        "print(time.process_time() - t, p.weight_cache_status)\n"
    )
    samples = []
    for _ in range(5):
        out = subprocess.run([sys.executable, "-c", code, str(cache_dir) if cache_dir else "-"],
                             capture_output=True, text=True)
        # say why when it fails (a CalledProcessError alone hid the reason)
        assert out.returncode == 0, f"model load exited {out.returncode}:\n{out.stderr[-3000:]}"
        samples.append(float(out.stdout.split()[0]))
    return statistics.median(samples)


def test_model_load_cold_and_warm(tmp_path: Path, bench: Any) -> None:
    cold = _load_seconds(None)
    LocalProvider(cache_dir=tmp_path).embed_query("build the cache")
    warm = _load_seconds(tmp_path)
    bench.info("model load + first query, no weight cache", f"{cold * 1000:.0f} ms CPU")
    bench.speed("model load + first query, memory-mapped cache", warm, cold, target=0.5,
                baseline_name="without the cache")
