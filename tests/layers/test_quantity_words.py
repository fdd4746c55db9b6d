"""What a summarization trigger's quantity says it counts: the provider's tokens only where the thread's
recorded usage calibrates the run's counter; else our estimate under its name (the sample's legend said
"provider tokens" beside "Token counts are estimates (o200k_base): the source recorded no input usage")."""

from __future__ import annotations

from engine.config.schema import preset
from engine.formats import load_thread
from engine.run.replay import replay
from engine.thread.synthetic import synthetic_thread
from tests.conftest import trace_path


def _quantities(run) -> set[str]:  # noqa: ANN001
    return {d.quantity for d in run.decisions if d.layer == "summarization"}


def test_an_uncalibrated_run_says_its_counts_are_our_estimate() -> None:
    run = replay(synthetic_thread(30, seed=0), preset("stress"))
    assert run.calibration is None
    assert _quantities(run) == {"Deep Agents' count of the request (o200k_base estimate; system prompt, tools, "
                                "agent prompt included)"}


def test_a_calibrated_run_says_provider_tokens() -> None:
    run = replay(load_thread(trace_path("claude-code", "short.jsonl")), preset("stress"))
    assert run.calibration is not None
    assert _quantities(run) == {"Deep Agents' count of the request (provider tokens; system prompt, tools, "
                                "agent prompt included)"}
