"""The sources ``soulframe import`` reads, by name: on their own so that registering the
command (which every ``soulframe`` invocation does) need not import the importer."""

from __future__ import annotations

SOURCES = ("chatgpt", "claude", "claude-code", "codex", "openclaw", "soulframe")
