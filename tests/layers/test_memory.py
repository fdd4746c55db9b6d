"""L5 memory: files and facts in the system prompt within the budget; /memories/ persists across threads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool

from engine.config.schema import preset
from engine.config.sections import MemoryFact
from engine.layers import LayerContext
from engine.layers.memory import (
    MEMORY_GUIDELINES,
    MemoryLayer,
    build_injection,
    clip_to_budget,
    fact_line,
    format_memory_files,
    memory_path_of,
    select_facts,
    with_memory,
)
from engine.run.replay import replay
from engine.thread.events import recording
from engine.thread.model import Thread
from engine.tokens.counters import get_counter
from engine.workspace.vfs import VirtualFilesystem
from engine.workspace.workspace import Workspace

APPROX = get_counter("approximate")  # ceil(chars / 4) for texts
FACTS = (MemoryFact(content="prefers pytest", category="preference", confidence=0.5),
         MemoryFact(content="works on the parser", category="context", confidence=0.9),
         MemoryFact(content="uses Python 3.11", category="knowledge", confidence=0.7))


class FakeModel(GenericFakeChatModel):
    def bind_tools(self, tools: Any, **kwargs: Any) -> FakeModel:
        return self


def test_files_are_framed_in_source_order_without_html_comments() -> None:
    contents = {"/memories/b.md": "B rules\n\n", "/memories/a.md": "A <!-- private -->rules", "/memories/empty.md": "<!-- x -->"}
    assert format_memory_files(contents, ["/memories/a.md", "/memories/missing.md", "/memories/empty.md", "/memories/b.md"]) == \
        "/memories/a.md\n\nA rules\n\n/memories/b.md\n\nB rules"


def test_facts_by_confidence_lowest_cut_first() -> None:
    assert fact_line(FACTS[1]) == "- [context | 0.90] works on the parser"
    lines = [fact_line(f) for f in (FACTS[1], FACTS[2], FACTS[0])]
    header = APPROX.count_text("Facts:\n")
    two = header + APPROX.count_text(lines[0]) + APPROX.count_text("\n" + lines[1])
    kept, dropped = select_facts(FACTS, two, APPROX)
    assert [f.content for f in kept] == ["works on the parser", "uses Python 3.11"]
    assert [f.content for f in dropped] == ["prefers pytest"]
    kept, dropped = select_facts(FACTS, two - 1, APPROX)
    assert ([f.content for f in kept], len(dropped)) == (["works on the parser"], 2)
    assert select_facts(FACTS, 10_000, APPROX)[1] == []


def test_exact_injection_text_with_a_file_and_facts() -> None:
    inj = build_injection({"/memories/AGENTS.md": "Use tabs."}, ["/memories/AGENTS.md"], FACTS, 2000, APPROX)
    assert inj.text == (
        "<agent_memory>\n/memories/AGENTS.md\n\nUse tabs.\n\n</agent_memory>\n\n" + MEMORY_GUIDELINES + "\n\n"
        "<memory>\nFacts:\n- [context | 0.90] works on the parser\n- [knowledge | 0.70] uses Python 3.11\n"
        "- [preference | 0.50] prefers pytest\n</memory>"
    )
    assert (inj.sources, inj.facts_included, inj.facts_dropped, inj.clipped) == (("/memories/AGENTS.md",), 3, 0, False)
    assert build_injection({}, ["/memories/AGENTS.md"], (), 2000, APPROX).text == ""


def test_files_share_the_budget_and_are_clipped_when_alone_too_big() -> None:
    body = "word " * 400  # 2000 chars = 500 tokens
    inj = build_injection({"/m/A.md": body}, ["/m/A.md"], FACTS, 100, APPROX)
    assert inj.clipped and inj.facts_included == 0 and inj.facts_dropped == 3
    clipped, did = clip_to_budget("x" * 400, 50, APPROX)  # 100 tokens, 4 chars each
    assert did and clipped == "x" * 190 + "\n..."  # int(50 * 4 * 0.95) characters
    assert clip_to_budget("short", 50, APPROX) == ("short", False)


def test_with_memory_copies_and_records_a_memory_part() -> None:
    system = SystemMessage("Be brief.", id="system", additional_kwargs={"ctxi_parts": [{"part": "custom", "category": "system", "text": "Be brief."}]})
    new = with_memory(system, "<memory>m</memory>")
    assert new.content == "Be brief.\n\n<memory>m</memory>" and new.id == "system"
    assert new.additional_kwargs["ctxi_parts"] == [{"part": "custom", "category": "system", "text": "Be brief."},
                                                   {"part": "memory", "category": "memory", "text": "<memory>m</memory>"}]
    assert system.content == "Be brief." and len(system.additional_kwargs["ctxi_parts"]) == 1
    blocks = with_memory(SystemMessage([{"type": "text", "text": "A"}]), "M")
    assert blocks.content == [{"type": "text", "text": "A"}, {"type": "text", "text": "\n\nM"}]
    assert with_memory(None, "M").content == "M"


def test_memory_path_of_write_and_edit_calls() -> None:
    assert memory_path_of({"args": {"file_path": "/memories/AGENTS.md"}}) == "/memories/AGENTS.md"
    assert memory_path_of({"args": {"path": "memories/x.md"}}) == "/memories/x.md"
    assert memory_path_of({"args": {"file_path": "/memories/../etc/passwd"}}) is None
    assert memory_path_of({"args": {"file_path": "/src/a.py"}}) is None


class Seen(AgentMiddleware):
    def __init__(self) -> None:
        super().__init__()
        self.systems: list[Any] = []

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        self.systems.append(request.system_message)
        return handler(request)


def test_inside_create_agent_memory_is_in_the_prompt_and_writes_are_mirrored() -> None:
    @tool
    def edit_file(file_path: str, old_string: str, new_string: str) -> str:
        """Edit a file."""
        return f"Successfully replaced 1 instance(s) in '{file_path}'"

    vfs = VirtualFilesystem()
    vfs.write("/memories/AGENTS.md", "Use tabs.")
    layer = MemoryLayer(LayerContext(counter=APPROX, vfs=vfs), facts=FACTS[:1])
    model = FakeModel(messages=iter([
        AIMessage("", id="m1", tool_calls=[{"name": "edit_file", "id": "e1", "type": "tool_call",
                                            "args": {"file_path": "/memories/AGENTS.md", "old_string": "tabs", "new_string": "spaces"}}]),
        AIMessage("noted", id="m2"),
    ]))
    seen = Seen()
    agent = create_agent(model, [edit_file], system_prompt="Be brief.", middleware=[layer, seen])
    with recording() as rec:
        out = agent.invoke({"messages": [HumanMessage("use spaces from now on", id="h")]})
    first, second = seen.systems
    assert first.content.startswith("Be brief.\n\n<agent_memory>\n/memories/AGENTS.md\n\nUse tabs.\n\n</agent_memory>")
    assert first.content.endswith("<memory>\nFacts:\n- [preference | 0.50] prefers pytest\n</memory>")
    assert second is first  # loaded once per thread: the same message, no second inject
    assert vfs.read("/memories/AGENTS.md") == "Use spaces."
    assert [e.kind for e in rec.events] == ["inject", "write"]
    assert "memory_contents" not in out  # private state
    assert all(not isinstance(m, SystemMessage) for m in out["messages"])


def memory_thread(thread_id: str, new_text: str | None) -> Thread:
    msgs: list[Any] = [HumanMessage("remember: answers in French", id=f"{thread_id}-h")]
    if new_text is not None:
        msgs += [AIMessage("", id=f"{thread_id}-a1", tool_calls=[{"name": "write_file", "id": f"{thread_id}-w", "type": "tool_call",
                                                                  "args": {"file_path": "/memories/AGENTS.md", "content": new_text}}]),
                 ToolMessage("Updated file /memories/AGENTS.md", tool_call_id=f"{thread_id}-w", id=f"{thread_id}-t", name="write_file")]
    msgs.append(AIMessage("d'accord", id=f"{thread_id}-a2"))
    return Thread(thread_id, msgs, system_prompt="You help.")


def test_replay_persists_memories_across_threads_in_one_workspace(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    ws.write_memory("/memories/AGENTS.md", "Answer in English.")
    config = preset("deerflow").with_overrides(["summarization.enabled=false", "tokens.counter=approximate",
                                                "todo.system_prompt=false"])
    first = replay(memory_thread("one", "Answer in French."), config, workspace=ws)
    assert "Answer in English." in first.steps[0].system.content  # loaded from the workspace
    assert "Answer in English." in first.steps[1].system.content  # still the thread's copy (loaded once)
    assert first.steps[0].view_by_category["memory"] == APPROX.count_text(build_injection(
        {"/memories/AGENTS.md": "Answer in English."}, ["/memories/AGENTS.md"], (), 2000, APPROX).text)
    assert [m.type for m in first.steps[1].state] == ["human", "ai", "tool"]  # the state carries no memory
    assert (tmp_path / "memories" / "AGENTS.md").read_text(encoding="utf-8") == "Answer in French."
    kinds = [(s.index, e.kind) for s in first.steps for e in s.events if e.layer == "memory"]
    assert kinds == [(0, "inject"), (1, "write"), (1, "persist")]
    second = replay(memory_thread("two", None), config, workspace=ws)
    assert "/memories/AGENTS.md\n\nAnswer in French." in second.steps[0].system.content


def test_without_a_workspace_nothing_touches_the_disk(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("CTXI_WORKSPACE", str(tmp_path))
    config = preset("deerflow").with_overrides(["summarization.enabled=false"])
    run = replay(memory_thread("solo", "x"), config)
    assert run.files.read("/memories/AGENTS.md") == "x"
    assert not (tmp_path / "memories").exists()
    assert all(e.kind != "inject" for s in run.steps for e in s.events)  # nothing to inject at the start


def test_from_config_takes_facts_budget_and_workspace(tmp_path: Path) -> None:
    config = preset("deepagents").with_overrides([f"memory.workspace={tmp_path}", "memory.max_injection_tokens=123",
                                                   "memory.sources=[/memories/a.md]"])
    layer = MemoryLayer.from_config(config, LayerContext())
    assert layer.workspace is not None and layer.workspace.root == tmp_path
    assert (layer.max_injection_tokens, layer.sources) == (123, ("/memories/a.md",))
