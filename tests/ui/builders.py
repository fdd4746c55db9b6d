"""Small deterministic threads for the dashboard tests (no dependency on engine.thread.synthetic)."""

from __future__ import annotations

from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from engine.formats.native import dumps
from engine.thread.model import RecordedCompaction, Thread

HOSTILE = (
    "<script>alert(1)</script> <img src=x onerror=alert(1)> "
    "[click](javascript:alert(1)) **bold** <b>not bold</b> $x^2$ :red[red]"
)


def _words(n: int, seed: int) -> str:
    # deterministic filler with varied tokens
    return " ".join(f"w{(seed * 31 + i * 7) % 997}" for i in range(n))


def build_thread(steps: int = 30, *, result_words: int = 400, hostile: bool = False,
                 thread_id: str = "test-thread", window: int | None = 40_000,
                 recorded_compaction_at: int | None = None) -> Thread:
    """`steps` model calls: one human request, then AI tool calls each answered by a tool result."""
    messages: list = [HumanMessage(content="Please refactor the parser and add tests." + (" " + HOSTILE if hostile else ""),
                                   id="h-0")]
    for k in range(steps):
        if k == steps - 1:
            messages.append(AIMessage(content="Done: the parser is refactored.", id=f"ai-{k}"))
            break
        call_id = f"call-{k}"
        messages.append(AIMessage(content=f"Step {k}: reading file {k}.",
                                  tool_calls=[{"id": call_id, "name": "read_file", "args": {"path": f"/src/f{k}.py"}}],
                                  id=f"ai-{k}"))
        body = _words(result_words, k)
        if hostile and k == 1:
            body = HOSTILE + "\n" + body
        messages.append(ToolMessage(content=body, tool_call_id=call_id, name="read_file", id=f"tool-{k}"))
        if k % 10 == 9:
            messages.append(HumanMessage(content=f"Keep going ({k}).", id=f"h-{k + 1}"))
    thread = Thread(thread_id=thread_id, messages=messages, source_format="native", max_input_tokens=window,
                    system_prompt="You are a careful coding agent.", title=f"Test thread ({steps} steps)",
                    tools=[{"name": "read_file", "description": "Read a file", "parameters": {"type": "object"}}])
    if recorded_compaction_at is not None:
        thread.compactions.append(RecordedCompaction(index=recorded_compaction_at, trigger="auto", pre_tokens=12345,
                                                     summary="This session is being continued..."))
    return thread


def write_samples(folder: Path, **threads: Thread) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, thread in threads.items():
        (folder / f"{name}.json").write_text(dumps(thread), encoding="utf-8")
    return folder


def demo_thread() -> Thread:
    """A mid-sized thread where the stress preset summarizes a few times (engine.thread.synthetic when present)."""
    try:
        from engine.thread.synthetic import synthetic_thread
    except ImportError:
        return build_thread(120, result_words=600, thread_id="demo", window=60_000)
    thread = synthetic_thread(120, seed=3, tokens_per_step=1500, max_input_tokens=100_000)
    thread.title = "Synthetic demo (120 steps)"
    return thread
