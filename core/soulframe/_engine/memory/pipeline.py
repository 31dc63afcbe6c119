"""The memory pipeline's plug points: the chunker that cuts files (``register_chunkers``,
selected by ``memory.chunker``) and the re-ranker run on fused candidates
(``register_rerankers``, selected by ``memory.reranker``).

A re-ranker is allowed to fail: an exception or a reply slower than
``memory.rerank_timeout_s`` leaves the fused order in place and the search says so in its
notice (fail open), because a search that returns the fused hits is always better than one
that returns nothing.
"""

from __future__ import annotations

import concurrent.futures
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from ..agentcache import cache_of
from ..model import (
    CHUNKERS,
    RERANKERS,
    Candidate,
    Chunk,
    Chunker,
    Reranker,
    SoulframeError,
    UnknownNameError,
)
from ..plugins import build

if TYPE_CHECKING:
    from ..model import AgentLike
    from .fusion import Fused

log = logging.getLogger("soulframe.memory")

#: ``memory.reranker`` value that turns re-ranking off
NO_RERANKER = "none"


def chunker(agent: AgentLike) -> Chunker:
    """The chunker ``memory.chunker`` names, built once per agent."""
    name = str(agent.config.get("memory.chunker"))
    cached = cache_of(agent).chunker
    if cached is not None and cached[0] == name:
        return cached[1]
    built = build(agent, CHUNKERS, agent.select(CHUNKERS), Chunker)
    cache_of(agent).chunker = (name, built)
    return built


def chunker_signature(agent: AgentLike) -> str:
    """The selected chunker and chunk size: stored chunks cut with others are cut again."""
    return f"{chunker(agent).name}:{int(agent.config.get('memory.chunk_max_chars'))}"


#: how :func:`chunk` turns a file into indexed text beyond the chunker itself (NFC,
#: provenance cut, noise blanked, secrets masked). Bump it when that changes: an index made
#: the old way is cut again on its next sync, so an upgrade does not keep, say, a secret
#: an older release indexed unmasked.
INDEXED_TEXT_VERSION = 1

#: the store meta key holding :func:`indexed_text_signature` of the index's text
INDEXED_TEXT_KEY = "indexed_text"


def indexed_text_signature() -> str:
    """The version above and a digest of the secret patterns: a pattern added in a release
    (a new token format) is masked in files indexed before it as well."""
    import hashlib

    from ..redaction import SECRET_PATTERNS

    patterns = "\n".join(f"{name}\t{pat.pattern}\t{pat.flags}" for name, pat in SECRET_PATTERNS)
    digest = hashlib.sha256(patterns.encode("utf-8")).hexdigest()[:12]
    return f"{INDEXED_TEXT_VERSION}:{digest}"


def chunk(agent: AgentLike, text: str, path: str) -> list[Chunk]:
    """``text`` cut by the selected chunker, with the chunker's promise checked: every chunk
    has text and a 1-based, inclusive, in-order line range. Provenance comments
    (:mod:`soulframe._engine.memory.provenance`) are cut first: they are not content, and cutting
    them keeps every line where it is. The text is indexed in NFC. Secrets are masked too
    (:func:`soulframe._engine.redaction.mask_found`, which keeps line breaks): the index — its text,
    its keyword index, the text sent to an embedding API — never holds one."""
    import unicodedata

    from ..redaction import mask_found
    from .provenance import strip

    # NFC: a note typed on macOS (NFD: "e" + a combining accent) is found by a query typed
    # anywhere else; normalising changes no line break, so line numbers stay right
    text = mask_found(unicodedata.normalize("NFC", text))
    out: list[Chunk] = []
    for c in chunker(agent).chunk(strip(text), path):
        if not c.text.strip():
            continue
        if c.start_line < 1 or c.end_line < c.start_line:
            raise ValueError(f"chunker {chunker(agent).name!r} returned lines "
                             f"{c.start_line}-{c.end_line} for {path}")
        out.append(c if c.path == path else attrs.evolve(c, path=path))
    return out


def reranker(agent: AgentLike) -> Reranker | None:
    """The re-ranker ``memory.reranker`` names, or ``None`` when it is ``"none"``."""
    name = str(agent.config.get("memory.reranker"))
    if name == NO_RERANKER:
        return None
    cached = cache_of(agent).reranker
    if cached is not None and cached[0] == name:
        return cached[1]
    built = build(agent, RERANKERS, agent.select(RERANKERS), Reranker)
    cache_of(agent).reranker = (name, built)
    return built


@attrs.frozen
class RerankOutcome:
    fused: list[Fused]
    #: why the re-ranker's order was not used (``None`` when it was, or none is configured)
    notice: str | None = None


def rerank(agent: AgentLike, query: str, fused: list[Fused]) -> RerankOutcome:
    """Re-score the best ``memory.rerank_candidates`` fused candidates with the selected
    re-ranker; the rest keep their place after them. Fails open (see the module docstring)."""
    try:
        model = reranker(agent)
    except UnknownNameError:
        raise  # memory.reranker names nothing: a setting to fix, not a re-ranker failing
    except SoulframeError as exc:
        log.warning("%s; fused order kept", exc)
        return RerankOutcome(fused, f"{exc}; fused order kept")
    if model is None or not fused:
        return RerankOutcome(fused)
    limit = int(agent.config.get("memory.rerank_candidates"))
    head, tail = fused[:limit], fused[limit:]
    candidates = [
        Candidate(path=f.chunk.path, start_line=f.chunk.start_line, end_line=f.chunk.end_line,
                  text=f.chunk.text, score=f.score)
        for f in head
    ]
    timeout = float(agent.config.get("memory.rerank_timeout_s"))
    name = model.name
    # a thread of its own, so a hung re-ranker costs the search its timeout, not the search
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="soulframe-rerank")
    try:
        scores = pool.submit(model.rerank, query, candidates).result(timeout=timeout or None)
    except concurrent.futures.TimeoutError:
        return RerankOutcome(fused, f"re-ranker {name!r} took longer than "
                                    f"memory.rerank_timeout_s = {timeout:g} s; fused order kept")
    except Exception as exc:
        log.warning("re-ranker %r failed: %s: %s", name, type(exc).__name__, exc)
        return RerankOutcome(fused, f"re-ranker {name!r} failed ({type(exc).__name__}: {exc}); "
                                    "fused order kept")
    finally:
        pool.shutdown(wait=False)
    checked = _checked(scores, len(head))
    if checked is None:
        return RerankOutcome(fused, f"re-ranker {name!r} returned a score list that does not "
                                    "match its candidates; fused order kept")
    for f, s in zip(head, checked, strict=True):
        f.rerank_score = s
        f.score = s
    head.sort(key=lambda f: -f.score)
    return RerankOutcome(head + tail)


def _checked(scores: Sequence[float], n: int) -> list[float] | None:
    try:
        out = [float(s) for s in scores]
    except (TypeError, ValueError):
        return None
    if len(out) != n or any(s != s for s in out):  # NaN never compares equal to itself
        return None
    return [min(1.0, max(0.0, s)) for s in out]
