"""The fuzzer's fixed numbers, at the bottom of ``tokasm.fuzz``: no Hypothesis, no imports."""

from __future__ import annotations

__all__ = ["CHECK_EXAMPLES", "INSTANCE_NAMES", "SHRINK_BUDGET"]

#: Instance names a fuzzed program may use, as the case schema allows them.
INSTANCE_NAMES: tuple[str, ...] = ("a", "b", "c", "d")

#: Default seconds Hypothesis may spend shrinking a disagreement.
SHRINK_BUDGET = 5.0

#: Examples of ``tokasm check``'s fuzz phase per target.
CHECK_EXAMPLES = 50
