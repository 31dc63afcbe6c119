"""The adversarial suite's tally, in a module of its own so the counts of every test process
(pytest-xdist workers included) reach the one summary line the run prints."""

from __future__ import annotations

from typing import Any

import attrs


@attrs.define
class Tally:
    attempts: int = 0
    refusals: int = 0
    leaks: list[str] = attrs.field(factory=list)
    tracebacks: list[str] = attrs.field(factory=list)
    #: attempts per class of attack (the test module's name unless the test names one)
    classes: dict[str, int] = attrs.field(factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)

    def add(self, other: dict[str, Any]) -> None:
        self.attempts += int(other.get("attempts", 0))
        self.refusals += int(other.get("refusals", 0))
        self.leaks += list(other.get("leaks", ()))
        self.tracebacks += list(other.get("tracebacks", ()))
        for name, n in dict(other.get("classes", {})).items():
            self.classes[name] = self.classes.get(name, 0) + int(n)

    def summary(self) -> list[str]:
        if not self.attempts:
            return []
        lines = [f"adversarial suite: {self.attempts} attempts, {self.refusals} refusals, "
                 f"{len(self.leaks)} leaks, {len(self.tracebacks)} tracebacks"]
        if self.classes:
            lines.append("  classes: " + ", ".join(f"{name} {n}" for name, n in sorted(self.classes.items())))
        lines += [f"  leak: {line}" for line in self.leaks]
        lines += [f"  traceback: {line}" for line in self.tracebacks]
        return lines


TALLY = Tally()
