"""LangChain's summarization test checklist (reference/langchain.md §9), mirrored for our state mode."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from langchain.agents.middleware.summarization import DEFAULT_SUMMARY_PROMPT
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, RemoveMessage, ToolMessage
from langchain_core.messages.utils import get_buffer_string
from langgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages
from langgraph.runtime import Runtime

from engine.base.errors import ConfigError
from engine.layers.base import LayerContext
from engine.layers.cutoff import find_safe_cutoff_point, message_cutoff, token_cutoff
from engine.layers.summarization import SummarizationLayer
from engine.layers.summary_rules import NO_HISTORY, TOO_LONG, trim_for_summary
from engine.layers.thresholds import fired_clause, normalize_trigger
from engine.thread.events import recording
from engine.tokens.counters import ApproximateCounter


def per_message(tokens: int):
    return lambda messages: len(list(messages)) * tokens


def by_length(messages: Any) -> int:
    return sum(len(m.content) for m in messages)


def make(**kw: Any) -> SummarizationLayer:
    kw.setdefault("summarizer", lambda messages: "Generated summary")
    kw.setdefault("overflow_fallback", False)
    return SummarizationLayer(**kw)


def run(layer: SummarizationLayer, messages: list[BaseMessage]) -> dict[str, Any] | None:
    return layer.before_model({"messages": messages}, Runtime())


def humans(*contents: str) -> list[BaseMessage]:
    return [HumanMessage(c, id=f"h{c}") for c in contents]


# -- config ------------------------------------------------------------------------------------
def test_defaults_never_summarize() -> None:
    layer = SummarizationLayer()
    assert layer.trim_tokens_to_summarize == 4000
    assert layer.keep == ("messages", 20)
    assert layer.trigger_clauses == ()
    assert layer.summary_prompt == DEFAULT_SUMMARY_PROMPT
    assert layer.mode == "state"
    assert run(layer, humans(*map(str, range(100)))) is None


@pytest.mark.parametrize(("param", "value", "error"), [
    ("trigger", ("fraction", 0.0), "Fractional trigger values must be between 0 and 1, got 0.0."),
    ("trigger", ("fraction", 1.5), "Fractional trigger values must be between 0 and 1, got 1.5."),
    ("keep", ("fraction", -0.1), "Fractional keep values must be between 0 and 1, got -0.1."),
    ("trigger", ("tokens", 0), "trigger thresholds must be greater than 0, got 0."),
    ("trigger", ("messages", -5), "trigger thresholds must be greater than 0, got -5."),
    ("keep", ("tokens", 0), "keep thresholds must be greater than 0, got 0."),
    ("trigger", ("invalid", 100), "Unsupported context size type invalid for trigger."),
    ("keep", ("invalid", 100), "Unsupported context size type invalid for keep."),
])
def test_threshold_errors_use_langchain_wording(param: str, value: Any, error: str) -> None:
    with pytest.raises(ValueError) as info:
        make(window_tokens=1000, **{param: value})
    assert str(info.value) == error
    assert isinstance(info.value, ConfigError)


@pytest.mark.parametrize(("trigger", "error"), [
    ({}, "trigger clause must specify at least one of 'tokens', 'messages', 'fraction'"),
    ([{"tokens": 10}, {}], "trigger clause must specify at least one of 'tokens', 'messages', 'fraction'"),
    ({"turns": 3}, "Unsupported trigger metric: 'turns'"),
    ({"messages": True}, "messages trigger value must be numeric, got True"),
    ({"tokens": 1.5}, "tokens trigger values must be integers, got 1.5"),
    ({"tokens": "100"}, "tokens trigger values must be integers, got '100'"),
    ({"fraction": "0.5"}, "Fraction trigger values must be numeric, got '0.5'"),
])
def test_dict_clause_rejections(trigger: Any, error: str) -> None:
    with pytest.raises(ValueError) as info:
        make(trigger=trigger, window_tokens=1000)
    assert str(info.value) == error


def test_unsupported_trigger_item_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="Unsupported trigger item type"):
        make(trigger=[5])


def test_empty_list_never_fires_and_inputs_are_copied() -> None:
    assert run(make(trigger=[], token_counter=per_message(10_000)), humans("1", "2")) is None
    clause = {"tokens": 1000}
    trigger: list[Any] = [clause]
    layer = make(trigger=trigger, keep=("messages", 1), token_counter=per_message(250))
    clause["messages"] = 1
    trigger.append(("messages", 1))
    assert layer.trigger_clauses == ((("tokens", 1000),),)
    assert run(layer, humans("1", "2")) is None  # 500 tokens: only the copied clause counts


def test_canonical_clauses_and_cli_strings() -> None:
    assert normalize_trigger([("messages", 5), {"tokens": 1000}, {"tokens": 2000, "messages": 10}]) == (
        (("messages", 5),), (("tokens", 1000),), (("tokens", 2000), ("messages", 10)))
    assert normalize_trigger("tokens:30000,messages:50&fraction:0.5") == (
        (("tokens", 30000),), (("messages", 50), ("fraction", 0.5)))


def test_fraction_needs_a_window_in_state_mode() -> None:
    with pytest.raises(ValueError, match="Model profile information is required to use fractional token limits"):
        make(keep=("fraction", 0.5))
    with pytest.raises(ValueError, match="Model profile information is required"):
        make(trigger=("fraction", 0.5), keep=("messages", 1))
    assert make(keep=("fraction", 0.5), window_tokens=1000).window_for(None) == 1000
    assert make(keep=("fraction", 0.5), context=LayerContext(window_tokens=800)).window_for(None) == 800
    model = GenericFakeChatModel(messages=iter(()), profile={"max_input_tokens": 1200})
    assert make(keep=("fraction", 0.5), model=model).window_for(None) == 1200
    # view mode reads the request's model profile at call time, so construction succeeds
    assert make(keep=("fraction", 0.5), mode="view").window_for(None) is None


@pytest.mark.parametrize("profile", ["invalid_profile_type", {"other_field": 100}, {"max_input_tokens": "not_an_int"}])
def test_malformed_profiles_count_as_absent(profile: Any) -> None:
    model = GenericFakeChatModel(messages=iter(()))
    object.__setattr__(model, "profile", profile)
    assert make(trigger=("messages", 5), model=model).window_for(None) is None


def test_bad_summary_prompt_braces_are_a_config_error() -> None:
    with pytest.raises(ConfigError, match="summarization.summary_prompt"):
        make(summary_prompt="Summarize {messages} for {user}")
    assert make(summary_prompt="Custom prompt: {messages}").summary_prompt == "Custom prompt: {messages}"


# -- triggers ----------------------------------------------------------------------------------
def test_messages_trigger_fires_at_exactly_five() -> None:
    layer = make(trigger=("messages", 5), keep=("messages", 2))
    assert run(layer, humans("1", "2", "3", "4")) is None
    result = run(layer, humans("1", "2", "3", "4", "5"))
    assert result is not None
    assert [m.type for m in result["messages"]] == ["remove", "human", "human", "human"]
    assert [m.content for m in result["messages"][2:]] == ["4", "5"]
    result = run(layer, humans("1", "2", "3", "4", "5", "6"))
    assert [m.content for m in result["messages"][2:]] == ["5", "6"]  # type: ignore[index]


def test_list_is_or() -> None:
    layer = make(trigger=[("messages", 10), ("tokens", 500)], keep=("messages", 2), token_counter=lambda m: 100)
    assert run(layer, humans(*map(str, range(5)))) is None
    assert run(layer, humans(*map(str, range(10)))) is not None
    layer = make(trigger=[("messages", 10), ("tokens", 500)], keep=("messages", 2), token_counter=lambda m: 600)
    assert run(layer, humans(*map(str, range(5)))) is not None


def test_dict_is_and_with_two_and_three_metrics() -> None:
    high = make(trigger={"tokens": 1000, "messages": 5}, keep=("messages", 2), token_counter=lambda m: 1500)
    low = make(trigger={"tokens": 1000, "messages": 5}, keep=("messages", 2), token_counter=lambda m: 500)
    assert run(high, humans("1", "2", "3")) is None
    assert run(low, humans("1", "2", "3", "4", "5")) is None
    assert run(high, humans("1", "2", "3", "4", "5")) is not None
    three = dict(trigger={"tokens": 1000, "messages": 5, "fraction": 0.8}, keep=("messages", 2), window_tokens=2000)
    assert run(make(token_counter=lambda m: 1500, **three), humans(*"12345")) is None  # 1500 < 1600
    assert run(make(token_counter=lambda m: 1600, **three), humans(*"12345")) is not None
    tokens_and_fraction = dict(trigger={"tokens": 500, "fraction": 0.5}, keep=("messages", 1), window_tokens=2000)
    assert run(make(token_counter=lambda m: 900, **tokens_and_fraction), humans("1", "2")) is None
    assert run(make(token_counter=lambda m: 1000, **tokens_and_fraction), humans("1", "2")) is not None


PROFILE_MESSAGES = ["Message 1", "Message 2", "Message 3", "Message 4"]


def four_messages() -> list[BaseMessage]:
    return [(HumanMessage if i % 2 == 0 else AIMessage)(c, id=f"m{i}") for i, c in enumerate(PROFILE_MESSAGES)]


@pytest.mark.parametrize(("trigger", "keep", "kept"), [
    (0.81, ("fraction", 0.5), None),  # 800 tokens < 810
    (0.80, ("fraction", 0.5), ["Message 3", "Message 4"]),
    (0.80, ("fraction", 0.6), ["Message 2", "Message 3", "Message 4"]),
    (0.80, ("fraction", 0.8), None),  # everything fits the keep budget: nothing to summarize
    (0.80, ("tokens", 400), ["Message 3", "Message 4"]),
    (0.80, ("tokens", 600), ["Message 2", "Message 3", "Message 4"]),
])
def test_four_times_200_tokens_in_a_1000_token_window(trigger: float, keep: Any, kept: list[str] | None) -> None:
    layer = make(trigger=("fraction", trigger), keep=keep, token_counter=per_message(200), window_tokens=1000)
    result = run(layer, four_messages())
    if kept is None:
        assert result is None
    else:
        assert result is not None
        assert result["messages"][1].text.startswith("Here is a summary of the conversation")
        assert [m.content for m in result["messages"][2:]] == kept


def test_tiny_fraction_threshold_is_one_token() -> None:
    assert int(1000 * 0.0001) == 0
    assert fired_clause(normalize_trigger(("fraction", 0.0001)), message_count=1, total_tokens=1, window=1000) == "fraction:0.0001"
    assert fired_clause(normalize_trigger(("fraction", 0.0001)), message_count=1, total_tokens=0, window=1000) is None


def test_missing_runtime_profile_fails_only_the_fraction_clause() -> None:
    model = GenericFakeChatModel(messages=iter(()), profile={"max_input_tokens": 1000})
    layer = make(trigger=[("fraction", 0.5), ("messages", 100)], keep=("messages", 5), model=model,
                 token_counter=per_message(100))
    assert run(layer, humans(*map(str, range(6)))) is not None  # 600 >= 500
    model.profile = None
    assert run(layer, humans(*map(str, range(6)))) is None
    assert run(layer, humans(*map(str, range(100)))) is not None


class ProviderModel(GenericFakeChatModel):
    ls_provider: str = "mock"

    def _get_ls_params(self, stop: Any = None, **kwargs: Any) -> Any:
        return {"ls_provider": self.ls_provider, "ls_model_type": "chat"}


def usage_ai(total: int, provider: str, id: str = "a") -> AIMessage:
    return AIMessage("ok", id=id, usage_metadata={"input_tokens": total, "output_tokens": 0, "total_tokens": total},
                     response_metadata={"model_provider": provider})


@pytest.mark.parametrize(("ls_provider", "provider", "fires"), [
    ("mock", "mock", True),
    ("mock", "other", False),
    ("amazon_bedrock", "bedrock_converse", True),
    ("openai-mantle", "openai", True),
    ("anthropic-mantle", "openai", False),
])
def test_reported_usage_counts_when_the_provider_matches(ls_provider: str, provider: str, fires: bool) -> None:
    model = ProviderModel(messages=iter(()), ls_provider=ls_provider)
    layer = make(trigger=("tokens", 1000), keep=("messages", 1), model=model, token_counter=lambda m: 10)
    result = run(layer, [HumanMessage("q", id="h"), usage_ai(5000, provider)])
    assert (result is not None) is fires


def test_reported_usage_reads_only_the_last_ai_message() -> None:
    model = ProviderModel(messages=iter(()))
    layer = make(trigger=("tokens", 1000), keep=("messages", 1), model=model, token_counter=lambda m: 10)
    messages = [HumanMessage("q", id="h"), usage_ai(5000, "mock", "a1"), usage_ai(10, "mock", "a2")]
    assert run(layer, messages) is None


# -- cutoff ------------------------------------------------------------------------------------
def test_token_retention_keeps_ai_tool_pairs() -> None:
    layer = make(trigger=("fraction", 0.1), keep=("fraction", 0.5), token_counter=by_length, window_tokens=1000)
    messages = [
        HumanMessage("H" * 300, id="h1"),
        AIMessage("A" * 200, id="a1", tool_calls=[{"name": "test", "args": {}, "id": "call-1"}]),
        ToolMessage("T" * 50, tool_call_id="call-1", id="t1"),
        HumanMessage("H" * 180, id="h2"),
        HumanMessage("H" * 160, id="h3"),
    ]
    result = run(layer, messages)
    assert result is not None
    assert result["messages"][2:] == messages[1:]


SAFE = [
    HumanMessage("msg1", id="0"),
    AIMessage("ai", id="1", tool_calls=[{"name": "tool", "args": {}, "id": "call1"}]),
    ToolMessage("result1", tool_call_id="call1", id="2"),
    ToolMessage("result2", tool_call_id="call2", id="3"),  # orphan: no AI message asked for call2
    HumanMessage("msg2", id="4"),
]


@pytest.mark.parametrize(("cutoff", "expected"), [(0, 0), (1, 1), (2, 1), (3, 4), (4, 4), (5, 5), (10, 10)])
def test_find_safe_cutoff_point(cutoff: int, expected: int) -> None:
    assert find_safe_cutoff_point(SAFE, cutoff) == expected


def test_truly_orphan_tool_message_moves_forward() -> None:
    messages = [HumanMessage("msg1"), AIMessage("ai_no_tools"), ToolMessage("orphan", tool_call_id="x"), HumanMessage("m")]
    assert find_safe_cutoff_point(messages, 2) == 3


def test_ten_parallel_calls_stay_with_their_ai_message() -> None:
    calls = [{"name": f"tool_{i}", "args": {}, "id": f"call_{i}"} for i in range(10)]
    messages = [HumanMessage("calling 10 tools"), AIMessage("calling 10 tools", tool_calls=calls),
                *[ToolMessage(f"result_{i}", tool_call_id=f"call_{i}") for i in range(10)]]
    assert [find_safe_cutoff_point(messages, i) for i in range(12)] == [0, 1] + [1] * 10
    layer = make(trigger=("messages", 12), keep=("messages", 5))
    for i, m in enumerate(messages):
        m.id = f"m{i}"
    result = run(layer, messages)
    assert [m.id for m in result["messages"][2:]] == [f"m{i}" for i in range(1, 12)]  # type: ignore[index]


def test_message_cutoff_cases() -> None:
    pairs = [HumanMessage("h")]
    for k in range(3):
        pairs += [AIMessage(f"a{k}", tool_calls=[{"name": "t", "args": {}, "id": f"c{k}"}]),
                  ToolMessage(f"t{k}", tool_call_id=f"c{k}")]
    assert message_cutoff(pairs, 2) == 5
    assert message_cutoff(pairs, 1) == 5
    three = [HumanMessage("msg1"), AIMessage("ai", tool_calls=[{"name": n, "args": {}, "id": n} for n in "xyz"]),
             *[ToolMessage(n, tool_call_id=n) for n in "xyz"], HumanMessage("msg2")]
    assert message_cutoff(three, 3) == 1
    assert message_cutoff(three, 2) == 1
    start = [HumanMessage("1"), HumanMessage("2"), AIMessage("ai", tool_calls=[{"name": "t", "args": {}, "id": "c"}]),
             ToolMessage("r", tool_call_id="c"), HumanMessage("3"), HumanMessage("4")]
    assert message_cutoff(start, 4) == 2
    five = humans(*"12345")
    assert message_cutoff(five, 5) == 0
    assert message_cutoff(five, 10) == 0


def test_token_cutoff_edge_cases() -> None:
    assert token_cutoff([HumanMessage("x" * 200)], 100, per_message(200)) == 0  # one oversized message
    assert token_cutoff([], 100, per_message(200)) == 0
    assert token_cutoff(humans(*"01234"), 100, per_message(10)) == 0  # everything fits


def test_no_summary_when_retention_leaves_nothing_to_drop() -> None:
    layer = make(trigger=("tokens", 1000), keep=("messages", 1), token_counter=lambda m: 1500)
    assert run(layer, [HumanMessage("Current request", id="h")]) is None


# -- output ------------------------------------------------------------------------------------
def test_update_shape_ids_and_event() -> None:
    layer = make(trigger=("messages", 5), keep=("messages", 2), token_counter=per_message(10))
    messages = humans(*"12345")
    with recording() as rec:
        result = run(layer, messages)
    assert result is not None
    remove, summary, *kept = result["messages"]
    assert isinstance(remove, RemoveMessage) and remove.id == REMOVE_ALL_MESSAGES
    assert summary.content == "Here is a summary of the conversation to date:\n\nGenerated summary"
    assert summary.additional_kwargs == {"lc_source": "summarization"}
    assert summary.name is None
    assert re.fullmatch(r"summary-1-[0-9a-f]{12}", summary.id)
    assert kept == messages[3:]
    again = run(make(trigger=("messages", 5), keep=("messages", 2), token_counter=per_message(10)), humans(*"12345"))
    assert again["messages"][1].id == summary.id  # type: ignore[index]  # no uuid: same input, same id
    [event] = rec.events
    assert (event.layer, event.kind, event.tokens_before, event.tokens_after) == ("summarization", "summarize", 50, 30)
    assert event.payload["removed_ids"] == ["h1", "h2", "h3"]
    assert event.payload["kept_ids"] == ["h4", "h5"]
    assert event.payload["cutoff_index"] == 3
    assert event.payload["trigger"] == "messages:5"
    assert event.payload["mode"] == "state"
    assert event.payload["summary_text"] == "Generated summary"
    assert event.payload["summary_id"] == summary.id
    assert event.payload["prompt"] == DEFAULT_SUMMARY_PROMPT.format(
        messages=get_buffer_string(messages[:3], format="xml")).rstrip()


def test_async_before_model_matches_sync() -> None:
    layer = make(trigger=("messages", 5), keep=("messages", 2))
    result = asyncio.run(layer.abefore_model({"messages": humans(*"12345")}, Runtime()))
    assert [m.content for m in result["messages"][2:]] == ["4", "5"]  # type: ignore[index]


def test_messages_without_ids_get_stable_ids() -> None:
    def fresh() -> list[BaseMessage]:
        return [HumanMessage("Hello"), AIMessage("Hi"), HumanMessage("more"), AIMessage("sure")]

    first, second = fresh(), fresh()
    for messages in (first, second):
        run(make(trigger=("messages", 4), keep=("messages", 1)), messages)
    assert all(m.id for m in first)
    assert [m.id for m in first] == [m.id for m in second]
    assert first[0].id.startswith("msg-human-0-")  # type: ignore[union-attr]


def test_trim_none_passes_every_message_and_the_prompt_keeps_image_urls() -> None:
    seen: list[list[BaseMessage]] = []
    layer = make(trigger=("messages", 3), keep=("messages", 1), trim_tokens_to_summarize=None,
                 summarizer=lambda msgs: seen.append(msgs) or "S")
    image = HumanMessage([{"type": "text", "text": "see"}, {"type": "image", "url": "https://x/img.png"}], id="img")
    messages = [image, *humans(*"12")]
    with recording() as rec:
        run(layer, messages)
    assert seen == [messages[:2]]
    assert '<message type="human">see <image url="https://x/img.png" /></message>' in rec.events[0].payload["prompt"]


def test_trim_failure_falls_back_to_the_last_15_messages() -> None:
    def failing(_: Any) -> int:
        raise ValueError("Token counting failed")

    messages = humans(*map(str, range(20)))
    assert trim_for_summary(messages, 4000, failing) == messages[-15:]
    assert trim_for_summary(messages, None, failing) == messages


def test_trim_keeps_the_newest_part_of_a_partial_message_with_a_cached_counter() -> None:
    # trim_messages edits a copied message in place while it searches; a cached count would go stale
    counter = ApproximateCounter()
    long = HumanMessage("\n".join(f"line {i:03d} " + "x" * 30 for i in range(100)), id="long")
    trimmed = trim_for_summary([long], 100, counter)
    assert len(trimmed) == 1 and trimmed[0].content != long.content
    assert counter([trimmed[0]]) <= 100
    assert trimmed[0].content.endswith("line 099 " + "x" * 30)
    assert len(trimmed[0].content.splitlines()) == 9


def test_empty_history_text_skips_the_summarizer() -> None:
    calls: list[Any] = []
    layer = make(summarizer=lambda msgs: calls.append(msgs) or "S")
    assert layer._write([]).text == NO_HISTORY
    assert calls == []


def test_summarizer_must_return_a_string() -> None:
    layer = make(trigger=("messages", 2), keep=("messages", 1), summarizer=lambda msgs: 42)
    with pytest.raises(TypeError, match="`summarizer` must return a str, got int."):
        run(layer, humans("1", "2"))


def too_long_thread() -> list[BaseMessage]:
    """One request, then tool rounds worth far more than the trim budget: no human message fits."""
    messages: list[BaseMessage] = [HumanMessage("Refactor the parser", id="h0")]
    for k in range(6):
        messages += [AIMessage(f"step {k}", id=f"a{k}", tool_calls=[{"name": "read_file", "args": {"file_path": f"/f{k}"},
                                                                     "id": f"c{k}"}]),
                     ToolMessage("x" * 4000, tool_call_id=f"c{k}", id=f"t{k}")]
    return messages


def test_too_long_to_summarize_placeholder_and_warning_event() -> None:
    calls: list[Any] = []
    layer = make(trigger=("tokens", 4000), keep=("messages", 2), token_counter=ApproximateCounter(),
                 summarizer=lambda msgs: calls.append(msgs) or "S")
    with recording() as rec:
        result = run(layer, too_long_thread())
    assert result is not None
    assert result["messages"][1].content == (
        "Here is a summary of the conversation to date:\n\nPrevious conversation was too long to summarize.")
    assert calls == []
    summarize, empty = rec.events
    assert summarize.kind == "summarize" and summarize.payload["summary_text"] == TOO_LONG
    assert summarize.payload["prompt"] == ""
    assert (empty.kind, empty.severity) == ("summarize_empty", "warning")
    assert empty.payload["removed_ids"] == ["h0", "a0", "t0", "a1", "t1", "a2", "t2", "a3", "t3", "a4", "t4"]
    assert empty.payload["trim_tokens_to_summarize"] == 4000


def test_summary_of_a_summary_carries_the_intent() -> None:
    layer = SummarizationLayer(trigger=("messages", 6), keep=("messages", 2), overflow_fallback=False)
    messages: list[BaseMessage] = [HumanMessage("Migrate the billing service to Postgres", id="h0")]
    messages += [AIMessage(f"Checked module {k}; it works.", id=f"a{k}") for k in range(5)]
    first = run(layer, messages)
    state = add_messages(messages, first["messages"])  # type: ignore[index]
    assert [m.id for m in state[1:]] == ["a3", "a4"]
    state += [AIMessage(f"Checked module {k}; it works.", id=f"a{k}") for k in range(5, 8)]
    with recording() as rec:
        second = run(layer, state)
    summary = second["messages"][1]  # type: ignore[index]
    assert summary.id.startswith("summary-2-")
    assert rec.events[0].payload["removed_ids"] == [state[0].id, "a3", "a4", "a5"]
    text = rec.events[0].payload["summary_text"]
    assert text.startswith("## SESSION INTENT\n- Migrate the billing service to Postgres\n\n## SUMMARY\n")
    assert "- Checked module 0; it works." in text and "- Checked module 5; it works." in text


def test_a_projection_of_the_same_list_grown_is_the_last_one_extended_and_equals_apply_event() -> None:
    """`Projection` (engine.layers.summary_rules): while the state list only grows and the summary
    event is the same object, the projection made last time is extended in place (one list, whose
    running counts take their O(1) path); another list, another event, or messages that would fall
    in the event's drop span are projected afresh. Every result equals `apply_event`'s."""
    from engine.layers.summary_rules import CachedDrop, Projection, apply_event

    def ident(xs: Any) -> list[int]:
        return [id(x) for x in xs]

    msgs: list[Any] = []
    for i in range(30):
        msgs += [HumanMessage(f"q{i}", id=f"h{i}"),
                 AIMessage([{"type": "reasoning", "reasoning": "why"}, {"type": "text", "text": f"a{i}"}], id=f"a{i}",
                           tool_calls=[{"name": "read", "args": {}, "id": f"c{i}"}]),  # reasoning: the drop copies it
                 ToolMessage(f"r{i}", tool_call_id=f"c{i}", id=f"t{i}")]
    summary = HumanMessage("summary", id="summary-1-x")
    drop = CachedDrop()
    project = Projection()
    state = list(msgs[:20])
    for event in (None, {"cutoff_index": 6, "summary_message": summary},
                  {"cutoff_index": 6, "summary_message": summary, "created_at_index": 20}):
        state = list(msgs[:20])  # the state as a new list: projected afresh
        first = project(state, event, drop)
        assert ident(first) == ident(apply_event(state, event, drop))
        for k in range(20, 40):
            state.append(msgs[k])
            out = project(state, event, drop)
            assert out is first  # the same list, extended
            assert ident(out) == ident(apply_event(state, event, drop))
        assert project(state, event, drop) is first  # nothing new: the same list as it is
        fork = list(state)  # another list (the driver's fork): afresh
        assert project(fork, event, drop) is not first
        assert ident(project(fork, event, drop)) == ident(apply_event(fork, event, drop))
    # a new event (another summary) on the same list: afresh
    grown = list(msgs[:30])
    old = {"cutoff_index": 6, "summary_message": summary, "created_at_index": 20}
    before = project(grown, old, drop)
    new = {"cutoff_index": 18, "summary_message": HumanMessage("again", id="summary-2-y"), "created_at_index": 30}
    after = project(grown, new, drop)
    assert after is not before and ident(after) == ident(apply_event(grown, new, drop))
    # an event whose drop span reaches past what was seen: the new messages are dropped-copied, afresh
    short = list(msgs[:10])
    reach = {"cutoff_index": 6, "summary_message": summary, "created_at_index": 25}
    project(short, reach, drop)
    short.extend(msgs[10:30])
    assert ident(project(short, reach, drop)) == ident(apply_event(short, reach, drop))
