"""long-refactor: a long run tracked with todos; after summarization the todo reminder restores the plan."""

from __future__ import annotations

import ast
import random
import re
from typing import cast

from engine.scenarios.base import Scenario
from engine.scenarios.policy import Move, Seen

OLD, NEW = "compute_total", "invoice_total"
_NUMBERED = re.compile(r"^\s*\d+\t(.*)$")
STEPS_PER_FILE = 12  # in_progress + read, a few edits, review, verify: sizes the plan to the budget


def file_lines(read_result: str) -> list[str]:
    """The file's text lines from a numbered read_file result."""
    out = []
    for line in read_result.splitlines():
        m = _NUMBERED.match(line)
        if m:
            out.append(m.group(1))
    return out


def logger_call(line: str) -> str | None:
    """`print("a", x)` -> `logger.info("a %s", x)`, keeping the indentation; None if not a plain print."""
    stripped = line.strip()
    try:
        node = ast.parse(stripped).body[0]
    except SyntaxError:
        return None
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name) and node.value.func.id == "print"):
        return None
    fmt, args = [], []
    for arg in node.value.args:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            fmt.append(arg.value.replace("%", "%%"))
        else:
            fmt.append("%s")
            args.append(ast.get_source_segment(stripped, arg) or "")
    indent = line[: len(line) - len(line.lstrip())]
    return f"{indent}logger.info({' '.join(fmt)!r}{''.join(', ' + a for a in args)})".replace("'", '"')


def planned_edits(path: str, lines: list[str]) -> list[dict[str, object]]:
    """The edits that refactor one file, derived from its current text."""
    text = "\n".join(lines)
    edits: list[dict[str, object]] = []
    if path.endswith("/billing.py") and f"def {OLD}(" in text:
        edits.append({"file_path": path, "old_string": f"def {OLD}(", "new_string": f"def {NEW}("})
        edits.append({"file_path": path, "old_string": f"{OLD}(inv)", "new_string": f"{NEW}(inv)"})
        edits.append({"file_path": path, "old_string": "def compute_totals(", "new_string":
                      f"{OLD} = {NEW}  # deprecated alias, remove in 3.0\n\n\ndef compute_totals("})
    elif OLD in text and not path.endswith("/billing.py"):
        edits.append({"file_path": path, "old_string": OLD, "new_string": NEW, "replace_all": True})
    prints = [ln for ln in lines if ln.strip().startswith("print(")]
    for ln in prints:
        new = logger_call(ln)
        if new and text.count(ln) == 1:
            edits.append({"file_path": path, "old_string": ln, "new_string": new})
    if prints and "import logging" not in text:
        first_import = next((ln for ln in lines if ln.startswith(("import ", "from "))
                             and not ln.startswith("from __future__")), None)
        if first_import and text.count(first_import) == 1:
            edits.append({"file_path": path, "old_string": first_import, "new_string": f"import logging\n{first_import}"})
        anchor = next((ln for ln in lines if ln and not ln[0].isspace() and not ln.startswith(
            ("import ", "from ", '"""', "#", "@", ")")) and "=" in ln or ln.startswith(("def ", "class "))), None)
        if anchor and text.count(anchor) == 1:
            edits.append({"file_path": path, "old_string": anchor,
                          "new_string": f"logger = logging.getLogger(__name__)\n{anchor}"})
    return edits


