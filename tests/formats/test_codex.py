"""Codex CLI rollouts: the real sample, the third party's schema sample, and hand-made rollouts.

Expected numbers on the real rollout are read off the file here with plain json (lines counted by
type), independently of the importer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from engine.base.errors import ThreadLoadError, ThreadNotFoundError
from engine.formats import detect_format, importers, list_threads, load_thread, open_source
from engine.recorded.inspect import inspect_thread, step_contexts
from engine.tokens.counters import get_counter
from tests.conftest import trace_path
from tests.formats.mutations import FUZZ, attempt, jsonl, mutated_lines

REAL = ("codex", "vibecodingtracker-codex.jsonl")
SYNTHETIC = ("codex", "agent-sessions-codex-small.SYNTHETIC.jsonl")
SESSION = "0199aaaa-0000-7000-8000-000000000001"


def rows_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# -- the real rollout (Codex 0.39, VS Code) ------------------------------------------------------
def test_real_rollout_counts_read_off_the_file() -> None:
    path = trace_path(*REAL)
    rows = rows_of(path)
    items = [r["payload"] for r in rows if r["type"] == "response_item"]
    counts = [r["payload"]["info"]["last_token_usage"] for r in rows
              if r["type"] == "event_msg" and r["payload"]["type"] == "token_count"]
    calls = [i for i in items if i["type"] in ("function_call", "custom_tool_call")]
    outputs = [i for i in items if i["type"] in ("function_call_output", "custom_tool_call_output")]
    users = [i for i in items if i["type"] == "message" and i["role"] == "user"]
    assert (len(counts), len(calls), len(outputs), len(users)) == (19, 19, 19, 2)

    thread = load_thread(path)
    assert thread.source_format == "codex"
    assert thread.thread_id == "01996135-afde-7911-97f0-d863511eca56" == rows[0]["payload"]["id"]
    # 0.39 writes each call's token_count just before its items: one AI message per token_count.
    assert thread.by_role() == {"human": len(users), "ai": len(counts), "tool": len(outputs)}
    assert [tc["id"] for tc in thread.tool_calls()] == [c["call_id"] for c in calls]
    results = thread.tool_results()
    assert [results[c["call_id"]].content for c in calls] == [o["output"] for o in outputs]
    assert [results[c["call_id"]].name for c in calls] == [c["name"] for c in calls]
    ai = [m for m in thread.messages if isinstance(m, AIMessage)]
    assert [(thread.usage[m.id].input_tokens, thread.usage[m.id].cache_read_input_tokens,
             thread.usage[m.id].output_tokens, thread.usage[m.id].reasoning_tokens) for m in ai] == [
        (u["input_tokens"] - u["cached_input_tokens"], u["cached_input_tokens"] or None,
         u["output_tokens"], u["reasoning_output_tokens"]) for u in counts]
    assert [thread.usage[m.id].context_tokens for m in ai] == [u["input_tokens"] for u in counts]
    assert thread.model == "aide-gpt-5"
    assert thread.max_input_tokens is None  # model_context_window is null and the name is not in the table
    assert thread.title == "幫我檢查一下 go.mod 裡面 為何 go版本是 1.24?"
    assert thread.system_prompt is None  # 0.39 recorded neither base instructions nor `instructions`
    assert thread.compactions == []
    assert thread.extra["token_count_order"] == "before"
    assert thread.extra["skipped_records"] == {"event_msg:agent_message": 9, "event_msg:patch_apply_end": 2,
                                               "event_msg:user_message": 1}
    assert thread.todos[-1] == {"content": "Delete TODO.md", "status": "completed"}
    # The first call: its assistant text, the plan call, and nothing else.
    first = ai[0]
    assert first.content.startswith("I’ll scan the repo for go.mod") and [tc["name"] for tc in first.tool_calls] == [
        "update_plan"]
    assert isinstance(thread.messages[0], HumanMessage) and thread.messages[0].additional_kwargs == {
        "codex_context": True}


def test_real_rollout_counted_context_tracks_recorded_input() -> None:
    """Each step's counted context sits a near-constant ~5.4k tokens below what OpenAI recorded.

    That constant is what the rollout does not hold: Codex's base instructions and the tool schemas
    (0.39 records neither). Everything the file does hold is reproduced: the offset moves by under
    100 tokens across 19 calls while the context grows by 16.6k.
    """
    thread = load_thread(trace_path(*REAL))
    steps = step_contexts(thread, get_counter("o200k_base"))
    gaps = [s["recorded_input_tokens"] - s["context_tokens"] for s in steps]
    assert len(gaps) == 19 and all(5300 < g < 5500 for g in gaps)
    assert max(gaps) - min(gaps) < 100
    growth = steps[-1]["recorded_input_tokens"] - steps[0]["recorded_input_tokens"]
    assert growth == 22279 - 5645


def test_synthetic_schema_sample_loads_every_record_kind() -> None:
    thread = load_thread(trace_path(*SYNTHETIC))
    assert thread.thread_id == "019fc8be-3658-7ca3-9e29-000000000000"
    assert thread.title == "List the files"
    assert thread.max_input_tokens == 258400
    assert thread.extra["session_meta_records"] == 7
    assert [c.kind for c in thread.compactions] == ["server", "summary", "summary", "summary", "summary", "summary"]
    assert all(c.source == "codex:compacted" for c in thread.compactions)
    first_ai = thread.messages[2]
    assert isinstance(first_ai, AIMessage) and [tc["id"] for tc in first_ai.tool_calls] == ["call-1", "call-2"]
    assert first_ai.additional_kwargs["codex_encrypted_reasoning"] == 1
    assert len(thread.messages) == list_threads(trace_path(*SYNTHETIC))[0].messages


# -- hand-made rollouts --------------------------------------------------------------------------
def line(kind: str, payload: dict[str, Any], ts: str = "2026-05-01T10:00:00.000Z") -> dict[str, Any]:
    return {"timestamp": ts, "type": kind, "payload": payload}


def meta(**extra: Any) -> dict[str, Any]:
    return line("session_meta", {"id": SESSION, "timestamp": "2026-05-01T10:00:00.000Z", "cwd": "/repo",
                                 "originator": "codex_cli_rs", "cli_version": "0.60.0", **extra})


def ctx(model: str = "gpt-5-codex") -> dict[str, Any]:
    return line("turn_context", {"cwd": "/repo", "approval_policy": "on-request", "model": model,
                                 "sandbox_policy": {"type": "read-only"}, "summary": "auto"})


def item(**payload: Any) -> dict[str, Any]:
    return line("response_item", payload)


def user(text: str, **extra: Any) -> dict[str, Any]:
    return item(type="message", role="user", content=[{"type": "input_text", "text": text}], **extra)


def say(text: str) -> dict[str, Any]:
    return item(type="message", role="assistant", content=[{"type": "output_text", "text": text}])


def call(call_id: str, name: str = "shell", **args: Any) -> dict[str, Any]:
    return item(type="function_call", name=name, arguments=json.dumps(args), call_id=call_id)


def output(call_id: str, text: str) -> dict[str, Any]:
    return item(type="function_call_output", call_id=call_id, output=text)


def tokens(prompt: int, cached: int, out: int, reasoning: int = 0, total: int | None = None,
           window: int | None = 272000) -> dict[str, Any]:
    last = {"input_tokens": prompt, "cached_input_tokens": cached, "output_tokens": out,
            "reasoning_output_tokens": reasoning, "total_tokens": prompt + out}
    grand = dict(last, total_tokens=total if total is not None else prompt + out)
    return line("event_msg", {"type": "token_count", "info": {"total_token_usage": grand, "last_token_usage": last,
                                                              "model_context_window": window}})


ENV = "<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>"


def new_rollout() -> list[dict[str, Any]]:
    """Codex after 0.4x: items as they stream, token_count after them, tool outputs after that."""
    return [
        meta(base_instructions={"text": "You are Codex."}),
        user(ENV),
        ctx(),
        line("event_msg", {"type": "user_message", "message": "fix the test"}),
        user("fix the test"),
        item(type="reasoning", summary=[{"type": "summary_text", "text": "Look first."}], encrypted_content="gAAA"),
        say("Reading."),
        call("c1", command=["cat", "a.py"]),
        call("c2", command=["pytest"]),
        tokens(1000, 800, 50, 20, total=1050),
        output("c1", "print(1)"),
        output("c2", "1 failed"),
        ctx(),
        line("event_msg", {"type": "token_count", "info": None, "rate_limits": {}}),
        tokens(1000, 800, 50, 20, total=1050),  # the same totals again: a rate-limit refresh
        say("Fixed."),
        line("event_msg", {"type": "agent_message", "message": "Fixed."}),
        tokens(1300, 1000, 10, total=2360),
    ]


def write(tmp_path: Path, rows: list[dict[str, Any]], name: str = "rollout-2026-05-01T10-00-00-x.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(jsonl(rows))
    return path


def test_new_rollout_merges_one_call_into_one_ai_message(tmp_path: Path) -> None:
    path = write(tmp_path, new_rollout())
    assert detect_format(open_source(path)) == "codex"
    thread = load_thread(path)
    assert [type(m).__name__ for m in thread.messages] == [
        "SystemMessage", "HumanMessage", "HumanMessage", "AIMessage", "ToolMessage", "ToolMessage", "AIMessage"]
    assert thread.system_prompt == "You are Codex." == thread.messages[0].content
    assert thread.title == "fix the test"
    ai = thread.messages[3]
    assert isinstance(ai, AIMessage)
    assert ai.content == [{"type": "reasoning", "reasoning": "Look first."}, {"type": "text", "text": "Reading."}]
    assert [(tc["id"], tc["name"], tc["args"]) for tc in ai.tool_calls] == [
        ("c1", "shell", {"command": ["cat", "a.py"]}), ("c2", "shell", {"command": ["pytest"]})]
    assert ai.additional_kwargs == {"codex_encrypted_reasoning": 1, "codex_encrypted_reasoning_chars": [4]}
    assert ai.response_metadata == {"model": "gpt-5-codex"}
    tool = thread.messages[5]
    assert isinstance(tool, ToolMessage) and (tool.tool_call_id, tool.name, tool.content) == ("c2", "shell", "1 failed")
    first, second = (thread.usage[m.id] for m in thread.messages if isinstance(m, AIMessage))
    assert (first.input_tokens, first.cache_read_input_tokens, first.output_tokens, first.reasoning_tokens,
            first.context_tokens, first.model) == (200, 800, 50, 20, 1000, "gpt-5-codex")
    assert (second.input_tokens, second.cache_read_input_tokens, second.context_tokens) == (300, 1000, 1300)
    assert thread.max_input_tokens == 272000 and "window_source" not in thread.extra
    assert thread.extra["token_count_order"] == "after"
    assert thread.extra["skipped_records"] == {"event_msg:agent_message": 1, "event_msg:token_count (repeated)": 1,
                                               "event_msg:user_message": 1}
    assert thread.extra["encrypted_reasoning_items"] == 1


def test_reasoning_summary_is_counted_and_encrypted_reasoning_is_not(tmp_path: Path) -> None:
    thread = load_thread(write(tmp_path, new_rollout()))
    counter = get_counter("o200k_base")
    ai = thread.messages[3]
    assert "gAAA" not in json.dumps(ai.content)
    # The summary counts as thinking (issue 31: its own category), the reply as text; the encrypted part adds
    # nothing to our count (the calibration lays the call's recorded reasoning tokens on it instead)
    assert counter.breakdown(ai)["ai"] == 3 + counter.count_text("Reading.")
    assert counter.breakdown(ai)["thinking"] == counter.count_text("Look first.")


def test_0_39_order_token_count_before_items_and_interleaved_outputs(tmp_path: Path) -> None:
    rows = [
        meta(instructions=None), user(ENV), user("do it"), ctx(),
        tokens(500, 0, 40, 30),
        item(type="reasoning", summary=[], content=None, encrypted_content=None),
        say("Two things."), call("a", command=["ls"]), output("a", "x"), call("b", command=["pwd"]), output("b", "/"),
        ctx(),
        tokens(600, 500, 5),
        say("Done."),
    ]
    thread = load_thread(write(tmp_path, rows))
    assert [type(m).__name__ for m in thread.messages] == [
        "HumanMessage", "HumanMessage", "AIMessage", "ToolMessage", "ToolMessage", "AIMessage"]
    first, last = thread.messages[2], thread.messages[5]
    assert [tc["id"] for tc in first.tool_calls] == ["a", "b"] and first.content == "Two things."
    assert thread.usage[first.id].context_tokens == 500 and thread.usage[first.id].reasoning_tokens == 30
    assert (thread.usage[last.id].input_tokens, thread.usage[last.id].cache_read_input_tokens) == (100, 500)
    assert thread.extra["token_count_order"] == "before"


def test_legacy_bare_rollout_with_state_lines(tmp_path: Path) -> None:
    rows = [
        {"id": SESSION, "timestamp": "2025-05-07T17:24:21.123Z", "instructions": "Always run the tests."},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "list files"}]},
        {"record_type": "state"},
        {"type": "local_shell_call", "id": "ls1", "call_id": "ls1", "status": "completed",
         "action": {"type": "exec", "command": ["ls"]}},
        {"type": "function_call_output", "call_id": "ls1", "output": {"content": "a.txt", "success": True}},
        {"type": "function_call", "name": "shell", "arguments": "{\"command\": [\"cat\", \"a.txt\"]}", "call_id": "c2"},
        {"type": "function_call_output", "call_id": "c2", "output": {"content": "boom", "success": False}},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "a.txt is empty"}]},
        {"record_type": "state", "previous_response_id": "resp_1"},
    ]
    path = write(tmp_path, rows)
    assert detect_format(open_source(path)) == "codex"
    thread = load_thread(path)
    assert thread.thread_id == SESSION and thread.extra["rollout_version"] == "legacy (bare items, no envelope)"
    # Old Codex appended the session's instructions to the system instructions it sent.
    assert thread.system_prompt == "Always run the tests." and isinstance(thread.messages[0], SystemMessage)
    # No token_count: one tool call per request (parallel_tool_calls was off), so an output ends a call.
    assert [type(m).__name__ for m in thread.messages[1:]] == [
        "HumanMessage", "AIMessage", "ToolMessage", "AIMessage", "ToolMessage", "AIMessage"]
    shell = thread.messages[2].tool_calls[0]
    assert (shell["name"], shell["args"], shell["id"]) == ("local_shell", {"type": "exec", "command": ["ls"]}, "ls1")
    assert [(m.content, m.status) for m in thread.messages if isinstance(m, ToolMessage)] == [
        ("a.txt", "success"), ("boom", "error")]
    assert thread.usage == {} and thread.extra["skipped_records"] == {"state": 2}


def compaction_rollout(payload: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        meta(), line("response_item", {"type": "message", "role": "developer", "id": "dev",
                                        "content": [{"type": "input_text", "text": "<permissions instructions>ro"}]}),
        user(ENV, id="env"), ctx(), user("first task", id="u1"), say("ok 1"), tokens(100, 0, 5),
        user("second task", id="u2"), say("ok 2"), tokens(200, 100, 5),
        tokens(230, 200, 60),  # the summary call: no items of its own
        line("compacted", payload),
        ctx(), user("third task", id="u3"), say("ok 3"), tokens(90, 0, 5),
    ]


def test_compacted_with_replacement_history_keeps_the_ids_of_kept_items(tmp_path: Path) -> None:
    summary = "Another language model started to solve this problem and produced a summary of its thinking process.\nS"
    replacement = [
        {"type": "message", "role": "developer", "id": "dev",
         "content": [{"type": "input_text", "text": "<permissions instructions>ro"}]},
        {"type": "message", "role": "user", "id": "env", "content": [{"type": "input_text", "text": ENV}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "second task"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": summary}]},
    ]
    thread = load_thread(write(tmp_path, compaction_rollout({"message": summary, "replacement_history": replacement})))
    [c] = thread.compactions
    assert (c.index, c.kind, c.source, c.summary, c.pre_tokens) == (6, "summary", "codex:compacted", summary, 230)
    assert isinstance(thread.messages[c.index], HumanMessage) and thread.messages[c.index].content == "third task"
    ids = [m.id for m in c.replacement]
    # Same id: the same item. "second task" is rebuilt from its text alone (no id): it is a new message.
    assert ids[:2] == ["dev", "env"] and ids[2] != "u2" and ids[3] == c.message_id
    assert [m.content for m in c.replacement][2:] == ["second task", summary]
    assert thread.extra["unpaired_token_counts"] == 1
    steps = step_contexts(thread, get_counter("o200k_base"))
    counter = get_counter("o200k_base")
    assert steps[-1]["context_tokens"] == counter(c.replacement) + counter.count_message(thread.messages[6])


def test_compacted_without_replacement_is_rebuilt_as_codex_replays_it(tmp_path: Path) -> None:
    thread = load_thread(write(tmp_path, compaction_rollout({"message": "SUMMARY TEXT"})))
    [c] = thread.compactions
    # replay.rs: the items before the first user turn, every user prompt (within 20k tokens), the summary.
    assert [m.content for m in c.replacement] == [
        "<permissions instructions>ro", ENV, "first task", "second task", "SUMMARY TEXT"]
    assert [m.id for m in c.replacement][:4] == ["dev", "env", "u1", "u2"]
    assert c.message_id == c.replacement[-1].id and c.kind == "summary"


def test_remote_compaction_is_a_server_compaction_with_an_opaque_item(tmp_path: Path) -> None:
    replacement = [{"type": "message", "role": "user", "id": "u2",
                    "content": [{"type": "input_text", "text": "second task"}]},
                   {"type": "compaction", "encrypted_content": "Zm9v" * 500}]
    thread = load_thread(write(tmp_path, compaction_rollout({"message": "", "replacement_history": replacement})))
    [c] = thread.compactions
    assert (c.kind, c.summary, c.message_id) == ("server", "", None)
    kept, opaque = c.replacement
    assert kept.id == "u2" and kept is thread.messages[4]
    assert opaque.content == [{"type": "compaction", "encrypted": True}]
    assert get_counter("o200k_base").count_message(opaque) == 3  # framing only: the size cannot be read


def test_trim_before_compaction_and_rollback(tmp_path: Path) -> None:
    rows = compaction_rollout({"message": "S"})
    rows.insert(10, line("event_msg", {"type": "background_event", "message":
                                       "Trimmed 2 older conversation item(s) before compacting so the prompt fits."}))
    rows += [user("fourth task"), say("ok 4"), tokens(120, 0, 5),
             line("event_msg", {"type": "thread_rolled_back", "num_turns": 1})]
    thread = load_thread(write(tmp_path, rows))
    trim, summary = thread.compactions
    assert (trim.kind, trim.source, trim.index) == ("trim", "codex:trimmed", summary.index)
    assert [m.id for m in trim.replacement][:1] == ["u1"]  # dev and env were the two oldest items
    assert thread.messages[-1].content == "ok 3"
    assert thread.extra["rolled_back"] == [{"index": 8, "messages": 2, "turns": 1, "line": 21}]
    assert len(thread.usage) == 3


def test_list_threads_and_thread_id(tmp_path: Path) -> None:
    path = write(tmp_path, new_rollout())
    [ref] = list_threads(path)
    assert (ref.thread_id, ref.title, ref.messages) == (SESSION, "fix the test", 7)
    assert load_thread(path, thread_id=SESSION).thread_id == SESSION
    with pytest.raises(ThreadNotFoundError):
        load_thread(path, thread_id="other")


def test_an_unfinished_last_line_is_set_aside(tmp_path: Path) -> None:
    data = jsonl(new_rollout()) + b'{"timestamp": "2026-05-01T10:00:09Z", "type": "response_item", "pay'
    thread = load_thread(data=data, name="rollout-live.jsonl")
    assert thread.extra["unfinished_last_line"] == 19 and len(thread.messages) == 7


BAD = [
    ([meta(), line("response_item", "text")], "line 2: $.payload", "expected an object, got string"),
    ([meta(), item(type=5)], "line 2: $.payload.type", "expected an item type string, got number"),
    ([meta(), item(type="message", role=7, content=[])], "line 2: $.payload.role", "expected a role string"),
    ([meta(), item(type="message", role="user", content=[{"type": "input_text", "text": 3}])],
     "line 2: $.payload.content[0].text", "expected a string, got number"),
    ([meta(), item(type="function_call", name="f", call_id="c", arguments=12)], "line 2: $.payload.arguments",
     "expected a JSON string, got number"),
    ([meta(), item(type="function_call", name="f", arguments="{}")], "line 2: $.payload.call_id",
     "expected a string, got null"),
    ([meta(), item(type="function_call_output", call_id="c", output=5)], "line 2: $.payload.output",
     "expected a string or content parts, got number"),
    ([meta(), say("x"), line("event_msg", {"type": "token_count", "info": {"last_token_usage": {"input_tokens": "9"}}})],
     "line 3: $.payload.info.last_token_usage.input_tokens", "expected an integer, got string"),
    ([meta(), line("compacted", {"message": "s", "replacement_history": {"a": 1}})],
     "line 2: $.payload.replacement_history", "expected an array, got object"),
    ([meta(), line("turn_context", [1])], "line 2: $.payload", "expected an object, got array"),
]


@pytest.mark.parametrize("rows,location,message", BAD)
def test_malformed_rollouts_name_the_line_and_path(rows: list[Any], location: str, message: str) -> None:
    for forced in (None, "codex"):
        with pytest.raises(ThreadLoadError) as info:
            load_thread(data=jsonl(rows), name="bad.jsonl", format=forced)
        err = info.value
        assert (err.format, err.location) == ("codex", location)
        assert err.message.startswith(message)
        assert str(err).startswith(f"bad.jsonl, format codex, at {location}: ")


def test_a_broken_line_in_the_middle_is_an_error() -> None:
    data = jsonl([meta(), user("a")]) + b"{not json\n" + jsonl([say("b")])
    with pytest.raises(ThreadLoadError) as info:
        load_thread(data=data, name="bad.jsonl", format="codex")
    assert info.value.location == "line 3, column 2" and info.value.format == "codex"


def test_only_codex_claims_rollouts_and_codex_claims_no_other_jsonl() -> None:
    rollout = open_source(data=jsonl(new_rollout()), name="r.jsonl")
    assert [name for name, imp in importers().items() if imp.sniff(rollout)] == ["codex"]
    claude = open_source(data=jsonl([{"type": "user", "sessionId": "s", "uuid": "u",
                                      "message": {"role": "user", "content": "hi"}}]), name="s.jsonl")
    responses = open_source(data=jsonl([{"object": "response", "id": "r", "output": []}]), name="log.jsonl")
    meta_only = open_source(data=jsonl([{"id": "x", "timestamp": "t"}]), name="notes.jsonl")
    for other in (claude, responses, meta_only):
        assert not importers()["codex"].sniff(other)


def test_inspect_reports_the_codex_thread() -> None:
    report = inspect_thread(load_thread(trace_path(*REAL)))
    assert (report["format"], report["messages"], report["tool_calls"]["count"]) == ("codex", 40, 19)
    assert report["tool_calls"]["by_name"] == {"shell": 14, "update_plan": 4, "exec": 1}


@pytest.fixture(scope="module")
def sample_rows() -> dict[str, list[Any]]:
    return {name: rows_of(trace_path(*parts)) for name, parts in (("real", REAL), ("synthetic", SYNTHETIC))}


@FUZZ
@given(data=st.data())
def test_mutated_rollouts_only_raise_thread_load_error(sample_rows: dict[str, list[Any]], data: st.DataObject) -> None:
    rows = sample_rows[data.draw(st.sampled_from(sorted(sample_rows)))]
    blob = mutated_lines(data, rows)
    attempt(blob, None)
    attempt(blob, "codex")


@FUZZ
@given(data=st.data())
def test_mutated_hand_made_rollouts_only_raise_thread_load_error(data: st.DataObject) -> None:
    rows = data.draw(st.sampled_from([new_rollout(), compaction_rollout({"message": "S"})]))
    blob = mutated_lines(data, rows)
    attempt(blob, None)
    attempt(blob, "codex")


def test_a_call_whose_arguments_are_not_json_stays_a_call(tmp_path: Path) -> None:
    # models emit these; Codex sends the call back as written and answers it with the parse error, so the
    # thread keeps the call (raw arguments) and its result pairs with it ("exec_command: 0 calls, N results")
    raw = '{"cmd": "ls -la", "workdir": "/repo'
    rows = [meta(), ctx(), user("list it"),
            item(type="function_call", name="exec_command", arguments=raw, call_id="bad1"),
            tokens(500, 0, 20), output("bad1", "failed to parse function arguments: EOF while parsing a string"),
            say("Retrying."), tokens(600, 0, 10)]
    thread = load_thread(write(tmp_path, rows))
    ai = next(m for m in thread.messages if isinstance(m, AIMessage) and m.tool_calls)
    assert [(tc["name"], tc["args"], tc["id"]) for tc in ai.tool_calls] == [("exec_command", {"arguments": raw}, "bad1")]
    assert ai.invalid_tool_calls == [] and ai.additional_kwargs["codex_unparsed_arguments"] == ["bad1"]
    result = next(m for m in thread.messages if isinstance(m, ToolMessage))
    assert result.tool_call_id == "bad1"
    from engine.recorded.inspect import inspect_thread

    assert inspect_thread(thread)["tool_calls"] == {"count": 1, "by_name": {"exec_command": 1}}
