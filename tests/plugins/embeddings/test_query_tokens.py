"""A short ASCII query is tokenized without the tokenizers library: the ids must be exactly
the library's, or the query's vector would differ from the notes' vectors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from soulframe_embeddings import querytokens
from soulframe_embeddings.local import LocalProvider

PROVIDER = LocalProvider(weight_cache=False)
pytestmark = pytest.mark.skipif(not PROVIDER.available(), reason="offline model not installed")


@pytest.fixture(scope="module")
def both() -> tuple[querytokens.QueryTokenizer, object]:
    from tokenizers import Tokenizer

    path = PROVIDER.weights.path
    assert path is not None
    quick = querytokens.load(path, None)
    assert quick is not None
    library = Tokenizer.from_file(str(path / "tokenizer.json"))
    library.no_padding()  # as the provider uses it
    library.no_truncation()
    return quick, library


def library_ids(tokenizer: object, text: str) -> list[int]:
    return list(tokenizer.encode(text, add_special_tokens=False).ids)  # type: ignore[attr-defined]


@pytest.mark.parametrize("text", [
    "how do I get into his place if he's away?",
    "Dr Okafor moved the knee appointment to 3 December",
    "INC-4821: p95 latency 212ms (v2.4.1) -- pgvector/HNSW; e-mail foo@bar.example",
    "  tabs\tand\nnew lines\r\n and \x0bvertical\x0cfeeds\x00nul\x7fdel\x1fus  ",
    "supercalifragilisticexpialidocious antidisestablishmentarianism " + "x" * 101,
    "",
    "!!!???...,,,",
    "CamelCaseWords and UPPER and snake_case_words",
])
def test_known_texts_match_the_library(both: tuple, text: str) -> None:
    quick, library = both
    assert quick.encode(text) == library_ids(library, text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=127, blacklist_characters="["), max_size=80))
def test_any_ascii_text_matches_the_library(both: tuple, text: str) -> None:
    quick, library = both
    assert quick.encode(text) == library_ids(library, text)


WORDS = st.lists(st.from_regex(r"[A-Za-z][a-z0-9'-]{0,14}[.,?!]?", fullmatch=True), max_size=15).map(" ".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(WORDS)
def test_word_like_text_matches_the_library(both: tuple, text: str) -> None:
    quick, library = both
    assert quick.encode(text) == library_ids(library, text)


def test_other_text_is_left_to_the_library(both: tuple) -> None:
    quick, _ = both
    assert quick.encode("café au lait") is None
    assert quick.encode("东京 tower") is None
    assert quick.encode("what does [MASK] mean") is None


def test_another_tokenizer_configuration_is_not_imitated(tmp_path: Path) -> None:
    path = PROVIDER.weights.path
    assert path is not None
    data = json.loads((path / "tokenizer.json").read_text())
    data["normalizer"]["lowercase"] = False  # a cased model
    (tmp_path / "tokenizer.json").write_text(json.dumps(data))
    assert querytokens.load(tmp_path, tmp_path / "cache") is None
    assert querytokens.load(tmp_path, tmp_path / "cache") is None  # the verdict is cached too


def test_a_query_does_not_load_the_tokenizers_library(tmp_path: Path) -> None:
    import subprocess

    code = (
        "import sys\n"
        "from soulframe_embeddings.local import LocalProvider\n"
        "p = LocalProvider()\n"
        "v = p.embed_query('where is the spare key?')\n"
        "print('query', 'tokenizers' in sys.modules)\n"
        "p.embed_documents(['café'])\n"
        "print('accents', 'tokenizers' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "query False" in out.stdout and "accents True" in out.stdout
