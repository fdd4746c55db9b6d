"""Gemini CLI sessions: the real legacy JSON and JSONL samples, the schema samples, hand-made sessions.

Expected numbers on the real sessions are read off the files here with plain json (and, for JSONL,
a dict that keeps the first position and last version of an id, as Gemini CLI's reader does).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from engine.base.errors import ThreadLoadError
from engine.formats import detect_format, importers, list_threads, load_thread, open_source
from engine.recorded.inspect import inspect_thread, step_contexts
from engine.tokens.counters import get_counter
from tests.conftest import trace_path
from tests.formats import sized
from tests.formats.mutations import FUZZ, attempt, jsonl, mutated_document, mutated_lines

LEGACY = ("gemini", "vibecodingtracker-session-legacy-toolcalls.json")
JSONL = ("gemini", "vibecodingtracker-session.jsonl")
SYNTHETIC_JSONL = ("gemini", "agent-sessions-gemini-jsonl_v040.SYNTHETIC.jsonl")
SYNTHETIC_JSON = ("gemini", "agent-sessions-gemini-large.SYNTHETIC.json")


def expected_usage(tokens: dict[str, int]) -> tuple[int, int | None, int, int]:
    """(uncached input, cache reads, output incl. thoughts, thoughts), from Gemini's usageMetadata."""
    return (tokens["input"] - tokens["cached"] + tokens["tool"], tokens["cached"] or None,
            tokens["output"] + tokens["thoughts"], tokens["thoughts"])


def check_against_records(thread: Any, records: list[dict[str, Any]]) -> None:
    sent = [r for r in records if r["type"] in ("user", "gemini")]
    calls = [tc for r in sent for tc in r.get("toolCalls") or []]
    assert thread.by_role() == {"human": sum(r["type"] == "user" for r in sent),
                                "ai": sum(r["type"] == "gemini" for r in sent),
                                "tool": sum(tc.get("result") is not None for tc in calls)}
    assert [tc["id"] for tc in thread.tool_calls()] == [tc["id"] for tc in calls]
    assert [(tc["name"], tc["args"]) for tc in thread.tool_calls()] == [(tc["name"], tc["args"]) for tc in calls]
    ai = [m for m in thread.messages if isinstance(m, AIMessage)]
    assert [m.id for m in ai] == [r["id"] for r in sent if r["type"] == "gemini"]
    usage = [thread.usage[m.id] for m in ai]
    assert [(u.input_tokens, u.cache_read_input_tokens, u.output_tokens, u.reasoning_tokens) for u in usage] == [
        expected_usage(r["tokens"]) for r in sent if r["type"] == "gemini"]
    assert [u.context_tokens for u in usage] == [r["tokens"]["input"] for r in sent if r["type"] == "gemini"]


# -- real sessions -------------------------------------------------------------------------------
def test_real_legacy_json_session() -> None:
    path = trace_path(*LEGACY)
    doc = json.loads(path.read_text(encoding="utf-8"))
    thread = load_thread(path)
    assert thread.source_format == "gemini_cli" and thread.thread_id == doc["sessionId"]
    check_against_records(thread, doc["messages"])
    assert thread.by_role() == {"human": 1, "ai": 3, "tool": 7}
    assert thread.model == "gemini-3.1-pro-preview-customtools"
    assert thread.max_input_tokens == 1_048_576 and thread.extra["window_source"] == "model table"
    assert thread.title.startswith("請幫我依照專案實際狀況更新 README.md")
    assert thread.extra["session_file"] == "legacy json"
    first_ai = thread.messages[1]
    assert first_ai.content[0]["type"] == "reasoning"
    assert first_ai.content[0]["reasoning"].startswith("Initiating Stepwise Analysis\nI'm now diving")
    read = thread.messages[2]
    assert isinstance(read, ToolMessage) and read.name == "read_file" and read.tool_call_id == "x0m3mt27"
    assert read.content.startswith('<div align="center" markdown="1">')  # the functionResponse's output


def test_real_jsonl_session_keeps_first_position_and_last_version() -> None:
    path = trace_path(*JSONL)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    records: dict[str, dict[str, Any]] = {}
    for record in lines:
        if isinstance(record.get("id"), str):
            records[record["id"]] = record  # a dict keeps an existing key's position
    assert len([r for r in lines if "id" in r]) == 16 and len(records) == 11
    thread = load_thread(path)
    check_against_records(thread, list(records.values()))
    assert thread.by_role() == {"human": 3, "ai": 6, "tool": 12}
    assert thread.extra["skipped_records"] == {"message:info": 2}
    assert thread.thread_id == "0ab84937-9fe7-4284-986a-33c832af0b6a" == lines[0]["sessionId"]
    assert thread.title == "You are an AI agent that brings the power of Gemini directly into the…"  # cut at a word
    assert thread.compactions == [] and thread.edits == []
    assert len(thread.messages) == list_threads(path)[0].messages


