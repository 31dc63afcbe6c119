"""What the engine builds once per agent and reuses on every prompt: :class:`AgentCache`,
reached through :func:`cache_of`.

The memo is the engine's, not part of what plugins may use of an agent: ``AgentLike`` does
not name it. An agent that keeps one (``soulframe.Agent``) meets :class:`KeepsEngineCache`;
any other ``AgentLike`` gets one kept beside it for as long as it lives, so engine code typed
against ``AgentLike`` works with either."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import attrs

if TYPE_CHECKING:
    from .model import (
        AgentLike,
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
    #: prompt.context: (plugin, context source) pairs, built once from their registrations
    context_sources: list[tuple[str, ContextSource]] | None = None
    #: prompt.context: (bootstrap.truncation, the policy it names)
    truncation_policy: tuple[str, TruncationPolicy] | None = None
    #: agentstore: the selected store's context files
    context_store: ContextFileStore | None = None
    #: memory.pipeline: (memory.chunker, the chunker it names)
    chunker: tuple[str, Chunker] | None = None
    #: memory.pipeline: (memory.reranker, the re-ranker it names)
    reranker: tuple[str, Reranker] | None = None


@runtime_checkable
class KeepsEngineCache(Protocol):
    """An agent that holds the engine's memo itself (``soulframe.Agent``). Engine-only: not
    exported from ``soulframe``, and no plugin reads it."""

    cache: AgentCache


#: the memo of each agent that keeps none itself, dropped with the agent
_BESIDE: weakref.WeakKeyDictionary[AgentLike, AgentCache] = weakref.WeakKeyDictionary()


def cache_of(agent: AgentLike) -> AgentCache:
    """The engine's memo for ``agent``: its own, or one kept beside it."""
    if isinstance(agent, KeepsEngineCache):
        return agent.cache
    try:
        return _BESIDE.setdefault(agent, AgentCache())
    except TypeError:  # an agent that cannot be weakly referenced: build afresh each time
        return AgentCache()
