"""Real LangGraph graphs written through any checkpoint saver, with every message id fixed.

The same function writes a SQLite and a PostgreSQL database, so the two importers can be compared
message by message. Ids are pinned (the input, the scripted model's replies, the tool's results)
so that both runs store identical messages; only SummarizationMiddleware's summary gets a uuid4.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

MODEL = "gpt-4o-mini-2024-07-18"
THREADS = ("alpha", "beta", "chat", "counter", "dicts")


class ScriptedModel(GenericFakeChatModel):
    """GenericFakeChatModel replays fixed replies; create_agent needs bind_tools to exist."""

    def bind_tools(self, tools, **kwargs):  # type: ignore[no-untyped-def]
        return self


@tool
def read_file(path: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> ToolMessage:
    """Read a file."""
    return ToolMessage(f"contents of {path}\n" + "line\n" * 20, tool_call_id=tool_call_id, name="read_file",
                       id=f"result-{tool_call_id}")


def reply(message_id: str, text: str = "", *, calls: tuple[tuple[str, str], ...] = (), input_tokens: int = 0) -> AIMessage:
    return AIMessage(content=text, id=message_id,
                     tool_calls=[{"name": "read_file", "args": {"path": p}, "id": c} for c, p in calls],
                     response_metadata={"model_name": MODEL},
                     usage_metadata={"input_tokens": input_tokens, "output_tokens": 7,
                                     "total_tokens": input_tokens + 7})


class ChatState(TypedDict):
    chat_history: Annotated[list, add_messages]
    topic: str  # a primitive: PostgresSaver keeps it inline in the checkpoint's JSONB
    turns: int


class DictState(TypedDict):
    messages: Annotated[list, operator.add]


class CountState(TypedDict):
    count: int


def one_node_graph(state: type, node: Any, saver: Any) -> Any:
    graph = StateGraph(state)
    graph.add_node("node", node)
    graph.add_edge(START, "node")
    graph.add_edge("node", END)
    return graph.compile(checkpointer=saver)


DICT_REPLY = [{"role": "assistant", "content": "", "tool_calls": [
                  {"id": "c9", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
              {"role": "tool", "tool_call_id": "c9", "content": "42"}]


def write_threads(saver: Any) -> None:
    """alpha: one tool call; beta: summarized once; chat: another key and primitives; counter: no
    messages at all; dicts: OpenAI-style dicts without ids."""
    def config(thread_id: str) -> dict[str, Any]:
        return {"configurable": {"thread_id": thread_id}}

    alpha = create_agent(ScriptedModel(messages=iter([
        reply("ai-a1", calls=(("call_1", "a.py"),), input_tokens=120), reply("ai-a2", "read a.py", input_tokens=260)])),
        tools=[read_file], checkpointer=saver)
    alpha.invoke({"messages": [HumanMessage("read a.py", id="h-alpha")]}, config("alpha"))

    summarizer = ScriptedModel(messages=iter([AIMessage(content="SUMMARY: the user wants files read", id="sum-call")]))
    beta = create_agent(
        ScriptedModel(messages=iter([reply("ai-b1", calls=(("call_2", "b.py"),)), reply("ai-b2", calls=(("call_3", "c.py"),)),
                                     reply("ai-b3", "all read")])),
        tools=[read_file], checkpointer=saver,
        middleware=[SummarizationMiddleware(model=summarizer, trigger=("messages", 4), keep=("messages", 2))],
    )
    beta.invoke({"messages": [HumanMessage("read b.py and c.py", id="h-beta")]}, config("beta"))

    chat = one_node_graph(ChatState, lambda s: {"chat_history": [AIMessage(f"answer {s['turns']}", id=f"a{s['turns']}")],
                                                "turns": s["turns"] + 1}, saver)
    chat.invoke({"chat_history": [HumanMessage("custom key", id="h1")], "topic": "files", "turns": 1}, config("chat"))

    one_node_graph(DictState, lambda s: {"messages": DICT_REPLY}, saver).invoke(
        {"messages": [{"role": "user", "content": "dict question"}]}, config("dicts"))
    one_node_graph(CountState, lambda s: {"count": s["count"] + 1}, saver).invoke({"count": 1}, config("counter"))
