"""L0 filesystem: Deep Agents' offload (stub text, preview, paths) and view-only argument truncation."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from engine.config.schema import EngineConfig, preset
from engine.config.sections import TruncateArgsConfig
from engine.config.sizes import ContextSize
from engine.layers import LayerContext, build_layers
from engine.layers.filesystem import FilesystemLayer, keep_cutoff, trigger_met, truncate_tool_call
from engine.layers.offload import (
    content_preview,
    offload_path,
    offload_to_stub,
    sanitize_tool_call_id,
    stub_text,
)
from engine.run.replay import replay
from engine.thread.events import recording
from engine.thread.kinds import message_kind
from engine.thread.model import Thread
from engine.tokens.counters import get_counter
from engine.workspace.vfs import VirtualFilesystem

APPROX = get_counter("approximate")


class FakeModel(GenericFakeChatModel):
    def bind_tools(self, tools: Any, **kwargs: Any) -> FakeModel:
        return self


def numbered(n: int, prefix: str = "line") -> str:
    return "\n".join(f"{prefix} {i}" for i in range(1, n + 1))


def call(name: str, call_id: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def run_tool(layer: FilesystemLayer, message: ToolMessage, name: str = "execute") -> Any:
    request = ToolCallRequest(tool_call=call(name, message.tool_call_id), tool=None, state={}, runtime=None)  # type: ignore[arg-type]
    return layer.wrap_tool_call(request, lambda _r: message)


# -- ids and paths ------------------------------------------------------------------------------
def test_sanitize_replaces_separators_and_dots() -> None:
    assert sanitize_tool_call_id("call_1.2/3\\4") == "call_1_2_3_4"
    assert sanitize_tool_call_id("toolu_01ABC") == "toolu_01ABC"
    assert sanitize_tool_call_id("") == "unknown"


@pytest.mark.parametrize("hostile", ["../../etc/passwd", "..", "/", "a/../../b", "..\\..\\x", "x\x00y", ".hidden"])
def test_hostile_ids_stay_one_file_under_large_tool_results(hostile: str) -> None:
    vfs = VirtualFilesystem()
    stub, path = offload_to_stub(vfs, ToolMessage("payload", tool_call_id=hostile, id="t"))
    assert path.startswith("/large_tool_results/")
    assert "/" not in path[len("/large_tool_results/"):]
    assert vfs.paths() == [path]
    assert vfs.read(path) == "payload"
    assert offload_path("../../etc/passwd") == "/large_tool_results/______etc_passwd"


def test_ids_over_128_utf8_bytes_become_a_sha256_name() -> None:
    assert sanitize_tool_call_id("a" * 128) == "a" * 128
    long_id = "a" * 129
    assert sanitize_tool_call_id(long_id) == "call-" + hashlib.sha256(long_id.encode()).hexdigest()
    # 64 two-byte characters are 128 bytes: kept; one more goes over the bound
    assert sanitize_tool_call_id("é" * 64) == "é" * 64
    assert sanitize_tool_call_id("é" * 65) == "call-" + hashlib.sha256(("é" * 65).encode()).hexdigest()


# -- preview and stub text ------------------------------------------------------------------------
def test_preview_of_short_result_shows_every_line() -> None:
    p = content_preview(numbered(10))
    assert p.text == "\n".join(f"{i:>2}  line {i}" for i in range(1, 11))
    assert (p.lines_omitted, p.lines_clipped) == (False, False)


def test_preview_of_long_result_shows_head_and_tail_with_real_line_numbers() -> None:
    p = content_preview(numbered(1550))
    assert p.text == (
        "1  line 1\n2  line 2\n3  line 3\n4  line 4\n5  line 5\n"
        "... [1540 lines truncated] ...\n"
        "1546  line 1546\n1547  line 1547\n1548  line 1548\n1549  line 1549\n1550  line 1550"
    )
    assert (p.lines_omitted, p.lines_clipped) == (True, False)


def test_exact_stub_text_with_head_and_tail() -> None:
    text = stub_text("call_abc", "/large_tool_results/call_abc", numbered(12))
    assert text == (
        "Tool result too large, the result of this tool call call_abc was saved in the filesystem at this path: "
        "/large_tool_results/call_abc\n\n"
        "You can read the result from the filesystem by using the read_file tool, but make sure to only read part "
        "of the result at a time.\n\n"
        "You can do this by specifying an offset and limit in the read_file tool call. For example, to read the "
        "first 100 lines, you can use the read_file tool with offset=0 and limit=100.\n\n"
        "Here is a preview showing the head and tail of the result (lines of the form `... [N lines truncated] ...` "
        "indicate omitted lines in the middle of the content):\n\n"
        "1  line 1\n2  line 2\n3  line 3\n4  line 4\n5  line 5\n"
        "... [2 lines truncated] ...\n"
        " 8  line 8\n 9  line 9\n10  line 10\n11  line 11\n12  line 12\n"
    )


def test_long_lines_are_clipped_at_1000_chars_with_the_caveat() -> None:
    text = stub_text("c", "/large_tool_results/c", "x" * 1500 + "\nshort")
    assert "Here is a preview of the result (the output contains lines longer than 1000 characters; " \
           "this preview shows only their first 1000 characters):\n\n1  " + "x" * 1000 + "\n2  short\n" in text
    both = stub_text("c", "/p", "y" * 1001 + "\n" + numbered(20))
    assert ("(lines of the form `... [N lines truncated] ...` indicate omitted lines in the middle of the content; "
            "the output contains lines longer than 1000 characters; this preview shows only their first 1000 characters):") in both


def test_visible_id_is_cut_to_32_chars_but_the_path_keeps_it() -> None:
    long_id = "call_" + "x" * 40
    text = stub_text(long_id, offload_path(long_id), "data")
    assert f"this tool call {long_id[:32]}... was saved" in text
    assert f"at this path: /large_tool_results/{long_id}\n" in text


# -- offload through the layer -----------------------------------------------------------------------
def test_threshold_is_four_chars_per_token_strictly_greater() -> None:
    layer = FilesystemLayer(tool_result_token_limit=10)
    kept = run_tool(layer, ToolMessage("a" * 40, tool_call_id="c1", id="t1", name="execute"))
    assert kept.content == "a" * 40
    offloaded = run_tool(layer, ToolMessage("a" * 41, tool_call_id="c2", id="t2", name="execute"))
    assert offloaded.content.startswith("Tool result too large, the result of this tool call c2 was saved")
    assert layer.vfs.read("/large_tool_results/c2") == "a" * 41


def test_stub_keeps_identity_and_is_marked() -> None:
    layer = FilesystemLayer(tool_result_token_limit=1)
    stub = run_tool(layer, ToolMessage("z" * 5, tool_call_id="c.9", id="t9", name="execute", status="error",
                                       artifact={"raw": 1}))
    assert (stub.tool_call_id, stub.name, stub.id, stub.status, stub.artifact) == ("c.9", "execute", "t9", "error", {"raw": 1})
    assert message_kind(stub) == "stub"
    assert stub.additional_kwargs["ctxi_path"] == "/large_tool_results/c_9"


def test_excluded_tools_and_disabled_limit_are_left_alone() -> None:
    layer = FilesystemLayer(tool_result_token_limit=1)
    msg = ToolMessage("q" * 100, tool_call_id="r1", id="t", name="read_file")
    assert run_tool(layer, msg, name="read_file") is msg
    off = FilesystemLayer(tool_result_token_limit=None)
    big = ToolMessage("q" * 10_000_000, tool_call_id="r2", id="t2")
    assert run_tool(off, big) is big
    assert len(layer.vfs) == 0 and len(off.vfs) == 0


def test_images_are_kept_after_one_text_block_and_not_measured() -> None:
    layer = FilesystemLayer(tool_result_token_limit=2)
    image = {"type": "image", "url": "https://x/y.png"}
    small = ToolMessage([{"type": "text", "text": "12345678"}, image], tool_call_id="i0", id="t0")
    assert run_tool(layer, small) is small  # 8 chars = 4 * 2: stays (the image does not count)
    big = ToolMessage([{"type": "text", "text": "abcde"}, {"type": "text", "text": "fghi"}, image], tool_call_id="i1", id="t1")
    stub = run_tool(layer, big)
    assert stub.content[0]["type"] == "text" and stub.content[1:] == [image]
    assert layer.vfs.read("/large_tool_results/i1") == "abcde\nfghi"


def test_results_inside_a_command_are_offloaded_too() -> None:
    layer = FilesystemLayer(tool_result_token_limit=1)
    msg = ToolMessage("long result", tool_call_id="k1", id="t1")
    request = ToolCallRequest(tool_call=call("custom", "k1"), tool=None, state={}, runtime=None)  # type: ignore[arg-type]
    out = layer.wrap_tool_call(request, lambda _r: Command(update={"messages": [msg], "files": {"a": 1}}))
    assert isinstance(out, Command)
    assert out.update["files"] == {"a": 1}
    assert message_kind(out.update["messages"][0]) == "stub"


def test_offload_event_reports_tokens_path_and_id() -> None:
    layer = FilesystemLayer(LayerContext(counter=APPROX), tool_result_token_limit=5)
    msg = ToolMessage(numbered(100), tool_call_id="e1", id="t1", name="execute")
    with recording() as rec:
        stub = run_tool(layer, msg)
    [event] = rec.events
    assert (event.layer, event.kind) == ("filesystem", "offload")
    assert event.tokens_before == APPROX.count_message(msg)
    assert event.tokens_after == APPROX.count_message(stub)
    assert event.payload["path"] == "/large_tool_results/e1"
    assert event.payload["tool_call_id"] == "e1"
    assert event.payload["chars"] == len(numbered(100))


# -- argument truncation: pure helpers --------------------------------------------------------------
def test_truncate_tool_call_keeps_20_chars_and_appends_the_text() -> None:
    tc = call("write_file", "w1", file_path="/a.py", content="z" * 2001)
    out = truncate_tool_call(tc, 2000, "...(argument truncated)")
    assert out["args"] == {"file_path": "/a.py", "content": "zzzzzzzzzzzzzzzzzzzz...(argument truncated)"}
    assert tc["args"]["content"] == "z" * 2001  # the input is not touched
    exact = call("write_file", "w2", content="z" * 2000)
    assert truncate_tool_call(exact, 2000, "...") is exact


def test_keep_cutoff_and_trigger() -> None:
    tokens = [10, 10, 10, 10, 10]  # five messages of 10 tokens
    assert keep_cutoff(tokens, ContextSize(type="messages", value=2), None) == 3
    assert keep_cutoff(tokens, ContextSize(type="messages", value=9), None) == 5  # all recent: nothing to cut
    assert keep_cutoff(tokens, ContextSize(type="tokens", value=25), None) == 3  # 20 fit, a third would not
    assert keep_cutoff(tokens, ContextSize(type="tokens", value=30), None) == 2
    assert keep_cutoff(tokens, ContextSize(type="tokens", value=100), None) == 0
    assert keep_cutoff(tokens, ContextSize(type="fraction", value=0.1), 300) == 2
    assert keep_cutoff(tokens, ContextSize(type="fraction", value=0.1), None) == 5  # fallback: last 20 messages
    # Deep Agents walks back and stops at the first message that does not fit: the newest alone
    # over the budget means nothing is old enough
    assert keep_cutoff([10, 10, 100], ContextSize(type="tokens", value=50), None) == 3
    assert trigger_met(5, 50, ContextSize(type="messages", value=5), None)
    assert not trigger_met(4, 50, ContextSize(type="messages", value=5), None)
    assert trigger_met(1, 85, ContextSize(type="fraction", value=0.85), 100)
    assert not trigger_met(1, 84, ContextSize(type="fraction", value=0.85), 100)
    assert not trigger_met(1, 10**9, ContextSize(type="fraction", value=0.85), None)


def history(n_writes: int) -> list[Any]:
    msgs: list[Any] = [HumanMessage("write files", id="h")]
    for i in range(n_writes):
        msgs.append(AIMessage("", id=f"a{i}", tool_calls=[call("write_file", f"w{i}", file_path=f"/f{i}", content="c" * 3000),
                                                          call("execute", f"x{i}", command="e" * 3000)]))
        msgs.append(ToolMessage("ok", tool_call_id=f"w{i}", id=f"tw{i}"))
        msgs.append(ToolMessage("ok", tool_call_id=f"x{i}", id=f"tx{i}"))
    return msgs


def test_truncated_view_cuts_only_old_write_edit_calls_and_marks_copies() -> None:
    cfg = TruncateArgsConfig(trigger=ContextSize(type="messages", value=5), keep=ContextSize(type="messages", value=3))
    layer = FilesystemLayer(LayerContext(counter=APPROX), truncate_args=cfg)
    msgs = history(3)  # 10 messages: cutoff 7 -> a0 (1) and a1 (4) are old, a2 (7) is kept
    with recording() as rec:
        view = layer.truncated_view(msgs, None)
    assert view is not None
    assert [m.id for m in view] == [m.id for m in msgs]
    assert view[1].tool_calls[0]["args"]["content"] == "cccccccccccccccccccc...(argument truncated)"
    assert view[1].tool_calls[1]["args"]["command"] == "e" * 3000  # not a write/edit tool
    assert view[7] is msgs[7] and view[7].tool_calls[0]["args"]["content"] == "c" * 3000
    assert [message_kind(m) for m in view].count("truncated") == 2
    assert msgs[1].tool_calls[0]["args"]["content"] == "c" * 3000 and message_kind(msgs[1]) == "original"
    [event] = rec.events
    saved = sum(APPROX.count_message(msgs[i]) - APPROX.count_message(view[i]) for i in (1, 4))
    assert event.kind == "truncate_args"
    assert event.payload["messages"] == 2 and event.payload["arguments"] == 2 and event.payload["new_message_ids"] == ["a0", "a1"]
    assert event.tokens_before - event.tokens_after == saved > 1000
    # the same copy objects on the next call (nothing new cut), and nothing below the trigger
    with recording() as rec:
        again = layer.truncated_view(msgs, None)
    assert again is not None and again[1] is view[1] and again[4] is view[4]
    assert (rec.events[0].payload["messages"], rec.events[0].payload["new_message_ids"]) == (2, [])
    assert layer.truncated_view(msgs[:4], None) is None
    # recomputed at every call, as Deep Agents does: the system message and tools count toward the
    # trigger, and a summary hides what it replaced (a cut is only made in what the model sees)
    tokens = TruncateArgsConfig(trigger=ContextSize(type="tokens", value=3000), keep=ContextSize(type="messages", value=2))
    by_tokens = FilesystemLayer(LayerContext(counter=APPROX), truncate_args=tokens)
    small = history(1)
    assert by_tokens.truncated_view(small, None) is None
    system = SystemMessage("s" * 12_000)
    assert by_tokens.truncated_view(small, None, system=system) is not None
    summary = HumanMessage("summary", id="s", additional_kwargs={"lc_source": "summarization"})
    event = {"cutoff_index": 4, "summary_message": summary, "created_at_index": 4}
    # [summary, *msgs[4:]]: 7 messages, keep 3 -> a1 is cut; a0, behind the summary, is not
    projected = layer.truncated_view(msgs, None, event=event)
    assert projected is not None and [message_kind(m) for m in projected].count("truncated") == 1
    assert message_kind(projected[4]) == "truncated" and projected[1] is msgs[1]


def shape(view: list[Any] | None) -> list[tuple[str, str]] | None:
    return None if view is None else [(m.id, message_kind(m)) for m in view]


def test_incremental_view_equals_a_fresh_computation_as_the_state_grows() -> None:
    cfg = TruncateArgsConfig(trigger=ContextSize(type="tokens", value=2000), keep=ContextSize(type="tokens", value=1500))
    steady = FilesystemLayer(LayerContext(counter=APPROX), truncate_args=cfg)
    msgs = history(6)
    for n in range(1, len(msgs) + 1):
        got = steady.truncated_view(msgs[:n], None)
        want = FilesystemLayer(LayerContext(counter=APPROX), truncate_args=cfg).truncated_view(msgs[:n], None)
        assert shape(got) == shape(want), n
    # every write is over 1,500 tokens, so only the last two small results fit the keep budget
    assert [message_kind(m) for m in got or []].count("truncated") == 6


def test_tool_use_blocks_in_content_are_cut_too() -> None:
    big = "b" * 5000
    ai = AIMessage([{"type": "text", "text": "writing"}, {"type": "tool_use", "id": "w1", "name": "edit_file",
                                                           "input": {"old_string": big, "new_string": "n"}}],
                   id="a1", tool_calls=[call("edit_file", "w1", old_string=big, new_string="n")])
    cfg = TruncateArgsConfig(trigger=ContextSize(type="messages", value=1), keep=ContextSize(type="messages", value=1))
    layer = FilesystemLayer(truncate_args=cfg)
    view = layer.truncated_view([ai, ToolMessage("ok", tool_call_id="w1", id="t1")], None)
    assert view is not None
    assert view[0].content[1]["input"] == {"old_string": "bbbbbbbbbbbbbbbbbbbb...(argument truncated)", "new_string": "n"}
    assert ai.content[1]["input"]["old_string"] == big


# -- inside a real create_agent -------------------------------------------------------------------------
class Observer(AgentMiddleware):
    def __init__(self) -> None:
        super().__init__()
        self.requests: list[list[Any]] = []

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        self.requests.append(list(request.messages))
        return handler(request)


def test_inside_create_agent_state_holds_the_stub_and_the_view_truncated_args() -> None:
    @tool
    def execute(command: str) -> str:
        """Run a command."""
        return numbered(30_000)

    @tool
    def write_file(file_path: str, content: str) -> str:
        """Write a file."""
        return f"wrote {file_path}"

    model = FakeModel(messages=iter([
        AIMessage("", id="m1", tool_calls=[call("write_file", "w1", file_path="/big.txt", content="w" * 4000)]),
        AIMessage("", id="m2", tool_calls=[call("execute", "x1", command="cat big")]),
        AIMessage("done", id="m3"),
    ]))
    cfg = TruncateArgsConfig(trigger=ContextSize(type="messages", value=4), keep=ContextSize(type="messages", value=2))
    layer = FilesystemLayer(LayerContext(counter=APPROX), truncate_args=cfg)
    observer = Observer()
    agent = create_agent(model, [execute, write_file], middleware=[layer, observer])
    with recording() as rec:
        out = agent.invoke({"messages": [HumanMessage("go", id="h1")]})
    result = next(m for m in out["messages"] if isinstance(m, ToolMessage) and m.tool_call_id == "x1")
    assert message_kind(result) == "stub"
    assert result.content.startswith("Tool result too large, the result of this tool call x1 was saved")
    assert layer.vfs.read("/large_tool_results/x1") == numbered(30_000)
    # third request: [h1, m1, tw1, m2, stub] -> 5 messages >= 4, keep 2 -> m1 is old and truncated in the view
    third = observer.requests[2]
    assert third[1].tool_calls[0]["args"]["content"] == "wwwwwwwwwwwwwwwwwwww...(argument truncated)"
    state_m1 = next(m for m in out["messages"] if m.id == "m1")
    assert state_m1.tool_calls[0]["args"]["content"] == "w" * 4000
    assert [e.kind for e in rec.events] == ["offload", "truncate_args"]


# -- through replay -------------------------------------------------------------------------------
def replay_thread() -> Thread:
    msgs = [HumanMessage("go", id="h1"),
            AIMessage("", id="a1", tool_calls=[call("write_file", "w1", file_path="/x", content="y" * 2500)]),
            ToolMessage("ok", tool_call_id="w1", id="t1", name="write_file"),
            AIMessage("", id="a2", tool_calls=[call("execute", "../../x1", command="seq 5000")]),
            ToolMessage(numbered(20_000, "n"), tool_call_id="../../x1", id="t2", name="execute"),
            AIMessage("", id="a3", tool_calls=[call("ls", "l1")]),
            ToolMessage("a\nb", tool_call_id="l1", id="t3", name="ls"),
            AIMessage("done", id="a4")]
    return Thread("fs", msgs, system_prompt="sys")


def test_replay_records_offload_event_state_stub_and_view_only_truncation() -> None:
    thread = replay_thread()
    config = preset("deepagents").with_overrides([
        "filesystem.truncate_args.trigger=messages:5", "filesystem.truncate_args.keep=messages:3",
        "summarization.enabled=false", "memory.enabled=false", "input_context.base_prompt=false",
        "input_context.tool_prompts=false"])
    run = replay(thread, config)
    offloads = [(s.index, e.payload["path"]) for s in run.steps for e in s.events if e.kind == "offload"]
    assert offloads == [(2, "/large_tool_results/______x1")]
    assert run.files.read("/large_tool_results/______x1") == numbered(20_000, "n")
    final = {m.id: m for m in run.final_state}
    assert message_kind(final["t2"]) == "stub"  # the state holds the stub
    assert final["a1"].tool_calls[0]["args"]["content"] == "y" * 2500  # truncation never reaches the state
    step2, step3 = run.steps[2], run.steps[3]
    assert [m.id for m in step2.view] == ["h1", "a1", "t1", "a2", "t2"]
    assert step2.view[1].tool_calls[0]["args"]["content"] == "y" * 20 + "...(argument truncated)"
    assert [e.kind for e in step3.events] == ["truncate_args"]
    assert [e["kind"] for e in step2.view_entries(run.counter)] == ["original", "original", "truncated", "original", "original", "stub"]


def test_build_layers_uses_the_config() -> None:
    config = EngineConfig().with_overrides(["filesystem.tool_result_token_limit=7", "filesystem.excluded_tools=[grep]",
                                            "filesystem.truncate_args.max_length=50"])
    [layer] = [x for x in build_layers(config, LayerContext()) if isinstance(x, FilesystemLayer)]
    assert layer.tool_result_token_limit == 7
    assert layer.excluded_tools == frozenset({"grep"})
    assert layer.truncate_args.max_length == 50


def test_a_truncated_call_is_one_copy_across_re_runs_and_settings_tell_copies_apart() -> None:
    """A re-run after an edit finds each cut call's copy made (and counted) already; other truncation
    settings make their own copy."""
    from engine.layers.filesystem import TRUNCATED
    from engine.thread.synthetic import synthetic_thread
    from ui import controls

    thread = synthetic_thread(300, seed=0)
    base = preset("stress")

    def cut_copies(config: EngineConfig) -> dict[str, AIMessage]:
        run = replay(thread, config)
        originals = {m.id: m for m in thread.messages if isinstance(m, AIMessage)}
        return {m.id: m for s in run.steps for m in s.view
                if isinstance(m, AIMessage) and m.id in originals and m is not originals[m.id]
                and message_kind(m) == "truncated"}

    first = cut_copies(base)
    assert first, "the stress preset cuts old write/edit arguments on this thread"
    again = cut_copies(controls.set_trigger_clause(base, 0, ContextSize(type="fraction", value=0.4)))
    shared = first.keys() & again.keys()
    assert shared and all(first[k] is again[k] for k in shared)
    fs = base.filesystem
    other = base.model_copy(update={"filesystem": fs.model_copy(update={
        "truncate_args": fs.truncate_args.model_copy(update={"max_length": fs.truncate_args.max_length + 7})})})
    longer = cut_copies(other)
    assert longer and all(longer[k] is not first[k] for k in longer.keys() & first.keys())
    assert len(TRUNCATED) > 0
