"""Run a scenario (by name) or a real `provider:model` live, in the foreground or on a worker thread.

Above both `engine.scenarios.live` (the agent session) and `engine.scenarios` (the scripted agents, their
world and tools), so that neither imports the other.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import Any

from engine.base.errors import ContextInspectorError
from engine.base.redaction import describe_error, one_line
from engine.config.schema import EngineConfig, preset
from engine.scenarios import get_scenario
from engine.scenarios.bundle import load_project
from engine.scenarios.live import (
    AgentSession,
    CancelToken,
    LiveResult,
    LiveRunError,
    ProgressCallback,
    StepProgress,
    init_real_model,
    is_model_target,
    save_run,
)
from engine.scenarios.tools import AgentFiles, Toolbox
from engine.thread.model import stable_id
from engine.workspace.vfs import VirtualFilesystem

LIVE_SYSTEM_PROMPT = (
    "You are a careful software agent working in a virtual filesystem. The project lives under /project; "
    "use ls, glob, grep and read_file to explore it, write_file and edit_file to change files, write_todos "
    "to track multi-step work, task to delegate an isolated sub-task, and web_search for background reading. "
    "Finish with a short final answer."
)


def run_live(target: str, *, task: str | None = None, config: EngineConfig | None = None,
             steps: int | None = None, seed: int = 0, on_step: ProgressCallback | None = None,
             cancel: CancelToken | None = None, workspace: Any = None, model: Any = None) -> LiveResult:
    """Run a scenario (by name) or a real model (`provider:model`) live; never raises on cancel.

    `model` overrides the chat model for a `provider:model` target (tests pass a fake one).
    """
    if not is_model_target(target):
        scenario = get_scenario(target)
        return scenario.run_live(steps=steps, seed=seed, task=task, config=config, on_step=on_step,
                                 cancel=cancel, workspace=workspace)
    if not task:
        raise LiveRunError(f"{target}: a real model needs a task (--task TEXT)")
    config = config or preset("deepagents")
    max_steps = steps or 30
    files = AgentFiles(VirtualFilesystem(), VirtualFilesystem())
    load_project(files.world)
    chat = model if model is not None else init_real_model(target)
    # every live run its own id (the same model and task twice are two runs; a later, even failed,
    # run must not overwrite an earlier saved one): the target and task's stable id plus the start time
    started = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    thread_id = f"{stable_id('live', target, task)}-{started}"
    toolbox = Toolbox(vfs=files, config=config, seed=seed, cancel=cancel, on_step=on_step,
                      subagent_model=lambda call_id, prompt: chat, subagent_max_steps=max_steps)
    session = AgentSession(model=chat, tools=toolbox.tools(), system_prompt=LIVE_SYSTEM_PROMPT, config=config,
                           thread_id=thread_id, vfs=files.layers, workspace=workspace, on_step=on_step, cancel=cancel,
                           max_steps=max_steps, id_prefix="")
    error = None
    try:
        outcome = session.send(task)
    except ContextInspectorError:
        raise
    except Exception as exc:  # a provider error mid-run: keep what ran so far
        outcome, error = "error", describe_error(exc)
    thread = session.thread(model_name=target, title=task[:80],
                            extra={"live": {"target": target, "outcome": outcome, "steps": session.steps,
                                            "preset": config.preset}},
                            subagents=toolbox.subagent_threads())
    return LiveResult(thread=thread, outcome=outcome, steps=session.steps, events=list(session.events.events),
                      error=error)


# -- running in the background (the dashboard polls a handle) ------------------------------------
class LiveRunHandle:
    """A live run on a worker thread: poll `snapshot()`, `cancel()` it, read `result` when `done`.

    With `save_to` (a Workspace) the worker saves what ran itself when the run ends — finished, cancelled
    or failed (then as a partial run) — and `saved` lists the files: nothing depends on a page still
    polling it. A browser reload starts a new dashboard session; the run went on, but its result was only
    saved by the page that started it, so it was lost without a word (issue 35). Every handle is also
    listed in this process's registry (`live_runs`), where a new session finds it again.
    """

    def __init__(self, target: str, *, save_to: Any = None, **kwargs: Any) -> None:
        self.target = target
        self.kwargs = kwargs
        self.save_to = save_to
        self.save_error: str | None = None
        self.started = datetime.now(UTC)
        self.id = f"{target}@{self.started.strftime('%Y%m%dT%H%M%S%fZ')}"
        self.cancel_token = CancelToken()
        self.latest: StepProgress | None = None
        self.subagent_steps = 0
        self.event_count = 0
        self.result: LiveResult | None = None
        self.error: str | None = None
        self.saved: list[str] = []  # set by whoever saves the result
        self._lock = threading.Lock()
        self._worker = threading.Thread(target=self._work, name=f"ctxi-live-{target}", daemon=True)

    def start(self) -> LiveRunHandle:
        self._worker.start()
        return self

    def _on_step(self, p: StepProgress) -> None:
        with self._lock:
            self.event_count += len(p.events)
            if p.agent == "main":
                self.latest = p
            else:
                self.subagent_steps += 1

    def _work(self) -> None:
        try:
            result = run_live(self.target, on_step=self._on_step, cancel=self.cancel_token, **self.kwargs)
        except ContextInspectorError as exc:
            self.error = one_line(str(exc))
            return
        except Exception as exc:  # shown to the user in one line; keys redacted
            self.error = describe_error(exc)
            return
        if self.save_to is not None:  # before `result` is set: `done` then means saved too
            try:
                self.saved.extend(save_run(result, self.save_to))
            except ContextInspectorError as exc:
                self.save_error = one_line(str(exc))
        self.result = result

    @property
    def done(self) -> bool:
        return not self._worker.is_alive() and (self.result is not None or self.error is not None)

    def cancel(self) -> None:
        self.cancel_token.cancel()

    def wait(self, timeout_s: float | None = None) -> bool:
        self._worker.join(timeout_s)
        return self.done

    def snapshot(self) -> dict[str, Any]:
        """Plain values for a progress display: steps, tokens against the window, the last action."""
        with self._lock:
            p = self.latest
            return {
                "step": p.step if p else 0,
                "max_steps": p.max_steps if p else None,
                "view_tokens": p.view_tokens if p else 0,
                "raw_tokens": p.raw_tokens if p else 0,
                "window_tokens": p.window_tokens if p else 0,
                "action": p.action if p else "starting",
                "subagent_steps": self.subagent_steps,
                "events": self.event_count,
                "cancelling": self.cancel_token.cancelled,
                "done": self.done,
            }


# The live runs this process started, oldest first (a dashboard server is one process): a page opened
# after a reload lists them. Bounded: the oldest finished ones go first.
_REGISTRY: dict[str, LiveRunHandle] = {}
_REGISTRY_LOCK = threading.Lock()
MAX_LISTED = 20


def live_runs() -> list[LiveRunHandle]:
    """Every live run this process started that is still listed, oldest first."""
    with _REGISTRY_LOCK:
        return list(_REGISTRY.values())


def start_live(target: str, **kwargs: Any) -> LiveRunHandle:
    """Start `run_live(target, **kwargs)` on a worker thread (listed in `live_runs`)."""
    handle = LiveRunHandle(target, **kwargs)
    with _REGISTRY_LOCK:
        _REGISTRY[handle.id] = handle
        finished = [k for k, h in _REGISTRY.items() if h.done]
        while len(_REGISTRY) > MAX_LISTED and finished:
            _REGISTRY.pop(finished.pop(0))
    return handle.start()


__all__ = ["LIVE_SYSTEM_PROMPT", "LiveRunHandle", "live_runs", "run_live", "start_live"]
