"""The pure rules the compacting layers share: thresholds, cutoffs, summary input, incremental scans."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from engine.config.sizes import ContextSize
from engine.layers.cutoff import cutoff_for_keep, find_safe_cutoff_point
from engine.layers.scan import grown_prefix, replaced_in_prefix, result_text, unchanged_prefix
from engine.layers.summary_rules import (
    NO_HISTORY,
    STATE_SUMMARY_TEMPLATE,
    IdCheck,
    apply_event,
    format_prompt,
    state_cutoff,
    summary_id,
)
from engine.layers.thresholds import (
    ThresholdError,
    clause_label,
    fired_clause,
    fraction_threshold,
    normalize_keep,
    normalize_trigger,
)


def per_message(messages: list[BaseMessage]) -> int:
    return 10 * len(list(messages))


def pairs(n: int) -> list[BaseMessage]:
    out: list[BaseMessage] = [HumanMessage("go", id="h")]
    for i in range(n):
        out += [AIMessage("", id=f"a{i}", tool_calls=[{"name": "ls", "args": {}, "id": f"c{i}"}]),
                ToolMessage(f"r{i}", tool_call_id=f"c{i}", id=f"t{i}")]
    return out


# -- thresholds ----------------------------------------------------------------------------------
def test_trigger_shapes_normalize_to_or_of_and_clauses() -> None:
    assert normalize_trigger(None) == ()
    assert normalize_trigger(("tokens", 100)) == ((("tokens", 100),),)
    assert normalize_trigger([("tokens", 100), {"messages": 5, "fraction": 0.5}]) == (
        (("tokens", 100),), (("messages", 5), ("fraction", 0.5)))
    assert normalize_trigger(ContextSize(type="messages", value=7)) == ((("messages", 7),),)
    assert [clause_label(c) for c in normalize_trigger("tokens:30000,messages:50&fraction:0.5")] == [
        "tokens:30000", "messages:50&fraction:0.5"]


def test_keep_is_one_threshold() -> None:
    assert normalize_keep(("tokens", 300)) == ("tokens", 300)
    assert normalize_keep(ContextSize(type="fraction", value=0.1)) == ("fraction", 0.1)
    with pytest.raises(ThresholdError, match="Unsupported context size type"):
        normalize_keep([("tokens", 300)])


def test_fraction_threshold_is_at_least_one_token() -> None:
    assert (fraction_threshold(1000, 0.85), fraction_threshold(1000, 0.0001)) == (850, 1)


def test_fired_clause_reports_the_first_met_clause_and_reported_usage_counts() -> None:
    clauses = normalize_trigger([("messages", 10), ("tokens", 500)])
    assert fired_clause(clauses, message_count=3, total_tokens=499, window=None) is None
    assert fired_clause(clauses, message_count=3, total_tokens=500, window=None) == "tokens:500"
    assert fired_clause(clauses, message_count=3, total_tokens=10, window=None, reported_tokens=500) == "tokens:500"
    assert fired_clause(clauses, message_count=10, total_tokens=500, window=None) == "messages:10"
    # a fraction with no window fails only its own clause
    assert fired_clause(normalize_trigger(("fraction", 0.5)), message_count=1, total_tokens=10**6, window=None) is None


# -- cutoff --------------------------------------------------------------------------------------
def test_cutoff_for_keep_by_messages_tokens_and_fraction() -> None:
    messages = pairs(4)  # H, (A, T) x 4: 9 messages of 10 tokens
    assert cutoff_for_keep(messages, ("messages", 3), per_message, None) == 5  # cut on t2 moves back to a2
    assert cutoff_for_keep(messages, ("tokens", 40), per_message, None) == 5
    assert cutoff_for_keep(messages, ("fraction", 0.4), per_message, 100) == 5
    assert cutoff_for_keep(messages, ("tokens", 1000), per_message, None) == 0
    # a fraction with no window keeps LangChain's default 20 messages (all of these)
    assert cutoff_for_keep(messages, ("fraction", 0.4), per_message, None) == 0


def test_safe_cutoff_never_leaves_a_result_without_its_call() -> None:
    messages = pairs(3)
    for cutoff in range(len(messages) + 1):
        safe = find_safe_cutoff_point(messages, cutoff)
        assert safe >= len(messages) or not isinstance(messages[safe], ToolMessage)


# -- summary input -------------------------------------------------------------------------------
def test_prompt_uses_langchain_xml_buffer() -> None:
    assert format_prompt("<m>{messages}</m>\n\n", [HumanMessage("hi")]) == '<m><message type="human">hi</message></m>'


def test_summary_ids_count_the_chain() -> None:
    first = summary_id([HumanMessage("a", id="a")], "text")
    assert first.startswith("summary-1-")
    second = HumanMessage(STATE_SUMMARY_TEMPLATE.format(summary="x"), id=first,
                          additional_kwargs={"lc_source": "summarization"})
    assert summary_id([second, HumanMessage("b", id="b")], "more").startswith("summary-2-")
    assert summary_id([HumanMessage("a", id="a")], "text") == first  # deterministic


def test_event_projection_and_chained_state_cutoff() -> None:
    messages = pairs(3)
    summary = HumanMessage(NO_HISTORY, id="s")
    assert apply_event(messages, None) == messages
    assert apply_event(messages, {"cutoff_index": 5, "summary_message": summary}) == [summary, *messages[5:]]
    assert apply_event(messages, {"cutoff_index": 99, "summary_message": summary}) == [summary]
    assert state_cutoff(None, 4) == 4
    assert state_cutoff({"cutoff_index": 5}, 3) == 7  # the summary's slot is not a state message


def test_id_check_fills_missing_ids_stably() -> None:
    messages: list[BaseMessage] = [HumanMessage("a"), AIMessage("b", id="keep")]
    IdCheck()(messages)
    again: list[BaseMessage] = [HumanMessage("a"), AIMessage("b", id="keep")]
    IdCheck()(again)
    assert messages[0].id == again[0].id and messages[0].id is not None and messages[1].id == "keep"


# -- incremental scans ---------------------------------------------------------------------------
class Owner:
    def __init__(self) -> None:
        self._seen: list[BaseMessage] = []


def test_grown_prefix_needs_the_same_list_object() -> None:
    owner, messages = Owner(), pairs(1)
    assert grown_prefix(owner, messages) == 0
    owner._seen = list(messages)
    messages.append(HumanMessage("more", id="m"))
    assert grown_prefix(owner, messages) == 3
    assert grown_prefix(owner, list(messages)) == 0  # a copy is not known to be append-only


def test_unchanged_and_replaced_prefix() -> None:
    seen = pairs(1)
    grown = [*seen, HumanMessage("x", id="x")]
    assert unchanged_prefix(seen, grown) == 3
    assert unchanged_prefix(seen, grown[:2]) == 0
    copy = seen[2].model_copy(update={"content": "stub"})
    assert replaced_in_prefix(seen, [*seen[:2], copy, grown[3]]) == [2]
    assert replaced_in_prefix(seen, [*seen[:2], HumanMessage("other", id="o")]) is None
    assert replaced_in_prefix(seen, grown) == []


def test_result_text_joins_text_blocks_and_skips_images() -> None:
    message = ToolMessage([{"type": "text", "text": "a"}, {"type": "image", "url": "u"}, "b"], tool_call_id="c")
    assert result_text(message) == "a\nb"
