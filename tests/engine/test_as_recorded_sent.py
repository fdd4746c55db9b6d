"""An as-recorded run sends what the agent sent: its view is the recorded input at every recorded step, and
nothing is "not sent" (tokens saved) where no layer and no recorded event removed anything.

Two causes, both seen on a Gemini CLI session: the unmanaged (raw) curve counted the thought summaries the
transcript keeps but Gemini CLI never sends back (the provider's thinking rule applied to the view only),
and a Gemini CLI request that shrank without a compaction (its system instruction is rebuilt) left the view
above the recorded input. Real traces are skipped when ../shared/traces is absent (CTXI_TRACES).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from engine.config.schema import preset
from engine.formats import load_thread
from engine.recorded.history import recorded_history
from engine.run.replay import replay
from engine.thread.model import RecordedUsage, Thread
from engine.tokens.counters import counter_for_thread
from tests.conftest import TRACES, trace_path


def _code(k: int) -> str:
    return "".join(f"def f{k}_{i}(x):\n    return x * {i} + {k}\n" for i in range(40))


def _thinking_thread(model: str, fmt: str, *, turns: int = 2, calls: int = 3, prompt: int = 9_000,
                     shrink: dict[int, int] | None = None) -> Thread:
    """`turns` user prompts, each followed by `calls` model calls with thinking that read a file; each call
    recorded the prompt plus our count of what the provider rule sends (minus `shrink[k]` from call k on)."""
    messages: list[BaseMessage] = []
    k = 0
    for turn in range(turns):
        messages.append(HumanMessage(f"Task {turn}: refactor the parser module", id=f"h{turn}"))
        for _ in range(calls):
            thinking = {"type": "thinking", "thinking": f"I should read part {k} of the parser. " * 20}
            messages.append(AIMessage([thinking, {"type": "text", "text": f"Reading part {k}."}],
                                      tool_calls=[{"name": "read_file", "args": {"file_path": f"p{k}.py"},
                                                   "id": f"c{k}", "type": "tool_call"}], id=f"a{k}"))
            messages.append(ToolMessage(_code(k), tool_call_id=f"c{k}", name="read_file", id=f"t{k}"))
            k += 1
    thread = Thread("t", messages, source_format=fmt, model=model, max_input_tokens=1_000_000)
    counter = counter_for_thread(thread)
    history = recorded_history(thread)
    lowered = 0
    for i, m in enumerate(messages):
        if isinstance(m, AIMessage):
            lowered += (shrink or {}).get(int(str(m.id)[1:]), 0)
            sent = history.provider_view(messages[:i])
            thread.usage[str(m.id)] = RecordedUsage(
                input_tokens=prompt - lowered + sum(counter.count_message(x) for x in sent), output_tokens=10)
    return thread


@pytest.mark.parametrize(("model", "fmt"), [("gemini-3-flash-preview", "gemini_cli"),  # rule "none"
                                            ("claude-sonnet-4-5", "claude_code")])  # rule "last_turn"
def test_thinking_the_provider_does_not_send_is_not_input_saved(model: str, fmt: str) -> None:
    run = replay(_thinking_thread(model, fmt), preset("as-recorded"))
    assert run.events == []
    assert [s.raw_tokens for s in run.steps] == [s.view_tokens for s in run.steps]
    assert run.tokens_saved() == 0
    assert [s.view_tokens for s in run.steps] == [s.recorded_input_tokens for s in run.steps]


def test_a_gemini_cli_request_that_shrank_lowers_its_prompt_so_the_view_is_the_recorded_input() -> None:
    thread = _thinking_thread("gemini-3-flash-preview", "gemini_cli", shrink={4: 2_500})
    run = replay(thread, preset("as-recorded"))
    assert [s.view_tokens for s in run.steps] == [s.recorded_input_tokens for s in run.steps]
    assert run.tokens_saved() == 0
    cal = run.calibration
    assert cal is not None and cal.prompt_at(3) == cal.prompt_tokens
    assert cal.prompt_at(4) < cal.prompt_tokens and cal.prompt_at(5) == cal.prompt_at(4)
    assert cal.note() is None and all(f.shortfall == 0 for f in cal.steps)
    assert min(v for s in run.steps for v in s.view_by_category.values()) >= 0


# -- real traces ------------------------------------------------------------------------------------------
def _traces(folder: str) -> list[str]:
    root = TRACES / folder
    if not root.is_dir():
        return []
    return sorted(f"{folder}/{p.name}" for p in root.iterdir()
                  if p.is_file() and p.name != "SOURCE.txt" and not p.name.startswith("LICENSE"))


def _path(name: str) -> Path:
    path = TRACES / name
    if not path.exists():
        pytest.skip(f"shared trace {path} not present")
    return path


@pytest.mark.parametrize("name", _traces("gemini") + _traces("codex") + _traces("claude-code")
                         or ["gemini/vibecodingtracker-session.jsonl"])
def test_a_real_as_recorded_run_is_the_recorded_input_and_saves_nothing_without_events(name: str) -> None:
    run = replay(load_thread(_path(name)), preset("as-recorded"))
    recorded = [s for s in run.steps if s.recorded_input_tokens]
    assert [s.view_tokens for s in recorded] == [s.recorded_input_tokens for s in recorded], name
    if not run.events:  # no recorded compaction or edit, no layer acting: nothing left out
        assert run.tokens_saved() == 0, name
        assert [s.raw_tokens for s in run.steps] == [s.view_tokens for s in run.steps], name


def test_the_gemini_session_peaks_at_its_largest_recorded_input() -> None:
    run = replay(load_thread(_path("gemini/vibecodingtracker-session.jsonl")), preset("as-recorded"))
    assert run.peak_view_tokens() == 40_914 == max(s.recorded_input_tokens or 0 for s in run.steps)
    assert run.peak_raw_tokens() == 40_914 and run.tokens_saved() == 0
    assert [s.view_tokens for s in run.steps] == [13_906, 29_082, 38_324, 40_914, 40_122, 40_238]


def test_the_counts_note_says_from_which_step_a_rebuilt_prompt_is_smaller() -> None:
    """The Timeline's note said "13,308 tokens" of every request while the Step page's agent-prompt row read
    11,994 from step 4 (the walk-through): the note names the prompt measured again."""
    from ui.widgets import counts_note

    run = replay(load_thread(trace_path("gemini", "vibecodingtracker-session.jsonl")), preset("as-recorded"))
    assert run.calibration.prompt_schedule == [(0, 13_308), (4, 11_994)]
    assert " That prompt is 11,994 tokens from step 4 (measured again" in counts_note(run)
    assert run.steps[4].view_by_category["agent_prompt"] == 11_994
