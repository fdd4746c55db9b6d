"""Lone surrogates in any format: replaced with U+FFFD on read, said in one warning, never a crash.

Issue 38.3: valid JSON holding `"\\ud800"` ended in "internal error: UnicodeEncodeError: 'utf-8' codec
can't encode character '\\ud800' ... surrogates not allowed". Each format is read from a real sample (or
the hand-made documents the fuzz tests use) whose prose strings were given unpaired surrogates, escaped
the way a JSON writer escapes them; the thread must then encode as UTF-8 everywhere (its native JSON),
inspect, and say what was replaced. The same samples untouched carry no such warning.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from engine.base.errors import ThreadLoadError
from engine.base.surrogates import LONE_SURROGATE, may_hold_surrogates
from engine.formats import importers, list_threads, load_thread
from engine.formats.native import dumps
from engine.recorded.inspect import inspect_thread
from engine.thread.model import load_warnings
from tests.conftest import TRACES
from tests.formats.sized import SIZED
from tests.formats.test_cline import META, XML_API, XML_UI, task_folder
from tests.formats.test_fuzz import FUZZ, LONE_SURROGATE_TEXT, SURROGATE_TEXT, SYNTHETIC, _paths, _replace

SAMPLE_THREADS = Path(__file__).resolve().parents[2] / "sample_threads"
LONE = "\ud800"
LOW = "\udfff"


PROSE_KEYS = frozenset({"content", "text", "thinking", "summary", "output", "result", "message"})


def poisoned(value: Any, key: str | None = None) -> Any:
    """Every prose string (a space and 8+ characters, or the text of a message) with an unpaired low
    surrogate before it and an unpaired high one after it; JSON text inside a string is poisoned in turn
    (OpenAI `arguments`, OTel attributes); ids, enums and times are left alone so the file still reads."""
    if isinstance(value, str):
        if value[:1] in ("{", "[") and value[-1:] in ("}", "]"):
            try:
                return json.dumps(poisoned(json.loads(value)))
            except ValueError:
                pass
        if (" " in value and len(value) >= 8) or (key in PROSE_KEYS and value):
            return LOW + value + LONE  # a low surrogate first and a high one last: neither is a pair
        return value
    if isinstance(value, list):
        return [poisoned(v, key) for v in value]
    if isinstance(value, dict):
        return {k: poisoned(v, k) for k, v in value.items()}
    return value


def poison_json(raw: bytes) -> bytes:
    return json.dumps(poisoned(json.loads(raw))).encode()  # ensure_ascii: the surrogates as \\ud800 escapes


def poison_jsonl(raw: bytes) -> bytes:
    lines = [line for line in raw.decode("utf-8").splitlines() if line.strip()]
    return ("\n".join(json.dumps(poisoned(json.loads(line))) for line in lines) + "\n").encode()


def poison_yaml_cassette(raw: bytes) -> bytes:
    """A VCR cassette whose bodies are JSON text (`body: {string: ...}`, how VCR.py writes them) holding the
    escapes. (YAML itself refuses a surrogate escape in a scalar: `test_a_yaml_escape_is_one_line`.)"""
    doc = yaml.safe_load(raw)
    for interaction in doc["interactions"]:
        for side in ("request", "response"):
            part = interaction[side]
            if "parsed_body" in part:
                part["body"] = {"string": json.dumps(poisoned(part.pop("parsed_body")))}
    return yaml.safe_dump(doc).encode()


def poison_zip(raw: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(raw)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info)
            dst.writestr(info.filename, poison_json(data) if info.filename.endswith(".json") else data)
    return out.getvalue()


# format -> (file under ../shared/traces or sample_threads, how to poison it)
REAL = {
    "claude_code": ("claude-code/short.jsonl", poison_jsonl),
    "codex": ("codex/vibecodingtracker-codex.jsonl", poison_jsonl),
    "gemini_cli": ("gemini/vibecodingtracker-session.jsonl", poison_jsonl),
    "openhands": ("openhands/basic.json", poison_json),
    "swe_agent": ("swe-agent/marshmallow-1867.function_calling_replace_from_source.traj", poison_json),
    "tau_bench": ("tau-bench/gpt-4o-airline.json", poison_json),
    "inspect_ai": ("inspect/2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval", poison_zip),
    "otel_genai": ("otel-genai/any-agent_OPENAI_trace.json", poison_json),
    "vcr_cassette": ("anthropic-compaction/test_anthropic_compaction_end_to_end.yaml", poison_yaml_cassette),
    "openai_messages": ("mini-swe-agent/github_issue.traj.json", poison_json),
    "openai_chat": ("nilenso-context-viewer/ask_github_gc.completions.json", poison_json),
    "openai_responses": ("nilenso-context-viewer/storymachine_run_42.responses.json", poison_json),
    "langchain_dumpd": ("deepagents/summarization_seed_messages.json", poison_json),
}


def check(thread: Any, *, poisoned_input: bool) -> None:
    text = dumps(thread)
    assert not LONE_SURROGATE.search(text)
    text.encode("utf-8")  # strict: every text of the thread (messages, ids, usage keys, extra) encodes
    report = inspect_thread(thread)
    json.dumps(report, ensure_ascii=False).encode("utf-8")
    warnings = [w for w in load_warnings(thread) if "surrogate" in w]
    if poisoned_input:
        assert len(warnings) == 1 and warnings[0].startswith("replaced ") and "with U+FFFD; the first in " in warnings[0]
        assert report["warnings"] == load_warnings(thread)
    else:
        assert warnings == []


@pytest.mark.parametrize("fmt", sorted(REAL))
def test_a_real_sample_with_lone_surrogates_loads_clean_and_says_so(fmt: str) -> None:
    rel, poison = REAL[fmt]
    path = TRACES / rel
    if not path.exists():
        pytest.skip(f"shared trace {path} not present")
    raw = path.read_bytes()
    check(load_thread(data=raw, name=path.name), poisoned_input=False)
    bad = poison(raw)
    assert bad != raw and (may_hold_surrogates(bad) or fmt == "inspect_ai")  # a zip's members are deflated
    thread = load_thread(data=bad, name=path.name)
    assert thread.source_format == fmt
    check(thread, poisoned_input=True)
    assert "\ufffd" in dumps(thread)
    for ref in list_threads(data=bad, name=path.name):
        (ref.thread_id + (ref.title or "")).encode("utf-8")


@pytest.mark.parametrize("fmt", sorted(SYNTHETIC))
def test_hand_made_documents_with_lone_surrogates(fmt: str) -> None:
    thread = load_thread(data=poison_json(json.dumps(SYNTHETIC[fmt]).encode()), name="doc.json", format=fmt)
    check(thread, poisoned_input=True)


def test_native_json_with_lone_surrogates() -> None:
    path = SAMPLE_THREADS / "needle.json"
    thread = load_thread(data=poison_json(path.read_bytes()), name=path.name)
    assert thread.source_format == "native"
    check(thread, poisoned_input=True)


def test_a_cline_task_whose_files_hold_lone_surrogates(tmp_path: Path) -> None:
    """Cline reads the task's other files beside the one given: they are repaired too."""
    folder = task_folder(tmp_path, poisoned(XML_API), poisoned(XML_UI), META)
    check(load_thread(folder), poisoned_input=True)


