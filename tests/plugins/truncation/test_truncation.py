"""Truncation policies: the seeds' rules as examples, and their invariants as properties."""

from __future__ import annotations

import unicodedata
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from soulframe._engine.config import load_config
from soulframe._engine.model import ContextFile, RenderedSection
from soulframe.kit import is_safe_cut
from soulframe_truncation.cuts import close_blocks, head_tail, headings, marker
from soulframe_truncation.fair import FairPolicy, waterfill
from soulframe_truncation.headtail import HeadTailPolicy
from soulframe_truncation.tokens import estimate

CONFIG = load_config(search=False)


def cfg(**overrides: Any) -> Any:
    return CONFIG.evolve(**overrides) if overrides else CONFIG


def files(*sizes: int, names: tuple[str, ...] = ("AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md",
                                                  "USER.md", "HEARTBEAT.md", "MEMORY.md")) -> list[ContextFile]:
    return [ContextFile(n, (n[0] * s)) for n, s in zip(names, sizes, strict=False)]


# --------------------------------------------------------------------------- head-tail, files


def test_a_file_under_the_limit_is_untouched() -> None:
    out, notices = HeadTailPolicy().truncate_files(files(19_999), cfg())
    assert out[0].content == "A" * 19_999 and not out[0].truncated and notices == []


def test_a_file_over_the_limit_keeps_70_percent_head_and_20_percent_tail() -> None:
    text = "".join(f"line {i:05d}\n" for i in range(3_000))  # 33,000 chars
    (f,) = HeadTailPolicy().truncate_files([ContextFile("SOUL.md", text)], cfg())[0]
    head, tail = f.content.split(marker("SOUL.md"))
    assert len(head) == 14_000 and text.startswith(head)
    assert len(tail) == 4_000 and text.endswith(tail)
    assert f.truncated and f.original_chars == 33_000


def test_the_total_budget_clamps_later_files_and_then_stops() -> None:
    out, notices = HeadTailPolicy().truncate_files(files(15_000, 15_000, 5_000, 5_000), cfg())
    sizes = {f.name: len(f.content) for f in out}
    assert sizes["AGENTS.md"] == 15_000
    # SOUL.md is clamped to the 9,000 left: 70 % head + marker + 20 % tail of that
    assert 8_000 < sizes["SOUL.md"] <= 9_000
    # TOOLS.md gets the ~10 % slack the marker did not use, cut the same way
    assert 0 < sizes["TOOLS.md"] <= 24_000 - 15_000 - sizes["SOUL.md"]
    # then less than 64 characters remain: IDENTITY.md is left out, and that is announced
    assert "IDENTITY.md" not in sizes
    by_name = {n.name: n for n in notices}
    assert by_name["SOUL.md"].kept_chars > 0
    assert by_name["IDENTITY.md"].kept_chars == 0 and "read IDENTITY.md" in by_name["IDENTITY.md"].hint
    assert sum(sizes.values()) <= 24_000


def test_processing_stops_once_less_than_min_file_budget_remains() -> None:
    out, notices = HeadTailPolicy().truncate_files(files(23_950, 10, 10), cfg(bootstrap__max_chars_per_file=24_000))
    assert [f.name for f in out] == ["AGENTS.md"]  # 50 left < 64
    assert [n.name for n in notices] == ["SOUL.md", "TOOLS.md"]
    assert all(n.kept_chars == 0 for n in notices)


def test_empty_files_are_skipped_without_a_notice() -> None:
    out, notices = HeadTailPolicy().truncate_files([ContextFile("SOUL.md", " \n"), ContextFile("USER.md", "u")], cfg())
    assert [f.name for f in out] == ["USER.md"] and notices == []


def test_every_cut_is_announced_with_where_to_read_the_rest() -> None:
    _, notices = HeadTailPolicy().truncate_files(files(30_000), cfg())
    (n,) = notices
    assert n.name == "AGENTS.md" and n.original_chars == 30_000 and n.kept_chars == 18_000
    assert "read AGENTS.md" in n.hint
    assert "14,000" in n.hint and "30,000" in n.hint  # numbers a person can read


