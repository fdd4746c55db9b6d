"""`ctxi eval` and `ctxi sweep`: JSON output and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cli.ctxi import main
from engine.formats.native import dumps
from tests.evals.threads import NEEDLE_INTENT, NEEDLE_TOOL, needle_thread

SETS = ["--preset", "langchain", "--set", "tokens.counter=approximate", "--set", "summarization.trigger=messages:6",
        "--set", "summarization.keep=messages:2", "--set", "summarization.mode=view"]


@pytest.fixture()
def thread_file(tmp_path: Path) -> str:
    path = tmp_path / "needle.json"
    path.write_text(dumps(needle_thread()), encoding="utf-8")
    return str(path)


def test_eval_needle_json(thread_file: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "needle", thread_file, *SETS, "--needle", NEEDLE_TOOL, "--json", "--per-step"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == "context-inspector/eval-needle"
    assert doc["needles"] == [NEEDLE_TOOL] and doc["auto_picked"] is False
    assert doc["classes"] == {NEEDLE_TOOL: ["absent", "in_view", "in_view", "recoverable", "recoverable"]}
    assert doc["score"] == 0.0 and doc["recovery_score"] == 1.0
    assert [c["step"] for c in doc["compactions"]] == [3]


def test_eval_needle_text_auto_picks(thread_file: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "needle", thread_file, *SETS]) == 0
    out = capsys.readouterr().out
    assert f"needles      {NEEDLE_INTENT}, {NEEDLE_TOOL} (picked from the thread)" in out
    assert f"step     3 simulated {NEEDLE_INTENT}: in_summary, {NEEDLE_TOOL}: recoverable" in out


def test_eval_drift_json_flags_the_placeholder(thread_file: str, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["eval", "drift", thread_file, *SETS, "--set", "summarization.mode=state",
            "--set", "summarization.trim_tokens_to_summarize=20", "--json"]
    assert main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == "context-inspector/eval-drift"
    assert doc["flagged_steps"] == [3, 4] and doc["placeholder_steps"] == [3, 4]
    assert doc["checks"][0]["placeholder"] is True and doc["score"] == 0.0
    assert "statuses" not in doc


def test_eval_stress_flag(thread_file: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "drift", thread_file, "--preset", "langchain", "--set", "tokens.counter=approximate",
                 "--set", "model.max_input_tokens=2000", "--set", "summarization.keep=messages:2",
                 "--stress", "0.1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["config"]["summarization"]["trigger"] == [{"type": "fraction", "value": 0.1}]
    assert doc["checks"], "a 10 % trigger on a 2,000-token window compacts"


def test_sweep_json(thread_file: str, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["sweep", thread_file, "--preset", "langchain", "--set", "tokens.counter=approximate",
            "--grid", "summarization.trigger=messages:6;messages:6,tokens:100000", "--grid",
            "summarization.keep=messages:2,messages:4", "--executor", "serial", "--json"]
    assert main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["grid"] == {"summarization.trigger": ["messages:6", "messages:6,tokens:100000"],
                           "summarization.keep": ["messages:2", "messages:4"]}
    assert [p["overrides"] for p in doc["points"]][1] == ["summarization.trigger=messages:6",
                                                          "summarization.keep=messages:4"]
    assert doc["replays"] == 4 and doc["threads"] == ["needle-hand"]
    assert [p["compactions"] for p in doc["points"]] == [1, 2, 1, 2]
    assert [p["summarizer_calls"] for p in doc["points"]] == [1, 2, 1, 2]


def test_sweep_table_and_errors(thread_file: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", thread_file, "--set", "tokens.counter=approximate", "--grid",
                 "summarization.keep=messages:2,messages:4", "--executor", "serial"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("2 points x 1 thread = 2 replays (serial, 1 worker, ")
    assert main(["sweep", thread_file, "--grid", "summarization.nope=1,2"]) == 2
    assert "ctxi sweep: error: summarization.nope: unknown key" in capsys.readouterr().err
    assert main(["eval", "needle", thread_file, "--stress", "2"]) == 2
    assert "stress fraction must be between 0 and 1" in capsys.readouterr().err


def test_sweep_pareto_axes(thread_file: str, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["sweep", thread_file, "--set", "tokens.counter=approximate", "--executor", "serial", "--grid",
            "summarization.trigger=messages:6,messages:8", "--pareto", "survival,recovery_calls", "--json"]
    assert main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["pareto_axes"] == ["survival", "recovery_calls"]
    assert all("survival" in p and "recovery_calls" in p for p in doc["points"])
    assert main(["sweep", thread_file, "--grid", "summarization.trigger=messages:6", "--pareto", "speed,peak"]) == 2
    err = capsys.readouterr().err
    assert "unknown Pareto axis 'speed'" in err and len(err.strip().splitlines()) == 1
