"""Keyword search in scripts written without spaces (Chinese, Japanese, Korean, Thai).

The store contract (soulframe.testing) checks that both stores find a word inside such a
sentence; here: the shared splitting itself, that an index built before the change is
migrated (its existing chunks become findable without re-indexing), and the whole search
path (snippet, term coverage) on a real workspace.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from pg_fixtures import closed_after_test
from soulframe._engine.memory.querying import query_terms
from soulframe._engine.model import ChunkInput, FileRecord
from soulframe._engine.textsplit import index_grams, query_words, text_words
from store_support import ZH, old_sqlite_index


def test_unspaced_runs_become_character_pairs_and_other_text_is_unchanged() -> None:
    assert query_words("学钢琴") == ["学钢", "钢琴"]
    assert query_words("猫") == ["猫"]
    assert query_words("iPhone手机") == ["iphone", "手机"]
    assert text_words("钢琴课") == ["钢琴", "琴课", "钢", "琴", "课"]
    # a Korean word keeps its particle in the text; its pairs hold the word without it
    assert "피아" in text_words("피아노를") and "아노" in text_words("피아노를")
    # Thai marks stay on their letter: no pair starts with a vowel sign or tone mark
    assert query_words("เปียโน") == ["เปี", "ปีย", "ยโ", "โน"]
    english = "Prefers dark-mode screenshots, 2 per_day; Tiếng Việt học"
    assert text_words(english) == ["prefers", "dark", "mode", "screenshots", "2", "per", "day",
                                   "tiếng", "việt", "học"]
    assert index_grams(english) == ""


def test_a_query_keeps_a_one_character_chinese_word_but_not_a_latin_letter() -> None:
    assert query_terms("猫 and a dog") == ["猫", "dog"]


def test_an_sqlite_index_from_before_is_migrated_and_finds_chinese_words(tmp_path: Path) -> None:
    from soulframe_sqlite.schema import LATEST
    from soulframe_sqlite.store import SqliteStore

    path = tmp_path / "old.sqlite"
    old_sqlite_index(path)
    before = sqlite3.connect(path)
    assert before.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH '\"钢琴\"'"
                          ).fetchone()[0] == 0  # the whole sentence was one word
    before.close()
    store = SqliteStore(path)
    try:
        assert store.get_meta("schema_version") == str(LATEST)
        hits = store.search_text(query_terms("钢琴"), 5, include_private=True)
        assert [(h.path, h.start_line) for h in hits] == [("memory/2026-01-02.md", 3)]
        assert store.check(deep=True) == []
        # a write after the migration keeps the index consistent: delete, re-add
        store.replace_file(FileRecord(path="memory/2026-01-02.md", hash="h2", mtime_ns=2, size=2),
                           [ChunkInput(1, 1, "她周末去游泳。", "d")])
        assert store.search_text(query_terms("钢琴"), 5, include_private=True) == []
        assert len(store.search_text(query_terms("游泳"), 5, include_private=True)) == 1
        assert store.check(deep=True) == []
    finally:
        store.close()


def test_a_postgres_schema_from_before_is_migrated_and_finds_chinese_words(pg_dsn: str) -> None:
    import psycopg
    from soulframe_postgres.schema import LATEST, MIGRATIONS
    from soulframe_postgres.store import PostgresStore

    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
        conn.execute("CREATE TABLE schema_version (version integer PRIMARY KEY, "
                     "name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())")
        for version, name, sql in MIGRATIONS[:2]:
            conn.execute(sql.encode())
            conn.execute("INSERT INTO schema_version (version, name) VALUES (%s, %s)",
                         (version, name))
    store = closed_after_test(PostgresStore(pg_dsn, agent_key="old"))
    # written as 0.2 did (no grams), by a second agent in the same database, after which
    # the next soulframe's migration runs: simulate by rolling the version back
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        doc = conn.execute(
            "INSERT INTO memory_documents (agent_id, path, hash, mtime_ns, size) "
            "VALUES (%s, 'memory/2026-01-02.md', 'h', 1, 1) RETURNING id",
            (store.agent_id,)).fetchone()[0]
        conn.execute("INSERT INTO memory_chunks (document_id, agent_id, start_line, end_line, "
                     "hash, text) VALUES (%s, %s, 3, 3, 'c', %s)", (doc, store.agent_id, ZH))
        conn.execute("UPDATE memory_chunks SET grams = ''")
        assert store.search_text(query_terms("钢琴"), 5, include_private=True) == []
        conn.execute("DELETE FROM schema_version WHERE version >= 3")
        conn.execute("ALTER TABLE memory_chunks DROP COLUMN tsv")
        conn.execute("ALTER TABLE memory_chunks DROP COLUMN grams")
        conn.execute("ALTER TABLE memory_chunks ADD COLUMN tsv tsvector "
                     "GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED")
    store.close()
    again = closed_after_test(PostgresStore(pg_dsn, agent_key="old"))
    assert again.stats().schema_version == LATEST
    hits = again.search_text(query_terms("钢琴"), 5, include_private=True)
    assert [(h.path, h.start_line) for h in hits] == [("memory/2026-01-02.md", 3)]
    again.close()


@pytest.fixture
def zh_workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2026-01-02.md").write_text(
        "# 2026-01-02\n\n- 明天下雨，记得带伞。\n- 我女儿每周三学钢琴，老师姓王。\n"
        "- 周末和朋友去爬山。\n", encoding="utf-8")
    (ws / "memory" / "2026-01-03.md").write_text(
        "# 2026-01-03\n\n- 猫今天没有吃饭。\n", encoding="utf-8")
    return ws


def test_memory_search_finds_a_two_character_word_and_shows_its_line(zh_workspace: Path) -> None:
    from soulframe._engine.agent import Agent
    from soulframe._engine.config import load_config

    agent = Agent(load_config(workspace=zh_workspace, search=False,
                              overrides={"embedding.provider": "none"}))
    try:
        results = agent.memory.search("钢琴")
        assert list(results), results
        top = list(results)[0]
        assert top.path == "memory/2026-01-02.md"
        assert "钢琴" in top.snippet and "爬山" in top.snippet  # the line, in its paragraph
        assert top.score > 0.5  # not zeroed by a term-coverage check that sees no word
        cat = agent.memory.search("猫")
        assert [h.path for h in cat][:1] == ["memory/2026-01-03.md"]
    finally:
        agent.close()


@pytest.mark.parametrize(("query", "note"), [
    ("Muller", "Meeting at Café Müller in München"),
    ("Munchen Cafe", "Meeting at Café Müller in München"),
    ("Müller", "Meeting at Cafe Muller in Munchen"),
    ("Nguyễn Huế", "NFD:Bà Nguyễn Thị Hương sống ở Huế, thích phở bò."),
    ("NFD:Hương", "Bà Nguyễn Thị Hương sống ở Huế, thích phở bò."),
])
def test_a_word_is_found_with_or_without_its_accents_in_either_unicode_form(
        workspace: Path, query: str, note: str) -> None:
    """The keyword index drops Latin accents; the score that follows it must too, and a
    note saved in decomposed form (macOS: "e" + a combining accent) matches a query typed
    composed, and the other way round. Keyword-only, so nothing else can find it."""
    import unicodedata

    from soulframe._engine.agent import Agent
    from soulframe._engine.config import load_config

    def form(text: str) -> str:
        return unicodedata.normalize("NFD", text[4:]) if text.startswith("NFD:") else text

    (workspace / "memory").mkdir(exist_ok=True)
    (workspace / "memory" / "2026-09-05.md").write_text(f"# 2026-09-05\n- {form(note)}\n- Paid the rent.\n")
    agent = Agent(load_config(workspace=workspace, search=False, overrides={"embedding.provider": "none"}))
    hits = agent.memory.search(form(query))
    assert hits and hits[0].start_line <= 2 <= hits[0].end_line and hits[0].score > 0.5, hits


def test_a_snippet_of_a_long_line_never_cuts_a_character_in_two() -> None:
    """A family emoji (joined by U+200D), a skin tone, a Thai tone mark: a snippet cut out
    of one long line starts and ends where a reader's character does."""
    from soulframe._engine.memory.querying import snippet
    from soulframe.kit import is_safe_cut

    line = "".join(f"水曜日 {i} 👨\u200d👩\u200d👧\u200d👦 ก่ 👍🏽 é́ " for i in range(300))
    for term in ("水曜", "50", "150", "299"):
        for width in (97, 160, 320, 321):
            got, _ = snippet(line, [term], max_chars=width)
            core = got.strip("…").strip()
            k = line.find(core)
            assert k >= 0, (term, width, got[:40])
            e = k + len(core)
            assert is_safe_cut(line, k), (term, width, got[:12])
            assert is_safe_cut(line, e), (term, width, got[-12:])
            assert len(core) <= width


