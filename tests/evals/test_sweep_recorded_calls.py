"""Sweeps count the source agent's recorded compaction calls apart, as `recorded_summarizer_calls`.

An as-recorded sweep point calls no summarizer of ours, so its `summarizer_calls` (ours, unchanged) read 0
where the agent called its model to write each summary. `recorded_summarizer_calls` counts those calls (the
Timeline tile's "by the agent (recorded)", engine.views.timeline.recorded_compaction_calls): in the sweep's
metrics and JSON, `ctxi sweep`'s table (*agent calls*) and the Evals page's sweep table.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine import load_thread, preset, replay
from engine.cli.ctxi import main
from engine.evals.sweep import SweepResult, run_metrics, sweep
from engine.views.timeline import summarizer_calls
from tests.conftest import SAMPLES, trace_path

CLAUDE = ("claude-code", "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl")  # compacted once, at step 126
CODEX = ("codex", "agent-sessions-codex-small.SYNTHETIC.jsonl")  # six recorded compactions
AGENTS = {"preset": ["as-recorded", "deepagents"]}


def _calls(result: SweepResult) -> dict[str, tuple[int, int]]:
    return {p.point.label: (p.metrics["summarizer_calls"], p.metrics["recorded_summarizer_calls"])
            for p in result.points}


@pytest.fixture(scope="module")
def claude_sweep() -> SweepResult:
    return sweep(load_thread(trace_path(*CLAUDE)), preset("as-recorded"), AGENTS, executor="serial")


def test_the_as_recorded_point_counts_the_agents_call(claude_sweep: SweepResult) -> None:
    # ours: 0 as-recorded (unchanged), 1 for the what-if; the agent's: its one recorded compaction call
    assert _calls(claude_sweep) == {"preset=as-recorded": (0, 1), "preset=deepagents": (1, 0)}
    # the same count a single replay shows on the Timeline tile
    run = replay(load_thread(trace_path(*CLAUDE)), preset("as-recorded"))
    assert run_metrics(run)["recorded_summarizer_calls"] == summarizer_calls(run).recorded == 1
    assert [t["recorded_summarizer_calls"] for t in claude_sweep.points[0].threads] == [1]


@pytest.mark.parametrize(("name", "ours"), [("deepagents", 0), ("stress", 2)])
def test_a_what_if_on_the_sample_counts_no_agent_calls(name: str, ours: int) -> None:
    result = sweep(load_thread(SAMPLES / "first-look.json"), preset(name), {}, executor="serial")
    assert _calls(result) == {"base": (ours, 0)}


def test_a_point_sums_the_agents_calls_over_threads_in_the_process_pool() -> None:
    threads = [load_thread(trace_path(*CLAUDE)), load_thread(trace_path(*CODEX))]
    result = sweep(threads, preset("as-recorded"), {}, executor="process", workers=2)
    assert result.executor == "process"
    assert [t["recorded_summarizer_calls"] for t in result.points[0].threads] == [1, 6]
    assert _calls(result) == {"base": (0, 7)}


def _table(out: str) -> list[list[str]]:
    lines = out.splitlines()
    header = lines[1]
    assert " calls agent calls  summ. tokens " in header
    return [line[2:].split() for line in lines[2:] if not line.startswith("calls:")]  # after the Pareto mark


def test_ctxi_sweep_shows_the_agents_calls(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(trace_path(*CLAUDE))
    args = ["sweep", path, "--grid", "preset=as-recorded,deepagents", "--executor", "serial"]
    assert main(args) == 0
    out = capsys.readouterr().out
    rows = _table(out)
    # columns after the label: peak, compactions, saved, retention, drift, calls, agent calls, summ. tokens, ...
    assert [(r[0], r[6], r[7]) for r in rows] == [("preset=as-recorded", "0", "1"), ("preset=deepagents", "1", "0")]
    assert out.splitlines()[-1] == ("calls: our summarizer's; agent calls: the source agent's own compaction "
                                    "calls (recorded)")
    assert main([*args, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [(p["summarizer_calls"], p["recorded_summarizer_calls"]) for p in doc["points"]] == [(0, 1), (1, 0)]


def test_ctxi_sweep_of_a_what_if_shows_zero_agent_calls(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(SAMPLES / "first-look.json")
    assert main(["sweep", path, "--preset", "stress", "--grid", "summarization.keep=messages:4",
                 "--executor", "serial"]) == 0
    out = capsys.readouterr().out
    assert [(r[0], r[6], r[7]) for r in _table(out)] == [("keep=messages:4", "2", "0")]
    assert "agent calls:" not in out  # no note when no agent call was counted


def test_the_evals_sweep_table_lists_the_agents_calls(start: Any, claude_sweep: SweepResult) -> None:
    at = start("pages/evals.py")
    at.session_state["ev_sweep_result"] = (at.session_state["thread_key"], claude_sweep)
    at.session_state["tab"] = "Sweep"
    at.run()
    assert not at.exception, at.exception
    [frame] = [d.value for d in at.dataframe if "settings" in d.value.columns]
    columns = list(frame.columns)
    assert columns.index("agent calls (recorded)") == columns.index("summarizer calls") + 1
    assert frame["summarizer calls"].tolist() == [0, 1]
    assert frame["agent calls (recorded)"].tolist() == [1, 0]


def test_config_compares_policies_with_the_agents_calls_beside_ours() -> None:
    from engine.evals.policy_compare import compare_policies

    thread = load_thread(trace_path(*CLAUDE))
    recorded, what_if = replay(thread, preset("as-recorded")), replay(thread, preset("deepagents"))
    rows = {r["policy"]: r for r in compare_policies({"as-recorded": recorded, "deepagents": what_if}, recorded)}
    assert (rows["as-recorded"]["summarizer calls"], rows["as-recorded"]["agent calls (recorded)"]) == (0, 1)
    assert rows["deepagents"]["agent calls (recorded)"] == 0


def test_the_evals_run_table_says_a_recorded_call_is_the_agents(start, monkeypatch) -> None:  # noqa: ANN001
    import re

    monkeypatch.setenv("CTXI_OPEN", str(trace_path(*CLAUDE)))
    at = start("pages/evals.py")
    at.session_state["tab"] = "Stress mode"  # the tabs' key holds the open one (AppTest has no tab click)
    at.run()
    cells = [str(v) for d in at.dataframe if "summarizer calls" in d.value.columns for v in d.value["summarizer calls"]]
    assert "1 (recorded, by the agent)" in [re.sub(r"\\(.)", r"\1", c) for c in cells]
