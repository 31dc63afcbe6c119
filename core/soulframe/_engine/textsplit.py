"""Words for keyword search in every script, including those written without spaces.

Chinese and Japanese put no space between words, Thai, Lao, Khmer and Myanmar neither, and
Korean attaches particles to the word they follow (피아노를 = "piano" + object marker). A
tokenizer that splits on spaces sees a whole sentence (or a word and its particle) as one
word, so a search for 钢琴 never matches 我女儿每周三学钢琴. Splitting these scripts the
way Lucene's CJK analyser does needs no dictionary and no download: every run of such
characters becomes its overlapping pairs of characters (bigrams), so any substring of two
or more characters - a two-character Chinese word included - is a run of pairs the text
also holds. A text also keeps each character alone (unigrams), so a one-character query
(猫) finds it; a query uses pairs only (unigrams of a longer query would match almost
every note), and a character alone only where it stands alone.

A "character" here is a cluster: a base letter with the combining marks that follow it
(Thai vowels and tone marks, Devanagari vowel signs), so no pair starts with a mark. Text
in other scripts gives exactly the words it gave before: letters and digits, lower-cased,
split at everything else. Memory search (both stores' keyword channel, the snippet and
fusion's term coverage) and skill search use these functions, so a query is split the
same way as the text it is matched against.
"""

from __future__ import annotations

import functools
import re
import unicodedata

#: scripts written without spaces between words (Korean joins particles to words)
_UNSPACED_RANGES = (
    "\u0e00-\u0eff"  # Thai, Lao
    "\u1000-\u109f"  # Myanmar
    "\u1100-\u11ff"  # Hangul Jamo
    "\u1780-\u17ff"  # Khmer
    "\u3005-\u3007"  # 々 〆 〇
    "\u3040-\u30ff"  # Hiragana, Katakana (ー included)
    "\u3130-\u318f"  # Hangul compatibility Jamo
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\ua960-\ua97f"  # Hangul Jamo extended-A
    "\uac00-\ud7ff"  # Hangul syllables, Jamo extended-B
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff66-\uff9f"  # half-width Katakana
    "\U00020000-\U0003134f"  # CJK extensions B-G
)


def _marks() -> str:
    """The combining marks of Indic and South-East Asian scripts (Thai vowels above and
    below, tone marks, Devanagari vowel signs...): letters of a word, not separators."""
    out: list[str] = []
    for lo, hi in ((0x0900, 0x0DFF), (0x0E00, 0x0EFF), (0x0F00, 0x0FFF), (0x1000, 0x109F),
                   (0x1780, 0x17FF)):
        out.extend(chr(c) for c in range(lo, hi + 1) if unicodedata.category(chr(c))[0] == "M")
    return "".join(out)


#: combining marks that belong to the word they sit in (also FTS5 ``tokenchars``)
MARKS = _marks()
_MARK_SET = frozenset(MARKS)
_WORD = re.compile(r"(?:[^\W_]|[" + re.escape(MARKS) + r"])+")
#: a regular-expression class matching one such character (also valid in PostgreSQL)
UNSPACED_CLASS = "[" + _UNSPACED_RANGES + "]"
_UNSPACED = re.compile(UNSPACED_CLASS)
#: within a word: runs of unspaced-script letters (with their marks), and the rest
_RUN = re.compile(
    "((?:[" + _UNSPACED_RANGES + "][" + re.escape(MARKS) + "]*)+)"
)


def has_unspaced(text: str) -> bool:
    """Whether ``text`` holds any character of a script written without spaces."""
    return _UNSPACED.search(text) is not None


#: Cyrillic letters written with a mark on a plain one (ё and е, й and и, Ukrainian ї and і,
#: Belarusian ў and у, Macedonian ѓ and г): typed either way, as most Russian text drops ё
_CYRILLIC_MARKED = "ЁёЙйЇїЎўЃѓЌќЀѐЍѝ"
#: what :func:`search_spelling` changes: Greek letters (accents, final sigma), Hebrew points,
#: Arabic vowel marks and tatweel, ß and Turkish dotless/dotted i, Cyrillic ё, й ...
_SPELLED = re.compile("[\u00df\u1e9e\u0131\u0130\u0370-\u03ff\u1f00-\u1fff\u0591-\u05c7"
                      "\u0610-\u061a\u0640\u064b-\u065f\u0670\u06d6-\u06ed" + _CYRILLIC_MARKED + "]")
