"""``python -m soulframe`` (the tests use this rather than the console script on PATH)."""

from .cli import main

main()