def test_a_word_across_a_forced_cut_of_a_long_line_is_found_by_keyword(tmp_path: Path) -> None:
    """A line of Chinese longer than a chunk, with no space or punctuation near the cut:
    the word the cut falls inside (手|机) is still found, keyword-only."""
    from soulframe._engine.agent import Agent
    from soulframe._engine.config import load_config

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    line = "天" * 999 + "手机" + "地" * 400  # memory.chunk_max_chars = 1000 cuts between 手 and 机
    (ws / "memory" / "2026-01-04.md").write_text(f"{line}\n", encoding="utf-8")
    agent = Agent(load_config(workspace=ws, search=False, overrides={"embedding.provider": "none"}))
    try:
        hits = agent.memory.search("手机")
        assert hits and hits[0].path == "memory/2026-01-04.md", hits
        assert "手机" in hits[0].snippet
    finally:
        agent.close()


def test_memory_get_reads_a_file_named_in_either_unicode_form(workspace: Path) -> None:
    """A file synced from macOS keeps its decomposed (NFD) name on Linux; the path a model
    or a keyboard writes is composed (NFC). Either spelling reads it, and the citation
    keeps the name as it is on disk."""
    import unicodedata

    from soulframe._engine.agent import Agent
    from soulframe._engine.config import load_config

    on_disk = unicodedata.normalize("NFD", "memory/réunion-équipe.md")
    (workspace / "memory").mkdir(exist_ok=True)
    (workspace / on_disk).write_text("# Réunion\n\n- Budget validé pour Hélios.\n", encoding="utf-8")
    agent = Agent(load_config(workspace=workspace, search=False, overrides={"embedding.provider": "none"}))
    try:
        agent.memory.sync()
        for typed in (unicodedata.normalize("NFC", on_disk), on_disk):
            got = agent.memory.get(f"{typed}#L3")
            assert got.text == "- Budget validé pour Hélios." and got.path == on_disk
    finally:
        agent.close()


