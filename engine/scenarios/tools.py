"""The scenario agents' tools, working on the VirtualFilesystem (Deep Agents' backend semantics).

`ls`, `read_file` (offset/limit, numbered lines), `write_file`, `edit_file`, `grep` (literal),
`glob`, `write_todos`, `task` (a sub-agent with its own `create_agent` and its own context),
`web_search` over the bundled offline corpus, and `execute`, an offline shell with a few commands
(`cat`, `head`, `wc -l`, `pytest`) whose large outputs are what result offloading is for.
"""

from __future__ import annotations

import shlex
import threading
from collections.abc import Callable
from typing import Annotated, Any, Literal

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId, tool
from langgraph.types import Command
from typing_extensions import TypedDict

from engine.config.schema import EngineConfig
from engine.scenarios.bundle import PROJECT_ROOT, search_web
from engine.scenarios.live import AgentSession
from engine.thread.model import Thread
from engine.workspace.vfs import PathError, VirtualFilesystem

READ_LIMIT_LINES = 2000  # Deep Agents' default read limit
MAX_LINE_CHARS = 2000  # longer lines are cut, as Deep Agents' read_file does


class Todo(TypedDict):
    content: str
    status: Literal["pending", "in_progress", "completed"]


class AgentFiles:
    """The agent's view of the filesystem: its own files over the files the layers wrote.

    Layers get their own VFS (as in replay, it holds only what layers wrote: offloaded results,
    conversation history, memories), so a layer that mirrors a tool's write never applies it
    twice; the agent still reads `/large_tool_results/...` through this overlay.
    """

    def __init__(self, world: VirtualFilesystem, layers: VirtualFilesystem | None = None) -> None:
        self.world = world
        self.layers = layers if layers is not None else VirtualFilesystem()

    def _home(self, path: str) -> VirtualFilesystem:
        return self.world if self.world.exists(path) or not self.layers.exists(path) else self.layers

    def exists(self, path: str) -> bool:
        return self.world.exists(path) or self.layers.exists(path)

    def read(self, path: str, offset: int = 0, limit: int | None = None) -> str:
        return self._home(path).read(path, offset, limit)

    def write(self, path: str, content: str, **kwargs: Any) -> None:
        self.world.write(path, content, **kwargs)

    def edit(self, path: str, old: str, new: str, *, replace_all: bool = False) -> int:
        if not self.world.exists(path) and self.layers.exists(path):
            self.world.write(path, self.layers.read(path), layer="agent")  # copy up, then edit
        return self.world.edit(path, old, new, replace_all=replace_all)

    def ls(self, path: str = "/") -> list[str]:
        return sorted(set(self.world.ls(path)) | set(self.layers.ls(path)))

    def glob(self, pattern: str, path: str = "/") -> list[str]:
        return sorted(set(self.world.glob(pattern, path)) | set(self.layers.glob(pattern, path)))

    def grep(self, pattern: str, path: str = "/", glob: str | None = None) -> list[dict[str, Any]]:
        seen = set(self.world.paths())
        hits = self.world.grep(pattern, path, glob) + [m for m in self.layers.grep(pattern, path, glob)
                                                       if m["path"] not in seen]
        return sorted(hits, key=lambda m: (m["path"], m["line"]))


def numbered(lines: list[str], offset: int = 0) -> str:
    """`cat -n` style lines (6-wide line number, a tab), numbering from offset + 1."""
    return "\n".join(f"{i:6d}\t{line[:MAX_LINE_CHARS]}" for i, line in enumerate(lines, start=offset + 1))


def line_count(vfs: Any, path: str) -> int:
    return len(vfs.read(path).splitlines())


# A sub-agent runner: (tool_call_id, description, prompt, subagent_type) -> (final text, transcript)
SubagentRunner = Callable[[str, str, str, str], tuple[str, Thread | None]]