#: a combining accent (U+0300-036F) on a Greek letter
_GREEK_MARKS = re.compile("(?<=[\u0370-\u03ff\u1f00-\u1fff])[\u0300-\u036f]+")
#: Hebrew points and cantillation, Arabic vowel and Quranic marks, the tatweel
_SEMITIC_MARKS = re.compile("[\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7"
                            "\u0610-\u061a\u0640\u064b-\u065f\u0670\u06d6-\u06ed]")
#: letters whose marks :func:`search_spelling` drops: Greek, Hebrew and Arabic
_MARKED = re.compile("[\u0370-\u03ff\u1f00-\u1fff\u0591-\u05c7\u0610-\u061a\u0640\u064b-\u065f"
                     "\u0670\u06d6-\u06ed]")
_SWAPS = {"ß": "ss", "ẞ": "ss", "ı": "i", "İ": "i", "ς": "σ",
          **dict(zip(_CYRILLIC_MARKED, "ЕеИиІіУуГгКкЕеИи", strict=True))}
_SWAPPED = re.compile("[" + "".join(_SWAPS) + "]")


def spelt_otherwise(text: str) -> bool:
    """Whether :func:`search_spelling` changes more of ``text`` than its case."""
    return not text.isascii() and _SPELLED.search(text) is not None


def search_spelling(text: str) -> str:
    """``text`` lower-cased and spelt as keyword search compares it where FTS5's
    ``unicode61`` folds nothing: Greek without its accents and with one sigma (ΑΘΉΝΑ,
    Αθήνα, αθηνα are one word), Hebrew without points, Arabic without vowel marks or
    tatweel (مُحَمَّد is محمد), ß as ss, Turkish ı and İ as i, Cyrillic ё as е and й as и
    (Фёдор, Федор; PostgreSQL's index folds them too). Latin accents are left to
    :func:`fold_diacritics` (which keeps Vietnamese tones apart); other text is only
    lower-cased. Line breaks stay where they are."""
    if text.isascii() or not _SPELLED.search(text):
        return text.lower()
    if _MARKED.search(text):
        decomposed = unicodedata.normalize("NFD", text)
        bare = unicodedata.normalize("NFC", _SEMITIC_MARKS.sub("", _GREEK_MARKS.sub("", decomposed)))
    else:  # only letters to swap (Cyrillic ё, ß ...): NFC(NFD(x)) is NFC(x), at a tenth of the cost
        bare = unicodedata.normalize("NFC", text)
    # a few letters in a long text: swapped where they are (str.translate looks up every one)
    return _swap(_swap(bare).lower())


def _swap(text: str) -> str:
    return _SWAPPED.sub(lambda m: _SWAPS[m.group(0)], text)



def spelling_variants(text: str) -> list[str]:
    """The words of :func:`search_spelling` that ``text`` does not already hold as written
    (what a keyword index stores beside it so the plain spelling finds it)."""
    if text.isascii() or not _SPELLED.search(text):
        return []
    return _variants(text, raw_words(search_spelling(text)))


def _variants(text: str, plain_words: list[str]) -> list[str]:
    have = set(raw_words(text))
    return list(dict.fromkeys(w for w in plain_words if w not in have))


def caseless(text: str) -> str:
    """``text`` as compared when case does not matter, in every script: NFC (a line saved
    decomposed on macOS matches one typed composed), case-folded ("Straße" -> "strasse"),
    and Turkish's dotted İ and dotless ı as i: Turkish text's capital I folds to i
    elsewhere, so "ışık" and "IŞIK" meet only there, and "istanbul" is in "İstanbul"."""
    folded = unicodedata.normalize("NFC", text).casefold()
    return folded if folded.isascii() else folded.replace("i\u0307", "i").replace("\u0131", "i")


# Cached by content: a search folds each keyword hit's text for the coverage and the
# snippet, and the same chunks come back search after search (a pure function).
@functools.lru_cache(maxsize=2048)
def fold_diacritics(text: str) -> str:
    """``text`` with the accents of Latin, Greek and Cyrillic letters dropped ("Müller" ->
    "Muller", "Đà Nẵng" -> "Da Nang"), as FTS5's ``unicode61`` tokenizer matches them, and
    in NFC: what a keyword check compares on both sides. A mark on another script stays
    (Japanese dakuten: が is not か)."""
    if text.isascii() or not _MAY_FOLD.search(text):  # emoji, CJK ...: nothing to fold
        return text
    # the regex engine drops the marks: a chunk is long, and this runs per keyword hit
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFC", _LATIN_MARKS.sub("", decomposed)).translate(_STROKED)


