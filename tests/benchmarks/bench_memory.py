"""Memory indexing and search speed (``tox -e bench``; the figures and targets are listed in
the table at the end of the run, see conftest.py). Each target is a ratio to a baseline
measured in the same run:

* indexing with the default model beside the model's raw throughput on exactly the passages
  the indexer embeds: the indexer's overhead (chunking, hashing, SQLite writes, the cache)
  stays within 25 %;
* the first index of daily logs (60, ``SOULFRAME_BENCH_LOGS``; the issue measured 500) costs
  at most 1.5x what embedding each of its chunks whole would (one vector per chunk, what
  v0.1 embedded), the same chunks with the same model: passages (one vector per list item
  or ~160 characters, kept for recall, docs/memory.md) must not make indexing much dearer;
* a no-change re-sync of 1,000 files costs at most 8x a bare ``lstat`` walk of the same files
  (privacy checks are per directory; only links are resolved);
* hybrid search over 100,000 chunks (``SOULFRAME_BENCH_CHUNKS``) at most 2x a bare numpy
  brute-force scan of the same vectors (the query's vector is cached, as for a repeated
  question);
* a search in a 20,000-file workspace at most 5x the same search in a 200-file one: a search
  does not walk the tree (docs/memory.md, "When a search re-reads the files");
* a new process's first load of 30,000 vectors (``SOULFRAME_BENCH_VECTORS``) at most 1.75x a
  bare fetch of the same rows: every `soulframe memory search` pays it (fetching the ids and
  hashes first, then the rows, made it 2.7x).
"""

from __future__ import annotations

import random
import time
import warnings
from pathlib import Path
from typing import Any

import pytest
from soulframe._engine.agent import Agent
from soulframe._engine.config import load_config

from .conftest import interleaved, timed

WORDS = (
    "dentist deploy lease kayak heron grafana portal billing vet biscuit marathon invoice sister "
    "flight hotel budget meeting review design doc migration incident canary rollback dashboard "
    "screenshot allergy recipe garden bicycle climbing book club school payroll tax insurance "
    "printer password backup laptop monitor kitchen plumber landlord rent car tires oil train"
).split()


def daily_log(rng: random.Random, day: int, entries: int = 14) -> str:
    lines = [f"# 2026-{1 + day // 28:02d}-{1 + day % 28:02d}", ""]
    for i in range(entries):
        if i % 5 == 0:
            lines += ["", f"## {9 + i // 2:02d}:{(i * 7) % 60:02d} — conversation", ""]
        words = [rng.choice(WORDS) for _ in range(rng.randint(8, 22))]
        lines.append(f"- {' '.join(words).capitalize()}.")
    return "\n".join(lines) + "\n"


def make_workspace(root: Path, files: int, seed: int = 1, entries: int = 14) -> Path:
    rng = random.Random(seed)
    (root / "memory").mkdir(parents=True)
    for d in range(files):
        (root / "memory" / f"log-{d:05d}.md").write_text(daily_log(rng, d, entries))
    return root


def agent_for(ws: Path, state: Path, provider: Any | None) -> Agent:
    cfg = load_config(search=False, workspace=ws, overrides={
        "state_dir": str(state), "embedding.provider": "local" if provider else "none"})
    agent = Agent(cfg)
    if provider is not None:
        agent.__dict__["embedder"] = provider  # the same loaded model for every run
    return agent


@pytest.fixture(scope="module")
def provider() -> Any:
    from soulframe_embeddings.local import LocalProvider

    p = LocalProvider()
    if not p.available():
        pytest.skip(f"offline model not installed: {p.unavailable_reason()}")
    p.embed_documents(["warm up the model"])  # load weights outside the timings
    return p


def test_indexing_throughput_and_overhead(tmp_path: Path, provider: Any, bench: Any) -> None:
    ws = make_workspace(tmp_path / "ws", 24)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = iter(range(100))

        def keyword_only() -> None:
            a = agent_for(ws, tmp_path / f"kw{next(runs)}", None)
            keyword_only.report = a.memory.sync()  # type: ignore[attr-defined]
            a.close()

        kw = timed(keyword_only, runs=3)
    chunks = keyword_only.report.chunks  # type: ignore[attr-defined]

    # the passages the indexer embeds, computed the indexer's way
    probe = agent_for(ws, tmp_path / "probe", provider)
    from soulframe._engine.memory.passages import passage_windows
    from soulframe_memory.chunking import chunk_text

    passages: list[str] = []
    for f in probe.memory.files():
        for ch in chunk_text(f.abspath.read_text(), 1000):
            passages.extend(passage_windows(probe.config, ch.text, provider))
    probe.close()

    def index_with_model() -> None:
        a = agent_for(ws, tmp_path / f"model{next(runs)}", provider)  # fresh index, empty cache
        report = a.memory.sync()
        assert report.embedded == len(set(passages))
        a.close()

    indexed, raw = interleaved(index_with_model, lambda: provider.embed_documents(passages), runs=2)
    bench.info("indexing, keyword-only", f"{chunks / kw.cpu:.0f} chunks/s ({chunks} chunks, 24 files)")
    bench.info("indexing with all-MiniLM-L6-v2", f"{chunks / indexed.cpu:.1f} chunks/s of CPU, "
               f"model alone {len(passages) / raw.cpu:.0f} passages/s")
    bench.speed("indexing with the model (24 files)", indexed.cpu, raw.cpu, target=1.25,
                baseline_name="the model alone on its passages")


