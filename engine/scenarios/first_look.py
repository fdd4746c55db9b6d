"""first-look: the dashboard's landing thread, where every main layer acts on the first screen.

A refactor tracked with todos (long-refactor's policy) in a 40,000-token window, which dumps two
large generated files whole (offloaded to files), is interrupted once while its tool calls are
pending (patched in every later request until a summary takes the call away) and runs long enough
that summaries remove its write_todos calls (the todo reminder brings the plan back). Replayed under
its lesson settings, `stress` (every layer on, summarization at 25 % of the window) with summaries in
state mode (LangChain and DeerFlow's: the history is replaced, so the write_todos calls do go, and
the reminder can act; in view mode the state keeps them), the first screen shows offloads,
summaries, reminders and patches (issue 35: the previous landing thread showed
offloads only, and Evals read n/a everywhere).
"""

from __future__ import annotations

import random

from engine.scenarios.base import Scenario, ScenarioRun
from engine.scenarios.long_refactor import NEW, OLD, LongRefactorPolicy
from engine.scenarios.policy import Move, Seen

WINDOW_TOKENS = 40_000
# model calls (0-based) that dump a large generated file whole: each result is above the filesystem
# layer's 20,000-token limit
DUMPS: dict[int, tuple[str, str]] = {
    3: ("/project/logs/server.log", "The logs may show where totals were wrong before; dumping them."),
    11: ("/project/src/ledgerline/tax_tables.py", "Checking the generated tax table for the old name."),
}
INTERRUPT_AT = 7  # 1-based model call whose tool calls never run (the user stops the agent)
FOLLOW_UP = "Sorry, I stopped you by mistake. Don't run the whole suite now; carry on with the refactor."


class FirstLookPolicy(LongRefactorPolicy):
    """long-refactor's plan-and-edit loop, with two whole-file dumps and a slow command at the interruption."""

    def decide(self, seen: Seen, step: int, rng: random.Random) -> Move:
        if step in DUMPS and step < self.steps - 2:
            path, text = DUMPS[step]
            return Move(text, [("execute", {"command": f"cat {path}"})])
        if step + 1 == INTERRUPT_AT:
            return Move("Let me run the whole suite before going on.", [
                ("execute", {"command": "pytest -v tests/"}), ("grep", {"pattern": OLD, "path": "/project"})])
        return super().decide(seen, step, rng)


class FirstLook(Scenario):
    name = "first-look"
    title = "First look: offloads, summaries, a reminder and patched calls in one refactor"
    teaches = ("The landing thread: a refactor tracked with todos in a 40k window. Two whole-file dumps are "
               "offloaded to files, an interruption leaves tool calls without results (patched in each later "
               "request), summaries keep the view under the trigger, and once they remove the write_todos "
               "calls the todo reminder restores the plan.")
    layers = ("filesystem", "summarization", "todo", "dangling")
    lesson_preset = "stress"
    lesson_overrides = ("summarization.mode=state",)
    preset = "stress"
    overrides = (f"model.max_input_tokens={WINDOW_TOKENS}",)
    default_steps = 60
    sample_steps = 60
    task = (f"Refactor ledgerline: rename `{OLD}` to `{NEW}` everywhere (keep a deprecated alias in billing.py) "
            "and replace print() calls with module loggers. Track every file as a todo item and keep the list "
            "up to date.")

    def make_policy(self, task: str, steps: int) -> FirstLookPolicy:
        return FirstLookPolicy(task, steps)

    def converse(self, run: ScenarioRun) -> str:
        outcome = run.session.send(run.task, interrupt_at_step=INTERRUPT_AT)
        if outcome == "interrupted":
            outcome = run.session.send(FOLLOW_UP)
        run.extra["interrupted_at_steps"] = [INTERRUPT_AT - 1]  # 0-based step index
        return outcome


SCENARIO = FirstLook()
