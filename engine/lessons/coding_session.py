"""A hand-made multi-turn coding session for the Workshop's coding-agent lesson.

The policies differ most where a session has several user turns (Codex re-sends the user's own
messages, Gemini CLI splits the history only at a plain user turn, Cline keeps the first exchange)
and re-reads the same files (Cline's de-duplication): `coding_session_thread` has both, and is
deterministic (a seeded generator, stable ids), so a lesson's numbers never move between runs.
"""

from __future__ import annotations

import random

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from engine.thread.model import Thread
from engine.thread.synthetic import TOOLS, _text

MODULES = ("parser", "cache", "report", "index", "merge", "schema")
PROMPTS = (
    "The nightly import fails on large files. Find out why and fix it. Ticket: KESTREL-41.",
    "Now make the cache survive a restart.",
    "The report totals are off by one on the last page; fix that too.",
    "Add a test for every bug we fixed today.",
    "Rename the index module's public functions to snake_case.",
    "Update the changelog and summarize what changed.",
)


def coding_session_thread(*, turns: int = 6, calls_per_turn: int = 11, result_words: int = 1_200,
                          max_input_tokens: int = 64_000, seed: int = 3) -> Thread:
    """`turns` user requests, each worked through with `calls_per_turn` tool calls (file reads that come
    back to the same modules, test runs) and a closing answer: 144 messages and 74,726 raw tokens (o200k)
    with the defaults, past every coding agent's threshold in a 64k window."""
    rng = random.Random(seed)
    msgs: list[BaseMessage] = []
    for t in range(turns):
        msgs.append(HumanMessage(PROMPTS[t % len(PROMPTS)], id=f"h-{t}"))
        for k in range(calls_per_turn):
            cid = f"c-{t}-{k}"
            if k % 3 == 2:
                name, args = "execute", {"command": "pytest -q"}
                body = f"{rng.randint(1, 9)} failed, {rng.randint(40, 90)} passed\n" + _text(rng, result_words // 3)
            else:  # reads cycle through the modules, so every file is read again in a later turn
                path = f"/repo/src/{MODULES[(t + k) % len(MODULES)]}.py"
                name, args = "read_file", {"path": path}
                body = f"# {path}\n" + _text(rng, result_words)
            msgs.append(AIMessage(_text(rng, 14), id=f"a-{t}-{k}",
                                  tool_calls=[{"name": name, "args": args, "id": cid, "type": "tool_call"}]))
            msgs.append(ToolMessage(body, tool_call_id=cid, name=name, id=f"t-{t}-{k}"))
        msgs.append(AIMessage(f"Done: {PROMPTS[t % len(PROMPTS)].split('.')[0].lower()}. " + _text(rng, 40),
                              id=f"a-{t}-final"))
    return Thread(thread_id="lesson-coding-session", messages=msgs, source_format="lesson", model="lesson",
                  max_input_tokens=max_input_tokens, system_prompt="You are a careful coding agent.", tools=TOOLS,
                  title="A six-request coding session")
