"""`ctxi sessions [DIR...]`: the agents' sessions found under the roots, newest first, one row each."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from engine.cli.arguments import add_json_argument

NAME = "sessions"
HELP = ("List the Claude Code, Codex, Gemini CLI and Cline sessions found under folders (default: CTXI_SESSIONS "
        "or sessions.roots in the workspace's settings.yaml): agent, project, title, date, model, steps, peak, "
        "compactions, cost.")
AGENT_NAMES: tuple[str, ...] = ("claude-code", "codex", "gemini-cli", "cline")  # disk_sessions.AGENTS


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("roots", nargs="*", metavar="DIR",
                   help="folders to look in, e.g. ~/.claude/projects ~/.codex/sessions (default: the configured roots)")
    p.add_argument("--agent", action="append", default=[], choices=AGENT_NAMES,
                   help="only this agent's sessions (repeatable)")
    p.add_argument("--search", default="", metavar="TEXT", help="only sessions whose title, project, model or path "
                   "contains every word of TEXT (case-insensitive)")
    p.add_argument("--limit", type=int, metavar="N", help="show the newest N")
    p.add_argument("--workers", type=int, metavar="N", help="processes reading files (default: one per core)")
    p.add_argument("--no-index", action="store_true",
                   help="read every file (no summaries kept in the workspace's sessions/index.json)")
    add_json_argument(p, "the list (docs/sessions.md)")


def _money(value: float | None) -> str:
    return "n/a" if value is None else f"${value:,.2f}"


def _tokens(value: int | None) -> str:
    return "" if value is None else f"{value:,}"


def table(rows: list[Any]) -> list[str]:
    lines = [f"{'modified':<16} {'agent':<11} {'steps':>5} {'peak':>9} {'comp':>4} {'cost':>9}  "
             f"{'model':<22} {'project':<28} title"]
    for r in rows:
        project = (r.project or "")[-28:]
        when = (r.modified or "")[:16].replace("T", " ")
        note = f"  [{r.error}]" if r.error else ("  [live]" if r.live else "")
        lines.append(f"{when:<16} {r.agent:<11} {r.steps:>5} {_tokens(r.peak_tokens):>9} {r.compactions:>4} "
                     f"{_money(r.dollars):>9}  {(r.model or '')[:22]:<22} {project:<28} {(r.title or '')[:70]}{note}")
    return lines


def run(args: argparse.Namespace) -> int:
    from engine.sessions.listing import SummaryIndex, search, summarize_listing
    from engine.workspace.disk_sessions import configured_roots, discover, resolve_roots
    from engine.workspace.workspace import default_root

    workspace = default_root()
    roots = resolve_roots(configured_roots(args.roots, workspace_root=workspace))
    if not roots:
        from engine.base.errors import ContextInspectorError

        raise ContextInspectorError("no sessions root: give folders (ctxi sessions ~/.claude/projects ~/.codex/sessions), "
                                    "or set CTXI_SESSIONS, or sessions.roots in the workspace's settings.yaml")
    index = SummaryIndex() if args.no_index else SummaryIndex.in_workspace(workspace)
    listing = discover(roots)
    result = summarize_listing(listing, index=index, workers=args.workers)
    index.save()
    rows = search(result.rows, args.search, args.agent)
    if args.limit is not None:
        rows = rows[: max(0, args.limit)]
    if args.json:
        doc = result.to_dict()
        doc["roots"] = [str(r) for r in roots]
        doc["sessions"] = [r.to_dict() for r in rows]
        sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=1) + "\n")
        return 0
    print("\n".join(table(rows)))
    notes = [f"{len(rows):,} of {len(result.rows):,} sessions under {', '.join(str(r) for r in roots)} "
             f"({result.read_files:,} read, {result.cached:,} unchanged since the last listing, {result.elapsed_s:.2f} s)"]
    if result.refused:
        notes.append(f"refused {len(result.refused):,}: " + "; ".join(f"{p} ({why})" for p, why in result.refused[:5]))
    if result.truncated:
        notes.append("stopped walking: too many entries or folders too deep under a root")
    print("\n".join(notes), file=sys.stderr)
    return 0
