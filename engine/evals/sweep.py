"""Settings sweeps: replay threads over the cartesian product of config values, in parallel.

`sweep(threads, base, {"summarization.trigger": ["tokens:20000", "tokens:40000"], ...})` replays
every thread with every point of the grid and reports per point the peak view tokens, the needle
retention and goal-drift scores, the summarizer's calls and input tokens (and, apart, the compaction calls the
source agent made: `recorded_summarizer_calls`), the dollars and prompt-cache
hit rate (engine.cost.run_cost), and events per layer; points on the Pareto front (min peak view tokens, max
retention, min cost: dollars when the model is priced, else summarizer input tokens) are marked. Executors: a local process pool (default, all cores), "serial", or Ray (optional extra).
Tasks go out one thread at a time (every grid point of it), each with only its own thread.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.base.errors import ConfigError
from engine.config.presets import PRESETS
from engine.config.schema import EngineConfig, preset
from engine.config.sizes import AllOf, ContextSize
from engine.thread.model import Thread

SWEEP_SCHEMA = "context-inspector/sweep"
SWEEP_VERSION = 1
EXECUTORS: tuple[str, ...] = ("process", "serial", "ray")
PLACEMENT_TIMEOUT_S = 120.0  # how long a Ray sweep waits for the cluster's CPUs
RELEASE_WAIT_S = 2.0  # how long a joined cluster's placement group waits for its workers before it is removed
Task = tuple[int, int, tuple[str, ...]]  # (point index, thread index, overrides)
# (point, thread, metrics, CPU seconds in the worker, the thread's needles)
Outcome = tuple[int, int, dict[str, Any], float, list[str]]
Progress = Callable[[int, int], None]


# -- the grid --------------------------------------------------------------------------------
def parse_grid_arg(text: str) -> tuple[str, list[str]]:
    """`KEY=V1,V2` -> (KEY, [V1, V2]); with any ';' present, ';' separates values instead.

    A trigger value may itself be a list of clauses (`tokens:30000,messages:50`), so
    `summarization.trigger=tokens:30000,messages:50;tokens:60000` is two points.
    """
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ConfigError(f"expected KEY=V1,V2,..., got {text!r}", key="--grid")
    separator = ";" if ";" in raw else ","
    values = [v.strip() for v in raw.split(separator) if v.strip()]
    if not values:
        raise ConfigError(f"no values given for {key}", key="--grid")
    return key, values


def grid_from_args(items: Iterable[str]) -> dict[str, list[str]]:
    grid: dict[str, list[str]] = {}
    for item in items:
        key, values = parse_grid_arg(item)
        if key in grid:
            raise ConfigError(f"{key} is given twice", key="--grid")
        grid[key] = values
    return grid


def override_value(value: Any) -> str:
    """A grid value as the text of a `--set KEY=VALUE` override."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (ContextSize, AllOf)):
        return str(value)
    if isinstance(value, (list, tuple)):
        return ",".join(override_value(v) for v in value)
    return str(value)


@dataclass(frozen=True)
class SweepPoint:
    """One combination of grid values."""

    index: int
    values: tuple[tuple[str, str], ...]  # (key, value as an override string), in grid order

    @property
    def overrides(self) -> tuple[str, ...]:
        return tuple(f"{k}={v}" for k, v in self.values)

    @property
    def label(self) -> str:
        return " · ".join(f"{k.rsplit('.', 1)[-1]}={v}" for k, v in self.values) or "base"

    def config(self, base: EngineConfig) -> EngineConfig:
        return point_config(base, self.overrides)


# Settings a `preset=` grid value brings with it, which the base config's own changes do not replace.
_PRESET_OWNED = frozenset({"preset", "order"})


def point_config(base: EngineConfig, overrides: Sequence[str]) -> EngineConfig:
    """The config of one grid point: `base` with `overrides`; a `preset=NAME` override starts from that
    preset instead (`--grid preset=claude-code,codex` compares agents' policies on the same threads),
    keeping what the base config changed from its own preset (`--set` values) and the other grid values."""
    chosen = [o for o in overrides if o.partition("=")[0].strip() == "preset"]
    if not chosen:
        return base.with_overrides(list(overrides))
    name = chosen[-1].partition("=")[2].strip()
    from engine.config.settings import setting_text

    own = base_preset(base).diff(base)
    kept = [f"{k}={setting_text(k, b)}" for k, (_, b) in own.items() if k.split(".", 1)[0] not in _PRESET_OWNED]
    rest = [o for o in overrides if o not in chosen]
    return preset(name).with_overrides([*kept, *rest])


