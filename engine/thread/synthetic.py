"""Deterministic synthetic threads of any length: for benchmarks, stress tests and the demo fallback.

Not a realistic agent (see engine.scenarios for that): a shape that exercises every layer —
human turns, tool loops, occasional huge results (offloading), parallel `task` calls with
sub-agent transcripts (the clamp, isolation), `write_todos` (the reminder), large `write_file`
arguments (argument truncation) and a final call left without a result (dangling).
"""

from __future__ import annotations

import random
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from engine.thread.model import Thread

_WORDS = (
    "agent context window token budget summary layer offload stub reminder patch memory file read write "
    "edit grep glob search result error retry plan todo step state view event trigger keep cutoff model "
    "request response tool call schema prompt system human message thread replay config preset fraction "
    "function class module import return value parser buffer cache index query table column row merge "
    "branch commit test assert fixture report chart timeline gauge category delta peak raw billed"
).split()

_TOOL_SPECS: list[tuple[str, str, dict[str, Any]]] = [
    ("read_file", "Read a file from the filesystem.", {"file_path": {"type": "string"}}),
    ("write_file", "Write a file.", {"file_path": {"type": "string"}, "content": {"type": "string"}}),
    ("grep", "Search files for a literal pattern.", {"pattern": {"type": "string"}}),
    ("execute", "Run a shell command.", {"command": {"type": "string"}}),
    ("web_search", "Search the web.", {"query": {"type": "string"}}),
    ("write_todos", "Update the todo list.", {"todos": {"type": "array", "items": {"type": "object"}}}),
    ("task", "Delegate a task to a sub-agent.", {"description": {"type": "string"}, "prompt": {"type": "string"}}),
]
TOOLS: list[dict] = [
    {"name": n, "description": d, "parameters": {"type": "object", "properties": p, "required": list(p)}}
    for n, d, p in _TOOL_SPECS
]


def _text(rng: random.Random, n_words: int, line_words: int = 12) -> str:
    words = rng.choices(_WORDS, k=n_words)
    lines = [" ".join(words[i : i + line_words]) for i in range(0, n_words, line_words)]
    return "\n".join(lines)


def _subagent(rng: random.Random, call_id: str, steps: int = 3) -> Thread:
    msgs: list[BaseMessage] = [HumanMessage(_text(rng, 30), id=f"{call_id}-h")]
    for k in range(steps):
        cid = f"{call_id}-c{k}"
        msgs.append(AIMessage(_text(rng, 15), id=f"{call_id}-a{k}",
                              tool_calls=[{"name": "web_search", "args": {"query": _text(rng, 4)}, "id": cid}]))
        msgs.append(ToolMessage(_text(rng, 900), tool_call_id=cid, name="web_search", id=f"{call_id}-t{k}"))
    msgs.append(AIMessage("Findings: " + _text(rng, 120), id=f"{call_id}-final"))
    return Thread(thread_id=f"sub-{call_id}", messages=msgs, source_format="synthetic", model="synthetic")


def synthetic_thread(steps: int = 1000, *, seed: int = 0, tokens_per_step: int = 2000,
                     max_input_tokens: int = 200_000) -> Thread:
    """A thread with `steps` AI messages and roughly `steps * tokens_per_step` raw tokens."""
    rng = random.Random(seed)
    words_per_result = max(20, int(tokens_per_step * 0.75))
    msgs: list[BaseMessage] = [HumanMessage(
        "Audit the repository, fix the failing tests and write a report. Project codename: BLUE-HERON-7.",
        id="h-0")]
    subagents: dict[str, Thread] = {}
    todos = [{"content": f"item {i}: {_text(rng, 5)}", "status": "pending"} for i in range(5)]
    turn = 0
    for k in range(steps):
        last = k == steps - 1
        if k > 0 and k % 150 == 0:
            turn += 1
            msgs.append(AIMessage("Done with this part. " + _text(rng, 40), id=f"a-{k}-final"))
            msgs.append(HumanMessage(f"Next: {_text(rng, 25)}", id=f"h-{turn}"))
        aid, cid = f"a-{k}", f"c-{k}"
        if last:
            # interrupted: a call that never got its result (dangling)
            msgs.append(AIMessage("Running the last check.", id=aid,
                                  tool_calls=[{"name": "execute", "args": {"command": "pytest -x"}, "id": cid}]))
            break
        if k % 40 == 1:
            done = (k // 40) % len(todos)
            todos = [{**t, "status": "completed" if i < done else ("in_progress" if i == done else "pending")}
                     for i, t in enumerate(todos)]
            msgs.append(AIMessage("Updating the plan.", id=aid,
                                  tool_calls=[{"name": "write_todos", "args": {"todos": todos}, "id": cid}]))
            msgs.append(ToolMessage(f"Updated todo list to {todos}", tool_call_id=cid, name="write_todos", id=f"t-{k}"))
        elif k % 60 == 7:
            calls: list[dict[str, Any]] = [{"name": "task", "args": {"description": f"research {j}", "prompt": _text(rng, 20)},
                      "id": f"{cid}-{j}"} for j in range(5)]
            msgs.append(AIMessage("Delegating research in parallel.", id=aid, tool_calls=calls))
            for j, call in enumerate(calls):
                sub = _subagent(rng, call["id"])
                subagents[call["id"]] = sub
                msgs.append(ToolMessage(f"Task Succeeded. Result: {sub.messages[-1].content}",
                                        tool_call_id=call["id"], name="task", id=f"t-{k}-{j}"))
        elif k % 30 == 11:
            content = _text(rng, 1500)
            msgs.append(AIMessage("Writing the draft.", id=aid, tool_calls=[
                {"name": "write_file", "args": {"file_path": f"/work/draft_{k}.md", "content": content}, "id": cid}]))
            msgs.append(ToolMessage(f"Updated file /work/draft_{k}.md", tool_call_id=cid, name="write_file", id=f"t-{k}"))
        elif k % 25 == 3:
            big = _text(rng, 16000 + rng.randint(0, 4000))
            msgs.append(AIMessage("Searching broadly.", id=aid, tool_calls=[
                {"name": "web_search", "args": {"query": _text(rng, 4)}, "id": cid}]))
            msgs.append(ToolMessage(big, tool_call_id=cid, name="web_search", id=f"t-{k}"))
        else:
            name = rng.choice(["read_file", "grep", "execute"])
            args = {"read_file": {"file_path": f"/src/mod_{rng.randint(0, 99)}.py"},
                    "grep": {"pattern": rng.choice(_WORDS)},
                    "execute": {"command": f"pytest tests/test_{rng.randint(0, 40)}.py"}}[name]
            msgs.append(AIMessage(_text(rng, rng.randint(10, 60)), id=aid,
                                  tool_calls=[{"name": name, "args": args, "id": cid}]))
            msgs.append(ToolMessage(_text(rng, rng.randint(words_per_result // 2, words_per_result * 3 // 2)),
                                    tool_call_id=cid, name=name, id=f"t-{k}"))
    return Thread(
        thread_id=f"synthetic-{steps}-{seed}",
        messages=msgs,
        source_format="synthetic",
        model="synthetic",
        max_input_tokens=max_input_tokens,
        system_prompt="You are a careful coding agent. Use the tools to inspect and fix the repository.",
        tools=TOOLS,
        todos=[],
        subagents=subagents,
        title=f"Synthetic {steps}-step thread (seed {seed})",
    )
