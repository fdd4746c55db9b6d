"""What a tool call does, across agents: read a file, search, run a command, write or edit, fetch, or other.

Recovery cost (engine.evals.recovery) asks of every call after a compaction whether it fetched again
what the removed history held; survival (engine.evals.survival) reads paths and commands from the
calls. Tool and argument names are each agent's own (`TOOL_KINDS`, sources cited there). A call the
table does not know is classified by its arguments (a `command`/`cmd` runs a command), then by words in
its name (write, edit, read, search, fetch...); anything else is `other`, compared by its whole call.
A shell command is looked at once more: `cat`/`head`/`tail`/`sed -n` read a file, `grep`/`rg`/`find`/`ls`
search, `sed -i`, `> file`, `tee file`, `apply_patch`/`git apply`/`patch` write.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

READ, SEARCH, COMMAND, WRITE, FETCH, OTHER = "read", "search", "command", "write", "fetch", "other"

# Claude Code (https://code.claude.com/docs/en/tools-reference), Deep Agents 0.7.32 (reference/deepagents.md),
# Gemini CLI (packages/core/src/tools/tool-names.ts @ 00068e9c), Codex (codex-rs tool specs: shell,
# local_shell, exec_command, apply_patch), OpenHands (execute_bash, str_replace_editor/file_editor),
# Cline (src/core/prompts tools), SWE-agent (bash, open, create, edit, find_file, search_dir).
TOOL_KINDS: dict[str, str] = {
    # reads
    "Read": READ, "NotebookRead": READ, "read_file": READ, "read_many_files": READ, "view": READ, "open": READ,
    # searches
    "Glob": SEARCH, "Grep": SEARCH, "LS": SEARCH, "ls": SEARCH, "glob": SEARCH, "grep": SEARCH,
    "grep_search": SEARCH, "search_file_content": SEARCH, "list_directory": SEARCH, "search_files": SEARCH,
    "list_files": SEARCH, "list_code_definition_names": SEARCH, "find_file": SEARCH, "search_dir": SEARCH,
    "search_file": SEARCH, "WebSearch": SEARCH, "google_web_search": SEARCH, "web_search": SEARCH,
    "ToolSearch": SEARCH, "tool_search": SEARCH,
    # commands
    "Bash": COMMAND, "bash": COMMAND, "execute": COMMAND, "shell": COMMAND, "local_shell": COMMAND,
    "exec_command": COMMAND, "exec": COMMAND, "run_shell_command": COMMAND, "execute_bash": COMMAND,
    "execute_command": COMMAND,
    # writes and edits
    "Write": WRITE, "Edit": WRITE, "MultiEdit": WRITE, "NotebookEdit": WRITE, "write_file": WRITE,
    "edit_file": WRITE, "replace": WRITE, "apply_patch": WRITE, "write_to_file": WRITE, "replace_in_file": WRITE,
    "create": WRITE, "edit": WRITE, "insert": WRITE,
    # fetches
    "WebFetch": FETCH, "web_fetch": FETCH, "fetch": FETCH,
}
# OpenHands' editor: one tool, the `command` argument says what it does
EDITOR_TOOLS = frozenset({"str_replace_editor", "file_editor"})
EDITOR_WRITES = frozenset({"create", "str_replace", "insert", "undo_edit", "write"})

PATH_KEYS = ("file_path", "path", "absolute_path", "notebook_path", "filename", "file", "dir_path", "directory")
COMMAND_KEYS = ("command", "cmd")
PATTERN_KEYS = ("pattern", "regex", "query", "glob", "file_name", "search_term")

_SHELL_READS = frozenset({"cat", "head", "tail", "less", "more", "nl", "bat", "view"})
_SHELL_SEARCHES = frozenset({"grep", "rg", "ag", "find", "fd", "ls", "tree", "ack"})
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.MULTILINE)
_REDIRECT = re.compile(r"(?<![0-9&])>{1,2}\s*([^\s;&|<>]+)")


@dataclass(frozen=True)
class Action:
    """One tool call as an action: its kind and what it targets (a path, a command, a search, a URL)."""

    kind: str
    target: str
    tool: str
    call_id: str = ""
    signature: str = ""  # the whole call (name and arguments): two calls with one signature are the same call

    @property
    def key(self) -> tuple[str, str]:
        return self.kind, self.target


def command_text(value: Any) -> str:
    if isinstance(value, list):
        argv = [str(v) for v in value]
        # Codex's shell argv: ["bash", "-lc", "cmd"] runs cmd
        if len(argv) >= 3 and argv[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh") and argv[1] in ("-lc", "-c"):
            return argv[2]
        return " ".join(argv)
    return str(value)


def normalize_command(text: str) -> str:
    """A command as matched: whitespace collapsed, at most 200 characters."""
    return " ".join(text.split())[:200]


def _shell_words(command: str) -> list[str]:
    try:
        return shlex.split(command, posix=True)
    except ValueError:
        return command.split()


def shell_action(command: str) -> tuple[str, str]:
    """What a shell command does first: read a file (`cat x`), search (`grep`), write (`sed -i`, `> x`), or run."""
    first = re.split(r"\s*(?:&&|\|\||;|\|)\s*", command.strip(), maxsplit=1)[0]
    if first.startswith("cd ") and "&&" in command:
        first = re.split(r"\s*(?:&&|\|\||;|\|)\s*", command.split("&&", 1)[1].strip(), maxsplit=1)[0]
    words = _shell_words(first)
    if not words:
        return COMMAND, normalize_command(command)
    program = words[0].rsplit("/", 1)[-1]
    files = [w for w in words[1:] if not w.startswith("-")]
    if program == "sed" and any(w.startswith("-i") for w in words[1:]):
        return WRITE, files[-1] if files else normalize_command(command)
    if program in ("apply_patch", "patch") or (program == "git" and words[1:2] == ["apply"]):
        return WRITE, normalize_command(command)
    redirect = _REDIRECT.search(first)
    if redirect and redirect.group(1) not in ("/dev/null",) and program not in _SHELL_SEARCHES:
        return WRITE, redirect.group(1)
    if program == "tee" and files:
        return WRITE, files[0]
    if program in _SHELL_READS and files and "|" not in command:
        return READ, files[-1]
    if program == "sed" and "-n" in words and files:
        return READ, files[-1]
    if program in _SHELL_SEARCHES or (program == "git" and words[1:2] == ["grep"]):
        return SEARCH, normalize_command(command)
    return COMMAND, normalize_command(command)


def action_of(tool_call: Mapping[str, Any]) -> Action:
    """The action a tool call performs (see the module docstring)."""
    name = str(tool_call.get("name") or "")
    raw = tool_call.get("args")
    args: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    action = _classify(name, args, str(tool_call.get("id") or ""))
    return Action(action.kind, action.target, action.tool, action.call_id, f"{name}({_canonical(args, None)})")


def same_path(a: str, b: str) -> bool:
    """One file named two ways: equal, or one is the other's tail at a `/` (`src/a.py`, `/w/src/a.py`)."""
    if a == b:
        return True
    short, long = sorted((a.lstrip("./"), b.lstrip("./")), key=len)
    return bool(short) and "/" in short and long.endswith("/" + short)


