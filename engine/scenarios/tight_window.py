"""tight-window: the code analysis in a 32,000-token window, so the presets' own triggers act.

The other samples run in a 200,000-token window and never reach Deep Agents' 85 % trigger. Here
the same analysis (whole-file dumps, greps, a report) runs in a 32k window and keeps notes as it
goes, each note a `write_file` with the findings so far: under the `deepagents` preset the view
crosses 85 % of the window, so the thread shows summaries (view mode, history file), old
`write_file` arguments truncated in the view, and large results offloaded, all at the framework's
default settings.
"""

from __future__ import annotations

import random

from engine.scenarios.base import Scenario
from engine.scenarios.code_analysis import CodeAnalysisPolicy
from engine.scenarios.policy import Move, Seen

WINDOW_TOKENS = 32_000
NOTE_EVERY = 7  # steps between two notes


class NoteTakingPolicy(CodeAnalysisPolicy):
    """The code-analysis policy that also saves its findings so far, every few steps."""

    def decide(self, seen: Seen, step: int, rng: random.Random) -> Move:
        if 0 < step < self.steps - 2 and step % NOTE_EVERY == 0:
            path = f"/reports/notes-{step // NOTE_EVERY}.md"
            return Move("Saving my findings so far before going on.",
                        [("write_file", {"file_path": path, "content": self.notes(seen)})])
        return super().decide(seen, step, rng)

    def notes(self, seen: Seen) -> str:
        """The report draft plus the head of every file read so far (a few thousand characters)."""
        heads = []
        for c in seen.calls_named("read_file"):
            lines = (c.result or "").splitlines()[:12]
            heads.append(f"### {c.args.get('file_path')}\n" + "\n".join(lines))
        return self.report(seen) + "\n## Excerpts\n\n" + "\n\n".join(heads) + "\n"


class TightWindow(Scenario):
    name = "tight-window"
    title = "Code analysis in a 32k window"
    teaches = ("In a 32,000-token window the analysis passes Deep Agents' trigger (85 % of the window): the "
               "history is summarized in view mode and saved to /conversation_history/, old write_file "
               "arguments are cut in the view, and large dumps are offloaded, at the framework's defaults.")
    layers = ("filesystem", "summarization")
    lesson_preset = "deepagents"
    preset = "deepagents"
    overrides = (f"model.max_input_tokens={WINDOW_TOKENS}",)
    default_steps = 40
    sample_steps = 60
    task = ("Analyse the ledgerline codebase in /project: map its modules, find where invoice totals are computed "
            "and how tax and discounts are applied, keep notes as you go, and write an architecture report to "
            "/reports/architecture.md.")

    def make_policy(self, task: str, steps: int) -> NoteTakingPolicy:
        return NoteTakingPolicy(task, steps)


SCENARIO = TightWindow()
