"""`replay(thread, config) -> Run`: drive a recorded thread through the layers, step by step.

The driver (engine/run/driver.py) calls the same middleware hooks `create_agent` would, in
LangChain's order. A replay keeps checkpoints of itself as it goes; given the Run of an earlier replay
of the same thread (`previous=`, another config, or the thread before it grew), it starts from the
last checkpoint that is still true and replays only from there (engine/run/resume.py): the same Run
as a replay from the start, at the cost of what changed.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware

from engine.base.gcpause import paused_gc
from engine.base.redaction import model_output_redaction
from engine.config.presets import DEFAULT_PRESET
from engine.config.schema import EngineConfig, preset
from engine.config.setting_warnings import KIND as SETTINGS_WARNING
from engine.config.setting_warnings import setting_warnings
from engine.layers import LayerContext, build_layers
from engine.layers.checkpoint import CheckpointError
from engine.layers.user import observe
from engine.recorded.calibration import CalibratedCounter, Calibration, thread_calibration
from engine.recorded.history import RecordedHistory, histories_shared, recorded_history
from engine.run import resume
from engine.run.driver import Driver, ReplayModel, repair_invalid_calls, replaced_history, replay_model
from engine.run.run import FrozenSteps, Run, StepRecord
from engine.run.step_sums import Snapshot
from engine.run.thrash import flag_thrashing
from engine.thread.decisions import deciding
from engine.thread.events import emit, recording
from engine.thread.kinds import PARTS_KEY
from engine.thread.model import Thread
from engine.tokens.counters import TokenCounter, counter_for_thread, prime_thread
from engine.workspace.vfs import FrozenFilesystem, VirtualFilesystem

__all__ = ["PARTS_KEY", "ReplayModel", "Snapshot", "repair_invalid_calls", "replaced_history", "replay",
           "replay_model"]

_Driver = Driver  # the driver's name before it had its own module (tests patch it)


def _emit_warnings(config: EngineConfig, window: int) -> None:
    """Settings that defeat themselves are part of the run's record (step 0's first events)."""
    for warning in setting_warnings(config, window):
        emit(warning.layer, SETTINGS_WARNING, severity="warning", message=warning.message, key=warning.key)


def _provider(thread: Thread, config: EngineConfig) -> tuple[RecordedHistory | None, str]:
    """The provider's rewrite of each request and its thinking rule ("all": none)."""
    thinking = config.model.thinking
    rule = recorded_history(thread).rule if thinking == "auto" else thinking
    return (recorded_history(thread) if rule != "all" else None), rule


def replay(
    thread: Thread,
    config: EngineConfig | None = None,
    *,
    token_counter: TokenCounter | None = None,
    summarizer: Any = None,
    layers: Sequence[AgentMiddleware] | None = None,
    workspace: Any = None,
    previous: Run | None = None,
    changed_from: int | None = None,
) -> Run:
    """Replay `thread` through the layers `config` describes; same inputs give an identical Run.

    `previous`: a Run of this thread (another config) or of an earlier state of it (a followed session
    before its new lines); the replay resumes from its last checkpoint still true, when there is one.
    `changed_from`: the first message the caller knows changed since `previous.thread` (optional).
    """
    config = config or preset(DEFAULT_PRESET)
    base_counter = token_counter or counter_for_thread(thread, config.tokens.counter)
    if previous is not None and layers is None:
        with paused_gc():  # a collection walks the whole run: it would cost more than the new steps
            resumed = _resumed(thread, config, previous, base_counter, summarizer, workspace, changed_from)
        if resumed is not None:
            return resumed
    # count every recorded message up front in one batch (on the idle cores) instead of one by one
    prime_thread(base_counter, thread)
    calibration = thread_calibration(thread, base_counter) if config.tokens.calibrate else None
    counter: TokenCounter = CalibratedCounter(base_counter, calibration) if calibration else base_counter
    window = config.window_tokens(thread.max_input_tokens)
    # checkpoints, for a later re-run to resume from: not with the user's own middleware (no way to keep
    # its state), a workspace (memories persisted on disk between runs) or a summarizer object the
    # caller holds (its counts are the caller's)
    keeps = layers is None and workspace is None and (summarizer is None or isinstance(summarizer, str))
    vfs = VirtualFilesystem(journal=keeps)
    provider, rule = _provider(thread, config)
    context = LayerContext(counter=counter, vfs=vfs, window_tokens=window, thread=thread,
                           summarizer=summarizer, workspace=workspace, calibration=calibration,
                           provider=provider, thinking_rule=rule)
    # middleware that is not one of our layers (the user's own) is observed: its effect becomes events
    mws = [observe(m, context) for m in layers] if layers is not None else build_layers(config, context)
    keeps = keeps and resume.checkpointable(mws)
    # The cyclic GC would re-scan the whole thread (every message, every count) on each full
    # collection, which makes long replays superlinear; nothing here needs it (no cycles are
    # built), so it is paused for the replay and restored after.
    # and a model called inside (a summarizer, a user's middleware's own) has the process's keys taken out
    # of its reply before anything keeps it (engine.base.redaction)
    with paused_gc(), model_output_redaction():  # what the replay kept goes to the oldest generation unwalked
        with recording() as recorder, deciding() as decisions:
            if layers is None:
                _emit_warnings(config, window)
            driver = Driver(thread, mws, counter, window, recorder,
                            prompt_at=calibration.prompt_at if calibration else None, provider=provider, rule=rule,
                            decisions=decisions, files=vfs, checkpoints=keeps, config=config)
            steps, final_state = driver.run()
            flag_thrashing(steps)  # a policy compacting call after call is part of the run's record
    return _run(thread, config, counter, window, steps, vfs, final_state, mws, calibration, driver, None)