def test_ids_and_the_keys_that_name_them_stay_equal() -> None:
    """A surrogate in a message id, a tool call id and its result's: replaced the same way everywhere."""
    doc = [{"role": "user", "content": "go"},
           {"role": "assistant", "content": None, "tool_calls": [
               {"id": "call\ud800", "type": "function", "function": {"name": "read", "arguments": json.dumps({"path": "/tmp/a\udc00"})}}]},
           {"role": "tool", "tool_call_id": "call\ud800", "content": "done \ud800\udc00 (a pair: one character)"}]
    thread = load_thread(data=json.dumps(doc).encode(), name="chat.json")
    check(thread, poisoned_input=True)
    call = thread.tool_calls()[0]
    assert call["id"] == "call\ufffd" and call["args"] == {"path": "/tmp/a\ufffd"}  # JSON inside JSON too
    assert thread.tool_results()["call\ufffd"].content == "done \U00010000 (a pair: one character)"
    assert load_warnings(thread) == ["replaced 3 unpaired UTF-16 surrogates (\\ud800–\\udfff: not text, no UTF-8 "
                                     "encoding) with U+FFFD; the first in message 1 tool calls"]


# a text each sized transcript holds once, and the same text with an escaped lone surrogate
SIZED_TEXT = {"claude_code": (b'"ls 3"', b'"ls \\ud8003"'), "otel": (b'"out 3"', b'"out \\ud8003"'),
              "codex": (b'"f3"', b'"f\\udc003"'), "gemini": (b'"q2"', b'"q\\udbff2"'),
              "eval": (b'"content":"m"', b'"content":"m\\udc00"')}


