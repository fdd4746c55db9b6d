"""`ctxi export-config --for AGENT`: the current settings written as that agent's own configuration."""

from __future__ import annotations

import argparse
import json
import sys

from engine.cli.arguments import add_config_arguments, add_json_argument, check_output_path, write_output

NAME = "export-config"
HELP = ("Write the settings (a config, a preset and --set) as an agent's own configuration: Claude Code's env var / "
        "settings.json, Codex config.toml, Gemini CLI settings.json, OpenHands condenser, DeerFlow config.yaml, "
        "a LangChain or Deep Agents snippet; each key with the agent's docs, and what the agent cannot take.")
# engine.sessions.export.TARGETS, named here so `ctxi export-config --help` needs no engine
TARGETS: tuple[str, ...] = ("claude-code", "codex", "gemini-cli", "openhands", "deerflow", "langchain", "deepagents")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--for", dest="target", required=True, choices=TARGETS, metavar="AGENT",
                   help="the agent: " + ", ".join(TARGETS))
    p.add_argument("file", nargs="?", metavar="FILE",
                   help="a thread whose window and model the thresholds are converted against (default: the config's "
                        "model.max_input_tokens, else 200,000)")
    add_config_arguments(p, default="deepagents")
    p.add_argument("--out", metavar="PATH", help="write the text to a file instead of stdout")
    add_json_argument(p, "the export (files, what was carried and not, sources)")


def run(args: argparse.Namespace) -> int:
    from engine.config.loading import load_config
    from engine.sessions.export import export_config

    check_output_path("--out", args.out)
    window = model = None
    thread = None
    if args.file:
        from engine.formats import load_thread

        thread = load_thread(args.file)
        window, model = thread.max_input_tokens, thread.model
    config = load_config(args.config, preset_name=args.preset or (None if args.config else "deepagents"),
                         overrides=args.overrides, thread=thread)
    result = export_config(config, args.target, window_tokens=window, model=model)
    text = json.dumps(result.to_dict(), ensure_ascii=False, indent=1) + "\n" if args.json else result.text()
    if args.out:
        write_output("--out", args.out, text)
    else:
        sys.stdout.write(text)
    return 0
