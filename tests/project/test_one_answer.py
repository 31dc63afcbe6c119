"""One answer per question: the agent has one clock, and one module knows the memory files'
names and which files are memory."""

from __future__ import annotations

import ast
import datetime as dt
from pathlib import Path

from soulframe import Session
from soulframe._engine.memory import files as memory_files
from soulframe._engine.prompt import context
from soulframe.testing import make_agent

ROOT = Path(__file__).resolve().parents[2]


def test_the_prompt_and_the_memory_writes_read_the_agents_one_clock(tmp_path: Path) -> None:
    agent = make_agent(tmp_path / "ws")
    moment = dt.datetime(2031, 2, 3, 23, 30, tzinfo=dt.timezone(dt.timedelta(hours=9)))
    agent.now = lambda: moment  # type: ignore[method-assign]
    prompt = agent.system_prompt(Session.main())
    time_section = next(s.text for s in prompt.sections if s.name == "time")
    assert "2031-02-03" in time_section
    written = agent.memory.append_daily("Bins go out on Tuesday")
    assert written.name == "2031-02-03.md"
    # the daily logs a prompt shows are today's and yesterday's by the same clock
    assert context.daily_log_names(agent, Session.main()) == ["memory/2031-02-02.md", "memory/2031-02-03.md"]
    agent.close()


def test_the_agents_clock_is_in_its_time_zone(tmp_path: Path) -> None:
    agent = make_agent(tmp_path / "ws", timezone="Asia/Tokyo")
    assert agent.now().utcoffset() == dt.timedelta(hours=9)
    agent.close()


def test_one_module_spells_the_memory_file_names() -> None:
    """``memory.md`` (the curated memory's lower-case spelling) is written once, in
    soulframe._engine.memory.files; everything else asks it."""
    allowed = {
        "core/soulframe/_engine/memory/files.py": "the owner",
        # a weight per context-file name, for the fair truncation policy's shares
        "plugins/soulframe_truncation/fair.py": "a table keyed by every context file name",
    }
    found = []
    for path in [*(ROOT / "core").rglob("*.py"), *(ROOT / "plugins").rglob("*.py")]:
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value == "memory.md" and rel not in allowed:
                found.append(f"{rel}:{node.lineno}")
    assert not found, found


def test_the_prompt_asks_the_memory_files_module_what_is_memory() -> None:
    assert context.MEMORY_FILES == memory_files.CURATED
    assert context.is_memory_file is memory_files.is_memory_context_file
    assert context.DAILY_LOG is memory_files.DAILY_LOG
    for name in ("MEMORY.md", "memory.md", "memory/2026-01-02.md"):
        assert memory_files.is_memory_context_file(name) and memory_files.is_memory_path(name)
    assert not memory_files.is_memory_context_file("SOUL.md")


def _core_functions() -> dict[str, str]:
    """name -> module of every function the core defines at module level."""
    out: dict[str, str] = {}
    for path in sorted((ROOT / "core" / "soulframe").rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef):
                out[node.name] = str(path.relative_to(ROOT))
    return out


def test_the_chunker_lives_in_the_plugin_that_registers_it() -> None:
    """The ``lines`` chunker is the memory plugin's own code: the core selects a chunker by
    ``memory.chunker`` and never cuts text itself, so replacing the plugin replaces the
    algorithm (the plugin used to register a wrapper around the core's ``chunk_text``)."""
    from soulframe_memory.chunking import chunk_text

    defined = _core_functions()
    assert "chunk_text" not in defined and "split_long_line" not in defined, defined.get("chunk_text")
    import soulframe.memorykit

    assert not hasattr(soulframe.memorykit, "chunk_text")
    assert [(c.start_line, c.end_line) for c in chunk_text("a\n\nb", 2)] == [(1, 1), (3, 3)]


def test_the_token_estimators_live_in_the_plugin_that_registers_them() -> None:
    """``estimate`` and ``tiktoken`` are the truncation plugin's code; the core keeps only
    the lookup by ``prompt.tokenizer`` and a crude fallback (:func:`rough_estimate`)."""
    import soulframe.kit
    from soulframe_truncation.tokens import estimate, tiktoken_estimator

    defined = _core_functions()
    assert "estimate" not in defined and "tiktoken_estimator" not in defined
    assert not hasattr(soulframe.kit, "estimate_tokens") and not hasattr(soulframe.kit, "tiktoken_estimator")
    assert estimate("你好世界") == 5 and tiktoken_estimator()("hello world") == 2