@pytest.mark.parametrize("name", sorted(SIZED_TEXT))
def test_sized_shapes_with_a_lone_surrogate(name: str) -> None:
    generate, file_name, fmt = SIZED[name]
    raw, (good, bad) = generate(20), SIZED_TEXT[name]
    if name == "eval":
        out = io.BytesIO()
        with zipfile.ZipFile(io.BytesIO(raw)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
            for info in src.infolist():
                dst.writestr(info.filename, src.read(info).replace(good, bad, 1))
        poisoned_raw = out.getvalue()
    else:
        assert raw.count(good) == 1
        poisoned_raw = raw.replace(good, bad)
    thread = load_thread(data=poisoned_raw, name=file_name, format=fmt)
    check(thread, poisoned_input=True)
    assert load_warnings(thread)[0].startswith("replaced 1 unpaired UTF-16 surrogate (")


def test_a_yaml_escape_is_one_line() -> None:
    """PyYAML refuses `\\uD800` in a double-quoted scalar: the cassette is refused in one line naming the place."""
    path = TRACES / REAL["vcr_cassette"][0]
    if not path.exists():
        pytest.skip(f"shared trace {path} not present")
    doc = yaml.safe_load(path.read_bytes())
    text = yaml.safe_dump(poisoned(doc))
    assert "\\uD800" in text
    with pytest.raises(ThreadLoadError) as info:
        load_thread(data=text.encode(), name=path.name, format="vcr_cassette")
    assert str(info.value).startswith(f"{path.name}, format vcr_cassette, at line ") and "invalid Unicode character" in str(info.value)


def test_an_error_quoting_a_surrogate_prints() -> None:
    """An error naming a value from the file never carries an unprintable character."""
    with pytest.raises(ThreadLoadError) as info:
        load_thread(data=b'{"messages": [{"role": "user", "content": 5}]}', name="bad\ud800.json", format="openai_chat")
    str(info.value).encode("utf-8")


def test_every_importer_is_covered() -> None:
    """Each importer is exercised above, or reads no text a test here can poison (a database)."""
    covered = {*REAL, *SYNTHETIC, "native", "cline", "request_log", "sse_response"}
    assert set(importers()) - covered <= {"langgraph_sqlite", "langgraph_postgres"}


# -- the importers that came later: request logs and LHAR, streamed responses, Cline's ui_messages.json alone,
# -- OpenHands' events.json with its state file beside it (and the other way round) -------------------------
def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")  # ensure_ascii: "\ud800" escapes
    return path


def test_a_request_log_with_lone_surrogates(tmp_path: Path) -> None:
    from tests.formats.test_request_log import profiler_log

    rows = poisoned(profiler_log())
    for row in rows:  # a path argument holding one too, in every logged request that repeats the call
        for message in row["messages"]:
            for call in message.get("tool_calls") or []:
                call["function"]["arguments"] = json.dumps({"path": f"/tmp/{call['id']}\ud800"})
    thread = load_thread(write_jsonl(tmp_path / "profile.jsonl", rows))
    assert thread.source_format == "request_log"
    check(thread, poisoned_input=True)
    assert [tc["args"] for tc in thread.tool_calls()][:2] == [{"path": "/tmp/c0\ufffd"}, {"path": "/tmp/c1\ufffd"}]


def split_escape_sse() -> str:
    """An Anthropic stream whose tool input arrives as partial JSON cut between the escaped backslash and
    the rest of a `\\ud800` escape: no chunk (and no byte of the file) spells a surrogate, the assembled
    input does."""
    from tests.formats.test_request_log import sse_body

    body = sse_body("Let me \ud800 build it.", 12, 30)
    return body.replace(json.dumps('{"cmd": "ma'), json.dumps('{"cmd": "ma\\')).replace(json.dumps('ke"}'), json.dumps('ud800ke"}'))


def test_a_streamed_response_whose_chunks_join_into_a_lone_surrogate(tmp_path: Path) -> None:
    body = split_escape_sse()
    assert not may_hold_surrogates(body.replace("\\ud800 build", "build").encode())  # the tool input's is split
    path = tmp_path / "anthropic-tool.sse.txt"
    path.write_text(body)
    thread = load_thread(path)
    assert thread.source_format == "sse_response"
    check(thread, poisoned_input=True)
    [ai] = thread.messages
    assert ai.text == "Let me \ufffd build it." and [tc["args"] for tc in ai.tool_calls] == [{"cmd": "ma\ufffdke"}]
    # the split escape alone (no other surrogate in the file) is still found
    path.write_text(body.replace("\\ud800 build", "build"))
    thread = load_thread(path)
    check(thread, poisoned_input=True)
    assert [tc["args"] for tc in thread.messages[0].tool_calls] == [{"cmd": "ma\ufffdke"}]


def test_openai_chunks_whose_arguments_join_into_a_lone_surrogate(tmp_path: Path) -> None:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-4o",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    rows = [chunk({"role": "assistant", "content": None, "tool_calls": [
                {"index": 0, "id": "call_1", "type": "function", "function": {"name": "read", "arguments": '{"path": "/a\\'}}]}),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'ud800"}'}}]}, "tool_calls")]
    path = write_jsonl(tmp_path / "openai-tool.chunks.txt", rows)
    assert not may_hold_surrogates(path.read_bytes())
    thread = load_thread(path)
    assert thread.source_format == "sse_response"
    check(thread, poisoned_input=True)
    assert [tc["args"] for tc in thread.messages[0].tool_calls] == [{"path": "/a\ufffd"}]


