"""Small hand-made threads for the policy tests."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from engine.config.sections import CompactionConfig
from engine.policies.base import PolicyContext
from engine.summarizers.offline import OfflineSummarizer
from engine.tokens.counters import get_counter

COUNTER = get_counter()


def call(cid: str, name: str = "read_file", **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args or {"path": f"/{cid}"}, "id": cid, "type": "tool_call"}


def session(turns: int, calls_per_turn: int, *, size: int = 400, name: str = "read_file") -> list[BaseMessage]:
    """`turns` user turns, each with `calls_per_turn` one-call AI messages and a final answer."""
    msgs: list[BaseMessage] = []
    for t in range(turns):
        msgs.append(HumanMessage(f"task {t}: fix module {t}", id=f"h{t}"))
        for k in range(calls_per_turn):
            cid = f"c{t}-{k}"
            msgs.append(AIMessage("", tool_calls=[call(cid, name)], id=f"a{t}-{k}"))
            msgs.append(ToolMessage(f"{t}-{k} " + "y" * size, tool_call_id=cid, name=name, id=f"t{t}-{k}"))
        msgs.append(AIMessage(f"Fixed module {t}.", id=f"f{t}"))
    return msgs


def context(config: CompactionConfig | None = None, *, window: int = 200_000, request: int = 0,
            previous: int | None = None, output: int | None = None, memory: dict[str, Any] | None = None,
            source_format: str | None = None, extra: dict[str, Any] | None = None) -> PolicyContext:
    summarizer = OfflineSummarizer(COUNTER)
    return PolicyContext(window_tokens=window, max_output_tokens=None, counter=COUNTER,
                         config=config or CompactionConfig(), step=7,
                         summarize=lambda msgs, prompt: summarizer(list(msgs), prompt_text=prompt),
                         request_tokens=request, previous_request_tokens=previous, previous_output_tokens=output,
                         memory=memory if memory is not None else {}, source_format=source_format,
                         thread_extra=extra or {})
