"""The content hashes the index keeps per file and per chunk: SHA-256, first 16 bytes as
hex (the seeds' content hash). A sync compares a file's hash to skip an unchanged file
whatever chunker cut it, so they live here and not with a chunker."""

from __future__ import annotations

import hashlib


def text_hash(text: str) -> str:
    """SHA-256 of UTF-8 text, first 16 bytes as hex (the seeds' content hash)."""
    return hashlib.sha256(text.encode("utf-8")).digest()[:16].hex()


def bytes_hash(data: bytes) -> str:
    """SHA-256 of raw bytes (a file as read), first 16 bytes as hex."""
    return hashlib.sha256(data).digest()[:16].hex()
