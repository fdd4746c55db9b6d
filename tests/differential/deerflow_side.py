"""DeerFlow's own middleware files (../shared/reference-code/deerflow, MIT) in `create_agent`, next to our presets.

DeerFlow builds its lead agent with LangChain's `create_agent` and, among others, its
`DanglingToolCallMiddleware`, a summarization middleware and its `TodoMiddleware`, in that order
(`agents/lead_agent/agent.py::build_middlewares`). The reference copy holds those files for two
revisions: tag v2.0-m0 (summarization is LangChain's own class) and HEAD f1f4af99b (DeerFlow's own
`DeerFlowSummarizationMiddleware`). The files are imported from there, never copied.
"""

from __future__ import annotations

import ast
import importlib.util
import random
import sys
import types
import typing
from pathlib import Path
from typing import Any

import pytest
import typing_extensions
import yaml
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, SummarizationMiddleware
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver

from engine.config.schema import EngineConfig
from tests.conftest import ROOT
from tests.differential.harness import (
    Interrupted,
    Observer,
    RealStep,
    ScriptedModel,
    ScriptTool,
    counted_tool,
    thread_from,
)
from tests.differential.langchain_side import _size
from tests.differential.script_files import PARAM_DEFAULTS
from tests.differential.scripts import CUSTOM_TOOLS, PROVIDER, Knobs, Script, generate, words

REFERENCE = ROOT.parent / "shared" / "reference-code" / "deerflow"
KNOBS = Knobs(turns=(1, 3), steps_per_turn=(2, 8), interrupt_p=0.3)
VERSIONS = ("v2.0-m0", "head")


def reference_dir() -> Path:
    if not REFERENCE.is_dir():
        pytest.skip(f"DeerFlow reference code not present at {REFERENCE}")
    return REFERENCE


def _load(version: str, name: str) -> types.ModuleType:
    """One of DeerFlow's middleware files as a module (Python 3.11: typing.override from typing_extensions)."""
    if not hasattr(typing, "override"):
        typing.override = typing_extensions.override  # type: ignore[attr-defined]
    stub = str(reference_dir() / "stub")
    if stub not in sys.path:
        sys.path.insert(0, stub)  # deerflow.agents.thread_state, which HEAD's todo middleware imports
    key = f"deerflow_reference_{version.replace('.', '_').replace('-', '_')}_{name}"
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, reference_dir() / version / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module
    spec.loader.exec_module(module)
    return module


# -- scripts -------------------------------------------------------------------------------------
def make_script(seed: int, version: str) -> Script:
    """A generated script plus DeerFlow's own moves: write_todos plans, invalid calls, and (HEAD)
    the extra model calls its completion reminder causes after a final answer with open todos."""
    script = generate(seed, KNOBS)
    rng = random.Random(seed * 31 + 7)
    todos: list[dict[str, str]] = []
    for turn in script.turns:
        replies: list[AIMessage] = []
        for k, reply in enumerate(turn.replies):
            last = k == len(turn.replies) - 1
            if not last and rng.random() < 0.25 and not (turn.interrupted and k == len(turn.replies) - 1):
                todos = [{"content": words(rng, 4), "status": rng.choice(["pending", "in_progress", "completed"])}
                         for _ in range(rng.randint(1, 4))]
                replies.append(AIMessage("", id=f"{reply.id}-plan", tool_calls=[
                    {"name": "write_todos", "args": {"todos": todos}, "id": f"{reply.id}-todos", "type": "tool_call"}]))
            if last and not turn.interrupted and rng.random() < 0.2:
                reply = reply.model_copy(update={"invalid_tool_calls": [{
                    "name": rng.choice(["write_file", "search", ""]), "args": '{"path": "/x", "content": "unterminated',
                    "id": f"{reply.id}-bad", "error": "Expecting ',' delimiter: line 1 column 42", "type": "invalid_tool_call"}]})
            replies.append(reply)
            if (version == "head" and last and not turn.interrupted and not reply.invalid_tool_calls and todos
                    and any(x["status"] != "completed" for x in todos)):
                # DeerFlow HEAD calls the model again, at most twice a run, while todos stay open
                replies += [AIMessage(words(rng, 6), id=f"{reply.id}-again{n}") for n in range(2)]
        turn.replies = replies
    script.params = draw_params(seed, script.window)
    return script


