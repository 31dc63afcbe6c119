"""Word pieces of a short ASCII query without loading the ``tokenizers`` library.

Loading ``tokenizer.json`` with ``tokenizers`` costs ~30 ms of CPU (parsing 466 KB and
building its tables) plus its import: a tenth of a whole ``soulframe memory search``
process, for a query of ten words. For the BERT tokenizer of all-MiniLM-L6-v2 on plain
ASCII text the rules are short — drop control characters, lower-case, split on white space,
isolate each punctuation character, then greedy longest-match WordPiece with ``##``
continuations — so a query is tokenized here from the vocabulary alone, kept in the cache
directory as one token per line (read in ~1 ms).

Only when it is exactly equivalent: the tokenizer must be that configuration
(:func:`vocab_if_supported` checks ``tokenizer.json``), and the text pure ASCII with no
``[`` (special tokens such as ``[MASK]`` typed in a query are matched by the library before
normalisation). Anything else goes to the library. The test suite checks the two agree on
generated text.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: what the pure-Python path implements; anything else in tokenizer.json disables it
_NORMALIZER = {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
               "strip_accents": None, "lowercase": True}
_PRE_TOKENIZER = {"type": "BertPreTokenizer"}
_ASCII_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
#: ASCII white space as Rust's char::is_whitespace sees it, once control characters
#: (\x0b, \x0c and the rest of C0, and DEL) are dropped
_SPACE = frozenset(" \t\n\r")
_DROP = frozenset(chr(c) for c in (*range(0x00, 0x20), 0x7F)) - _SPACE


class QueryTokenizer:
    """WordPiece ids for ASCII text, exactly as the library's BERT tokenizer gives them."""

    def __init__(self, vocab: list[str], unk: str = "[UNK]", prefix: str = "##", max_chars: int = 100) -> None:
        self.ids: dict[str, int] = {tok: i for i, tok in enumerate(vocab)}
        self.unk_id = self.ids[unk]
        self.prefix = prefix
        self.max_chars = max_chars

    def encode(self, text: str) -> list[int] | None:
        """The ids (no [CLS]/[SEP]), or ``None`` when this text needs the library."""
        if not text.isascii() or "[" in text:
            return None
        out: list[int] = []
        for word in self._words(text):
            out.extend(self._wordpiece(word))
        return out

    @staticmethod
    def _words(text: str) -> list[str]:
        words: list[str] = []
        current: list[str] = []
        for ch in text:
            if ch in _DROP:
                continue
            if ch in _SPACE:
                if current:
                    words.append("".join(current))
                    current = []
            elif ch in _ASCII_PUNCT:
                if current:
                    words.append("".join(current))
                    current = []
                words.append(ch)
            else:
                current.append(ch.lower())
        if current:
            words.append("".join(current))
        return words

    def _wordpiece(self, word: str) -> list[int]:
        if len(word) > self.max_chars:
            return [self.unk_id]
        pieces: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            found = None
            while start < end:
                piece = word[start:end] if start == 0 else self.prefix + word[start:end]
                found = self.ids.get(piece)
                if found is not None:
                    break
                end -= 1
            if found is None:
                return [self.unk_id]
            pieces.append(found)
            start = end
        return pieces


def vocab_if_supported(tokenizer_json: Mapping[str, Any]) -> list[str] | None:
    """The vocabulary in id order, when ``tokenizer.json`` is the configuration
    :class:`QueryTokenizer` reproduces; else ``None``."""
    model = tokenizer_json.get("model") or {}
    if (
        tokenizer_json.get("normalizer") != _NORMALIZER
        or tokenizer_json.get("pre_tokenizer") != _PRE_TOKENIZER
        or model.get("type") != "WordPiece"
        or model.get("unk_token") != "[UNK]"
        or model.get("continuing_subword_prefix") != "##"
        or model.get("max_input_chars_per_word") != 100
    ):
        return None
    # added tokens must all look like [X]: a query without "[" can never contain one
    vocab = model.get("vocab")
    if not isinstance(vocab, dict) or sorted(vocab.values()) != list(range(len(vocab))):
        return None
    for added in tokenizer_json.get("added_tokens") or ():
        content = str(added.get("content", ""))
        if not (content.startswith("[") and content.endswith("]")) or vocab.get(content) != added.get("id"):
            return None
    if "[CLS]" not in vocab or "[SEP]" not in vocab:
        return None
    tokens = [""] * len(vocab)
    for tok, i in vocab.items():
        if "\n" in tok:
            return None
        tokens[i] = tok
    return tokens


def load(model_dir: Path, directory: Path | None) -> QueryTokenizer | None:
    """The query tokenizer for ``model_dir``'s ``tokenizer.json``, from the vocabulary
    file cached in ``directory`` (built on first use); ``None`` when it does not apply."""
    source = model_dir / "tokenizer.json"
    try:
        st = source.stat()
    except OSError:
        return None
    where = hashlib.sha256(str(source.resolve()).encode()).hexdigest()[:12]
    key = hashlib.sha256(f"v1;{st.st_size};{st.st_mtime_ns};{st.st_ino}".encode()).hexdigest()[:24]
    cached = directory / f"vocab-{where}-{key}.txt" if directory is not None else None
    if cached is not None:
        try:
            text = cached.read_text("utf-8")
        except (OSError, UnicodeDecodeError):
            text = None
        if text == "":
            return None  # built before: this tokenizer is not supported
        if text is not None:
            vocab = text.split("\n")
            if "[UNK]" in vocab:
                return QueryTokenizer(vocab)
    try:
        vocab_or_none = vocab_if_supported(json.loads(source.read_text("utf-8")))
    except (OSError, ValueError):
        return None
    if cached is not None:
        _write(cached, "" if vocab_or_none is None else "\n".join(vocab_or_none))
    return None if vocab_or_none is None else QueryTokenizer(vocab_or_none)


def _write(path: Path, text: str) -> None:
    """Write atomically, then remove the vocabularies of earlier versions of the file."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".txt", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
        prefix = path.name.rsplit("-", 1)[0] + "-"
        for other in path.parent.glob(f"{prefix}*.txt"):
            if other != path:
                other.unlink(missing_ok=True)
    except OSError:
        pass  # only the speed-up is lost
