"""Write the old-version PostgreSQL fixtures: run in a scratch venv with that langgraph-checkpoint-postgres.

    python -m venv /tmp/lg && /tmp/lg/bin/pip install "langgraph-checkpoint-postgres==2.0.21" \
        "langgraph>=0.3,<0.4" "langchain-core<0.4" "psycopg[binary]"
    /tmp/lg/bin/python make_postgres_dumps.py postgresql://…/empty_db  # then pg_dump, see the README

The graphs are those of the era (`create_react_agent`, a StateGraph with primitive channels); every
message id is pinned so the tests can assert them. Not collected by pytest; imports nothing of ours.
"""

from __future__ import annotations

import sys
from typing import Annotated, TypedDict

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import create_react_agent


class ScriptedModel(GenericFakeChatModel):
    def bind_tools(self, tools, **kwargs):  # type: ignore[no-untyped-def]
        return self


@tool
def read_file(path: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> ToolMessage:
    """Read a file."""
    return ToolMessage(f"contents of {path}", tool_call_id=tool_call_id, name="read_file", id=f"result-{tool_call_id}")


class NotesState(TypedDict):
    messages: Annotated[list, add_messages]
    topic: str
    turns: int


def main(url: str) -> None:
    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
        model = ScriptedModel(messages=iter([
            AIMessage("", id="ai-1", tool_calls=[{"name": "read_file", "args": {"path": "a.py"}, "id": "call_1"}],
                      response_metadata={"model_name": "gpt-4o-mini"},
                      usage_metadata={"input_tokens": 90, "output_tokens": 5, "total_tokens": 95}),
            AIMessage("a.py holds one line", id="ai-2", response_metadata={"model_name": "gpt-4o-mini"},
                      usage_metadata={"input_tokens": 130, "output_tokens": 6, "total_tokens": 136})]))
        agent = create_react_agent(model, [read_file], checkpointer=saver)
        agent.invoke({"messages": [HumanMessage("what is in a.py?", id="h-1")]}, {"configurable": {"thread_id": "agent"}})
        graph = StateGraph(NotesState)
        graph.add_node("note", lambda s: {"messages": [AIMessage(f"noted {s['turns']}", id=f"n-{s['turns']}")],
                                          "turns": s["turns"] + 1})
        graph.add_edge(START, "note")
        graph.add_edge("note", END)
        notes = graph.compile(checkpointer=saver)
        notes.invoke({"messages": [HumanMessage("take a note", id="h-2")], "topic": "files", "turns": 1},
                     {"configurable": {"thread_id": "notes"}})


if __name__ == "__main__":
    main(sys.argv[1])
