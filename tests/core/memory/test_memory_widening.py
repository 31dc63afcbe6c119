"""memory.hit_chars: a hit cites the lines around its chunk too, within the budget, never
across a heading and never into lines a better hit already cites; a hit all of whose lines
a better hit cites gives way to the next."""

from __future__ import annotations

import warnings
from pathlib import Path

from soulframe import Agent
from soulframe.testing import make_agent


def _ferry_talk(tmp_path: Path, hit_chars: int) -> Agent:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True, exist_ok=True)
    turns = [f"{'Ada' if i % 2 else 'Ben'}: small talk line number {i:02d} about nothing much at all" for i in range(60)]
    turns[30] = "Ada: the ferry to Santander leaves on the fifth of June"
    turns[29] = "Ben: so when do you sail now that the strike moved everything?"
    (ws / "memory" / "2024-05-16.md").write_text("# 2024-05-16\n\n" + "\n".join(turns) + "\n")
    (ws / "memory" / "2024-05-17.md").write_text("# 2024-05-17\n\nAda: ferry tickets printed\n")
    return make_agent(ws, seed=False, state_dir=tmp_path / "state",
                      memory__hit_chars=hit_chars, memory__chunk_max_chars=600)


def _hits(agent: Agent, q: str) -> list:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return list(agent.memory.search(q, min_score=0))


def test_a_hit_grows_to_the_lines_around_its_chunk(tmp_path: Path) -> None:
    plain = _hits(_ferry_talk(tmp_path / "a", 0), "ferry Santander")
    wide = _hits(_ferry_talk(tmp_path / "b", 1300), "ferry Santander")
    assert plain[0].path == wide[0].path == "memory/2024-05-16.md"
    assert wide[0].start_line <= plain[0].start_line and wide[0].end_line >= plain[0].end_line
    lines = (tmp_path / "b" / "ws" / "memory" / "2024-05-16.md").read_text().split("\n")
    cited = "\n".join(lines[wide[0].start_line - 1 : wide[0].end_line])
    assert 1000 < len(cited) <= 1300
    assert wide[0].snippet == plain[0].snippet and wide[0].score == plain[0].score
    # the other day's short log has nothing around it to grow into
    other = [(h.start_line, h.end_line) for h in wide if h.path == "memory/2024-05-17.md"]
    assert other == [(h.start_line, h.end_line) for h in plain if h.path == "memory/2024-05-17.md"] == [(1, 3)]


def test_a_hit_whose_lines_a_better_hit_cites_gives_way(tmp_path: Path) -> None:
    hits = _hits(_ferry_talk(tmp_path, 1300), "small talk line number")
    seen: dict[str, set[int]] = {}
    for h in hits:
        own = set(range(h.start_line, h.end_line + 1))
        grown = own - seen.get(h.path, set())
        assert grown, h
        seen.setdefault(h.path, set()).update(own)
    assert len(hits) >= 3
