"""A sweep's workers start with what every task needs (engine/evals/sweep_preload.py), and Ray gets its
thread batches in a few tasks of decreasing size (engine/evals/sweep.py `_guided_chunks`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from engine.evals.sweep import _guided_chunks

ROOT = Path(__file__).resolve().parents[2]

# in a fresh process: after the preload, a first task under each of these presets imports no engine
# module and reads no table (the imports a worker's first task paid, each sweep, on both cores)
FIRST_TASK = r"""
import builtins, importlib, json, sys
import engine.evals.sweep_preload
from engine.config.schema import preset
from engine.evals import sweep as S
from engine.thread.synthetic import synthetic_thread
from engine.tokens import windows
from engine.cost import prices

before = set(sys.modules)
reads = []
for fn in (windows._table, windows._thinking_rules, prices._table):
    reads.append(fn.cache_info().misses)
points = S.grid_points({"summarization.trigger": ["fraction:0.3", "fraction:0.6"]})
for name in sys.argv[1:]:
    batch = [(p.index, 0, p.overrides) for p in points]
    S._evaluate_thread(synthetic_thread(30, seed=1), None, preset(name), batch)
after = [fn.cache_info().misses for fn in (windows._table, windows._thinking_rules, prices._table)]
print(json.dumps({"new": sorted(m for m in set(sys.modules) - before if m.startswith("engine.")),
                  "tables_read_again": after != reads}))
"""


def test_a_workers_first_task_imports_nothing_the_preload_could_have() -> None:
    out = subprocess.run([sys.executable, "-c", FIRST_TASK, "deepagents", "langchain", "deerflow"],
                         capture_output=True, text=True, cwd=ROOT, check=True, timeout=300)
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen == {"new": [], "tables_read_again": False}


class _T:
    def __init__(self, n: int) -> None:
        self.messages = [None] * n


def _units(sizes: list[int], points: int = 2) -> list:
    return [(_T(n), None, [(p, i, ()) for p in range(points)]) for i, n in enumerate(sizes)]


def test_guided_chunks_keep_every_batch_once_in_order_and_shrink_to_single_batches() -> None:
    units = _units([124] * 100)
    chunks = _guided_chunks(units, workers=2)
    assert [u for c in chunks for u in c] == units  # every batch once, longest-first order kept
    sizes = [len(c) for c in chunks]
    assert sizes == sorted(sizes, reverse=True)  # biggest first
    assert sizes[0] == 12  # about 1/8 of the work: 100 / (4 x 2) rounded down to whole batches
    assert sizes[-8:] == [1] * 8  # the tail is single batches, so the workers finish together
    assert len(chunks) < 40  # far fewer tasks than the 100 batches


def test_a_batch_heavier_than_its_share_is_a_chunk_of_its_own() -> None:
    units = _units([2000, 1000, 500, 124, 124, 60, 30])
    assert [len(c) for c in _guided_chunks(units, workers=2)] == [1] * 7
    # one worker: shares are twice as big, small batches still group
    assert [len(c) for c in _guided_chunks(_units([10] * 8), workers=1)] == [2, 1, 1, 1, 1, 1, 1]
