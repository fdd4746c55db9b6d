"""`ctxi replay FILE`: replay a thread through the layers and print or save the report."""

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
    check_output_path,
    write_output,
)

if TYPE_CHECKING:
    from engine.run.run import Run

NAME = "replay"
HELP = "Replay a thread through the context layers; print a summary, or the JSON report (docs/replay-json.md)."


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_thread_arguments(p)
    add_config_arguments(p)
    add_json_argument(p, "the JSON report (docs/replay-json.md)")
    p.add_argument("--out", metavar="PATH", help="also write the JSON report to PATH (the summary stays on stdout)")
    p.add_argument("--no-views", action="store_true", help="omit per-step view listings from the JSON report")


def summary_lines(run: Run) -> list[str]:
    t = run.totals()
    window = t["window_tokens"]
    lines = [
        f"thread       {run.thread.thread_id} ({run.thread.source_format}), counter {run.counter.name}",
        f"config       preset {run.config.preset or '-'}; layers: {', '.join(run.layer_names) or 'none'}",
        f"steps        {t['steps']}",
        f"window       {window:,} tokens: {t['window_origin']}",
        f"peak view    {t['peak_view_tokens']:,} tokens = {100 * t['peak_view_tokens'] / window:.1f}% of the {window:,} window",
        f"peak raw     {t['peak_raw_tokens']:,} tokens (unmanaged) = {100 * t['peak_raw_tokens'] / window:.1f}%",
        f"counts       {_counts_line(run)}",
        *([f"note         {note}"] if run.calibration is not None and (note := run.calibration.note()) else []),
        f"tokens saved {t['tokens_saved']:,} input tokens over the run",
        f"summarizer   {_summarizer_line(run)}",
        f"files        {plural(t['files'], 'file')} written to the virtual filesystem",
        "events       " + (", ".join(f"{k} {v}" for k, v in t["events_by_kind"].items()) or "none"),
        *_decision_lines(run),
    ]
    if t["warnings"]:
        lines.append(f"warnings     {plural(t['warnings'], 'warning')} (see events with severity=warning)")
    return lines


def _summarizer_line(run: Run) -> str:
    """Our summarizer's calls, and first the source agent's recorded compaction calls where it made some."""
    from engine.views.timeline import summarizer_calls

    t, calls = run.totals(), summarizer_calls(run)
    ours = (f"{t['summarizer']}: {plural(t['summarizer_calls'], 'call')}, "
            f"{plural(t['summarizer_input_tokens'], 'input token')}")
    # the model calls the agent made to write its summaries, those the cost lines below price as summarizer calls
    if not calls.recorded:
        return ours
    if not calls.ours:
        return f"{plural(calls.recorded, 'call')} (recorded, by the agent); no summarizer of ours ran"
    return f"{plural(calls.total, 'call')}: {calls.recorded:,} recorded, by the agent; ours {ours}"


def with_recorded_summarizer_calls(totals: dict[str, Any], run: Run) -> dict[str, Any]:
    """The report's totals with `recorded_summarizer_calls` after `summarizer_calls` (ours alone, as before)."""
    from engine.views.timeline import summarizer_calls

    out: dict[str, Any] = {}
    for key, value in totals.items():
        out[key] = value
        if key == "summarizer_calls":
            out["recorded_summarizer_calls"] = summarizer_calls(run).recorded
    return out


def _decision_lines(run: Run) -> list[str]:
    """One line per rule that decided: where it first fired, on what, at which threshold (docs/replay-json.md)."""
    calls: dict[str, int] = {}
    fired: dict[str, list[Any]] = {}
    for d in run.decisions:
        calls[d.rule] = calls.get(d.rule, 0) + 1
        if d.fired:
            fired.setdefault(d.rule, []).append(d)
    lines = []
    for rule, n in calls.items():
        hits = fired.get(rule)
        if hits:
            lines.append(f"decisions    {hits[0].text()} (step {hits[0].step}; fired {plural(len(hits), 'time')})")
        else:
            lines.append(f"decisions    {rule}: never fired ({plural(n, 'call')} decided; steps[].decisions in --json)")
    return lines


def _counts_line(run: Run) -> str:
    t = run.totals()
    if not t["calibrated"]:
        return f"estimates by {run.counter.name} (the source recorded no input usage)"
    dev, unexplained = t["recorded_max_deviation"], t["recorded_max_unexplained"]
    if "recorded" not in run.config.order:  # a what-if is not meant to send what the agent recorded
        dev = None
    return (f"calibrated to recorded usage: {t['tokenizer']}; agent prompt {t['agent_prompt_tokens']:,} tokens"
            + (f", first-turn context {t['first_turn_context_tokens']:,}" if t["first_turn_context_tokens"] else "")
            + (f"; max deviation from recorded input {100 * dev:.2f}%" if dev is not None else "")
            + (f", max unexplained {100 * unexplained:.2f}%" if unexplained is not None else ""))


def run(args: argparse.Namespace) -> int:
    from engine.config.loading import load_config
    from engine.config.presets import RECORDED_PRESET
    from engine.config.schema import preset
    from engine.cost.run_cost import cost_against, cost_lines, run_cost
    from engine.formats import load_thread
    from engine.run.replay import replay
    from engine.run.whatif import against_baseline, has_recorded_baseline

    check_output_path("--out", args.out)  # a folder or a missing folder: said before the replay runs
    thread = load_thread(args.file, format=args.format, thread_id=args.thread_id, max_bytes=args.max_bytes)
    # A thread that recorded what its agent sent opens on the as-recorded run unless told otherwise.
    config = load_config(args.config, preset_name=args.preset, overrides=args.overrides, thread=thread)
    check_middleware_allowed(args, config)
    result = replay(thread, config)
    whatif = baseline = None
    if has_recorded_baseline(thread) and config.preset != RECORDED_PRESET:
        baseline = replay(thread, preset(RECORDED_PRESET))
        whatif = against_baseline(result, baseline)
    if not args.json:
        lines = summary_lines(result) + cost_lines(run_cost(result))
        if whatif is not None:
            lines.append(f"vs recorded  {whatif.headline}")
        print("\n".join(lines))
    if args.json or args.out:
        report = result.to_report(include_views=not args.no_views)
        report["totals"] = with_recorded_summarizer_calls(report["totals"], result)
        report["cost"] = run_cost(result).to_dict()
        against = whatif.to_dict() if whatif is not None else None
        if against is not None and baseline is not None:
            against.update(cost_against(result, baseline))
        report["against_recorded"] = against
        text = json.dumps(report, ensure_ascii=False, indent=1)
        if args.json:
            sys.stdout.write(text + "\n")
        if args.out:
            write_output("--out", args.out, text + "\n")
    return 0
