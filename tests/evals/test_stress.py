"""Stress mode: one fraction sets every trigger; keeps that would swallow the trigger shrink."""

from __future__ import annotations

import pytest

from engine.base.errors import ConfigError
from engine.config.schema import preset
from engine.config.sizes import ContextSize
from engine.evals import compactions, stress_config
from engine.run.replay import replay
from engine.thread.synthetic import synthetic_thread


def test_every_trigger_at_the_fraction() -> None:
    cfg = stress_config(preset("deepagents"), 0.15)
    assert cfg.summarization.trigger == (ContextSize(type="fraction", value=0.15),)
    assert cfg.filesystem.truncate_args.trigger == ContextSize(type="fraction", value=0.15)
    # deepagents keeps 10 % of the window: more than half of 15 %, so it becomes a fifth of the trigger
    assert cfg.summarization.keep == ContextSize(type="fraction", value=0.03)
    assert cfg.filesystem.truncate_args.keep == ContextSize(type="fraction", value=0.03)
    assert cfg.summarization.enabled


def test_small_keeps_and_message_keeps_stay() -> None:
    cfg = stress_config(preset("deerflow"), 0.25)
    assert cfg.summarization.keep == ContextSize(type="messages", value=10)
    assert cfg.summarization.trigger == (ContextSize(type="fraction", value=0.25),)
    langchain = stress_config(preset("langchain"), 0.2)  # LangChain's default trigger is None: stress turns it on
    assert langchain.summarization.trigger == (ContextSize(type="fraction", value=0.2),)
    tokens_keep = preset("deepagents").with_overrides(["summarization.keep=tokens:4000"])
    assert stress_config(tokens_keep, 0.25, window_tokens=200_000).summarization.keep == ContextSize(
        type="tokens", value=4000)
    assert stress_config(tokens_keep, 0.25, window_tokens=20_000).summarization.keep == ContextSize(
        type="fraction", value=0.05)


@pytest.mark.parametrize("fraction", [0, 1, 1.5, -0.1])
def test_fraction_out_of_range(fraction: float) -> None:
    with pytest.raises(ConfigError, match="stress fraction"):
        stress_config(preset("deepagents"), fraction)


def test_stress_multiplies_compactions() -> None:
    thread = synthetic_thread(150, tokens_per_step=600, max_input_tokens=60_000)
    base = preset("deepagents").with_overrides(["tokens.counter=approximate"])
    default = compactions(replay(thread, base))
    stressed = compactions(replay(thread, stress_config(base, 0.15)))
    assert len(stressed) > 2 * max(1, len(default))
