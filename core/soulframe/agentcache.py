"""What the engine builds once per agent and reuses on every prompt: :class:`AgentCache`.

Its own module so that the agent protocol (:class:`soulframe.model.AgentLike`) can name it
without importing the prompt or memory code that fills it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from .model import (
        Chunker,
        ContextFileStore,
        ContextSource,
        Identity,
        Reranker,
        Section,
        TruncationPolicy,
    )


@attrs.frozen
class SectionTable:
    """The registered sections, sorted, with the disabled ones removed, and per mode."""

    disabled: tuple[str, ...]
    sections: tuple[Section, ...]
    by_mode: dict[str, tuple[Section, ...]]


@attrs.define
class AgentCache:
    """What the prompt and context code build once per agent and reuse on every prompt.

    Each field belongs to the module named beside it; ``None`` until first use. A key
    alongside a value says what it was built for, so a changed setting rebuilds it. Plugins
    do not read it: it is the engine's memo, not a contract.
    """

    #: prompt.build: the collected sections, for the ``prompt.disabled_sections`` it holds
    sections: SectionTable | None = None
    #: prompt.build: (estimator, text -> tokens) memo of unchanged section texts
    token_memo: tuple[Callable[[str], int], dict[str, int]] | None = None
    #: prompt.build: ((scope, IDENTITY.md content), the identity resolved from it)
    identity: tuple[tuple[str, str] | None, Identity] | None = None
    #: prompt.context: the context sources, built once from their registrations
    context_sources: list[ContextSource] | None = None
    #: prompt.context: (bootstrap.truncation, the policy it names)
    truncation_policy: tuple[str, TruncationPolicy] | None = None
    #: agentstore: the selected store's context files
    context_store: ContextFileStore | None = None
    #: memory.pipeline: (memory.chunker, the chunker it names)
    chunker: tuple[str, Chunker] | None = None
    #: memory.pipeline: (memory.reranker, the re-ranker it names)
    reranker: tuple[str, Reranker] | None = None