def test_first_index_of_daily_logs_vs_whole_chunks(tmp_path: Path, provider: Any, bench: Any) -> None:
    """A first index (empty index, empty embedding cache) of N daily logs with the model,
    beside the model alone embedding the same chunks whole. The model's cost grows with the
    word pieces it reads, not with how many vectors they make, so passages cost about what
    whole chunks do; what they add is per-passage work (hashing, the cache, more rows)."""
    import os

    n = int(os.environ.get("SOULFRAME_BENCH_LOGS", "60"))
    ws = make_workspace(tmp_path / "ws", n)
    runs = iter(range(100))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kw = agent_for(ws, tmp_path / "kw", None)
        kw.memory.sync()
        chunks = [r[0] for r in kw.store.conn.execute("SELECT text FROM chunks ORDER BY id")]  # type: ignore[attr-defined]
        kw.close()

        def first_index() -> None:
            a = agent_for(ws, tmp_path / f"first{next(runs)}", provider)  # a new index, an empty cache
            first_index.report = a.memory.sync()  # type: ignore[attr-defined]
            a.close()

        indexed, whole = interleaved(first_index, lambda: provider.embed_documents(chunks), runs=2)
    report = first_index.report  # type: ignore[attr-defined]
    assert report.chunks == len(chunks) and report.embedded > 0
    bench.info(f"first index of {n} daily logs", f"{len(chunks)} chunks as {report.embedded} passages "
               f"({report.embedded / len(chunks):.1f} per chunk): {indexed.cpu:.1f} s CPU "
               f"({len(chunks) / indexed.cpu:.1f} chunks/s; whole chunks {len(chunks) / whole.cpu:.1f}/s); "
               f"wall {indexed.wall:.1f} s, ~{indexed.wall * 500 / n:.0f} s for 500 logs at this rate")
    bench.speed(f"first index of {n} daily logs", indexed.cpu, whole.cpu, target=1.5,
                baseline_name="the model on its chunks whole")


def test_no_change_resync_of_1000_files(tmp_path: Path, bench: Any) -> None:
    import os

    ws = make_workspace(tmp_path / "ws", 1000)
    a = agent_for(ws, tmp_path / "state", None)
    mem = ws / "memory"
    # files written an hour ago, as a workspace left alone: one written in the last
    # seconds is hashed again by the next sync (a same-size edit in its clock tick)
    hour_ago = time.time() - 3600
    for entry in os.scandir(mem):
        os.utime(entry.path, (hour_ago, hour_ago))

    def lstat_walk() -> None:
        for entry in os.scandir(mem):
            entry.stat(follow_symlinks=False)

    def resync() -> None:
        r = a.memory.sync()
        assert r.unchanged == 1000 and not r.changed_anything

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = a.memory.sync()
        sync, walk = interleaved(resync, lstat_walk, runs=15)
    a.close()
    bench.info("first sync of 1,000 files (keyword-only)", f"{first.seconds:.2f} s")
    bench.speed("no-change re-sync, 1,000 files", sync.cpu, walk.cpu, target=8,
                baseline_name="a bare lstat walk")


def realistic_chunks(n: int, seed: int = 7) -> list[str]:
    """Chunks of 3-8 real memory lines (from tests/data/memory_eval), shuffled: word
    frequencies like a real memory's, unlike uniform random words."""
    data = Path(__file__).resolve().parents[1] / "data" / "memory_eval" / "workspace"
    lines = [ln.strip() for p in sorted(data.rglob("*.md")) for ln in p.read_text().splitlines()
             if ln.strip() and not ln.startswith("#")]
    rng = random.Random(seed)
    return ["\n".join(rng.choice(lines) for _ in range(rng.randint(3, 8))) for _ in range(n)]


