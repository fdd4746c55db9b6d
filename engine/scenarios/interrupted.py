"""interrupted: the user stops the run while tools are pending; the calls dangle for the rest of the thread."""

from __future__ import annotations

import random

from engine.scenarios.base import Scenario, ScenarioRun
from engine.scenarios.policy import Move, Seen

REPORT_PATH = "/reports/flaky-test.md"
FOLLOW_UPS: tuple[str, ...] = (
    "Stop — don't run the whole suite, it hangs on CI. Just tell me what you found so far and propose a fix.",
    "Never mind the delegation, I don't need background reading. Finish the write-up with what you have.",
)
EXPLORE: tuple[tuple[str, dict[str, object]], ...] = (
    ("read_file", {"file_path": "/project/tests/test_payments.py"}),
    ("grep", {"pattern": "time.sleep", "path": "/project", "output_mode": "content"}),
    ("read_file", {"file_path": "/project/src/ledgerline/payments.py"}),
    ("grep", {"pattern": "BACKOFF_S", "path": "/project", "output_mode": "content"}),
    ("grep", {"pattern": "gateway error 503", "path": "/project/logs", "output_mode": "count"}),
    ("read_file", {"file_path": "/project/logs/server.log", "offset": 0, "limit": 120}),
    ("read_file", {"file_path": "/project/src/ledgerline/api.py"}),
    ("grep", {"pattern": "MAX_ATTEMPTS", "path": "/project", "output_mode": "content"}),
    ("read_file", {"file_path": "/project/src/ledgerline/models.py"}),
    ("read_file", {"file_path": "/project/logs/server.log", "offset": 120, "limit": 120}),
)


def interruption_steps(steps: int) -> tuple[int, ...]:
    """1-based model calls whose tool calls never run: a third of the way, and two thirds for longer runs."""
    first = max(3, steps // 3)
    return (first, max(first + 3, 2 * steps // 3)) if steps >= 12 else (first,)


class InterruptedPolicy:
    """Investigate a flaky test; at the interruption points ask for slow or broad work (which never runs)."""

    def __init__(self, task: str, steps: int) -> None:
        self.steps = steps
        self.stops = interruption_steps(steps)

    def decide(self, seen: Seen, step: int, rng: random.Random) -> Move:
        wrote = any(c.name == "write_file" and c.args.get("file_path") == REPORT_PATH for c in seen.calls)
        if wrote or step >= self.steps - 1:
            return Move(self.final_answer(seen))
        if step + 1 == self.stops[0]:
            return Move("Let me reproduce it: run the suite, and look at the logs and the retry code together.", [
                ("execute", {"command": "pytest -v tests/"}),
                ("read_file", {"file_path": "/project/logs/server.log"}),
                ("grep", {"pattern": "retry", "path": "/project", "output_mode": "content"})])
        if len(self.stops) > 1 and step + 1 == self.stops[1]:
            return Move("I'll delegate a survey of retry/backoff best practices.", [
                ("task", {"description": "Survey retry backoff", "prompt": "Research 'retry and backoff' "
                          "policies for payment gateways and how tests should fake time.",
                          "subagent_type": "general-purpose"})])
        if step >= self.steps - 2 or (len(seen.humans) > len(self.stops) and rng.random() < 0.2):
            return Move("Writing up the diagnosis.", [("write_file", {"file_path": REPORT_PATH,
                                                                       "content": self.report(seen)})])
        done = {(c.name, tuple(sorted((k, str(v)) for k, v in c.args.items()))) for c in seen.calls}
        for name, args in EXPLORE:
            if (name, tuple(sorted((k, str(v)) for k, v in args.items()))) not in done:
                return Move("", [(name, dict(args))])
        offset = 240 + 120 * step
        return Move("", [("read_file", {"file_path": "/project/logs/server.log", "offset": offset % 1000,
                                        "limit": 120})])

    @staticmethod
    def report(seen: Seen) -> str:
        dangling = [c for c in seen.calls if c.result is None or c.status == "error"]
        return ("# test_gives_up_after_three_attempts is flaky\n\n"
                "Cause: payments.charge sleeps BACKOFF_S * attempt between retries (0.5 s + 1.0 s), so the test "
                "takes 1.5 s and hits the 1 s pytest-timeout on loaded CI runners.\n\n"
                "Fix: inject the sleep (a `sleep=time.sleep` parameter) and pass a no-op in tests, or patch "
                "`ledgerline.payments.time.sleep`.\n\n"
                f"Not verified: {len(dangling)} tool call(s) were interrupted before they returned.\n")

    @staticmethod
    def final_answer(seen: Seen) -> str:
        return (f"Diagnosis written to {REPORT_PATH}: the retry loop really sleeps (0.5 s + 1.0 s), which exceeds "
                "the 1 s test timeout on CI. I did not run the suite, as you asked; the fix is to inject the sleep.")


class Interrupted(Scenario):
    name = "interrupted"
    title = "An interrupted run with dangling tool calls"
    teaches = ("The user stops the agent while its tool calls are pending, then sends a new message. The "
               "history now holds AI tool calls without results, which provider APIs reject; the dangling "
               "layer inserts a placeholder error result right after each such call in every later request.")
    layers = ("dangling",)
    lesson_preset = "deerflow"
    preset = "deerflow"
    default_steps = 14
    sample_steps = 30
    task = ("test_payments is flaky on CI (test_gives_up_after_three_attempts times out now and then). Find out "
            "why and propose a fix; don't change the gateway code.")

    def make_policy(self, task: str, steps: int) -> InterruptedPolicy:
        return InterruptedPolicy(task, steps)

    def converse(self, run: ScenarioRun) -> str:
        stops = interruption_steps(run.steps)
        outcome = run.session.send(run.task, interrupt_at_step=stops[0])
        for k, follow_up in enumerate(FOLLOW_UPS[: len(stops)]):
            if outcome != "interrupted":
                break
            nxt = stops[k + 1] if k + 1 < len(stops) else None
            outcome = run.session.send(follow_up, interrupt_at_step=nxt)
        run.extra["interrupted_at_steps"] = [s - 1 for s in stops]  # 0-based step indices
        return outcome


SCENARIO = Interrupted()
