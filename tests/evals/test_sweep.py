"""Sweeps: grid parsing, identical numbers to single replays, Pareto front, executors."""

from __future__ import annotations

import importlib.util
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.base.errors import ConfigError
from engine.config.schema import preset
from engine.evals.sweep import (
    _by_thread,
    _release_when_free,
    cost_axis,
    grid_from_args,
    grid_points,
    override_value,
    pareto_indices,
    parse_grid_arg,
    ray_init,
    run_metrics,
    sweep,
)
from engine.run.replay import replay
from engine.thread.synthetic import synthetic_thread
from tests.evals.threads import NEEDLE_INTENT, NEEDLE_TOOL, needle_thread

# One token per test process: Ray keeps the first token it read for the life of the process, so a second
# local instance with another one fails to start (InvalidAuthToken).
RAY_TOKEN = secrets.token_hex(32)
BASE = preset("deepagents").with_overrides(["tokens.counter=approximate"])
GRID = {"summarization.trigger": ["messages:6", "tokens:3000"], "summarization.keep": ["messages:2", "messages:4"]}


def _threads():
    return [needle_thread(), synthetic_thread(30, seed=1, tokens_per_step=400, max_input_tokens=20_000)]


def test_parse_grid_arg_commas_and_semicolons() -> None:
    assert parse_grid_arg("summarization.keep=messages:10,messages:20") == (
        "summarization.keep", ["messages:10", "messages:20"])
    # with any ';' present, ';' separates the values and ',' stays inside a value (a trigger list)
    assert parse_grid_arg("summarization.trigger=tokens:30000,messages:50;tokens:60000") == (
        "summarization.trigger", ["tokens:30000,messages:50", "tokens:60000"])
    with pytest.raises(ConfigError, match="expected KEY=V1,V2"):
        parse_grid_arg("summarization.keep")
    with pytest.raises(ConfigError, match="no values"):
        parse_grid_arg("summarization.keep=")
    with pytest.raises(ConfigError, match="given twice"):
        grid_from_args(["a.b=1", "a.b=2"])


def test_grid_points_are_the_cartesian_product_first_key_slowest() -> None:
    points = grid_points(GRID)
    assert [p.overrides for p in points] == [
        ("summarization.trigger=messages:6", "summarization.keep=messages:2"),
        ("summarization.trigger=messages:6", "summarization.keep=messages:4"),
        ("summarization.trigger=tokens:3000", "summarization.keep=messages:2"),
        ("summarization.trigger=tokens:3000", "summarization.keep=messages:4"),
    ]
    assert points[0].label == "trigger=messages:6 · keep=messages:2"
    assert grid_points({})[0].overrides == ()
    assert override_value(True) == "true" and override_value(["tokens:1", "messages:2"]) == "tokens:1,messages:2"
    cfg = points[3].config(BASE)
    assert str(cfg.summarization.trigger[0]) == "tokens:3000" and str(cfg.summarization.keep) == "messages:4"


def test_bad_key_fails_before_any_worker_starts() -> None:
    with pytest.raises(ConfigError, match="unknown key"):
        sweep(needle_thread(), BASE, {"summarization.nope": [1, 2]}, executor="process")
    with pytest.raises(ConfigError, match="unknown executor"):
        sweep(needle_thread(), BASE, GRID, executor="threads")


def _expected(threads, needles):
    out = []
    for p in grid_points(GRID):
        cfg = p.config(BASE)
        out.append([run_metrics(replay(t, cfg), n) for t, n in zip(threads, needles, strict=True)])
    return out


def test_process_pool_sweep_equals_single_replays() -> None:
    threads = _threads()
    result = sweep(threads, BASE, GRID, executor="process", workers=2)
    assert result.executor == "process" and result.workers == 2 and result.replays == 8
    assert result.needles == [[NEEDLE_INTENT, NEEDLE_TOOL], ["BLUE-HERON-7"]]
    assert [p.threads for p in result.points] == _expected(threads, result.needles)
    # some point compacts: the sweep is not comparing empty runs
    assert any(p.metrics["compactions"] > 0 for p in result.points)