def test_a_dropped_file_names_the_limit_that_dropped_it() -> None:
    _, notices = HeadTailPolicy().truncate_files(files(500), cfg(bootstrap__max_chars_per_file=8))
    (n,) = notices
    assert n.kept_chars == 0 and "bootstrap.max_chars_per_file = 8 is too small" in n.hint
    _, notices = HeadTailPolicy().truncate_files(
        files(23_960, 500), cfg(bootstrap__max_chars_per_file=24_000, bootstrap__min_file_budget=8))
    assert notices[-1].name == "SOUL.md" and "only 40 characters of bootstrap.total_max_chars" in notices[-1].hint


# --------------------------------------------------------------------------- properties

# text that exercises the hard cases: astral emoji, combining marks, ZWJ sequences, CRLF,
# CJK, and raw surrogate pairs (a str from JSON can hold them)
PIECES = st.sampled_from([
    "a", "b", " ", "\n", "\r\n", "é", "e\u0301", "🙂", "👍🏽", "👨\u200d👩\u200d👧", "字", "한",
    "\ud83d\ude00", "#", "## Heading\n", "❤\ufe0f", "ｱ", "\u1112\u1161\u11ab", "\U0001f1ef\U0001f1f5",
    "\u0e19\u0e49\u0e33",
])
TEXT = st.lists(PIECES, min_size=0, max_size=400).map("".join)


def _no_split_pairs(s: str) -> bool:
    for i, ch in enumerate(s):
        if "\ud800" <= ch <= "\udbff" and (i + 1 == len(s) or not "\udc00" <= s[i + 1] <= "\udfff"):
            return False
        if "\udc00" <= ch <= "\udfff" and (i == 0 or not "\ud800" <= s[i - 1] <= "\udbff"):
            return False
    return True


@settings(max_examples=300, deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=6), st.integers(50, 3_000), st.integers(20, 2_000), st.integers(0, 200))
def test_head_tail_never_exceeds_the_budget(texts: list[str], total: int, per_file: int, min_budget: int) -> None:
    fs = [ContextFile(f"F{i}.md", t) for i, t in enumerate(texts)]
    config = cfg(bootstrap__total_max_chars=total, bootstrap__max_chars_per_file=per_file,
                 bootstrap__min_file_budget=min_budget)
    out, notices = HeadTailPolicy().truncate_files(fs, config)
    assert sum(len(f.content) for f in out) <= total
    assert all(len(f.content) <= per_file for f in out)
    by_name = {f.name: f for f in fs}
    for f in out:
        cut = f.content != by_name[f.name].content
        # the marker is there exactly when the file was cut
        assert (marker(f.name) in f.content) == cut == f.truncated
        assert _no_split_pairs(f.content)
    # nothing disappears silently: every non-empty input is either kept whole or announced
    announced = {n.name for n in notices}
    kept_whole = {f.name for f in out if not f.truncated}
    for f in fs:
        if f.content.strip():
            assert f.name in announced or f.name in kept_whole


@settings(max_examples=300, deadline=None)
@given(TEXT, st.integers(60, 600))
def test_head_and_tail_ratios_hold(text: str, limit: int) -> None:
    cut = head_tail(text, limit, "X.md", 0.7, 0.2)
    if len(text) <= limit:
        assert cut == (text, len(text), 0)
        return
    if limit - len(marker("X.md")) < 16:  # no room for the marker and some content: dropped
        assert cut is None
        return
    assert cut is not None
    new, head, tail = cut
    assert len(new) <= limit
    assert new == text[:head] + marker("X.md") + text[len(text) - tail:]
    room = limit - len(marker("X.md"))
    want_head = min(int(limit * 0.7), int(room * 0.7 / 0.9)) if int(limit * 0.7) + int(limit * 0.2) + len(marker("X.md")) > limit else int(limit * 0.7)
    # a cut moves at most a few characters to keep a grapheme whole
    assert want_head - 32 <= head <= want_head
    assert head >= 2 * tail - 40 or tail == 0 or len(text) < 100  # roughly 70:20
    assert is_safe_cut(text, head) or head == 0
    assert _no_split_pairs(new)


