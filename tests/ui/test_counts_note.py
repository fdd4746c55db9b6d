"""The Timeline's note on where its counts come from, in words that hold for every sign."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import ui.widgets as widgets


def note(monkeypatch: pytest.MonkeyPatch, prompt: int, hidden: int, calls: int = 5) -> str:
    totals = {"calibrated": True, "unrecorded_prompt_tokens": prompt, "unrecorded_tokens": hidden,
              "recorded_steps": calls}
    monkeypatch.setattr(widgets, "run_totals", lambda run: totals)
    return widgets.counts_note(SimpleNamespace(counter=SimpleNamespace(name="o200k_base")))  # type: ignore[arg-type]


def test_a_positive_unrecorded_prompt_is_what_the_transcript_does_not_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    text = note(monkeypatch, 5381, 74, 19)
    assert "(19 recorded calls): 5,381 tokens of the agent's own prompt and tools" in text
    assert "74 tokens the messages carried beyond our o200k_base count" in text


def test_a_negative_unrecorded_prompt_reads_as_fewer_tokens_not_minus_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    """A provider whose tokenizer counts less than ours (an Inspect log: -349) once read
    "-349 tokens of the agent's own prompt and tools ... shown as their own categories"."""
    text = note(monkeypatch, -349, -3, 1)
    assert "-" not in text.replace("non-", "")
    assert "(1 recorded call): the provider counted 349 tokens fewer than our o200k_base count" in text
    assert "tool schemas and system prompt show that much less" in text  # engine.run.step_sums takes it off them
    assert "the messages carried 3 tokens fewer than our o200k_base count" in text


def test_one_token_is_singular(monkeypatch: pytest.MonkeyPatch) -> None:
    text = note(monkeypatch, 0, 1)
    assert "no unrecorded prompt; 1 token the messages carried" in text
