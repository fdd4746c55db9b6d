"""Cline task folders. No public task folder is redistributable, so the fixtures are built here from
Cline's own types and flow (cline/cline: `ClineStorageMessage`, `ClineMessage`, `TaskMetadata`,
`Task.recursivelyMakeClineRequests`, `ContextManager.getNextTruncationRange`, `SummarizeTaskHandler`)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from engine.base.errors import ThreadLoadError
from engine.formats import detect_format, importers, load_thread, open_source
from engine.formats.cline_context import TRUNCATION_NOTICE
from engine.formats.cline_xml import parse_tool_calls
from engine.recorded.inspect import inspect_thread
from engine.thread.kinds import message_kind
from engine.thread.model import RecordedUsage
from engine.tokens.counters import counter_for_thread

ENV = {"type": "text", "text": "<environment_details>\n# VSCode Visible Files\napp.py\n</environment_details>"}


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def request(ts: int, history_index: int, usage: dict[str, int] | None, deleted: list[int] | None = None) -> dict[str, Any]:
    info: dict[str, Any] = {"request": "…"}
    info.update(usage or {})
    message: dict[str, Any] = {"ts": ts, "type": "say", "say": "api_req_started", "text": json.dumps(info),
                               "conversationHistoryIndex": history_index}
    if deleted is not None:
        message["conversationHistoryDeletedRange"] = deleted
    return message


def said(ts: int, kind: str, body: str, history_index: int, deleted: list[int] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"ts": ts, "type": "say", "say": kind, "text": body, "conversationHistoryIndex": history_index}
    if deleted is not None:
        message["conversationHistoryDeletedRange"] = deleted
    return message


def usage(tokens_in: int, out: int, writes: int, reads: int) -> dict[str, int]:
    return {"tokensIn": tokens_in, "tokensOut": out, "cacheWrites": writes, "cacheReads": reads}


# An XML-era task: five requests; before the fourth, ContextManager truncates "half" of a 7-message history:
# getNextTruncationRange -> [2, 3] (floor((7 - 2) / 4) * 2 = 2 messages from index 2, ending on an assistant).
XML_API: list[dict[str, Any]] = [
    {"role": "user", "content": [text("<task>\nFix the bug in app.py\n</task>"), ENV]},
    {"role": "assistant", "content": [text("<thinking>Read it first.</thinking>\n\n<read_file>\n<path>app.py</path>\n</read_file>")]},
    {"role": "user", "content": [text("[read_file for 'app.py'] Result:"), text("print('hi'"), ENV]},
    {"role": "assistant", "content": [text("<execute_command>\n<command>python app.py</command>\n"
                                           "<requires_approval>false</requires_approval>\n</execute_command>")]},
    {"role": "user", "content": [text("[execute_command for 'python app.py'] Result:"), text("SyntaxError: '(' was never closed"), ENV]},
    {"role": "assistant", "content": [text("<replace_in_file>\n<path>app.py</path>\n<diff>\n<<<<<<< SEARCH\nprint('hi'\n=======\n"
                                           "print('hi')\n>>>>>>> REPLACE\n</diff>\n</replace_in_file>")]},
    {"role": "user", "content": [text("[replace_in_file for 'app.py'] Result:"),
                                 text("The content was successfully saved to app.py.\n\n<final_file_content path=\"app.py\">\nprint('hi')\n"
                                      "</final_file_content>"), ENV]},
    {"role": "assistant", "content": [text("<execute_command>\n<command>python app.py</command>\n</execute_command>")]},
    {"role": "user", "content": [text("[execute_command for 'python app.py'] Result:"), text("hi"), ENV]},
    {"role": "assistant", "content": [text("Fixed.\n<attempt_completion>\n<result>\nThe missing parenthesis is fixed.\n</result>\n"
                                           "</attempt_completion>")]},
]
XML_UI: list[dict[str, Any]] = [
    said(1000, "task", "Fix the bug in app.py", -1),
    request(2000, -1, usage(12, 40, 9000, 0)), said(2100, "text", "Read it first.", 0),
    request(3000, 1, usage(30, 50, 300, 9000)), said(3100, "tool", "{}", 2),
    request(4000, 3, usage(25, 90, 400, 9300)), said(4100, "tool", "{}", 4),
    request(5000, 5, usage(20, 30, 200, 9100), None), said(5100, "tool", "{}", 6, [2, 3]),
    request(6000, 7, usage(15, 60, 100, 9200), [2, 3]), said(6100, "completion_result", "done", 8, [2, 3]),
]
META = {"files_in_context": [{"path": "app.py", "record_state": "active", "record_source": "read_tool",
                              "cline_read_date": 2500, "cline_edit_date": 4500}],
        "model_usage": [{"ts": 1500, "model_id": "claude-sonnet-4-5-20250929", "model_provider_id": "anthropic", "mode": "act"}]}


def task_folder(tmp_path: Path, api: Any, ui: Any = None, meta: Any = None, context: Any = None, name: str = "1733000000000") -> Path:
    folder = tmp_path / "tasks" / name
    folder.mkdir(parents=True)
    (folder / "api_conversation_history.json").write_text(json.dumps(api))
    for file, doc in (("ui_messages.json", ui), ("task_metadata.json", meta), ("context_history.json", context)):
        if doc is not None:
            (folder / file).write_text(json.dumps(doc))
    return folder


def test_xml_tool_calls_become_tool_calls_and_results() -> None:
    rest, calls = parse_tool_calls("<thinking>x</thinking>\n<write_to_file>\n<path>a.html</path>\n<content>\n<p>a</p>\n"
                                   "<content>inner</content>\n</content>\n</write_to_file>")
    assert rest == "<thinking>x</thinking>"
    assert calls == [("write_to_file", {"path": "a.html", "content": "<p>a</p>\n<content>inner</content>"})]
    assert parse_tool_calls("<read_file>\n<path>cut off") == ("<read_file>\n<path>cut off", [])


def test_xml_task_folder(tmp_path: Path) -> None:
    folder = task_folder(tmp_path, XML_API, XML_UI, META)
    thread = load_thread(folder)
    assert (thread.source_format, thread.thread_id, thread.title) == ("cline", "1733000000000", "Fix the bug in app.py")
    assert [m.type for m in thread.messages] == ["human", "ai", "tool", "human", "ai", "tool", "human", "ai", "tool", "human",
                                                 "ai", "tool", "human", "ai"]
    assert [tc["name"] for tc in thread.tool_calls()] == ["read_file", "execute_command", "replace_in_file", "execute_command",
                                                          "attempt_completion"]
    first = thread.messages[1]
    assert first.content == [text("<thinking>Read it first.</thinking>")]
    assert first.tool_calls == [{"name": "read_file", "args": {"path": "app.py"}, "id": "cline-xml-1-0", "type": "tool_call"}]
    result = thread.messages[2]
    assert isinstance(result, ToolMessage) and result.tool_call_id == "cline-xml-1-0" and result.name == "read_file"
    assert result.content == [text("[read_file for 'app.py'] Result:"), text("print('hi'")]
    assert thread.messages[3].content == [ENV]
    assert thread.messages[7].tool_calls[0]["args"]["diff"].startswith("<<<<<<< SEARCH\nprint('hi'")
    # conversationHistoryIndex + 2 is the reply each request produced.
    ai = [m for m in thread.messages if isinstance(m, AIMessage)]
    assert [thread.usage[m.id].context_tokens for m in ai] == [9012, 9330, 9725, 9320, 9315]
    assert thread.usage[ai[0].id] == RecordedUsage(input_tokens=12, output_tokens=40, cache_creation_input_tokens=9000,
                                                  cache_read_input_tokens=0, timestamp="1970-01-01T00:00:02Z",
                                                  model="claude-sonnet-4-5-20250929")
    assert thread.model == "claude-sonnet-4-5-20250929" and thread.max_input_tokens == 200_000
    assert thread.extra["files_in_context"] == 1 and thread.extra["requests"] == 5


def test_deleted_range_is_a_trim_with_the_first_pair_and_the_notice(tmp_path: Path) -> None:
    thread = load_thread(task_folder(tmp_path, XML_API, XML_UI, META))
    [compaction] = thread.compactions
    # api message 6 (the fourth request's new user message) starts at thread index 8.
    assert (compaction.index, compaction.kind, compaction.source, compaction.trigger) == (8, "trim", "cline:deleted_range", "auto")
    assert (compaction.pre_tokens, compaction.post_tokens) == (9725, 9320)
    replacement = compaction.replacement
    assert replacement is not None
    # kept: the first pair (api 0, 1) and api 4, 5 (after the range [2, 3]); originals keep their ids
    assert [m.id for m in replacement] == [thread.messages[i].id for i in (0, 1, 5, 6, 7)]
    assert replacement[0] is thread.messages[0]
    notice = replacement[1]
    assert isinstance(notice, AIMessage) and notice.content == [text(TRUNCATION_NOTICE)] and notice.tool_calls == []
    assert message_kind(notice) == "truncated"
    assert thread.extra["truncation_notice"].startswith("assumed")
    steps = inspect_thread(thread)["steps"]
    # The fourth step is counted on what Cline sent: the replacement, then api 6 (thread 8, 9).
    counter = counter_for_thread(thread)
    assert steps[3]["context_tokens"] == counter([*replacement, *thread.messages[8:10]])
    assert steps[2]["context_tokens"] == counter(thread.messages[:7])
    assert [s["recorded_input_tokens"] for s in steps] == [9012, 9330, 9725, 9320, 9315]


def test_openai_compatible_tokens_in_includes_cache_reads(tmp_path: Path) -> None:
    meta = {"files_in_context": [], "model_usage": [{"ts": 1, "model_id": "gpt-4.1", "model_provider_id": "openai", "mode": "act"}]}
    thread = load_thread(task_folder(tmp_path, XML_API, XML_UI, meta))
    second = [m for m in thread.messages if isinstance(m, AIMessage)][1]
    assert thread.usage[second.id].input_tokens == 0 and thread.usage[second.id].cache_read_input_tokens == 9000
    assert thread.usage[second.id].context_tokens == 9300


# A native-tool-call task with Auto Compact: the third request asks for a summary, the model calls
# summarize_task, the handler deletes [2, 3] ("none": up to the summarize request, ending on an assistant),
# the fourth request widens it by 2 to [2, 5] and continues from the tool result.
SUMMARY = "1. Task: fix a.py\n2. Done so far: read a.py, ran it\n3. Next: edit line 3"
NATIVE_API: list[dict[str, Any]] = [
    {"role": "user", "content": [text("<task>\nFix a.py\n</task>"), ENV]},
    {"role": "assistant", "content": [text("I'll read it."), {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.py"}}],
     "modelInfo": {"modelId": "claude-sonnet-4-5-20250929", "providerId": "anthropic", "mode": "act"}, "id": "msg_1"},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x = (\n"}, ENV]},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_2", "name": "execute_command", "input": {"command": "python a.py"}}],
     "id": "msg_2"},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_2", "content": "SyntaxError"},
                                 text("<explicit_instructions type=\"summarize_task\">Summarize the conversation.</explicit_instructions>")]},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_3", "name": "summarize_task", "input": {"context": SUMMARY}}],
     "id": "msg_3"},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_3",
                                  "content": f"This session is being continued from a previous conversation.\n\n{SUMMARY}"}]},
    {"role": "assistant", "content": [text("Continuing."), {"type": "tool_use", "id": "toolu_4", "name": "attempt_completion",
                                                            "input": {"result": "done"}}], "id": "msg_4"},
]
NATIVE_UI: list[dict[str, Any]] = [
    said(1000, "task", "Fix a.py", -1),
    request(2000, -1, usage(10, 20, 8000, 0)), said(2100, "tool", "{}", 0),
    request(3000, 1, usage(20, 20, 100, 8000)), said(3100, "command", "python a.py", 2),
    request(4000, 3, usage(30, 200, 100, 8100)), said(4100, "tool", "{\"tool\": \"summarizeTask\"}", 4),
    said(4200, "tool", "{}", 4, [2, 3]),
    request(5000, 5, usage(40, 10, 900, 7000), [2, 3]), said(5100, "completion_result", "done", 6, [2, 5]),
]
CONTEXT = [[0, [0, [[0, [[4150, "text", ["[Continue assisting the user!]"], []]]]]]],
           [1, [0, [[0, [[4150, "text", ["[NOTE] Some previous conversation history has been removed."], []]]]]]]]


def test_auto_compact_is_a_summary_continued_from_the_tool_result(tmp_path: Path) -> None:
    thread = load_thread(task_folder(tmp_path, NATIVE_API, NATIVE_UI, META, CONTEXT) / "api_conversation_history.json")
    assert [m.type for m in thread.messages] == ["human", "ai", "tool", "human", "ai", "tool", "human", "ai", "tool", "ai"]
    assert [m.id for m in thread.messages if isinstance(m, AIMessage)] == ["msg_1", "msg_2", "msg_3", "msg_4"]
    [compaction] = thread.compactions
    assert (compaction.kind, compaction.source, compaction.summary) == ("summary", "cline:summarize_task", SUMMARY)
    # From the fourth request on: the first pair (altered by context_history.json) + the summarize_task result.
    assert compaction.index == 8 and compaction.message_id == thread.messages[8].id
    assert isinstance(thread.messages[8], ToolMessage) and thread.messages[8].tool_call_id == "toolu_3"
    first_user, first_ai = compaction.replacement or []
    assert first_user.id == thread.messages[0].id and first_user.content[0] == text("[Continue assisting the user!]")
    assert first_ai.id == "msg_1" and first_ai.content[0] == text("[NOTE] Some previous conversation history has been removed.")
    assert first_ai.tool_calls == thread.messages[1].tool_calls  # a tool_use block stays (only text blocks are updated)
    assert (compaction.pre_tokens, compaction.post_tokens) == (8230, 7940)
    assert "truncation_notice" not in thread.extra and "context_history_updates_not_applied" not in thread.extra
    assert thread.usage["msg_4"].context_tokens == 7940


@pytest.mark.parametrize("entry", ["folder", "api_conversation_history.json", "ui_messages.json", "task_metadata.json"])
def test_a_task_opens_from_its_folder_or_any_of_its_files(tmp_path: Path, entry: str) -> None:
    folder = task_folder(tmp_path, XML_API, XML_UI, META)
    path = folder if entry == "folder" else folder / entry
    thread = load_thread(path)
    assert thread.source_format == "cline" and len(thread.messages) == 14 and len(thread.usage) == 5


def test_sniff_claims_only_cline_files(tmp_path: Path) -> None:
    folder = task_folder(tmp_path, XML_API, XML_UI, META)
    for name in ("api_conversation_history.json", "ui_messages.json"):
        source = open_source(folder / name)
        assert [n for n, imp in importers().items() if imp.sniff(source)][:1] == ["cline"]
        assert detect_format(source) == "cline"
    # The same messages under another name are plain Anthropic messages.
    other = tmp_path / "messages.json"
    other.write_text(json.dumps(XML_API[:2] + [{"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]}]))
    assert detect_format(open_source(other)) == "anthropic"


def test_api_history_alone_loads_without_usage(tmp_path: Path) -> None:
    thread = load_thread(task_folder(tmp_path, XML_API))
    assert thread.usage == {} and thread.compactions == [] and thread.extra["ui_messages"].startswith("not found")


# The same task exported with ui_messages.json alone: each api_req_started carries its request as Cline
# displays it (the user message's blocks joined by a blank line), the answers are the rows after it.
UI_ONLY: list[dict[str, Any]] = [
    said(1000, "task", "Fix the bug in app.py", -1),
    request(2000, -1, usage(12, 40, 9000, 0)), said(2100, "text", "Read it first.", 0),
    said(2200, "tool", json.dumps({"tool": "readFile", "path": "app.py", "content": "/repo/app.py"}), 0),
    request(3000, 1, usage(30, 50, 300, 9000)),
    {"ts": 3100, "type": "ask", "ask": "command", "text": "python app.py", "conversationHistoryIndex": 2},
    request(4000, 3, usage(25, 90, 400, 9300)),
    said(4100, "tool", json.dumps({"tool": "editedExistingFile", "path": "app.py",
                                   "diff": "<<<<<<< SEARCH\nprint('hi'\n=======\nprint('hi')\n>>>>>>> REPLACE"}), 4),
    request(5000, 5, usage(20, 30, 200, 9100), None),
    {"ts": 5100, "type": "say", "say": "command", "text": "python app.py", "conversationHistoryIndex": 6,
     "conversationHistoryDeletedRange": [2, 3]},
    request(6000, 7, usage(15, 60, 100, 9200), [2, 3]), said(6050, "text", "Fixed.", 8, [2, 3]),
    said(6100, "completion_result", "The missing parenthesis is fixed.", 8, [2, 3]),
]


def ui_only() -> list[dict[str, Any]]:
    rows = json.loads(json.dumps(UI_ONLY))
    for row in rows:
        if row.get("say") == "api_req_started":
            info = json.loads(row["text"])
            info["request"] = "\n\n".join(b["text"] for b in XML_API[row["conversationHistoryIndex"] + 1]["content"])
            row["text"] = json.dumps(info)
    return rows


def test_a_task_with_ui_messages_alone_opens_as_its_requests(tmp_path: Path) -> None:
    # before: "a Cline task needs its api_conversation_history.json"
    full = load_thread(task_folder(tmp_path, XML_API, XML_UI, META))
    folder = task_folder(tmp_path, XML_API, ui_only(), name="1733000000001")
    (folder / "api_conversation_history.json").unlink()
    for entry in (folder, folder / "ui_messages.json"):
        assert detect_format(open_source(entry)) == "cline"
    thread = load_thread(folder)
    assert thread.extra["api_conversation_history"].startswith("rebuilt from ui_messages.json")
    assert [type(m).__name__ for m in thread.messages] == [type(m).__name__ for m in full.messages]
    calls = [(tc["name"], dict(tc["args"])) for m in thread.messages if isinstance(m, AIMessage) for tc in m.tool_calls]
    assert [name for name, _ in calls] == ["read_file", "execute_command", "replace_in_file", "execute_command",
                                           "attempt_completion"]
    assert calls[0][1] == {"path": "app.py"}
    results = [(m.tool_call_id, m.name) for m in thread.messages if isinstance(m, ToolMessage)]
    assert results == [(m.tool_call_id, m.name) for m in full.messages if isinstance(m, ToolMessage)]
    assert [u.context_tokens for u in thread.usage.values()] == [u.context_tokens for u in full.usage.values()]
    assert len(thread.usage) == 5
    assert [(c.index, c.kind, c.source) for c in thread.compactions] == [(c.index, c.kind, c.source) for c in full.compactions]
    assert thread.title == "Fix the bug in app.py"


def test_missing_history_and_broken_files_are_one_line(tmp_path: Path) -> None:
    folder = task_folder(tmp_path, XML_API, [{k: v for k, v in r.items() if k != "text"} if r.get("say") == "api_req_started"
                                             else r for r in XML_UI])
    (folder / "api_conversation_history.json").unlink()
    with pytest.raises(ThreadLoadError) as err:
        load_thread(folder / "ui_messages.json")
    assert "api_conversation_history.json" in err.value.one_line() and "cline" in err.value.one_line()
    folder = task_folder(tmp_path, XML_API, name="t2")
    (folder / "ui_messages.json").write_text("[{\"ts\": 1,")
    with pytest.raises(ThreadLoadError) as err:
        load_thread(folder)
    assert "ui_messages.json" in err.value.one_line()
    folder = task_folder(tmp_path, [{"role": "user", "content": 7}], name="t3")
    with pytest.raises(ThreadLoadError) as err:
        load_thread(folder)
    assert err.value.location == "$[0].content" and "api_conversation_history.json" in err.value.one_line()


ODD = st.sampled_from([None, 0, -1, 2.5, True, "", "x", [], {}, [1, 2], [5, 1], {"type": "text"}])


def _mutate(doc: Any, draw_path: list[int | str], value: Any, drop: bool) -> None:
    parent = doc
    for key in draw_path[:-1]:
        parent = parent[key]
    if drop and isinstance(parent, dict):
        parent.pop(draw_path[-1], None)
    elif drop and isinstance(parent, list):
        parent.pop(int(draw_path[-1]))
    else:
        # a copy: a drawn value is never changed by a later mutation (hypothesis may draw one object twice,
        # which then held itself and could not be written out)
        parent[draw_path[-1]] = copy.deepcopy(value)


def _paths(value: Any, at: list[Any], out: list[list[Any]]) -> list[list[Any]]:
    if at:
        out.append(at)
    if isinstance(value, dict):
        for key, inner in value.items():
            _paths(inner, [*at, key], out)
    elif isinstance(value, list):
        for k, inner in enumerate(value):
            _paths(inner, [*at, k], out)
    return out


DOCS = {"api": NATIVE_API, "ui": NATIVE_UI, "context": CONTEXT}
PATHS = [(name, path) for name, doc in DOCS.items() for path in _paths(doc, [], [])]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(PATHS), ODD, st.booleans()), min_size=1, max_size=4))
def test_mutated_task_files_load_or_raise_thread_load_error(tmp_path: Path, mutations: list[Any]) -> None:
    docs = copy.deepcopy(DOCS)
    for (name, path), value, drop in mutations:
        try:
            _mutate(docs[name], path, value, drop)
        except (KeyError, IndexError, TypeError, ValueError):
            continue
    folder = tmp_path / f"case-{abs(hash(json.dumps(mutations, default=str))) % 10**9}"
    if folder.exists():
        return
    folder.mkdir()
    (folder / "api_conversation_history.json").write_text(json.dumps(docs["api"]))
    (folder / "ui_messages.json").write_text(json.dumps(docs["ui"]))
    (folder / "context_history.json").write_text(json.dumps(docs["context"]))
    try:
        thread = load_thread(folder)
    except ThreadLoadError as exc:
        assert "api_conversation_history.json" in exc.one_line() or "ui_messages.json" in exc.one_line()
        return
    inspect_thread(thread)
    assert all(isinstance(m, (HumanMessage, AIMessage, ToolMessage)) for m in thread.messages)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_ui_only_exports_load_or_are_one_error_line(tmp_path_factory: pytest.TempPathFactory,
                                                             data: st.DataObject) -> None:
    from tests.formats.mutations import WRONG_VALUES, mutate, paths

    rows = ui_only()
    path = data.draw(st.sampled_from(paths(rows)))
    changed = mutate(rows, path, data.draw(WRONG_VALUES), data.draw(st.booleans()))
    folder = tmp_path_factory.mktemp("ui")
    (folder / "ui_messages.json").write_text(json.dumps(changed))
    try:
        load_thread(folder / "ui_messages.json")
    except ThreadLoadError as exc:
        assert "ui_messages.json" in str(exc) and "\n" not in str(exc), str(exc)
