"""What a memory search keeps between searches, owned in one place: :class:`Searcher`.

:class:`~soulframe._engine.memory.index.MemoryIndex` holds one (``index.searcher``); the
search itself (:mod:`.search`) asks it for the calibrator, the worker thread the keyword
channel runs on and the question's vector. Nothing here imports numpy or the calibration
code until a search needs them: a prompt build makes a memory index but never searches."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

    from ..model import EmbeddingProvider
    from .calibration import Background, Calibrator

#: questions whose vectors are kept (oldest dropped first)
QUERY_VECTORS = 512


class Searcher:
    """The calibrator, the keyword channel's worker thread and the query-vector cache of
    one memory index."""

    def __init__(self) -> None:
        #: how far vector scores sit from chance for this model (:mod:`.calibration`)
        self._calibrator: Calibrator | None = None
        self._executor: ThreadPoolExecutor | None = None
        #: (model key, query text) -> vector, so repeated searches (eval, a chatty model)
        #: embed each question once
        self._query_vectors: dict[tuple[str | None, str], Any] = {}

    def calibrator(self) -> Calibrator:
        """The calibrator, made at the first search that calibrates."""
        if self._calibrator is None:
            from .calibration import Calibrator

            self._calibrator = Calibrator()
        return self._calibrator

    def background(self, model_key: str, language: str) -> Background | None:
        """The background the last calibration used for this model and language, if any
        (the vector channel has just measured it; nothing is measured here)."""
        if self._calibrator is None:
            return None
        return self._calibrator.known(model_key, language)

    def pool(self) -> ThreadPoolExecutor:
        """The one worker thread the keyword channel runs on beside the vector scan."""
        if self._executor is None:
            from concurrent.futures import ThreadPoolExecutor

            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="soulframe-memory")
        return self._executor

    def embed_query(self, provider: EmbeddingProvider, model_key: str | None, query: str) -> Any:
        """The vector of ``query``, embedded once per model."""
        key = (model_key, query)
        qv = self._query_vectors.get(key)
        if qv is None:
            from ..embedding import checked_query_vector

            qv = checked_query_vector(provider, provider.embed_query(query))
            if len(self._query_vectors) >= QUERY_VECTORS:
                self._query_vectors.pop(next(iter(self._query_vectors)))
            self._query_vectors[key] = qv
        return qv

    def question_vector(self, provider: EmbeddingProvider, model_key: str | None, query: str,
                        focused: str | None, weight: float) -> Any:
        """What the vector channel scores with: ``query``'s vector, or, given ``focused``
        (the question without its common words, :mod:`.focus`), the two mixed at
        ``weight`` (:func:`.focus.mixed`: not a unit vector)."""
        qv = self.embed_query(provider, model_key, query)
        if not focused or weight <= 0:
            return qv
        from .focus import mixed

        return mixed(qv, self.embed_query(provider, model_key, focused), weight)

    def share_query_vectors(self, other: Searcher) -> None:
        """Use ``other``'s query-vector cache (an evaluation over many agents of one model
        embeds each question once)."""
        self._query_vectors = other._query_vectors
