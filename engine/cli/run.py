"""`ctxi run TARGET --task TEXT`: run a scenario agent or a real `provider:model` live, with a progress bar."""

from __future__ import annotations

import argparse
import sys
import threading
from typing import TYPE_CHECKING, TextIO

from engine.base.errors import ContextInspectorError
from engine.base.wording import plural
from engine.cli.arguments import (
    add_middleware_argument,
    check_middleware_allowed,
    check_output_path,
    write_output,
)

if TYPE_CHECKING:
    from engine.scenarios.live import CancelToken, LiveResult, StepProgress

NAME = "run"
HELP = "Run a scenario or a real model (provider:model) live through the layers and save the thread."
BAR_CHARS = 24


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", help="a scenario name (ctxi scenario --list) or provider:model, e.g. openai:gpt-4o-mini")
    p.add_argument("--task", help="the task (required for a real model; replaces a scenario's own task)")
    from engine.config.presets import PRESETS

    p.add_argument("--config", metavar="YAML", help="engine config YAML (ours or a DeerFlow config.yaml)")
    p.add_argument("--preset", choices=PRESETS, help="start from a preset (default: the scenario's, deepagents for models)")
    p.add_argument("--steps", type=int, help="model calls: a scenario's budget, a real model's maximum (default 30)")
    p.add_argument("--seed", type=int, default=0, help="scenario seed (default 0)")
    p.add_argument("--out", metavar="FILE|-", help="write the thread (native JSON) here; - for stdout")
    p.add_argument("--save", action="store_true", help="also save the thread in the workspace (CTXI_WORKSPACE)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_middleware_argument(p)


class ProgressBar:
    """A text progress bar on stderr: one line redrawn on a terminal, one line per step otherwise."""

    def __init__(self, stream: TextIO, total: int | None) -> None:
        self.stream = stream
        self.total = total
        self.tty = stream.isatty()
        self._lock = threading.Lock()

    def line(self, p: StepProgress) -> str:
        total = self.total or p.max_steps
        done = min(p.step, total) if total else p.step
        fill = int(BAR_CHARS * done / total) if total else 0
        bar = "#" * fill + "-" * (BAR_CHARS - fill)
        gauge = f"view {p.view_tokens:,}/{p.window_tokens:,} tok ({100 * p.view_fraction:.0f}%), raw {p.raw_tokens:,}"
        events = f"  [{', '.join(f'{e.layer}.{e.kind}' for e in p.events)}]" if p.events else ""
        who = "" if p.agent == "main" else f"  {p.agent}"
        return f"[{bar}] step {p.step}{'/' + str(total) if total else ''}  {gauge}  {p.action[:60]}{who}{events}"

    def __call__(self, p: StepProgress) -> None:
        with self._lock:
            if self.tty:  # our own control sequence goes to the terminal as is; the line (a model's words) escaped
                getattr(self.stream, "raw_stream", self.stream).write("\r\x1b[2K")
                self.stream.write(self.line(p)[:200])
            else:
                self.stream.write(self.line(p) + "\n")
            self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


def run_in_background(target: str, cancel: CancelToken, **kwargs: object) -> LiveResult:
    """Run in a worker thread so Ctrl-C cancels the run (keeping what ran) instead of losing it."""
    from engine.scenarios.live_run import run_live

    box: dict[str, object] = {}

    def work() -> None:
        try:
            box["result"] = run_live(target, cancel=cancel, **kwargs)  # type: ignore[arg-type]
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=work, name="ctxi-run", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.2)
    except KeyboardInterrupt:
        print("\ncancelling: the run stops at the next model or tool call", file=sys.stderr)
        cancel.cancel()
        worker.join()
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["result"]  # type: ignore[return-value]


def run(args: argparse.Namespace) -> int:
    from engine.formats.native import dumps
    from engine.scenarios.live import CancelToken, is_model_target, resolve_config, save_run

    if not args.out and not args.save:
        raise ContextInspectorError("--out: give a file to write the thread to (or - for stdout), or --save")
    check_output_path("--out", args.out)  # before the run: a run's work is not lost to a bad path
    model_target = is_model_target(args.target)
    if model_target and not args.task:
        raise ContextInspectorError(f"--task: a real model ({args.target}) needs a task")
    if args.steps is not None and args.steps < 1:
        raise ContextInspectorError("--steps: must be at least 1")
    default = "deepagents"
    if not model_target:
        from engine.scenarios import get_scenario

        scenario = get_scenario(args.target)
        default = scenario.preset
    config = resolve_config(args.config, args.preset, default)
    check_middleware_allowed(args, config)
    total = args.steps or (30 if model_target else scenario.default_steps)
    bar = None if args.quiet else ProgressBar(sys.stderr, total)
    cancel = CancelToken()
    try:
        result = run_in_background(args.target, cancel, task=args.task, config=config, steps=args.steps,
                                   seed=args.seed, on_step=bar)
    finally:
        if bar is not None:
            bar.close()
    thread = result.thread
    if args.out == "-":
        sys.stdout.write(dumps(thread) + "\n")
    elif args.out:
        write_output("--out", args.out, dumps(thread))
    if args.save:
        for path in save_run(result):  # renames keep previous_thread links valid
            print(f"saved {path}", file=sys.stderr)
    steps = len(thread.ai_indices())
    print(f"{result.outcome}: {plural(steps, 'step')}, {plural(len(thread.messages), 'message')}, "
          f"{plural(len(thread.subagents), 'sub-agent')}"
          + (f"; error: {result.error}" if result.error else "")
          + (f" -> {args.out}" if args.out and args.out != "-" else ""), file=sys.stderr)
    return 1 if result.outcome == "error" else 0
