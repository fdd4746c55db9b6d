"""`ctxi scenario`: list the scenario agents, record one as a thread, or build the sample library."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from engine.base.errors import ContextInspectorError
from engine.base.wording import plural
from engine.cli.arguments import add_json_argument, add_middleware_argument, check_middleware_allowed

NAME = "scenario"
HELP = "Record a scenario agent's thread (native format), list scenarios, or build the sample library."


def add_arguments(p: argparse.ArgumentParser) -> None:
    from engine.config.presets import PRESETS

    p.add_argument("name", nargs="?", metavar="NAME", help="scenario name (see --list)")
    p.add_argument("--list", action="store_true", help="list the scenarios and what each teaches")
    add_json_argument(p, "the list, or what was written,")
    p.add_argument("--steps", type=int, metavar="N", help="approximate number of model calls (default: the scenario's)")
    p.add_argument("--seed", type=int, default=0, help="seed of the policy's choices (default 0)")
    p.add_argument("--config", metavar="YAML", help="engine config YAML for the live run (default: the scenario's preset)")
    p.add_argument("--preset", choices=PRESETS, help="start from a preset (default: the scenario's)")
    p.add_argument("--out", metavar="FILE|-", help="where to write the thread (native JSON); - for stdout")
    p.add_argument("--build-samples", metavar="DIR", help="regenerate the sample library into DIR")
    add_middleware_argument(p)


def _print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=1) + "\n")


def related_path(out: Path, index: int) -> Path:
    """Where an earlier thread of the same run goes: `<stem>-thread<k><suffix>` next to FILE."""
    return out.with_name(f"{out.stem}-thread{index + 1}{out.suffix or '.json'}")


def run(args: argparse.Namespace) -> int:
    from engine.formats.native import dumps
    from engine.scenarios import get_scenario, list_scenarios
    from engine.scenarios.live import resolve_config

    if args.build_samples:
        from engine.scenarios.build_samples import build

        rows = build(Path(args.build_samples))
        if args.json:
            _print_json({"out": args.build_samples, "threads": [dataclasses.asdict(r) for r in rows]})
        else:
            print(f"wrote {plural(len(rows), 'thread')} and README.md to {args.build_samples}")
        return 0
    if args.list or not args.name:
        scenarios = list_scenarios()
        if args.json:
            _print_json([s.describe() for s in scenarios])
            return 0
        width = max(len(s.name) for s in scenarios)
        for s in scenarios:
            print(f"{s.name:<{width}}  steps {s.default_steps:>3}  layers {', '.join(s.layers)} "
                  f"(lesson preset {s.lesson_preset})")
            print(f"{'':<{width}}  {s.teaches}")
        return 0
    if args.steps is not None and args.steps < 2:
        raise ContextInspectorError("--steps: must be at least 2")
    if not args.out:
        raise ContextInspectorError("--out: give a file to write the thread to (or - for stdout)")
    if args.out == "-" and args.json:
        raise ContextInspectorError("--json: the thread already goes to stdout with --out -; give --out FILE")
    scenario = get_scenario(args.name)
    config = resolve_config(args.config, args.preset, scenario.preset)
    check_middleware_allowed(args, config)
    result = scenario.run_live(steps=args.steps, seed=args.seed, config=config)
    if args.out == "-":
        sys.stdout.write(dumps(result.thread) + "\n")
        return 0
    out = Path(args.out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        for i, earlier in enumerate(result.related):
            related_path(out, i).write_text(dumps(earlier), encoding="utf-8")
            print(f"wrote {related_path(out, i)} ({earlier.thread_id})", file=sys.stderr)
        out.write_text(dumps(result.thread), encoding="utf-8")
    except OSError as exc:
        raise ContextInspectorError(f"{out}: cannot write ({exc.strerror or exc})") from None
    steps = len(result.thread.ai_indices())
    if args.json:
        _print_json({"out": str(out), "thread_id": result.thread.thread_id, "steps": steps,
                     "messages": len(result.thread.messages), "subagents": len(result.thread.subagents),
                     "related": [str(related_path(out, i)) for i in range(len(result.related))]})
    print(f"wrote {out} ({result.thread.thread_id}: {plural(steps, 'step')}, "
          f"{plural(len(result.thread.subagents), 'sub-agent')})", file=sys.stderr)
    return 0
