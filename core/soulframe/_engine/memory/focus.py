"""The question the vector channel embeds: as asked, mixed with the question without the
names most chunks hold (``memory.query_focus``, ``memory.common_names``).

The keyword channel weighs a word by its rarity (BM25); the embedding model weighs every
word of a question alike, and a name heavily. A name that most chunks of a conversation
hold ("What countries has Kate visited?", in a chat with Kate) then pulls the question
towards the turns that merely say the name ("What about Kate?") and away from the ones that
answer it ("I have also visited Mexico"). So the question is embedded twice — as asked, and
without its names held by more than ``memory.common_names`` of the chunks the search can
see (the store counts them: :class:`~soulframe.CountingStore`) — and the two vectors are
mixed at ``memory.query_focus``. The question as asked stays in the mix: the name still
says whose turn answers ("where is Daniel's new home", when Maya moved too).

A name is a word written with a capital inside a sentence. Common words in general were
tried first: dropping every word most chunks hold did as well on conversations, but a day
of remembered notes is one chunk of ten notes, so everyday words ("week", "clean") are in
a third of the chunks while in one note each, and paraphrased notes were lost; and
FTS5's stemmer counts "one" as "on". The model weighs function words little anyway (a
fixed stopword list alone changed nothing). A script without capitals (Chinese, Arabic,
Hindi, ...) has no names here: its questions are embedded as asked.

Measured on REALTALK's tune half (docs/memory.md, "Common names in the question"): hybrid
recall@6 0.658 -> 0.704, the vector channel 0.507 -> 0.634, at a share of 0.3 (0.2: the
same; 0.5: 0.685) and a mix of 0.6 (0.3 / 0.5 / 0.7 / 0.8 / 1.0: 0.677 / 0.694 / 0.703 /
0.699 / 0.671).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..textsplit import has_unspaced

if TYPE_CHECKING:
    from ..model import CommonWords

#: a word as FTS5's unicode61 tokenizer splits text (letters and digits; ``_`` and
#: punctuation split), so what is counted is what the keyword search matches
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
#: a word with its possessive ("Kate's"): a dropped name takes its "'s" along
_WORD_AND_POSSESSIVE = re.compile(r"([^\W_]+)(?:['’]s\b)?", re.UNICODE)

#: below this many visible chunks a share says little (one chunk moves it by more than a
#: tenth) and six hits cover most of memory anyway: the question is embedded as asked
MIN_CHUNKS = 10


def question_names(question: str) -> list[str]:
    """The question's words written with a capital letter inside a sentence (names, mostly:
    "What countries has Kate visited?" gives ``kate``), lower-cased, without repeats. A
    sentence's first word is not one (every question starts with a capital), nor is "I",
    nor a word of a script without capitals (Chinese, Arabic, ...)."""
    out: list[str] = []
    for m in _WORD.finditer(question):
        w = m.group()
        if len(w) < 2 or not w[:1].isupper() or has_unspaced(w):  # "I" is no name
            continue
        before = question[: m.start()].rstrip()
        if not before or before[-1] in ".?!:;\"“«¿¡":
            continue
        out.append(w.lower())
    return list(dict.fromkeys(out))


def without_common_names(question: str, common: CommonWords) -> str | None:
    """``question`` without its names (:func:`question_names`) the store found common,
    spaces tidied; ``None`` when none is, when nothing would be left to embed, or when
    too few chunks are visible to tell."""
    if common.chunks < MIN_CHUNKS:
        return None
    drop = {w for w in question_names(question) if w in common.words}
    if not drop:
        return None
    kept = _WORD_AND_POSSESSIVE.sub(lambda m: "" if m.group(1).lower() in drop else m.group(), question)
    # the spaces and commas the dropped words leave behind
    kept = re.sub(r"\s+([,.;:?!])", r"\1", re.sub(r"\s+", " ", kept)).strip(" ,;:")
    if not _WORD.search(kept):
        return None
    return kept


def mixed(asked: Any, focused: Any, weight: float) -> Any:
    """``(1 - weight) * asked + weight * focused``, two unit vectors mixed and deliberately
    NOT normalised: its dot product with a passage is the same mix of the two cosines, on
    the scale the calibration's background was measured on. Normalised again, the mix of
    two close unit vectors is stretched and every cosine with it grows (unrelated
    questions of the calibration set then passed ``min_score``). A store that can only
    take a unit vector gets :func:`unit` of it, and its scores are multiplied back."""
    import numpy as np

    a = np.asarray(asked, dtype=np.float32).reshape(-1)
    b = np.asarray(focused, dtype=np.float32).reshape(-1)
    if a.shape != b.shape:
        return asked
    return ((1.0 - weight) * a + weight * b).astype(np.float32)


def unit(vector: Any) -> tuple[Any, float]:
    """``vector`` scaled to unit length, and its length (a store's cosine with the unit
    vector, times the length, is the dot product with ``vector``)."""
    import numpy as np

    v = np.asarray(vector, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(v))
    if norm <= 0 or abs(norm - 1.0) < 1e-6:
        return vector, 1.0
    return v / norm, norm
