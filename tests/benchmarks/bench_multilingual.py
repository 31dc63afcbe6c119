"""Memory in other languages: the keyword design measured, and the multilingual model's speed.

1. Keyword search in Chinese, Japanese and Korean at 20,000 chunks: the design chosen
   (each unspaced run indexed again as character pairs and characters, ``grams``) against
   the alternative of an FTS5 ``trigram`` table, which finds substrings of three or more
   characters through its index but a two-character word only by scanning every row with
   ``LIKE``. Printed: build time, file size, median query time for a two-character word
   and a four-character phrase. Asserted, as ratios in the same run: a two-character query
   for a word in a few notes is at least 3x faster than the trigram table's scan (which
   also cannot rank what it finds).
2. The multilingual model (when installed) against all-MiniLM-L6-v2 on the same texts:
   passages per second while indexing and milliseconds per query, on this machine's cores.

Run: ``pytest tests/benchmarks/bench_multilingual.py -o python_files=bench_*.py -s``.
"""

from __future__ import annotations

import importlib.util
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from soulframe._engine.memory.querying import query_terms
from soulframe._engine.model import ChunkInput, FileRecord

DATA = Path(__file__).resolve().parents[1] / "data" / "multilingual_eval"
N_CHUNKS = 20_000


def _eval_module() -> object:
    spec = importlib.util.spec_from_file_location("multilingual_build", DATA / "build.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cjk_chunks(n: int) -> list[str]:
    """Chunks of Chinese, Japanese and Korean small talk; each remembered fact in 3 of them
    (a word asked for is rare, as in a real memory)."""
    build = _eval_module()
    facts = [f[0] for lang in ("zh", "ja", "ko") for f in build.FACTS[lang]]  # type: ignore[attr-defined]
    talk = [s for lang in ("zh", "ja", "ko") for s in build.SMALL_TALK[lang]]  # type: ignore[attr-defined]
    rng = random.Random(5)
    chunks = [[f"- {ln}" for ln in rng.sample(talk, 6)] for _ in range(n)]
    for fact in facts:
        for i in rng.sample(range(n), 3):
            chunks[i].insert(rng.randint(0, 6), f"- {fact}")
    return ["\n".join(c) for c in chunks]


def median_ms(fn: Callable[[], object], runs: int = 30) -> float:
    fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def test_character_pairs_against_a_trigram_table(tmp_path: Path) -> None:
    import sqlean
    from soulframe_sqlite.store import SqliteStore

    chunks = cjk_chunks(N_CHUNKS)
    t = time.perf_counter()
    store = SqliteStore(tmp_path / "pairs.sqlite", sqlite_vec=False)
    for i in range(0, len(chunks), 500):
        store.replace_file(FileRecord(path=f"memory/{i}.md", hash=str(i)),
                           [ChunkInput(j, j, c, f"{i}-{j}") for j, c in enumerate(chunks[i:i + 500])])
    pairs_build = time.perf_counter() - t

    t = time.perf_counter()
    tri = sqlean.connect(str(tmp_path / "trigram.sqlite"), isolation_level=None)
    tri.execute("CREATE TABLE chunks (id INTEGER PRIMARY KEY, text TEXT)")
    tri.execute("CREATE VIRTUAL TABLE fts USING fts5(text, content='chunks', content_rowid='id', "
                "tokenize='trigram')")
    tri.execute("BEGIN")
    for i, c in enumerate(chunks, 1):
        tri.execute("INSERT INTO chunks VALUES (?, ?)", (i, c))
        tri.execute("INSERT INTO fts(rowid, text) VALUES (?, ?)", (i, c))
    tri.execute("COMMIT")
    trigram_build = time.perf_counter() - t

    def ours(q: str) -> Callable[[], object]:
        return lambda: store.search_text(query_terms(q), 10, include_private=True)

    def trigram(q: str) -> Callable[[], object]:
        if len(q) >= 3:
            sql = "SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY bm25(fts) LIMIT 10"
            return lambda: tri.execute(sql, ('"' + q + '"',)).fetchall()
        return lambda: tri.execute("SELECT id FROM chunks WHERE text LIKE ? LIMIT 10",
                                   ("%" + q + "%",)).fetchall()

    rows = []
    for q in ("钢琴", "合鍵", "월세", "少年宫学钢", "青い植木鉢"):
        rows.append((q, median_ms(ours(q)), median_ms(trigram(q))))
    size = lambda p: sum(f.stat().st_size for f in tmp_path.glob(p + "*"))  # noqa: E731
    print(f"\n{N_CHUNKS:,} CJK chunks: character pairs build {pairs_build:.1f} s, "
          f"{size('pairs.sqlite') / 1e6:.1f} MB; trigram build {trigram_build:.1f} s, "
          f"{size('trigram.sqlite') / 1e6:.1f} MB")
    for q, a, b in rows:
        print(f"  {q}: character pairs {a:.2f} ms, trigram {b:.2f} ms "
              f"({'LIKE scan' if len(q) < 3 else 'index'})")
    store.close()
    tri.close()
    two = [(a, b) for q, a, b in rows if len(q) == 2]
    assert all(b >= 3 * a for a, b in two), two


def test_multilingual_model_speed() -> None:
    from soulframe_embeddings.local import LocalProvider
    from soulframe_embeddings.multilingual import MultilingualProvider

    ml = MultilingualProvider()
    if not ml.available():
        pytest.skip(f"the multilingual model is not installed: {ml.unavailable_reason()}")
    texts = [c.replace("\n", " ") for c in cjk_chunks(64)]
    queries = ["孩子星期三学什么乐器", "留守のときどうやって家に入る", "내년부터 집세가 어떻게 되나"]
    out = {}
    for name, provider in (("multilingual-e5-small 4-bit", ml), ("all-MiniLM-L6-v2", LocalProvider())):
        if not provider.available():
            continue
        t = time.perf_counter()
        provider.embed_query("warm up")
        load = time.perf_counter() - t
        t = time.perf_counter()
        provider.embed_documents(texts)
        rate = len(texts) / (time.perf_counter() - t)
        query = statistics.median(
            [_timed(lambda q=q, p=provider: p.embed_query(q)) for q in queries * 3]) * 1000
        out[name] = (load, rate, query)
        print(f"\n{name}: load + first query {load:.2f} s, indexing {rate:.1f} passages/s "
              f"(~{len(texts[0])} characters each), one query {query:.1f} ms")
    assert out["multilingual-e5-small 4-bit"][1] > 0


def _timed(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t
