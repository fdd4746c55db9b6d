"""LangChain 1.5's own `SummarizationMiddleware` inside `create_agent`, next to our `langchain` preset."""

from __future__ import annotations

import random
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import ClearToolUsesEdit, ContextEditingMiddleware, SummarizationMiddleware
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver

from engine.config.schema import EngineConfig, preset
from tests.differential.harness import (
    Interrupted,
    Observer,
    RealStep,
    ScriptedModel,
    ScriptTool,
    counted_tool,
    thread_from,
)
from tests.differential.script_files import PARAM_DEFAULTS
from tests.differential.scripts import CUSTOM_TOOLS, PROVIDER, Knobs, Script, generate

KNOBS = Knobs()


def _size(rng: random.Random, kind: str, window: int) -> tuple[str, int | float]:
    if kind == "messages":
        return ("messages", rng.randint(2, 30))
    if kind == "tokens":
        return ("tokens", rng.randint(max(1, window // 20), window))
    return ("fraction", round(rng.uniform(0.05, 0.95), 2))


def draw_params(seed: int, window: int) -> dict[str, Any]:
    """Trigger (None, one threshold, an AND dict, an OR list), keep and trim, as LangChain takes them."""
    rng = random.Random(seed * 7919 + 1)
    shape = rng.choice(["none", "one", "one", "and", "or", "or"])
    kinds = ("messages", "tokens", "fraction")
    trigger: Any
    if shape == "none":
        trigger = None
    elif shape == "one":
        trigger = _size(rng, rng.choice(kinds), window)
    elif shape == "and":
        picked = rng.sample(kinds, rng.randint(2, 3))
        trigger = dict(_size(rng, k, window) for k in picked)
    else:
        trigger = [_size(rng, rng.choice(kinds), window) for _ in range(rng.randint(2, 3))]
    keep = _size(rng, rng.choice(kinds), window)
    if keep[0] == "tokens":
        keep = ("tokens", max(1, int(keep[1]) // 3))
    trim = rng.choice([None, 4000, 4000, rng.randint(100, 3000)])
    return {"trigger": trigger, "keep": keep, "trim": trim}


def _clause_yaml(trigger: Any) -> Any:
    """LangChain's trigger as our config value (a list of clauses; a dict is an AND clause)."""
    if trigger is None:
        return None
    items = trigger if isinstance(trigger, list) else [trigger]
    return [{"all": [{"type": k, "value": v} for k, v in item.items()]} if isinstance(item, dict)
            else {"type": item[0], "value": item[1]} for item in items]


def params(script: Script) -> dict[str, Any]:
    """The script's settings, LangChain's defaults for the ones a script file leaves out."""
    return {**PARAM_DEFAULTS["langchain"], **script.params}


def our_config(script: Script, edit: dict[str, Any] | None = None) -> EngineConfig:
    p = params(script)
    d = preset("langchain").to_dict()
    d["model"] = {**d["model"], "max_input_tokens": script.window, "provider": PROVIDER}
    d["summarization"] = {**d["summarization"], "trigger": _clause_yaml(p["trigger"]),
                          "keep": {"type": p["keep"][0], "value": p["keep"][1]},
                          "trim_tokens_to_summarize": p["trim"]}
    config = EngineConfig.from_dict(d)
    return config.with_overrides(edit_overrides(edit)) if edit is not None else config


def draw_edit(seed: int, window: int) -> dict[str, Any]:
    """ClearToolUsesEdit's settings, as LangChain takes them (trigger in tokens up to the window)."""
    rng = random.Random(seed * 104729 + 11)
    return {"trigger": rng.randint(max(1, window // 20), window), "keep": rng.choice([0, 1, 2, 3, 3, 5]),
            "clear_at_least": rng.choice([0, 0, rng.randint(1, max(2, window // 4))]),
            "clear_tool_inputs": rng.random() < 0.3,
            "exclude_tools": [t for t in CUSTOM_TOOLS if rng.random() < 0.2],
            "placeholder": rng.choice(["[cleared]", "(removed)"])}


def edit_overrides(edit: dict[str, Any]) -> list[str]:
    """The same settings as a user writes them for the `langchain` preset: its ContextEditingMiddleware
    added to the stack and ClearToolUsesEdit's arguments as `context_editing.*` keys."""
    return ["order=[summarization, context_editing]", f"context_editing.trigger=tokens:{edit['trigger']}",
            f"context_editing.keep={edit['keep']}", f"context_editing.clear_at_least={edit['clear_at_least']}",
            f"context_editing.clear_tool_inputs={str(edit['clear_tool_inputs']).lower()}",
            f"context_editing.exclude_tools={edit['exclude_tools']}",
            f"context_editing.placeholder={edit['placeholder']!r}"]


def make_script(seed: int) -> Script:
    script = generate(seed, KNOBS)
    script.params = draw_params(seed, script.window)
    return script


def run_real(script: Script, edit: dict[str, Any] | None = None) -> tuple[list[RealStep], Any]:
    """Play the script through create_agent + SummarizationMiddleware (+ ContextEditingMiddleware with
    `edit`'s ClearToolUsesEdit); the steps and the raw thread."""
    model = ScriptedModel(responses=script.replies(), profile={"max_input_tokens": script.window})
    p = params(script)
    summarization = SummarizationMiddleware(model, trigger=p["trigger"], keep=p["keep"],
                                            trim_tokens_to_summarize=p["trim"])
    observer = Observer()
    tools = [ScriptTool(name=n, results=script.results) for n in CUSTOM_TOOLS]
    middleware: list[Any] = [summarization]
    if edit is not None:
        middleware.append(ContextEditingMiddleware(edits=[ClearToolUsesEdit(**{**edit, "exclude_tools": tuple(edit["exclude_tools"])})]))
    agent = create_agent(model, tools, system_prompt=script.system_prompt, middleware=[*middleware, observer],
                         checkpointer=InMemorySaver())
    cfg: RunnableConfig = {"configurable": {"thread_id": script.thread_id}, "recursion_limit": 10_000}
    for turn in script.turns:
        try:
            agent.invoke({"messages": [turn.human]}, cfg, durability="exit")
        except Interrupted:
            continue
    model.check_played()
    # the thread holds what a user has: the agent's own tools (as LangChain's counter sees them)
    return observer.steps, thread_from(script, observer, [counted_tool(t) for t in tools])


__all__ = ["KNOBS", "draw_edit", "draw_params", "edit_overrides", "params", "make_script", "our_config", "run_real"]
