"""HTTP embedding providers: ``openai``, ``openai-compatible`` (LM Studio, Ollama, vLLM,
llama.cpp server...), ``gemini``; and ``none``.

Settings (flat keys of the ``[embedding]`` table): ``model``, ``base_url``, ``api_key`` /
``api_key_env``, ``batch_size``, ``dimensions``, ``timeout_s``, ``max_retries``. Requests
go out in batches of ``batch_size``; every vector comes back float32 and unit length
whatever the API returned. ``dimensions`` is known from config, from a table of the
default models, or after the first call (0 until then).
"""

from __future__ import annotations

import abc
import urllib.parse
from collections.abc import Sequence
from typing import Any

from soulframe.kit import (
    EmbeddingError,
    EmbeddingUnavailableError,
    RetryPolicy,
    Secret,
    post_json,
    redact_endpoint,
)

from .settings import api_key, setting
from .transport import EmbeddingHTTPError, check_url, endpoint

OPENAI_BASE_URL = "https://api.openai.com/v1"
OPENAI_DEFAULT_MODEL = "text-embedding-3-small"
GEMINI_BASE_URL = "https://generativelanguage.googleapis.com/v1beta"
GEMINI_DEFAULT_MODEL = "gemini-embedding-001"
GEMINI_MAX_BATCH = 100  # batchEmbedContents takes at most 100 requests

#: output sizes of well-known models, so ``dimensions`` is right before the first call
KNOWN_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
    "gemini-embedding-001": 3072,
    "text-embedding-004": 768,
}


class HTTPProvider(abc.ABC):
    """What the HTTP providers share: batching, normalising, learning ``dimensions``."""

    name: str = ""
    what: str = ""

    def __init__(self, config: Any, *, model: str | None, base_url: str | None,
                 key: Secret | None, key_source: str) -> None:
        self.model = model
        self.base_url = base_url
        self._key = key
        self._key_source = key_source
        self.batch_size = max(1, int(setting(config, "embedding.batch_size", 32)))
        self.timeout = float(setting(config, "embedding.timeout_s", 60.0))
        # a Retry-After past 30 s is an error: an indexing run should not stall on it
        self.retry = RetryPolicy(
            max_retries=int(setting(config, "embedding.max_retries", 4)), max_delay=30.0
        )
        requested = setting(config, "embedding.dimensions")
        self.requested_dimensions: int | None = int(requested) if requested else None
        self._dimensions = self.requested_dimensions or KNOWN_DIMENSIONS.get(model or "", 0)

    # ------------------------------------------------------------------ facts

    @property
    def dimensions(self) -> int:
        return self._dimensions

    @property
    def model_id(self) -> str:
        dims = f"@{self.requested_dimensions}" if self.requested_dimensions else ""
        return f"{self.name}:{self.model or '?'}{dims}"

    @abc.abstractmethod
    def unavailable_reason(self) -> str | None:
        """Why the provider cannot run (no key, no model), or ``None``."""

    def available(self) -> bool:
        return self.unavailable_reason() is None

    def describe(self) -> dict[str, Any]:
        shown = redact_endpoint(self.base_url) if self.base_url else None
        return {"endpoint": shown, "key": self._key_source if self._key else None}

    def __repr__(self) -> str:  # never the key
        shown = redact_endpoint(self.base_url) if self.base_url else None
        return (f"{type(self).__name__}(model={self.model!r}, base_url={shown!r}, "
                f"key={'set' if self._key else 'unset'})")

    # ------------------------------------------------------------------ embedding

    def embed_documents(self, texts: Sequence[str]) -> Any:
        return self._embed(texts, query=False)

    def embed_query(self, text: str) -> Any:
        return self._embed([text], query=True)[0]

    def _embed(self, texts: Sequence[str], *, query: bool) -> Any:
        import numpy as np

        if isinstance(texts, str):
            raise TypeError("embed_documents takes a list of texts, not one string")
        reason = self.unavailable_reason()
        if reason:
            raise EmbeddingUnavailableError(f"embedding provider {self.name!r}: {reason}")
        rows: list[Any] = []
        for start in range(0, len(texts), self._batch_limit()):
            batch = [str(t) for t in texts[start : start + self._batch_limit()]]
            vectors = self._request(batch, query=query)
            if len(vectors) != len(batch):
                raise EmbeddingError(f"{self.what}: {len(vectors)} vectors for {len(batch)} texts")
            rows.extend(vectors)
        if not rows:
            return np.zeros((0, self._dimensions), dtype=np.float32)
        try:
            arr = np.asarray(rows, dtype=np.float32)
        except (ValueError, TypeError) as exc:
            raise EmbeddingError(f"{self.what}: vectors of different lengths or non-numbers ({exc})") from None
        if arr.ndim != 2 or arr.shape[1] == 0 or not np.isfinite(arr).all():
            raise EmbeddingError(f"{self.what}: malformed vectors (shape {arr.shape})")
        if self.requested_dimensions and arr.shape[1] != self.requested_dimensions:
            raise EmbeddingError(
                f"{self.what}: got {arr.shape[1]}-dimensional vectors, embedding.dimensions = "
                f"{self.requested_dimensions}"
            )
        self._dimensions = int(arr.shape[1])
        norms = np.sqrt(np.einsum("ij,ij->i", arr, arr))[:, None]
        return (arr / np.maximum(norms, np.float32(1e-12))).astype(np.float32, copy=False)

    def _batch_limit(self) -> int:
        return self.batch_size

    def _post(self, url: str, payload: dict[str, Any], headers: dict[str, str]) -> Any:
        return post_json(url, payload, headers=headers, what=self.what, error=EmbeddingHTTPError,
                         timeout=self.timeout, retry=self.retry, secrets=(self._key,),
                         key_source=self._key_source if self._key else None,
                         hints={404: "check embedding.base_url and embedding.model"},
                         user_agent="soulframe-embeddings")

    @abc.abstractmethod
    def _request(self, batch: list[str], *, query: bool) -> list[Any]:
        """One API call for ``batch``: unit float32 vectors, in order."""


