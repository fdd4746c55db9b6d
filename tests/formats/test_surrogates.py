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

from engine.base.errors import ThreadLoadError
from engine.base.surrogates import LONE_SURROGATE, may_hold_surrogates
from engine.formats import importers, list_threads, load_thread
from engine.formats.native import dumps
from engine.recorded.inspect import inspect_thread
from engine.thread.model import load_warnings
from tests.conftest import TRACES
from tests.formats.sized import SIZED
from tests.formats.test_cline import META, XML_API, XML_UI, task_folder
from tests.formats.test_fuzz import SYNTHETIC

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
    covered = {*REAL, *SYNTHETIC, "native", "cline"}
    assert set(importers()) - covered <= {"langgraph_sqlite", "langgraph_postgres"}
