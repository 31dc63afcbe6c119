"""Calibrating a model's cosine similarity, so that ``memory.min_score`` means the same for
every embedding provider and model.

A raw cosine is not a probability of relevance, and its scale depends on the model:
all-MiniLM-L6-v2 scores a paraphrase of a note at 0.2-0.4 and two unrelated sentences at
about 0.05 ± 0.08; a larger model's unrelated pairs may sit at 0.2 and its paraphrases at
0.6. A fixed floor on raw cosine (the old ``min_score`` 0.35) therefore dropped the right
note for MiniLM while meaning something else for every other model.

The calibration measures each model's **background**: the cosine between questions and
notes that have nothing to do with each other (a fixed probe set, every question against
every note on another topic), embedded by the model itself once and remembered in the store
(``calibration:<model key>`` in its meta table). The background depends on the language as
much as on the model — multilingual-e5-small puts unrelated English pairs at 0.75 ± 0.02 and
unrelated Chinese ones at 0.82 ± 0.02, so against the English background every Chinese
question "matched" something — so there is a probe set per language
(:mod:`.calibration_probes`: English, Chinese, Japanese, Korean, Vietnamese) and a question is
measured against the background of its own language (:func:`probe_language`; kept as
``calibration:<model key>:<language>``, English under the key it always had). Against the
question's language × the note's language instead, cross-language notes passed too easily
and recall fell on the tuning half (docs/memory.md, "Calibrated scores in other languages").
A vector score is then how far above that background it stands, in background standard
deviations, mapped linearly to 0..1::

    x = max(0, (cosine - mean) / (Z_FULL * sd))
    calibrated = x                                   for x <= KNEE
                 KNEE + (1 - KNEE) (1 - e^-(x - KNEE) / (1 - KNEE))   above it

so 0 is "as similar as unrelated text usually is", the scale is linear up to ``KNEE`` (where
every ``min_score`` worth setting lies) and then bends towards 1 without reaching it. A hard
clip at 1 ("``Z_FULL`` deviations and more") made every close match score 1.000: over 500
daily logs all six hits tied, ranked by path, and fusion could no longer order them. ``Z_FULL`` is chosen so that the default ``min_score`` 0.35 sits at the point measured
best on the tuning half of tests/data/paraphrase_eval (the right note returned, unrelated
questions not; its held-apart half is reported beside it): see docs/memory.md, "Calibrated
scores", for the options measured and the numbers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs

from .calibration_probes import PROBES

if TYPE_CHECKING:
    from ..model import EmbeddingProvider, Store

#: a calibrated score of 1.0 is this many background deviations above the background mean;
#: min_score 0.35 then falls at 0.35 * Z_FULL = 2.1 deviations (measured: docs/memory.md)
Z_FULL = 6.0
#: where the linear scale starts bending towards 1 (never reached: no ties at the top)
KNEE = 0.5
#: bumped when the probe set or the method changes, so stored backgrounds are recomputed
VERSION = 1

#: the English probe questions and notes (:mod:`.calibration_probes` holds every language's)
PROBE_QUESTIONS, PROBE_NOTES = PROBES["en"]
#: the languages with a probe set; a query in any other is measured against English's
PROBE_LANGUAGES: tuple[str, ...] = tuple(PROBES)

_KANA = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9d]")
_HANGUL = re.compile(r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# letters only Vietnamese uses among Latin-script languages: ă, ơ, ư, đ, and the vowels
# with a tone mark stacked on (Latin Extended Additional, U+1EA0-U+1EF9)
_VIETNAMESE = re.compile(r"[ăĂơƠưƯđĐ\u1ea0-\u1ef9]")
_LATIN_WORD = re.compile(r"[^\W\d_]+")


def probe_language(text: str) -> str:
    """The probe set a question is measured against: ``ja`` when it has kana, ``ko`` for
    Hangul, ``zh`` for Chinese characters without kana, ``vi`` when it has a letter only
    Vietnamese uses and a third of its Latin words carry diacritics, else ``en`` (the script with the most letters decides a mixed
    question: an English question naming 北京 stays English)."""
    kana, hangul, han = (len(r.findall(text)) for r in (_KANA, _HANGUL, _HAN))
    latin = [w for w in _LATIN_WORD.findall(text) if not (_KANA.search(w) or _HANGUL.search(w)
                                                         or _HAN.search(w))]
    latin_letters = sum(len(w) for w in latin)
    # a CJK character carries about as much as a short word: weigh it as two Latin letters
    cjk = 2 * (kana + hangul + han)
    if cjk > latin_letters:
        if hangul >= kana + han:
            return "ko"
        return "ja" if kana else "zh"
    # Vietnamese marks most words (làm sao gọi cho dì Hoa); an English question naming
    # Nguyễn does not
    if any(_VIETNAMESE.search(w) for w in latin) and 3 * sum(1 for w in latin if not w.isascii()) >= len(latin):
        return "vi"
    return "en"


@attrs.frozen
class Background:
    """A model's cosine between unrelated questions and notes: mean and spread."""

    mean: float
    sd: float
    pairs: int

    def calibrate(self, cosine: float) -> float:
        """``cosine`` -> 0..1: how far above the background it stands (see the module)."""
        spread = max(self.sd, 1e-3) * Z_FULL
        return soft_top(max(0.0, (cosine - self.mean) / spread))

    def raw_threshold(self, min_score: float) -> float:
        """The raw cosine that a calibrated ``min_score`` corresponds to for this model."""
        return self.mean + min_score * Z_FULL * max(self.sd, 1e-3)

    def to_json(self) -> str:
        return json.dumps({"version": VERSION, **attrs.asdict(self)})

    @classmethod
    def from_json(cls, text: str | None) -> Background | None:
        if not text:
            return None
        try:
            data = json.loads(text)
            if data.get("version") != VERSION:
                return None
            return cls(float(data["mean"]), float(data["sd"]), int(data["pairs"]))
        except (ValueError, KeyError, TypeError, AttributeError):
            return None


