"""The ``lines`` chunker the memory plugin registers (seed 000 §14): where it cuts, the
line numbers it keeps, and that it loses no text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from soulframe_memory.chunking import chunk_text, split_long_line


def test_chunks_prefer_a_blank_line_once_half_full() -> None:
    para = "x" * 300
    text = "\n".join([para, "", para, "", para, "", para])  # 4 paragraphs of 300
    chunks = chunk_text(text, 1000)
    # 300 < 500: the first blank line does not cut; 601 >= 500: the second does
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 3), (5, 7)]
    assert all(len(c.text) <= 1000 for c in chunks)


def test_chunks_are_forced_at_the_limit_and_keep_line_numbers() -> None:
    lines = [f"line {i:03d} " + "y" * 90 for i in range(1, 41)]  # 100 chars each, no blank lines
    chunks = chunk_text("\n".join(lines), 1000)
    assert all(len(c.text) <= 1000 for c in chunks)
    assert chunks[0].start_line == 1 and chunks[-1].end_line == 40
    for a, b in zip(chunks, chunks[1:], strict=False):
        assert b.start_line == a.end_line + 1
    for c in chunks:
        assert c.text.splitlines()[0].startswith(f"line {c.start_line:03d}")


def test_an_over_long_line_is_split_and_keeps_its_line_number() -> None:
    long_line = " ".join(["word"] * 600)  # 2,999 chars
    chunks = chunk_text(f"# title\n\n{long_line}\n\nafter", 1000)
    pieces = [c for c in chunks if c.start_line == 3]
    assert len(pieces) == 3 and all(c.end_line == 3 and len(c.text) <= 1000 for c in pieces)
    assert " ".join(p.text for p in pieces).split() == long_line.split()
    assert split_long_line("a" * 2500, 1000) == ["a" * 1000, "a" * 1000, "a" * 500]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(st.just(""), st.text(alphabet="ab cd\t", min_size=1, max_size=300)), max_size=60),
       st.integers(min_value=20, max_value=1200))
def test_chunking_loses_no_text_and_respects_the_limit(lines: list[str], max_chars: int) -> None:
    text = "\n".join(lines)
    chunks = chunk_text(text, max_chars)
    assert all(len(c.text) <= max_chars for c in chunks)
    assert all(c.text.strip() for c in chunks)
    src = text.splitlines()
    for c in chunks:
        assert 1 <= c.start_line <= c.end_line <= len(src)
    got = "".join("".join(c.text.split()) for c in chunks)
    assert got == "".join("".join(ln.split()) for ln in src)


def test_a_long_line_is_never_cut_inside_a_character() -> None:
    from soulframe.kit import is_safe_cut

    for unit in ("e\u0301", "👍🏽", "👨‍👩‍👧", "🇯🇵", "क्ष", "กำ"):
        line = unit * (2600 // len(unit))
        pieces = split_long_line(line, 1000)
        assert all(len(p) <= 1000 for p in pieces)
        # whole units in every piece (Thai, written without spaces, repeats one at a cut)
        assert all(p.startswith(unit) and p.endswith(unit) for p in pieces), unit
        if unit != "กำ":
            assert "".join(pieces) == line, unit
            cuts = [sum(map(len, pieces[:i])) for i in range(1, len(pieces))]
            assert all(is_safe_cut(line, c) for c in cuts), unit


def test_a_long_line_without_spaces_is_cut_after_punctuation() -> None:
    line = "今日は晴れでした。" * 150  # Japanese: sentences, no spaces
    pieces = split_long_line(line, 1000)
    assert all(p.endswith("。") for p in pieces)
    assert "".join(pieces) == line


def test_a_word_across_a_forced_cut_in_an_unspaced_run_is_still_in_one_piece() -> None:
    line = "猫が好き" * 300  # no space, no punctuation
    pieces = split_long_line(line, 1000)
    # the character before each cut starts the next piece too, so every pair of
    # neighbouring characters (how the index holds such text) is in some piece
    pairs = {line[i:i + 2] for i in range(len(line) - 1)}
    held = {p[i:i + 2] for p in pieces for i in range(len(p) - 1)}
    assert pairs <= held
    assert pieces[1][0] == pieces[0][-1]