def test_real_sessions_counted_context_stays_below_recorded_input() -> None:
    """The files hold neither Gemini CLI's system prompt nor its tool declarations, nor the
    thinking Gemini 3 gets back inside a turn (only its summaries): every step counts less."""
    for parts in (LEGACY, JSONL):
        steps = step_contexts(load_thread(trace_path(*parts)), get_counter("o200k_base"))
        assert all(s["context_tokens"] < s["recorded_input_tokens"] for s in steps)
    first = step_contexts(load_thread(trace_path(*LEGACY)), get_counter("o200k_base"))[0]
    assert first["recorded_input_tokens"] - first["context_tokens"] > 10_000  # prompt + tools, before any turn


def test_schema_samples_load() -> None:
    small = load_thread(trace_path(*SYNTHETIC_JSONL))
    assert small.by_role() == {"human": 1, "ai": 2, "tool": 1}
    assert small.usage["g-assistant-2"].cache_read_input_tokens == 11502
    large = load_thread(trace_path(*SYNTHETIC_JSON))
    # `type: "model"` is not a type Gemini CLI writes (user, gemini, info, error, warning): skipped.
    assert large.extra["skipped_records"] == {"message:info": 1, "message:model": 2}
    assert large.by_role() == {"human": 2, "ai": 2, "tool": 2}


# -- hand-made sessions --------------------------------------------------------------------------
META = {"sessionId": "s-1", "projectHash": "ph", "startTime": "2026-05-01T10:00:00Z",
        "lastUpdated": "2026-05-01T10:00:00Z", "kind": "main"}


def msg(mid: str, mtype: str, content: Any = "", **fields: Any) -> dict[str, Any]:
    return {"id": mid, "timestamp": "2026-05-01T10:00:01Z", "type": mtype, "content": content, **fields}


def toks(prompt: int, cached: int = 0, out: int = 5, thoughts: int = 0, tool: int = 0) -> dict[str, int]:
    return {"input": prompt, "output": out, "cached": cached, "thoughts": thoughts, "tool": tool,
            "total": prompt + out + thoughts + tool}


def call(cid: str, result: str | None, name: str = "read_file", status: str = "success") -> dict[str, Any]:
    tc: dict[str, Any] = {"id": cid, "name": name, "args": {"path": cid}, "status": status,
                          "timestamp": "2026-05-01T10:00:02Z"}
    if result is not None:
        tc["result"] = [{"functionResponse": {"id": cid, "name": name, "response": {"output": result}}}]
    return tc


def session() -> list[dict[str, Any]]:
    return [
        META,
        msg("u1", "user", [{"text": "read a and b"}]),
        {"$set": {"lastUpdated": "2026-05-01T10:00:01Z"}},
        msg("g1", "gemini", "", thoughts=[{"subject": "Plan", "description": "Read both.",
                                           "timestamp": "2026-05-01T10:00:01Z"}], model="gemini-3-flash-preview"),
        msg("g1", "gemini", "", thoughts=[{"subject": "Plan", "description": "Read both."}],
            model="gemini-3-flash-preview", toolCalls=[call("a", "AAA"), call("b", "BBB")]),
        msg("g1", "gemini", "", thoughts=[{"subject": "Plan", "description": "Read both."}],
            model="gemini-3-flash-preview", toolCalls=[call("a", "AAA"), call("b", "BBB")],
            tokens=toks(1000, cached=600, thoughts=40, tool=7)),
        msg("g2", "gemini", "Both read.", model="gemini-3-flash-preview", tokens=toks(1200, cached=1000)),
        msg("i1", "info", "Request cancelled."),
        {"$set": {"summary": "Reading two files"}},
    ]


