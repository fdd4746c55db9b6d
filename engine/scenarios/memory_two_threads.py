"""memory-two-threads: facts saved to /memories/ in one thread are in the prompt of the next one."""

from __future__ import annotations

import random
import re
from typing import Any

from engine.config.schema import EngineConfig
from engine.scenarios.base import Scenario
from engine.scenarios.live import CancelToken, LiveResult, ProgressCallback
from engine.scenarios.policy import Move, Seen
from engine.workspace.vfs import VirtualFilesystem

MEMORY_PATH = "/memories/AGENTS.md"
CHANGELOG_PATH = "/project/CHANGELOG.md"
RELEASE_PATH = "/reports/release.md"
SECOND_TASK = ("Prepare the announcement for our next release: when it ships, under which name, and what changed. "
               f"Write it to {RELEASE_PATH}.")
_CODENAME = re.compile(r"codename[^:\n]*?(?:is|:)\s*([A-Z][A-Z0-9-]{2,})")
_DEPLOY = re.compile(r"deploy[^\n;.]*?(?:on|:)\s*([A-Z][a-z]+days?[^\n;.]*)", re.I)
_READS = ("/project/src/ledgerline/payments.py", "/project/src/ledgerline/api.py",
          "/project/src/ledgerline/storage.py", "/project/src/ledgerline/reports.py")


def remembered(text: str) -> dict[str, str]:
    """The facts a memory file or a request states: codename, deploy slot, changelog sections."""
    out: dict[str, str] = {}
    if m := _CODENAME.search(text):
        out["codename"] = m.group(1)
    if m := _DEPLOY.search(text):
        out["deploy"] = m.group(1).strip()
    if "Added" in text and "Fixed" in text:
        out["changelog"] = "Added / Changed / Fixed"
    return out


def memory_file(facts: dict[str, str], user: str) -> str:
    return "\n".join([
        "# Agent memory", "", "## User", f"- {user}", "", "## Project",
        f"- Deploys: {facts.get('deploy', 'unknown')}",
        f"- Release 2.4 codename: {facts.get('codename', 'unknown')}",
        f"- Changelog: group entries under {facts.get('changelog', 'Added / Changed / Fixed')}", "",
    ])


class FirstThreadPolicy:
    """Save what the user asked to remember, then draft the changelog."""

    def __init__(self, task: str, steps: int) -> None:
        self.steps = steps

    def decide(self, seen: Seen, step: int, rng: random.Random) -> Move:
        done = {c.name + str(c.args.get("file_path", "")) for c in seen.calls if c.result is not None}
        if "write_file" + CHANGELOG_PATH in done or step >= self.steps - 1:
            return Move(f"Saved your preferences to {MEMORY_PATH} and drafted {CHANGELOG_PATH}.")
        if "read_file" + MEMORY_PATH not in done:
            return Move("Let me check what I already remember.", [("read_file", {"file_path": MEMORY_PATH})])
        if "write_file" + MEMORY_PATH not in done and "edit_file" + MEMORY_PATH not in done:
            user = re.search(r"I'm ([A-Z][a-z]+ [A-Z][a-z]+)", seen.task)
            return Move("Saving that to memory.", [("write_file", {"file_path": MEMORY_PATH, "content": memory_file(
                remembered(seen.task), f"{user.group(1) if user else 'The user'}, maintainer of ledgerline")})])
        for path in _READS[: max(1, self.steps - 5)]:
            if "read_file" + path not in done:
                return Move("", [("read_file", {"file_path": path})])
        if not seen.calls_named("grep"):
            return Move("", [("grep", {"pattern": "print(", "path": "/project/src", "output_mode": "count"})])
        return Move("Drafting the changelog.", [("write_file", {"file_path": CHANGELOG_PATH, "content": (
            "# Changelog\n\n## [2.4.0] - unreleased\n\n### Added\n- Module loggers in payments, api and storage.\n\n"
            "### Changed\n- print() diagnostics now go through `logging`.\n\n### Fixed\n- Retry messages no longer "
            "interleave with test output.\n")})])


