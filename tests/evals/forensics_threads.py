"""A hand-made coding session with one recorded compaction whose survival and recovery are known exactly."""

from __future__ import annotations

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from engine.thread.model import RecordedCompaction, Thread

TEST_FILE = "/srv/app/tests/test_upload.py"
SETTINGS = "/srv/app/config/settings.py"
FILE_BODY = "def test_upload():\n    assert upload(timeout=30) == 'ok'  # 900 ms budget\n" * 20
SUMMARY = ("Working on OPS-2210: the upload test in tests/test_upload.py failed with TimeoutError (1500 ms). "
           "Raised the timeout in settings.")


def _call(i: int, name: str, **args: object) -> dict[str, object]:
    return {"name": name, "args": dict(args), "id": f"c{i}", "type": "tool_call"}


def coding_messages() -> list[BaseMessage]:
    """Messages 1-7 come before the cut (index 8); the agent then re-reads, re-runs and edits."""
    return [
        # long enough for the model's minimum cacheable prompt (1,024 tokens for Sonnet 4.5)
        SystemMessage("You are a careful coding agent. " * 300, id="sys"),
        HumanMessage(f"Fix the flaky upload test in {TEST_FILE}; the ticket is OPS-2210.", id="h0"),
        AIMessage("I'll read the failing test first.", id="a0", tool_calls=[_call(0, "Read", file_path=TEST_FILE)]),
        ToolMessage(FILE_BODY, tool_call_id="c0", name="Read", id="t0"),
        AIMessage("", id="a1", tool_calls=[_call(1, "Bash", command="pytest tests/test_upload.py -x")]),
        ToolMessage("FAILED tests/test_upload.py::test_upload - TimeoutError: upload took 1500 ms\n"
                    "1 failed, 41 passed in 3.52s", tool_call_id="c1", name="Bash", id="t1", status="error"),
        AIMessage("The fix is to raise the upload timeout to 2 seconds in the config settings.", id="a2",
                  tool_calls=[_call(2, "Edit", file_path=SETTINGS, old_string="UPLOAD_TIMEOUT = 1",
                                    new_string="UPLOAD_TIMEOUT = 2")]),
        ToolMessage(f"The file {SETTINGS} has been updated successfully.", tool_call_id="c2", name="Edit", id="t2"),
        # --- the source compacted here (message 8 is the first after its cut) ---
        HumanMessage("Continue.", id="h1"),
        AIMessage("", id="a3", tool_calls=[_call(3, "Read", file_path=TEST_FILE)]),  # re-read: recovery
        ToolMessage(FILE_BODY, tool_call_id="c3", name="Read", id="t3"),
        AIMessage("", id="a4", tool_calls=[_call(4, "Bash", command="pytest tests/test_upload.py -x")]),  # re-run
        ToolMessage("42 passed in 3.10s", tool_call_id="c4", name="Bash", id="t4"),
        AIMessage("", id="a5", tool_calls=[_call(5, "Edit", file_path=TEST_FILE, old_string="30", new_string="60")]),
        ToolMessage(f"The file {TEST_FILE} has been updated successfully.", tool_call_id="c5", name="Edit", id="t5"),
        AIMessage("", id="a6", tool_calls=[_call(6, "Bash", command="pytest tests/test_upload.py -x")]),  # after a write
        ToolMessage("42 passed in 3.05s", tool_call_id="c6", name="Bash", id="t6"),
        AIMessage("Done: the upload test passes.", id="a7"),
    ]


def coding_thread(*, compacted: bool = True) -> Thread:
    thread = Thread("coding-hand", coding_messages(), source_format="test", model="claude-sonnet-4-5-20250929",
                    max_input_tokens=200_000)
    if compacted:
        thread.compactions = [RecordedCompaction(index=8, trigger="auto", summary=SUMMARY, message_id="sum-1")]
    return thread