class Toolbox:
    """Builds the tools for one run; `task` calls spawn sub-agents and keep their transcripts."""

    def __init__(self, *, vfs: AgentFiles, config: EngineConfig, seed: int = 0, cancel: Any = None,
                 on_step: Any = None, subagent_model: Callable[[str, str], Any] | None = None,
                 subagent_max_steps: int | None = None, runner: SubagentRunner | None = None) -> None:
        self.vfs = vfs
        self.config = config
        self.seed = seed
        self.cancel = cancel
        self.on_step = on_step
        self.subagent_model = subagent_model
        self.subagent_max_steps = subagent_max_steps
        self.runner = runner
        self._subagents: dict[str, Thread] = {}
        self._lock = threading.Lock()

    def subagent_threads(self) -> dict[str, Thread]:
        with self._lock:
            return dict(sorted(self._subagents.items()))

    # -- the sub-agent ---------------------------------------------------------------------------
    def run_subagent(self, tool_call_id: str, description: str, prompt: str, subagent_type: str) -> str:
        if self.runner is not None:
            text, transcript = self.runner(tool_call_id, description, prompt, subagent_type)
        else:
            text, transcript = self._default_runner(tool_call_id, description, prompt)
        if transcript is not None:
            with self._lock:
                self._subagents[tool_call_id] = transcript
        return text

    def _default_runner(self, tool_call_id: str, description: str, prompt: str) -> tuple[str, Thread | None]:
        """A sub-agent with the same model kind, its own context, and no `task` tool (no nesting)."""
        if self.subagent_model is None:
            return "Task failed. Error: no sub-agent model configured", None
        # the child shares the world's files but has its own context, and so its own layer files
        child_files = AgentFiles(self.vfs.world, VirtualFilesystem())
        child_tools = Toolbox(vfs=child_files, config=self.config, seed=self.seed, cancel=self.cancel)
        session = AgentSession(
            model=self.subagent_model(tool_call_id, prompt), tools=child_tools.tools(include_task=False),
            system_prompt=SUBAGENT_PROMPT, config=self.config, thread_id=f"task-{tool_call_id}",
            vfs=child_files.layers,
            label=f"task:{tool_call_id}", id_prefix=f"{tool_call_id}-", on_step=self.on_step, cancel=self.cancel,
            max_steps=self.subagent_max_steps,
        )
        outcome = session.send(prompt)
        transcript = session.thread(model_name=None, title=description)
        last = next((m for m in reversed(transcript.messages) if m.type == "ai" and str(m.content).strip()), None)
        if outcome == "cancelled":  # DeerFlow's text; the parent stops at its next model call
            return "Task cancelled by user.", transcript
        if last is None:
            return "Task failed. Error: the sub-agent returned no answer", transcript
        return f"Task Succeeded. Result: {last.content}", transcript

    # -- the tools -------------------------------------------------------------------------------
    def tools(self, *, include_task: bool = True) -> list[BaseTool]:
        vfs = self.vfs

        @tool
        def ls(path: str = "/") -> str:
            """List the files and directories directly under `path` (absolute). Files show their line count."""
            try:
                entries = vfs.ls(path)
            except PathError as exc:
                return f"Error: {exc}"
            if not entries:
                return f"No files found in {path}"
            return "\n".join(e if e.endswith("/") else f"{e} ({line_count(vfs, e)} lines)" for e in entries)

        @tool
        def read_file(file_path: str, offset: int = 0, limit: int = READ_LIMIT_LINES) -> str:
            """Read a file with numbered lines. Use offset (0-based line) and limit to page through large files."""
            try:
                text = vfs.read(file_path)
            except (FileNotFoundError, PathError):
                return f"Error: File '{file_path}' not found"
            lines = text.splitlines()
            if offset >= len(lines) and lines:
                return f"Error: Line offset {offset} exceeds file length ({len(lines)} lines)"
            chunk = lines[offset:offset + limit]
            out = numbered(chunk, offset) if chunk else "System reminder: File exists but has empty contents"
            if offset + limit < len(lines):
                out += (f"\n\n[showing lines {offset + 1}-{offset + limit} of {len(lines)}; "
                        f"read more with offset={offset + limit}]")
            return out

        @tool
        def write_file(file_path: str, content: str) -> str:
            """Create a new file with `content`. Fails if the file exists (use edit_file for changes)."""
            try:
                if vfs.exists(file_path):
                    return (f"Cannot write to {file_path} because it already exists. Read and then make an edit, "
                            "or write to a new path.")
                vfs.write(file_path, content, layer="agent")
            except PathError as exc:
                return f"Error: {exc}"
            return f"Updated file {file_path}"

        @tool
        def edit_file(file_path: str, old_string: str, new_string: str, replace_all: bool = False) -> str:
            """Replace `old_string` with `new_string` in a file; old_string must be unique unless replace_all."""
            try:
                count = vfs.edit(file_path, old_string, new_string, replace_all=replace_all)
            except FileNotFoundError:
                return f"Error: File '{file_path}' not found"
            except (ValueError, PathError) as exc:
                return f"Error: {exc}"
            return f"Successfully replaced {count} instance(s) of the string in '{file_path}'"

        @tool
        def grep(pattern: str, path: str = "/", glob: str | None = None,
                 output_mode: Literal["files_with_matches", "content", "count"] = "files_with_matches") -> str:
            """Search file contents for a literal string. output_mode: files_with_matches, content or count."""
            try:
                matches = vfs.grep(pattern, path, glob)
            except PathError as exc:
                return f"Error: {exc}"
            if not matches:
                return f"No matches found for pattern '{pattern}'"
            if output_mode == "content":
                return "\n".join(f"{m['path']}:{m['line']}: {m['text']}" for m in matches)
            counts: dict[str, int] = {}
            for m in matches:
                counts[m["path"]] = counts.get(m["path"], 0) + 1
            if output_mode == "count":
                return "\n".join(f"{p}: {n}" for p, n in counts.items())
            return "\n".join(counts)

        @tool
        def glob(pattern: str, path: str = "/") -> str:
            """Find files whose path matches a glob pattern such as `**/*.py`."""
            try:
                found = vfs.glob(pattern, path)
            except PathError as exc:
                return f"Error: {exc}"
            return "\n".join(found) if found else f"No files found matching '{pattern}'"

        @tool
        def write_todos(todos: list[Todo], tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
            """Replace the todo list. Each item has content and status (pending, in_progress, completed)."""
            clean = [{"content": t["content"], "status": t["status"]} for t in todos]
            return Command(update={"todos": clean, "messages": [
                ToolMessage(f"Updated todo list to {clean}", tool_call_id=tool_call_id, name="write_todos")]})

        @tool
        def web_search(query: str, max_results: int = 3) -> str:
            """Search the web (an offline corpus) and return the full text of the best matching pages."""
            docs = search_web(query, max_results)
            if not docs:
                return f"No results for '{query}'"
            return "\n\n".join(f"## [{i}] {d.title}\nURL: {d.url}\n\n{d.body}" for i, d in enumerate(docs, start=1))

        @tool
        def execute(command: str) -> str:
            """Run a shell command in the project sandbox (cat, head -n N, wc -l, pytest)."""
            return run_shell(vfs, command)

        tools: list[BaseTool] = [ls, read_file, write_file, edit_file, grep, glob, write_todos, web_search, execute]
        if include_task:
            runner = self.run_subagent

            @tool
            def task(description: str, prompt: str, tool_call_id: Annotated[str, InjectedToolCallId],
                     subagent_type: str = "general-purpose") -> str:
                """Delegate a self-contained sub-task to a sub-agent with its own context window.

                description: 3-5 words; prompt: everything the sub-agent needs. Only its final answer returns.
                """
                return runner(tool_call_id, description, prompt, subagent_type)

            tools.append(task)
        return tools


SUBAGENT_PROMPT = (
    "You are a research sub-agent. You receive one self-contained task. Use web_search and the file tools "
    "to gather what the task needs, then answer with a concise, self-contained report: only your final "
    "message is returned to the agent that delegated the task."
)


# -- the offline shell -----------------------------------------------------------------------------
def _resolve(path: str) -> str:
    return path if path.startswith("/") else f"{PROJECT_ROOT}/{path}"


def _pytest(vfs: Any, verbose: bool = False) -> str:
    """A deterministic pytest session over /project/tests: the flaky retry test times out."""
    paths = [p for p in vfs.glob("**/*.py", f"{PROJECT_ROOT}/tests") if p.rsplit("/", 1)[-1].startswith("test_")]
    tests = [(p, ln.split("(")[0][4:]) for p in paths for ln in vfs.read(p).splitlines() if ln.startswith("def test_")]
    lines = ["============================= test session starts ==============================",
             "platform linux -- Python 3.11.7, pytest-8.3.2, pluggy-1.5.0", f"rootdir: {PROJECT_ROOT}",
             f"collected {len(tests)} items", ""]
    failures = []
    passed = 0
    marks: dict[str, str] = {}
    for i, (path, name) in enumerate(tests, start=1):
        rel = path.removeprefix(PROJECT_ROOT + "/")
        failed = name == "test_gives_up_after_three_attempts"
        if failed:
            failures.append((path, name))
        else:
            passed += 1
        if verbose:
            lines.append(f"{rel}::{name} {'FAILED' if failed else 'PASSED'} [{100 * i // len(tests):3d}%]")
        else:
            marks[rel] = marks.get(rel, "") + ("F" if failed else ".")
    lines += [f"{rel} {m}" for rel, m in marks.items()]
    for path, name in failures:
        lines += ["", f"_________________________ {name} _________________________", "",
                  "    def test_gives_up_after_three_attempts():",
                  "        with pytest.raises(RuntimeError):",
                  ">           charge(invoice(), 'tok', FakeClient([503, 503, 503]))",
                  "", "src/ledgerline/payments.py:38: in charge", "    time.sleep(BACKOFF_S * attempt)",
                  "E   Failed: Timeout >1.0s (pytest-timeout)", f"{path.removeprefix(PROJECT_ROOT + '/')}: Failed"]
    lines += ["", "=========================== short test summary info ============================"]
    lines += [f"FAILED tests/{p.rsplit('/', 1)[-1]}::{n} - Failed: Timeout >1.0s" for p, n in failures]
    lines.append(f"========================= {len(failures)} failed, {passed} passed in 3.52s =========================")
    return "\n".join(lines)


def run_shell(vfs: Any, command: str) -> str:
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        return f"bash: syntax error: {exc}"
    if not argv:
        return ""
    name, args = argv[0], argv[1:]
    try:
        if name == "cat" and args:
            return "".join(vfs.read(_resolve(a)) for a in args)
        if name == "head":
            n = 10
            if len(args) >= 2 and args[0] == "-n":
                n, args = int(args[1]), args[2:]
            return "\n".join(vfs.read(_resolve(args[0])).splitlines()[:n])
        if name == "wc" and args[:1] == ["-l"]:
            rows = [(line_count(vfs, _resolve(a)), a) for a in args[1:]]
            rows.append((sum(r[0] for r in rows), "total"))
            return "\n".join(f"{n:>7} {a}" for n, a in rows)
        if name == "pytest" or argv[:3] == ["python", "-m", "pytest"]:
            return _pytest(vfs, verbose="-v" in argv)
    except (FileNotFoundError, PathError) as exc:
        return f"{name}: {exc}: No such file or directory"
    except (ValueError, IndexError):
        return f"{name}: invalid arguments"
    return f"bash: {name}: command not found"