_TAKE = threading.Lock()  # one replay takes a Run's ended driver over


def _continued(thread: Thread, config: EngineConfig, previous: Run, calibration: Calibration | None) -> Run | None:
    """`previous`'s replay going on with the new messages of `thread` (its thread grown), from where it
    ended: no copy of the state and no scan of what was replayed (a followed session costs its new lines)."""
    with _TAKE:
        driver, previous.live = previous.live, None
    if driver is None:
        return None
    counter = driver.counter
    if isinstance(counter, CalibratedCounter) and calibration is not None:
        # the same counts for the messages before (calibration_agrees), and the new messages' own
        counter.calibration, counter._values, counter._totals = calibration, calibration.values, calibration.totals
        driver.prompt_at = calibration.prompt_at
    context = getattr(driver.layers[0], "context", None) if driver.layers else None
    if context is not None:
        context.calibration = calibration
    # the files and records go on with the driver; the finished Run keeps them as they were (its files
    # built if ever read, its records a view of the list the driver appends to)
    vfs, steps = previous.files, previous.steps
    if vfs.journal_length is None or isinstance(vfs, FrozenFilesystem) or not isinstance(steps, list) or not steps:
        return None
    previous.files = FrozenFilesystem(vfs, vfs.journal_length)
    previous.steps = FrozenSteps(steps, len(steps), steps[-1])
    previous.checkpoints_held = len(previous.checkpoints or [])
    log = driver.decisions
    if log is not None:  # the finished Run keeps its decisions as they were; the driver goes on with its own
        previous.decisions = list(previous.decisions)
    if not driver.take_over(thread, steps, vfs, _provider(thread, config)[0]):
        return None
    start = len(previous.steps)  # where the new part starts
    prime = getattr(_base(counter), "prime", None)
    with paused_gc(), model_output_redaction():
        if prime is not None:
            prime(thread.messages[driver.next_index:])
        with recording(driver.recorder), deciding(log):
            driver.advance(len(thread.messages))
            steps, final_state = driver.finish()
            resume.reflag_thrashing(steps, start)
    return _run(thread, config, counter, driver.window, steps, vfs, final_state, driver.layers, calibration, driver,
                start)


def _base(counter: TokenCounter) -> TokenCounter:
    return counter.base if isinstance(counter, CalibratedCounter) else counter