#: a letter that may carry an accent (Latin-1 to Cyrillic, Latin Extended Additional) or a
#: combining accent
_MAY_FOLD = re.compile("[\u00c0-\u052f\u0300-\u036f\u1e00-\u1eff]")
#: the combining accents (U+0300-036F) that follow a Latin, Greek or Cyrillic letter
_LATIN_MARKS = re.compile("(?<=[\u0000-\u052f])[\u0300-\u036f]+")


#: letters whose stroke is no combining mark, so NFD keeps them whole
_STROKED = str.maketrans({"đ": "d", "Đ": "D", "ł": "l", "Ł": "L", "ø": "o", "Ø": "O", "ħ": "h", "Ħ": "H"})


def clusters(run: str) -> list[str]:
    """``run`` cut into characters, each with the combining marks that follow it."""
    out: list[str] = []
    for ch in run:
        if out and ch in _MARK_SET:
            out[-1] += ch
        else:
            out.append(ch)
    return out


def _pieces(word: str) -> list[tuple[bool, str]]:
    """``word`` cut into (unspaced?, piece): "iphone手机" -> [(False, "iphone"), (True, "手机")]."""
    out = []
    for i, piece in enumerate(_RUN.split(word)):
        if piece:
            out.append((i % 2 == 1, piece))
    return out


def _pairs(units: list[str]) -> list[str]:
    return [a + b for a, b in zip(units, units[1:], strict=False)] if len(units) > 1 else units


def raw_words(text: str) -> list[str]:
    """Lower-cased runs of letters, digits and combining marks (what a space-splitting
    tokenizer calls words; an unspaced run stays whole)."""
    return [w.lower() for w in _WORD.findall(text)]


def query_words(text: str) -> list[str]:
    """The words of a query: as :func:`raw_words`, except that each run of an unspaced
    script becomes its character pairs (a single character stays itself)."""
    ws = raw_words(text)
    if not has_unspaced(text):
        return ws
    out: list[str] = []
    for w in ws:
        for unspaced, piece in _pieces(w):
            out.extend(_pairs(clusters(piece)) if unspaced else [piece])
    return out


def text_words(text: str) -> list[str]:
    """The words of a text to be searched: as :func:`query_words`, plus each character of
    an unspaced run alone (so a one-character query finds it)."""
    ws = raw_words(text)
    if not has_unspaced(text):
        return ws
    out: list[str] = []
    for w in ws:
        for unspaced, piece in _pieces(w):
            if not unspaced:
                out.append(piece)
                continue
            units = clusters(piece)
            out.extend(_pairs(units))
            if len(units) > 1:
                out.extend(units)
    return out


#: how many letters of a word the crude stem keeps: term coverage, the snippet's line and the
#: keyword index of Greek, Cyrillic and Armenian words all use it
STEM_LENGTH = 5


def stem(word: str) -> str:
    """A crude stem: the first :data:`STEM_LENGTH` letters of a long word, a short word
    itself ("screenshots" ~ "screenshot"; "петербурге" ~ "петербург")."""
    return word[:STEM_LENGTH]


#: letters of cased alphabets other than Latin whose words inflect at the end: Greek,
#: Cyrillic (with its supplement and extensions) and Armenian
_INFLECTING = re.compile("[\u0370-\u03ff\u1f00-\u1fff\u0400-\u052f\u1c80-\u1c8f"
                         "\u2de0-\u2dff\ua640-\ua69f\u0531-\u058f]")
#: what marks a stem in a keyword index: ASCII letters before a Greek, Cyrillic or Armenian
#: one, so no word a person writes is one (and FTS5's Porter stemmer leaves it alone)
STEM_MARK = "zz"
#: what marks an emoji in a keyword index: the code points follow, in decimal (digits: the
#: Porter stemmer would take "ed" off a hexadecimal 1f4ed)
EMOJI_MARK = "zzu"


def inflects(text: str) -> bool:
    """Whether ``text`` holds a Greek, Cyrillic or Armenian letter."""
    return _INFLECTING.search(text) is not None


def stem_token(word: str) -> str | None:
    """The index word standing for the stem of ``word`` when it is Greek, Cyrillic or
    Armenian and at least :data:`STEM_LENGTH` letters long (``None`` otherwise): these
    languages inflect at the end (Петербург, Петербурге, Петербурга; Αθήνα, Αθήνας), and a
    word's first five letters find its other forms about as well as a real stemmer
    (McNamee & Mayfield's truncation results). Taken from the plain spelling
    (:func:`search_spelling`), so Фёдором and федора share one."""
    if not _INFLECTING.match(word):
        return None
    plain = search_spelling(word)
    return STEM_MARK + stem(plain) if len(plain) >= STEM_LENGTH else None