def draw_params(seed: int, window: int) -> dict[str, Any]:
    """DeerFlow's summarization config: trigger null, one ContextSize or a list (OR); keep; trim."""
    rng = random.Random(seed * 7919 + 3)
    kinds = ("messages", "tokens", "fraction")
    shape = rng.choice(["none", "one", "one", "list", "list"])
    trigger: Any = (None if shape == "none" else _size(rng, rng.choice(kinds), window) if shape == "one"
                    else [_size(rng, rng.choice(kinds), window) for _ in range(rng.randint(2, 3))])
    keep = _size(rng, rng.choice(kinds), window)
    if keep[0] == "tokens":
        keep = ("tokens", max(1, int(keep[1]) // 3))
    return {"trigger": trigger, "keep": keep, "trim": rng.choice([None, 15564, rng.randint(200, 3000)])}


def params(script: Script) -> dict[str, Any]:
    """The script's settings, DeerFlow's config defaults for the ones a script file leaves out."""
    return {**PARAM_DEFAULTS["deerflow"], **script.params}


def _yaml_size(size: tuple[str, Any]) -> dict[str, Any]:
    return {"type": size[0], "value": size[1]}


def our_config(script: Script, version: str) -> EngineConfig:
    """Our config as a user gets it: the DeerFlow config.yaml of that version, loaded as it is."""
    p = params(script)
    trigger = p["trigger"]
    doc: dict[str, Any] = {
        "models": [{"name": "scripted", "use": "tests:ScriptedModel"}],
        "summarization": {
            "enabled": True, "model_name": None,
            "trigger": None if trigger is None else [_yaml_size(t) for t in (trigger if isinstance(trigger, list) else [trigger])],
            "keep": _yaml_size(p["keep"]), "trim_tokens_to_summarize": p["trim"], "summary_prompt": None,
        },
    }
    if version == "head":
        doc["config_version"] = 34
    config = EngineConfig.from_yaml(yaml.safe_dump(doc, sort_keys=False))
    return config.with_overrides([f"model.max_input_tokens={script.window}", f"model.provider={PROVIDER}"])


# -- the real agent --------------------------------------------------------------------------------
def _head_stubs() -> None:
    """Modules HEAD's summarization file imports that the reference copy does not hold.

    `create_chat_model` and `get_app_config` are never reached (the model is passed in). The two
    predicates follow deerflow.md, as our `engine.layers.deerflow_summary` does: their DeerFlow
    source is not in the reference copy, so this part is an assumption on both sides.
    """
    from engine.layers.deerflow_summary import is_dynamic_context_reminder, is_real_user_message

    def module(name: str, **attrs: Any) -> None:
        mod = sys.modules.get(name) or types.ModuleType(name)
        for key, value in attrs.items():
            setattr(mod, key, value)
        sys.modules[name] = mod
        parent, _, child = name.rpartition(".")
        if parent:
            if parent not in sys.modules:
                module(parent)
            setattr(sys.modules[parent], child, mod)

    def unreachable(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("not reached in the differential test")

    module("deerflow.agents.middlewares.dynamic_context_middleware", is_dynamic_context_reminder=is_dynamic_context_reminder)
    module("deerflow.config.app_config", get_app_config=unreachable)
    module("deerflow.models", create_chat_model=unreachable)
    module("deerflow.utils.messages", is_real_user_message=is_real_user_message)


def _summarization(version: str, model: Any, p: dict[str, Any]) -> Any:
    """DeerFlow's mapping of its config onto the middleware: a list trigger becomes a list of tuples;
    trim and prompt are passed only when set (`create_summarization_middleware`)."""
    kwargs: dict[str, Any] = {"trigger": p["trigger"], "keep": p["keep"]}
    if p["trim"] is not None:
        kwargs["trim_tokens_to_summarize"] = p["trim"]
    if version == "v2.0-m0":  # v2.0-m0 uses LangChain's own class
        return SummarizationMiddleware(model, **kwargs)
    _load(version, "todo_middleware")  # puts the stub package (deerflow.agents.thread_state) on sys.path
    _head_stubs()
    cls = _load(version, "summarization_middleware").DeerFlowSummarizationMiddleware
    return cls(model=model, **kwargs, before_summarization=[], app_config=None, configured_model_name=None,
               run_model_name=None, anchor_model_name=None, extensions=())


def todo_texts(version: str) -> dict[str, str]:
    """The `system_prompt` and `tool_description` DeerFlow's lead agent builds its TodoMiddleware with
    (`agents/lead_agent/agent.py` `_create_todo_list_middleware`), read from the reference file."""
    path = reference_dir() / version / "support" / "deerflow" / "agents" / "lead_agent" / "agent.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    function = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "_create_todo_list_middleware")
    return {node.targets[0].id: node.value.value for node in ast.walk(function)
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Constant)}


def _support(name: str, relative: str) -> types.ModuleType:
    """A file of the reference copy's `head/support/deerflow/` tree, imported as `name`."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, reference_dir() / "head" / "support" / "deerflow" / relative)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def durable_context_middleware() -> Any:
    """HEAD's DurableContextMiddleware from the reference copy, with the files it imports from there.

    Not in the reference copy, so stood in for here: `deerflow.subagents.status_contract` (its status
    values, and a reader that finds no structured metadata: the scripts' results carry none) and the
    constants and types HEAD's `thread_state.py` gives (its module imports DeerFlow's checkpointing).
    """
    _load("head", "todo_middleware")  # the stub package (deerflow.agents.thread_state) on sys.path
    _head_stubs()
    import deerflow.agents.thread_state as thread_state

    statuses = ("completed", "failed", "cancelled", "timed_out", "polling_timed_out")  # status_contract.py
    contract = types.ModuleType("deerflow.subagents.status_contract")
    contract.SUBAGENT_STATUS_VALUES = statuses  # type: ignore[attr-defined]
    contract.read_subagent_result_metadata = lambda kwargs: None  # type: ignore[attr-defined]
    sys.modules.setdefault("deerflow.subagents", types.ModuleType("deerflow.subagents"))
    sys.modules["deerflow.subagents.status_contract"] = contract
    for key, value in {"TERMINAL_STATUSES": frozenset(statuses), "_DELEGATION_LEDGER_MAX_ENTRIES": 50,
                       "_SKILL_DESCRIPTION_MAX_CHARS": 500, "DelegationEntry": dict, "SkillEntry": dict}.items():
        setattr(thread_state, key, value)
    for package in ("deerflow.agents.middlewares", "deerflow.config", "deerflow.runtime"):
        sys.modules.setdefault(package, types.ModuleType(package))
    _support("deerflow.constants", "constants.py")
    _support("deerflow.config.summarization_config", "config/summarization_config.py")
    _support("deerflow.runtime.context_keys", "runtime/context_keys.py")
    _support("deerflow.agents.middlewares.delegation_ledger", "agents/middlewares/delegation_ledger.py")
    _support("deerflow.agents.middlewares.skill_context", "agents/middlewares/skill_context.py")
    return _load("head", "durable_context_middleware").DurableContextMiddleware()


class SystemMessageCoalescing(AgentMiddleware):  # type: ignore[type-arg]
    """DeerFlow HEAD's SystemMessageCoalescingMiddleware (agents/middlewares/system_message_coalescing_middleware.py
    at f1f4af99b), which the reference copy does not hold: its `_coalesce_request` transcribed. The request's
    system message and every SystemMessage among its messages become one: their texts (a list content's
    items joined by newlines) joined by blank lines, the first one's id, every part's additional_kwargs."""

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        inner = [m for m in request.messages if isinstance(m, SystemMessage)]
        if not inner:
            return handler(request)
        parts = ([request.system_message] if request.system_message is not None else []) + inner

        def flat(content: Any) -> str:
            if isinstance(content, str):
                return content
            return "\n".join(i if isinstance(i, str) else i["text"] if isinstance(i, dict) and "text" in i else str(i)
                             for i in content)

        kwargs: dict[str, Any] = {}
        for p in parts:
            kwargs.update(p.additional_kwargs or {})
        merged = SystemMessage(content="\n\n".join(flat(p.content) for p in parts), id=parts[0].id, additional_kwargs=kwargs)
        return handler(request.override(system_message=merged,
                                        messages=[m for m in request.messages if not isinstance(m, SystemMessage)]))


def run_real(script: Script, version: str) -> tuple[list[RealStep], Any]:
    model = ScriptedModel(responses=script.replies(), profile={"max_input_tokens": script.window})
    dangling = _load(version, "dangling_tool_call_middleware").DanglingToolCallMiddleware()
    todo = _load(version, "todo_middleware").TodoMiddleware(**todo_texts(version))
    observer = Observer()
    tools = [ScriptTool(name=n, results=script.results) for n in CUSTOM_TOOLS]
    summarization = _summarization(version, model, params(script))
    # the lead agent's order (agents/lead_agent/agent.py): HEAD puts DurableContext before summarization
    # and SystemMessageCoalescing after todo
    middleware = ([dangling, durable_context_middleware(), summarization, todo, SystemMessageCoalescing(), observer]
                  if version == "head" else [dangling, summarization, todo, observer])
    agent = create_agent(model, tools, system_prompt=script.system_prompt, middleware=middleware,
                         checkpointer=InMemorySaver())
    cfg: RunnableConfig = {"configurable": {"thread_id": script.thread_id}, "recursion_limit": 10_000}
    for turn in script.turns:
        try:
            agent.invoke({"messages": [turn.human]}, cfg, durability="exit")
        except Interrupted:
            continue
    model.check_played()
    for step, sent in zip(observer.steps, model.calls, strict=True):  # the request as the model got it
        step.view = [m for m in sent if m.type != "system"]
    # the thread holds what a user has: the agent's own tools (DeerFlow's write_todos is the preset's)
    return observer.steps, thread_from(script, observer, [counted_tool(t) for t in tools])


def humans(script: Script) -> list[HumanMessage]:
    return [t.human for t in script.turns]


__all__ = ["VERSIONS", "make_script", "our_config", "reference_dir", "run_real"]