def _classify(name: str, args: Mapping[str, Any], call_id: str) -> Action:
    path = next((str(args[k]) for k in PATH_KEYS if isinstance(args.get(k), str) and args[k]), "")
    if name in EDITOR_TOOLS:
        return Action(WRITE if str(args.get("command")) in EDITOR_WRITES else READ, path, name, call_id)
    known = TOOL_KINDS.get(name)
    kind = known or OTHER
    if known is None:
        lowered = name.lower()
        if any(args.get(k) for k in COMMAND_KEYS) and isinstance(args.get("command", args.get("cmd")), (str, list)):
            kind = COMMAND
        elif any(w in lowered for w in ("write", "edit", "replace", "create", "patch", "insert", "delete")):
            kind = WRITE
        elif any(w in lowered for w in ("read", "view", "open", "cat")) and path:
            kind = READ
        elif any(w in lowered for w in ("search", "grep", "glob", "find", "list")):
            kind = SEARCH
        elif any(w in lowered for w in ("fetch", "browse", "url")):
            kind = FETCH
    if kind == COMMAND:
        value = next((args[k] for k in COMMAND_KEYS if args.get(k)), args.get("input", ""))
        sub, target = shell_action(command_text(value))
        return Action(sub, target, name, call_id)
    if kind == WRITE and name == "apply_patch":
        text = str(args.get("input") or args.get("patch") or "")
        files = _PATCH_FILE.findall(text)
        return Action(WRITE, files[0].strip() if files else normalize_command(text), name, call_id)
    if kind in (READ, WRITE):
        return Action(kind, path or _canonical(args), name, call_id)
    if kind == SEARCH:
        pattern = next((str(args[k]) for k in PATTERN_KEYS if args.get(k)), "")
        return Action(SEARCH, f"{pattern} @ {path}" if path else (pattern or _canonical(args)), name, call_id)
    if kind == FETCH:
        url = str(args.get("url") or args.get("prompt") or "")
        return Action(FETCH, url or _canonical(args), name, call_id)
    return Action(OTHER, f"{name}({_canonical(args)})", name, call_id)


def _canonical(args: Mapping[str, Any], limit: int | None = 400) -> str:
    text = json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)
    return text if limit is None else text[:limit]
