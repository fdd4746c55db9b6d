"""What a sweep's worker needs before its first task, loaded once in the forkserver it forks from.

`engine.evals.sweep` names this module in `set_forkserver_preload`: the server imports it once, and every
worker forked from it starts with the replay's modules imported, its static tables read and the default
counter's encoding built; a Ray worker imports it before its first task. Each new worker paid these in
its first task, every sweep: the encoding (`load_encoding("o200k_base")`, 0.22 s of CPU) until it was
preloaded, then the modules a replay and its evals import lazily — the layers a preset names
(`engine.layers.layer_class`), the cost and eval modules, numpy under the timeline view — and the YAML
tables of model windows and prices: a worker's first task took 0.39-0.42 s of CPU against 0.13 s for
the same task next (2026-12-05, `synthetic_thread(60)`, deepagents preset, 2 points). Those are
paid once per process whichever executor runs the sweep, so the serial sweep paid them once and two
workers each paid them, side by side. The encoding's tables and the modules are shared with the
workers copy-on-write. Importing this module anywhere else does the same, nothing more: nothing here
replays or counts a thread, so no cache of message content is warmed.
"""

from __future__ import annotations

import importlib
import pkgutil

import engine.cost
import engine.evals
import engine.run.replay  # noqa: F401 - imported for the forked workers
from engine.tokens.counters import DEFAULT_COUNTER
from engine.tokens.encodings import load_encoding

# the packages a replay and its evals import from, every module of each: a layer's module is imported
# when a preset first names the layer (engine/layers/__init__.py `layer_class`), an eval's or a cost's
# when a run's metrics first ask for it. Not engine.formats (the threads arrive built) nor engine.cli.
PACKAGES = ("engine.config", "engine.cost", "engine.evals", "engine.layers", "engine.policies",
            "engine.recorded", "engine.run", "engine.summarizers", "engine.tokens", "engine.views")
SKIP = frozenset({__name__})


def preload() -> list[str]:
    """Import every module of `PACKAGES`, read the static tables, build the default encoding; returns
    the modules imported."""
    names = []
    for package in PACKAGES:
        module = importlib.import_module(package)
        for info in pkgutil.iter_modules(module.__path__, prefix=package + "."):
            if info.name not in SKIP:
                importlib.import_module(info.name)
                names.append(info.name)
    # imported by the redaction hook on a replay's first model call (engine/base/redaction.py). Deep Agents'
    # tool table (engine/layers/agent_tools.py) is left to the first task that needs it: 21 KB of JSON, 0.2 ms
    importlib.import_module("langchain_core.tracers.context")
    from engine.cost.prices import price_table
    from engine.tokens.windows import thinking_rule

    price_table()  # prices.yaml
    thinking_rule("-")  # models.yaml: its rows, then its thinking rules (no model is named "-")
    load_encoding(DEFAULT_COUNTER)
    return names


PRELOADED = preload()
