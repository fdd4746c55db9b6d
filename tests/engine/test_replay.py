from __future__ import annotations

import json
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from engine.cli.ctxi import main
from engine.config.schema import preset
from engine.formats.native import dumps
from engine.run.replay import replay
from engine.thread.model import Thread
from engine.thread.synthetic import synthetic_thread


def small_thread() -> Thread:
    msgs = [HumanMessage("do x", id="h0")]
    for i in range(3):
        msgs.append(AIMessage(f"step {i}", id=f"a{i}", tool_calls=[{"name": "grep", "args": {"pattern": "p"}, "id": f"c{i}"}]))
        msgs.append(ToolMessage("result " * 20, tool_call_id=f"c{i}", id=f"t{i}"))
    msgs.append(AIMessage("done", id="a3"))
    return Thread("small", msgs, system_prompt="You are terse.")


class Spy(AgentMiddleware):
    def __init__(self, tag: str, log: list[str]) -> None:
        super().__init__()
        self.tag, self.log = tag, log

    @property
    def name(self) -> str:
        return f"Spy{self.tag}"

    def before_agent(self, state: Any, runtime: Any) -> None:
        self.log.append(f"{self.tag}.before_agent")

    def before_model(self, state: Any, runtime: Any) -> None:
        self.log.append(f"{self.tag}.before_model")

    def after_model(self, state: Any, runtime: Any) -> None:
        self.log.append(f"{self.tag}.after_model")

    def after_agent(self, state: Any, runtime: Any) -> None:
        self.log.append(f"{self.tag}.after_agent")

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        self.log.append(f"{self.tag}.wrap_model>")
        out = handler(request)
        self.log.append(f"{self.tag}.wrap_model<")
        return out

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        self.log.append(f"{self.tag}.wrap_tool>")
        out = handler(request)
        self.log.append(f"{self.tag}.wrap_tool<")
        return out


def test_hooks_run_in_langchains_order() -> None:
    log: list[str] = []
    thread = Thread("t", [HumanMessage("hi", id="h"), AIMessage("", id="a0", tool_calls=[{"name": "x", "args": {}, "id": "c"}]),
                          ToolMessage("r", tool_call_id="c", id="t"), AIMessage("ok", id="a1")])
    replay(thread, preset("langchain"), layers=[Spy("A", log), Spy("B", log)])
    assert log == [
        "A.before_agent", "B.before_agent",
        "A.before_model", "B.before_model", "A.wrap_model>", "B.wrap_model>", "B.wrap_model<", "A.wrap_model<",
        "B.after_model", "A.after_model",
        "A.wrap_tool>", "B.wrap_tool>", "B.wrap_tool<", "A.wrap_tool<",
        "A.before_model", "B.before_model", "A.wrap_model>", "B.wrap_model>", "B.wrap_model<", "A.wrap_model<",
        "B.after_model", "A.after_model",
        "B.after_agent", "A.after_agent",
    ]


def test_steps_views_and_tokens_without_layers() -> None:
    run = replay(small_thread(), preset("langchain"), layers=[])
    assert [s.message_id for s in run.steps] == ["a0", "a1", "a2", "a3"]
    assert [[m.id for m in s.view] for s in run.steps] == [
        ["h0"], ["h0", "a0", "t0"], ["h0", "a0", "t0", "a1", "t1"], ["h0", "a0", "t0", "a1", "t1", "a2", "t2"]]
    for s in run.steps:  # with no layers the view is the raw prefix
        assert s.view_tokens == s.raw_tokens
        assert s.view_tokens == sum(s.view_by_category.values())
        assert s.view_tokens == s.state_tokens + s.view_by_category["system"] + s.view_by_category.get("tools", 0)
    assert run.tokens_saved() == 0


def test_replay_is_deterministic_to_the_byte() -> None:
    thread = synthetic_thread(150, seed=1, max_input_tokens=60_000)
    a = json.dumps(replay(thread, preset("stress")).to_report(), sort_keys=True)
    b = json.dumps(replay(synthetic_thread(150, seed=1, max_input_tokens=60_000), preset("stress")).to_report(), sort_keys=True)
    assert a == b


def test_report_has_the_documented_fields() -> None:
    report = replay(small_thread(), preset("deepagents")).to_report()
    assert {"schema", "version", "config", "steps", "files", "totals"} <= set(report)
    step = report["steps"][1]
    assert {"index", "state_tokens", "view_tokens", "view_by_category", "view", "events"} <= set(step)
    assert step["view"][0]["role"] == "system"
    assert [v["id"] for v in step["view"][1:]] == ["h0", "a0", "t0"]  # source ids preserved
    assert {v["kind"] for v in step["view"]} == {"original"}
    assert {"peak_view_tokens", "events_by_kind", "tokens_saved"} <= set(report["totals"])


def test_cli_replay_writes_json(tmp_path, capsys) -> None:
    path = tmp_path / "t.json"
    path.write_text(dumps(small_thread()))
    out = tmp_path / "r.json"
    assert main(["replay", str(path), "--preset", "stress", "--set", "model.max_input_tokens=1000", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "peak view" in printed and "of the 1,000 window" in printed
    report = json.loads(out.read_text())
    assert report["config"]["model"]["max_input_tokens"] == 1000 and len(report["steps"]) == 4
    assert main(["replay", str(path), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["thread_id"] == "small" and captured.err == ""


def test_cli_replay_errors_are_one_line(tmp_path, capsys) -> None:
    path = tmp_path / "t.json"
    path.write_text(dumps(small_thread()))
    assert main(["replay", str(path), "--set", "summarization.keep=tokens:0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "ctxi replay: error: summarization.keep: tokens thresholds must be greater than 0, got 0. (as written: 'tokens:0')"
    assert main(["replay", str(tmp_path / "nope.json")]) == 2
    assert "file not found" in capsys.readouterr().err
