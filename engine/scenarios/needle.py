"""needle: a codename planted in the first message is needed at the very end of a long run."""

from __future__ import annotations

import random
import re

from engine.scenarios.base import Scenario, ScenarioRun
from engine.scenarios.code_analysis import CodeAnalysisPolicy
from engine.scenarios.policy import Move, Seen

CODENAMES: tuple[str, ...] = ("OSPREY-41", "KITE-07", "HARRIER-19", "MERLIN-88", "FALCON-23", "SHRIKE-62")
AUDIT_PATH = "/reports/audit.md"
NOTE_PATH = "/reports/release-note.md"
QUESTION = ("Thanks. Last thing: put the project codename I gave you at the very start into a release note at "
            f"{NOTE_PATH}, and tell me what it is.")
_CODENAME = re.compile(r"codename[^:\n]*:\s*([A-Z]+-\d{2})")


def codename_for(seed: int) -> str:
    return random.Random(f"needle:{seed}").choice(CODENAMES)


def task_for(codename: str) -> str:
    return (f"Project codename for this engagement: {codename}. Keep it in mind: the final release note must carry "
            "it.\n\nNow audit the ledgerline codebase in /project for money-handling risks (floats, rounding, "
            f"totals computed twice) and write the findings to {AUDIT_PATH}.")


class NeedlePolicy(CodeAnalysisPolicy):
    """A long audit (the code-analysis exploration), then a question only the first message answers."""

    report_path = AUDIT_PATH

    def __init__(self, task: str, steps: int) -> None:
        super().__init__(task, max(4, steps - 3))

    def decide(self, seen: Seen, step: int, rng: random.Random) -> Move:
        if len(seen.humans) < 2 and not any(QUESTION[:40] in s for s in seen.summaries):
            return super().decide(seen, step, rng)
        found = _CODENAME.search(seen.all_text())
        wrote = any(c.name == "write_file" and c.args.get("file_path") == NOTE_PATH for c in seen.calls)
        if wrote:
            return Move(f"The codename is {found.group(1)}; it heads {NOTE_PATH}." if found else
                        "I no longer have the codename in my context, so the release note says it is unknown.")
        codename = found.group(1) if found else "(unknown - not in my context)"
        return Move("", [("write_file", {"file_path": NOTE_PATH, "content":
                                         f"# Release note\n\nCodename: {codename}\n\nSee {AUDIT_PATH}.\n"})])

    def final_answer(self, seen: Seen) -> str:
        return f"Audit finished; findings are in {AUDIT_PATH}."


class Needle(Scenario):
    name = "needle"
    title = "A fact planted early and needed late"
    teaches = ("The first message plants a codename; a long audit follows, and the last request needs the "
               "codename again. Whether the model can still see it depends on the layers: with Deep Agents' "
               "offloading the context stays small and nothing is summarized; with DeerFlow's 15,564-token "
               "trigger the first message is summarized away many times over, and the answer depends on what "
               "the summaries kept.")
    layers = ("summarization",)
    lesson_preset = "deerflow"
    preset = "deepagents"
    default_steps = 24
    sample_steps = 90
    task = task_for(codename_for(0))

    def make_policy(self, task: str, steps: int) -> NeedlePolicy:
        return NeedlePolicy(task, steps)

    def converse(self, run: ScenarioRun) -> str:
        outcome = run.session.send(run.task)
        if outcome == "done":
            outcome = run.session.send(QUESTION)
        found = _CODENAME.search(run.task)
        transcript = run.session.recorder.transcript()
        run.extra["needle"] = {
            "text": found.group(1) if found else None,
            "planted_message_id": transcript[0].id if transcript else None,
            "question_message_id": next((m.id for m in transcript if m.type == "human" and m.content == QUESTION), None),
        }
        return outcome

    def start(self, **kwargs):  # type: ignore[no-untyped-def]
        # the codename follows the seed, so different seeds plant different needles
        if kwargs.get("task") is None:
            kwargs["task"] = task_for(codename_for(kwargs.get("seed", 0)))
            if kwargs.get("thread_id") is None:
                kwargs["thread_id"] = self.thread_id(kwargs.get("steps") or self.default_steps, kwargs.get("seed", 0))
        return super().start(**kwargs)


SCENARIO = Needle()
