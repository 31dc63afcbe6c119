"""The system prompt: collecting context files (:mod:`.context`: sources, merge, transforms,
session filter, truncation), assembling the prompt (:mod:`.build`: mode resolution, sections,
budget, cache boundary), counting tokens (:mod:`.tokens`) and resolving the agent's identity
(:mod:`.identity`)."""

from __future__ import annotations

from .build import build_system_prompt

__all__ = ["build_system_prompt"]
