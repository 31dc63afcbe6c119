"""Calibrating a model's cosine similarity, so that ``memory.min_score`` means the same for
every embedding provider and model.

A raw cosine is not a probability of relevance, and its scale depends on the model:
all-MiniLM-L6-v2 scores a paraphrase of a note at 0.2-0.4 and two unrelated sentences at
about 0.05 ± 0.08; a larger model's unrelated pairs may sit at 0.2 and its paraphrases at
0.6. A fixed floor on raw cosine (the old ``min_score`` 0.35) therefore dropped the right
note for MiniLM while meaning something else for every other model.

The calibration measures each model's **background**: the cosine between questions and
notes that have nothing to do with each other (a fixed probe set below, every question
against every note on another topic), embedded by the model itself once and remembered in
the store (``calibration:<model key>`` in its meta table). A vector score is then how far
above that background it stands, in background standard deviations, mapped linearly to
0..1::

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
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from ..model import EmbeddingProvider, Store

#: a calibrated score of 1.0 is this many background deviations above the background mean;
#: min_score 0.35 then falls at 0.35 * Z_FULL = 2.1 deviations (measured: docs/memory.md)
Z_FULL = 6.0
#: where the linear scale starts bending towards 1 (never reached: no ties at the top)
KNEE = 0.5
#: bumped when the probe set or the method changes, so stored backgrounds are recomputed
VERSION = 1

# Probe questions and notes, one topic each (question i is about note i). Only pairs on
# different topics are used: they are what "unrelated" looks like to the model.
PROBE_QUESTIONS: tuple[str, ...] = (
    "when does the bakery open on sundays",
    "what did the vet say about the cat's teeth",
    "how much was the electricity bill last month",
    "who is picking up the kids from school on friday",
    "what is the password for the printer settings",
    "where did we park at the stadium",
    "which hotel did we book in Edinburgh",
    "how long should the lasagne stay in the oven",
    "what did the mechanic find wrong with the brakes",
    "when is the dentist check-up",
    "what size are the curtains for the bedroom",
    "who recommended the accountant",
    "what time is the train to Leeds",
    "how many tiles do we need for the bathroom",
    "what is my sister's new address",
    "which medicine was the doctor worried about",
    "when do the clocks change this year",
    "what did the teacher say at parents' evening",
    "how do I restart the heating timer",
    "what was the score in the chess match",
)
PROBE_NOTES: tuple[str, ...] = (
    "The bakery on Elm Street opens at 8 on Sundays.",
    "Vet says Mittens needs two teeth removed before spring.",
    "The electricity bill for October came to 84 pounds.",
    "Grandpa collects the children from school every Friday.",
    "Printer admin password is taped under the paper tray.",
    "We left the car in the north lot, row F, at the stadium.",
    "Booked two nights at the Balmoral Hotel in Edinburgh.",
    "Lasagne needs 45 minutes at 180 degrees, covered for the first half.",
    "Garage found the rear brake pads worn down to the metal.",
    "Dental check-up is on the 12th at 9:30.",
    "Bedroom curtains must be 228 cm wide and 137 cm drop.",
    "Hannah from work recommended her accountant, Mr Greaves.",
    "The 07:42 to Leeds leaves from platform 4.",
    "The bathroom floor needs about 60 tiles plus ten spare.",
    "My sister moved to 14 Orchard Road last week.",
    "The doctor wants to review the blood pressure tablets.",
    "The clocks go back on the last Sunday of October.",
    "Ms Clarke said Leo reads well above his age at parents' evening.",
    "Hold the boost button for five seconds to reset the heating timer.",
    "Won the club chess match 3-1 on Tuesday night.",
)


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


def measure_background(provider: EmbeddingProvider, store: Store | None = None) -> Background:
    """Embed the probe set with ``provider`` (the notes through the store's embedding cache
    when there is a store) and measure its background."""
    import numpy as np

    questions = np.asarray([provider.embed_query(q) for q in PROBE_QUESTIONS], dtype=np.float32)
    if store is not None:
        from ..embedding import EmbeddingCache

        notes = EmbeddingCache(store).embed_documents(provider, list(PROBE_NOTES))
    else:
        notes = provider.embed_documents(list(PROBE_NOTES))
    return background_of(questions, notes)


def meta_key(model_key: str) -> str:
    return f"calibration:{model_key}"


class Calibrator:
    """The background of each model an index has used, measured once per model and kept in
    the store's meta table (so a short-lived CLI search reads it instead of embedding the
    probe set again)."""

    def __init__(self) -> None:
        self._known: dict[str, Background] = {}

    def background(self, provider: EmbeddingProvider, model_key: str, store: Store) -> Background:
        found = self._known.get(model_key)
        if found is not None:
            return found
        found = Background.from_json(store.get_meta(meta_key(model_key)))
        if found is None:
            found = measure_background(provider, store)
            store.set_meta(meta_key(model_key), found.to_json())
        self._known[model_key] = found
        return found


def calibrate_hits(hits: Sequence[Any], background: Background) -> list[Any]:
    """Vector hits (``StoredChunk``) with their cosine replaced by the calibrated score."""
    return [attrs.evolve(h, score=background.calibrate(h.score)) for h in hits]
