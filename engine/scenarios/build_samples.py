"""Build the sample library: every scenario at its sample size, plus a README table computed from them.

    python -m engine.scenarios.build_samples [DIR]      (default: sample_threads/)
    ctxi scenario --build-samples DIR

The same code always writes the same bytes. The table's "layers exercised" column comes from
replaying each thread under its scenario's lesson preset and listing the layers that acted.
"""

from __future__ import annotations

import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from engine.formats.native import dumps
from engine.run.replay import replay
from engine.scenarios import list_scenarios
from engine.scenarios.base import SAMPLE_SEED, Scenario
from engine.thread.model import Thread
from engine.tokens.counters import TokenCounter, get_counter
from engine.workspace.workspace import Workspace

QUIET_LAYERS = frozenset({"input_context"})  # acts on every thread; not what a sample teaches


@dataclass
class SampleRow:
    file: str
    scenario: str
    steps: int
    raw_tokens: int
    subagents: int
    subagent_tokens: int
    lesson_preset: str
    exercised: dict[str, int]  # "layer.kind" -> events under the lesson preset


def raw_tokens(thread: Thread, counter: TokenCounter) -> int:
    """The unmanaged transcript: system prompt, tool schemas and every message (o200k_base)."""
    system = counter.count_text(thread.system_prompt or "") + 3 if thread.system_prompt else 0
    return system + counter.count_tools(thread.tools) + sum(counter.count_message(m) for m in thread.messages)


def sample_threads(scenario: Scenario) -> list[Thread]:
    result = scenario.run_live(steps=scenario.sample_steps, seed=SAMPLE_SEED)
    return [*result.related, result.thread]


def exercised(scenario: Scenario, threads: list[Thread]) -> list[dict[str, int]]:
    """Events by layer.kind for each thread, replayed in order in one workspace (memory carries over)."""
    out = []
    with tempfile.TemporaryDirectory() as root:
        workspace = Workspace(root)
        for thread in threads:
            run = replay(thread, scenario.lesson_config(), workspace=workspace)
            kinds = Counter(f"{e.layer}.{e.kind}" for e in run.events if e.layer not in QUIET_LAYERS)
            out.append(dict(sorted(kinds.items())))
    return out


def file_name(scenario: Scenario, index: int, count: int) -> str:
    return f"{scenario.name}.json" if count == 1 else f"{scenario.name}-{index + 1}.json"


def build(out_dir: Path, *, log: bool = True) -> list[SampleRow]:
    counter = get_counter("o200k_base")
    out_dir.mkdir(parents=True, exist_ok=True)
    rows: list[SampleRow] = []
    for scenario in list_scenarios():
        threads = sample_threads(scenario)
        events = exercised(scenario, threads)
        for i, (thread, kinds) in enumerate(zip(threads, events, strict=True)):
            name = file_name(scenario, i, len(threads))
            (out_dir / name).write_text(dumps(thread), encoding="utf-8")
            rows.append(SampleRow(
                file=name, scenario=scenario.name, steps=len(thread.ai_indices()),
                raw_tokens=raw_tokens(thread, counter), subagents=len(thread.subagents),
                subagent_tokens=sum(raw_tokens(t, counter) for t in thread.subagents.values()),
                lesson_preset=scenario.lesson_preset, exercised=kinds,
            ))
            if log:
                print(f"{name}: {rows[-1].steps} steps, {rows[-1].raw_tokens:,} raw tokens", file=sys.stderr)
    (out_dir / "README.md").write_text(readme(rows), encoding="utf-8")
    return rows


def _layers_cell(kinds: dict[str, int]) -> str:
    if not kinds:
        return "—"
    by_layer: dict[str, list[str]] = {}
    for key, n in kinds.items():
        layer, kind = key.split(".", 1)
        by_layer.setdefault(layer, []).append(f"{kind} ×{n}")
    return "; ".join(f"**{layer}** ({', '.join(v)})" for layer, v in by_layer.items())


def readme(rows: list[SampleRow]) -> str:
    lines = [
        "# Sample threads",
        "",
        "Threads recorded by the project's scenario agents (scripted policy models driving a real",
        "`create_agent` with the engine's layers; see docs/scenarios.md). Regenerate them with:",
        "",
        "    python -m engine.scenarios.build_samples sample_threads/",
        "",
        "The output is identical on every run. Each file is a native thread (`context-inspector/thread`),",
        "sub-agent transcripts included. *Raw tokens* is the unmanaged transcript (system prompt, tool",
        "schemas, every message) in o200k_base; *layers exercised* lists the events a replay under the",
        "scenario's lesson preset records (input-context assembly, present everywhere, is left out).",
        "`memory-two-threads-2` shows memory injection when replayed after `-1` in the same workspace.",
        "",
        "| thread | scenario | steps | raw tokens | sub-agents (their tokens) | lesson preset | layers exercised |",
        "|---|---|---:|---:|---|---|---|",
    ]
    for r in rows:
        subs = f"{r.subagents} ({r.subagent_tokens:,})" if r.subagents else "—"
        lines.append(f"| `{r.file}` | {r.scenario} | {r.steps} | {r.raw_tokens:,} | {subs} | {r.lesson_preset} | "
                     f"{_layers_cell(r.exercised)} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    build(Path(args[0] if args else "sample_threads"))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
