"""`ctxi eval needle|drift|survival|cache FILE`: targeted evals of a replay (needle retention, goal drift, what each
compaction kept and cost, why the cache missed)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from engine.base.wording import plural
from engine.cli.arguments import (
    add_config_arguments,
    add_json_argument,
    add_thread_arguments,
    check_middleware_allowed,
)

if TYPE_CHECKING:
    from engine.config.schema import EngineConfig
    from engine.run.run import Run

NAME = "eval"
HELP = "Targeted evals after compaction: needle retention, goal drift, survival and recovery, cache misses."


def _common(p: argparse.ArgumentParser) -> None:
    add_thread_arguments(p)
    add_config_arguments(p, default="deepagents")
    p.add_argument("--stress", type=float, metavar="FRACTION",
                   help="stress mode: every trigger at this fraction of the window (e.g. 0.25)")
    add_json_argument(p, "the report")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="eval_kind", metavar="EVAL", required=True)
    needle = sub.add_parser("needle", help="where planted facts are after each compaction",
                            description="Classify each needle (in_view, in_summary, recoverable, lost) at every step.")
    _common(needle)
    needle.add_argument("--needle", dest="needles", action="append", default=[], metavar="TEXT",
                        help="a fact to track (repeatable); default: distinctive facts picked from the thread")
    needle.add_argument("--per-step", action="store_true", help="include the class of every step in --json output")
    drift = sub.add_parser("drift", help="whether the session intent survives each compaction",
                           description="Flag steps after a compaction where the first human request is neither "
                                       "kept nor in the summary's SESSION INTENT.")
    _common(drift)
    drift.add_argument("--per-step", action="store_true", help="include the status of every step in --json output")
    from engine.cli import eval_survival

    eval_survival.add_arguments(sub, _forensics_common)


def _forensics_common(p: argparse.ArgumentParser) -> None:
    add_thread_arguments(p)
    add_config_arguments(p)
    p.add_argument("--stress", type=float, metavar="FRACTION",
                   help="stress mode: every trigger at this fraction of the window (e.g. 0.25)")
    add_json_argument(p, "the report")


def _config(args: argparse.Namespace, loaded: Any, thread: Any = None) -> EngineConfig:
    """The run's settings; with --stress, stress mode's run B as the Evals page builds it
    (`engine.evals.stress.stress_plan`: on the as-recorded run, the recording agent's preset with its
    trigger lowered; one error line when no trigger can be lowered)."""
    from engine.base.errors import ConfigError
    from engine.config.loading import load_config
    from engine.evals.stress import stress_plan

    config = load_config(args.config, preset_name=args.preset, overrides=args.overrides, thread=thread)
    check_middleware_allowed(args, config)
    if args.stress is not None:
        plan = stress_plan(config, loaded, args.stress, window_tokens=config.window_tokens(loaded.max_input_tokens))
        if plan.config is None:
            raise ConfigError(plan.reason, key="stress")
        print(f"stress       {plan.describe()}", file=sys.stderr)
        config = plan.config
    return config


def _run(args: argparse.Namespace) -> Run:
    from engine.formats import load_thread
    from engine.run.replay import replay

    thread = load_thread(args.file, format=args.format, thread_id=args.thread_id, max_bytes=args.max_bytes)
    # survival and cache default to the thread's own preset (as-recorded when it recorded its usage): the
    # source agent's compactions are the ones to account for; needle and drift keep deepagents
    own = args.eval_kind in ("survival", "cache")
    return replay(thread, _config(args, thread, thread if own else None))


def _header(run: Run) -> dict[str, Any]:
    return {"thread_id": run.thread.thread_id, "steps": len(run.steps), "window_tokens": run.window_tokens,
            "config": run.config.to_dict()}


def run(args: argparse.Namespace) -> int:
    from engine.evals import goal_drift, needle_retention
    from engine.evals.drift import step_ranges

    result = _run(args)
    if args.eval_kind in ("survival", "cache"):
        from engine.cli import eval_survival

        runner = eval_survival.run_survival if args.eval_kind == "survival" else eval_survival.run_cache
        return runner(args, result, _header(result))
    if args.eval_kind == "needle":
        report = needle_retention(result, args.needles or None)
        if args.json:
            doc = {"schema": "context-inspector/eval-needle", "version": 1, **_header(result),
                   **report.to_dict(per_step=args.per_step)}
            sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=1) + "\n")
            return 0
        print(f"needles      {', '.join(report.needles) or 'none found'}"
              + (" (picked from the thread)" if report.auto_picked else ""))
        print(f"compactions  {len(report.compactions)}; checked {plural(len(report.checked_steps), 'step')}")
        print(f"score        {_fmt(report.score)} (in view or in summary); with recovery {_fmt(report.recovery_score)}")
        for c in report.at_compactions():
            classes = ", ".join(f"{n}: {k}" for n, k in c["classes"].items())
            print(f"  step {c['step']:>5} {c['source']:9} {classes}")
        return 0
    report_d = goal_drift(result)
    if args.json:
        doc = {"schema": "context-inspector/eval-drift", "version": 1, **_header(result),
               **report_d.to_dict(per_step=args.per_step)}
        sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=1) + "\n")
        return 0
    print(f"intent       {(report_d.intent or 'none (no human message)')[:120]}")
    print(f"score        {_fmt(report_d.score)} of checked steps keep the intent")
    for check in report_d.checks:
        flag = " FLAG" if check.status == "missing" or check.placeholder else ""
        extra = " (too long to summarize)" if check.placeholder else ""
        print(f"  step {check.step:>5} {check.source:9} {check.status}{extra}{flag}")
    flagged = report_d.flagged_steps
    if flagged:
        print(f"flagged      {plural(len(flagged), 'step')}: {step_ranges(flagged)}")
    return 0


def _fmt(score: float | None) -> str:
    return "n/a" if score is None else f"{score:.3f}"
