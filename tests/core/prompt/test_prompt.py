"""Prompt assembly (soulframe._engine.prompt): mode resolution, the section table (order, modes,
replacement, disabling), the cache boundary, budget enforcement and truncation notices,
the prompt_built hook."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from prompt_support import NOW, example_agent
from soulframe import Session, hookimpl
from soulframe._engine.model import PromptContext, Section, SoulframeError, SystemPrompt
from soulframe._engine.plugins import PluginWarning
from soulframe._engine.prompt.build import PromptWarning, resolve_mode

# --------------------------------------------------------------------------- mode


@pytest.mark.parametrize(
    ("kind", "configured", "session_mode", "override", "expected"),
    [
        ("main", None, None, None, "full"),
        ("main", "task", None, None, "task"),
        ("main", "none", None, None, "none"),
        ("group", "minimal", None, None, "minimal"),
        ("subagent", None, None, None, "minimal"),
        ("cron", None, None, None, "minimal"),
        ("subagent", "task", None, None, "task"),  # capped at task
        ("cron", "task", None, None, "task"),
        ("cron", "full", None, None, "minimal"),  # auto-detection beats the agent config
        ("heartbeat", "task", None, None, "minimal"),
        ("subagent", None, "full", None, "full"),  # runtime override beats auto-detection
        ("main", "task", "none", None, "none"),
        ("main", None, "minimal", "task", "task"),  # an explicit build argument beats all
    ],
)
def test_mode_resolution_order(tmp_path: Path, kind: str, configured: str | None,
                               session_mode: str | None, override: str | None, expected: str) -> None:
    agent = example_agent(tmp_path, spec={"prompt_mode": configured})
    session = Session(kind=kind, mode=session_mode, now=NOW)  # type: ignore[arg-type]
    assert resolve_mode(agent, session, override) == expected
    assert agent.system_prompt(session, mode=override).mode == expected


def test_prompt_mode_from_config_applies_to_agents_that_set_none(tmp_path: Path) -> None:
    agent = example_agent(tmp_path, prompt__mode="task")
    assert agent.system_prompt(Session.main(now=NOW)).mode == "task"


def test_unknown_mode_is_a_clear_error(tmp_path: Path) -> None:
    agent = example_agent(tmp_path)
    with pytest.raises(SoulframeError, match=r"session.mode = 'verbose' — expected one of full, task"):
        agent.system_prompt(Session(mode="verbose"))  # type: ignore[arg-type]


# --------------------------------------------------------------------------- sections


def _section(name: str, order: float, text: str | None, **kw: Any) -> Section:
    return Section(name=name, order=order, render=lambda ctx: text, **kw)


class Extra:
    """A third-party plugin offering sections."""

    __name__ = "extra_sections"

    def __init__(self, *sections: Section) -> None:
        self.sections = sections
        self.calls = 0

    @hookimpl
    def register_prompt_sections(self) -> list[Section]:
        self.calls += 1
        return list(self.sections)


def test_a_plugin_section_lands_at_its_order_and_zone(tmp_path: Path) -> None:
    plugin = Extra(
        _section("house_rules", 2.9, "## House Rules\nNo calls after 22:00."),
        _section("weather_now", 8.1, "## Weather\nLight rain, 11 °C.", zone="dynamic"),
    )
    agent = example_agent(tmp_path, plugins=[plugin])
    prompt = agent.system_prompt(Session.main(channel="telegram", now=NOW))
    names = [s.name for s in prompt.sections]
    assert names.index("tool_call_style") < names.index("house_rules") < names.index("safety")
    assert names.index("time") < names.index("weather_now") < names.index("channel_formatting")
    assert "## House Rules" in prompt.stable_prefix
    assert "## Weather" in prompt.dynamic_suffix
    rendered = {s.name: s for s in prompt.sections}
    assert rendered["house_rules"].plugin == "extra_sections"
    assert rendered["safety"].plugin == "soulframe_sections"


def test_sections_follow_their_modes(tmp_path: Path) -> None:
    plugin = Extra(_section("task_only", 2.5, "## Task Only", modes=frozenset({"task"})))
    agent = example_agent(tmp_path, plugins=[plugin])
    assert "## Task Only" in agent.system_prompt(Session.main(now=NOW), mode="task").text
    assert "## Task Only" not in agent.system_prompt(Session.main(now=NOW), mode="full").text


def test_empty_and_none_renders_are_left_out(tmp_path: Path) -> None:
    plugin = Extra(_section("nothing", 2.5, None), _section("blank", 2.6, "  \n "))
    agent = example_agent(tmp_path, plugins=[plugin])
    prompt = agent.system_prompt(Session.main(now=NOW))
    assert not {"nothing", "blank"} & {s.name for s in prompt.sections}
    assert "\n\n\n" not in prompt.text


def test_same_name_replaces_the_default_with_a_warning(tmp_path: Path) -> None:
    plugin = Extra(_section("safety", 3, "## Safety\nHouse safety rules."))
    with pytest.warns(PluginWarning, match=r"'safety' from plugin 'extra_sections' replaces the one from 'soulframe_sections'"):
        agent = example_agent(tmp_path, plugins=[plugin])
        prompt = agent.system_prompt(Session.main(now=NOW))
    assert "## Safety\nHouse safety rules." in prompt.text
    assert "no independent goals" not in prompt.text


def test_disabled_sections_are_left_out(tmp_path: Path) -> None:
    agent = example_agent(tmp_path, prompt__disabled_sections=["execution_bias", "runtime"])
    text = agent.system_prompt(Session.main(now=NOW)).text
    assert "## Execution Bias" not in text and "## Runtime" not in text
    assert "## Tool Call Style" in text


def test_disabling_an_unknown_section_warns_with_a_suggestion(tmp_path: Path) -> None:
    agent = example_agent(tmp_path, prompt__disabled_sections=["runtme"])
    with pytest.warns(PromptWarning, match=r"no section is named 'runtme' \(did you mean 'runtime'\?\)"):
        agent.system_prompt(Session.main(now=NOW))


def test_a_failing_section_names_itself_and_its_plugin(tmp_path: Path) -> None:
    def broken(ctx: PromptContext) -> str:
        raise KeyError("weather_api_key")

    agent = example_agent(tmp_path, plugins=[Extra(Section(name="weather", order=8.2, render=broken))])
    with pytest.raises(SoulframeError) as err:
        agent.system_prompt(Session.main(now=NOW))
    # and how to go on without it: the prompt fails rather than lose a section silently
    assert str(err.value) == ("prompt section 'weather' from plugin 'extra_sections' failed: KeyError: "
                              "'weather_api_key' (disable it with plugins.disabled = ['extra_sections'])")


def test_sections_are_collected_once_per_agent(tmp_path: Path) -> None:
    plugin = Extra(_section("house_rules", 2.9, "## House Rules"))
    agent = example_agent(tmp_path, plugins=[plugin])
    for kind in ("main", "group", "subagent", "main"):
        agent.system_prompt(Session(kind=kind, now=NOW))  # type: ignore[arg-type]
    assert plugin.calls == 1


# --------------------------------------------------------------------------- boundary


def test_cache_boundary_marker_is_configurable(tmp_path: Path) -> None:
    agent = example_agent(tmp_path, prompt__cache_boundary="<!-- cache -->")
    prompt = agent.system_prompt(Session.main(now=NOW))
    assert prompt.text == f"{prompt.stable_prefix}\n\n<!-- cache -->\n\n{prompt.dynamic_suffix}"


def test_an_empty_marker_joins_the_zones_without_one(tmp_path: Path) -> None:
    agent = example_agent(tmp_path, prompt__cache_boundary="")
    prompt = agent.system_prompt(Session.main(now=NOW))
    assert prompt.text == f"{prompt.stable_prefix}\n\n{prompt.dynamic_suffix}"
    assert "BOUNDARY" not in prompt.text


def test_the_stable_prefix_does_not_change_with_the_clock(tmp_path: Path) -> None:
    """The point of the boundary: a later turn reuses the cached prefix."""
    agent = example_agent(tmp_path)
    first = agent.system_prompt(Session.main(channel="telegram", now=NOW))
    later = agent.system_prompt(Session.main(channel="telegram", now=NOW.replace(hour=17, minute=5)))
    assert first.stable_prefix == later.stable_prefix
    assert first.dynamic_suffix != later.dynamic_suffix
    assert "17:05" in later.dynamic_suffix


# --------------------------------------------------------------------------- budget


def test_over_budget_cuts_extra_context_first_and_never_safety(tmp_path: Path) -> None:
    long_extra = "Background for this session. " * 400  # ~3,000 tokens
    agent = example_agent(tmp_path, prompt__extra=long_extra)
    full = agent.system_prompt(Session.main(now=NOW), budget_tokens=100_000)
    budget = full.tokens - 1_500
    prompt = agent.system_prompt(Session.main(now=NOW), budget_tokens=budget)
    by_name = {s.name: s for s in prompt.sections}
    assert prompt.budget_tokens == budget
    # the lowest-priority section was cut and nothing protected was touched
    assert "extra_context" not in by_name or by_name["extra_context"].truncated
    for protected in ("identity", "tooling", "safety", "workspace"):
        assert not by_name[protected].truncated
        assert by_name[protected].text == {s.name: s for s in full.sections}[protected].text
    assert by_name["skills"].text == {s.name: s for s in full.sections}["skills"].text
    assert [n.name for n in prompt.notices] == ["extra_context"]
    # the model is told what was cut
    assert "## Truncated Context" in prompt.dynamic_suffix
    assert "- extra_context:" in prompt.text
    assert prompt.tokens <= budget  # the notice's own tokens are budgeted for too


def test_a_file_cut_by_the_file_limits_is_announced_with_where_to_read_it(tmp_path: Path) -> None:
    big = "# AGENTS.md\n" + "".join(f"- rule {i}: keep the studio tidy and the backups fresh\n" for i in range(600))
    agent = example_agent(tmp_path, extra_files={"AGENTS.md": big})
    prompt = agent.system_prompt(Session.main(now=NOW))
    assert any(n.name == "AGENTS.md" for n in prompt.notices)
    assert "[...truncated, read AGENTS.md for full content...]" in prompt.text
    notice = prompt.text[prompt.text.index("## Truncated Context"):]
    assert "- AGENTS.md:" in notice and "read AGENTS.md" in notice


def test_a_cut_section_of_files_names_the_files_to_read(tmp_path: Path) -> None:
    agent = example_agent(tmp_path, prompt__disabled_sections=["skills"])
    full = agent.system_prompt(Session.main(now=NOW), budget_tokens=100_000)
    by_name = {s.name: s for s in full.sections}
    # room for everything but most of the per-user and memory files
    budget = full.tokens - by_name["project_context_dynamic"].tokens + 120
    prompt = agent.system_prompt(Session.main(now=NOW), budget_tokens=budget)
    assert prompt.tokens <= budget
    line = next(ln for ln in prompt.text.splitlines() if ln.startswith("- project_context_dynamic:"))
    assert "(files: USER.md, MEMORY.md, memory/2026-04-04.md, memory/2026-04-05.md)" in line


def test_a_tiny_budget_keeps_what_fits_and_states_the_overage_against_it(tmp_path: Path) -> None:
    agent = example_agent(tmp_path)
    full = agent.system_prompt(Session.main(now=NOW), budget_tokens=100_000)
    never_cut = sum(s.tokens for s in full.sections if s.truncate_priority is None
                    and s.name in ("identity", "tooling", "safety", "workspace"))
    # room for the sections that are never cut and a little more: the note naming a dozen
    # cut sections, each with its hint, would not fit, so a brief one names them
    budget = never_cut + 150
    prompt = agent.system_prompt(Session.main(now=NOW), budget_tokens=budget)
    assert prompt.tokens <= budget
    note = prompt.text[prompt.text.index("## Truncated Context"):]
    cut = [n.name for n in prompt.notices]
    assert cut and "(prompt)" not in cut
    assert all(name in note for name in cut)
    # below what the never-cut sections need, the prompt stays over and says by how much
    small = agent.system_prompt(Session.main(now=NOW), budget_tokens=never_cut // 2)
    over = [n for n in small.notices if n.name == "(prompt)"]
    assert len(over) == 1
    assert f"still {small.tokens - never_cut // 2} tokens over prompt.budget_tokens = {never_cut // 2}:" \
        in over[0].hint


def test_no_notice_when_nothing_was_cut(tmp_path: Path) -> None:
    prompt = example_agent(tmp_path).system_prompt(Session.main(now=NOW))
    assert prompt.notices == ()
    assert "Truncated Context" not in prompt.text


# --------------------------------------------------------------------------- observers and metrics


class Recorder:
    __name__ = "recorder"

    def __init__(self) -> None:
        self.seen: list[SystemPrompt] = []

    @hookimpl
    def prompt_built(self, agent: Any, prompt: SystemPrompt) -> None:
        self.seen.append(prompt)


def test_prompt_built_observers_see_the_finished_prompt(tmp_path: Path) -> None:
    recorder = Recorder()
    agent = example_agent(tmp_path, plugins=[recorder])
    prompt = agent.system_prompt(Session.group(chat_title="Studio", now=NOW))
    assert recorder.seen == [prompt]


def test_section_metrics_add_up(tmp_path: Path) -> None:
    prompt = example_agent(tmp_path).system_prompt(Session.main(now=NOW))
    assert all(s.tokens > 0 and s.chars == len(s.text) for s in prompt.sections)
    assert prompt.tokens == sum(s.tokens for s in prompt.sections)
    joined = sum(s.chars for s in prompt.sections)
    assert len(prompt.stable_prefix) + len(prompt.dynamic_suffix) >= joined
    assert [s.order for s in prompt.sections if s.zone == "stable"] == sorted(
        s.order for s in prompt.sections if s.zone == "stable")


def test_context_files_are_reported(tmp_path: Path) -> None:
    prompt = example_agent(tmp_path).system_prompt(Session.subagent(now=NOW))
    assert [f.name for f in prompt.context_files] == ["AGENTS.md", "TOOLS.md"]


def test_no_warnings_for_the_example_workspace(tmp_path: Path) -> None:
    agent = example_agent(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        agent.system_prompt(Session.main(channel="telegram", now=NOW))


def test_budget_scales_down_with_a_small_context_window(tmp_path) -> None:
    from soulframe._engine.agent import Agent
    from soulframe._engine.config import load_config
    from soulframe._engine.model import Session
    from soulframe._engine.workspace import seed_workspace

    ws = tmp_path / "ws"
    seed_workspace(ws)
    (ws / "AGENTS.md").write_text("# AGENTS\n" + "Keep careful notes of every decision.\n" * 400)

    def prompt(**overrides):
        cfg = load_config(search=False, workspace=ws, overrides={"embedding.provider": "none", **overrides})
        return Agent(cfg).system_prompt(Session.main())

    big = prompt()
    assert big.budget_tokens == 24_000
    small = prompt(**{"model.context_window": 8_000})
    assert small.budget_tokens == 2_000
    assert small.tokens <= 2_000 < big.tokens
    assert small.notices  # what was cut is said
    assert prompt(**{"model.context_window": 8_000, "prompt.max_window_share": 0}).budget_tokens == 24_000


def test_a_session_of_an_unknown_kind_is_refused_when_made() -> None:
    """A typo in a session kind would build a prompt with whatever the defaults let
    through; it is refused where the Session is made, naming the kinds."""
    from soulframe import Session

    with pytest.raises(ValueError, match=r"'kind' must be in \('main', 'subagent', 'cron', 'heartbeat', 'group'\)"):
        Session(kind="gruop")  # type: ignore[arg-type]


def test_a_session_moment_that_is_not_a_datetime_is_refused_when_made() -> None:
    """``Session.main(now="2026-11-21")`` (an ISO string from a host's request) failed deep in
    the prompt build with "'str' object has no attribute 'tzinfo'"."""
    import datetime as dt

    with pytest.raises(TypeError, match=r"^Session: now = '2026-11-21' — expected a datetime"):
        Session.main(now="2026-11-21")  # type: ignore[arg-type]
    assert Session.main(now=dt.datetime(2026, 11, 21, 9, 0)).now == dt.datetime(2026, 11, 21, 9, 0)


def test_a_host_can_send_the_prompt_over_the_wire_as_the_cli_prints_it(tmp_path: Path) -> None:
    """``SystemPrompt.to_dict()`` is JSON-able (``attrs.asdict`` is not: it holds paths) and is
    what ``soulframe prompt --json`` prints, so a host and a script read one shape."""
    import json

    agent = example_agent(tmp_path)
    prompt = agent.system_prompt(Session.main(now=NOW), budget_tokens=1_500)
    data = json.loads(json.dumps(prompt.to_dict()))
    assert data["text"] == prompt.text
    assert data["text"] == data["stable_prefix"] + "\n\n<!-- SOULFRAME_CACHE_BOUNDARY -->\n\n" + data["dynamic_suffix"]
    assert data["session"] == "main" and data["budget_tokens"] == 1_500
    assert [s["name"] for s in data["sections"]] == [s.name for s in prompt.sections]
    assert data["notices"] and data["notices"][0]["name"] == prompt.notices[0].name  # what was cut
