"""Small hand-made threads whose eval answers are known exactly."""

from __future__ import annotations

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from engine.config.schema import EngineConfig, preset
from engine.thread.model import Thread

INTENT = "Migrate the billing service to the new cluster. Vault code: ZEBRA-4411."
NEEDLE_INTENT = "ZEBRA-4411"  # planted in the first human message
NEEDLE_TOOL = "KESTREL-09"  # planted in the first tool result
NEEDLE_BIG = "OSPREY-3141"  # planted mid-way in a large tool result (offloaded)
NEEDLE_NEVER = "NOT-IN-THREAD-1"

FILLER = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor " * 4


def _call(i: int, name: str = "read_file") -> AIMessage:
    return AIMessage("Reading the next file.", id=f"a{i}",
                     tool_calls=[{"name": name, "args": {"file_path": f"/src/f{i}.py"}, "id": f"c{i}"}])


def needle_thread(big_result: bool = False) -> Thread:
    """h0, then four read_file calls (results t0..t3), then a final answer: steps 0..4."""
    t1 = FILLER
    if big_result:
        lines = [f"line {k}: {FILLER}" for k in range(40)]
        lines[20] = f"line 20: the backup bucket is {NEEDLE_BIG}"
        t1 = "\n".join(lines)
    msgs: list[BaseMessage] = [
        HumanMessage(INTENT, id="h0"),
        _call(0), ToolMessage(f"notes: the fallback region is {NEEDLE_TOOL}. {FILLER}", tool_call_id="c0",
                              name="read_file", id="t0"),
        _call(1, "execute"), ToolMessage(t1, tool_call_id="c1", name="execute", id="t1"),
        _call(2), ToolMessage(FILLER, tool_call_id="c2", name="read_file", id="t2"),
        _call(3), ToolMessage(FILLER, tool_call_id="c3", name="read_file", id="t3"),
        AIMessage("All files are read; the migration plan is ready.", id="a4"),
    ]
    return Thread(thread_id="needle-hand", messages=msgs, source_format="test", max_input_tokens=100_000)


def greeting_thread() -> Thread:
    """An AI greeting before the human request: the first compaction removes only the greeting."""
    msgs: list[BaseMessage] = [
        AIMessage("Hello! What should we work on?", id="a-greet"),
        HumanMessage(INTENT, id="h0"),
        _call(1), ToolMessage(FILLER, tool_call_id="c1", name="read_file", id="t1"),
        _call(2), ToolMessage(FILLER, tool_call_id="c2", name="read_file", id="t2"),
        AIMessage("Done.", id="a3"),
    ]
    return Thread(thread_id="greeting-hand", messages=msgs, source_format="test", max_input_tokens=100_000)


def summarization_only(mode: str = "state", *extra: str) -> EngineConfig:
    """LangChain's stack (summarization alone), firing at 6 messages and keeping 2."""
    return preset("langchain").with_overrides([
        "tokens.counter=approximate", "summarization.trigger=messages:6", "summarization.keep=messages:2",
        f"summarization.mode={mode}", *extra])