def test_work_goes_out_thread_by_thread_longest_first_and_one_thread_is_dealt_to_every_worker() -> None:
    threads = _threads()  # needle_thread is the shorter
    assert len(threads[1].messages) > len(threads[0].messages)
    tasks = [(p, t, ()) for p in range(4) for t in range(2)]
    # in a row per thread (its counts serve every point), the longest thread first
    assert _by_thread(tasks, threads, workers=1) == [[(p, 1, ()) for p in range(4)], [(p, 0, ()) for p in range(4)]]
    # one thread, six points, two workers: four batches, points dealt round-robin, none empty
    one = [(p, 0, ()) for p in range(6)]
    assert _by_thread(one, threads, workers=2) == [[(0, 0, ()), (4, 0, ())], [(1, 0, ()), (5, 0, ())],
                                                    [(2, 0, ())], [(3, 0, ())]]
    # a pool sweep of one thread gives what single replays give, dealt over both workers
    result = sweep(threads[1], BASE, GRID, executor="process", workers=2)
    assert [p.threads for p in result.points] == _expected([threads[1]], result.needles)


def test_serial_sweep_equals_single_replays_and_aggregates() -> None:
    threads = _threads()
    result = sweep(threads, BASE, GRID, executor="serial", needles=["BLUE-HERON-7", NEEDLE_INTENT])
    expected = _expected(threads, result.needles)
    assert [p.threads for p in result.points] == expected
    for point, rows in zip(result.points, expected, strict=True):
        m = point.metrics
        assert m["peak_view_tokens"] == max(r["peak_view_tokens"] for r in rows)
        assert m["summarizer_calls"] == sum(r["summarizer_calls"] for r in rows)
        assert m["summarizer_input_tokens"] == sum(r["summarizer_input_tokens"] for r in rows)
    assert [p.point.index for p in result.points if p.pareto] == pareto_indices([p.metrics for p in result.points])
    doc = result.to_dict()
    assert doc["schema"] == "context-inspector/sweep" and doc["pareto"] == [p.point.index for p in result.pareto_front]


def test_pareto_front_exact() -> None:
    def m(peak, retention, cost):
        return {"peak_view_tokens": peak, "retention": retention, "summarizer_input_tokens": cost}

    metrics = [m(100, 1.0, 50), m(100, 0.5, 50), m(80, 0.5, 60), m(120, 1.0, 10), m(80, 0.5, 70), m(100, 1.0, 50)]
    # 1 is dominated by 0; 4 by 2; 0 and 5 are equal, so neither dominates the other
    assert pareto_indices(metrics) == [0, 2, 3, 5]
    assert pareto_indices([m(10, None, 5), m(20, None, 5)]) == [0]


def test_the_pareto_cost_axis_is_dollars_when_the_runs_are_priced() -> None:
    def m(peak, summarizer_tokens, dollars):
        return {"peak_view_tokens": peak, "retention": None, "summarizer_input_tokens": summarizer_tokens,
                "dollars": dollars}

    # point 1 reads fewer summarizer tokens but costs more: on the dollar axis point 0 dominates it
    priced = [m(100, 500, 1.0), m(100, 100, 2.0)]
    assert cost_axis(priced) == "dollars" and pareto_indices(priced) == [0]
    assert pareto_indices(priced, cost="summarizer_input_tokens") == [1]
    unpriced = [m(100, 500, 0.0), m(100, 100, 0.0)]
    assert cost_axis(unpriced) == "summarizer_input_tokens" and pareto_indices(unpriced) == [1]


def test_sweep_points_carry_the_cost_of_each_replay() -> None:
    from engine.cost.run_cost import run_cost
    from engine.run.replay import replay

    threads = [needle_thread()]
    base = BASE.with_overrides(["model.name=claude-sonnet-4-5"])
    result = sweep(threads, base, {"summarization.trigger": ["messages:6", "messages:12"]}, executor="serial")
    for point in result.points:
        single = run_cost(replay(threads[0], point.point.config(base))).totals()
        assert point.metrics["dollars"] == single["dollars"] > 0
        assert point.metrics["hit_rate"] == single["hit_rate"]
    assert result.to_dict()["pareto_cost"] == "dollars"