def test_an_lhar_session_with_lone_surrogates_in_requests_and_streamed_answers(tmp_path: Path) -> None:
    from tests.formats.test_request_log import lhar_rows

    rows = lhar_rows()
    for row in rows[1:]:
        row["raw"]["request_body"]["messages"] = poisoned(row["raw"]["request_body"]["messages"])
        row["raw"]["response_body"] = split_escape_sse().replace("\\ud800 build", "build")
    thread = load_thread(write_jsonl(tmp_path / "claude-t1.lhar", rows))
    assert thread.source_format == "request_log"
    check(thread, poisoned_input=True)
    rows = lhar_rows()  # the split escape in the streamed answers alone
    for row in rows[1:]:
        row["raw"]["response_body"] = split_escape_sse().replace("\\ud800 build", "build")
    path = write_jsonl(tmp_path / "claude-t2.lhar", rows)
    assert not may_hold_surrogates(path.read_bytes())
    check(load_thread(path), poisoned_input=True)


def test_a_cline_task_exported_with_ui_messages_alone(tmp_path: Path) -> None:
    from tests.formats.test_cline import ui_only

    rows = ui_only()
    for row in rows:
        if row.get("say") == "api_req_started":
            info = json.loads(row["text"])
            info["request"] = LOW + info["request"] + LONE
            row["text"] = json.dumps(info)
        elif isinstance(row.get("text"), str) and not row["text"].startswith("{"):
            row["text"] = row["text"] + LONE
    folder = task_folder(tmp_path, XML_API, rows, name="1733000000001")
    (folder / "api_conversation_history.json").unlink()
    for entry in (folder, folder / "ui_messages.json"):
        thread = load_thread(entry)
        assert thread.extra["api_conversation_history"].startswith("rebuilt from ui_messages.json")
        check(thread, poisoned_input=True)


def test_an_openhands_export_whose_other_file_holds_the_surrogate(tmp_path: Path) -> None:
    """OpenHands reads the file beside the one given: the events when the state file is opened, the state
    (model, condenser) when the events are. A surrogate in the other file is repaired too."""
    from tests.formats.test_openhands import BASE_STATE, export, long_run

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    folder = export(tmp_path / "a", poisoned(long_run(3)))
    assert not may_hold_surrogates((folder / "trajectory.json").read_bytes())
    check(load_thread(folder / "trajectory.json"), poisoned_input=True)
    state = json.loads(json.dumps(BASE_STATE))
    state["agent"]["llm"]["model"] = "litellm_proxy/claude\ud800"
    folder = export(tmp_path / "b", long_run(3), base_state=state)
    assert not may_hold_surrogates((folder / "events.json").read_bytes())
    thread = load_thread(folder / "events.json")
    check(thread, poisoned_input=True)
    assert thread.model == "litellm_proxy/claude\ufffd"


