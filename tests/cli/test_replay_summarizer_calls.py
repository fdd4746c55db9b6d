"""`ctxi replay` counts the source agent's recorded compaction calls: in its summary line, and in the JSON
report as `totals.recorded_summarizer_calls` beside `summarizer_calls` (ours alone, as before)."""

from __future__ import annotations

import json

import pytest

from engine.cli.ctxi import main
from tests.conftest import SAMPLES, trace_path

CLAUDE = ("claude-code", "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl")  # compacted once, at step 126
CODEX = ("codex", "agent-sessions-codex-small.SYNTHETIC.jsonl")  # six recorded compactions
BOTH = ["--preset", "as-recorded", "--set", "order=[recorded, summarization]", "--set", "summarization.enabled=true",
        "--set", "summarization.trigger=messages:5"]


def _summarizer_line(out: str) -> str:
    [line] = [x for x in out.splitlines() if x.startswith("summarizer ")]
    return line


def _summarizer_totals(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    assert main(["replay", *args, "--json", "--no-views"]) == 0
    totals = json.loads(capsys.readouterr().out)["totals"]
    keys = list(totals)
    assert keys.index("recorded_summarizer_calls") == keys.index("summarizer_calls") + 1
    return {k: v for k, v in totals.items() if "summarizer" in k}


def test_a_recorded_session_says_the_call_is_the_agents(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(trace_path(*CLAUDE))
    assert main(["replay", path]) == 0  # as recorded: the thread recorded its usage
    out = capsys.readouterr().out
    assert _summarizer_line(out) == "summarizer   1 call (recorded, by the agent); no summarizer of ours ran"
    assert _summarizer_totals([path], capsys) == {
        "summarizer": "none", "summarizer_calls": 0, "recorded_summarizer_calls": 1, "summarizer_input_tokens": 0}


def test_a_run_with_both_says_whose_is_whose(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(trace_path(*CODEX))
    assert main(["replay", path, *BOTH]) == 0
    assert _summarizer_line(capsys.readouterr().out) == (
        "summarizer   7 calls: 6 recorded, by the agent; ours offline: 1 call, 993 input tokens")
    assert _summarizer_totals([path, *BOTH], capsys) == {
        "summarizer": "offline", "summarizer_calls": 1, "recorded_summarizer_calls": 6, "summarizer_input_tokens": 993}


@pytest.mark.parametrize(("name", "line", "calls", "tokens"), [
    ("deepagents", "summarizer   offline: 0 calls, 0 input tokens", 0, 0),
    ("stress", "summarizer   offline: 2 calls, 17,314 input tokens", 2, 17314),
])
def test_a_what_if_counts_our_summarizer_as_before(capsys: pytest.CaptureFixture[str], name: str, line: str,
                                                   calls: int, tokens: int) -> None:
    path = str(SAMPLES / "first-look.json")
    assert main(["replay", path, "--preset", name]) == 0
    assert _summarizer_line(capsys.readouterr().out) == line
    assert _summarizer_totals([path, "--preset", name], capsys) == {
        "summarizer": "offline", "summarizer_calls": calls, "recorded_summarizer_calls": 0,
        "summarizer_input_tokens": tokens}
