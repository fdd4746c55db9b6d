"""The sidebar's Compaction threshold: switching its kind keeps the level the policy compacts at (issue 35:
"policy default" 167,000 on claude-code → tokens set 100,000, half the window)."""

from __future__ import annotations

from engine.config.sizes import ContextSize
from engine.views.timeline import compaction_line, compaction_trigger_as


def _level(at) -> int:  # noqa: ANN001
    from ui import session

    run = session.run_for(at.session_state["thread_key"], at.session_state["config"])
    line = compaction_line(run.config, run.window_tokens, run.thread.model, run.thread)
    assert line is not None and line.tokens is not None
    return line.tokens


def test_policy_default_to_tokens_and_fraction_keeps_the_threshold(start) -> None:  # noqa: ANN001
    at = start(preset="claude-code")
    default = _level(at)
    assert at.session_state["config"].compaction.trigger is None
    at.selectbox(key="sb_ctrig_type").set_value("tokens").run()
    assert not at.exception
    assert at.session_state["config"].compaction.trigger == ContextSize(type="tokens", value=default)
    assert _level(at) == default
    at.selectbox(key="sb_ctrig_type").set_value("fraction").run()
    trigger = at.session_state["config"].compaction.trigger
    assert trigger.type == "fraction" and _level(at) == default  # Claude Code: of window − output reserve
    at.selectbox(key="sb_ctrig_type").set_value("policy default").run()
    assert at.session_state["config"].compaction.trigger is None and _level(at) == default


def test_the_fraction_is_the_smallest_two_decimal_one_at_that_level() -> None:
    from engine.config.schema import preset

    # Claude Code on a 200k window, 32k output: effective 180,000, default threshold 167,000 (window − 20k − 13k)
    config = preset("claude-code")
    assert compaction_trigger_as(config, "tokens", 200_000, "claude-sonnet-4-5") == ContextSize(type="tokens",
                                                                                               value=167_000)
    assert compaction_trigger_as(config, "fraction", 200_000, "claude-sonnet-4-5") == ContextSize(type="fraction",
                                                                                                 value=0.93)
    assert compaction_trigger_as(preset("gemini-cli"), "fraction", 200_000, None) == ContextSize(type="fraction",
                                                                                                value=0.5)
