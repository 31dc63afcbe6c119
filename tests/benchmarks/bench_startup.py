"""Start-up time of the light commands, beside a bare interpreter in the same run.

Target (issue: Foundation): `soulframe --version` and `soulframe plugins` start in under
300 ms on this machine and import neither numpy nor sqlite-vec nor psycopg.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

RUNS = 7


def timed(args: list[str]) -> float:
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run(args, check=True, capture_output=True)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def test_light_commands_start_fast(tmp_path) -> None:
    baseline = timed([sys.executable, "-c", "pass"])
    print(f"\n  python -c pass            {baseline * 1000:7.1f} ms (baseline)")
    for args in (["--version"], ["plugins"], ["-w", str(tmp_path), "prompt"]):
        t = timed([sys.executable, "-m", "soulframe", *args])
        print(f"  soulframe {' '.join(args[-1:]):15} {t * 1000:7.1f} ms  ({t / baseline:4.1f}x baseline,"
              f" {(t - baseline) * 1000:6.1f} ms of soulframe)")
        assert t < 0.300, f"soulframe {args} took {t * 1000:.0f} ms (target 300 ms)"
