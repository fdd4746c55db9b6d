"""What every scenario shares: its description, how it is driven live, and how its thread is recorded."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from engine.config.schema import EngineConfig, preset
from engine.scenarios.bundle import load_project
from engine.scenarios.live import AgentSession, CancelToken, LiveResult, ProgressCallback
from engine.scenarios.policy import Policy, PolicyChatModel
from engine.scenarios.tools import AgentFiles, Toolbox
from engine.thread.model import Thread, stable_id
from engine.workspace.vfs import VirtualFilesystem

# The seed the bundled samples are generated with (engine/scenarios/build_samples.py): a run with the
# sample's steps, this seed and the scenario's task is the sample.
SAMPLE_SEED = 0

BASE_SYSTEM_PROMPT = (
    "You are a software engineering agent. The project is mounted at /project in a virtual filesystem. "
    "Explore with ls, glob, grep and read_file (page large files with offset and limit), run commands with "
    "execute, change files with write_file and edit_file, plan multi-step work with write_todos, delegate "
    "self-contained sub-tasks with task, and use web_search for background reading. Be concise."
)

_STOP = frozenset("""the and for with that this from into are how its their then what where which when write
about across each find make your you all any per will use using under over them they our also has have
report reports file files codebase project""".split())


def keywords(task: str) -> list[str]:
    """Content words of a task, in order, used by policies to choose what to grep and read first."""
    out: list[str] = []
    for w in re.findall(r"[a-z_]{4,}", task.lower()):
        stem = w.rstrip("s") if len(w) > 4 else w
        if stem not in _STOP and w not in _STOP and stem not in out:
            out.append(stem)
    return out


@dataclass
class ScenarioRun:
    """One run of a scenario: the budget and seed, the world (VFS), the tools and the session."""

    scenario: Scenario
    steps: int
    seed: int
    task: str
    config: EngineConfig
    files: AgentFiles
    toolbox: Toolbox
    session: AgentSession
    extra: dict[str, Any] = field(default_factory=dict)


class Scenario:
    """A scripted agent run that teaches one or more layers. Subclasses set the fields and the policy."""

    name: str = ""
    title: str = ""
    teaches: str = ""
    layers: tuple[str, ...] = ()  # layers whose events the replay of this thread must show
    lesson_preset: str = "stress"  # the preset under which those layers act (tests and README use it)
    # `--set` changes to the lesson preset only (first-look's summaries in state mode); recorded in the
    # thread so the dashboard opens the sample on exactly these settings (engine.config.presets.default_config)
    lesson_overrides: tuple[str, ...] = ()
    preset: str = "deepagents"  # the config the live run uses unless the caller gives one
    overrides: tuple[str, ...] = ()  # `--set` style changes to both presets (e.g. a layer a preset leaves off)
    default_steps: int = 30
    sample_steps: int = 30
    task: str = ""
    system_prompt: str = BASE_SYSTEM_PROMPT

    def config(self) -> EngineConfig:
        """The live run's config: `preset` with `overrides`."""
        return preset(self.preset).with_overrides(list(self.overrides))

    def lesson_config(self) -> EngineConfig:
        """The config under which the scenario's layers act: `lesson_preset` with `overrides`."""
        return preset(self.lesson_preset).with_overrides([*self.overrides, *self.lesson_overrides])

    # -- to override ----------------------------------------------------------------------------
    def make_policy(self, task: str, steps: int) -> Policy:
        raise NotImplementedError

    def subagent_policy(self, prompt: str) -> Policy | None:
        return None

    def prepare(self, vfs: VirtualFilesystem, workspace: Any) -> None:
        load_project(vfs)

    def converse(self, run: ScenarioRun) -> str:
        """Drive the conversation (one human turn by default); returns the session outcome."""
        return run.session.send(run.task)

    # -- driving ----------------------------------------------------------------------------------
    def thread_id(self, steps: int, seed: int) -> str:
        return f"{self.name}-steps{steps}-seed{seed}"

    def start(self, *, steps: int | None = None, seed: int = 0, task: str | None = None,
              config: EngineConfig | None = None, on_step: ProgressCallback | None = None,
              cancel: CancelToken | None = None, workspace: Any = None, vfs: VirtualFilesystem | None = None,
              thread_id: str | None = None, policy: Policy | None = None,
              world: VirtualFilesystem | None = None) -> ScenarioRun:
        """Build the world, the tools, the model and the agent session (nothing runs yet).

        `vfs` is the layers' filesystem and `world` the project's (both fresh unless given).
        """
        steps = steps or self.default_steps
        config = config or self.config()
        task = task or self.task
        if thread_id is None:
            thread_id = self.thread_id(steps, seed)
            if task != self.task:  # a custom task is another thread
                thread_id += "-" + stable_id("task", 0, task).rsplit("-", 1)[-1]
        # the world (project files, agent writes) and the layers' own files, seen together by the tools
        files = AgentFiles(world if world is not None else VirtualFilesystem(),
                           vfs if vfs is not None else VirtualFilesystem())
        if world is None:
            self.prepare(files.world, workspace)

        def child_model(call_id: str, prompt: str) -> PolicyChatModel:
            return PolicyChatModel(policy=self.subagent_policy(prompt), seed=seed, id_prefix=f"{call_id}-",
                                   model_label=f"scenario:{self.name}:task")

        toolbox = Toolbox(vfs=files, config=config, seed=seed, cancel=cancel, on_step=on_step,
                          subagent_model=child_model, subagent_max_steps=40)
        model = PolicyChatModel(policy=policy or self.make_policy(task, steps), seed=seed, model_label=f"scenario:{self.name}")
        session = AgentSession(model=model, tools=toolbox.tools(), system_prompt=self.system_prompt, config=config,
                               thread_id=thread_id, vfs=files.layers, workspace=workspace,
                               on_step=on_step, cancel=cancel, max_steps=steps * 2 + 10)
        return ScenarioRun(self, steps, seed, task, config, files, toolbox, session)

    def finish(self, run: ScenarioRun, outcome: str) -> LiveResult:
        extra = {
            "scenario": {"name": self.name, "steps": run.steps, "seed": run.seed, "preset": run.config.preset,
                         "outcome": outcome, "layers": list(self.layers), "lesson_preset": self.lesson_preset,
                         **({"lesson_overrides": list(self.lesson_overrides)} if self.lesson_overrides else {})},
            **run.extra,
        }
        thread = run.session.thread(model_name=f"scenario:{self.name}", title=self.run_title(run), extra=extra,
                                    subagents=run.toolbox.subagent_threads())
        return LiveResult(thread=thread, outcome=outcome, steps=run.session.steps,
                          events=list(run.session.events.events))

    def run_title(self, run: ScenarioRun) -> str:
        """The scenario's title for its bundled sample; another run says how it differs (issue 35: a
        40-step live run was titled like the 66-step sample)."""
        if run.steps == self.sample_steps and run.seed == SAMPLE_SEED and run.task == self.task:
            return self.title
        return (f"{self.title} — {run.steps}-step run, seed {run.seed}"
                + (", own task" if run.task != self.task else ""))

    def run_live(self, *, steps: int | None = None, seed: int = 0, task: str | None = None,
                 config: EngineConfig | None = None, on_step: ProgressCallback | None = None,
                 cancel: CancelToken | None = None, workspace: Any = None) -> LiveResult:
        run = self.start(steps=steps, seed=seed, task=task, config=config, on_step=on_step, cancel=cancel,
                         workspace=workspace)
        outcome = self.converse(run)
        return self.finish(run, outcome)

    def generate(self, *, steps: int | None = None, seed: int = 0, config: EngineConfig | None = None,
                 task: str | None = None) -> Thread:
        """The scenario's thread; the same arguments always give the same thread."""
        return self.run_live(steps=steps, seed=seed, config=config, task=task).thread

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "title": self.title, "teaches": self.teaches, "layers": list(self.layers),
                "lesson_preset": self.lesson_preset, "lesson_overrides": list(self.lesson_overrides), "preset": self.preset, "default_steps": self.default_steps,
                "sample_steps": self.sample_steps, "task": self.task}