def test_hybrid_search_over_100k_chunks_vs_numpy_scan(tmp_path: Path, provider: Any, bench: Any) -> None:
    import json
    import os

    import numpy as np
    from soulframe._engine.model import ChunkInput, FileRecord

    n, dims, per_file = int(os.environ.get("SOULFRAME_BENCH_CHUNKS", "100000")), 384, 500
    texts = realistic_chunks(n)
    nrng = np.random.default_rng(7)
    ws = tmp_path / "ws"
    ws.mkdir()
    a = agent_for(ws, tmp_path / "state", provider)
    store = a.store
    t = time.perf_counter()
    for f in range(n // per_file):
        vecs = nrng.standard_normal((per_file, dims), dtype=np.float32)  # one vector per chunk
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        chunks = [ChunkInput(i + 1, i + 1, texts[f * per_file + i], f"{f}-{i}", (vecs[i],))
                  for i in range(per_file)]
        store.replace_file(FileRecord(f"memory/bulk-{f:04d}.md", str(f)), chunks)
    build = time.perf_counter() - t

    golden = Path(__file__).resolve().parents[1] / "data" / "memory_eval" / "golden.jsonl"
    queries = [json.loads(line)["query"] for line in golden.read_text().splitlines()[:20]]
    memory = a.memory
    qvecs = [memory.searcher.embed_query(provider, memory.model_key(), q) for q in queries]
    memory.search(queries[0], sync=False)  # loads the matrix once

    matrix = np.ascontiguousarray(store._vectors().matrix)  # the same vectors, bare
    turn = iter(range(10**6))

    def scan() -> None:
        qv = qvecs[next(turn) % len(qvecs)]
        s = matrix @ qv
        top = np.argpartition(-s, 6)[:6]
        top[np.argsort(-s[top])]

    def hybrid() -> None:
        hits = memory.search(queries[next(turn) % len(queries)], sync=False, min_score=0)
        assert len(hits) == 6

    # the channels run in parallel threads: wall time is what a user waits (CPU time would
    # add them up). Medians of interleaved runs: a busy moment slows both alike (the fastest
    # runs would favour the single call, which fits in one time slice more often)
    h, b = interleaved(hybrid, scan, runs=40)
    a.close()
    bench.info(f"{n:,} chunks stored", f"in {build:.1f} s; fastest hybrid {h.best * 1000:.1f} ms, "
               f"fastest numpy scan {b.best * 1000:.1f} ms; CPU {h.cpu * 1000:.1f} / {b.cpu * 1000:.1f} ms")
    bench.speed(f"hybrid search, {n:,} chunks", h.wall, b.wall, target=2,
                baseline_name="a bare numpy scan")


def test_search_cost_does_not_grow_with_the_workspace(tmp_path: Path, bench: Any) -> None:
    """The same keyword search in a 20,000-file and a 200-file workspace, in process (what a
    long-lived ``serve`` does per call), after indexing: a search checks directory mtimes
    and the recently changed files instead of walking the tree."""
    import os

    big_n = int(os.environ.get("SOULFRAME_BENCH_FILES", "20000"))
    small_n = big_n // 100
    agents = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in (small_n, big_n):
            ws = make_workspace(tmp_path / f"ws{n}", n, entries=3)
            # the query's words sit in three files of each workspace, as a name or a place
            # would: the search's own work is the same, only the workspace around it grows
            for d in (1, n // 2, n - 2):
                with open(ws / "memory" / f"log-{d:05d}.md", "a") as fh:
                    fh.write("- Orla rescheduled the pottery workshop to Thursday\n")
            old = time.time() - 3600  # a workspace not written this very second
            for p in (ws / "memory").iterdir():
                os.utime(p, (old, old))
            os.utime(ws / "memory", (old, old))
            agents[n] = agent_for(ws, tmp_path / f"state{n}", None)
            t = time.perf_counter()
            agents[n].memory.sync()
            bench.info(f"first index of {n:,} files (keyword-only)", f"{time.perf_counter() - t:.1f} s")

        def search(n: int) -> None:
            hits = agents[n].memory.search("Orla pottery workshop", min_score=0)
            assert len(hits) == 3

        search(small_n), search(big_n)
        big, small = interleaved(lambda: search(big_n), lambda: search(small_n), runs=15)
    for a in agents.values():
        a.close()
    bench.speed(f"search in {big_n:,} files (sync on)", big.cpu, small.cpu, target=5,
                baseline_name=f"the same in {small_n:,}")


def test_first_load_of_the_vectors_vs_a_bare_fetch(tmp_path: Path, bench: Any) -> None:
    import os

    import numpy as np
    from soulframe._engine.model import ChunkInput, FileRecord
    from soulframe_sqlite.vectors import _ROWS_SQL, VectorMatrix

    n, dims, per_file = int(os.environ.get("SOULFRAME_BENCH_VECTORS", "30000")), 384, 100
    a = agent_for(tmp_path / "ws", tmp_path / "state", None)
    store = a.store
    nrng = np.random.default_rng(3)
    for f in range(n // per_file):
        vecs = nrng.standard_normal((per_file, dims), dtype=np.float32)
        store.replace_file(FileRecord(f"memory/{f:04d}.md", str(f)),
                           [ChunkInput(i + 1, i + 1, f"note {f} {i}", f"{f}-{i}", (vecs[i],)) for i in range(per_file)])
    conn = store.conn  # type: ignore[attr-defined]

    def first_load() -> None:  # what a new process does on its first vector search
        m = VectorMatrix()
        m.refresh(conn, "1", dims)
        assert len(m) == n

    def bare_fetch() -> None:
        assert len(conn.execute(_ROWS_SQL + " ORDER BY v.id").fetchall()) == n

    load, fetch = interleaved(first_load, bare_fetch, runs=7)
    a.close()
    bench.speed(f"first load of {n:,} vectors", load.cpu, fetch.cpu, target=1.75,
                baseline_name="a bare fetch of the rows")
