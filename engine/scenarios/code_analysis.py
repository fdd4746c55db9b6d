"""code-analysis: map a codebase with large generated files; whole-file reads are what offloading is for."""

from __future__ import annotations

import random
import re

from engine.scenarios.base import Scenario, keywords
from engine.scenarios.policy import Move, Seen

LARGE_FILE_LINES = 400  # above this the agent `cat`s the whole file, as agents with a shell often do
REPORT_PATH = "/reports/architecture.md"
_REGION = re.compile(r'"([A-Z]{2}-[A-Z]{2,3})"')
_DEF = re.compile(r"^\s*\d*\t?(?:def|class) ([A-Za-z_]\w*)", re.M)


class CodeAnalysisPolicy:
    """List the tree, read relevant files first (large ones in full), grep symbols, then report."""

    report_path = REPORT_PATH

    def __init__(self, task: str, steps: int) -> None:
        self.task = task
        self.steps = steps
        self.keys = keywords(task)

    def relevance(self, path: str, seen: Seen) -> int:
        """README first, then files named after the task's words or mentioned next to them in what was read."""
        name = path.rsplit("/", 1)[-1].lower()
        if name.startswith("readme"):
            return 100
        parts = re.split(r"[_.]", name)
        score = 2 * sum(1 for k in self.keys for p in parts if len(p) > 2 and (p.startswith(k) or k.startswith(p)))
        rel = path.removeprefix("/project/")
        for c in seen.calls_named("read_file"):
            for line in (c.result or "").splitlines():
                if rel in line and any(k in line.lower() for k in self.keys):
                    score += 3
        return score

    def decide(self, seen: Seen, step: int, rng: random.Random) -> Move:
        if any(c.name == "write_file" and c.args.get("file_path") == self.report_path for c in seen.calls) or \
                step >= self.steps - 1:
            return Move(self.final_answer(seen))
        if step >= self.steps - 2:
            return Move("I have enough to write the report.", [("write_file", {"file_path": self.report_path,
                                                                                "content": self.report(seen)})])
        listed_dirs = {str(c.args.get("path", "/")).rstrip("/") + "/" for c in seen.calls_named("ls")}
        if not seen.calls_named("ls"):
            return Move("I'll start by mapping the repository layout.", [("ls", {"path": "/project"})])
        todo_dirs = [d for d in seen.listed_dirs() if d not in listed_dirs]
        if todo_dirs:
            return Move("", [("ls", {"path": d.rstrip("/")}) for d in todo_dirs[:4]])
        # an offloaded result points to a file: look at its head, then search it for what the task needs
        read = seen.read_paths()
        for stub in seen.stub_paths():
            if stub not in read:
                return Move("That output was large and was saved to a file; let me page through it.",
                            [("read_file", {"file_path": stub, "offset": 0, "limit": 60})])
            grepped = {c.args.get("path") for c in seen.calls_named("grep")}
            if stub not in grepped and self.keys:
                return Move("", [("grep", {"pattern": self.probe(seen, stub), "path": stub,
                                           "output_mode": "content"})])
        files = seen.listed_files()
        unread = sorted((p for p in files if p not in read), key=lambda p: (-self.relevance(p, seen), p))
        # symbols named after the task's words that were read but never searched for
        symbols = self.symbols(seen)
        searched = {c.args.get("pattern") for c in seen.calls_named("grep")}
        pending = [s for s in symbols if s not in searched]
        if pending and (not unread or rng.random() < 0.4):
            sym = pending[0]
            return Move(f"`{sym}` looks central; let me find where it is used.",
                        [("grep", {"pattern": sym, "path": "/project", "output_mode": "content"})])
        if not seen.calls_named("execute") and step >= self.steps // 3:
            return Move("Let me run the test suite to see the current state.", [("execute", {"command": "pytest -q"})])
        if unread:
            head = unread[0]
            if (files.get(head) or 0) > LARGE_FILE_LINES:
                return Move(f"{head.rsplit('/', 1)[-1]} is large; I'll dump it whole.",
                            [("execute", {"command": f"cat {head}"})])
            batch = [p for p in unread[: rng.choice((1, 2, 3))] if (files.get(p) or 0) <= LARGE_FILE_LINES] or [head]
            return Move("", [("read_file", {"file_path": p}) for p in batch])
        if pending:
            return Move("", [("grep", {"pattern": pending[0], "path": "/project", "output_mode": "content"})])
        return Move("I have enough to write the report.", [("write_file", {"file_path": self.report_path,
                                                                            "content": self.report(seen)})])

    def probe(self, seen: Seen, stub: str) -> str:
        """What to search an offloaded dump for, from the command that produced it and what was read."""
        origin = next((c for c in seen.calls if stub in (c.result or "")), None)
        command = str(origin.args.get("command", "")) if origin else ""
        if command.endswith(".log"):
            return "ERROR"
        if "tax" in command:
            region = _REGION.search(seen.all_text())
            return region.group(1) if region else "standard"
        if "legacy" in command:
            return "compute_total"
        return self.keys[0]

    def symbols(self, seen: Seen) -> list[str]:
        out: list[str] = []
        for c in seen.calls_named("read_file"):
            for name in _DEF.findall(c.result or ""):
                if any(k[:5] in name.lower() for k in self.keys) and name not in out:
                    out.append(name)
        return out

    def report(self, seen: Seen) -> str:
        files = seen.listed_files()
        read = sorted(p for p in seen.read_paths() if p.startswith("/project"))
        lines = ["# ledgerline architecture", "", "## Modules read", ""]
        lines += [f"- `{p}` ({files.get(p) or '?'} lines)" for p in read]
        lines += ["", "## Where things happen", ""]
        for c in seen.calls_named("grep"):
            if c.args.get("output_mode") == "content" and c.result and not c.result.startswith("No matches"):
                hits = c.result.splitlines()
                lines.append(f"- `{c.args.get('pattern')}`: {len(hits)} hits, first in {hits[0].split(':')[0]}")
        lines += ["", "## Notes", "", "- Totals: billing.compute_total applies discounts before tax "
                  "(tax.apply_tax), rounding half-even to the cent.",
                  "- Tax rates come from the generated tax_tables.TAX_TABLE (one row per region and category).",
                  "- Logging uses print() in several modules, against the README's conventions."]
        return "\n".join(lines) + "\n"

    def final_answer(self, seen: Seen) -> str:
        n = len([p for p in seen.read_paths() if p.startswith("/project")])
        return (f"Done. I read {n} files and wrote the architecture report to {self.report_path}. Invoice totals are "
                "computed in billing.compute_total (discounts first, then tax via tax.apply_tax with rates from "
                "the generated tax table); payments.charge and the API handlers call it.")


class CodeAnalysis(Scenario):
    name = "code-analysis"
    title = "Code analysis of a codebase with large files"
    teaches = ("Whole-file dumps of large generated files (tax tables, logs, legacy code) are the biggest "
               "tool results an agent produces. The filesystem layer writes each result above the limit to "
               "/large_tool_results/ and leaves a head/tail stub; the agent pages and greps the saved file.")
    layers = ("filesystem",)
    lesson_preset = "deepagents"
    preset = "deepagents"
    default_steps = 30
    sample_steps = 70
    task = ("Analyse the ledgerline codebase in /project: map its modules, find where invoice totals are computed "
            "and how tax and discounts are applied, and write an architecture report to /reports/architecture.md.")

    def make_policy(self, task: str, steps: int) -> CodeAnalysisPolicy:
        return CodeAnalysisPolicy(task, steps)


SCENARIO = CodeAnalysis()
