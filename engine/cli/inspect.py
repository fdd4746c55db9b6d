"""`ctxi inspect FILE`: what a thread holds and how many tokens each model call was sent."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from engine.base.wording import plural
from engine.cli.arguments import add_json_argument, add_thread_arguments

NAME = "inspect"
HELP = "Show a thread's format, messages, tool calls, sub-agents, compactions and tokens per step."
# engine.tokens.counters.COUNTERS and DEFAULT_COUNTER; named here so `ctxi inspect --help` needs no tokenizer
# (tests/cli/test_cli.py checks they agree)
COUNTERS: tuple[str, ...] = ("o200k_base", "cl100k_base", "approximate")
DEFAULT_COUNTER = "o200k_base"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_thread_arguments(parser)
    parser.add_argument("--list", action="store_true", help="list the threads FILE holds instead")
    add_json_argument(parser, "the inspect report (docs/inspect-json.md)")
    parser.add_argument("--counter", choices=COUNTERS, default=DEFAULT_COUNTER, help="token counter (default %(default)s)")


def run(args: argparse.Namespace) -> int:
    from engine.formats import list_threads, load_thread
    from engine.formats.dburl import is_postgres_url, redact
    from engine.recorded.inspect import inspect_thread
    from engine.tokens.counters import counter_for_thread

    if args.list:
        refs = list_threads(args.file, format=args.format, max_bytes=args.max_bytes)
        if args.json:
            _print_json([{"thread_id": r.thread_id, "title": r.title, "messages": r.messages} for r in refs])
        else:
            print(_list_text(refs))
        return 0
    thread = load_thread(args.file, format=args.format, thread_id=args.thread_id, max_bytes=args.max_bytes)
    report = inspect_thread(thread, counter_for_thread(thread, args.counter))
    if args.json:
        _print_json(report)
    else:
        print(render_text(report, file=redact(args.file) if is_postgres_url(args.file) else args.file))
    return 0


def _print_json(value: Any) -> None:
    json.dump(value, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")


def _list_text(refs: list[Any]) -> str:
    width = max((len(r.thread_id) for r in refs), default=9)
    lines = [f"{'thread id':<{width}}  {'messages':>8}  title"]
    for r in refs:
        count = "" if r.messages is None else f"{r.messages:,}"
        lines.append(f"{r.thread_id:<{width}}  {count:>8}  {r.title or ''}")
    return "\n".join(lines)


def _counts(items: dict[str, int], limit: int = 8) -> str:
    shown = [f"{k} {v:,}" for k, v in list(items.items())[:limit]]
    if len(items) > limit:
        shown.append(f"+{len(items) - limit} more")
    return ", ".join(shown)


def render_text(report: dict[str, Any], *, file: str) -> str:
    """The inspect object as a short readable report."""
    tokens = report["tokens"]
    window = f" (window {report['max_input_tokens']:,})" if report.get("max_input_tokens") else ""
    lines = [
        f"file:        {file}",
        f"format:      {report['format']}",
        f"thread:      {report['thread_id']}" + (f"  {report['title']}" if report.get("title") else ""),
        f"model:       {report.get('model') or 'unknown'}{window}",
        f"messages:    {report['messages']:,}  ({_counts(report['by_role'])})",
        f"tool calls:  {report['tool_calls']['count']:,}"
        + (f"  ({_counts(report['tool_calls']['by_name'])})" if report["tool_calls"]["count"] else ""),
        f"sub-agents:  {len(report['subagents'])}",
    ]
    for sub in report["subagents"]:
        lines.append(f"  {sub['tool_call_id']}  {plural(sub['messages'], 'message')}, {plural(sub['tokens'], 'token')}")
    lines.append(f"recorded compactions: {len(report['recorded_compactions'])}")
    for c in report["recorded_compactions"]:
        pre = f"{c['pre_tokens']:,}" if c["pre_tokens"] is not None else "?"
        lines.append(f"  before message {c['index']}: trigger {c['trigger'] or '?'}, {pre} tokens before, "
                     f"summary {plural(c['summary_tokens'], 'token')}")
    micro = report.get("recorded_microcompactions") or []
    if micro:
        lines.append(f"recorded microcompactions: {len(micro)} (old tool results cleared, history kept)")
        for m in micro:
            lines.append(f"  before message {m['index']}: {plural(m['cleared'], 'tool result')} cleared, "
                         f"{plural(m['counted_saving'], 'token')} fewer counted here")
    of = report.get("compaction_call_of")
    if of:
        lines.append(f"compaction call: this file is the summarizer call that compacted session {of.get('session_id')}"
                     + (f" ({of['parent_file']})" if of.get("parent_file") else "") + "; the session holds the compaction")
    skipped = report.get("skipped_records") or {}
    if skipped:
        lines.append(f"skipped records: {_counts(dict(sorted(skipped.items(), key=lambda kv: -kv[1])), limit=6)}")
    for warning in report.get("warnings") or []:
        lines.append(f"warning:     {warning}")
    peak_at = f" at step {tokens['peak_step']}" if tokens["peak_step"] is not None else " (after the last message)"
    lines.append(f"tokens ({tokens['counter']}): total {tokens['total']:,}, peak context {tokens['peak']:,}{peak_at}")
    by_category = {k: v for k, v in sorted(tokens["by_category"].items(), key=lambda kv: -kv[1]) if v}
    lines.append(f"  by category: {_counts(by_category, limit=12)}")
    steps = report["steps"]
    recorded = [s for s in steps if s["recorded_input_tokens"] is not None]
    lines.append(f"steps:       {plural(len(steps), 'model call')}, {len(recorded):,} with recorded usage")
    if recorded:
        top = max(recorded, key=lambda s: s["recorded_input_tokens"])
        lines.append(f"  largest recorded input: {top['recorded_input_tokens']:,} tokens at step {top['step']}: "
                     f"{top['context_tokens']:,} counted in the file by {report['tokens']['counter']}, "
                     f"{top['calibrated_tokens']:,} in the provider's tokens, of which {top['agent_prompt_tokens']:,} "
                     f"the agent's own prompt and tools and {top['hidden_tokens']:,} carried by messages beyond "
                     "their text (first-turn context, compaction re-attachments, unexplained)")
    lines.append("largest messages:")
    for m in report["largest_messages"]:
        lines.append(f"  #{m['index']:<5} {m['role']:<6} {m['tokens']:>8,}  {m['id'] or ''}")
    return "\n".join(lines)