#: a pictograph: the emoji blocks, dingbats, miscellaneous symbols and technical signs,
#: arrows and shapes drawn as emoji (a symbol of these that is no emoji is rare in notes)
_PICTOGRAPH = re.compile("[\u2300-\u23ff\u25a0-\u25ff\u2600-\u27bf\u2b00-\u2bff\u3030\u303d"
                         "\u3297\u3299\U0001f000-\U0001faff]")
#: what does not tell one emoji from another: the emoji and text presentation selectors,
#: skin tones, and the tag characters of a subdivision flag
_EMOJI_NOISE = re.compile("[\ufe0e\ufe0f\U0001f3fb-\U0001f3ff\U000e0020-\U000e007f]")
#: one emoji as a reader sees it: two regional indicators (a flag), or a pictograph with
#: its selector, skin tone and tags, and whatever a zero-width joiner adds (👨‍👩‍👧)
_ONE_EMOJI = _PICTOGRAPH.pattern + _EMOJI_NOISE.pattern + "*"
_EMOJI = re.compile("[\U0001f1e6-\U0001f1ff]{2}|" + _ONE_EMOJI + "(?:\u200d" + _ONE_EMOJI + ")*")


def emoji(text: str) -> list[str]:
    """The emoji of ``text``, in order, each without its presentation selector or skin
    tone (👍🏽 is 👍, ❤️ is ❤): what keyword search matches an emoji by."""
    if text.isascii() or not _PICTOGRAPH.search(text):
        return []
    out = []
    for m in _EMOJI.finditer(text):
        key = _EMOJI_NOISE.sub("", m.group(0))
        if key and all(ch == "\u200d" or unicodedata.category(ch) == "So" for ch in key):
            out.append(key)
    return out


def emoji_token(key: str) -> str:
    """The index word for one emoji (:func:`emoji`): its code points in decimal."""
    return EMOJI_MARK + "u".join(str(ord(ch)) for ch in key if ch != "\u200d")


def emoji_shown(text: str) -> list[str]:
    """What a search for an emoji finds in ``text``: each of its emoji, and each part of
    one joined by zero-width joiners (👨‍👩‍👧 is found by 👧 too)."""
    out: list[str] = []
    for key in emoji(text):
        out.append(key)
        if "\u200d" in key:
            out.extend(part for part in key.split("\u200d") if part)
    return out


def search_tokens(term: str) -> list[str]:
    """The index words a store matches for a query term besides the term as written and
    its plain spelling: the stem of a Greek, Cyrillic or Armenian word, the code points of
    an emoji (``[]`` for every other term, Latin words included)."""
    if term.isascii():
        return []
    keys = emoji(term)
    if keys:
        return [emoji_token(k) for k in keys]
    return [t for w in raw_words(term) if (t := stem_token(w))]


def index_grams(text: str) -> str:
    """The extra words a full-text index stores beside ``text`` so that its unspaced runs
    can be found by any part: every character pair, then every character, space-separated
    (``""`` for text without unspaced scripts, so its index is exactly what it was).
    Words :func:`search_spelling` spells otherwise (Greek with accents, Arabic with vowel
    marks, ß ...) add that spelling too, Greek, Cyrillic and Armenian words their marked
    stem, and each emoji its code points (what :func:`search_tokens` makes of a query term)."""
    extra: list[str] = []
    if not text.isascii():
        spelt = _SPELLED.search(text) is not None
        plain_words = raw_words(search_spelling(text)) if spelt else None
        if plain_words is not None:
            extra += _variants(text, plain_words)
        if inflects(text):  # as stem_token, on the whole text spelt once
            extra += [STEM_MARK + stem(w) for w in (plain_words or raw_words(text))
                      if len(w) >= STEM_LENGTH and _INFLECTING.match(w)]
        extra += [emoji_token(key) for key in emoji_shown(text)]
    if not has_unspaced(text):
        return " ".join(extra)
    pairs: list[str] = []
    singles: list[str] = []
    for w in raw_words(text):
        for unspaced, piece in _pieces(w):
            if unspaced:
                units = clusters(piece)
                if len(units) > 1:
                    pairs.extend(_pairs(units))
                singles.extend(units)
    return " ".join(pairs + singles + extra)
