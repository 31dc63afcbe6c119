"""Skills: discovery over the five tiers and the limits (:mod:`.loader`), the
:class:`SkillSet` of one agent with inline-or-search mode (:mod:`.skillset`), the prompt block
(:mod:`.prompt`), BM25 + vector search (:mod:`.search`) and hot reload (:mod:`.watch`)."""

from __future__ import annotations

from .skillset import SkillSet

__all__ = ["SkillSet"]
