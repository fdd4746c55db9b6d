"""Small scenario runs shared by the tests of this folder (each generated once per session)."""

from __future__ import annotations

from functools import cache

from engine.scenarios import get_scenario
from engine.scenarios.live import LiveResult

# Small enough to be fast, large enough that each scenario's layers act (see test_layers.py).
TEST_STEPS: dict[str, int] = {
    "code-analysis": 14,
    "research-report": 8,
    "long-refactor": 90,
    "interrupted": 14,
    "memory-two-threads": 8,
    "needle": 24,
    "tight-window": 40,
    "first-look": 20,
}


@cache
def generated(name: str, steps: int | None = None, seed: int = 0) -> LiveResult:
    return get_scenario(name).run_live(steps=steps or TEST_STEPS[name], seed=seed)
