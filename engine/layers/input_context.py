"""Input context: the system prompt assembled from named parts, each counted (view only).

The prompt is built the way `create_deep_agent` builds it, in this order, parts joined by a blank
line: the **custom** prompt (the config's `custom_prompt`, else the thread's own system prompt),
the **base** agent prompt, the **tool prompts** for the todo / filesystem / sub-agent tools that
the request actually carries, and the **skills** list (frontmatter only: name and description;
a skill's body is read on demand). Memory is appended later by the memory layer.

Each part is recorded in the system message's `additional_kwargs["ctxi_parts"]`, so the replay's
token breakdown can show them; they all count as category `system`. The texts of the base and
tool prompts are our own, in the style of Deep Agents' prompts. An `assemble` event with the
tokens of every part and every tool schema is emitted once, at the first step.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from langchain.agents.middleware import ModelRequest
from langchain.agents.middleware.todo import WRITE_TODOS_SYSTEM_PROMPT
from langchain_core.messages import SystemMessage

from engine.config.schema import EngineConfig
from engine.config.sections import TASK_TOOL_NAMES, SkillConfig
from engine.layers.agent_tools import deepagents_profile, deepagents_tools, with_agent_tools, write_todos_tool
from engine.layers.base import LayerContext, RequestLayer
from engine.thread.kinds import PARTS_KEY
from engine.tokens.content import message_text
from engine.tokens.counters import tool_schema

BASE_AGENT_PROMPT = """You are an agent that completes the user's objective step by step, using the tools available to you.

Plan before acting on anything that takes more than a few steps, keep the plan current as you learn more, and check your work before you say it is done. Be concise and direct. When a tool call fails, read the error and change your approach instead of repeating the same call."""  # noqa: E501

TODO_TOOL_PROMPT = """## `write_todos`

You have a `write_todos` tool to plan and track multi-step work. Use it for tasks with three or more steps: write the list early, mark an item `in_progress` before you start it and `completed` as soon as it is done, and keep only the items that still matter. Skip it for simple requests."""  # noqa: E501

FILESYSTEM_TOOL_PROMPT = """## Filesystem tools `ls`, `read_file`, `write_file`, `edit_file`, `glob`, `grep`

You can work with a filesystem through these tools; paths are absolute and start with `/`. Read large files in pages with `offset` and `limit`. Large tool results may be saved under `/large_tool_results/`; read them back in parts when you need the details."""  # noqa: E501

TASK_TOOL_PROMPT = """## `task` (sub-agents)

You can hand an independent, self-contained piece of work to a sub-agent with the `task` tool. The sub-agent starts with a fresh context, works on its own and returns only its final answer, which keeps your own context small. Describe the work completely, since the sub-agent cannot see this conversation. Launch independent tasks in one response to run them in parallel."""  # noqa: E501

SKILLS_HEADER = """## Skills

These skills are available. Only their descriptions are shown here; read a skill's file for its full instructions before you use it."""  # noqa: E501

TODO_TOOLS = frozenset({"write_todos"})
FILESYSTEM_TOOLS = frozenset({"ls", "read_file", "write_file", "edit_file", "glob", "grep"})


@dataclass(frozen=True)
class Part:
    """One named piece of the system prompt and the token category it counts toward."""

    part: str
    category: str
    text: str

    def to_dict(self) -> dict[str, str]:
        return {"part": self.part, "category": self.category, "text": self.text}


def skills_text(skills: Sequence[SkillConfig]) -> str:
    """The skills list: a header, then `- **name**: description` per skill (and where to read it)."""
    lines = [f"- **{s.name}**: {s.description}" + (f" (read `{s.path}`)" if s.path else "") for s in skills]
    return SKILLS_HEADER + "\n\n" + "\n".join(lines)


def tool_prompts_text(tool_names: Iterable[str], task_tool_names: Sequence[str] = TASK_TOOL_NAMES) -> str:
    """The usage prompts for the tool families present: todo, filesystem, sub-agents (in that order)."""
    names = set(tool_names)
    texts = []
    if names & TODO_TOOLS:
        texts.append(TODO_TOOL_PROMPT)
    if names & FILESYSTEM_TOOLS:
        texts.append(FILESYSTEM_TOOL_PROMPT)
    if names & set(task_tool_names):
        texts.append(TASK_TOOL_PROMPT)
    return "\n\n".join(texts)


