"""Skill search: the seed's BM25 (hand-computed), its tokenisation, hybrid fusion with an
embedding provider, and the real offline model when it is installed."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from soulframe import Agent, Registration, SkillSource, hookimpl
from soulframe._engine.plugins import make_plugin_manager
from soulframe._engine.skills.search import SeedBM25, seed_idf, tokenize


def write_skill(root: Path, dirname: str, name: str, description: str, body: str = "") -> None:
    d = root / dirname
    d.mkdir(parents=True, exist_ok=True)
    (d / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}")


class WorkspaceOnly:
    """A plugin offering only <workspace>/skills (no built-ins), so corpora are exact."""

    @staticmethod
    @hookimpl
    def register_skill_sources(agent: Any) -> list[SkillSource]:
        return [SkillSource(name="workspace", tier=1, root=agent.root / "skills")]


def test_tokenisation_follows_the_seed() -> None:
    # lowercase; non-alphanumerics (underscore included) become spaces; 1-char tokens dropped
    assert tokenize("Deploy_the SITE: v2 -> a/b c3 Ünïcode") == ["deploy", "the", "site", "v2", "c3", "ünïcode"]
    assert tokenize("a b c") == []


def test_tokenisation_splits_unspaced_scripts_as_memory_does() -> None:
    from soulframe._engine.memory.querying import query_terms, words
    from soulframe._engine.skills.search import tokenize_query

    assert tokenize("天气预报") == words("天气预报")  # pairs, then each character
    assert tokenize_query("天气") == query_terms("天气") == ["天气"]


def test_a_chinese_or_japanese_skill_is_found_by_a_word_inside_its_description(workspace: Path) -> None:
    write_skill(workspace / "skills", "weather", "weather", "查询明天的天气预报和空气质量")
    write_skill(workspace / "skills", "translate", "translate", "日本語の文章を英語に翻訳します")
    write_skill(workspace / "skills", "notes", "notes", "记录会议笔记")
    pm = make_plugin_manager(load_entrypoints=False, plugins=[WorkspaceOnly])
    agent = Agent.open(workspace, pm=pm, embedding__provider="none")
    assert [h.name for h in agent.skills.search("天气")][:1] == ["weather"]
    assert [h.name for h in agent.skills.search("翻訳")][:1] == ["translate"]
    assert [h.name for h in agent.skills.search("会议")][:1] == ["notes"]


def test_a_skill_is_found_by_a_word_typed_without_its_accents(workspace: Path) -> None:
    """On an English keyboard "rediger un cv" is how "Rédiger un CV" gets typed; memory
    search finds such a word, and skill search scores it as if typed with its accents.
    A word typed with accents still matches only as written."""
    write_skill(workspace / "skills", "cv", "cv-ecrire", "Rédiger une lettre en français")
    write_skill(workspace / "skills", "greek", "greek", "Σύνταξη συμβολαίου για την εταιρεία")
    write_skill(workspace / "skills", "viet", "viet", "Viết thư cho khách hàng")
    write_skill(workspace / "skills", "notes", "notes", "Keep meeting notes")
    pm = make_plugin_manager(load_entrypoints=False, plugins=[WorkspaceOnly])
    agent = Agent.open(workspace, pm=pm, embedding__provider="none")
    typed = agent.skills.search("rediger une lettre")
    accented = agent.skills.search("Rédiger une lettre")
    assert [h.name for h in typed][:1] == ["cv-ecrire"]
    assert typed[0].score == pytest.approx(accented[0].score)
    assert [h.name for h in agent.skills.search("francais")] == ["cv-ecrire"]
    assert [h.name for h in agent.skills.search("συνταξη")] == ["greek"]
    assert [h.name for h in agent.skills.search("thu khach hang")] == ["viet"]
    assert agent.skills.search("thú") == []  # marked: as written ("thư" is another word)


# Three documents (N = 3) and the query "deploy backup":
#   d0 = [site, deploy]             |d0| = 2
#   d1 = [backup, deploy, database] |d1| = 3
#   d2 = [notes, write]             |d2| = 2      avgdl = 7 / 3
CORPUS = [["site", "deploy"], ["backup", "deploy", "database"], ["notes", "write"]]
K1, B = 1.2, 0.75


def hand_scores() -> list[float]:
    idf_deploy = math.log((3 - 2 + 0.5) / (2 + 0.5) + 1)  # df = 2 -> log(1.6)
    idf_backup = math.log((3 - 1 + 0.5) / (1 + 0.5) + 1)  # df = 1 -> log(8/3)
    assert idf_deploy == pytest.approx(math.log(1.6)) and idf_backup == pytest.approx(math.log(8 / 3))
    avgdl = 7 / 3

    def term(idf: float, tf: int, dl: int) -> float:
        return idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * dl / avgdl))

    d0 = term(idf_deploy, 1, 2)
    d1 = term(idf_deploy, 1, 3) + term(idf_backup, 1, 3)      # both terms, longer doc
    return [d0, d1, 0.0]


def test_bm25_scores_equal_the_seed_formula_by_hand() -> None:
    expected = hand_scores()
    # d0 written out: |d0| / avgdl = 2 / (7/3) = 6/7
    assert expected[0] == pytest.approx(math.log(1.6) * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 6 / 7)))
    index = SeedBM25(CORPUS, k1=K1, b=B)
    assert index.idf["deploy"] == pytest.approx(math.log(1.6))
    assert list(index.scores(["deploy", "backup"])) == pytest.approx(expected, rel=1e-12)
    # the postings fast path and the document-by-document formula agree exactly
    assert list(index.get_scores(["deploy", "backup"])) == pytest.approx(expected, rel=1e-12)
    # why the seed's IDF and not classic Okapi's log((N - df + 0.5) / (df + 0.5)): a term in
    # more than half the documents would score negative there; here it stays positive
    assert math.log((3 - 2 + 0.5) / (2 + 0.5)) < 0 < index.idf["deploy"]
    assert seed_idf(3, 3) > 0


def test_skill_search_returns_the_seed_scores_top_five(workspace: Path) -> None:
    root = workspace / "skills"
    # name + description give exactly the three token lists above
    write_skill(root, "a", "site", "deploy")
    write_skill(root, "b", "backup", "deploy database")
    write_skill(root, "c", "notes", "write")
    pm = make_plugin_manager(load_entrypoints=False, plugins=[WorkspaceOnly])
    agent = Agent.open(workspace, pm=pm, embedding__provider="none")
    hits = agent.skills.search("Deploy, backup!")
    expected = hand_scores()
    assert [h.name for h in hits] == ["backup", "site"]  # "notes" matches nothing: left out
    assert hits[0].score == pytest.approx(expected[1], rel=1e-12)
    assert hits[1].score == pytest.approx(expected[0], rel=1e-12)
    assert hits[0].vector_score is None and hits[0].text_score == hits[0].score

    for i in range(10):
        write_skill(root, f"x{i}", f"deploy-{i}", "deploy helper")
    hits = agent.skills.search("deploy")
    assert len(hits) == 5  # skills.max_results
    assert len(agent.skills.search("deploy", k=20)) == 12
    assert agent.skills.search("   ") == [] and agent.skills.search("zzz") == []


def test_headings_are_searched_and_ties_break_by_name(workspace: Path) -> None:
    root = workspace / "skills"
    write_skill(root, "b", "beta", "same words", body="# Rotate credentials\n")
    write_skill(root, "a", "alpha", "same words")
    write_skill(root, "c", "gamma", "same words", body="```\n# rotate in a code block is not a heading\n```\n")
    pm = make_plugin_manager(load_entrypoints=False, plugins=[WorkspaceOnly])
    agent = Agent.open(workspace, pm=pm, embedding__provider="none")
    assert [h.name for h in agent.skills.search("rotate credentials")] == ["beta"]
    # alpha and gamma have identical documents: equal scores, name order
    hits = agent.skills.search("same words", k=3)
    assert hits[0].name == "alpha" and hits[1].name == "gamma" and hits[2].name == "beta"


# --------------------------------------------------------------------------- hybrid


class SynonymEmbedder:
    """A small real embedding model: a bag of concepts, where synonyms share a dimension.

    It is deterministic, so the fused scores can be computed exactly in the test."""

    name = "synonyms"
    model_id = "test/synonyms-v1"
    CONCEPTS = {
        "deploy": 0, "release": 0, "ship": 0, "publish": 0,
        "site": 1, "website": 1, "web": 1,
        "backup": 2, "snapshot": 2, "archive": 2,
        "database": 3, "db": 3, "postgres": 3,
        "notes": 4, "journal": 4, "diary": 4,
        "write": 5, "jot": 5,
    }
    dimensions = 6

    def __init__(self) -> None:
        self.document_calls = 0

    def available(self) -> bool:
        return True

    def _vec(self, text: str) -> np.ndarray:
        v = np.zeros(self.dimensions, dtype=np.float32)
        for tok in tokenize(text):
            if tok in self.CONCEPTS:
                v[self.CONCEPTS[tok]] += 1
        n = float(np.linalg.norm(v))
        return v / n if n else v

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.document_calls += 1
        return np.stack([self._vec(t) for t in texts]) if texts else np.zeros((0, 6), np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self._vec(text)


def hybrid_agent(workspace: Path, embedder: SynonymEmbedder) -> Agent:
    class Provider:
        @staticmethod
        @hookimpl
        def register_embedding_providers() -> list[Registration]:
            return [Registration(name="synonyms", factory=lambda agent: embedder)]

    pm = make_plugin_manager(load_entrypoints=False, plugins=[WorkspaceOnly, Provider])
    return Agent.open(workspace, pm=pm, embedding__provider="synonyms", store__backend="none-here")


def test_hybrid_fuses_normalised_bm25_and_cosine_0_3_0_7(workspace: Path) -> None:
    root = workspace / "skills"
    write_skill(root, "a", "site", "deploy")
    write_skill(root, "b", "backup", "deploy database")
    write_skill(root, "c", "notes", "write")
    emb = SynonymEmbedder()
    agent = hybrid_agent(workspace, emb)
    hits = agent.skills.search("deploy backup")
    bm25 = hand_scores()
    # the query's ceiling: each term's IDF * (k1 + 1)
    ceiling = (math.log(1.6) + math.log(8 / 3)) * 2.2
    q = emb.embed_query("deploy backup")
    cos = {name: float(np.clip(emb._vec(f"{name}: {desc}") @ q, 0, 1))
           for name, desc in [("site", "deploy"), ("backup", "deploy database"), ("notes", "write")]}
    fused = {
        "site": 0.3 * bm25[0] / ceiling + 0.7 * cos["site"],
        "backup": 0.3 * bm25[1] / ceiling + 0.7 * cos["backup"],
    }
    assert [h.name for h in hits] == ["backup", "site"]  # notes: no keyword, cosine 0
    for h in hits:
        assert h.score == pytest.approx(fused[h.name], rel=1e-6)
        assert h.vector_score == pytest.approx(cos[h.name], rel=1e-6)
    assert hits[0].text_score == pytest.approx(bm25[1] / ceiling)
    assert 0 < hits[0].text_score < 1  # type: ignore[operator]


def test_hybrid_finds_synonyms_bm25_cannot_and_caches_skill_vectors(workspace: Path) -> None:
    root = workspace / "skills"
    write_skill(root, "a", "site", "deploy")
    write_skill(root, "b", "backup", "deploy database")
    write_skill(root, "c", "notes", "write")
    emb = SynonymEmbedder()
    agent = hybrid_agent(workspace, emb)
    assert agent.skills.search("journal diary", semantic=False) == []
    hits = agent.skills.search("journal diary")
    # no keyword matches: the cosine alone ranks (weights renormalised to 1)
    assert hits[0].name == "notes" and hits[0].score == pytest.approx(1 / math.sqrt(2), rel=1e-6)
    assert hits[0].text_score is None
    calls = emb.document_calls
    agent.skills.search("ship the website")
    assert emb.document_calls == calls  # skill vectors are cached per version
    # a reload with unchanged texts embeds nothing new (cache keyed by the text's hash)
    write_skill(root, "d", "archive", "snapshot postgres")
    agent.skills.reload()
    assert agent.skills.search("db snapshot")[0].name == "archive"
    assert emb.document_calls == calls + 1


@pytest.mark.model
def test_real_offline_model_ranks_a_paraphrase(workspace: Path) -> None:
    try:
        import soulframe_embeddings
    except ImportError as exc:  # pragma: no cover - depends on the embeddings plugin
        pytest.skip(f"soulframe_embeddings is not importable: {exc}")
    pm = make_plugin_manager(load_entrypoints=False, plugins=[soulframe_embeddings, _skills_plugin()])
    agent = Agent.open(workspace, pm=pm, embedding__provider="local")
    try:
        embedder = agent.embedder
    except Exception as exc:  # the weights package is not installed
        pytest.skip(f"the offline model is not available: {exc}")
    assert embedder is not None
    write_skill(workspace / "skills", "w", "weather", "Get the forecast and current conditions for a city")
    write_skill(workspace / "skills", "i", "invoice", "Create and send an invoice to a client")
    hits = agent.skills.search("will it rain tomorrow in Lisbon")
    assert hits[0].name == "weather"
    assert hits[0].vector_score is not None and hits[0].text_score is None
    hits = agent.skills.search("tidy up what I wrote in my journal this week")
    assert hits[0].name == "memory-maintenance"


def _skills_plugin() -> Any:
    import soulframe_skills

    return soulframe_skills


@pytest.mark.model
def test_an_unrelated_skill_is_not_returned_for_every_question(workspace: Path) -> None:
    """The README's example, "open a pull request", with only the built-in skills: none of
    them is about pull requests, so none comes back (it used to return heartbeat-checklist
    at 0.11, found by nothing but the cosine every text has with every other); the right
    skill still does once it exists."""
    try:
        import soulframe_embeddings
    except ImportError as exc:  # pragma: no cover - depends on the embeddings plugin
        pytest.skip(f"soulframe_embeddings is not importable: {exc}")
    pm = make_plugin_manager(load_entrypoints=False, plugins=[soulframe_embeddings, _skills_plugin()])
    agent = Agent.open(workspace, pm=pm, embedding__provider="local")
    try:
        assert agent.embedder is not None
    except Exception as exc:  # the weights package is not installed
        pytest.skip(f"the offline model is not available: {exc}")
    assert agent.skills.search("open a pull request") == []
    write_skill(workspace / "skills", "p", "pr-review",
                "Review a GitHub pull request, read the diff, run tests, leave comments")
    agent = Agent.open(workspace, pm=pm, embedding__provider="local")
    assert [h.name for h in agent.skills.search("open a pull request")][:1] == ["pr-review"]
    # a paraphrase no word of which matches is still found through the vector channel
    assert [h.name for h in agent.skills.search("look over the changes in this PR")] == ["pr-review"]
    unfloored = Agent.open(workspace, pm=pm, embedding__provider="local", skills__min_score=0)
    assert "heartbeat-checklist" in {h.name for h in unfloored.skills.search("open a pull request")}