def _resumed(thread: Thread, config: EngineConfig, previous: Run, base_counter: TokenCounter, summarizer: Any,
             workspace: Any, changed_from: int | None) -> Run | None:
    """The replay resumed from `previous`'s last checkpoint still true for `thread` and `config`, or None
    (then a full replay): see engine/run/resume.py."""
    if not previous.own_checkpoints() or previous.files.journal_length is None or workspace is not None \
            or not (summarizer is None or isinstance(summarizer, str)) or _base(previous.counter) is not base_counter:
        return None
    changed = resume.changed_message(previous.thread, thread, changed_from)
    if changed is None:
        return None
    if thread is not previous.thread:  # the grown thread rewrites recorded messages into the same objects
        recorded_history(thread, like=previous.thread)
    if not config.tokens.calibrate or (previous.calibration is None and not thread.usage
                                       and thread.subagents is previous.thread.subagents):
        calibration = None  # nothing recorded, before or since (calibrate would look through every sub-agent)
    else:
        calibration = thread_calibration(thread, base_counter)
    if thread is not previous.thread and (
            not resume.calibration_agrees(previous.calibration, calibration, thread.messages, changed)
            # calibrated counts are kept per message object: the rewritten ones must be the same objects
            or (calibration is not None and not histories_shared(previous.thread, thread))):
        return None
    if (previous.live is not None and thread is not previous.thread and config == previous.config
            and changed == len(previous.thread.messages) and (previous.calibration is None) == (calibration is None)):
        continued = _continued(thread, config, previous, calibration)
        if continued is not None:
            return continued
    counter: TokenCounter = CalibratedCounter(base_counter, calibration) if calibration else base_counter
    window = config.window_tokens(thread.max_input_tokens)
    provider, rule = _provider(thread, config)

    def new_context() -> LayerContext:
        return LayerContext(counter=counter, vfs=VirtualFilesystem(journal=True), window_tokens=window, thread=thread,
                            summarizer=summarizer, calibration=calibration, provider=provider, thinking_rule=rule)

    context = new_context()
    mws = build_layers(config, context)
    if not resume.checkpointable(mws) or (thread is not previous.thread and not all(
            m.grown_from(changed) for m in mws if hasattr(m, "grown_from"))):
        return None
    first = resume.first_change(previous, config, mws)
    cp = resume.pick_checkpoint(previous, first, changed) if first > 0 else None
    if cp is None or (thread is not previous.thread and not resume.answered_agrees(cp, thread)):
        return None
    prime = getattr(base_counter, "prime", None)
    with paused_gc(), model_output_redaction():
        if prime is not None:  # only what the previous run did not count (the thread's new messages)
            prime(thread.messages[cp.index:])
        with recording() as recorder, deciding() as decisions:
            _emit_warnings(config, window)
            warnings = list(recorder.events)
            vfs = previous.files.replayed(cp.files)
            context.vfs = vfs
            driver = Driver(thread, mws, counter, window, recorder,
                            prompt_at=calibration.prompt_at if calibration else None, provider=provider, rule=rule,
                            decisions=decisions, files=vfs, checkpoints=True, seed_todos=False, config=config)
            steps: list[StepRecord] = [*previous.steps[:cp.step - 1], cp.last_record] if cp.last_record else []
            if steps:
                steps[0] = resume.step_zero_events(steps[0], warnings)
            same = resume.same_sections(config, cp.config, mws)
            try:
                driver.restore(cp, steps, warnings, same_settings=same)
                # the decisions before the checkpoint, as this config's layers record them
                decisions.decisions[:] = resume.decisions_before(
                    cp, mws, same, lambda: build_layers(cp.config, new_context()))
            except CheckpointError:
                return None
            driver.checkpoints = [c for c in previous.own_checkpoints() if c.step <= cp.step]
            steps, final_state = driver.run()
            resume.reflag_thrashing(steps, cp.step)
    return _run(thread, config, counter, window, steps, vfs, final_state, mws, calibration, driver, cp.step)


def _run(thread: Thread, config: EngineConfig, counter: TokenCounter, window: int, steps: list[StepRecord],
         vfs: VirtualFilesystem, final_state: Sequence[Any], mws: Sequence[AgentMiddleware],
         calibration: Calibration | None, driver: Driver, resumed_from: int | None) -> Run:
    summarizers = [sm for m in mws if getattr(m, "layer", None) in ("summarization", "compaction")
                   and (sm := getattr(m, "summarizer", None)) is not None]
    return Run(
        thread=thread,
        config=config,
        counter=counter,
        window_tokens=window,
        steps=steps,
        files=vfs,
        final_state=final_state,
        layer_names=tuple(getattr(m, "layer", type(m).__name__) for m in mws),
        summarizer_name=", ".join(dict.fromkeys(getattr(sm, "name", "offline") for sm in summarizers)) or "none",
        summarizer_calls=sum(getattr(sm, "calls", 0) for sm in summarizers),
        summarizer_input_tokens=sum(getattr(sm, "input_tokens", 0) for sm in summarizers),
        calibration=calibration,
        decisions=driver.decisions.decisions if driver.decisions is not None else [],
        checks={name: checks for m in mws if isinstance(name := getattr(m, "layer", None), str)
                and isinstance(checks := getattr(m, "checks", None), list)},
        checkpoints=driver.checkpoints,
        resumed_from=resumed_from,
        live=driver if driver.checkpoints is not None and driver.resumable_end else None,
    )
