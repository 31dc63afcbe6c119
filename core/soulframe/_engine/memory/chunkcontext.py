"""A vector hit scored with its whole chunk as well as its best passage
(``memory.chunk_context``).

A chunk is embedded as passages of ~160 characters (:mod:`.passages`) and the store scores
it by its best one: sharp for a note, but in a conversation a turn's meaning lies partly in
the turns around it ("every Sunday, rain or shine" answers "do you still go hiking?"), and
a passage holds one or two turns. So a candidate's score becomes
``(1 - w) * best passage + w * cos(question, the chunk's mean vector)`` — the mean comes
from the store (:meth:`~soulframe.Store.chunk_vectors`, the protocol's own method), for the
vector channel's candidates only.

Measured on REALTALK's tune half (docs/memory.md, "The retrieval unit"): the vector
channel's recall@6 rose from 0.469 to 0.495-0.500 at weights 0.3-0.6 and hybrid recall from
0.643 to 0.643-0.650 (0.650 at 0.5), and with every fusion weight tried (0.646-0.656)
where without it a lower keyword weight lost (0.625). Mixing the chunk's meaning into each
stored passage vector instead did as well there, but inflated the cosines past the
calibration's knee and left hybrid below its own vector channel on the generated
conversations. A chunk holding list items keeps its best passage's score: remembered notes
are independent facts, and averaged with nineteen others of the same day a paraphrase of
one no longer found it (the dilution passages were chosen to end).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..model import StoredChunk
from .passages import LIST_MARKERS

if TYPE_CHECKING:
    from ..model import Store

#: a Markdown list item: a chunk holding one is scored by its best passage alone
#: (the rule :func:`.passages.passages` uses to give a list item a passage of its own)
_LIST_ITEM = re.compile(r"(?m)^\s*(?:" + "|".join(map(re.escape, LIST_MARKERS)) + ")")


def with_chunk_context(store: Store, query_vector: Any, hits: Sequence[StoredChunk],
                       weight: float) -> list[StoredChunk]:
    """``hits`` (raw cosines, best first) with each running-text chunk's score blended with
    its mean vector's cosine at ``weight``, best first again (ties keep the store's order)."""
    if weight <= 0 or not hits:
        return list(hits)
    ids = [h.id for h in hits if not holds_list_items(h.text)]
    if not ids:
        return list(hits)
    import numpy as np

    means = store.chunk_vectors(ids)
    q = np.asarray(query_vector, dtype=np.float32).reshape(-1)
    usable = [cid for cid in ids if cid in means and len(means[cid]) == q.shape[0]]
    if not usable:
        return list(hits)
    whole = dict(zip(usable, (np.stack([means[cid] for cid in usable]) @ q).tolist(), strict=True))
    out: list[StoredChunk] = []
    for h in hits:
        cosine = whole.get(h.id)
        if cosine is None:
            out.append(h)
        else:
            out.append(StoredChunk(h.id, h.path, h.start_line, h.end_line, h.text,
                                   (1.0 - weight) * h.score + weight * cosine,
                                   h.private, h.day, h.scope))
    out.sort(key=lambda h: -h.score)
    return out


@functools.lru_cache(maxsize=8192)
def holds_list_items(text: str) -> bool:
    """Whether a chunk holds a Markdown list item (cached: the same candidates come back
    search after search)."""
    return _LIST_ITEM.search(text) is not None
