"""`ctxi watch FILE`: follow a session while its agent writes it — a live gauge, categories, the last events.

Each poll reads only the bytes appended since the last (engine.sessions.follow); a half-written last line
waits for the next poll. Runs until interrupted (Ctrl-C), or once with `--once`.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from engine.cli.arguments import MAX_BYTES_HELP, add_config_arguments, add_json_argument

NAME = "watch"
HELP = "Follow a session file as its agent writes it: context now, the agent's compaction threshold, calls left."
CLEAR = "\x1b[H\x1b[2J"
EVENTS_SHOWN = 5


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="a session file (Claude Code, Codex, Gemini CLI, Cline, any format)")
    p.add_argument("--interval", type=float, default=1.0, metavar="SECONDS", help="seconds between polls (default 1)")
    p.add_argument("--once", action="store_true", help="show the session as it is now and stop")
    p.add_argument("--no-replay", action="store_true",
                   help="gauge only: no replay through the layers (no categories, no events)")
    add_config_arguments(p)
    add_json_argument(p, "each update (one object per line)")
    p.add_argument("--max-bytes", type=int, metavar="N", help=MAX_BYTES_HELP)


def _number(n: int | None) -> str:
    return "?" if n is None else f"{n:,}"


def report(update: Any, run: Any, config: Any) -> dict[str, Any]:
    """The JSON twin of one screen."""
    from engine.sessions.gauge import gauge
    from engine.views.step import category_rows
    from engine.views.timeline import describe_event

    thread = update.thread
    g = gauge(thread, run=run, config=config)
    doc: dict[str, Any] = {"thread_id": thread.thread_id, "format": thread.source_format, "title": thread.title,
                           "steps": g.steps, "new_lines": update.new_lines, "new_bytes": update.new_bytes,
                           "first_changed_message": update.first_changed_message,
                           "waiting_for_line": update.waiting_line, "gauge": g.to_dict()}
    if run is not None and run.steps:
        last = run.steps[-1]
        doc["preset"] = config.preset
        doc["categories"] = category_rows(last, run.window_tokens if hasattr(run, "window_tokens") else g.window_tokens)
        events = [e for s in run.steps for e in s.events]
        doc["events"] = [{"step": e.step, "layer": e.layer, "kind": e.kind, "text": describe_event(e)}
                         for e in events[-EVENTS_SHOWN:]]
    return doc


def screen(doc: dict[str, Any]) -> str:
    from engine.sessions.gauge import Gauge, bar

    g = Gauge(**{k: v for k, v in doc["gauge"].items() if k != "fraction_of_window"})
    pct = "" if g.fraction is None else f" ({100 * g.fraction:.1f}%)"
    lines = [f"{doc['format']} · {doc.get('title') or doc['thread_id']}",
             f"{doc['steps']:,} steps · {g.compactions} compaction(s) · +{doc['new_lines']} line(s)"
             + (" · waiting for a half-written line" if doc["waiting_for_line"] else ""),
             f"context {_number(g.context_tokens)} / {g.window_tokens:,}{pct} ({g.source})",
             bar(g), g.threshold_label]
    if g.growth_per_call is not None:
        left = "over it" if g.calls_left == 0 else ("?" if g.calls_left is None else f"about {g.calls_left:,} call(s) left")
        lines.append(f"growing {g.growth_per_call:+,.0f} tokens/call · {left}")
    if doc.get("categories"):
        lines.append("categories: " + " · ".join(f"{r['category']} {r['tokens']:,}" for r in doc["categories"]))
    for e in doc.get("events", []):
        lines.append(f"  step {e['step']}: {e['text']}")
    return "\n".join(lines)


@contextmanager
def _stop_on_interrupt() -> Iterator[threading.Event]:
    """An event set by Ctrl-C (SIGINT), so the loop stops between updates, never inside one.

    A KeyboardInterrupt raised wherever the main thread was (inside the counter's thread pool, holding a
    lock its workers wait for) could leave the process unable to exit: a `ctxi watch` given SIGINT while
    it replayed an update under load did not exit within 60 s. The first Ctrl-C asks to stop after the
    current update; a second one interrupts at once. Off the main thread (no handler can be set) it is
    an event nobody sets: the caller stops the loop its own way."""
    stop = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def asked(_signum: int, _frame: Any) -> None:
        stop.set()
        signal.signal(signal.SIGINT, signal.default_int_handler)

    before = signal.signal(signal.SIGINT, asked)
    try:
        yield stop
    finally:
        signal.signal(signal.SIGINT, before)


def run(args: argparse.Namespace) -> int:
    from engine.config.loading import load_config
    from engine.config.presets import default_preset_name
    from engine.sessions.follow import MAX_SESSION_BYTES, Follower, replay_grown

    follower = Follower(path=args.file, max_bytes=args.max_bytes or MAX_SESSION_BYTES)
    tty = sys.stdout.isatty() and not args.json
    config = None
    previous = None
    try:
        with _stop_on_interrupt() as stop:
            while not stop.is_set():
                update = follower.poll()
                if update is not None:
                    if config is None:
                        preset = args.preset or (None if args.config else default_preset_name(update.thread))
                        config = load_config(args.config, preset_name=preset, overrides=args.overrides)
                    run = None if args.no_replay else replay_grown(update.thread, config, previous=previous,
                                                                   changed_from=update.first_changed_message)
                    previous = run
                    doc = report(update, run, config)
                    if args.json:
                        sys.stdout.write(json.dumps(doc, ensure_ascii=False) + "\n")
                    else:
                        sys.stdout.write((CLEAR if tty else "") + screen(doc) + "\n" + ("" if tty else "\n"))
                    sys.stdout.flush()
                if args.once:
                    return 0
                stop.wait(max(0.05, args.interval))
        print("ctxi watch: stopped", file=sys.stderr)
        return 0
    except KeyboardInterrupt:  # a second Ctrl-C, inside an update
        print("ctxi watch: stopped", file=sys.stderr)
        return 0
    finally:
        follower.close()
