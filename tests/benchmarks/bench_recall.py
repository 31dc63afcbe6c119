"""What recall tracking costs a search. Run with
``.venv/bin/pytest tests/benchmarks/bench_recall.py -o python_files=bench_*.py -s``.

Keyword-only search (the cheapest, so the counting shows most) over 300 daily logs, the
same varied queries with ``track=True`` and ``track=False``, interleaved; CPU medians.
Target: a tracked search costs at most 1.2x an untracked one (see conftest.py).
"""

from __future__ import annotations

import random
import statistics
import time
import warnings
from pathlib import Path
from typing import Any

from .bench_memory import WORDS, agent_for, make_workspace


def test_recall_tracking_overhead(tmp_path: Path, bench: Any) -> None:
    ws = make_workspace(tmp_path / "ws", 300)
    agent = agent_for(ws, tmp_path / "state", None)
    rng = random.Random(3)
    queries = [" ".join(rng.sample(WORDS, 3)) for _ in range(150)]
    on: list[float] = []
    off: list[float] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent.memory.sync()
        for q in queries[:10]:  # warm caches
            agent.memory.search(q, min_score=0, track=False)
        for i, q in enumerate(queries):
            # alternate which runs first: the second run of a query finds what the first
            # cached (keyword coverage of the same chunks), and would look cheaper
            order = ((True, on), (False, off)) if i % 2 else ((False, off), (True, on))
            for track, into in order:
                t = time.process_time()
                agent.memory.search(q, min_score=0, track=track, sync=False)
                into.append(time.process_time() - t)
    counted = sum(r.count for r in agent.store.recalls(10_000))
    agent.close()
    m_on, m_off = statistics.median(on), statistics.median(off)
    bench.info("recall tracking", f"{counted / len(queries):.1f} hits counted per search")
    assert counted >= len(queries)
    bench.speed("keyword search over 300 logs, tracked", m_on, m_off, target=1.2,
                baseline_name="untracked")
