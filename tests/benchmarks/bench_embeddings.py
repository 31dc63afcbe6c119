"""Throughput of the offline embedding model (``local``: all-MiniLM-L6-v2, NumPy forward pass).

Run with ``tox -e bench``. Prints texts/s for 64 texts of 40 words (about 55-65 word pieces each), the figure DEPENDENCIES.md measured
at ~51 texts/s for a plain numpy forward pass and ~125 for torch on this 2-core machine.
The machine is shared, so each figure is the best of several runs.
"""

from __future__ import annotations

import random
import time

import pytest

pytestmark = pytest.mark.model

SENTENCES = [
    "The user prefers dark mode screenshots and asked for them in every bug report",
    "We agreed to ship the billing migration on Thursday after the load test passes",
    "Alice is allergic to peanuts so the team dinner moved to the sushi place downtown",
    "Remember to rotate the staging database credentials before the audit next month",
    "The flaky integration test was caused by a race between the cache warmer and cleanup",
    "Bob wants weekly summaries of open pull requests sent every Monday at nine",
    "Our deployment pipeline now runs the security scanner before building the images",
    "She mentioned that her daughter starts school in September and mornings are busy",
    "The quarterly report should compare churn against the same quarter last year",
    "Use the metric system for all recipes and convert temperatures to Celsius",
    "The printer on the third floor jams whenever someone prints double sided pages",
    "He likes concise answers with code examples rather than long explanations",
]


# technical notes split into many more word pieces per word; mixed 2:1 with SENTENCES they
# give ~65 pieces per 40 words, the size DEPENDENCIES.md's figures are for
DENSE_SENTENCES = [
    "PostgreSQL's pgvector HNSW index was rebuilt at 03:00 UTC after the v2.4.1 deploy; p95 latency fell to 212 ms.",
    "Kubernetes evicted the memcached-7f9c pod (OOMKilled, 512Mi limit) twice on Tuesday, 14 Nov.",
    "Dr. Okonkwo-Lindqvist prefers Zoom over Teams; timezone Europe/Stockholm, reachable 08:30-16:00 CET.",
    "The TypeScript monorepo's eslint-plugin-react-hooks upgrade broke useCallback memoization in dashboard.tsx.",
    "Reimbursement #A-1187 (EUR 349.90, Lufthansa LH2417 MUC-ARN) awaits approval from finance@acme.example.",
    "sqlite-vec's vec0 virtual table needs sqlean-py>=3.50; macOS pyenv builds lack enable_load_extension().",
]


def forty_word_texts(n: int, seed: int = 0, sentences: list[str] = SENTENCES) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for _ in range(n):
        words: list[str] = []
        while len(words) < 40:
            words.extend(rng.choice(sentences).split())
        texts.append(" ".join(words[:40]) + ".")
    return texts


def best_rate(fn, n_texts: int, repeats: int = 2) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return n_texts / best


@pytest.fixture(scope="module")
def provider():
    from soulframe_embeddings.local import LocalProvider

    p = LocalProvider()
    if not p.available():
        pytest.skip(p.unavailable_reason() or "no weights")
    p.embed_documents(["warm up"])
    return p


def test_bench_local_throughput(provider) -> None:
    texts = forty_word_texts(64)
    pieces = sum(provider.count_tokens(t) for t in texts) / len(texts)
    rate = best_rate(lambda: provider.embed_documents(texts), len(texts))
    print(f"\nlocal all-MiniLM-L6-v2: {rate:.0f} texts/s (64 texts of 40 words, "
          f"{pieces:.0f} word pieces avg, {provider.threads} worker threads)")
    single = LocalProviderOneThread(provider)
    rate1 = best_rate(lambda: single.embed_documents(texts), len(texts))
    print(f"local all-MiniLM-L6-v2, batches one after another: {rate1:.0f} texts/s")
    assert rate > 0


def test_bench_local_throughput_mixed_text(provider) -> None:
    texts = forty_word_texts(64, sentences=SENTENCES + DENSE_SENTENCES)
    pieces = sum(provider.count_tokens(t) for t in texts) / len(texts)
    rate = best_rate(lambda: provider.embed_documents(texts), len(texts))
    print(f"\nlocal all-MiniLM-L6-v2, mixed prose and technical notes: {rate:.0f} texts/s (64 texts of 40 words, "
          f"{pieces:.0f} word pieces avg)")


def LocalProviderOneThread(provider):
    from soulframe_embeddings.local import LocalProvider

    p = LocalProvider(threads=1)
    p._model = provider._model  # share the loaded weights
    return p


def test_bench_local_query_latency(provider) -> None:
    text = forty_word_texts(1, seed=1)[0]
    best = min(_timed(lambda: provider.embed_query(text)) for _ in range(20))
    print(f"\nlocal embed_query latency: {best * 1000:.1f} ms (40 words)")


def test_bench_local_long_text(provider) -> None:
    text = " ".join(forty_word_texts(20, seed=2))  # ~800 words: several 254-piece windows
    pieces = provider.count_tokens(text)
    rate = best_rate(lambda: provider.embed_documents([text]), 1)
    print(f"\nlocal long text: {pieces} word pieces in {1 / rate * 1000:.0f} ms "
          f"({pieces * rate:.0f} word pieces/s)")


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0
