"""Keyword search of inflected Greek, Cyrillic and Armenian words, and of emoji.

Russian, Ukrainian, Bulgarian, Serbian and Greek words change their ending (Петербург,
Петербурге, Петербурга; Αθήνα, Αθήνας), and neither FTS5's ``unicode61`` nor PostgreSQL's
``simple`` configuration stems them, so a search for one form missed the note holding
another. Emoji are separators to both tokenizers, so ``memory search 🎂`` found nothing by
keyword. Both stores now index a marked stem and an emoji's code points
(:func:`soulframe.kit.index_grams`, :func:`soulframe.kit.search_tokens`); text in the
Latin script is indexed, queried and scored exactly as before.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from pg_fixtures import closed_after_test
from soulframe._engine.memory.fusion import term_coverage
from soulframe._engine.memory.querying import best_lines, query_terms
from soulframe._engine.model import ChunkInput, FileRecord
from soulframe._engine.textsplit import index_grams, search_tokens
from store_support import old_sqlite_index

LATIN = [  # text -> (its grams, its query terms), as soulframe 0.2 made them
    ("Prefers dark-mode screenshots, 2 per_day",
     ("", ["prefers", "dark", "mode", "screenshots", "2", "per", "day"])),
    ("Meeting at Café Müller in München, Straße 5",
     ("strasse", ["meeting", "café", "müller", "münchen", "straße", "5"])),
    ("Nguyễn Thị Hương sống ở Huế", ("", ["nguyễn", "thị", "hương", "sống", "huế"])),
    ("Zażółć gęślą jaźń; İstanbul ılık",
     ("istanbul ilik", ["zażółć", "gęślą", "jaźń", "i̇stanbul", "ılık"])),
    ("Ærøskøbing ferry at 10:30 — ok?", ("", ["ærøskøbing", "ferry", "10", "30"])),
]


def test_latin_text_is_indexed_queried_and_scored_exactly_as_before() -> None:
    """English retrieval figures were chosen on real data: none of this may move."""
    for text, (grams, terms) in LATIN:
        assert index_grams(text) == grams, text
        assert query_terms(text) == terms, text
        assert all(search_tokens(t) == [] for t in terms), text
    for text, query, coverage, line in [
        ("Prefers dark-mode screenshots", "screenshot appearance dark", 2 / 3, (0, 0)),
        ("Meeting at Café Müller in München", "Muller munchen cafe meetings", 1.0, (0, 0)),
        ("Zażółć gęślą jaźń", "zazolc gesla", 1.0, (0, 0)),
        ("line one\nthe lease was signed\nline three", "what about the leases", 1.0, (1, 1)),
        ("Paid the rent", "dentist appointment", 0.0, (-1, -1)),
    ]:
        assert term_coverage(text, query_terms(query)) == pytest.approx(coverage), text
        assert best_lines(text, query_terms(query)) == line, text


@pytest.fixture
def keyword_agent(workspace: Path):
    """An agent over ``workspace`` with no model: only the keyword channel can find a note."""
    from soulframe._engine.agent import Agent
    from soulframe._engine.config import load_config

    (workspace / "memory").mkdir(exist_ok=True)

    def make(notes: dict[str, str]) -> Agent:
        for day, text in notes.items():
            (workspace / "memory" / f"{day}.md").write_text(f"# {day}\n\n- Paid the rent.\n- {text}\n",
                                                            encoding="utf-8")
        return Agent(load_config(workspace=workspace, search=False,
                                 overrides={"embedding.provider": "none"}))

    return make


@pytest.mark.parametrize(("query", "note"), [
    ("петербург", "Встреча с Олегом в Петербурге"),               # Russian, prepositional
    ("Москва", "Маша переехала в Москву в марте"),                 # accusative
    ("Федор", "Ужинали с Фёдором Ивановичем"),                     # ё typed as е, instrumental
    ("Ужгород", "Оксана повернулася з Ужгорода"),                  # Ukrainian, genitive
    ("бабуся", "Подзвонити бабусі в неділю"),                      # Ukrainian dative
    ("Пловдив", "Срещата в Пловдивския офис е в петък"),           # Bulgarian adjective
    ("Београд", "Марко ради у Београду од јуна"),                  # Serbian Cyrillic
    ("Երևան", "Հանդիպում Երևանում երկուշաբթի"),                  # Armenian locative
    ("Αθήνα", "Ο Νίκος δουλεύει στα γραφεία της Αθήνας"),          # Greek genitive
    ("θαλασσα", "Μας άρεσε πολύ το χρώμα της θάλασσας"),          # without the tonos
])
def test_another_form_of_a_word_is_found_by_keyword_with_its_line(
        keyword_agent, query: str, note: str) -> None:
    """Keyword-only: the note holding another form of the word comes first, scored as a
    full match (term coverage counts the form too), and its line is the snippet."""
    agent = keyword_agent({"2026-09-05": note})
    try:
        hits = agent.memory.search(query)
        assert hits and hits[0].path == "memory/2026-09-05.md", hits
        assert hits[0].score > 0.5, hits
        assert hits[0].snippet.lstrip("- ").startswith(note), hits[0].snippet
        assert agent.memory.search("Петров") == []  # a word sharing no stem finds nothing
    finally:
        agent.close()


def test_both_forms_of_a_city_are_found(keyword_agent) -> None:
    """Before, the keyword channel found only the note with the form typed; now both, above
    ``memory.min_score`` (the form typed first: it matches the word and its stem)."""
    agent = keyword_agent({"2026-09-05": "Маша переехала в Петербург",
                           "2026-09-06": "Встреча с Олегом в Петербурге"})
    try:
        hits = agent.memory.search("петербург")
        assert sorted(h.path for h in hits) == ["memory/2026-09-05.md", "memory/2026-09-06.md"], hits
        assert hits[0].path == "memory/2026-09-05.md" and min(h.score for h in hits) > 0.35, hits
    finally:
        agent.close()


@pytest.mark.parametrize(("query", "note"), [
    ("🎂", "Торт 🎂 для Ани к субботе"),
    ("👍", "Boss said 👍🏽 to the plan"),                     # a skin tone is the same emoji
    ("❤️", "Anniversary dinner ❤ at Luigi's"),               # with or without the selector
    ("👧", "Family photo 👨‍👩‍👧 on the fridge"),           # a part of a joined emoji
    ("🇺🇦", "Flight to Kyiv 🇺🇦 on Friday"),
    ("birthday 🎂", "Birthday party 🎂 for Ana on Saturday"),
])
def test_an_emoji_is_found_by_keyword(keyword_agent, query: str, note: str) -> None:
    agent = keyword_agent({"2026-09-05": note, "2026-09-06": "Dentist 🦷 on Monday"})
    try:
        hits = agent.memory.search(query)
        assert hits and hits[0].path == "memory/2026-09-05.md", hits
        assert hits[0].score > 0.5, hits
        assert hits[0].snippet.lstrip("- ").startswith(note), hits[0].snippet
        assert [h.path for h in agent.memory.search("🦷")] == ["memory/2026-09-06.md"]
    finally:
        agent.close()


NOTES = {
    "ru.md": "Встреча с Олегом в Петербурге в четверг",
    "el.md": "Τα γραφεία της Αθήνας κλείνουν στις πέντε",
    "uk.md": "Оксана повернулася до Ужгорода",
    "emoji.md": "Торт 🎂 к субботе",
    "en.md": "Petersburg trip planned, Athens too",
}
QUERIES = [("петербург", "ru.md"), ("ΑΘΗΝΑ", "el.md"), ("Ужгород", "uk.md"), ("🎂", "emoji.md"),
           ("petersburg", "en.md")]


def _store_finds_forms(store) -> None:
    for i, (path, text) in enumerate(NOTES.items()):
        store.replace_file(FileRecord(path=path, hash=f"h{i}", mtime_ns=1, size=1),
                           [ChunkInput(1, 1, text, f"c{i}")])
    for query, path in QUERIES:
        hits = store.search_text(query_terms(query), 5, include_private=True)
        assert [h.path for h in hits] == [path], query


def test_both_stores_find_other_forms_and_emoji(tmp_path: Path, pg_dsn: str) -> None:
    from soulframe_postgres.store import PostgresStore
    from soulframe_sqlite.store import SqliteStore

    for store in (SqliteStore(tmp_path / "m.sqlite"), closed_after_test(PostgresStore(pg_dsn, agent_key="a"))):
        try:
            _store_finds_forms(store)
        finally:
            store.close()


def test_an_sqlite_index_from_schema_4_gets_stems_and_emoji(tmp_path: Path) -> None:
    """Chunks indexed before the stems were stored are found by another form on upgrade."""
    from soulframe_sqlite.schema import LATEST
    from soulframe_sqlite.store import SqliteStore

    path = tmp_path / "old.sqlite"
    old_sqlite_index(path, schema=4, text="Встреча в Петербурге 🎂")
    conn = sqlite3.connect(path)  # as schema 4 wrote it: no stem, no emoji
    conn.execute("UPDATE chunks SET grams = ''")
    conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild')")
    conn.commit()
    conn.close()
    store = SqliteStore(path)
    try:
        assert store.get_meta("schema_version") == str(LATEST)
        for query in ("петербург", "🎂"):
            hits = store.search_text(query_terms(query), 5, include_private=True)
            assert [(h.path, h.start_line) for h in hits] == [("memory/2026-01-02.md", 3)], query
        assert store.check(deep=True) == []
    finally:
        store.close()


def test_a_postgres_schema_4_is_migrated_and_finds_other_forms(pg_dsn: str) -> None:
    import psycopg
    from soulframe_postgres.schema import LATEST
    from soulframe_postgres.store import PostgresStore

    store = closed_after_test(PostgresStore(pg_dsn, agent_key="old"))
    store.replace_file(FileRecord(path="memory/2026-01-02.md", hash="h", mtime_ns=1, size=1),
                       [ChunkInput(3, 3, "Встреча в Петербурге 🎂", "c")])
    store.close()
    with psycopg.connect(pg_dsn, autocommit=True) as conn:  # as migration 4 left it
        conn.execute("UPDATE memory_chunks SET grams = ''")
        conn.execute("DELETE FROM schema_version WHERE version >= 5")
    again = closed_after_test(PostgresStore(pg_dsn, agent_key="old"))
    try:
        assert again.stats().schema_version == LATEST
        for query in ("петербург", "🎂"):
            hits = again.search_text(query_terms(query), 5, include_private=True)
            assert [(h.path, h.start_line) for h in hits] == [("memory/2026-01-02.md", 3)], query
    finally:
        again.close()


def test_the_index_holds_the_stem_a_query_for_each_of_its_words_makes() -> None:
    """The index spells a whole text once; a query term alone: both must give one stem."""
    from soulframe._engine.textsplit import raw_words, stem_token

    data = Path(__file__).parents[2] / "data" / "inflection_eval" / "workspace" / "memory"
    texts = [p.read_text(encoding="utf-8") for p in sorted(data.glob("*.md"))]
    texts += ["ΑΘΗΝΑΣ Фёдором ЙОШКАР-ОЛА Ї Ўладзімір Ѓорѓи Երևանում straße İstanbul"]
    for text in texts:
        grams = set(index_grams(text).split())
        for word in raw_words(text):
            token = stem_token(word)
            assert token is None or token in grams, (word, token)
            assert search_tokens(word) == ([token] if token else [])


def test_the_term_budget_counts_the_chunks_a_stem_reaches(tmp_path: Path) -> None:
    """A large index scores only a query's rarer terms (SqliteStore.TERM_BUDGET). A word
    that is rare as typed but whose stem most chunks hold ("сегодня": сегодняшний ...) must
    count as common, or every keyword search with it ranks most of the index."""
    from soulframe_sqlite.store import SqliteStore

    store = SqliteStore(tmp_path / "m.sqlite")
    try:
        store.TERM_BUDGET_MIN_CHUNKS = 1  # as at 5,000 chunks and more
        store.replace_file(FileRecord(path="m.md", hash="h", mtime_ns=1, size=1), [
            *(ChunkInput(i, i, f"Сегодняшний план номер {i}", f"c{i}") for i in range(1, 41)),
            ChunkInput(41, 41, "Встреча в Петербурге", "p")])
        hits = store.search_text(query_terms("сегодня Петербург"), 50, include_private=True)
        assert [h.start_line for h in hits] == [41]
    finally:
        store.close()