@settings(max_examples=200, deadline=None)
@given(TEXT, st.integers(1, 400))
def test_cuts_never_split_surrogate_pairs_or_leave_a_dangling_mark(text: str, n: int) -> None:
    cut = head_tail(text, n, "X.md")
    if cut is None:
        return
    new, head, tail = cut
    assert _no_split_pairs(new)
    # both cuts sit on character boundaries: no combining mark, skin tone, variation
    # selector or ZWJ torn from the character before it, no CRLF split
    assert is_safe_cut(text, head)
    assert is_safe_cut(text, len(text) - tail)
    if tail and len(text) - tail < len(text):
        assert unicodedata.category(text[len(text) - tail]) not in ("Mn", "Me")


def test_a_cut_keeps_an_emoji_family_whole() -> None:
    family = "👨\u200d👩\u200d👧"
    for offset in range(len(family) + 1):  # the 70 % point falls before, inside and after it
        text = "x" * (350 - offset) + family + "y" * 1_000
        new, head, tail = head_tail(text, 500, "F")  # type: ignore[misc]
        assert new[:head] in ("x" * (350 - offset), "x" * (350 - offset) + family)
        assert head >= 350 - len(family)


@pytest.mark.parametrize("cluster", [
    "\u1112\u1161\u11ab",  # 한 spelled in conjoining jamo (L V T)
    "\U0001f1ef\U0001f1f5",  # the flag of Japan: two regional indicators
    "\u0e19\u0e49\u0e33",  # น้ำ: a Thai letter, a tone mark and SARA AM
    "\u0915\u094d\u0937\u093f",  # क्षि: Devanagari conjunct with a vowel sign
])
def test_a_cut_keeps_a_grapheme_cluster_whole(cluster: str) -> None:
    for offset in range(len(cluster) + 1):  # the 70 % point falls before, inside and after it
        text = "x" * (350 - offset) + cluster + "y" * 1_000
        new, head, tail = head_tail(text, 500, "F")  # type: ignore[misc]
        assert new[:head] in ("x" * (350 - offset), "x" * (350 - offset) + cluster), offset
        assert new.count("\n[...truncated") == 1


def test_flags_pair_from_the_start_of_their_run() -> None:
    flags = "\U0001f1ef\U0001f1f5\U0001f1f0\U0001f1f7"  # Japan, Korea
    assert is_safe_cut(flags, 2) and not is_safe_cut(flags, 1) and not is_safe_cut(flags, 3)


# --------------------------------------------------------------------------- fair


def test_waterfill_shares_by_weight_and_passes_on_what_is_unused() -> None:
    assert waterfill([100, 10_000, 10_000], [1, 1, 1], 3_000) == [100, 1_450, 1_450]
    assert waterfill([10_000, 10_000], [3, 1], 4_000) == [3_000, 1_000]
    assert sum(waterfill([5, 5], [1, 1], 100)) == 10


def test_fair_does_not_let_one_long_file_starve_memory() -> None:
    fs = [ContextFile("AGENTS.md", "a" * 30_000), ContextFile("MEMORY.md", "m" * 6_000)]
    ht, _ = HeadTailPolicy().truncate_files(fs, cfg(bootstrap__max_chars_per_file=30_000))
    fair, notices = FairPolicy().truncate_files(fs, cfg(bootstrap__max_chars_per_file=30_000))
    assert len(ht[1].content) < 6_000  # head-tail: AGENTS.md took most of the budget
    assert fair[1].content == "m" * 6_000  # fair: MEMORY.md fits in its share
    assert sum(len(f.content) for f in fair) <= 24_000
    assert [n.name for n in notices] == ["AGENTS.md"]


