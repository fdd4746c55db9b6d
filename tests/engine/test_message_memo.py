"""A reading memoized per message object: once per object, again after the content is reassigned,
forgotten with the message; and the offline summarizer and the offload stubs that use it give the
same texts warm as cold."""

from __future__ import annotations

import gc

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from engine.layers.offload import offload_to_stub
from engine.summarizers.offline import OfflineSummarizer
from engine.thread.message_memo import MessageMemo
from engine.workspace.vfs import VirtualFilesystem


def test_a_reading_is_built_once_per_message_object_and_again_when_its_content_changes() -> None:
    memo, built = MessageMemo(), []

    def length(m):  # type: ignore[no-untyped-def]
        built.append(m.id)
        return len(str(m.content))

    a, b = HumanMessage("four", id="a"), HumanMessage("four", id="b")
    assert [memo.get(a, "n", length), memo.get(a, "n", length), memo.get(b, "n", length)] == [4, 4, 4]
    assert built == ["a", "b"]  # equal messages are still two objects
    a.content = "eleven char"
    assert memo.get(a, "n", length) == 11 and built == ["a", "b", "a"]
    del a, b
    gc.collect()
    assert len(memo) == 0  # the memo never keeps a message alive


def test_the_offline_summary_is_the_same_text_on_a_second_read_of_the_same_messages() -> None:
    messages = [
        HumanMessage("Fix the parser.", id="h1"),
        AIMessage("Let me read it.", id="a1", tool_calls=[{"name": "read_file", "args": {"file_path": "p.py"}, "id": "c1"}]),
        ToolMessage("Error: no such file", tool_call_id="c1", id="t1"),
        AIMessage("The root cause is a missing file. I will create it next.", id="a2"),
        HumanMessage("<system-reminder>hook failed: ERROR in lint</system-reminder>", id="h2"),
    ]
    first = OfflineSummarizer().summarize(messages)
    assert OfflineSummarizer().summarize(messages) == first
    assert "- Error from read_file: Error: no such file" in first
    assert "- The root cause is a missing file." in first
    assert "- Reported:" in first and "- [ ] I will create it next." in first


def test_an_offloaded_result_gets_the_same_stub_object_and_its_file_in_every_filesystem() -> None:
    result = ToolMessage("x" * 100, tool_call_id="call-1", id="t1", name="bash")
    one, two = VirtualFilesystem(), VirtualFilesystem()
    stub_one, path_one = offload_to_stub(one, result, step=3)
    stub_two, path_two = offload_to_stub(two, result, step=5)
    assert stub_one is stub_two and path_one == path_two
    assert one.read(path_one) == two.read(path_two) == "x" * 100
    assert (one.entry(path_one).step, two.entry(path_two).step) == (3, 5)
