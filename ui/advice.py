"""What to do when a run has no compaction to show: advice that matches the sidebar the user has.

"Lower the trigger in the sidebar" leads nowhere on the as-recorded run (its sidebar has no trigger:
it replays the source agent's own compactions), on a config whose summarization is off, or on one
whose trigger has no clause; each gets the step that does lead to a compaction.
"""

from __future__ import annotations

from typing import Any

from engine.config.schema import EngineConfig
from engine.config.settings import layer_enabled


def stress_applies(config: EngineConfig, thread: Any) -> bool:
    """Whether the Evals page's Stress mode has a trigger to lower for this run (engine/evals/stress.py)."""
    from engine.evals.stress import stress_plan

    return stress_plan(config, thread).config is not None


def no_compaction_advice(config: EngineConfig, *, stress: bool = False) -> str:
    """One sentence after "No compaction happened…": what to change, in the controls this config shows.
    `stress`: also point to the Evals page's Stress mode tab (pass `stress_applies(...)`)."""
    also = " Or use the Evals page's Stress mode tab." if stress else ""
    if "recorded" in config.order:
        return ("This run replays the source agent's own compactions, and it recorded none here. For a what-if, "
                "pick a preset in the sidebar (the agent's own policy or a framework's): its trigger can then be "
                "lowered." + also)
    if layer_enabled(config, "compaction"):
        return "Lower the compaction threshold in the sidebar to see one." + also
    if layer_enabled(config, "summarization"):
        if not config.summarization.trigger:
            return ("The summarization trigger has no clause, so it never fires: add one in the sidebar "
                    "(**+ add clause**)." + also)
        return "Lower the trigger in the sidebar to see one." + also
    return ("Neither summarization nor a compaction policy is on in these settings: turn one on under "
            "**Layers** in the sidebar, or pick a preset that has one." + also)


__all__ = ["no_compaction_advice"]