def soft_top(x: float) -> float:
    """``x`` unchanged up to :data:`KNEE`, then bent smoothly towards 1 (strictly
    increasing, always below 1)."""
    import math

    if x <= KNEE:
        return x
    room = 1.0 - KNEE
    return KNEE + room * (1.0 - math.exp(-(x - KNEE) / room))


def background_of(question_vectors: Any, note_vectors: Any) -> Background:
    """The background from probe vectors: every question against every note on another
    topic (question ``i`` and note ``i`` share a topic and are left out)."""
    import numpy as np

    q = np.asarray(question_vectors, dtype=np.float32)
    n = np.asarray(note_vectors, dtype=np.float32)
    sims = q @ n.T
    mask = ~np.eye(sims.shape[0], sims.shape[1], dtype=bool)
    values = sims[mask]
    return Background(float(values.mean()), float(values.std()), int(values.size))


def measure_background(provider: EmbeddingProvider, store: Store | None = None,
                       language: str = "en") -> Background:
    """Embed the probe set of ``language`` with ``provider`` (the notes through the store's
    embedding cache when there is a store) and measure its background."""
    import numpy as np

    probe_questions, probe_notes = PROBES[language]
    questions = np.asarray([provider.embed_query(q) for q in probe_questions], dtype=np.float32)
    if store is not None:
        from ..embedding import EmbeddingCache

        notes = EmbeddingCache(store).embed_documents(provider, list(probe_notes))
    else:
        notes = provider.embed_documents(list(probe_notes))
    return background_of(questions, notes)


def meta_key(model_key: str, language: str = "en") -> str:
    # English keeps the key it always had: the backgrounds stored in existing indexes stay valid
    return f"calibration:{model_key}" if language == "en" else f"calibration:{model_key}:{language}"


class Calibrator:
    """The background of each model an index has used, per question language: measured once
    per model and language (when the first question in that language comes) and kept in the
    store's meta table (so a short-lived CLI search reads it instead of embedding the probe
    set again)."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, str], Background] = {}

    def known(self, model_key: str, language: str = "en") -> Background | None:
        """The background already measured or read for this model and language, or None
        (nothing is measured: a snippet's focus reuses what the vector channel used)."""
        return self._known.get((model_key, language))

    def background(self, provider: EmbeddingProvider, model_key: str, store: Store,
                   language: str = "en") -> Background:
        found = self._known.get((model_key, language))
        if found is not None:
            return found
        key = meta_key(model_key, language)
        found = Background.from_json(store.get_meta(key))
        if found is None:
            found = measure_background(provider, store, language)
            store.set_meta(key, found.to_json())
        self._known[(model_key, language)] = found
        return found

    def calibrate(self, provider: EmbeddingProvider, model_key: str, store: Store, query: str,
                  hits: Sequence[Any]) -> list[Any]:
        """Vector hits (``StoredChunk``) with their cosine replaced by the calibrated score,
        against the model's background in the question's language (:func:`probe_language`):
        multilingual-e5 puts two unrelated Chinese sentences at 0.82, two English ones at
        0.75, so an English background let unrelated Chinese notes through."""
        if not hits:
            return []
        return calibrate_hits(hits, self.background(provider, model_key, store, probe_language(query)))


def calibrate_hits(hits: Sequence[Any], background: Background) -> list[Any]:
    """Vector hits (``StoredChunk``) with their cosine replaced by the calibrated score."""
    from ..model import StoredChunk

    calibrate = background.calibrate
    # built directly, not with attrs.evolve (which inspects the class for every hit: a
    # search calibrates ~100 candidates)
    return [StoredChunk(h.id, h.path, h.start_line, h.end_line, h.text, calibrate(h.score),
                        h.private, h.day, h.scope) if type(h) is StoredChunk
            else attrs.evolve(h, score=calibrate(h.score)) for h in hits]