def test_fair_lists_the_headings_it_cut_with_line_numbers() -> None:
    lines = ["# Soul", "intro " * 50]
    for i in range(1, 40):
        lines += [f"## Part {i}", ("text " * 60)]
    text = "\n".join(lines)
    (f,), (notice,) = FairPolicy().truncate_files([ContextFile("SOUL.md", text)], cfg(bootstrap__total_max_chars=3_000))
    assert len(f.content) <= 3_000
    assert "[...truncated, read SOUL.md for full content...]" in f.content
    toc = f.content.split(marker("SOUL.md"))[1]
    line_of = {h: n for n, h in headings(text)}
    entries = [ln for ln in toc.splitlines() if ln.startswith("## ")]
    assert entries, toc
    for entry in entries:
        heading, _, rest = entry.rpartition(" (line ")
        assert line_of[heading] == int(rest.rstrip(")"))
    assert "## Part 39" in toc or "more headings" in toc
    assert "read SOUL.md" in notice.hint


@settings(max_examples=200, deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=6), st.integers(50, 3_000), st.integers(20, 2_000))
def test_fair_never_exceeds_the_budget(texts: list[str], total: int, per_file: int) -> None:
    fs = [ContextFile(f"F{i}.md", t) for i, t in enumerate(texts)]
    config = cfg(bootstrap__total_max_chars=total, bootstrap__max_chars_per_file=per_file)
    out, notices = FairPolicy().truncate_files(fs, config)
    assert sum(len(f.content) for f in out) <= total
    for f in out:
        original = next(g for g in fs if g.name == f.name)
        assert (marker(f.name) in f.content) == (f.content != original.content)
        assert _no_split_pairs(f.content)


# --------------------------------------------------------------------------- sections


def section(name: str, text: str, priority: int | None = None, order: float = 1) -> RenderedSection:
    return RenderedSection(name=name, order=order, zone="stable", text=text, tokens=estimate(text),
                           truncate_priority=priority)


def prompt_sections(extra: int, skills: int, context: int) -> list[RenderedSection]:
    return [
        section("identity", "You are a personal assistant." * 10, None, 1),
        section("safety", "Be safe. " * 200, None, 3),
        section("skills", "skill line\n" * skills, 20, 4),
        section("workspace", "Your working directory is /w. " * 20, None, 6),
        section("extra_context", "extra words here\n" * extra, 10, 10),
        section("project_context", "## AGENTS.md\nrules\n" + "context line\n" * context, 30, 11),
    ]


def test_under_budget_nothing_is_cut() -> None:
    secs = prompt_sections(10, 10, 10)
    out, notices = HeadTailPolicy().enforce_budget(secs, 24_000, estimate)
    assert out == secs and notices == []


def test_the_extra_prompt_is_cut_first_then_skills_then_context() -> None:
    secs = prompt_sections(extra=400, skills=400, context=400)
    total = sum(s.tokens for s in secs)
    fixed = sum(s.tokens for s in secs if s.truncate_priority is None)
    by = {s.name: s for s in secs}
    # over by a little: only the extra prompt is shortened
    out, notices = HeadTailPolicy().enforce_budget(secs, total - 100, estimate)
    got = {s.name: s for s in out}
    assert got["extra_context"].truncated and not got["skills"].truncated and not got["project_context"].truncated
    assert sum(s.tokens for s in out) <= total - 100
    assert [n.name for n in notices] == ["extra_context"]
    # over by more than the extra prompt: it is dropped, skills are shortened
    budget = total - by["extra_context"].tokens - 200
    out, notices = HeadTailPolicy().enforce_budget(secs, budget, estimate)
    got = {s.name: s for s in out}
    assert "extra_context" not in got and got["skills"].truncated and not got["project_context"].truncated
    assert sum(s.tokens for s in out) <= budget
    # only the never-cut sections fit: everything cuttable goes, safety and tooling stay
    out, notices = HeadTailPolicy().enforce_budget(secs, fixed, estimate)
    assert [s.name for s in out] == ["identity", "safety", "workspace"]
    assert {n.name for n in notices} == {"extra_context", "skills", "project_context"}


