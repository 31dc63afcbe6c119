"""A search hit's snippet shows the line that matched: with many tokens sharing a prefix
(``apin0x19q``, ``apin0x11q`` ...) the snippet is the line holding the exact word asked for,
not the first line whose word merely shares its stem."""

from __future__ import annotations

import random
from pathlib import Path

from soulframe._engine.agent import Agent
from soulframe._engine.config import load_config
from soulframe._engine.memory.querying import snippet


def test_the_exact_word_wins_over_a_word_sharing_its_stem() -> None:
    lines = [f"- reading {i}: sensor apin0x{10 + i}q reported " + "nominal " * 40 for i in range(8)]
    text, offset = snippet("\n".join(lines), ["apin0x15q"])
    assert "apin0x15q" in text
    assert offset == 5
    # a long line is centred on the word asked for, not on its look-alike earlier in the line
    one = "apin0x11q " + "filler " * 80 + "apin0x19q " + "filler " * 80
    assert "apin0x19q" in snippet(one, ["apin0x19q"])[0]


def test_every_keyword_hit_shows_the_matching_line(workspace: Path) -> None:
    rng = random.Random(7)
    tokens = [f"apin{rng.randint(0, 9)}x{n}q" for n in range(10, 130)]
    (workspace / "memory").mkdir()
    body = ["# Sensor log", ""]
    for i, token in enumerate(tokens):
        filler = " ".join(rng.choice(["valve", "reading", "pressure", "steady", "drift"]) for _ in range(30))
        body.append(f"- {filler} {token} {filler}")
        if i % 9 == 8:
            body.append("")
    (workspace / "memory" / "2026-05-01.md").write_text("\n".join(body) + "\n")
    agent = Agent(load_config(workspace=workspace, search=False, overrides={"embedding.provider": "none"}))
    missing = []
    for token in tokens:
        hits = agent.memory.search(token, min_score=0)
        assert hits, token
        holding = [h for h in hits if token in "\n".join(body[h.start_line - 1 : h.end_line])]
        assert holding, f"no hit holds {token}"
        missing += [f"{token} -> {h.citation}" for h in holding if token not in h.snippet]
    assert not missing, f"{len(missing)} of {len(tokens)} snippets miss the term: {missing[:5]}"
