"""Lazily rendered texts (engine.thread.lazytext): a Run keeps summarizer prompts and history-file sections
as references to its messages, and every reader sees exactly the text an eager run would keep."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.messages.utils import get_buffer_string

from engine.config.schema import preset
from engine.layers import summary_rules
from engine.run.replay import replay
from engine.summarizers.offline import OfflineSummarizer
from engine.thread.lazytext import LazyText, text_of
from engine.thread.synthetic import synthetic_thread
from engine.workspace.vfs import VirtualFilesystem

SETTINGS = ["summarization.trigger=messages:30", "summarization.keep=messages:6"]


def _report(run) -> str:  # type: ignore[no-untyped-def]
    doc = run.to_report(include_views=True)
    doc["files"] = {e.path: e.content for e in run.files.entries()}
    return json.dumps(doc, ensure_ascii=False, sort_keys=True, default=str)


def test_lazy_text_reads_as_its_string() -> None:
    calls: list[int] = []

    def build(a: str, b: str) -> str:
        calls.append(1)
        return a + b

    lazy = LazyText(build, "ab", "cd")
    assert (str(lazy), len(lazy), "bc" in lazy, bool(lazy)) == ("abcd", 4, True, True)
    assert lazy == "abcd" and lazy != "abc" and lazy == LazyText(build, "abc", "d")
    assert hash(lazy) == hash("abcd")
    assert not LazyText(build, "", "")
    assert text_of(lazy) == "abcd" and type(text_of(lazy)) is str and text_of(3) == 3
    # one render per read above (both sides of a LazyText ==): never cached, so a read does not grow the Run
    assert len(calls) == 12


def test_summary_prompt_renders_the_template_with_the_messages_xml() -> None:
    msgs = [HumanMessage("find <the> bug & fix", id="h"), AIMessage("ok", id="a"),
            ToolMessage("done", tool_call_id="c", id="t")]
    template = "Summarize this:\n{messages}\n\nEnd."
    prompt = summary_rules.summary_prompt(template, msgs)
    assert isinstance(prompt, summary_rules.SummaryPrompt)
    assert str(prompt) == template.format(messages=get_buffer_string(msgs, format="xml")).rstrip()
    assert prompt.frame() == ("Summarize this:\n", "\n\nEnd.")
    # a template whose frame holds a message tag: the frame is read from the rendered prompt
    odd = summary_rules.summary_prompt("<message> is the tag\n{messages}", msgs)
    text = str(odd)
    assert isinstance(odd, summary_rules.SummaryPrompt)
    assert odd.frame() == (text.split("<message", 1)[0], text.rsplit("</message>", 1)[-1])
    assert odd.frame()[0] == ""


def test_the_prompt_frame_is_what_rendering_the_prompt_and_splitting_it_gives() -> None:
    # The frame is read from the template alone (no messages rendered) wherever the slot's
    # surroundings allow it; it must equal the split of the rendered prompt in every case.
    from langchain.agents.middleware.summarization import DEFAULT_SUMMARY_PROMPT

    msgs = [HumanMessage("find <message> & </message> here", id="h"),
            AIMessage([{"type": "text", "text": "a </message> b"}], id="a",
                      tool_calls=[{"name": "read", "args": {"p": "</message>"}, "id": "c"}]),
            ToolMessage("done\n\n", tool_call_id="c", id="t")]
    templates = [DEFAULT_SUMMARY_PROMPT, "Summarize:\n{messages}\n\nEnd.", "<messages>\n{messages}\n</messages>\n\n",
                 "<message> is the tag\n{messages}", "{messages}</message> after\n  ", "head {messages} mid {messages} end",
                 "no slot at all", "{messages}", "x</message>y{messages}z<message w"]
    for template in templates:
        for chosen in (msgs, msgs[:1], msgs[2:]):
            prompt = summary_rules.summary_prompt(template, chosen)
            assert isinstance(prompt, summary_rules.SummaryPrompt)
            text = str(prompt)
            expected = (text.split("<message", 1)[0], text.rsplit("</message>", 1)[-1] if "</message>" in text else "")
            assert prompt.frame() == expected, (template, len(chosen))


def test_only_messages_get_buffer_string_renders_are_deferred() -> None:
    from langchain_core.messages import AIMessageChunk, RemoveMessage

    class Custom(HumanMessage):  # a subclass renders as its base type
        pass

    assert summary_rules.renders_lazily([Custom("x"), AIMessageChunk("y")])
    assert not summary_rules.renders_lazily([HumanMessage("x"), RemoveMessage(id="r")])
    assert not summary_rules.renders_lazily([])
    eager = summary_rules.history_section([], "step 1")
    assert type(eager) is str and eager == "## Summarized at step 1\n\n\n\n"


def test_history_file_with_lazy_sections_reads_as_the_joined_text() -> None:
    fs = VirtualFilesystem()
    msgs = [HumanMessage("a < b", id="h")]
    fs.write("/h.md", "# head\n")
    fs.append("/h.md", summary_rules.history_section(msgs, "2026-01-02T03:04:05Z"))
    fs.append("/h.md", "tail\n")
    expected = f"# head\n## Summarized at 2026-01-02T03:04:05Z\n\n{get_buffer_string(msgs, format='xml')}\n\ntail\n"
    assert fs.read("/h.md") == expected
    assert fs.read("/h.md") == expected  # still rendered, not stale, on a second read


@pytest.mark.parametrize("preset_name", ["deepagents", "stress"])
def test_a_lazy_run_reports_byte_for_byte_what_an_eager_run_does(preset_name: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    thread = synthetic_thread(60, seed=0)
    config = preset(preset_name).with_overrides(SETTINGS)
    lazy_run = replay(thread, config, summarizer="offline")
    prompts = [e.payload["prompt"] for e in lazy_run.events if e.kind == "summarize"]
    assert prompts and all(isinstance(p, summary_rules.SummaryPrompt) for p in prompts)
    lazy = _report(lazy_run)

    # the eager path: every prompt and section rendered when made, as before engine.thread.lazytext
    monkeypatch.setattr(summary_rules, "renders_lazily", lambda messages: False)
    monkeypatch.setattr(OfflineSummarizer, "lazy_prompt", False)
    eager_run = replay(thread, config, summarizer="offline")
    assert all(type(e.payload["prompt"]) is str for e in eager_run.events if e.kind == "summarize")
    assert lazy == _report(eager_run)
    assert [e.to_dict() for e in lazy_run.events] == [e.to_dict() for e in eager_run.events]
    assert all(type(e.to_dict()["prompt"]) is str for e in lazy_run.events if e.kind == "summarize")


def test_the_default_prompt_frame_renders_no_message() -> None:
    from langchain.agents.middleware.summarization import DEFAULT_SUMMARY_PROMPT

    prompt = summary_rules.summary_prompt(DEFAULT_SUMMARY_PROMPT, [HumanMessage("hi", id="h")])
    assert isinstance(prompt, summary_rules.SummaryPrompt)
    expected = prompt.frame()

    def render(*args: object) -> str:
        raise AssertionError("the frame rendered the messages")

    prompt._build = render  # type: ignore[misc]
    assert prompt.frame() == expected
