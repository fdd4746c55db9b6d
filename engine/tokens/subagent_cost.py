"""What one sub-agent spent inside (the context it sent at each of its steps) against what its
transcript holds: pure counting over a Thread, read by the sub-agent layer (engine/layers/subagents.py)
and by the Layers page's table (engine/views/layers.py) when no layer ran."""

from __future__ import annotations

from dataclasses import dataclass

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage

from engine.thread.model import Thread
from engine.tokens.counters import TokenCounter


@dataclass(frozen=True)
class SubagentCost:
    """What one sub-agent spent inside versus what its result costs the parent."""

    inside_tokens: int
    inside_peak_tokens: int
    inside_steps: int
    transcript_tokens: int
    recorded_inside_tokens: int | None


def subagent_cost(sub: Thread, counter: TokenCounter) -> SubagentCost:
    """Sum over the sub-agent's steps of the context it sent (system + tools + messages before each AI message)."""
    base = counter.count_tools(sub.tools) if sub.tools else 0
    body: list[BaseMessage] = list(sub.messages)
    if sub.system_prompt and not (body and isinstance(body[0], SystemMessage)):
        base += counter.count_message(SystemMessage(content=sub.system_prompt))
    running = base
    inside = peak = steps = 0
    recorded: int | None = None
    for m in body:
        if isinstance(m, AIMessage):
            steps += 1
            inside += running
            peak = max(peak, running)
            usage = sub.usage.get(m.id or "")
            if usage is not None and usage.context_tokens is not None:
                recorded = (recorded or 0) + usage.context_tokens
        running += counter.count_message(m)
    return SubagentCost(inside, peak, steps, running, recorded)



__all__ = ["SubagentCost", "subagent_cost"]
