"""The ``local`` provider: all-MiniLM-L6-v2 in-process, offline, without torch.

Only the standard library and attrs are imported here; numpy, tokenizers and safetensors
are imported on the first embed (``available()`` and ``model_id`` never need them).

Long texts are never truncated. The model sees at most 256 word pieces, ``[CLS]`` and
``[SEP]`` included, so :attr:`LocalProvider.max_tokens` is 254. A text with more word pieces
is cut into consecutive windows of 254 that the model sees whole; each window is
mean-pooled, and the text's vector is the token-weighted mean of its windows, renormalised
(for a text that fits this is exactly sentence-transformers' result). An indexer that wants
a hit to point at the right part of a long chunk splits it first, with
:meth:`LocalProvider.count_tokens` against :attr:`LocalProvider.max_tokens`.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from soulframe.kit import EmbeddingError, EmbeddingUnavailableError

from . import weights as _weights
from .settings import setting

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

    from soulframe import Vector

    from .minilm import BertEncoder
    from .querytokens import QueryTokenizer

#: word pieces per forward batch (batch x padded length); bounds the attention scores'
#: memory (batch x 12 heads x length^2 floats: 25 MB per worker at 256-long windows)
TOKEN_BUDGET = 2048
#: jobs up to this many word pieces run with a single-threaded BLAS (see ``_map``)
SMALL_JOB_TOKENS = 256
#: at most this many texts per call are tokenized without the tokenizers library
QUICK_TEXTS = 4


def _auto_threads() -> int:
    return max(1, min(os.cpu_count() or 1, 4))


class LocalProvider:
    """all-MiniLM-L6-v2 (384 dimensions) run by a NumPy forward pass."""

    name = "local"

    def __init__(
        self,
        model_path: str | None = None,
        *,
        batch_size: int = 32,
        threads: int = 0,
        weight_cache: bool = True,
        cache_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self._weights = _weights.locate(model_path)
        #: memory-map the arranged weights from ``cache_dir`` (default: the user cache
        #: directory); see :mod:`.weightcache`
        self.weight_cache = bool(weight_cache)
        self.cache_dir = None if cache_dir is None else Path(cache_dir)
        #: what the weight cache did on load: "hit", "built", "rebuilt", "off", "unwritable"
        self.weight_cache_status: str | None = None
        # the cache asks for this on every call; for a model_path it stats and reads files
        self._model_id = self._weights.model_id
        self.batch_size = max(1, int(batch_size))
        self.threads = int(threads) if threads and threads > 0 else _auto_threads()
        self._lock = threading.Lock()
        self._model: _Model | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._config_json: dict[str, Any] | None = None
        self._max_tokens: int | None = None

    @classmethod
    def from_config(cls, config: Any) -> LocalProvider:
        return cls(
            setting(config, "embedding.local.model_path"),
            batch_size=int(setting(config, "embedding.batch_size", 32)),
            threads=int(setting(config, "embedding.local.threads", 0)),
        )

    # ------------------------------------------------------------------ cheap facts

    @property
    def weights(self) -> _weights.Weights:
        return self._weights

    @property
    def model_id(self) -> str:
        return self._model_id

    def available(self) -> bool:
        return self._weights.found

    def unavailable_reason(self) -> str | None:
        return self._weights.problem

    def _read_config(self) -> dict[str, Any]:
        if self._config_json is None:
            self._config_json = {}
            if self._weights.found and self._weights.path is not None:
                try:
                    self._config_json = json.loads((self._weights.path / "config.json").read_text("utf-8"))
                except (OSError, ValueError):
                    pass
        return self._config_json

    @property
    def dimensions(self) -> int:
        """384 for MiniLM; read from config.json without loading weights (0 if not found)."""
        return int(self._read_config().get("hidden_size", 0))

    @property
    def max_tokens(self) -> int:
        """Word pieces (as :meth:`count_tokens` counts them) the model sees in one window."""
        if self._max_tokens is None:
            self._max_tokens = self._read_max_tokens()
        return self._max_tokens

    def _read_max_tokens(self) -> int:
        window = 256
        path = self._weights.path
        if path is not None:
            try:
                window = int(json.loads((path / "sentence_bert_config.json").read_text("utf-8"))["max_seq_length"])
            except (OSError, ValueError, KeyError, TypeError):
                pass
        window = min(window, int(self._read_config().get("max_position_embeddings", 512)))
        return window - 2  # [CLS] and [SEP]

    def describe(self) -> dict[str, Any]:
        """Where the weights are, for ``soulframe models list``."""
        return {
            "weights": str(self._weights.path) if self._weights.path else None,
            "source": self._weights.source,
            "max_tokens": self.max_tokens if self.available() else None,
        }

    def __repr__(self) -> str:
        return f"LocalProvider(model_id={self.model_id!r}, weights={self._weights.source!r})"

    # ------------------------------------------------------------------ the model

    def _load(self) -> _Model:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    if not self._weights.found:
                        raise EmbeddingUnavailableError(self._weights.problem or _weights.INSTALL_HINT)
                    cache_dir = None
                    if self.weight_cache:
                        from .weightcache import default_dir

                        cache_dir = self.cache_dir or default_dir()
                    self._model, self.weight_cache_status = _Model.load(self._weights, cache_dir)
        return self._model

    def count_tokens(self, text: str) -> int:
        """Word pieces in ``text``, without ``[CLS]``/``[SEP]``: compare with :attr:`max_tokens`."""
        return len(self._load().tokenizer.encode(text, add_special_tokens=False).ids)

    def embed_query(self, text: str) -> Vector:
        vec: Vector = self.embed_documents([text])[0]
        return vec

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        """Unit-length float32 vectors, one row per text, in order; see the module docstring
        for texts longer than :attr:`max_tokens`."""
        if isinstance(texts, str):
            raise TypeError("embed_documents takes a list of texts, not one string")
        model = self._load()  # first: a missing model is the error to report
        import numpy as np

        dims = model.encoder.dimensions
        if not texts:
            return np.zeros((0, dims), dtype=np.float32)
        span = self.max_tokens
        encodings = model.token_ids([str(t) for t in texts])
        # windows: (text index, word-piece ids with [CLS] ... [SEP])
        windows: list[tuple[int, list[int]]] = []
        for i, ids in enumerate(encodings):
            for start in range(0, max(len(ids), 1), span):
                windows.append((i, [model.cls_id, *ids[start : start + span], model.sep_id]))
        # longest first: similar lengths share a batch, so little padding is computed, and the
        # largest buffers are allocated first
        order = sorted(range(len(windows)), key=lambda w: -len(windows[w][1]))
        # at least one batch per worker thread when there is enough to share
        per_batch = max(1, min(self.batch_size, -(-len(windows) // self.threads)))
        batches: list[list[int]] = []
        current: list[int] = []
        for w in order:
            longest = len(windows[current[0]][1]) if current else len(windows[w][1])
            if current and (len(current) >= per_batch or (len(current) + 1) * longest > TOKEN_BUDGET):
                batches.append(current)
                current = []
            current.append(w)
        if current:
            batches.append(current)

        def run(batch: list[int]) -> Any:
            length = len(windows[batch[0]][1])
            ids_arr = np.zeros((len(batch), length), dtype=np.int64)
            mask = np.zeros((len(batch), length), dtype=np.float32)
            for row, w in enumerate(batch):
                wids = windows[w][1]
                ids_arr[row, : len(wids)] = wids
                mask[row, : len(wids)] = 1.0
            return model.encoder.embed(ids_arr, mask, normalize=False)

        pooled = np.zeros((len(windows), dims), dtype=np.float32)
        tokens = sum(len(w[1]) for w in windows)
        for batch, out in zip(batches, self._map(run, batches, tokens), strict=True):
            pooled[batch] = out
        # token-weighted mean of each text's windows; one window -> that window's mean pool
        weights = np.array([len(w[1]) for w in windows], dtype=np.float32)
        owners = np.array([w[0] for w in windows], dtype=np.int64)
        sums = np.zeros((len(texts), dims), dtype=np.float32)
        np.add.at(sums, owners, pooled * weights[:, None])
        from .minilm import l2_normalize

        result: Vector = l2_normalize(sums)
        if not np.isfinite(result).all():
            raise EmbeddingError("the local model produced non-finite values (corrupt weights?)")
        return result

    def _map(self, fn: Any, batches: list[list[int]], tokens: int) -> list[Any]:
        from .blas import single_threaded_blas

        if tokens <= SMALL_JOB_TOKENS:
            # a query or a few short texts: matrices this small gain nothing from BLAS
            # threads, and waking them costs more than the work (measured: ~25 ms vs
            # 0.1-0.7 s for one query on a busy 2-core machine)
            with single_threaded_blas():
                return [fn(b) for b in batches]
        if self.threads <= 1 or len(batches) < 2:
            return [fn(b) for b in batches]

        with single_threaded_blas() as limited:
            if not limited:  # a BLAS we cannot tune: threads would fight over the cores
                return [fn(b) for b in batches]
            if self._pool is None:
                from concurrent.futures import ThreadPoolExecutor

                with self._lock:
                    if self._pool is None:
                        self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="soulframe-embed")
            return list(self._pool.map(fn, batches))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None


class _Model:
    """The loaded encoder and tokenizers. The ``tokenizers`` library is loaded on first
    use: a short ASCII query is tokenized without it (:mod:`.querytokens`)."""

    def __init__(self, path: Path, encoder: BertEncoder, query_tokenizer: QueryTokenizer | None) -> None:
        self.path = path
        self.encoder = encoder
        self.query_tokenizer = query_tokenizer
        self._tokenizer: Any = None
        self._lock = threading.Lock()
        if query_tokenizer is not None:
            self.cls_id = query_tokenizer.ids["[CLS]"]
            self.sep_id = query_tokenizer.ids["[SEP]"]
        else:
            self.cls_id, self.sep_id = self._special_ids(self.tokenizer)

    @property
    def tokenizer(self) -> Any:
        if self._tokenizer is None:
            with self._lock:
                if self._tokenizer is None:
                    self._tokenizer = self._load_tokenizer()
        return self._tokenizer

    def _load_tokenizer(self) -> Any:
        try:
            from tokenizers import Tokenizer
        except ImportError as exc:  # pragma: no cover - core dependencies
            raise EmbeddingUnavailableError(
                f"the local embedding model needs {exc.name}: pip install numpy tokenizers safetensors"
            ) from exc
        try:
            tokenizer = Tokenizer.from_file(str(self.path / "tokenizer.json"))
        except Exception as exc:
            raise EmbeddingError(f"cannot load the embedding model's tokenizer from {self.path}: {exc}") from exc
        # the file pads/truncates to 128 for training; windows are handled here instead
        tokenizer.no_truncation()
        tokenizer.no_padding()
        return tokenizer

    def _special_ids(self, tokenizer: Any) -> tuple[int, int]:
        cls_id = tokenizer.token_to_id("[CLS]")
        sep_id = tokenizer.token_to_id("[SEP]")
        if cls_id is None or sep_id is None:
            raise EmbeddingError(f"{self.path / 'tokenizer.json'}: no [CLS]/[SEP] tokens (not a BERT tokenizer)")
        return int(cls_id), int(sep_id)

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        """Word-piece ids of each text, without [CLS]/[SEP]."""
        if self.query_tokenizer is not None and len(texts) <= QUICK_TEXTS:
            quick = [self.query_tokenizer.encode(t) for t in texts]
            if all(ids is not None for ids in quick):
                return [ids for ids in quick if ids is not None]
        return [list(e.ids) for e in self.tokenizer.encode_batch(texts, add_special_tokens=False)]

    @classmethod
    def load(cls, weights: _weights.Weights, cache_dir: Path | None) -> tuple[_Model, str]:
        """The model, and what the weight cache did (see :mod:`.weightcache`)."""
        assert weights.path is not None
        try:
            from . import querytokens, weightcache
            from .minilm import BertConfig, BertEncoder
        except ImportError as exc:  # pragma: no cover - core dependencies
            raise EmbeddingUnavailableError(
                f"the local embedding model needs {exc.name}: pip install numpy tokenizers safetensors"
            ) from exc
        try:
            config = BertConfig.from_json(weights.path / "config.json")
            cached = weightcache.load(weights.path, config, directory=cache_dir,
                                      expected_sha256=weights.sha256)
            encoder = BertEncoder.from_arranged(config, cached.tensors)
        except weightcache.WeightsMismatchError as exc:
            raise EmbeddingUnavailableError(str(exc)) from exc
        except Exception as exc:
            raise EmbeddingError(f"cannot load the embedding model from {weights.path}: {exc}") from exc
        return cls(weights.path, encoder, querytokens.load(weights.path, cache_dir)), cached.status
