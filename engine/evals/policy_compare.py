"""Several agents' context policies on the same thread, side by side (the Compare page, `ctxi sweep --grid preset=`).

`compare_policies(runs, baseline)` takes one replay per preset of the same thread (and the as-recorded
run when the thread recorded what it sent) and returns one row per run: the peak request, where and
how often it compacted, the input tokens it saved and sent, needle retention, what the
summarizer cost, what the compactions kept of the history they removed, what the agent fetched again
afterwards (recorded on the as-recorded run, an estimate for a policy's), and what the cache misses cost. `policy_runs(thread, names)` makes those replays (the dashboard passes its cached
ones instead).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine.config.presets import AGENT_PRESETS
from engine.config.schema import preset
from engine.evals.sweep import run_metrics
from engine.run.replay import replay
from engine.run.run import Run
from engine.run.whatif import against_baseline, compaction_steps, has_recorded_baseline
from engine.thread.model import Thread

# What the Compare page offers by default: three coding agents and Deep Agents.
DEFAULT_COMPARE: tuple[str, ...] = ("claude-code", "codex", "gemini-cli", "deepagents")
COMPARABLE: tuple[str, ...] = (*AGENT_PRESETS, "deepagents", "langchain", "deerflow")


def policy_runs(thread: Thread, names: Sequence[str] = DEFAULT_COMPARE) -> dict[str, Run]:
    return {name: replay(thread, preset(name)) for name in names}


def compare_policies(runs: Mapping[str, Run], baseline: Run | None = None,
                     needles: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """One row per run (the as-recorded baseline first when given), in the order of `runs`."""
    rows: list[dict[str, Any]] = []
    ordered = ([("as-recorded", baseline)] if baseline is not None else []) + list(runs.items())
    for name, run in ordered:
        m = run_metrics(run, list(needles) if needles else None)
        steps = compaction_steps(run)
        row: dict[str, Any] = {
            "policy": name,
            "peak view tokens": m["peak_view_tokens"],
            "peak % of window": round(100 * m["peak_view_fraction"], 1) if m["peak_view_fraction"] is not None else None,
            "compactions": len(steps),
            "compaction steps": ", ".join(map(str, steps[:8])) + (" …" if len(steps) > 8 else ""),
            "tokens saved": m["tokens_saved"],
            "input tokens sent": sum(s.view_tokens for s in run.steps),
            "needle retention": m["retention"],
            "summarizer calls": m["summarizer_calls"],
            "agent calls (recorded)": m["recorded_summarizer_calls"],  # the source agent's own compaction calls
            "summarizer input tokens": m["summarizer_input_tokens"],
            # what the compactions kept and cost afterwards (engine.evals.survival, engine.evals.recovery)
            "facts kept": m["survival"],
            "re-fetches": m["recovery_calls"],
            "re-fetch tokens": m["recovery_tokens"],
            # what the misses cost (engine.cost.run_cost's lost_by_cause): a compaction charged what it made the cache
            # write again, as on its card and in its net; the tokens are the cached tokens not read, a count
            "cache misses $": m["cache_lost_dollars"],
            "cache misses by cause (tokens not read)": " · ".join(f"{c} {n:,}" for c, n in m["cache_lost_tokens"].items()) or "-",
        }
        if baseline is not None and run is not baseline:
            row["first compaction vs recorded"] = first_shift(against_baseline(run, baseline).shifts)
        elif baseline is not None:
            row["first compaction vs recorded"] = "—"
        rows.append(row)
    return rows


def first_shift(shifts: Sequence[tuple[int | None, int | None]]) -> str:
    """Where the first compaction moved against the recorded one, in words."""
    if not shifts:
        return "neither compacts"
    recorded, mine = shifts[0]
    if recorded is None:
        return f"step {mine}, where the agent never compacted"
    if mine is None:
        return f"never (recorded at step {recorded})"
    moved = mine - recorded
    return f"same step ({mine})" if moved == 0 else f"{moved:+d} steps (step {mine} vs {recorded})"


def compare_thread(thread: Thread, names: Sequence[str] = DEFAULT_COMPARE,
                   needles: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """`compare_policies` on fresh replays (the CLI's and tests' entry point)."""
    baseline = replay(thread, preset("as-recorded")) if has_recorded_baseline(thread) else None
    return compare_policies(policy_runs(thread, names), baseline, needles)