def base_preset(config: EngineConfig) -> EngineConfig:
    return preset(config.preset) if config.preset in PRESETS else EngineConfig()


def grid_points(grid: Mapping[str, Sequence[Any]]) -> list[SweepPoint]:
    """The cartesian product, first key slowest; an empty grid is one point (the base config)."""
    keys = list(grid)
    for k in keys:
        if isinstance(grid[k], (str, bytes)) or not grid[k]:
            raise ConfigError("a grid entry needs a non-empty list of values", key=k)
    combos = itertools.product(*[[override_value(v) for v in grid[k]] for k in keys])
    return [SweepPoint(i, tuple(zip(keys, combo, strict=True))) for i, combo in enumerate(combos)]


# -- metrics of one replay -------------------------------------------------------------------
def run_metrics(run: Any, needles: Sequence[str] | None = None) -> dict[str, Any]:
    """What a sweep records for one replay (also what a single replay is compared with)."""
    from engine.cost.run_cost import run_cost
    from engine.evals import goal_drift, needle_retention
    from engine.evals.recovery import recovery
    from engine.evals.survival import run_survival_totals, survival
    from engine.views.timeline import recorded_compaction_calls

    totals = run.totals()
    priced = run_cost(run, accounts=False)
    cost = priced.totals()
    needle = needle_retention(run, list(needles) if needles else None)
    drift = goal_drift(run)
    kept = run_survival_totals(survival(run, files=False))
    refetched = recovery(run)
    lost = cost["lost_by_cause"]
    return {
        "thread_id": run.thread.thread_id,
        "steps": totals["steps"],
        "window_tokens": totals["window_tokens"],
        "peak_view_tokens": totals["peak_view_tokens"],
        "peak_view_fraction": totals["peak_view_fraction"],
        "tokens_saved": totals["tokens_saved"],
        "retention": needle.score,
        "recovery": needle.recovery_score,
        "drift": drift.score,
        "drift_flagged_steps": len(drift.flagged_steps),
        "placeholder_steps": len(drift.placeholder_steps),
        "compactions": len(needle.compactions),
        "summarizer_calls": totals["summarizer_calls"],  # our summarizer's (0 on an as-recorded run)
        # the model calls the source agent made to write its recorded compactions' summaries (what the Timeline's
        # "Summarizer calls" tile counts "by the agent (recorded)"; engine.views.timeline.recorded_compaction_calls)
        "recorded_summarizer_calls": len(recorded_compaction_calls(run)),
        "summarizer_input_tokens": totals["summarizer_input_tokens"],
        # an unpriced model has no dollars (None, shown "n/a"), not $0: a zero would win every cost column
        "dollars": cost["dollars"] if priced.price is not None else None,
        "input_tokens": cost["input_tokens"],
        "cache_read_tokens": cost["cache_read_tokens"],
        "cache_write_tokens": cost["cache_write_tokens"],
        "hit_rate": cost["hit_rate"],
        # what the compactions kept of the history they removed, and what the agent fetched again
        # (engine.evals.survival, engine.evals.recovery: recorded, or an estimate for a simulated compaction)
        "survival": kept["rate"],
        "survival_facts": kept["facts_total"],
        "survival_kept": kept["facts_kept"],
        "survival_by_class": {c: {"kept": v["kept"], "total": v["total"]} for c, v in kept["classes"].items()},
        "recovery_calls": sum(r.calls for r in refetched),
        "recovery_tokens": sum(r.tokens for r in refetched),
        "recovery_dollars": round(sum(r.dollars for r in refetched), 6) if priced.price is not None else None,
        # what the cache misses cost, by cause (engine.cost.run_cost's lost_by_cause): the cached tokens not read (a
        # count), the tokens written again because of them and their dollars — a compaction charged what its account
        # charges (what it made the cache write again), not its replaced history, which is never sent again
        "cache_lost_tokens": {c: v["tokens"] for c, v in lost.items()},
        "cache_written_again_tokens": {c: v["tokens_written_again"] for c, v in lost.items()},
        "cache_lost_dollars": round(sum(v["dollars"] for v in lost.values()), 6) if priced.price is not None else None,
        "events": totals["events"],
        "events_by_layer": totals["events_by_layer"],
        "warnings": totals["warnings"],
    }


