"""Seeded random agent scripts for the differential tests: what a scripted model answers, turn by turn.

A script is not a thread: it is what the model says (AI messages, in call order) and what the
project's own tools return, turn by turn. A harness plays it through the real framework, and the
thread it records (human, AI and tool messages as the agent saw them arrive) is what our replay gets.
Every choice comes from `random.Random(seed)`, so a seed is a reproducible test case.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

WORDS = ("alpha beta gamma delta parser cache index token window budget module service request "
         "handler retry timeout schema record field value error trace build deploy config layer "
         "summary context message history offload stub preview report plan todo result output").split()
CUSTOM_TOOLS = ("search", "fetch", "run_tests")
PROVIDER = "scriptedmodel"  # the ls_provider LangChain derives for ScriptedModel (its class name, lower case)


def words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def text_of_chars(rng: random.Random, chars: int, *, line: int = 80) -> str:
    """About `chars` characters of words in lines of about `line` characters."""
    out: list[str] = []
    size = 0
    while size < chars:
        row = words(rng, max(1, line // 7))
        out.append(row)
        size += len(row) + 1
    return "\n".join(out)[:chars]


def summary_for(prompt: str) -> str:
    """The scripted summarizer: a short text that names the exact prompt it was given."""
    return f"Summary {hashlib.sha256(prompt.encode('utf-8')).hexdigest()[:16]}: the work so far."


@dataclass
class Turn:
    human: HumanMessage
    replies: list[AIMessage]
    interrupted: bool = False  # the last reply's calls never return (the run stops there)


@dataclass
class Script:
    seed: int
    window: int
    system_prompt: str
    turns: list[Turn]
    results: dict[str, ToolMessage]  # custom tools' results by tool_call_id
    params: dict[str, Any] = field(default_factory=dict)  # framework settings drawn for this script
    # a `task` call's sub-agent: what the model answers inside it, in call order, by the task call's id
    subagents: dict[str, list[AIMessage]] = field(default_factory=dict)
    name: str = ""  # the thread id of a script from a file (script_files.py); generated: diff-<seed>
    frameworks: tuple[str, ...] | None = None  # a file's `frameworks` (None: every one it suits)

    @property
    def thread_id(self) -> str:
        return self.name or f"diff-{self.seed}"

    def replies(self) -> list[AIMessage]:
        return [r for t in self.turns for r in t.replies]


@dataclass
class Knobs:
    """What a generator may put in a script (each framework's test turns on what it exercises)."""

    turns: tuple[int, int] = (1, 3)
    steps_per_turn: tuple[int, int] = (3, 14)
    result_chars: tuple[int, int] = (40, 2400)
    big_result_chars: int = 0  # > 0: sometimes a result this large (offload)
    big_result_p: float = 0.0
    parallel_p: float = 0.25
    interrupt_p: float = 0.15
    usage_p: float = 0.5  # a reply carries usage_metadata
    other_provider_p: float = 0.15  # ... reported by another provider (ignored / no scaling)
    thinking_p: float = 0.0  # a reply starts with a thinking block (list content)
    write_p: float = 0.0  # a call to write_file / edit_file with long arguments
    huge_human_p: float = 0.0  # a human message over 200,000 characters
    window: tuple[int, int] = (1500, 12000)
    task_p: float = 0.0  # a call is a `task` call spawning a sub-agent (Deep Agents' general-purpose)
    sub_steps: tuple[int, int] = (4, 30)  # the sub-agent's own model calls (the last one answers)
    sub_big_result_p: float = 0.0  # inside a sub-agent: a result of about big_result_chars (offload)


def _usage(rng: random.Random, context_chars: int, provider: str) -> tuple[dict[str, Any], dict[str, Any]]:
    approx = context_chars // 4
    input_tokens = max(1, int(approx * rng.uniform(0.8, 1.5)))
    output = rng.randint(5, 200)
    usage = {"input_tokens": input_tokens, "output_tokens": output, "total_tokens": input_tokens + output}
    return usage, {"model_provider": provider}


TASK_PREFIX = "Sub-task "  # a task description names its call id: the scripted model knows whose turn it is


def _subagent(rng: random.Random, cid: str, knobs: Knobs, results: dict[str, ToolMessage]) -> list[AIMessage]:
    """What the model answers inside one sub-agent: tool-using steps, then a final report.

    Ids name the task call (`<cid>.a<k>`, calls `<cid>.s<k>-<j>`) so the scripted model can tell
    concurrent sub-agents apart. A sub-agent's tools always return (an interrupt inside one would
    stop the parent's task call, which the task tool does not survive)."""
    replies: list[AIMessage] = []
    context_chars = 0
    n = rng.randint(*knobs.sub_steps)
    for k in range(n):
        last = k == n - 1
        text = words(rng, rng.randint(0, 25)) if rng.random() < 0.6 else ""
        if last and rng.random() < 0.8:  # usually a report; else the parent gets an earlier text
            text = "Report: " + words(rng, rng.randint(3, 30))
        content: Any = text
        if knobs.thinking_p and rng.random() < knobs.thinking_p:
            content = [{"type": "thinking", "thinking": words(rng, rng.randint(5, 60)), "signature": "sig"},
                       {"type": "text", "text": text or "ok"}]
        calls: list[dict[str, Any]] = []
        if not last:
            for j in range(2 if rng.random() < knobs.parallel_p else 1):
                sid = f"{cid}.s{k}-{j}"
                if knobs.write_p and rng.random() < knobs.write_p:
                    long = text_of_chars(rng, rng.randint(1500, 6000))
                    calls.append({"name": "write_file", "args": {"file_path": f"/w/{sid}.txt", "content": long},
                                  "id": sid, "type": "tool_call"})
                    continue
                name = rng.choice(CUSTOM_TOOLS)
                calls.append({"name": name, "args": {"query": words(rng, rng.randint(1, 8))}, "id": sid,
                              "type": "tool_call"})
                if knobs.big_result_chars and rng.random() < knobs.sub_big_result_p:
                    size = knobs.big_result_chars + rng.randint(-2000, 20_000)
                else:
                    size = rng.randint(*knobs.result_chars)
                results[sid] = ToolMessage(text_of_chars(rng, size), tool_call_id=sid, name=name, id=f"t-{sid}")
        extra: dict[str, Any] = {}
        if rng.random() < knobs.usage_p:
            usage, meta = _usage(rng, context_chars, PROVIDER)
            extra = {"usage_metadata": usage, "response_metadata": meta}
        replies.append(AIMessage(content=content, id=f"{cid}.a{k}", tool_calls=calls, **extra))
        context_chars += len(str(content)) + sum(len(str(c["args"])) for c in calls)
        context_chars += sum(len(str(results[c["id"]].content)) for c in calls if c["id"] in results)
    return replies


def generate(seed: int, knobs: Knobs) -> Script:
    """One script: a few turns of tool-using steps, sizes and options drawn from `knobs`."""
    rng = random.Random(seed)
    window = rng.randint(*knobs.window)
    turns: list[Turn] = []
    results: dict[str, ToolMessage] = {}
    subagents: dict[str, list[AIMessage]] = {}
    context_chars = 0
    provider_mix = rng.random() < knobs.other_provider_p
    for t in range(rng.randint(*knobs.turns)):
        if knobs.huge_human_p and rng.random() < knobs.huge_human_p:
            body = text_of_chars(rng, rng.randint(200_001, 230_000))
        else:
            body = f"Task {t}: {words(rng, rng.randint(5, 40))}"
        human = HumanMessage(body, id=f"h{seed}-{t}")
        context_chars += len(body)
        replies: list[AIMessage] = []
        interrupted = False
        n_steps = rng.randint(*knobs.steps_per_turn)
        for k in range(n_steps):
            aid = f"a{seed}-{t}-{k}"
            last = k == n_steps - 1
            text = words(rng, rng.randint(0, 25)) if rng.random() < 0.6 else ""
            content: Any = text
            if knobs.thinking_p and rng.random() < knobs.thinking_p:
                content = [{"type": "thinking", "thinking": words(rng, rng.randint(5, 60)), "signature": "sig"},
                           {"type": "text", "text": text or "ok"}]
            calls: list[dict[str, Any]] = []
            if not last:
                for j in range(2 if rng.random() < knobs.parallel_p else 1):
                    cid = f"c{seed}-{t}-{k}-{j}"
                    if knobs.task_p and rng.random() < knobs.task_p:
                        description = f"{TASK_PREFIX}{cid}: {words(rng, rng.randint(5, 40))}"
                        calls.append({"name": "task", "args": {"description": description,
                                                               "subagent_type": "general-purpose"},
                                      "id": cid, "type": "tool_call"})
                        subagents[cid] = _subagent(rng, cid, knobs, results)
                        continue
                    if knobs.write_p and rng.random() < knobs.write_p:
                        long = text_of_chars(rng, rng.randint(1500, 6000))
                        if rng.random() < 0.5:
                            calls.append({"name": "write_file", "args": {"file_path": f"/w/{cid}.txt", "content": long},
                                          "id": cid, "type": "tool_call"})
                        else:
                            calls.append({"name": "edit_file", "args": {"file_path": f"/w/{cid}.txt",
                                                                        "old_string": long, "new_string": words(rng, 5)},
                                          "id": cid, "type": "tool_call"})
                        continue
                    name = rng.choice(CUSTOM_TOOLS)
                    calls.append({"name": name, "args": {"query": words(rng, rng.randint(1, 8))}, "id": cid,
                                  "type": "tool_call"})
                    if knobs.big_result_chars and rng.random() < knobs.big_result_p:
                        size = knobs.big_result_chars + rng.randint(-2000, 20_000)
                    else:
                        size = rng.randint(*knobs.result_chars)
                    results[cid] = ToolMessage(text_of_chars(rng, size), tool_call_id=cid, name=name, id=f"t-{cid}")
            # only the project's own tools can stop the run (a framework's built-in tool always returns)
            if (not last and k == n_steps - 2 and rng.random() < knobs.interrupt_p
                    and all(c["name"] in CUSTOM_TOOLS for c in calls)):
                interrupted = True
                for c in calls:  # the run stops before this batch returns: none of its results exist
                    results.pop(c["id"], None)
            extra: dict[str, Any] = {}
            if rng.random() < knobs.usage_p:
                provider = "other" if provider_mix and rng.random() < 0.5 else PROVIDER
                usage, meta = _usage(rng, context_chars, provider)
                extra = {"usage_metadata": usage, "response_metadata": meta}
            replies.append(AIMessage(content=content, id=aid, tool_calls=calls, **extra))
            context_chars += len(str(content)) + sum(len(str(c["args"])) for c in calls)
            context_chars += sum(len(str(results[c["id"]].content)) for c in calls if c["id"] in results)
            if interrupted:
                break
        turns.append(Turn(human, replies, interrupted))
    return Script(seed, window, f"You are agent {seed}. {words(rng, 12)}", turns, results, subagents=subagents)


if __name__ == "__main__":  # python -m tests.differential.scripts --write DIR --seed N --count K
    from tests.differential.script_write import main

    raise SystemExit(main())

__all__ = ["CUSTOM_TOOLS", "Knobs", "PROVIDER", "Script", "TASK_PREFIX", "Turn", "generate", "summary_for", "text_of_chars", "words"]
