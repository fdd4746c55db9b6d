"""The provider's view of a replay's history is found in time linear in the replay (issue 38.4's check).

A Gemini CLI session of 10,000 messages replayed with its recorded usage called `has_thinking` 25 million
times: `RecordedHistory.provider_view` scanned every step's whole view for thinking blocks and turn starts.
For the replay driver's Snapshot views (the first n messages of a list it only appends to) that list is
read once as it grows. Counted, not timed; the answers are the ones a plain list gets.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from engine.cli.ctxi import main
from engine.recorded import history
from engine.run.step_sums import Snapshot
from engine.thread.model import Thread
from tests.formats.sized import SIZED


def calls_per_message(n: int, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> float:
    generate, name, _fmt = SIZED["gemini"]
    path = tmp_path / f"{n}-{name}"
    path.write_bytes(generate(n))
    count = 0
    real = history.has_thinking

    def counted(message: BaseMessage) -> bool:
        nonlocal count
        count += 1
        return real(message)

    monkeypatch.setattr(history, "has_thinking", counted)
    with open(os.devnull, "w") as null:
        monkeypatch.setattr(sys, "stdout", null)
        assert main(["replay", str(path)]) == 0
    monkeypatch.setattr(history, "has_thinking", real)
    return count / n


def test_a_replay_looks_for_thinking_a_bounded_number_of_times_per_message(tmp_path: Any,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    small, large = calls_per_message(300, tmp_path, monkeypatch), calls_per_message(1200, tmp_path, monkeypatch)
    assert large <= small * 1.1, (small, large)


def thinking(i: int) -> AIMessage:
    return AIMessage(content=[{"type": "thinking", "thinking": f"t{i}", "signature": "s"}, {"type": "text", "text": f"a{i}"}],
                     id=f"a{i}")


@pytest.mark.parametrize("model", ["gemini-3-flash-preview", "claude-sonnet-4-5", "gpt-5"])
def test_snapshot_views_get_what_a_list_of_the_same_messages_gets(model: str) -> None:
    messages: list[BaseMessage] = []
    for i in range(30):
        if i % 7 == 0:
            messages.append(HumanMessage(f"turn {i}", id=f"h{i}"))
        elif i % 5 == 0:
            messages.append(thinking(i))
        elif i % 2:
            messages.append(AIMessage("", id=f"c{i}", tool_calls=[{"name": "ls", "args": {}, "id": f"k{i}"}]))
        else:
            messages.append(ToolMessage("ok", tool_call_id=f"k{i - 1}", id=f"t{i}"))
    thread = Thread(thread_id="t", messages=messages, source_format="synthetic", model=model)
    for rule in ("none", "last_turn", None):
        recorded = history.RecordedHistory(thread)
        plain = history.RecordedHistory(thread)
        grown: list[BaseMessage] = []
        for m in messages:
            grown.append(m)
            view = Snapshot(grown)
            got, want = recorded.provider_view(view, rule=rule), plain.provider_view(list(view), rule=rule)
            assert [x.model_dump() for x in got] == [x.model_dump() for x in want], (rule, len(grown))