@pytest.mark.parametrize("spelling", ["\\u005cud800", "\\\\\\u0075d800", "\\\\u\\u0044800", "\\u005Cu\\u0064800"])
def test_an_escape_spelled_with_other_escapes_in_json_inside_json(spelling: str) -> None:
    """JSON text inside a JSON string (OpenAI `arguments`) is decoded twice: an escaped backslash or letter
    spells `\\ud800` only after the first decode, and the file's bytes hold no `\\ud`."""
    raw = ('[{"role": "user", "content": "go"}, {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", '
           '"type": "function", "function": {"name": "ls", "arguments": "{\\"p\\": \\"' + spelling + '\\"}"}}]}, '
           '{"role": "tool", "tool_call_id": "c1", "content": "ok"}]').encode()
    assert b"\\ud" not in raw.lower()
    thread = load_thread(data=raw, name="chat.json")
    check(thread, poisoned_input=True)
    assert thread.tool_calls()[0]["args"] == {"p": "\ufffd"}


# -- the surrogate fuzz over the later importers: one value anywhere replaced by text with unpaired surrogates --
def later_samples() -> dict[str, tuple[str, str, Any]]:
    """name -> (file name, how it is written: json | jsonl | sse, the document)."""
    from tests.formats.test_openhands import long_run
    from tests.formats.test_request_log import anthropic_chunks, lhar_rows, profiler_log

    return {"request_log": ("profile.jsonl", "jsonl", profiler_log()[:3]), "lhar": ("s.lhar", "jsonl", lhar_rows()),
            "chunks": ("r.chunks.txt", "jsonl", anthropic_chunks()), "sse": ("r.sse.txt", "sse", anthropic_chunks()),
            "openhands": ("events.json", "json", long_run(2))}


def written(how: str, doc: Any) -> bytes:
    if how == "json":
        return json.dumps(doc).encode()
    if how == "jsonl":
        return "".join(json.dumps(row) + "\n" for row in doc).encode()
    def event(row: Any) -> str:  # the event line names the chunk's type, escaped as JSON would
        return json.dumps(row.get("type") if isinstance(row, dict) else None).strip('"')

    return "".join(f"event: {event(row)}\ndata: {json.dumps(row)}\n\n" for row in doc).encode()


LATER = later_samples()
LATER_PATHS = {name: [p for p in _paths(doc) if p] for name, (_file, _how, doc) in LATER.items()}


@FUZZ
@given(data=st.data())
def test_later_formats_with_a_lone_surrogate_anywhere_load_encodable(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted(LATER)))
    file_name, how, doc = LATER[name]
    path = data.draw(st.sampled_from(LATER_PATHS[name]))
    value = data.draw(LONE_SURROGATE_TEXT)
    blob = written(how, _replace(doc, path, value))
    for format in (None, {"chunks": "sse_response", "sse": "sse_response", "openhands": "openhands"}.get(name, "request_log")):
        try:
            thread = load_thread(data=blob, name=file_name, format=format)
        except ThreadLoadError as exc:
            assert file_name in str(exc) and "\n" not in str(exc)
            str(exc).encode("utf-8")
            continue
        dumps(thread).encode("utf-8")
        json.dumps(inspect_thread(thread), ensure_ascii=False).encode("utf-8")


@FUZZ
@given(data=st.data())
def test_streamed_partial_json_split_anywhere_joins_into_encodable_text(data: st.DataObject) -> None:
    """A tool input streamed as partial JSON holding an escaped lone surrogate, cut into chunks at any places
    (also between a backslash and the `u` it escapes): the assembled input is repaired."""
    text = json.dumps({"cmd": "make \ud800 all" + data.draw(SURROGATE_TEXT)})
    cuts = sorted(set(data.draw(st.lists(st.integers(min_value=1, max_value=len(text) - 1), max_size=6))))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    rows = [row for row in json.loads(json.dumps(LATER["chunks"][2])) if row["type"] != "content_block_delta"]
    start = next(i for i, row in enumerate(rows) if row["type"] == "content_block_start")
    rows[start + 1:start + 1] = [{"type": "content_block_start", "index": 1, "content_block": {
        "type": "tool_use", "id": "tu1", "name": "bash", "input": {}}}] + [
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": p}}
        for p in pieces] + [{"type": "content_block_stop", "index": 1}]
    thread = load_thread(data=written("sse", rows), name="r.sse.txt")
    check(thread, poisoned_input=True)
    [call] = thread.messages[-1].tool_calls
    assert call["args"]["cmd"].startswith("make \ufffd all")