def write(tmp_path: Path, rows: list[Any], name: str = "session-2026-05-01T10-00-s1.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(jsonl(rows))
    return path


def test_re_appended_ids_merge_into_one_message_per_call(tmp_path: Path) -> None:
    path = write(tmp_path, session())
    assert detect_format(open_source(path)) == "gemini_cli"
    thread = load_thread(path)
    assert [(type(m).__name__, m.id) for m in thread.messages] == [
        ("HumanMessage", "u1"), ("AIMessage", "g1"), ("ToolMessage", "g1:a"), ("ToolMessage", "g1:b"),
        ("AIMessage", "g2")]
    g1 = thread.messages[1]
    assert g1.content == [{"type": "reasoning", "reasoning": "Plan\nRead both."}]
    assert [(tc["id"], tc["name"], tc["args"]) for tc in g1.tool_calls] == [
        ("a", "read_file", {"path": "a"}), ("b", "read_file", {"path": "b"})]
    assert [m.content for m in thread.messages[2:4]] == ["AAA", "BBB"]
    u = thread.usage["g1"]
    # input 1000 includes 600 cached; the 7 tool-use prompt tokens are input too; thoughts are output.
    assert (u.input_tokens, u.cache_read_input_tokens, u.output_tokens, u.reasoning_tokens, u.context_tokens) == (
        407, 600, 45, 40, 1007)
    assert thread.title == "Reading two files"  # the session summary Gemini CLI saved
    assert thread.extra["skipped_records"] == {"message:info": 1}
    assert thread.model == "gemini-3-flash-preview" and thread.max_input_tokens == 1_048_576


def test_rewind_drops_the_message_and_everything_after(tmp_path: Path) -> None:
    rows = [*session(), msg("u2", "user", "now c"), msg("g3", "gemini", "c?"), {"$rewindTo": "u2"},
            msg("u3", "user", "now d")]
    thread = load_thread(write(tmp_path, rows))
    assert [m.id for m in thread.messages][-2:] == ["g2", "u3"]
    assert thread.extra["rewound"] == [{"to": "u2", "records": 2, "line": 12}]
    unknown = load_thread(write(tmp_path, [*session(), {"$rewindTo": "nope"}, msg("u9", "user", "fresh")]))
    # Gemini CLI's reader clears the whole list for an id it does not know.
    assert [m.id for m in unknown.messages] == ["u9"]


def test_a_rewind_to_an_unknown_id_is_said_not_silent(tmp_path: Path) -> None:
    """Issue 38.6: such a file opened as a thread of 0 model calls with no word. Gemini CLI's writer never
    records a rewind to an id it does not hold, so the thread says what its reader did there."""
    thread = load_thread(write(tmp_path, [*session(), {"$rewindTo": "nope"}]))
    assert thread.messages == [] and thread.extra["rewound"] == [{"to": "nope", "records": 4, "line": 10}]
    assert thread.extra["load_warnings"] == [
        "line 10: $rewindTo names message id 'nope', which no earlier line holds; Gemini CLI's reader then drops "
        "the whole history (4 message records dropped here) and its writer never records such a rewind: the file "
        "was cut or edited"]
    report = inspect_thread(thread)
    assert report["warnings"] == thread.extra["load_warnings"] and report["steps"] == []
    known = load_thread(write(tmp_path, [*session(), {"$rewindTo": "g2"}]))
    assert "load_warnings" not in known.extra and [m.id for m in known.messages][-1] == "g1:b"


class _CountingDict(dict):  # type: ignore[type-arg]
    """A dict that counts the keys it hands out when walked (list(d), `for k in d`)."""

    walked = 0

    def __iter__(self) -> Any:
        for key in super().__iter__():
            _CountingDict.walked += 1
            yield key


def test_a_storm_of_rewinds_costs_what_it_drops(monkeypatch: pytest.MonkeyPatch) -> None:
    """n messages then n/2 rewinds, each to the last message left: the records walked stay linear
    (each rewind listed every record and every held id before)."""
    import engine.formats.gemini_records as records

    class Counted(records.Replay):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.records, self.held = _CountingDict(), _CountingDict()

    monkeypatch.setattr(records, "Replay", Counted)
    walked = []
    for n in (400, 1600):
        _CountingDict.walked = 0
        thread = load_thread(data=sized.gemini(n, rewinds=True), name="session-2026-05-01T10-00-s1.jsonl")
        assert len(thread.messages) == n // 2 + 1
        walked.append(_CountingDict.walked / n)
    assert walked[1] <= walked[0] * 1.1 and walked[1] < 3, walked


def test_set_messages_that_syncs_the_same_history_is_no_compaction(tmp_path: Path) -> None:
    rows = session()
    synced = [r for r in rows[1:] if isinstance(r.get("id"), str)]
    by_id = {r["id"]: r for r in synced}
    rows.append({"$set": {"messages": [*by_id.values(), msg("u2", "user", "next")]}})
    thread = load_thread(write(tmp_path, rows))
    assert thread.compactions == [] and thread.edits == []
    assert [m.id for m in thread.messages] == ["u1", "g1", "g1:a", "g1:b", "g2", "u2"]


def test_set_messages_that_rewrites_the_history_is_a_compaction(tmp_path: Path) -> None:
    snapshot = "<state_snapshot>read a and b</state_snapshot>"
    rows = [*session(),
            {"$set": {"messages": [msg("c1", "user", [{"text": snapshot}]),
                                   msg("c2", "gemini", "Got it. Thanks for the additional context!"),
                                   msg("g2", "gemini", "Both read.", model="gemini-3-flash-preview")]}},
            msg("u2", "user", "next"), msg("g3", "gemini", "ok", tokens=toks(300))]
    thread = load_thread(write(tmp_path, rows))
    assert [m.id for m in thread.messages] == ["u1", "g1", "g1:a", "g1:b", "g2", "u2", "g3"]
    [c] = thread.compactions
    assert (c.index, c.kind, c.source, c.summary, c.message_id, c.pre_tokens) == (
        5, "summary", "gemini_cli:set_messages", snapshot, "c1", 1200)
    assert [m.id for m in c.replacement] == ["c1", "c2", "g2"]
    assert c.replacement[2] is thread.messages[4]  # the kept message is the same message
    counter = get_counter("o200k_base")
    last = step_contexts(thread, counter)[-1]
    assert last["context_tokens"] == counter(c.replacement) + counter.count_message(thread.messages[5])


def test_a_late_changed_tool_result_is_a_recorded_edit(tmp_path: Path) -> None:
    masked = "[Tool output saved to /tmp/out.txt]"
    rows = [*session(),
            msg("g1", "gemini", "", model="gemini-3-flash-preview", toolCalls=[call("a", masked), call("b", "BBB")]),
            msg("u2", "user", "next"), msg("g3", "gemini", "ok", tokens=toks(300))]
    thread = load_thread(write(tmp_path, rows))
    # The model was sent AAA before the masking: the message keeps it, the edit holds what replaced it.
    assert thread.messages[2].content == "AAA"
    [edit] = thread.edits
    assert (edit.index, edit.kind, edit.tool_call_ids, edit.placeholder, edit.source) == (
        5, "clear_tool_results", ["a"], masked, "gemini_cli:tool_output_masking")
    report = inspect_thread(thread, get_counter("o200k_base"))
    assert report["recorded_microcompactions"][0]["cleared"] == 1


def test_legacy_json_pretty_and_on_one_line(tmp_path: Path) -> None:
    doc = {**META, "messages": [msg("u1", "user", "hello"), msg("g1", "gemini", "hi", tokens=toks(50))]}
    pretty = tmp_path / "session-2026-05-01T10-00-s1.json"
    pretty.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    one_line = tmp_path / "one.json"
    one_line.write_text(json.dumps(doc), encoding="utf-8")
    for path in (pretty, one_line):
        assert detect_format(open_source(path)) == "gemini_cli"
        thread = load_thread(path)
        assert [m.id for m in thread.messages] == ["u1", "g1"] and thread.usage["g1"].context_tokens == 50
    assert load_thread(pretty).extra["session_file"] == "legacy json"


def test_cancelled_call_result_is_an_error_and_a_call_without_result_has_none(tmp_path: Path) -> None:
    rows = [META, msg("u1", "user", "go"),
            msg("g1", "gemini", "", toolCalls=[call("a", "stopped", status="cancelled"), call("b", None)])]
    thread = load_thread(write(tmp_path, rows))
    assert [(m.tool_call_id, m.status) for m in thread.messages if isinstance(m, ToolMessage)] == [("a", "error")]
    assert len(thread.tool_calls()) == 2


BAD = [
    ([META, msg("u1", "user", 5)], "line 2: $.content", "expected a string or a list of parts, got number"),
    ([META, msg("g1", "gemini", "", toolCalls=[{"id": "a", "name": 3}])], "line 2: $.toolCalls[0].name",
     "expected a string, got number"),
    ([META, msg("g1", "gemini", "", toolCalls={"id": "a"})], "line 2: $.toolCalls", "expected an array, got object"),
    ([META, msg("g1", "gemini", "", tokens={"input": "9"})], "line 2: $.tokens.input", "expected an integer"),
    ([META, msg("u1", 7, "x")], "line 2: $.type", "expected a message type string, got number"),
    ([META, {"$set": [1]}], "line 2: $.$set", "expected an object, got array"),
    ([META, {"$set": {"messages": [{"type": "user"}]}}], "line 2: $.$set.messages[0].id", "expected a string"),
    ([META, {"$rewindTo": 5}], "line 2: $.$rewindTo", "expected a message id string, got number"),
    ([META, msg("u1", "user", [{"text": 1}])], "line 2: $.content[0].text", "expected a string, got number"),
]


@pytest.mark.parametrize("rows,location,message", BAD)
def test_malformed_sessions_name_the_line_and_path(rows: list[Any], location: str, message: str) -> None:
    for forced in (None, "gemini_cli"):
        with pytest.raises(ThreadLoadError) as info:
            load_thread(data=jsonl(rows), name="bad.jsonl", format=forced)
        err = info.value
        assert (err.format, err.location) == ("gemini_cli", location)
        assert err.message.startswith(message)
        assert str(err).startswith(f"bad.jsonl, format gemini_cli, at {location}: ")


def test_malformed_legacy_json_names_the_json_path() -> None:
    doc = {**META, "messages": [msg("u1", "user", "ok"), msg("g1", "gemini", "", toolCalls=[{"id": 1}])]}
    with pytest.raises(ThreadLoadError) as info:
        load_thread(data=json.dumps(doc, indent=1).encode(), name="bad.json")
    assert (info.value.format, info.value.location) == ("gemini_cli", "$.messages[1].toolCalls[0].id")


def test_a_broken_line_is_an_error_but_an_unfinished_last_line_is_set_aside() -> None:
    good = jsonl(session())
    with pytest.raises(ThreadLoadError) as info:
        load_thread(data=jsonl(session()[:3]) + b"{oops\n" + jsonl(session()[3:]), name="bad.jsonl")
    assert (info.value.format, info.value.location) == ("gemini_cli", "line 4, column 2")
    thread = load_thread(data=good + b'{"id": "g9", "type": "gem', name="live.jsonl")
    assert thread.extra["unfinished_last_line"] == 10 and len(thread.messages) == 5


def test_only_gemini_claims_its_sessions_and_it_claims_no_other_jsonl(tmp_path: Path) -> None:
    mine = open_source(data=jsonl(session()), name="s.jsonl")
    assert [name for name, imp in importers().items() if imp.sniff(mine)] == ["gemini_cli"]
    claude = open_source(data=jsonl([{"type": "user", "sessionId": "s", "uuid": "u",
                                      "message": {"role": "user", "content": "hi"}}]), name="c.jsonl")
    codex = open_source(data=jsonl([{"timestamp": "t", "type": "session_meta", "payload": {"id": "x"}}]), name="r.jsonl")
    chat = open_source(data=json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode(), name="c.json")
    for other in (claude, codex, chat):
        assert not importers()["gemini_cli"].sniff(other)


@pytest.fixture(scope="module")
def real_jsonl_rows() -> list[Any]:
    return [json.loads(line) for line in trace_path(*JSONL).read_text(encoding="utf-8").splitlines() if line.strip()]


@FUZZ
@given(data=st.data())
def test_mutated_jsonl_sessions_only_raise_thread_load_error(real_jsonl_rows: list[Any], data: st.DataObject) -> None:
    rows = data.draw(st.sampled_from([real_jsonl_rows, session()]))
    blob = mutated_lines(data, rows)
    attempt(blob, None)
    attempt(blob, "gemini_cli")


@FUZZ
@given(data=st.data())
def test_mutated_legacy_sessions_only_raise_thread_load_error(data: st.DataObject) -> None:
    doc = json.loads(trace_path(*LEGACY).read_text(encoding="utf-8"))
    blob = mutated_document(data, doc)
    attempt(blob, None, name="mutated-session.json")
    attempt(blob, "gemini_cli", name="mutated-session.json")


def test_human_message_ids_are_the_record_ids(tmp_path: Path) -> None:
    thread = load_thread(write(tmp_path, session()))
    assert [m.id for m in thread.messages if isinstance(m, HumanMessage)] == ["u1"]


@pytest.mark.parametrize(("users", "title"), [
    (["/init", "", "fix the README"], "fix the README"),  # a slash command and an empty turn are passed over
    (["?", "explain the build"], "explain the build"),  # so is a `?` help query
    (["/compress", "/stats"], "/compress"),  # only commands: the first one, as Gemini CLI falls back
])
def test_title_without_a_summary_is_the_first_prompt_gemini_cli_would_show(
        tmp_path: Path, users: list[str], title: str) -> None:
    # Gemini CLI's session browser (sessionUtils.ts extractFirstUserMessage) names such a session so.
    rows = [META, *(msg(f"u{i}", "user", [{"text": text}]) for i, text in enumerate(users)),
            msg("g1", "gemini", "ok", model="gemini-3-flash-preview", tokens=toks(100))]
    assert load_thread(write(tmp_path, rows)).title == title
