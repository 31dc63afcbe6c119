"""Benchmarks print their figures; run them with `tox -e bench`."""
