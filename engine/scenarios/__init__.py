"""Scenario agents: scripted, deterministic agent runs through a real `create_agent` and the layers.

Each scenario is one module defining `SCENARIO`; `generate(name, steps=, seed=)` returns its Thread.
Live runs (`live`, `live_run`): a scenario's scripted model or a real `provider:model`, step by step.

May import: base, thread, tokens, config, formats, recorded, summarizers, workspace, policies, layers, run.
"""

from __future__ import annotations

import importlib

from engine.base.errors import ContextInspectorError
from engine.scenarios.base import Scenario
from engine.thread.model import Thread

# name -> module, in the order `ctxi scenario --list` shows them
SCENARIO_MODULES: dict[str, str] = {
    "first-look": "engine.scenarios.first_look",
    "code-analysis": "engine.scenarios.code_analysis",
    "research-report": "engine.scenarios.research_report",
    "long-refactor": "engine.scenarios.long_refactor",
    "interrupted": "engine.scenarios.interrupted",
    "memory-two-threads": "engine.scenarios.memory_two_threads",
    "needle": "engine.scenarios.needle",
    "tight-window": "engine.scenarios.tight_window",
}


class UnknownScenarioError(ContextInspectorError):
    """A scenario name that does not exist."""


def scenario_names() -> list[str]:
    return list(SCENARIO_MODULES)


def get_scenario(name: str) -> Scenario:
    module = SCENARIO_MODULES.get(name)
    if module is None:
        raise UnknownScenarioError(f"unknown scenario {name!r}; choose one of {', '.join(SCENARIO_MODULES)}")
    return importlib.import_module(module).SCENARIO


def list_scenarios() -> list[Scenario]:
    return [get_scenario(n) for n in SCENARIO_MODULES]


def generate(name: str, *, steps: int | None = None, seed: int = 0, config=None) -> Thread:  # noqa: ANN001
    """The thread scenario `name` records; the same arguments always give the same thread."""
    return get_scenario(name).generate(steps=steps, seed=seed, config=config)


__all__ = ["SCENARIO_MODULES", "Scenario", "UnknownScenarioError", "generate", "get_scenario", "list_scenarios",
           "scenario_names"]