def test_sections_without_a_priority_are_never_cut_even_over_budget() -> None:
    secs = [section("safety", "rule " * 2_000), section("skills", "s " * 100, 20)]
    out, notices = HeadTailPolicy().enforce_budget(secs, 100, estimate)
    assert [s.name for s in out] == ["safety"] and out[0].text == secs[0].text
    assert notices[-1].name == "(prompt)" and "raise the budget" in notices[-1].hint


def test_a_shortened_section_says_where_the_rest_is() -> None:
    secs = [section("project_context", "line\n" * 2_000, 30)]
    (out,), (notice,) = HeadTailPolicy().enforce_budget(secs, 500, estimate)
    assert out.tokens <= 500 and out.truncated and out.original_tokens == secs[0].tokens
    assert "truncated to fit prompt.budget_tokens" in out.text
    assert "context_read" in notice.hint and notice.kept_chars > 0


def test_names_give_the_seed_order_when_a_section_carries_no_priority() -> None:
    secs = [section("skills", "s\n" * 1_000), section("extra_context", "e\n" * 1_000)]
    out, notices = HeadTailPolicy().enforce_budget(secs, sum(s.tokens for s in secs) - 50, estimate)
    assert notices[0].name == "extra_context"


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 300), st.integers(0, 300), st.integers(0, 300), st.integers(100, 3_000),
       st.sampled_from(["head-tail", "fair"]))
def test_enforce_budget_meets_the_budget_whenever_it_can(extra: int, skills: int, context: int,
                                                         budget: int, policy_name: str) -> None:
    policy = HeadTailPolicy() if policy_name == "head-tail" else FairPolicy()
    secs = prompt_sections(extra, skills, context)
    fixed = sum(s.tokens for s in secs if s.truncate_priority is None)
    out, notices = policy.enforce_budget(secs, budget, estimate)
    assert all(s.tokens == estimate(s.text) for s in out)
    if fixed <= budget:
        assert sum(s.tokens for s in out) <= budget
    # never-cut sections are there, unchanged
    for s in secs:
        if s.truncate_priority is None:
            assert s in out
    # every cut or drop is announced
    changed = {s.name for s in secs} - {s.name for s in out if not s.truncated}
    assert changed <= {n.name for n in notices}


def test_fair_sections_keep_a_contents_list_of_cut_headings() -> None:
    body = "\n".join(f"## File {i}\n" + "words " * 80 for i in range(30))
    secs = [section("safety", "rule " * 50), section("project_context", body, 30)]
    out, notices = FairPolicy().enforce_budget(secs, 700, estimate)
    ctx = next(s for s in out if s.name == "project_context")
    assert ctx.tokens <= 700 - secs[0].tokens + 1
    assert "## File 29 (line" in ctx.text or "more headings" in ctx.text


def test_a_prompt_cut_for_its_budget_names_a_tool_the_session_is_offered(tmp_path) -> None:
    """The cut project context tells the model how to read the rest: through a tool that is
    really offered in that session (not a ``read_file`` no host of soulframe provides)."""
    import re

    from soulframe import Agent, Session

    ws = tmp_path / "ws"
    ws.mkdir(mode=0o700)
    (ws / "AGENTS.md").write_text("# AGENTS.md\n" + "Be careful with the release steps.\n" * 3_000)
    (ws / "soulframe.toml").write_text("[prompt]\nbudget_tokens = 4000\n")
    agent = Agent.open(ws)
    session = Session.main()
    text = agent.system_prompt(session).text
    named = set(re.findall(r"read them with the (\w+) tool", text))
    assert named, "the cut prompt does not say where the rest is"
    offered = {tool.name for tool in agent.tools(session)}
    assert named <= offered, f"the prompt names {named - offered}, which is not offered"