def test_an_unpriced_model_has_no_dollars_rather_than_zero() -> None:
    from engine.cli.sweep import table

    threads = [needle_thread()]
    base = BASE.with_overrides(["model.name=a-model-nobody-prices"])
    result = sweep(threads, base, {"summarization.trigger": ["messages:6", "messages:12"]}, executor="serial")
    assert [p.metrics["dollars"] for p in result.points] == [None, None]
    assert result.to_dict()["pareto_cost"] == "summarizer_input_tokens"
    rows = table(result)[2:]
    assert len(rows) == 2 and all(" n/a " in row and "$" not in row for row in rows)


@pytest.fixture
def ray_in_a_temporary_folder(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Ray's session folder and auth token go to a folder of the test's own, removed after (issue 35: each
    run left $TMPDIR/ray/session_* and ~/.ray/auth_token). Ray 2.60 writes a token to
    `Path.home()/.ray/auth_token` for a new local cluster unless RAY_AUTH_TOKEN is set
    (`ray/_private/authentication/authentication_token_setup.py`), and puts its sessions under
    RAY_TMPDIR (`ray/_common/utils.py get_default_system_temp_dir`). The folder is short: Ray's Unix
    sockets live in it, and a socket path has at most 107 bytes."""
    folder = Path(tempfile.mkdtemp(prefix="ctxi-ray-"))
    monkeypatch.setenv("RAY_TMPDIR", str(folder))
    monkeypatch.setenv("RAY_AUTH_TOKEN", RAY_TOKEN)
    try:
        yield folder
    finally:
        import ray

        if ray.is_initialized():
            ray.shutdown()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed (optional extra)")
def test_ray_executor_on_a_local_instance_equals_single_replays(ray_in_a_temporary_folder: Path) -> None:
    token = Path.home() / ".ray" / "auth_token"
    token_before = token.stat().st_mtime_ns if token.exists() else None
    threads = [needle_thread()]
    grid = {"summarization.trigger": ["messages:6", "messages:8"]}
    result = sweep(threads, BASE, grid, executor="ray", workers=2)
    assert result.executor == "ray"
    expected = [[run_metrics(replay(threads[0], p.config(BASE)), result.needles[0])] for p in grid_points(grid)]
    assert [p.threads for p in result.points] == expected
    # Ray's files went to the test's folder, and no token was written in the home folder
    assert (ray_in_a_temporary_folder / "ray").is_dir()
    assert (token.stat().st_mtime_ns if token.exists() else None) == token_before


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed (optional extra)")
def test_a_ray_sweep_asking_more_workers_than_the_joined_cluster_has_uses_what_it_has(
        ray_in_a_temporary_folder: Path) -> None:
    import ray

    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)  # a cluster of one CPU, joined
    threads = [needle_thread()]
    grid = {"summarization.trigger": ["messages:6", "messages:8"]}
    result = sweep(threads, BASE, grid, executor="ray", workers=3)  # a placement group of 3 would never be ready
    assert result.executor == "ray" and result.workers == 1
    expected = [[run_metrics(replay(threads[0], p.config(BASE)), result.needles[0])] for p in grid_points(grid)]
    assert [p.threads for p in result.points] == expected
    assert ray.is_initialized()  # a cluster the caller joined is left running
    from ray.util import placement_group_table

    assert placement_group_table() == {}  # every CPU of the cluster: the cluster holds the sweep to them


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed (optional extra)")
def test_a_ray_sweep_on_part_of_a_joined_cluster_runs_in_a_placement_group_removed_after(
        ray_in_a_temporary_folder: Path) -> None:
    import ray
    from ray.util import placement_group_table

    ray_init(num_cpus=2)
    threads = [needle_thread()]
    grid = {"summarization.trigger": ["messages:6", "messages:8"]}
    result = sweep(threads, BASE, grid, executor="ray", workers=1)  # one CPU of two: a group of one holds it there
    assert result.executor == "ray" and result.workers == 1
    expected = [[run_metrics(replay(threads[0], p.config(BASE)), result.needles[0])] for p in grid_points(grid)]
    assert [p.threads for p in result.points] == expected
    # removed when the sweep returns, once its worker was back (Ray kills the workers still leased to a group
    # it removes)
    assert [(g["state"], len(g["bundles"])) for g in placement_group_table().values()] == [("REMOVED", 1)]
    assert ray.is_initialized()


def _probe_preloaded() -> bool:
    import sys

    return "engine.evals.sweep_preload" in sys.modules  # nothing this test module imports loads it


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed (optional extra)")
def test_workers_of_a_cluster_joined_with_ray_init_start_with_the_preload(ray_in_a_temporary_folder: Path) -> None:
    import ray

    ray_init(num_cpus=1)
    # a worker's first task, before any sweep ran on it, finds the engine imported by the setup hook
    assert ray.get(ray.remote(num_cpus=1)(_probe_preloaded).remote()) is True


class _FakeGroup:
    class id:  # noqa: N801 - Ray's PlacementGroup.id
        @staticmethod
        def hex() -> str:
            return "abc"


def test_a_placement_group_is_removed_when_its_cpus_are_back_and_anyway_when_ray_is_gone() -> None:
    seen: list[str] = []

    class Ray:
        polls = 0

        def available_resources(self) -> dict[str, float]:
            self.polls += 1
            seen.append("poll")
            return {"CPU_group_abc": 2.0} if self.polls >= 3 else {}  # both leases back at the third look

    _release_when_free(Ray(), _FakeGroup(), 2, lambda g: seen.append("remove"))
    assert seen == ["poll", "poll", "poll", "remove"]

    class Gone:
        def available_resources(self) -> dict[str, float]:
            raise RuntimeError("Ray has not been started yet")

    removed: list[object] = []
    _release_when_free(Gone(), _FakeGroup(), 2, removed.append)
    assert len(removed) == 1


def test_ray_missing_gives_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_ray(name, *args, **kwargs):
        if name == "ray" or name.startswith("ray."):
            raise ImportError("No module named 'ray'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    with pytest.raises(ConfigError, match=r"pip install 'context-inspector\[ray\]'"):
        sweep(needle_thread(), BASE, {"summarization.trigger": ["messages:6", "messages:8"]}, executor="ray", workers=2)


def test_points_carry_survival_and_recovery_and_the_front_can_use_them() -> None:
    from engine.evals.recovery import recovery
    from engine.evals.survival import run_survival_totals, survival
    from engine.evals.sweep import check_pareto_axes
    from tests.evals.forensics_threads import coding_thread

    config = preset("langchain").with_overrides(["tokens.counter=approximate", "summarization.trigger=messages:6",
                                                 "summarization.keep=messages:2"])
    run = replay(coding_thread(compacted=False), config)
    m = run_metrics(run)
    totals = run_survival_totals(survival(run))
    assert (m["survival"], m["survival_facts"], m["survival_kept"]) == (totals["rate"], totals["facts_total"],
                                                                        totals["facts_kept"])
    assert m["survival_facts"] > 0 and m["compactions"] == 3
    assert m["recovery_calls"] == sum(r.calls for r in recovery(run)) == 2
    assert sorted(m["survival_by_class"]) == ["command", "decision", "error", "identifier", "number", "path"]
    # a Pareto front on other axes: min recovery calls and max survival
    def point(survival_rate, calls):
        return {"survival": survival_rate, "recovery_calls": calls}

    metrics = [point(0.5, 3), point(0.7, 3), point(0.4, 1), point(None, 4)]
    assert pareto_indices(metrics, axes=("survival", "recovery_calls")) == [1, 2, 3]  # None counts as 1.0
    with pytest.raises(ConfigError, match="unknown Pareto axis 'speed'"):
        check_pareto_axes(["peak_view_tokens", "speed"])
    with pytest.raises(ConfigError, match="at least two"):
        check_pareto_axes(["survival", "survival"])


def test_a_sweep_redraws_its_front_on_other_axes_without_replaying() -> None:
    result = sweep(_threads(), BASE, GRID, executor="serial")
    other = result.with_pareto(["survival", "recovery_calls", "peak_view_tokens"])
    assert other.pareto_axes == ("survival", "recovery_calls", "peak_view_tokens")
    assert [p.point.index for p in other.points if p.pareto] == pareto_indices(
        [p.metrics for p in result.points], axes=other.pareto_axes)
    assert [p.metrics for p in other.points] == [p.metrics for p in result.points]
    assert other.to_dict()["pareto_axes"] == ["survival", "recovery_calls", "peak_view_tokens"]