class LongRefactorPolicy:
    """Grep for the work, plan it as todos, then file by file: mark, read, edit, verify, complete."""

    def __init__(self, task: str, steps: int) -> None:
        self.steps = steps

    def decide(self, seen: Seen, step: int, rng: random.Random) -> Move:
        todos = seen.todos()
        if step >= self.steps - 1:
            return Move(self.final_answer(todos))
        if todos is None:
            found = [c for c in seen.calls_named("grep") if c.args.get("pattern") == OLD and c.result is not None
                     and c.args.get("output_mode", "files_with_matches") == "files_with_matches"]
            if not found:
                return Move(f"First, where is `{OLD}` used?",
                            [("grep", {"pattern": OLD, "path": "/project"})])
            # `found` keeps only calls with a result
            files = [f for f in cast(str, found[-1].result).splitlines() if f.startswith("/project/")]
            files.sort(key=lambda f: (not f.endswith("/billing.py"), f))
            plan: list[dict[str, str]] = []
            cost = 4
            for f in files:  # as many files as the step budget allows, by experience of what each costs
                cost += STEPS_PER_FILE if "/src/" in f else 4
                if cost > self.steps and len(plan) >= 2:
                    break
                plan.append({"content": f"Refactor {f}", "status": "pending"})
            plan.append({"content": "Run the test suite", "status": "pending"})
            return self.start_item(plan, 0, "Planning the refactor, one todo per file.")
        current = next((i for i, t in enumerate(todos) if t["status"] == "in_progress"), None)
        if current is None:
            pending = next((i for i, t in enumerate(todos) if t["status"] == "pending"), None)
            if pending is None:
                return Move(self.final_answer(todos))
            return self.start_item(todos, pending, "")
        item = todos[current]["content"]
        if item == "Run the test suite":
            runs = seen.calls_named("execute")
            if not runs or runs[-1].result is None:
                return Move("Running the tests.", [("execute", {"command": "pytest -q"})])
            done = [{**t, "status": "completed"} for t in todos]
            return Move("Tests ran; the only failure is the known flaky timeout.", [("write_todos", {"todos": done})])
        path = item.removeprefix("Refactor ")
        reads = [c for c in seen.calls_named("read_file") if c.args.get("file_path") == path and c.result]
        if not reads:
            return Move("", [("read_file", {"file_path": path})])
        lines = file_lines(reads[-1].result or "")
        last_read = seen.calls.index(reads[-1])
        edited = {str(c.args.get("old_string")) for c in seen.calls[last_read:]
                  if c.name == "edit_file" and c.args.get("file_path") == path and c.result is not None}
        remaining = [e for e in planned_edits(path, lines) if str(e["old_string"]) not in edited]
        if remaining:
            return Move("", [("edit_file", remaining[0])])
        if edited:  # edits since the last read: look at the result before moving on
            return Move("Let me review the edited file.", [("read_file", {"file_path": path})])
        verified = [c for c in seen.calls[last_read:] if c.name == "grep" and c.args.get("path") == path]
        if not verified:
            return Move("Checking the file is clean and the tests still pass.", [
                ("grep", {"pattern": "print(", "path": path}), ("grep", {"pattern": OLD, "path": path}),
                ("execute", {"command": "pytest -v tests/"})])
        todos = [dict(t) for t in todos]
        todos[current]["status"] = "completed"
        nxt = next((i for i, t in enumerate(todos) if t["status"] == "pending"), None)
        if nxt is None:
            return Move("", [("write_todos", {"todos": todos})])
        return self.start_item(todos, nxt, f"{path.rsplit('/', 1)[-1]} is done.")

    @staticmethod
    def start_item(todos: list[dict[str, str]], index: int, text: str) -> Move:
        todos = [dict(t) for t in todos]
        todos[index]["status"] = "in_progress"
        calls: list[tuple[str, dict[str, object]]] = [("write_todos", {"todos": todos})]
        content = todos[index]["content"]
        if content.startswith("Refactor "):
            calls.append(("read_file", {"file_path": content.removeprefix("Refactor ")}))
        return Move(text, calls)

    @staticmethod
    def final_answer(todos: list[dict[str, str]] | None) -> str:
        if not todos:
            return "I could not reconstruct the plan; stopping here."
        done = sum(1 for t in todos if t["status"] == "completed")
        return (f"Refactor finished: {done} of {len(todos)} todo items completed. `{OLD}` is now `{NEW}` "
                "(with a deprecated alias in billing.py) and print() calls in the touched modules use module loggers.")


class LongRefactor(Scenario):
    name = "long-refactor"
    title = "Long refactor tracked with todos"
    teaches = ("A long edit loop keeps its plan in write_todos. Once summarization removes the write_todos "
               "calls from the context, the todo layer injects a reminder with the current list (once), and "
               "the agent resumes at the right item instead of re-planning.")
    layers = ("summarization", "todo")
    lesson_preset = "deerflow"
    preset = "deerflow"
    default_steps = 90
    sample_steps = 160
    task = (f"Refactor ledgerline: rename `{OLD}` to `{NEW}` everywhere (keep a deprecated alias in billing.py) "
            "and replace print() calls with module loggers. Track every file as a todo item and keep the list "
            "up to date.")

    def make_policy(self, task: str, steps: int) -> LongRefactorPolicy:
        return LongRefactorPolicy(task, steps)


SCENARIO = LongRefactor()
