"""Golden prompts: the whole system prompt of the example workspace (tests/fixtures/workspace)
in every mode and session kind, at a fixed time, compared with tests/golden/prompt_<case>.txt.

A change to any section's wording shows up here as a diff. After a deliberate change,
regenerate with ``SOULFRAME_UPDATE_GOLDEN=1 pytest tests/test_prompt_golden.py`` and review
the diff of tests/golden/ before committing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_prompt_helpers import CASES, GOLDEN, UPDATE_ENV, example_agent, shown, updating


@pytest.mark.parametrize("case", list(CASES))
def test_golden_prompt(case: str, tmp_path: Path) -> None:
    session, build_kw, agent_kw = CASES[case]
    agent = example_agent(tmp_path, **agent_kw)
    text = shown(agent, agent.system_prompt(session, **build_kw).text)
    golden = GOLDEN / f"prompt_{case}.txt"
    if updating():
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(text, encoding="utf-8")
    assert golden.exists(), f"no golden file {golden.name}: run with {UPDATE_ENV}=1"
    expected = golden.read_text(encoding="utf-8")
    assert text == expected, f"prompt for {case!r} changed; if intended, rerun with {UPDATE_ENV}=1"


def test_every_golden_file_is_a_case() -> None:
    stale = {p.stem.removeprefix("prompt_") for p in GOLDEN.glob("prompt_*.txt")} - set(CASES)
    assert not stale, f"golden files without a case (delete them): {sorted(stale)}"
