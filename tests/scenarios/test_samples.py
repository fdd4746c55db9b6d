"""The committed sample library: it loads, it is large where promised, and its README matches the files."""

from __future__ import annotations

import re

import pytest

from engine.config.schema import preset
from engine.formats import load_thread
from engine.run.replay import replay
from engine.scenarios import get_scenario, scenario_names
from engine.scenarios.build_samples import raw_tokens, readme
from engine.tokens.counters import get_counter
from tests.conftest import SAMPLES

ROW = re.compile(r"^\| `([^`]+)` \| ([a-z-]+) \| (\d+) \| ([\d,]+) \|")


def sample_rows() -> list[tuple[str, str, int, int]]:
    path = SAMPLES / "README.md"
    if not path.is_file():
        pytest.skip("sample_threads/README.md not present")
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        m = ROW.match(line)
        if m:
            rows.append((m.group(1), m.group(2), int(m.group(3)), int(m.group(4).replace(",", ""))))
    return rows


def test_every_scenario_has_a_sample_and_every_file_is_in_the_table() -> None:
    rows = sample_rows()
    assert {r[1] for r in rows} == set(scenario_names())
    assert sorted(r[0] for r in rows) == sorted(p.name for p in SAMPLES.glob("*.json"))
    assert sum(SAMPLES.joinpath(r[0]).stat().st_size for r in rows) < 15 * 2**20


def test_samples_load_and_match_the_table() -> None:
    counter = get_counter("o200k_base")
    big = 0
    for name, scenario, steps, tokens in sample_rows():
        thread = load_thread(str(SAMPLES / name))
        assert len(thread.ai_indices()) == steps
        assert raw_tokens(thread, counter) == tokens
        assert thread.model == f"scenario:{scenario}"
        big += tokens > 150_000
    assert big >= 2


@pytest.mark.parametrize("name", ["code-analysis.json", "long-refactor.json", "interrupted.json",
                                  "research-report.json"])
def test_samples_exercise_their_layers(name: str) -> None:
    path = SAMPLES / name
    if not path.is_file():
        pytest.skip(f"{path} not present")
    thread = load_thread(str(path))
    scenario = get_scenario(thread.extra["scenario"]["name"])
    run = replay(thread, scenario.lesson_config())
    acted = {e.layer for e in run.events}
    assert set(scenario.layers) <= acted


def test_readme_table_is_computed() -> None:
    from engine.scenarios.build_samples import SampleRow

    text = readme([SampleRow("x.json", "needle", 3, 1234, 0, 0, "deerflow", {"summarization.summarize": 2})])
    assert text.splitlines()[-1] == ("| `x.json` | needle | 3 | 1,234 | — | deerflow | "
                                     "**summarization** (summarize ×2) |")


def test_the_tight_window_sample_reaches_the_presets_own_triggers() -> None:
    """A sample past 85 % of its window, so the deepagents preset's defaults act (the others stay far below)."""
    thread = load_thread(SAMPLES / "tight-window.json")
    assert thread.max_input_tokens == 32_000
    run = replay(thread, preset("deepagents"))
    kinds = run.events_by_kind()
    assert kinds["summarization.summarize"] >= 1 and kinds["filesystem.truncate_args"] >= 1
    assert kinds["filesystem.offload"] >= 1
    summary = next(e for e in run.events if e.kind == "summarize")
    assert summary.payload["trigger"] == "fraction:0.85" and summary.payload["mode"] == "view"
    assert run.files.paths() and any(p.startswith("/conversation_history/session_") for p in run.files.paths())
