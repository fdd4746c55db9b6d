"""The Timeline's note on where its counts come from, in words that hold for every sign."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import ui.widgets as widgets
from engine.recorded.prompt import AgentPrompt

FIT = "Claude tokenizer ≈ 1.13 × o200k_base on this session, fitted on 141 calls"


def note(monkeypatch: pytest.MonkeyPatch, prompt: int, first_turn: int = 0, calls: int = 5,
         unexplained: float = 0.012, shortfall: str | None = None) -> str:
    totals = {"calibrated": True, "agent_prompt_tokens": prompt, "first_turn_context_tokens": first_turn,
              "recorded_steps": calls, "tokenizer": FIT, "recorded_max_unexplained": unexplained}
    monkeypatch.setattr(widgets, "run_totals", lambda run: totals)
    agent = AgentPrompt(prompt, "Claude Code's system prompt and tool schemas", "the prompt cache's prefix",
                        tools=("Bash", "Read"), mcp_tools=("mcp__github__search_issues",))
    calibration = SimpleNamespace(agent=agent, note=lambda: shortfall)
    return widgets.counts_note(SimpleNamespace(counter=SimpleNamespace(name="o200k_base"),  # type: ignore[arg-type]
                                               calibration=calibration))


def test_the_note_names_the_fit_and_what_the_agent_prompt_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    text = note(monkeypatch, 21478, 4928, 139)
    assert "in the provider's tokens, calibrated to its recorded input (139 recorded calls)" in text
    assert FIT in text
    assert ("Claude Code's system prompt and tool schemas: 21,478 tokens, measured from the prompt cache's prefix; "
            "schemas of 2 tools it used (Bash, Read); 1 MCP tool from github") in text
    assert "4,928 tokens more of the first call's input belong to the first turn" in text
    assert "the unexplained rest is at most 1.2% of a recorded input" in text


def test_a_negative_agent_prompt_reads_as_fewer_tokens_not_minus_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    """A provider whose tokenizer counts less than ours (an Inspect log: -349) once read
    "-349 tokens of the agent's own prompt and tools ... shown as their own categories"."""
    text = note(monkeypatch, -349, calls=1)
    assert "-" not in text.replace("non-", "").replace("first-turn", "")
    assert "(1 recorded call)" in text and "the provider counted 349 tokens fewer than our o200k_base count" in text
    assert "tool schemas and system prompt show that much less" in text  # engine.run.step_sums takes it off them


def test_a_shortfall_is_said_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    text = note(monkeypatch, 0, shortfall="At step 2 the recorded input is 3,099 tokens (22.9%) below ...")
    assert "no unrecorded prompt" in text and text.endswith("At step 2 the recorded input is 3,099 tokens (22.9%) below ...")
