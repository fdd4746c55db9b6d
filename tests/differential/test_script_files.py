"""A reviewer's own scripts: the JSON format (script_files.py), CTXI_DIFF_SCRIPTS, `--write`.

A written script loads back equal to the generated one and plays step for step the same in each
framework; small scripts written here by hand (not generated) play through every framework's
differential and agree; a malformed file fails with one line naming the file and the field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage

from engine.run.replay import replay
from tests.differential import deerflow_side as df
from tests.differential import langchain_side as lc
from tests.differential import test_deerflow, test_langchain
from tests.differential.harness import (
    MISFIT,
    Comparison,
    RealStep,
    ScriptSummarizer,
    compare_steps,
    normalize_text,
    shape,
)
from tests.differential.script_files import ENV, FORMAT, load_file, load_scripts, unsuited
from tests.differential.script_write import generated, main
from tests.differential.scripts import Script


def _text(n: int, word: str = "lorem") -> str:
    return " ".join(f"{word}{i % 17}" for i in range(n))


def _call(name: str, cid: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args or {"query": cid}, "id": cid}


# Hand-written (not generated): a summarizing two-turn script for LangChain and DeerFlow (its first
# turn interrupted: the dangling call is patched at the next turn), a delegating one for Deep Agents
# (a task call and its sub-agent's own call), and a plain one in messages_to_dict form for all.
SUMMARIZING = {
    "format": FORMAT, "name": "hand-summarizing", "window": 3000,
    "system_prompt": "You are a hand-written test agent.",
    "params": {"trigger": ["messages", 6], "keep": ["messages", 3], "trim": None},
    "turns": [
        {"human": "Find the flaky test.", "replies": [
            {"content": "Searching.", "tool_calls": [_call("search", "s1")],
             "usage_metadata": {"input_tokens": 120, "output_tokens": 9, "total_tokens": 129},
             "response_metadata": {"model_provider": "scriptedmodel"}},
            {"content": "", "tool_calls": [_call("fetch", "s2"), _call("run_tests", "s3")]},
            {"content": "Running it again.", "tool_calls": [_call("run_tests", "s4")]},
        ], "interrupted": True},
        {"human": {"content": "Go on, and report.", "id": "my-human-2"}, "replies": [
            {"content": "Back.", "tool_calls": [_call("search", "s5")]},
            {"content": "", "tool_calls": [_call("fetch", "s6")]},
            {"content": "The flaky test is test_retry: it races the clock."},
        ]},
    ],
    "results": {"s1": _text(120), "s2": _text(300, "ipsum"), "s3": {"content": "3 failed", "status": "error"},
                "s5": _text(200, "dolor"), "s6": {"content": _text(80), "id": "my-result-6"}},
}
DELEGATING = {
    "name": "hand-delegating", "window": 9000, "system_prompt": "You delegate.",
    "turns": [{"human": "Check the build in a sub-agent.", "replies": [
        {"content": "", "tool_calls": [_call("task", "t1", description="Sub-task t1: check the build",
                                             subagent_type="general-purpose")]},
        {"content": "The sub-agent says the build is green."},
    ]}],
    "results": {"t1.s0-0": _text(400)},
    "subagents": {"t1": [
        {"content": "Looking.", "tool_calls": [_call("run_tests", "t1.s0-0")]},
        {"content": "Report: the build is green.  "},
    ]},
}
PLAIN = {  # LangChain's messages_to_dict form
    "name": "hand-plain", "window": 8000, "system_prompt": "You answer.",
    "turns": [{"human": {"type": "human", "data": {"content": "Hello?", "id": "p-h"}}, "replies": [
        {"type": "ai", "data": {"content": "Let me look.", "id": "p-a0", "tool_calls": [
            {"name": "search", "args": {"query": "hello"}, "id": "p1", "type": "tool_call"}]}},
        {"type": "ai", "data": {"content": "Hello to you.", "id": "p-a1"}},
    ]}],
    "results": {"p1": {"type": "tool", "data": {"content": "a greeting", "tool_call_id": "p1", "name": "search"}}},
}


def _write(folder: Path, scripts: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, doc in scripts.items():
        (folder / name).write_text(json.dumps(doc), encoding="utf-8")
    return folder


def test_hand_written_scripts_load_as_written(tmp_path: Path) -> None:
    folder = _write(tmp_path, {"a.json": SUMMARIZING, "b.json": DELEGATING, "c.json": PLAIN})
    a, b, c = load_scripts(folder)
    assert (a.thread_id, b.thread_id, c.thread_id) == ("hand-summarizing", "hand-delegating", "hand-plain")
    assert [m.id for m in a.replies()] == ["a0-0", "a0-1", "a0-2", "a1-0", "a1-1", "a1-2"]
    assert [t.human.id for t in a.turns] == ["h0", "my-human-2"]
    assert (a.results["s1"].name, a.results["s1"].id, a.results["s3"].status, a.results["s6"].id) == (
        "search", "t-s1", "error", "my-result-6")
    assert a.params == {"trigger": ("messages", 6), "keep": ("messages", 3), "trim": None}
    assert lc.params(a)["trim"] is None and lc.params(c) == {"trigger": None, "keep": ("messages", 20), "trim": 4000}
    assert [m.id for m in b.subagents["t1"]] == ["t1.a0", "t1.a1"]
    assert c.results["p1"].content == "a greeting" and c.replies()[0].tool_calls[0]["id"] == "p1"
    # which framework plays which, and why not
    assert [unsuited(a, f) for f in ("langchain", "deerflow:head", "deepagents")] == [
        None, None, "deepagents reads no params (given: keep, trigger, trim)"]
    assert unsuited(b, "langchain") == "calls task, which langchain has not" and unsuited(b, "deepagents") is None
    assert all(unsuited(c, f) is None for f in ("langchain", "deepagents", "deerflow:v2.0-m0", "deerflow:head"))


def _report(capsys: pytest.CaptureFixture[str]) -> str:
    return capsys.readouterr().out


def test_hand_written_scripts_agree_in_every_framework(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(ENV, str(_write(tmp_path, {"a.json": SUMMARIZING, "b.json": DELEGATING, "c.json": PLAIN})))
    # LangChain plays the summarizing script (chunk 0) and the plain one (chunk 1)
    test_langchain.test_langchain_preset_agrees_with_summarization_middleware(0)
    out = _report(capsys)
    assert "2 script(s) suit langchain, 1 in this chunk" in out and "left out 1: calls task, which langchain has not" in out
    assert "langchain chunk 0: 6/6 steps agree (100.00 %), 1/1 threads entirely" in out, out
    assert "summarization.summarize 4," in out and "interrupted turns 1," in out, out
    test_langchain.test_langchain_preset_agrees_with_summarization_middleware(1)
    assert "langchain chunk 1: 2/2 steps agree (100.00 %), 1/1 threads entirely" in _report(capsys)
    if df.REFERENCE.is_dir():
        for version, summaries in (("v2.0-m0", 4), ("head", 3)):  # HEAD keeps the patched call in view
            test_deerflow.test_deerflow_presets_agree_with_deerflow_middleware(version, 0)
            out = _report(capsys)
            assert f"deerflow {version} chunk 0: 6/6 steps agree (100.00 %), 1/1 threads entirely" in out, out
            assert "dangling.patch 1," in out and f"summarization.summarize {summaries}" in out, out
            test_deerflow.test_deerflow_presets_agree_with_deerflow_middleware(version, 1)
            assert f"deerflow {version} chunk 1: 2/2 steps agree (100.00 %), 1/1 threads entirely" in _report(capsys)
    test_deepagents = pytest.importorskip("tests.differential.test_deepagents")
    test_deepagents.test_deepagents_preset_agrees_with_create_deep_agent(0)  # the delegating script
    out = _report(capsys)
    assert "deepagents chunk 0: 4/4 steps agree (100.00 %), 1/1 threads entirely" in out, out
    assert "of which sub-agents' steps: 2/2 steps agree" in out and "task calls with a sub-agent 1" in out, out
    test_deepagents.test_deepagents_preset_agrees_with_create_deep_agent(1)  # the plain one
    assert "deepagents chunk 1: 2/2 steps agree (100.00 %), 1/1 threads entirely" in _report(capsys)


def test_a_script_the_agent_cannot_play_fails_with_its_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a reply without tool calls ends the turn: the agent never asks for the one after it
    doc = {**PLAIN, "turns": [{"human": "Hi", "replies": [{"content": "Hello."}, {"content": "never asked for"}]}],
           "results": {}}
    monkeypatch.setenv(ENV, str(_write(tmp_path, {"x.json": doc})))
    with pytest.raises(AssertionError) as caught:
        test_langchain.test_langchain_preset_agrees_with_summarization_middleware(0)
    assert f"1  {MISFIT}   e.g. hand-plain: the agent stopped after 1 of the script's 2 answers (next unplayed: a0-1)" in str(
        caught.value)


def _error(tmp_path: Path, doc: Any, name: str = "bad.json") -> str:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    with pytest.raises(Exception) as caught:
        load_file(path)
    assert type(caught.value).__name__ == "ScriptError"
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{path}")
    return message[len(str(path)):]


def test_a_malformed_script_gives_one_line_naming_file_and_field(tmp_path: Path) -> None:
    turn0 = SUMMARIZING["turns"][0]
    assert _error(tmp_path, "{not json") == ": not JSON: Expecting property name enclosed in double quotes at line 1 column 2"
    assert _error(tmp_path, {k: v for k, v in SUMMARIZING.items() if k != "window"}) == ": window: Field required"
    assert _error(tmp_path, {**SUMMARIZING, "window": "big"}) == (
        ": window: Input should be a valid integer, unable to parse string as an integer")
    assert _error(tmp_path, {**SUMMARIZING, "colour": 1}) == ": colour: Extra inputs are not permitted"
    bad_call = {**turn0, "replies": [{"content": "", "tool_calls": [{"name": "search", "args": {}}]}]}
    assert _error(tmp_path, {**SUMMARIZING, "turns": [bad_call]}) == ": turns[0].replies[0].tool_calls[0].id: Field required"
    assert _error(tmp_path, {**SUMMARIZING, "params": {"trigger": ["minutes", 3]}}).startswith(": params.trigger")
    assert _error(tmp_path, {**SUMMARIZING, "params": {"budget": 3}}) == ": params.budget: Extra inputs are not permitted"
    unknown = {**turn0, "replies": [{"tool_calls": [_call("deploy", "d1")]}] + turn0["replies"][1:]}
    assert _error(tmp_path, {**SUMMARIZING, "turns": [unknown]}) == (
        ": turns[0].replies[0].tool_calls[0].name: 'deploy' is no agent's tool (the project's: search, fetch, "
        "run_tests; built in: delete, edit_file, glob, grep, ls, read_file, task, write_file, write_todos)")
    no_result = {k: v for k, v in SUMMARIZING["results"].items() if k != "s5"}
    assert _error(tmp_path, {**SUMMARIZING, "results": no_result}) == (
        ": turns[1].replies[0].tool_calls[0].id: no results['s5'] (only an interrupted turn's last calls go unanswered)")
    assert _error(tmp_path, {**SUMMARIZING, "results": {**SUMMARIZING["results"], "s4": "late"}}) == (
        ": turns[0].replies[2].tool_calls: an interrupted turn's last calls have no results (the run stops before they return)")
    assert _error(tmp_path, {**DELEGATING, "subagents": {}}) == (
        ": turns[0].replies[0].tool_calls[0].id: a task call needs subagents['t1'] (the sub-agent's replies)")
    wrong_id = {"t1": [{"tool_calls": [_call("run_tests", "x9")]}, {"content": "Report."}]}
    assert _error(tmp_path, {**DELEGATING, "subagents": wrong_id, "results": {"x9": "ok"}}) == (
        ": subagents.t1[0].tool_calls[0].id: a sub-agent's call id must start with 't1.s'")
    # JSON Lines: the line is named
    lines = json.dumps(PLAIN) + "\n" + json.dumps({**PLAIN, "turns": []}) + "\n"
    assert _error(tmp_path, lines, "many.jsonl") == ":2: turns: List should have at least 1 item after validation, not 0"


def test_the_environment_variable_skips_or_fails_cleanly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, str(tmp_path / "nowhere"))
    with pytest.raises(pytest.skip.Exception, match="no such file or folder"):
        test_langchain.test_langchain_preset_agrees_with_summarization_middleware(0)
    (tmp_path / "bad.json").write_text("[]", encoding="utf-8")
    monkeypatch.setenv(ENV, str(tmp_path))
    with pytest.raises(pytest.fail.Exception) as caught:
        test_langchain.test_langchain_preset_agrees_with_summarization_middleware(0)
    assert str(caught.value) == f"{tmp_path / 'bad.json'}: (top level): Input should be a valid dictionary or instance of ScriptIn"


def _real_shapes(real: list[RealStep], known: set[str]) -> list[Any]:
    def shapes(ms: list[BaseMessage]) -> list[Any]:
        return [shape(m, known) for m in ms]
    return [(shapes(r.state), shapes(r.view), r.system) for r in real]


def _played(script: Script, framework: str) -> tuple[list[Any], Comparison]:
    if framework == "langchain":
        real, thread = lc.run_real(script)
        config = lc.our_config(script)
    else:
        version = framework.split(":")[1]
        real, thread = df.run_real(script, version)
        config = df.our_config(script, version)
    run = replay(thread, config, summarizer=ScriptSummarizer())
    known = {m.id for m in thread.messages if m.id}
    return _real_shapes(real, known), compare_steps(real, run, thread, label=framework)


@pytest.mark.parametrize("framework", ["langchain", "deerflow:v2.0-m0", "deerflow:head"])
def test_a_written_script_plays_as_the_generated_one(framework: str, tmp_path: Path) -> None:
    if framework.startswith("deerflow"):
        df.reference_dir()
    assert main(["--write", str(tmp_path), "--seed", "5", "--count", "2", "--framework", framework.split(":")[0]]) == 0
    for seed in (5, 6):
        [written] = load_scripts(tmp_path / f"{framework.replace(':', '-')}-{seed}.json")
        original = generated(framework, seed)
        assert written == original
        (a_steps, a), (b_steps, b) = _played(original, framework), _played(written, framework)
        assert a_steps == b_steps and len(a_steps) == len(original.replies())
        assert (a.steps, a.agreeing, dict(a.classes)) == (b.steps, b.agreeing, dict(b.classes)) == (a.steps, a.steps, {})


def test_a_written_deep_agents_script_plays_as_the_generated_one(tmp_path: Path) -> None:
    da = pytest.importorskip("tests.differential.deepagents_side")
    main(["--write", str(tmp_path), "--seed", "0", "--count", "1", "--framework", "deepagents"])
    [written] = load_scripts(tmp_path / "deepagents-0.json")
    original = generated("deepagents", 0)
    assert written == original and len(written.subagents) == 2  # seed 0 delegates twice
    runs = []
    for script in (original, written):
        real, thread, files, observer = da.run_real(script)
        # ids the script gives; a sub-agent's task message gets a uuid4 from its state (masked)
        known = {str(m.id) for m in [*script.replies(), *script.results.values(), *(t.human for t in script.turns),
                                     *(r for rs in script.subagents.values() for r in rs)]}
        subs = {cid: (_real_shapes(sub.steps, known), [shape(m, known) for m in sub.thread.messages])
                for cid, sub in observer.subagents.items()}
        # a history file and an evicted message are named by a uuid4 each: compared by content
        named = sorted((normalize_text(p), normalize_text(c)) for p, c in files.items())
        runs.append((_real_shapes(real, known), thread.messages, named, subs))
    assert runs[0] == runs[1]
    assert len(runs[0][0]) == len(original.replies()) and sorted(runs[0][3]) == sorted(original.subagents)


def test_the_documented_example_plays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    docs = (Path(__file__).parents[2] / "docs" / "config.md").read_text(encoding="utf-8")
    example = docs.split("An example (two turns")[1].split("```json\n")[1].split("```")[0]
    path = tmp_path / "example.json"
    path.write_text(example, encoding="utf-8")
    [script] = load_scripts(path)
    assert script.thread_id == "flaky-test" and unsuited(script, "deepagents") is not None
    monkeypatch.setenv(ENV, str(path))
    test_langchain.test_langchain_preset_agrees_with_summarization_middleware(0)
    assert "langchain chunk 0: 4/4 steps agree (100.00 %), 1/1 threads entirely" in capsys.readouterr().out