def _sum_or_none(values: Iterable[float | None]) -> float | None:
    listed = list(values)
    return None if any(v is None for v in listed) else round(sum(v for v in listed if v is not None), 6)


def _mean(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(sum(present) / len(present), 4) if present else None


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def aggregate(per_thread: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One point over many threads: peaks are maxima, scores means, costs and counts sums."""
    events: dict[str, int] = {}
    for m in per_thread:
        for layer, n in m["events_by_layer"].items():
            events[layer] = events.get(layer, 0) + n
    return {
        "peak_view_tokens": max(m["peak_view_tokens"] for m in per_thread),
        "peak_view_fraction": max((m["peak_view_fraction"] or 0.0) for m in per_thread),
        "tokens_saved": sum(m["tokens_saved"] for m in per_thread),
        "retention": _mean(m["retention"] for m in per_thread),
        "recovery": _mean(m["recovery"] for m in per_thread),
        "drift": _mean(m["drift"] for m in per_thread),
        "drift_flagged_steps": sum(m["drift_flagged_steps"] for m in per_thread),
        "compactions": sum(m["compactions"] for m in per_thread),
        "summarizer_calls": sum(m["summarizer_calls"] for m in per_thread),
        "recorded_summarizer_calls": sum(m["recorded_summarizer_calls"] for m in per_thread),
        "summarizer_input_tokens": sum(m["summarizer_input_tokens"] for m in per_thread),
        "dollars": (None if any(m["dollars"] is None for m in per_thread)
                    else round(sum(m["dollars"] for m in per_thread), 6)),
        "input_tokens": sum(m["input_tokens"] for m in per_thread),
        "cache_read_tokens": sum(m["cache_read_tokens"] for m in per_thread),
        "cache_write_tokens": sum(m["cache_write_tokens"] for m in per_thread),
        "hit_rate": _ratio(sum(m["cache_read_tokens"] for m in per_thread), sum(m["input_tokens"] for m in per_thread)),
        "survival": _ratio(sum(m["survival_kept"] for m in per_thread), sum(m["survival_facts"] for m in per_thread)),
        "survival_facts": sum(m["survival_facts"] for m in per_thread),
        "survival_kept": sum(m["survival_kept"] for m in per_thread),
        "survival_by_class": {c: {"kept": sum(m["survival_by_class"][c]["kept"] for m in per_thread),
                                  "total": sum(m["survival_by_class"][c]["total"] for m in per_thread)}
                              for c in per_thread[0]["survival_by_class"]},
        "recovery_calls": sum(m["recovery_calls"] for m in per_thread),
        "recovery_tokens": sum(m["recovery_tokens"] for m in per_thread),
        "recovery_dollars": _sum_or_none(m["recovery_dollars"] for m in per_thread),
        "cache_lost_tokens": _merge(m["cache_lost_tokens"] for m in per_thread),
        "cache_written_again_tokens": _merge(m["cache_written_again_tokens"] for m in per_thread),
        "cache_lost_dollars": _sum_or_none(m["cache_lost_dollars"] for m in per_thread),
        "events": sum(m["events"] for m in per_thread),
        "events_by_layer": dict(sorted(events.items())),
        "warnings": sum(m["warnings"] for m in per_thread),
    }


def _merge(counts: Iterable[Mapping[str, int]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in counts:
        for k, v in c.items():
            out[k] = out.get(k, 0) + v
    return dict(sorted(out.items()))


# -- results ---------------------------------------------------------------------------------
@dataclass
class PointResult:
    point: SweepPoint
    metrics: dict[str, Any]  # aggregated over threads
    threads: list[dict[str, Any]]  # per thread, in the order the threads were given
    pareto: bool = False
    cpu_s: float = 0.0  # replay + evals, measured in the worker (not part of the compared numbers)

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.point.index, "label": self.point.label, "overrides": list(self.point.overrides),
                "values": dict(self.point.values), **self.metrics, "pareto": self.pareto,
                "cpu_s": round(self.cpu_s, 3), "threads": self.threads}


def cost_axis(metrics: Sequence[Mapping[str, Any]]) -> str:
    """The Pareto front's cost objective: `dollars` when the runs are priced, else `summarizer_input_tokens`."""
    priced = all(m.get("dollars") is not None for m in metrics) and any(m.get("dollars") for m in metrics)
    return "dollars" if priced else "summarizer_input_tokens"


# The metrics a Pareto front can be drawn on, and which way is better. `cost` is `cost_axis`'s choice.
PARETO_AXES: dict[str, str] = {
    "peak_view_tokens": "min", "retention": "max", "recovery": "max", "drift": "max", "survival": "max",
    "recovery_calls": "min", "recovery_tokens": "min", "recovery_dollars": "min", "cache_lost_dollars": "min",
    "dollars": "min", "summarizer_input_tokens": "min", "compactions": "min", "tokens_saved": "max", "cost": "min",
}
DEFAULT_PARETO: tuple[str, ...] = ("peak_view_tokens", "retention", "cost")


def check_pareto_axes(axes: Sequence[str]) -> tuple[str, ...]:
    """The axes, checked: at least two known names, each once."""
    unknown = [a for a in axes if a not in PARETO_AXES]
    if unknown:
        raise ConfigError(f"unknown Pareto axis {unknown[0]!r}; choose from {', '.join(PARETO_AXES)}", key="pareto")
    if len(set(axes)) < 2:
        raise ConfigError("a Pareto front needs at least two different axes", key="pareto")
    return tuple(dict.fromkeys(axes))


def _objectives(m: Mapping[str, Any], cost: str, axes: Sequence[str] = DEFAULT_PARETO) -> tuple[float, ...]:
    # all minimized. A score of None (no needle, or no compaction: the same for every point) is neutral (1.0);
    # dollars of an unpriced run count 0 for every point.
    out: list[float] = []
    for axis in axes:
        key = cost if axis == "cost" else axis
        value = m.get(key)
        if PARETO_AXES[axis] == "max":
            out.append(-(1.0 if value is None else float(value)))
        else:
            out.append(0.0 if value is None else float(value))
    return tuple(out)


def pareto_indices(metrics: Sequence[Mapping[str, Any]], cost: str | None = None,
                   axes: Sequence[str] = DEFAULT_PARETO) -> list[int]:
    """Indices of the points no other point dominates on `axes` (default: min peak, max retention, min cost:
    see `cost_axis`)."""
    axis = cost or cost_axis(metrics)
    objs = [_objectives(m, axis, axes) for m in metrics]
    front = []
    for i, a in enumerate(objs):
        dominated = any(all(x <= y for x, y in zip(b, a, strict=True)) and b != a for j, b in enumerate(objs) if j != i)
        if not dominated:
            front.append(i)
    return front


@dataclass
class SweepResult:
    base_config: EngineConfig
    grid: dict[str, list[str]]
    thread_ids: list[str]
    needles: list[list[str]]  # per thread
    points: list[PointResult]
    executor: str
    workers: int
    elapsed_s: float = 0.0
    pareto_axes: tuple[str, ...] = DEFAULT_PARETO
    replays: int = field(init=False, default=0)

    @property
    def cpu_s(self) -> float:
        return sum(p.cpu_s for p in self.points)

    def __post_init__(self) -> None:
        self.replays = len(self.points) * len(self.thread_ids)

    @property
    def pareto_front(self) -> list[PointResult]:
        return [p for p in self.points if p.pareto]

    def config_for(self, index: int) -> EngineConfig:
        return self.points[index].point.config(self.base_config)

    def with_pareto(self, axes: Sequence[str]) -> SweepResult:
        """The same points with the front drawn on other axes (nothing is replayed)."""
        axes = check_pareto_axes(axes)
        front = set(pareto_indices([p.metrics for p in self.points], axes=axes))
        points = [PointResult(p.point, p.metrics, p.threads, i in front, p.cpu_s) for i, p in enumerate(self.points)]
        return SweepResult(self.base_config, self.grid, self.thread_ids, self.needles, points, self.executor,
                           self.workers, self.elapsed_s, axes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SWEEP_SCHEMA,
            "version": SWEEP_VERSION,
            "base_config": self.base_config.to_dict(),
            "grid": self.grid,
            "threads": self.thread_ids,
            "needles": self.needles,
            "executor": self.executor,
            "workers": self.workers,
            "replays": self.replays,
            "elapsed_s": round(self.elapsed_s, 3),
            "cpu_s": round(self.cpu_s, 3),
            "pareto": [p.point.index for p in self.pareto_front],
            "pareto_axes": list(self.pareto_axes),
            "pareto_cost": cost_axis([p.metrics for p in self.points]),
            "points": [p.to_dict() for p in self.points],
        }


# -- workers ---------------------------------------------------------------------------------
def _by_thread(tasks: list[Task], threads: Sequence[Thread], workers: int = 1) -> list[list[Task]]:
    """The tasks in batches of one thread each, the longest threads first.

    A worker replays every grid point of a thread in a row, so the counts it caches on the thread's
    messages serve every point (as they do in a serial sweep; spread point by point, every worker counted
    every thread: 30 % more CPU than serial over 100 threads). Longest first: the last batches handed out
    are the short ones, so the workers finish together (longest-processing-time-first scheduling).
    With fewer than two threads per worker (one thread, many points: the Evals page's usual sweep), each
    thread's points are dealt into `ceil(2 * workers / threads)` batches, so no worker sits idle; each
    batch counts its thread once."""
    batches: dict[int, list[Task]] = {}
    for task in tasks:
        batches.setdefault(task[1], []).append(task)
    per_thread = -(-2 * workers // len(batches)) if 1 < workers and len(batches) < 2 * workers else 1
    dealt = [chunk for batch in batches.values()
             for chunk in (batch[i::per_thread] for i in range(min(per_thread, len(batch))))]
    return sorted(dealt, key=lambda b: -len(threads[b[0][1]].messages))


def _evaluate_in(state: Mapping[str, Any], task: Task) -> Outcome:
    from engine.run.replay import replay

    started = time.process_time()
    point, ti, overrides = task
    needles = state["needles"][ti]
    if needles is None:  # picked where the thread is replayed, once (not serially before the sweep)
        from engine.evals import pick_needles

        needles = state["needles"][ti] = pick_needles(state["threads"][ti])
    config = point_config(state["base"], overrides)
    run = replay(state["threads"][ti], config)
    metrics = run_metrics(run, needles)
    return point, ti, metrics, time.process_time() - started, list(needles)


def _evaluate_thread(thread: Thread, needles: Sequence[str] | None, base: EngineConfig,
                     batch: list[Task]) -> list[Outcome]:
    """Every task of one thread's batch, in a worker that was handed only that thread.

    A task carries its own thread (pickled: ~1.2 ms for a 124-message thread, the messages' cached
    counts with it), so a worker builds nothing it does not replay. Handing every worker every thread
    as one JSON payload cost 1.2 s of a 9 s sweep over 100 threads (serialized here, parsed in each
    worker), when the whole sweep's replays cost 13 s of CPU."""
    ti = batch[0][1]
    state = {"threads": {ti: thread}, "needles": {ti: needles}, "base": base}
    return [_evaluate_in(state, task) for task in batch]


def default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _mp_context() -> multiprocessing.context.BaseContext:
    # forkserver: workers fork from a clean server (safe inside Streamlit's threads) that has
    # imported the engine and built the default encoding once (engine.evals.sweep_preload), so a
    # new pool starts in milliseconds after the first and its workers' first tasks build nothing.
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["engine.evals.sweep", "engine.evals.sweep_preload"])
        return ctx
    return multiprocessing.get_context("spawn")


def _run_process(threads: Sequence[Thread], needles: Sequence[Sequence[str] | None], base: EngineConfig,
                 tasks: list[Task], workers: int, progress: Progress | None) -> list[Outcome]:
    from concurrent.futures import ProcessPoolExecutor, as_completed

    out = []
    with ProcessPoolExecutor(max_workers=workers, mp_context=_mp_context()) as pool:
        futures = [pool.submit(_evaluate_thread, threads[b[0][1]], needles[b[0][1]], base, b)
                   for b in _by_thread(tasks, threads, workers)]
        for fut in as_completed(futures):
            out.extend(fut.result())
            if progress:
                progress(len(out), len(tasks))
    return out


def _run_serial(threads: Sequence[Thread], needles: Sequence[Sequence[str] | None], base: EngineConfig,
                tasks: list[Task], progress: Progress | None) -> list[Outcome]:
    state = {"threads": list(threads), "needles": list(needles), "base": base}
    out = []
    # thread by thread, as the workers do: a thread's second point finds its facts still cached (the
    # survival eval keeps 4 threads', engine/evals/survival.py `_THREAD_FACTS`; in point order 100 threads
    # in between evicted them: 18.4 s against 13.4 s of CPU for 100 threads x 2 points)
    in_order = [task for batch in _by_thread(tasks, threads) for task in batch]
    for done, task in enumerate(in_order, start=1):
        out.append(_evaluate_in(state, task))
        if progress:
            progress(done, len(tasks))
    return out


def _ray_evaluate_chunk(chunk: list[tuple[Thread, Sequence[str] | None, list[Task]]],
                        base: EngineConfig) -> list[Outcome]:
    import engine.evals.sweep_preload  # noqa: F401 - once per Ray worker process: imports, tables, the encoding

    return [outcome for thread, needles, batch in chunk for outcome in _evaluate_thread(thread, needles, base, batch)]


def _guided_chunks(units: list[tuple[Thread, Sequence[str] | None, list[Task]]],
                   workers: int) -> list[list[tuple[Thread, Sequence[str] | None, list[Task]]]]:
    """Thread batches (longest first) grouped into tasks of decreasing size (guided self-scheduling): each
    chunk takes about 1/(4 x workers) of the work still left, weighed as messages x points, and the last
    ones a single batch, so the workers still finish together.

    A Ray task has a fixed cost spread over the driver, the raylet and the worker (submitting, leasing,
    reporting): 100 no-op tasks carrying 1 MB each took 0.43-0.68 s of CPU across those processes, 10
    tasks carrying the same 100 MB 0.15 s (2026-12-05, Ray 2.60, 2 CPUs); with 2 cores, that is time
    the replays do not get. A sweep of 100 threads is about 25 tasks this way, not 100."""
    weights = [len(thread.messages) * len(batch) for thread, _, batch in units]
    left = sum(weights)
    chunks: list[list[tuple[Thread, Sequence[str] | None, list[Task]]]] = []
    i = 0
    while i < len(units):
        goal = left / (4 * workers)
        chunk, weight = [units[i]], weights[i]
        i += 1
        while i < len(units) and weight + weights[i] <= goal:
            chunk.append(units[i])
            weight += weights[i]
            i += 1
        left -= weight
        chunks.append(chunk)
    return chunks


# Ray runs this in every worker process of the job as the process starts, before any task reaches it
# (runtime_env `worker_process_setup_hook`, Ray >= 2.7): the preload, as the process pool's forkserver holds it
RAY_RUNTIME_ENV: dict[str, Any] = {"worker_process_setup_hook": "engine.evals.sweep_preload.preload"}


def ray_init(address: str | None = None, *, num_cpus: int | None = None) -> None:
    """Join the Ray cluster at `address`, or start a local one of `num_cpus` CPUs, with `RAY_RUNTIME_ENV`: every
    worker Ray starts for this process imports the engine as it starts, not in a sweep's first task.

    A process that joins a cluster for several sweeps (`ray.init` before them) should join it this way, or pass
    `runtime_env=RAY_RUNTIME_ENV` to its own `ray.init`. When Ray replaces a worker process (it stopped idle ones
    and started new ones as sweeps reserved and removed placement groups, 2026-12-05), the new one without the hook
    imported the engine in its first task: 1.4 s of CPU inside that sweep."""
    import ray

    if address:
        ray.init(address=address, log_to_driver=False, runtime_env=RAY_RUNTIME_ENV)
    else:
        ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False, runtime_env=RAY_RUNTIME_ENV)


def _run_ray(threads: Sequence[Thread], needles: Sequence[Sequence[str] | None], base: EngineConfig,
             tasks: list[Task], workers: int, address: str | None,
             progress: Progress | None) -> tuple[list[Outcome], int]:
    """Ray tasks of one or more threads' batches each (`_guided_chunks`), `workers` at a time (at most the cluster's
    CPUs; fewer than it has: in a placement group of `workers` CPUs); returns the outcomes and the workers used.

    Twice as many tasks as workers are handed to Ray at once, so a worker that finishes starts the next
    one queued for it without waiting for this process to hear of it and submit another (one task per
    worker in flight left each idle for a round trip per task). On a cluster this process already joined
    (`ray.init` before the sweep, as a long-lived cluster is used), the cluster and its worker processes
    are reused: they have imported the engine after the first sweep. Otherwise a local cluster of
    `workers` CPUs is started for this sweep and shut down after it (`ray.init` alone took ~5 s here)."""
    try:
        import ray
        from ray.util.placement_group import placement_group, remove_placement_group
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy
    except ImportError:
        raise ConfigError("the ray executor needs Ray: pip install 'context-inspector[ray]'", key="executor") from None
    started = not ray.is_initialized()
    if started:
        ray_init(address, num_cpus=workers)
    # a placement group asking for more CPUs than the cluster has would wait for ever: use what it has
    cluster_cpus = int(ray.cluster_resources().get("CPU", workers))
    workers = max(1, min(workers, cluster_cpus))
    # a sweep that may use every CPU of the cluster needs no placement group to hold it to `workers`: the cluster
    # does. A group reserved and removed each sweep made Ray stop idle workers and start new ones as sweeps began
    # (raylet: "Disconnecting worker, graceful=true" then "Started worker process", 4 sweeps of 7 in one bench run,
    # 2026-12-05), each new one importing the engine inside that sweep (1.64x the serial sweep against 1.93x).
    group = placement_group([{"CPU": 1}] * workers) if workers < cluster_cpus else None
    placed = False
    try:
        remote = ray.remote(num_cpus=1)(_ray_evaluate_chunk)
        if group is not None:
            ready, _ = ray.wait([group.ready()], timeout=PLACEMENT_TIMEOUT_S)
            placed = bool(ready)
            if not ready:
                raise ConfigError(f"the Ray cluster did not give {workers} CPU(s) for the sweep within "
                                  f"{PLACEMENT_TIMEOUT_S:.0f} s (busy with other work?)", key="executor")
            remote = remote.options(scheduling_strategy=PlacementGroupSchedulingStrategy(placement_group=group))
        base_ref = ray.put(base)
        pending = _guided_chunks([(threads[b[0][1]], needles[b[0][1]], b)
                                  for b in _by_thread(tasks, threads, workers)], workers)
        pending.reverse()  # popped from the end: the biggest chunks (and longest threads) first
        running: list[Any] = []
        out: list[Outcome] = []
        while pending or running:
            while pending and len(running) < 2 * workers:
                running.append(remote.remote(pending.pop(), base_ref))
            done, running = ray.wait(running, num_returns=1)
            for ref in done:
                out.extend(ray.get(ref))
            if progress:
                progress(len(out), len(tasks))
        return out, workers
    finally:
        if group is not None:
            if placed and not started:
                _release_when_free(ray, group, workers, remove_placement_group)
            else:
                remove_placement_group(group)
        if started:
            ray.shutdown()


def _release_when_free(ray: Any, group: Any, workers: int, remove: Callable[[Any], None]) -> None:
    """Remove a joined cluster's placement group once its workers are back in Ray's pool (at most
    `RELEASE_WAIT_S`; ~80 ms here). Waited for here, not in a thread of its own: a script that sweeps and
    exits at once would have that thread calling Ray while Ray's exit hook shuts it down.

    Ray kills the worker processes still leased to a group's bundles when the group is removed (raylet:
    "Got request to remove 2 bundle(s) for placement group" then "Disconnecting worker ... sending SIGTERM",
    Ray 2.60). The last task's lease comes back ~80 ms after its result, so a group removed at once killed
    a worker in one sweep of three here (2026-12-05), and the next sweep waited 1.4-1.7 s for a new
    worker to start and import the engine. The group's CPUs (`CPU_group_<id>`) count as available again
    once both leases are back."""
    key = f"CPU_group_{group.id.hex()}"
    deadline = time.monotonic() + RELEASE_WAIT_S
    try:
        while time.monotonic() < deadline and ray.available_resources().get(key, 0) < workers:
            time.sleep(0.02)
    except Exception:  # noqa: BLE001, S110 - the cluster went away: nothing is left to keep alive
        pass
    try:
        remove(group)
    except Exception:  # noqa: BLE001, S110 - already gone with the cluster or the job
        pass


# -- the sweep -------------------------------------------------------------------------------
def sweep(
    threads: Thread | Sequence[Thread],
    base_config: EngineConfig,
    grid: Mapping[str, Sequence[Any]],
    *,
    executor: str = "process",
    workers: int | None = None,
    needles: Sequence[str] | Sequence[Sequence[str]] | None = None,
    ray_address: str | None = None,
    progress: Progress | None = None,
    pareto: Sequence[str] = DEFAULT_PARETO,
) -> SweepResult:
    """Replay every thread at every grid point; same numbers as single replays of the same configs.

    `needles`: one list for all threads, a list per thread, or None to pick them per thread. `pareto`: the
    axes of the front (`PARETO_AXES`), checked before any worker starts.
    """
    axes = check_pareto_axes(pareto)
    thread_list = [threads] if isinstance(threads, Thread) else list(threads)
    if not thread_list:
        raise ConfigError("a sweep needs at least one thread", key="threads")
    if executor not in EXECUTORS:
        raise ConfigError(f"unknown executor {executor!r}; choose one of {', '.join(EXECUTORS)}", key="executor")
    points = grid_points(grid)
    for p in points:  # a bad key or value fails here, before any worker starts
        p.config(base_config)
    per_thread = _needles_per_thread(thread_list, needles)
    tasks: list[Task] = [(p.index, ti, p.overrides) for p in points for ti in range(len(thread_list))]
    n_workers = max(1, min(workers or default_workers(), len(tasks)))
    started = time.perf_counter()
    if executor == "serial" or (executor == "process" and n_workers == 1):
        raw = _run_serial(thread_list, per_thread, base_config, tasks, progress)
        used = "serial"
    elif executor == "process":
        raw = _run_process(thread_list, per_thread, base_config, tasks, n_workers, progress)
        used = "process"
    else:
        raw, n_workers = _run_ray(thread_list, per_thread, base_config, tasks, n_workers, ray_address, progress)
        used = "ray"
    elapsed = time.perf_counter() - started
    by_point: dict[int, list[dict[str, Any] | None]] = {p.index: [None] * len(thread_list) for p in points}
    cpu: dict[int, float] = dict.fromkeys(by_point, 0.0)
    picked: list[list[str]] = [[] for _ in thread_list]
    for pi, ti, metrics, cpu_s, thread_needles in raw:
        by_point[pi][ti] = metrics
        cpu[pi] += cpu_s
        picked[ti] = thread_needles
    results = []
    for p in points:
        rows = [m for m in by_point[p.index] if m is not None]
        results.append(PointResult(p, aggregate(rows), rows, cpu_s=cpu[p.index]))
    for i in pareto_indices([r.metrics for r in results], axes=axes):
        results[i].pareto = True
    return SweepResult(
        base_config=base_config,
        grid={k: [override_value(v) for v in vs] for k, vs in grid.items()},
        thread_ids=[t.thread_id for t in thread_list],
        needles=picked,
        points=results,
        executor=used,
        workers=1 if used == "serial" else n_workers,
        elapsed_s=elapsed,
        pareto_axes=axes,
    )


def _needles_per_thread(threads: Sequence[Thread], needles: Any) -> list[list[str] | None]:
    """The needles given for each thread, or None for each where they are to be picked (by the worker
    that replays it: 0.4 s for 100 threads, done here before any worker started)."""
    if not needles:
        return [None] * len(threads)
    if all(isinstance(n, str) for n in needles):
        return [list(needles) for _ in threads]
    lists: list[list[str] | None] = [list(n) for n in needles]
    if len(lists) != len(threads):
        raise ConfigError(f"{len(lists)} needle lists for {len(threads)} threads", key="needles")
    return lists
