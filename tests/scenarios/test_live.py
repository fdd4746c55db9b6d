"""Live runs: progress, cancel, saving to the workspace, the CLI, and the real-model path (fake endpoints)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from engine.cli.ctxi import main
from engine.formats.native import dumps
from engine.scenarios.live import CancelToken, StepProgress, redact_secrets, save_thread
from engine.scenarios.live_run import run_live, start_live
from engine.workspace.workspace import Workspace


def test_progress_is_reported_per_step() -> None:
    seen: list[StepProgress] = []
    result = run_live("interrupted", steps=6, on_step=seen.append)
    assert [p.step for p in seen] == [1, 2, 3, 4, 5, 6]
    assert all(p.agent == "main" and p.window_tokens == 200_000 for p in seen)
    assert seen[0].action == "read_file /project/tests/test_payments.py"
    assert seen[-1].action == "final answer"
    assert all(a.raw_tokens < b.raw_tokens for a, b in zip(seen, seen[1:], strict=False))
    assert result.outcome == "done" and result.steps == 6


def test_cancel_keeps_what_ran_so_far() -> None:
    cancel = CancelToken()

    def stop_after_three(p: StepProgress) -> None:
        if p.step == 3:
            cancel.cancel()

    result = run_live("code-analysis", steps=20, on_step=stop_after_three, cancel=cancel)
    assert result.cancelled and result.steps == 3
    thread = result.thread
    assert len(thread.ai_indices()) == 3
    # the third step's tool calls never ran: they dangle, as after a user's Stop
    assert thread.messages[-1].type == "ai" and thread.messages[-1].tool_calls
    assert thread.extra["scenario"]["outcome"] == "cancelled"


def test_background_handle_and_workspace_round_trip(tmp_path: Path) -> None:
    handle = start_live("research-report", steps=6)
    assert handle.wait(60)
    snap = handle.snapshot()
    assert snap["done"] and snap["step"] == handle.result.steps and snap["subagent_steps"] > 0
    ws = Workspace(tmp_path)
    path = save_thread(handle.result.thread, ws)
    assert Path(path).parent == tmp_path / "threads"
    # a new Workspace object (as after an app restart) reads back the same thread
    again = Workspace(tmp_path).load(handle.result.thread.thread_id)
    assert dumps(again) == dumps(handle.result.thread)
    assert [r.thread_id for r in Workspace(tmp_path).list_threads()] == [handle.result.thread.thread_id]


def test_cli_scenario_list_and_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scenario", "--list"]) == 0
    listed = capsys.readouterr().out
    for name in ("code-analysis", "research-report", "long-refactor", "interrupted", "memory-two-threads", "needle"):
        assert name in listed
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert main(["scenario", "interrupted", "--steps", "8", "--seed", "2", "--out", str(a)]) == 0
    assert main(["scenario", "interrupted", "--steps", "8", "--seed", "2", "--out", str(b)]) == 0
    assert a.read_bytes() == b.read_bytes()
    assert main(["scenario", "memory-two-threads", "--steps", "6", "--out", str(tmp_path / "m.json")]) == 0
    assert json.loads((tmp_path / "m-thread1.json").read_text())["thread_id"].endswith("-1")
    assert json.loads((tmp_path / "m.json").read_text())["thread_id"].endswith("-2")
    assert main(["scenario", "nope", "--out", str(a)]) == 2
    assert "unknown scenario 'nope'" in capsys.readouterr().err


def test_cli_run_scenario_with_progress(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.json"
    assert main(["run", "interrupted", "--steps", "6", "--preset", "deepagents", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "[####----" in err and "step 6/6" in err and "dangling.patch" in err
    assert json.loads(out.read_text())["extra"]["scenario"]["preset"] == "deepagents"
    assert main(["run", "openai:gpt-4o-mini", "--out", str(out)]) == 2


def test_redact_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_API_KEY", "abcdefgh12345678")
    assert redact_secrets("bad key abcdefgh12345678 and sk-proj-XYZ12345678") == "bad key [redacted] and [redacted]"


# -- the real-model path ------------------------------------------------------------------------------
class ScriptedFake(GenericFakeChatModel):
    """A fake chat model with bind_tools (create_agent needs it), standing in for a provider's model."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedFake:
        return self


def test_real_model_path_with_a_fake_chat_model() -> None:
    model = ScriptedFake(messages=iter([
        AIMessage("", tool_calls=[{"name": "ls", "args": {"path": "/project"}, "id": "c1"}]),
        AIMessage("The project has src, tests and logs."),
    ]))
    result = run_live("fake:model", task="What is in /project?", model=model, steps=5)
    thread = result.thread
    assert result.outcome == "done" and thread.model == "fake:model"
    assert [m.type for m in thread.messages] == ["human", "ai", "tool", "ai"]
    assert thread.messages[2].content.splitlines()[1] == "/project/logs/"
    assert thread.messages[2].id == "tool-c1"


class _FakeOpenAI(BaseHTTPRequestHandler):
    """/v1/chat/completions: first a tool call, then (once a tool result came back) a final answer."""

    requests: list[dict[str, Any]] = []
    auth: list[str] = []

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(body)
        type(self).auth.append(self.headers.get("Authorization", ""))
        has_result = any(m.get("role") == "tool" for m in body["messages"])
        message: dict[str, Any] = {"role": "assistant", "content": "It holds src, tests and logs."} if has_result \
            else {"role": "assistant", "content": None, "tool_calls": [{"id": "call_ls", "type": "function",
                  "function": {"name": "ls", "arguments": json.dumps({"path": "/project"})}}]}
        reply = {"id": f"chatcmpl-{len(type(self).requests)}", "object": "chat.completion", "created": 0,
                 "model": body["model"], "choices": [{"index": 0, "message": message,
                 "finish_reason": "stop" if has_result else "tool_calls"}],
                 "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


def test_real_model_path_against_a_local_openai_compatible_endpoint(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("langchain_openai")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeOpenAI)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    key = "sk-test-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{server.server_address[1]}/v1")
    _FakeOpenAI.requests, _FakeOpenAI.auth = [], []
    out = tmp_path / "live.json"
    try:
        code = main(["run", "openai:gpt-4o-mini", "--task", "What is in /project?", "--steps", "5", "--out", str(out)])
    finally:
        server.shutdown()
    assert code == 0
    text = out.read_text()
    thread = json.loads(text)
    assert thread["model"] == "openai:gpt-4o-mini"
    assert [m["type"] for m in thread["messages"]] == ["human", "ai", "tool", "ai"]
    assert thread["messages"][1]["data"]["tool_calls"][0]["name"] == "ls"
    assert thread["messages"][3]["data"]["content"] == "It holds src, tests and logs."
    assert len(_FakeOpenAI.requests) == 2 and _FakeOpenAI.auth[0] == f"Bearer {key}"
    assert [t["function"]["name"] for t in _FakeOpenAI.requests[0]["tools"]][:3] == ["ls", "read_file", "write_file"]
    captured = capsys.readouterr()
    assert key not in text and key not in captured.err and key not in captured.out