@pytest.mark.parametrize("policy", ["head-tail", "fair"])
def test_a_section_cut_for_the_budget_closes_the_blocks_it_opened(tmp_path, policy: str) -> None:
    """A cut section keeps its head; the file or skills block the head opened is closed
    after the marker, so soulframe's own later sections (memory recall, the note on what
    was cut, the reminders) are not read as part of a workspace file."""
    import re

    from soulframe import Agent, Session

    ws = tmp_path / "ws"
    ws.mkdir(mode=0o700)
    (ws / "AGENTS.md").write_text("# AGENTS.md\nKeep it short.\n")
    (ws / "TOOLS.md").write_text("# TOOLS.md\n" + "The NAS is nas.local; backups run at 03:00.\n" * 600)
    for i in range(40):
        (ws / "skills" / f"s{i}").mkdir(parents=True)
        (ws / "skills" / f"s{i}" / "SKILL.md").write_text(
            f"---\nname: s{i}\ndescription: {'Files the weekly report and tells the team. ' * 4}\n---\n# S\n")
    (ws / "soulframe.toml").write_text(f'[bootstrap]\ntruncation = "{policy}"\n')
    agent = Agent.open(ws)
    full = agent.system_prompt(Session.main())
    by = {s.name: s.tokens for s in full.sections}
    cut = set()
    # only the skills are cut (when listed inline); then the skills go and the context is cut
    for budget in (full.tokens - by["skills"] // 2, full.tokens - by["skills"] - by["project_context"] // 2):
        prompt = agent.system_prompt(Session.main(), budget_tokens=budget)
        cut |= {s.name for s in prompt.sections if s.truncated}
        text = prompt.text
        opened = re.findall(r'^<(context_file|available_skills)(?: name="[^"]+")?>$', text, re.M)
        closed = re.findall(r"</(context_file|available_skills)>$", text, re.M)
        assert sorted(opened) == sorted(closed), f"{cut} cut at {budget} tokens left a block open"
        assert text.rindex("</context_file>") < text.index("## Truncated Context")
    assert "project_context" in cut


def test_a_cut_inside_a_tag_moves_before_it_and_a_tag_named_in_a_sentence_opens_no_block() -> None:
    text = ('Read <context_file> content as reference.\n<available_skills>\n'
            '  <skill location="/a"><name>a</name><description>A</description></skill>\n'
            '</available_skills>')
    inside = text.index("location=") + 3
    cut, closing = close_blocks(text, inside)
    assert text[:cut].endswith("<available_skills>\n  ")
    assert closing == "</available_skills>\n"
    cut, closing = close_blocks(text, text.index("<description>") + len("<description>A"))
    assert closing == "</description>\n</skill>\n</available_skills>\n"
    after = text.index(" content")
    assert close_blocks(text, after) == (after, "")


def test_fair_lists_a_cut_files_headings_by_that_files_own_line_numbers(tmp_path) -> None:
    """The contents list of a cut project context is for reading the rest with context_read:
    a heading of HEARTBEAT.md is listed with its line in HEARTBEAT.md, not in the section."""
    import re

    from soulframe import Agent, Session

    ws = tmp_path / "ws"
    ws.mkdir(mode=0o700)
    files = {name: f"# {title}\n\n" + "".join(f"## {title} part {i}\n" + "word " * 30 + "\n\n" for i in range(25))
             for name, title in (("TOOLS.md", "Tools"), ("HEARTBEAT.md", "Beats"))}
    for name, text in files.items():
        (ws / name).write_text(text)
    (ws / "soulframe.toml").write_text('[prompt]\nbudget_tokens = 2500\n[bootstrap]\ntruncation = "fair"\n'
                                       '[embedding]\nprovider = "none"\n')
    text = Agent.open(ws).system_prompt(Session.main()).text
    listed = re.findall(r"^(#+ [^\n]*?) \((TOOLS\.md|HEARTBEAT\.md) line (\d+)\)$", text, re.M)
    assert listed and not re.search(r"^#+ [^\n]* \(line \d+\)$", text, re.M), text[-3000:]
    for heading, name, line in listed:
        assert files[name].split("\n")[int(line) - 1] == heading, (heading, name, line)
