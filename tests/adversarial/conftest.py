"""The standing adversarial suite: every attack a test makes is counted, and the totals are
printed at the end of the run (attempts, refusals, leaks, tracebacks). A change must keep
leaks and tracebacks at 0.

A test takes the ``adversary`` fixture and reports each attempt::

    def test_dotdot(adversary, ...):
        with adversary.attempt("memory_get ../SOUL.md") as a:
            result = ...
            a.refused(result.error is not None)   # a refusal the user sees
            a.leaked("secret" in result.text)      # private text reached them
    # an exception escaping the block counts as a traceback (and fails the test)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import attrs
import pytest
from tally import TALLY as _TALLY  # noqa: E402


@attrs.define
class Attempt:
    what: str

    def refused(self, condition: bool = True) -> None:
        if condition:
            _TALLY.refusals += 1

    def leaked(self, condition: bool) -> None:
        if condition:
            _TALLY.leaks.append(self.what)
        assert not condition, f"leak: {self.what}"


class Adversary:
    def __init__(self, default_class: str = "other") -> None:
        self.default_class = default_class

    @contextmanager
    def attempt(self, what: str, cls: str | None = None) -> Iterator[Attempt]:
        """One attack; ``cls`` names its class in the tally (default: the test module's)."""
        _TALLY.attempts += 1
        name = cls or self.default_class
        _TALLY.classes[name] = _TALLY.classes.get(name, 0) + 1
        try:
            yield Attempt(what)
        except AssertionError:
            raise
        except BaseException as exc:
            _TALLY.tracebacks.append(f"{what}: {type(exc).__name__}: {exc}")
            raise

    def traceback(self, what: str, stderr: str) -> None:
        """Count a subprocess's Python traceback (and fail the test)."""
        if "Traceback (most recent call last)" in stderr:
            _TALLY.tracebacks.append(what)
            raise AssertionError(f"traceback from {what}:\n{stderr[-2000:]}")


@pytest.fixture
def adversary(request: pytest.FixtureRequest) -> Adversary:
    return Adversary(request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_").replace("_", " "))
