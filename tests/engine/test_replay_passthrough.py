"""The driver leaves a pass-through wrap_model_call out of its chain: the same Run as with it in."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from engine.config.schema import preset
from engine.layers.base import LayerContext
from engine.layers.summarization import SummarizationLayer
from engine.run.replay import replay
from engine.thread.synthetic import synthetic_thread


def _report(run: Any) -> str:
    return json.dumps(run.to_report(include_views=True), sort_keys=True, default=str)


def test_only_state_mode_without_the_overflow_fallback_passes_through() -> None:
    assert SummarizationLayer(LayerContext(window_tokens=1000), mode="state", overflow_fallback=False).wraps_model_call is False
    assert SummarizationLayer(LayerContext(window_tokens=1000), mode="state", overflow_fallback=True).wraps_model_call
    assert SummarizationLayer(LayerContext(window_tokens=1000), mode="view", overflow_fallback=False).wraps_model_call


def test_a_pass_through_layer_hands_on_the_request_and_the_response_themselves() -> None:
    layer = SummarizationLayer(LayerContext(window_tokens=1000), trigger=("tokens", 10), mode="state",
                               overflow_fallback=False)
    request = object.__new__(type("Req", (), {}))
    request.messages = [HumanMessage("x " * 500, id="h")]  # far over the trigger and the window
    request.model, request.system_message, request.tools, request.state = None, None, [], {}
    response = object()
    seen: list[Any] = []
    assert layer.wrap_model_call(request, lambda r: seen.append(r) or response) is response
    assert seen == [request] and seen[0] is request


@pytest.mark.parametrize("name", ["langchain", "deerflow"])
def test_the_run_is_the_same_with_the_pass_through_layer_in_the_chain(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    thread = synthetic_thread(120, seed=3)
    thread.messages.append(HumanMessage("one more", id="extra-h"))
    thread.messages.append(AIMessage("done", id="extra-a"))
    config = preset(name).with_overrides(["summarization.trigger=tokens:6000", "summarization.keep=messages:6",
                                          "summarization.overflow_fallback=false"])
    skipped = replay(thread, config)
    assert skipped.events_by_kind().get("summarization.summarize", 0) > 2  # summaries were made
    monkeypatch.setattr(SummarizationLayer, "wraps_model_call", property(lambda self: True))
    chained = replay(thread, config)
    assert _report(skipped) == _report(chained)
    assert [[(m.id, m.content) for m in s.view] for s in skipped.steps] == \
        [[(m.id, m.content) for m in s.view] for s in chained.steps]
