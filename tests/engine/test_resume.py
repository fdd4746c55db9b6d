"""A re-run resumed from an earlier run's checkpoint is the run a full replay makes, byte for byte.

Over every thread in the samples and ../shared/traces (skipped when absent) and a synthetic thread,
under every preset (a rotating third of them per shared trace: `presets_for`), for a grid of edits per preset: triggers moved to levels the run measured early,
mid-thread and late (so the first change falls at different steps), keeps, summary settings, a cost
setting (nothing changes), and edits no rule bounds (a full replay). Checkpoints are taken every 2
steps here (64 in use) so the short real sessions resume from many points; `CTXI_VERIFY_CHECKPOINTS`
checks that no list a checkpoint holds was written below its length afterwards.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.base.errors import ConfigError
from engine.config.presets import PRESETS
from engine.config.schema import EngineConfig, preset
from engine.formats import load_thread
from engine.layers.checkpoint import VERIFY_ENV
from engine.run import driver
from engine.run.replay import replay
from engine.run.run import Run
from engine.thread.kinds import message_kind
from engine.thread.model import Thread
from engine.thread.synthetic import synthetic_thread
from tests.conftest import SAMPLES, TRACES

_SKIP_PARTS = ("subagents",)


def _thread_files() -> list[Path]:
    files = sorted(SAMPLES.glob("*.json"))
    if TRACES.is_dir():
        files += sorted(p for p in TRACES.rglob("*") if p.is_file() and p.name != "SOURCE.txt"
                        and not p.name.startswith("LICENSE") and not any(s in p.parts for s in _SKIP_PARTS))
    return files


def report_of(run: Run) -> str:
    """Everything a replay is judged by: the report (steps, events, files, totals) with each step's view
    as the report lists it (id, role, kind, tokens of every message: hashed per step, each message read
    once), the files' contents, each step's state, the final state, what the layers recorded."""
    doc: dict[str, Any] = run.to_report(include_views=False)
    seen: dict[int, tuple[Any, ...]] = {}

    def entry(m: Any) -> tuple[Any, ...]:
        hit = seen.get(id(m))
        if hit is None or hit[0] is not m:
            hit = seen[id(m)] = (m, m.id, m.type, message_kind(m), run.counter.count_message(m))
        return hit[1:]

    for step, record in zip(doc["steps"], run.steps, strict=True):
        system = entry(record.system) if record.system is not None else None
        step["view_digest"] = hash((system, tuple(entry(m) for m in record.view)))
    doc["file_contents"] = run.files.to_dict()
    doc["states"] = [[len(s.state), s.state[-1].id if len(s.state) else None] for s in run.steps]
    doc["final_state"] = [[m.id, str(m.content)] for m in run.final_state]
    doc["checks"] = {k: [list(c) for c in v] for k, v in run.checks.items()}
    doc["summarizer"] = [run.summarizer_name, run.summarizer_calls, run.summarizer_input_tokens]
    return json.dumps(doc, sort_keys=True, default=str)


def _level(run: Run, layer: str, at: float) -> int | None:
    """A token level the run's `layer` measured at `at` (a fraction of its checks), to move a trigger to."""
    checks = run.checks.get(layer) or []
    if not checks:
        return None
    check = checks[min(len(checks) - 1, int(len(checks) * at))]
    return int(check.tokens if layer == "summarization" else check.request_tokens) + 1


def edits_for(run: Run) -> list[list[str]]:
    """Edits whose first change falls early, mid-thread, late, never, or cannot be bounded."""
    config = run.config
    out: list[list[str]] = [["cost.cache=none"], ["filesystem.tool_result_token_limit=300"]]
    layers = set(run.layer_names)
    if "summarization" in layers:
        for at in (0.1, 0.5, 0.9):
            level = _level(run, "summarization", at)
            if level is not None:
                out.append([f"summarization.trigger=tokens:{level}"])
        out.append(["summarization.keep=messages:3"])
        out.append(["summarization.trim_tokens_to_summarize=300"])
        if config.summarization.trigger:
            out.append(["summarization.trigger=none"])
    if "compaction" in layers:
        for at in (0.2, 0.6, 0.95):
            level = _level(run, "compaction", at)
            if level is not None:
                out.append([f"compaction.trigger=tokens:{level}"])
        out.append(["compaction.restore_files=1"])
        out.append(["compaction.keep_first=2"])
    return out


@pytest.fixture(autouse=True)
def _dense_checkpoints(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(driver, "CHECKPOINT_EVERY", 2)
    monkeypatch.setenv(VERIFY_ENV, "1")


def _replay_or_error(thread: Thread, config: EngineConfig, **kwargs: Any) -> Run | str:
    try:
        return replay(thread, config, **kwargs)
    except ConfigError as exc:  # an edit the preset refuses (e.g. a keep unit a policy does not take)
        return f"ConfigError: {exc}"


# The shared traces (~30 files) each run a rotating third of the presets (every preset still runs on
# about ten of them, and every preset on every sample and the synthetic thread): the whole grid on
# every trace took ~80 s CPU, a tenth of the suite's budget on its own.
TRACE_PRESETS_EVERY = 3


def presets_for(index: int | None) -> list[str]:
    """Every preset, or for the `index`-th shared trace a rotating third of them."""
    names = list(PRESETS)
    if index is None:
        return names
    return [n for k, n in enumerate(names) if (k + index) % TRACE_PRESETS_EVERY == 0]


def check_thread(thread: Thread, presets: list[str] | None = None) -> tuple[int, int]:
    """Every preset (or `presets`) and edit; returns (cases, resumed cases)."""
    cases = resumed = 0
    for name in presets if presets is not None else PRESETS:
        base = preset(name)
        first = replay(thread, base)
        for edit in edits_for(first):
            try:
                config = base.with_overrides(edit)
            except ConfigError:
                continue
            full = _replay_or_error(thread, config)
            again = _replay_or_error(thread, config, previous=first)
            assert isinstance(full, str) == isinstance(again, str), (name, edit, full, again)
            cases += 1
            if isinstance(full, str):
                continue
            assert isinstance(again, Run)
            resumed += again.resumed_from is not None
            assert report_of(again) == report_of(full), f"{thread.thread_id} {name} {edit}: resumed from " \
                                                         f"step {again.resumed_from} differs from a full replay"
            back = replay(thread, base, previous=again)  # and back: a resumed run's checkpoints serve too
            assert report_of(back) == report_of(first), f"{thread.thread_id} {name} {edit} and back"
    return cases, resumed


def _cases() -> list[tuple[Path, int | None]]:
    """(file, None) for the samples: every preset; (file, its index) for a shared trace: a rotating third."""
    out: list[tuple[Path, int | None]] = []
    traces = 0
    for path in _thread_files():
        if path.is_relative_to(SAMPLES):
            out.append((path, None))
        else:
            out.append((path, traces))
            traces += 1
    return out


@pytest.mark.parametrize(("path", "index"), _cases(), ids=lambda v: v.name if isinstance(v, Path) else str(v))
def test_resumed_runs_equal_full_replays_on_real_threads(path: Path, index: int | None) -> None:
    thread = load_thread(path)
    cases, _ = check_thread(thread, presets_for(index))
    assert cases > 0


def test_resumed_runs_equal_full_replays_on_a_synthetic_thread() -> None:
    cases, resumed = check_thread(synthetic_thread(100, seed=3))
    # the grid moves triggers to levels measured mid-thread and late: those re-runs resume
    assert resumed >= 20, (cases, resumed)