@pytest.mark.parametrize(("query", "note"), [
    ("αθηνα", "Συνάντηση στην Αθήνα για το συμβόλαιο"),    # typed without the tonos
    ("ΣΥΜΒΟΛΑΙΟ", "Συνάντηση στην Αθήνα για το συμβόλαιο"),  # capitals carry none
    ("Αθήνα", "ΣΥΝΑΝΤΗΣΗ ΣΤΗΝ ΑΘΗΝΑ"),
    ("strasse", "Wir wohnen in der Goethe Straße 5"),
    ("ilik", "IŞIK Bey ile ılık bir görüşme"),              # Turkish dotless ı
    ("ışık", "IŞIK Bey ile ılık bir görüşme"),              # capital I of Turkish text
    ("محمد", "اجتماع مع مُحَمَّد في الرياض"),              # Arabic vowel marks
    ("שלום", "פגישה עם שָׁלוֹם בירושלים"),                  # Hebrew points
    ("مُحَمَّد", "اجتماع مع مُحَمَّد في الرياض"),          # as written still works
])
def test_a_word_is_found_in_its_plain_spelling_in_greek_arabic_hebrew_german_turkish(
        workspace: Path, query: str, note: str) -> None:
    """FTS5's unicode61 drops Latin accents only: a Greek word typed without its tonos, an
    Arabic or Hebrew one without vowel marks, 'strasse' for 'Straße', 'ilik' for 'ılık'
    found nothing by keyword (and a meaning search in those languages is weak with the
    default English model). Keyword-only, so nothing else can find it; the snippet shows
    the line."""
    from soulframe._engine.agent import Agent
    from soulframe._engine.config import load_config

    (workspace / "memory").mkdir(exist_ok=True)
    (workspace / "memory" / "2026-09-05.md").write_text(
        f"# 2026-09-05\n- Paid the rent.\n- {note}\n- Booked the dentist.\n", encoding="utf-8")
    agent = Agent(load_config(workspace=workspace, search=False, overrides={"embedding.provider": "none"}))
    try:
        hits = agent.memory.search(query)
        assert hits and hits[0].score > 0.5, hits
        assert hits[0].snippet.lstrip("- ").startswith(note), hits[0].snippet
        assert agent.memory.search("Vietnam") == []  # no match is still no match
    finally:
        agent.close()


def test_an_sqlite_index_from_schema_3_gets_the_plain_spellings(tmp_path: Path) -> None:
    """Chunks indexed before the plain spellings were stored get them on upgrade."""
    from soulframe_sqlite.schema import LATEST
    from soulframe_sqlite.store import SqliteStore

    path = tmp_path / "old.sqlite"
    old_sqlite_index(path, schema=3, text="Συνάντηση στην Αθήνα")
    store = SqliteStore(path)
    try:
        assert store.get_meta("schema_version") == str(LATEST)
        hits = store.search_text(query_terms("αθηνα"), 5, include_private=True)
        assert [(h.path, h.start_line) for h in hits] == [("memory/2026-01-02.md", 3)]
        assert store.check(deep=True) == []
    finally:
        store.close()
