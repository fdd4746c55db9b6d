"""Differential test: our state mode against LangChain's real SummarizationMiddleware, step by step.

Random threads (human turns, AI messages with 0-3 parallel tool calls, orphan results, a leading
system message) and random trigger/keep/trim/window configs; both middlewares see the same growing
message list and must summarize at the same steps, keep exactly the same message ids, and produce
the same summary text (a fixed string from the summarizer, or LangChain's placeholders).
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately
from langgraph.graph.message import add_messages
from langgraph.runtime import Runtime

from engine.layers.base import LayerContext
from engine.layers.summarization import SummarizationLayer
from engine.tokens.counters import ApproximateCounter

FIXED = "FIXED SUMMARY"
WORDS = ["alpha", "beta", "gamma", "delta", "token", "window", "parser", "result", "x"]


def langchain_counter(messages: Any) -> int:
    # uncached and additive: the same numbers as engine's ApproximateCounter, without its cache
    return sum(count_tokens_approximately([m]) for m in messages)


@st.composite
def threads(draw: st.DrawFn) -> list[BaseMessage]:
    def text(max_words: int) -> str:
        # only the length is drawn: token counts are what the two middlewares decide on
        n = draw(st.integers(0, max_words))
        return " ".join(WORDS[(n + 3 * i) % len(WORDS)] for i in range(n))

    messages: list[BaseMessage] = []
    if draw(st.booleans()) and draw(st.booleans()):
        messages.append(SystemMessage("You are careful. " + text(20), id="sys"))
    for turn in range(draw(st.integers(1, 4))):
        messages.append(HumanMessage(text(120) or "go", id=f"h{turn}"))
        if draw(st.integers(0, 9)) == 0:
            messages.append(ToolMessage(text(30), tool_call_id=f"ghost{turn}", id=f"o{turn}"))  # orphan
        for step in range(draw(st.integers(1, 5))):
            n_calls = draw(st.integers(0, 3))
            calls = [{"name": "read_file", "args": {"file_path": f"/f{turn}{step}{j}"}, "id": f"c{turn}-{step}-{j}"}
                     for j in range(n_calls)]
            messages.append(AIMessage(text(60), id=f"a{turn}-{step}", tool_calls=calls))
            for c in calls:
                messages.append(ToolMessage(text(400), tool_call_id=c["id"], id=f"t{c['id']}"))
            if not calls:
                break
    return messages


thresholds = st.one_of(
    st.tuples(st.just("messages"), st.integers(2, 30)),
    st.tuples(st.just("tokens"), st.integers(30, 3000)),
    st.tuples(st.just("fraction"), st.floats(0.02, 1.0, allow_nan=False)),
)


@st.composite
def triggers(draw: st.DrawFn) -> Any:
    def clause() -> Any:
        if draw(st.booleans()):
            return draw(thresholds)
        metrics = draw(st.lists(thresholds, min_size=1, max_size=3, unique_by=lambda t: t[0]))
        return dict(metrics)

    if draw(st.booleans()):
        return clause()
    return [clause() for _ in range(draw(st.integers(1, 3)))]


keeps = st.one_of(
    st.tuples(st.just("messages"), st.integers(1, 25)),
    st.tuples(st.just("tokens"), st.integers(10, 2000)),
    st.tuples(st.just("fraction"), st.floats(0.01, 1.0, allow_nan=False)),
)


def ids_after_summary(messages: list[BaseMessage]) -> tuple[str, list[str | None]]:
    head = messages[0]
    assert head.additional_kwargs.get("lc_source") == "summarization"
    return str(head.content), [m.id for m in messages[1:]]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(thread=threads(), trigger=triggers(), keep=keeps,
       trim=st.one_of(st.none(), st.integers(20, 3000)), window=st.integers(400, 6000))
def test_state_mode_matches_langchain_step_by_step(thread: list[BaseMessage], trigger: Any, keep: Any,
                                                    trim: int | None, window: int) -> None:
    model = GenericFakeChatModel(messages=iter(()), profile={"max_input_tokens": window})
    reference = SummarizationMiddleware(model, trigger=trigger, keep=keep, token_counter=langchain_counter,
                                        trim_tokens_to_summarize=trim, summarizer=lambda msgs: FIXED)
    ours = SummarizationLayer(LayerContext(counter=ApproximateCounter()), trigger=trigger, keep=keep,
                              trim_tokens_to_summarize=trim, window_tokens=window, mode="state",
                              summarizer=lambda msgs: FIXED, overflow_fallback=False)
    theirs_state: list[BaseMessage] = []
    our_state: list[BaseMessage] = []
    summaries = 0
    for step, message in enumerate(thread):
        if isinstance(message, AIMessage):  # a model call happens here
            theirs = reference.before_model({"messages": theirs_state}, Runtime())
            mine = ours.before_model({"messages": our_state}, Runtime())
            assert (theirs is None) == (mine is None), f"summarize decision differs at message {step}"
            if theirs is not None and mine is not None:
                summaries += 1
                theirs_state = add_messages(theirs_state, theirs["messages"])
                our_state = add_messages(our_state, mine["messages"])
                assert ids_after_summary(our_state) == ids_after_summary(theirs_state), f"kept differ at {step}"
        theirs_state = [*theirs_state, message]
        our_state = [*our_state, message]
    assert len(our_state) == len(theirs_state)


def test_the_differential_sees_summaries() -> None:
    """A fixed case of the generator's shape, so the differential above is known to exercise summaries."""
    thread: list[BaseMessage] = [HumanMessage("alpha " * 50, id="h0")]
    for k in range(8):
        thread += [AIMessage("beta", id=f"a{k}", tool_calls=[{"name": "read_file", "args": {}, "id": f"c{k}"}]),
                   ToolMessage("gamma " * 200, tool_call_id=f"c{k}", id=f"t{k}")]
    model = GenericFakeChatModel(messages=iter(()), profile={"max_input_tokens": 2000})
    reference = SummarizationMiddleware(model, trigger=("fraction", 0.5), keep=("tokens", 600),
                                        token_counter=langchain_counter, summarizer=lambda msgs: FIXED)
    ours = SummarizationLayer(LayerContext(counter=ApproximateCounter()), trigger=("fraction", 0.5),
                              keep=("tokens", 600), window_tokens=2000, summarizer=lambda msgs: FIXED,
                              overflow_fallback=False)
    a: list[BaseMessage] = []
    b: list[BaseMessage] = []
    kept: list[list[str | None]] = []
    for message in thread:
        if isinstance(message, AIMessage):
            ra, rb = reference.before_model({"messages": a}, Runtime()), ours.before_model({"messages": b}, Runtime())
            if ra is not None:
                a, b = add_messages(a, ra["messages"]), add_messages(b, rb["messages"])  # type: ignore[index]
                kept.append(ids_after_summary(b)[1])
                assert ids_after_summary(a) == ids_after_summary(b)
        a, b = [*a, message], [*b, message]
    assert kept == [["a2", "t2"], ["a4", "t4"], ["a6", "t6"]]
