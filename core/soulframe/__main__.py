"""``python -m soulframe`` (the tests use this rather than the console script on PATH)."""

from .cli import main

# guarded: a worker process `serve --http` starts (multiprocessing's spawn) imports the
# parent's main module again, and must not run the command line a second time
if __name__ == "__main__":
    main()