class SecondThreadPolicy:
    """Answer from memory when the prompt carries it; otherwise go and look in /memories/."""

    def __init__(self, task: str, steps: int) -> None:
        self.steps = steps

    def decide(self, seen: Seen, step: int, rng: random.Random) -> Move:
        facts = remembered(seen.system)
        looked = {c.name + str(c.args.get("file_path", c.args.get("path", ""))) for c in seen.calls}
        for c in seen.calls_named("read_file"):
            if c.args.get("file_path") == MEMORY_PATH and c.result:
                facts = facts or remembered(c.result)
        wrote = any(c.name == "write_file" and c.args.get("file_path") == RELEASE_PATH for c in seen.calls)
        if wrote and ("edit_file" + MEMORY_PATH in looked or step >= self.steps - 2):
            return Move(self.final_answer(facts))
        if wrote:
            return Move("Noting the announcement in memory.", [("edit_file", {
                "file_path": MEMORY_PATH, "old_string": "## Project\n",
                "new_string": f"## Project\n- 2.4 announcement drafted in {RELEASE_PATH}\n"})])
        if not facts and "ls/memories" not in looked:
            return Move("I don't see any saved context; let me check the memory folder.",
                        [("ls", {"path": "/memories"})])
        if not facts and "read_file" + MEMORY_PATH not in looked:
            return Move("", [("read_file", {"file_path": MEMORY_PATH})])
        if "read_file" + CHANGELOG_PATH not in looked:
            return Move("Using what I remember about the release; reading the changelog draft.",
                        [("read_file", {"file_path": CHANGELOG_PATH})])
        for path in _READS[1: max(1, self.steps - 4)]:
            if "read_file" + path not in looked and step < self.steps - 3:
                return Move("", [("read_file", {"file_path": path})])
        return Move("Writing the announcement.", [("write_file", {"file_path": RELEASE_PATH, "content": (
            f"# ledgerline 2.4 \"{facts.get('codename', '(codename unknown)')}\"\n\n"
            f"Ships: {facts.get('deploy', '(date unknown)')}.\n\nSee {CHANGELOG_PATH} "
            f"(sections {facts.get('changelog', 'unknown')}).\n")})])

    @staticmethod
    def final_answer(facts: dict[str, str]) -> str:
        if "codename" in facts:
            return (f"The announcement is in {RELEASE_PATH}: release 2.4 \"{facts['codename']}\" ships "
                    f"{facts.get('deploy', 'on the usual day')}.")
        return f"I wrote {RELEASE_PATH}, but I don't know the codename or the deploy slot: nothing was remembered."


class MemoryTwoThreads(Scenario):
    name = "memory-two-threads"
    title = "Memory carried across two threads"
    teaches = ("In the first thread the user states lasting facts and the agent writes them to "
               "/memories/AGENTS.md. The second thread is a fresh conversation: the memory layer loads "
               "/memories/ (from the workspace) and injects it into the system prompt, so the agent answers "
               "without asking — paying the memory tokens at every step.")
    layers = ("memory",)
    lesson_preset = "deepagents"
    preset = "deepagents"
    # create_deep_agent(memory=["/memories/AGENTS.md"]): Deep Agents loads memory only when asked to
    overrides = ("memory.enabled=true",)
    default_steps = 8
    sample_steps = 12
    task = ("Hi, I'm Dana Whitfield and I maintain ledgerline. Please remember for future sessions: we deploy on "
            "Thursdays after 14:00 CET; the codename for release 2.4 is KESTREL; changelog entries are grouped "
            "under Added, Changed and Fixed. Save that to your memory file, then draft CHANGELOG entries for "
            "the print-to-logging work.")

    def make_policy(self, task: str, steps: int) -> FirstThreadPolicy:
        return FirstThreadPolicy(task, steps)

    def run_live(self, *, steps: int | None = None, seed: int = 0, task: str | None = None,
                 config: EngineConfig | None = None, on_step: ProgressCallback | None = None,
                 cancel: CancelToken | None = None, workspace: Any = None) -> LiveResult:
        steps = steps or self.default_steps
        layer_files = VirtualFilesystem()  # stands in for the workspace's /memories/ when none is given
        base = self.thread_id(steps, seed)
        first = self.start(steps=steps, seed=seed, task=task, config=config, on_step=on_step, cancel=cancel,
                           workspace=workspace, vfs=layer_files, thread_id=f"{base}-1")
        outcome = first.session.send(first.task)
        first_result = self.finish(first, outcome)
        first_result.thread.title = f"{self.title} (1/2: the user states facts)"
        if outcome != "done":
            return first_result
        memories = {p: layer_files.read(p) for p in layer_files.paths() if p.startswith("/memories/")}
        # a fresh conversation on the same project: the second thread sees the first one's files
        second = self.start(steps=steps, seed=seed, task=SECOND_TASK, config=config, on_step=on_step,
                            cancel=cancel, workspace=workspace, vfs=layer_files, thread_id=f"{base}-2",
                            policy=SecondThreadPolicy(SECOND_TASK, steps), world=first.files.world)
        second.extra["previous_thread"] = first_result.thread.thread_id
        second.extra["memories_before"] = memories
        result = self.finish(second, second.session.send(second.task))
        result.thread.title = f"{self.title} (2/2: a new thread that needs them)"
        result.related = [first_result.thread]
        return result


SCENARIO = MemoryTwoThreads()