def assemble_prompt(
    custom_prompt: str | None,
    *,
    base_prompt: bool = True,
    tool_names: Iterable[str] = (),
    tool_prompts: bool = True,
    skills: Sequence[SkillConfig] = (),
    task_tool_names: Sequence[str] = TASK_TOOL_NAMES,
) -> list[Part]:
    """The system prompt's parts in order: custom, base, tool_prompts, skills (empty ones left out)."""
    parts: list[Part] = []
    if custom_prompt:
        parts.append(Part("custom", "system", custom_prompt))
    if base_prompt:
        parts.append(Part("base", "system", BASE_AGENT_PROMPT))
    if tool_prompts:
        text = tool_prompts_text(tool_names, task_tool_names)
        if text:
            parts.append(Part("tool_prompts", "system", text))
    if skills:
        parts.append(Part("skills", "system", skills_text(skills)))
    return parts


def prompt_text(parts: Sequence[Part]) -> str:
    return "\n\n".join(p.text for p in parts)


def tool_name(tool: Any) -> str:
    if isinstance(tool, dict):
        return str(tool_schema(tool).get("name", ""))
    return str(getattr(tool, "name", ""))


class InputContextLayer(RequestLayer):
    """Builds the system prompt from its parts and records them for the token breakdown."""

    layer = "input_context"
    # how a checkpoint keeps each run-time attribute (engine/layers/checkpoint.py)
    checkpoint_kinds: ClassVar[dict[str, str]] = {"_cache": "reset", "_announced": "value", "_names": "reset",
                                                  "_with_tools": "memo"}

    def __init__(
        self,
        context: LayerContext | None = None,
        *,
        custom_prompt: str | None = None,
        base_prompt: bool = True,
        tool_prompts: bool = True,
        skills: Sequence[SkillConfig] = (),
        task_tool_names: Sequence[str] = TASK_TOOL_NAMES,
        agent_tools: str = "none",
    ) -> None:
        super().__init__(context)
        # a framework's own tools, ahead of the thread's (engine.layers.agent_tools)
        thread = self.context.thread
        subagent = bool(thread is not None and thread.extra.get("subagent_of"))
        self.agent_tools: list[dict[str, Any]] = (deepagents_tools(subagent=subagent) if agent_tools == "deepagents"
                                                  else [])
        # Deep Agents' harness profile for the thread's model: a prompt suffix, and (Codex models)
        # LangChain's TodoListMiddleware with its tool and prompt
        self.profile = deepagents_profile(thread.model if thread is not None else None) \
            if agent_tools == "deepagents" else None
        if self.profile is not None and self.profile.get("todo"):
            self.agent_tools = [*self.agent_tools, write_todos_tool()]
        self._with_tools: tuple[tuple[Any, ...], list[Any]] | None = None
        self.custom_prompt = custom_prompt
        self.base_prompt = base_prompt
        self.tool_prompts = tool_prompts
        self.skills = tuple(skills)
        self.task_tool_names = tuple(task_tool_names)
        self._cache: tuple[SystemMessage | None, tuple[str, ...], SystemMessage | None] | None = None
        self._announced = False
        self._names: tuple[tuple[Any, ...], tuple[str, ...]] | None = None

    @classmethod
    def from_config(cls, config: EngineConfig, context: LayerContext) -> InputContextLayer:
        ic = config.input_context
        # A thread whose recorded usage measured its agent's own prompt and tools (the unrecorded
        # prompt) is sent that prompt, not our generic base and tool prompts.
        own_prompt = context.calibration is not None
        return cls(context, custom_prompt=ic.custom_prompt, base_prompt=ic.base_prompt and not own_prompt,
                   tool_prompts=ic.tool_prompts and not own_prompt,
                   skills=ic.skills, task_tool_names=config.subagents.task_tool_names, agent_tools=ic.agent_tools)

    def system_message(self, incoming: SystemMessage | None, tool_names: Sequence[str]) -> tuple[SystemMessage | None, list[Part]]:
        """The assembled system message (None when every part is empty) and its parts."""
        custom = self.custom_prompt if self.custom_prompt is not None else (message_text(incoming) if incoming else None)
        parts = assemble_prompt(custom, base_prompt=self.base_prompt, tool_names=tool_names,
                                tool_prompts=self.tool_prompts, skills=self.skills, task_tool_names=self.task_tool_names)
        if self.profile is not None:
            # create_deep_agent: `system_prompt + "\n\n" + suffix`; TodoListMiddleware then appends its prompt
            if self.profile.get("system_prompt_suffix"):
                parts.insert(1 if custom else 0, Part("profile", "system", self.profile["system_prompt_suffix"]))
            if self.profile.get("todo"):
                parts.append(Part("todo_prompt", "system", WRITE_TODOS_SYSTEM_PROMPT))
        if not parts:
            return None, parts
        kwargs = dict(incoming.additional_kwargs) if incoming is not None else {}
        kwargs[PARTS_KEY] = [p.to_dict() for p in parts]
        msg = SystemMessage(content=prompt_text(parts), id=(incoming.id if incoming is not None and incoming.id else "system"),
                            additional_kwargs=kwargs)
        return msg, parts

    def _tool_names(self, tools: Sequence[Any]) -> tuple[str, ...]:
        # The same tool objects every step (a new list holding them): their names are read once,
        # the objects compared one by one at C speed (by identity: equal copies are read again).
        names = self._names
        if names is None or len(tools) != len(names[0]) or not all(map(operator.is_, tools, names[0])):
            names = self._names = (tuple(tools), tuple(tool_name(t) for t in tools))
        return names[1]

    def _tools(self, tools: Sequence[Any]) -> list[Any]:
        """The request's tools with the framework's own ahead (the same list while the thread's are the same)."""
        hit = self._with_tools
        if hit is None or len(tools) != len(hit[0]) or not all(map(operator.is_, tools, hit[0])):
            hit = self._with_tools = (tuple(tools), with_agent_tools(tools, self.agent_tools))
        return hit[1]

    def _prepare(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        if self.agent_tools:
            request = request.override(tools=self._tools(request.tools))
        names = self._tool_names(request.tools)
        incoming = request.system_message
        # The same assembled message while the incoming prompt and tools are unchanged (counts stay cached).
        if self._cache is not None and self._cache[0] is incoming and self._cache[1] == names:
            system = self._cache[2]
        else:
            system, parts = self.system_message(incoming, names)
            self._cache = (incoming, names, system)
            if not self._announced and (parts or request.tools):  # nothing assembled: nothing to say
                self._announce(parts, request.tools)
        self._announced = True
        if system is None:
            return request
        return request.override(system_message=system)

    def _announce(self, parts: Sequence[Part], tools: Sequence[Any]) -> None:
        count = self.counter.count_text
        part_tokens = [{"part": p.part, "category": p.category, "tokens": count(p.text)} for p in parts]
        tool_tokens = [{"name": tool_name(t), "tokens": self.counter.count_tools([t])} for t in tools]
        total = count(prompt_text(parts)) if parts else 0
        self.emit("assemble", tokens_before=None, tokens_after=total, parts=part_tokens, tools=tool_tokens,
                  tools_tokens=sum(t["tokens"] for t in tool_tokens),
                  message=f"system prompt assembled from {len(parts)} part(s): "
                          + ", ".join(f"{p['part']} {p['tokens']:,}" for p in part_tokens))



__all__ = [
    "BASE_AGENT_PROMPT",
    "FILESYSTEM_TOOL_PROMPT",
    "SKILLS_HEADER",
    "TASK_TOOL_PROMPT",
    "TODO_TOOL_PROMPT",
    "InputContextLayer",
    "Part",
    "assemble_prompt",
    "prompt_text",
    "skills_text",
    "tool_prompts_text",
]