class OpenAIProvider(HTTPProvider):
    """``POST {base_url}/embeddings`` — OpenAI's API and everything that copies it."""

    def __init__(self, config: Any, *, compatible: bool = False) -> None:
        self.name = "openai-compatible" if compatible else "openai"
        self.what = "OpenAI-compatible embeddings" if compatible else "OpenAI embeddings"
        base = setting(config, "embedding.base_url")
        if compatible:
            # no default key: an OpenAI key must never be sent to some other server
            key, source = api_key(config, None)
            model = setting(config, "embedding.model")
        else:
            key, source = api_key(config, "OPENAI_API_KEY")
            model = setting(config, "embedding.model", OPENAI_DEFAULT_MODEL)
            base = base or OPENAI_BASE_URL
        base_url = check_url(str(base), "embedding.base_url") if base else None
        super().__init__(config, model=model, base_url=base_url, key=key, key_source=source)

    @property
    def model_id(self) -> str:
        base = super().model_id
        if self.name == "openai-compatible" and self.base_url:
            # two servers may serve different weights under one model name; the host
            # names the server (credentials in the URL do not, and the id is stored)
            parts = urllib.parse.urlsplit(self.base_url)
            host = parts.netloc.rpartition("@")[2]
            return f"{base}@{host}"
        return base

    def unavailable_reason(self) -> str | None:
        if self.name == "openai":
            if self._key is None:
                return (f"no API key ({self._key_source} is not set); set OPENAI_API_KEY, store it with "
                        "`soulframe keys set openai`, or set embedding.api_key_env / embedding.api_key")
            return None
        if not self.base_url:
            return "embedding.base_url is not set (e.g. http://localhost:11434/v1 for Ollama, http://localhost:1234/v1 for LM Studio)"
        if not self.model:
            return "embedding.model is not set (the name the server knows the model by, e.g. nomic-embed-text)"
        return None

    def _request(self, batch: list[str], *, query: bool) -> list[Any]:
        payload: dict[str, Any] = {"model": self.model, "input": batch, "encoding_format": "float"}
        if self.requested_dimensions:
            payload["dimensions"] = self.requested_dimensions
        headers = {"Authorization": f"Bearer {self._key.reveal()}"} if self._key else {}
        reply = self._post(endpoint(self.base_url or "", "embeddings"), payload, headers)
        try:
            items = sorted(reply["data"], key=lambda d: d.get("index", 0))
            return [item["embedding"] for item in items]
        except (KeyError, TypeError, AttributeError):
            raise EmbeddingError(f"{self.what}: unexpected reply from {redact_endpoint(self.base_url or '')}: no data[].embedding") from None


class GeminiProvider(HTTPProvider):
    """``POST {base}/models/{model}:batchEmbedContents`` with the key in ``x-goog-api-key``."""

    name = "gemini"
    what = "Gemini embeddings"

    def __init__(self, config: Any) -> None:
        key, source = api_key(config, "GEMINI_API_KEY")
        model = str(setting(config, "embedding.model", GEMINI_DEFAULT_MODEL)).removeprefix("models/")
        base = check_url(str(setting(config, "embedding.base_url", GEMINI_BASE_URL)), "embedding.base_url")
        super().__init__(config, model=model, base_url=base, key=key, key_source=source)

    def unavailable_reason(self) -> str | None:
        if self._key is None:
            return (f"no API key ({self._key_source} is not set); set GEMINI_API_KEY, store it with "
                    "`soulframe keys set gemini`, or set embedding.api_key_env / embedding.api_key")
        return None

    def _batch_limit(self) -> int:
        return min(self.batch_size, GEMINI_MAX_BATCH)

    def _request(self, batch: list[str], *, query: bool) -> list[Any]:
        assert self._key is not None
        model = f"models/{self.model}"
        requests = []
        for text in batch:
            req: dict[str, Any] = {
                "model": model,
                "content": {"parts": [{"text": text}]},
                # Gemini embeds documents and queries asymmetrically for retrieval
                "taskType": "RETRIEVAL_QUERY" if query else "RETRIEVAL_DOCUMENT",
            }
            if self.requested_dimensions:
                req["outputDimensionality"] = self.requested_dimensions
            requests.append(req)
        url = endpoint(self.base_url or "", f"{model}:batchEmbedContents")
        reply = self._post(url, {"requests": requests}, {"x-goog-api-key": self._key.reveal()})
        try:
            return [e["values"] for e in reply["embeddings"]]
        except (KeyError, TypeError):
            raise EmbeddingError(f"{self.what}: unexpected reply from {redact_endpoint(url)}: no embeddings[].values") from None


class NullProvider:
    """``embedding.provider = "none"``: semantic search switched off on purpose."""

    name = "none"
    model_id = "none"
    dimensions = 0

    def available(self) -> bool:
        return False

    def unavailable_reason(self) -> str:
        return "embedding.provider is 'none': semantic search is switched off"

    def embed_documents(self, texts: Sequence[str]) -> Any:
        raise EmbeddingUnavailableError(self.unavailable_reason())

    def embed_query(self, text: str) -> Any:
        raise EmbeddingUnavailableError(self.unavailable_reason())

