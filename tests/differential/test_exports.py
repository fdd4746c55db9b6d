"""Exports proven by running them: what `ctxi export-config --for langchain | deepagents | deerflow` writes,
driven over a thread by the real framework, sends the same requests as our replay with those settings.

The exported Python is executed as a user would paste it (its `context_middleware(model)` gives the
middleware list); the exported DeerFlow YAML is read by DeerFlow's own `SummarizationConfig` and mapped onto
the middleware as DeerFlow's `create_summarization_middleware` does. The agent runs the generated scripts of
tests/differential (a scripted model, recorded tool results); every step's state, request and system prompt
must equal the replay of the thread it recorded, under the config the export came from.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

import pytest
import yaml
from langchain.agents import create_agent
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver

from engine.config.schema import EngineConfig
from engine.run.replay import replay
from engine.sessions.export import export_config
from tests.differential import langchain_side as lc
from tests.differential.harness import (
    Comparison,
    Interrupted,
    Observer,
    ScriptedModel,
    ScriptSummarizer,
    ScriptTool,
    compare_steps,
    counted_tool,
    thread_from,
)
from tests.differential.scripts import CUSTOM_TOOLS, Knobs, Script, generate

SEEDS = range(8)


def _exec(code: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    exec(compile(code, "<exported snippet>", "exec"), namespace)  # the user's paste
    return namespace


def _play(script: Script, agent: Any, model: ScriptedModel) -> None:
    cfg: RunnableConfig = {"configurable": {"thread_id": script.thread_id}, "recursion_limit": 10_000}
    for turn in script.turns:
        try:
            agent.invoke({"messages": [turn.human]}, cfg, durability="exit")
        except Interrupted:
            continue
    model.check_played()


def _report(total: Comparison, title: str) -> str:
    report = total.report(title)
    print(report)
    return report


# -- LangChain ---------------------------------------------------------------------------------------
def test_the_langchain_export_sends_the_same_requests_as_the_replay() -> None:
    total = Comparison()
    triggers = set()
    summarized = 0
    for seed in SEEDS:
        script = lc.make_script(seed)
        config = lc.our_config(script)
        exported = export_config(config, "langchain")
        (code,) = [f.text for f in exported.files if f.language == "python"]
        model = ScriptedModel(responses=script.replies(), profile={"max_input_tokens": script.window})
        middleware = _exec(code)["context_middleware"](model)
        observer = Observer()
        tools = [ScriptTool(name=n, results=script.results) for n in CUSTOM_TOOLS]
        agent = create_agent(model, tools, system_prompt=script.system_prompt, middleware=[*middleware, observer],
                             checkpointer=InMemorySaver())
        _play(script, agent, model)
        # the thread holds what a user has: the agent's own tools (as LangChain's counter sees them)
        thread = thread_from(script, observer, [counted_tool(t) for t in tools])
        run = replay(thread, config, summarizer=ScriptSummarizer())
        total.add(compare_steps(observer.steps, run, thread, label=f"seed {seed}"))
        triggers.add(type(lc.params(script)["trigger"]).__name__)
        summarized += sum(1 for e in run.events if e.layer == "summarization" and e.kind == "summarize")
    report = _report(total, "langchain export")
    assert total.classes == {} and total.steps > 40, report
    assert len(triggers) >= 2  # several trigger shapes (one threshold, AND dict, OR list, none) were exported
    assert summarized > 0  # the exported trigger fired: the compared requests include summaries


# -- Deep Agents ---------------------------------------------------------------------------------------
def test_the_deepagents_export_sends_the_same_requests_as_the_replay() -> None:
    pytest.importorskip("deepagents", reason="deepagents==0.7.32 is a test dependency")
    from deepagents import create_deep_agent
    from deepagents.middleware.summarization import SUMMARIZATION_EVENT_KEY

    from tests.differential import deepagents_side as da

    knobs = Knobs(**{**da.KNOBS.__dict__, "task_p": 0.0})
    total = Comparison()
    summarized = 0
    for seed in SEEDS:
        script = generate(seed, knobs)
        script.system_prompt = da.SYSTEM_PROMPT
        # tuned away from Deep Agents' defaults: a token trigger at 40 % of the window, keep 6 messages
        config = da.our_config(script).with_overrides([
            f"summarization.trigger=tokens:{int(script.window * 0.4)}", "summarization.keep=messages:6"])
        exported = export_config(config, "deepagents")
        (code,) = [f.text for f in exported.files if f.language == "python"]
        model = ScriptedModel(responses=script.replies(), profile={"max_input_tokens": script.window})
        middleware = _exec(code)["context_middleware"](model)
        observer = da.EventObserver(private_keys=(SUMMARIZATION_EVENT_KEY,))
        da._SUB_OBSERVER.append(da.SubagentObserver())
        tools = [ScriptTool(name=n, results=script.results) for n in CUSTOM_TOOLS]
        agent = create_deep_agent(model=model, tools=tools, system_prompt=script.system_prompt,
                                  middleware=[*middleware, observer], checkpointer=InMemorySaver())
        _play(script, agent, model)
        thread = thread_from(script, observer, [da.counted_tool(t) for t in model.bound])
        da._as_sent(observer.steps, model.calls)
        run = replay(thread, config, summarizer=ScriptSummarizer())
        summarized += sum(1 for e in run.events if e.layer == "summarization" and e.kind == "summarize")
        total.add(compare_steps(observer.steps, run, thread, label=f"seed {seed}"))
    report = _report(total, "deepagents export")
    assert total.classes == {} and total.steps > 40, report
    assert summarized > 0  # the exported trigger fired somewhere: it is the one compared


# -- DeerFlow ----------------------------------------------------------------------------------------------
def _deerflow_config_class() -> Any:
    """DeerFlow's own SummarizationConfig (reference-code head/support/deerflow/config/summarization_config.py)."""
    from tests.differential import deerflow_side as df

    path = df.reference_dir() / "head" / "support" / "deerflow" / "config" / "summarization_config.py"
    spec = importlib.util.spec_from_file_location("deerflow_reference_summarization_config", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.SummarizationConfig


def _deerflow_params(section: dict[str, Any]) -> dict[str, Any]:
    """The exported section as DeerFlow maps it onto the middleware (summarization_middleware.py
    `create_summarization_middleware`: a list trigger becomes a list of tuples, a single one a tuple)."""
    cfg = _deerflow_config_class()(**section)
    trigger = None
    if cfg.trigger is not None:
        trigger = [c.to_tuple() for c in cfg.trigger] if isinstance(cfg.trigger, list) else cfg.trigger.to_tuple()
    return {"trigger": trigger, "keep": cfg.keep.to_tuple(), "trim": cfg.trim_tokens_to_summarize}


@pytest.mark.parametrize("version", ["v2.0-m0", "head"])
def test_the_deerflow_export_sends_the_same_requests_as_the_replay(version: str) -> None:
    from tests.differential import deerflow_side as df

    df.reference_dir()
    total = Comparison()
    for seed in SEEDS:
        script = df.make_script(seed, version)
        config = df.our_config(script, version)
        exported = export_config(config, "deerflow")
        (text,) = [f.text for f in exported.files if f.language == "yaml"]
        section = yaml.safe_load(text)["summarization"]
        script.params = _deerflow_params(section)  # the real agent gets only what the export says
        real, thread = df.run_real(script, version)
        # our side: a DeerFlow config.yaml (its models and the exported section), loaded as is
        doc: dict[str, Any] = {"models": [{"name": "scripted", "use": "tests:ScriptedModel"}], "summarization": section,
                               **({"config_version": 34} if version == "head" else {})}
        ours = EngineConfig.from_yaml(yaml.safe_dump(doc)).with_overrides(
            [f"model.max_input_tokens={script.window}", f"model.provider={config.model.provider}"])
        assert ours.summarization == config.summarization  # the export round-trips through our loader
        run = replay(thread, ours, summarizer=ScriptSummarizer())
        total.add(compare_steps(real, run, thread, label=f"seed {seed}"))
    report = _report(total, f"deerflow {version} export")
    assert total.classes == {} and total.steps > 30, report


def test_and_clauses_cannot_go_to_deerflow() -> None:
    from engine.base.errors import ConfigError
    from engine.config.schema import preset

    config = preset("deerflow").with_overrides(["summarization.trigger=tokens:1000&messages:5"])
    with pytest.raises(ConfigError, match="DeerFlow's config takes thresholds"):
        export_config(config, "deerflow")
