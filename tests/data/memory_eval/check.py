"""Validate the memory-retrieval test set (stdlib only).

Run from anywhere:  python tests/data/memory_eval/check.py

Checks that every question in golden.jsonl is well formed, that every relevant passage
points at a file in workspace/, and that its ``contains`` substring occurs verbatim exactly
once in that file and inside a single chunk as the default chunker cuts it (<= 1,000 chars,
split at a blank line once half full). Exits 1 with one line per problem, naming the
golden.jsonl line, so a broken edit is found before an evaluation silently scores it as a miss.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORKSPACE = HERE / "workspace"
GOLDEN = HERE / "golden.jsonl"

KINDS = ("paraphrase", "exact", "when", "who", "multi", "temporal")
ID_RE = re.compile(r"^q\d{3}$")
DAILY_RE = re.compile(r"^memory/\d{4}-\d{2}-\d{2}\.md$")
CHUNK_MAX_CHARS = 1000  # memory.chunk_max_chars default (seed 000)
MIN_WORDS, MAX_WORDS = 3, 8  # a `contains` is a short phrase, not a paragraph


def chunk_spans(text: str, max_chars: int = CHUNK_MAX_CHARS) -> list[tuple[int, int]]:
    """(start, end) character offsets of chunks, mirroring the seed's rule.

    Lines accumulate; a blank line ends the chunk once it holds at least half of
    max_chars; a line that would push it past max_chars starts a new chunk. This is
    the reference the check uses so a ``contains`` never straddles two chunks.
    """
    spans: list[tuple[int, int]] = []
    start = pos = 0
    for line in text.splitlines(keepends=True):
        size = pos - start
        if size and size + len(line) > max_chars:
            spans.append((start, pos))
            start = pos
        pos += len(line)
        if not line.strip() and pos - start >= max_chars // 2:
            spans.append((start, pos))
            start = pos
    if pos > start:
        spans.append((start, pos))
    return spans


def check() -> int:
    problems: list[str] = []
    kinds: Counter[str] = Counter()
    ids: set[str] = set()
    relevant_total = 0
    cited_files: set[str] = set()
    texts: dict[str, str] = {}

    def text_of(rel: str) -> str | None:
        if rel not in texts:
            path = (WORKSPACE / rel).resolve()
            if WORKSPACE not in path.parents or not path.is_file():
                return None
            texts[rel] = path.read_text(encoding="utf-8")
        return texts[rel]

    lines = GOLDEN.read_text(encoding="utf-8").splitlines()
    for lineno, raw in enumerate(lines, 1):
        where = f"golden.jsonl:{lineno}"
        if not raw.strip():
            problems.append(f"{where}: blank line")
            continue
        try:
            item = json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.append(f"{where}: invalid JSON ({exc})")
            continue
        if set(item) != {"id", "query", "relevant", "kind"}:
            problems.append(f"{where}: keys must be id, query, relevant, kind; got {sorted(item)}")
            continue
        qid = item["id"]
        where = f"{where} ({qid})"
        if not isinstance(qid, str) or not ID_RE.match(qid):
            problems.append(f"{where}: id must look like q001")
        elif qid in ids:
            problems.append(f"{where}: duplicate id")
        ids.add(str(qid))
        if item["kind"] not in KINDS:
            problems.append(f"{where}: kind {item['kind']!r} not one of {', '.join(KINDS)}")
        kinds[item["kind"]] += 1
        if not isinstance(item["query"], str) or len(item["query"].split()) < 2:
            problems.append(f"{where}: query must be a natural-language question")
        rels = item["relevant"]
        if not isinstance(rels, list) or not rels:
            problems.append(f"{where}: relevant must be a non-empty list")
            continue
        if item["kind"] == "multi" and len({r.get("path") for r in rels}) < 2:
            problems.append(f"{where}: a multi question needs passages from at least two files")
        for rel in rels:
            relevant_total += 1
            path, needle = rel.get("path"), rel.get("contains")
            if (
                set(rel) != {"path", "contains"}
                or not isinstance(path, str)
                or not isinstance(needle, str)
            ):
                problems.append(f"{where}: each relevant entry needs string path and contains")
                continue
            if path != "MEMORY.md" and not DAILY_RE.match(path):
                problems.append(
                    f"{where}: path {path!r} is neither MEMORY.md nor memory/YYYY-MM-DD.md"
                )
            text = text_of(path)
            if text is None:
                problems.append(f"{where}: file {path} not found under workspace/")
                continue
            cited_files.add(path)
            words = len(needle.split())
            if not MIN_WORDS <= words <= MAX_WORDS:
                problems.append(
                    f"{where}: contains {needle!r} has {words} words, want {MIN_WORDS}-{MAX_WORDS}"
                )
            count = text.count(needle)
            if count != 1:
                problems.append(
                    f"{where}: contains {needle!r} occurs {count} times in {path}, want exactly 1"
                )
                continue
            at = text.index(needle)
            if not any(s <= at and at + len(needle) <= e for s, e in chunk_spans(text)):
                problems.append(
                    f"{where}: contains {needle!r} straddles a chunk boundary in {path}"
                )

    daily = sorted(WORKSPACE.glob("memory/*.md"))
    sizes = [p.stat().st_size for p in daily]
    chunks = sum(
        len(chunk_spans(p.read_text(encoding="utf-8"))) for p in [WORKSPACE / "MEMORY.md", *daily]
    )
    for log, size in zip(daily, sizes, strict=True):
        if not 1500 <= size <= 6000:
            problems.append(f"{log.relative_to(HERE)}: {size} bytes, daily logs should be 1.5-6 KB")

    print(f"questions: {sum(kinds.values())}  relevant passages: {relevant_total}")
    for kind in KINDS:
        print(f"  {kind:<11} {kinds[kind]:>3}")
    print(
        f"workspace: MEMORY.md + {len(daily)} daily logs "
        f"({min(sizes)}-{max(sizes)} bytes, {sum(sizes)} total), {chunks} chunks"
    )
    print(f"files cited as relevant: {len(cited_files)}")
    if problems:
        print(f"\n{len(problems)} problem(s):", file=sys.stderr)
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(check())
