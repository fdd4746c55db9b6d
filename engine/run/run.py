"""A Run: what `replay` produced — per step the state, the view, their tokens, and the events."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage

from engine.config.schema import EngineConfig
from engine.thread.decisions import Decision
from engine.thread.events import Event
from engine.thread.kinds import CATEGORIES, message_kind
from engine.thread.model import Thread
from engine.tokens.counters import TokenCounter
from engine.workspace.vfs import VirtualFilesystem

REPORT_SCHEMA = "context-inspector/run"
REPORT_VERSION = 1


@dataclass
class StepRecord:
    """One model call: the state the agent held and the exact request (view) the model received."""

    index: int
    message_index: int
    message_id: str
    state: Sequence[BaseMessage]  # a tuple or a replay Snapshot: read-only sequences
    view: Sequence[BaseMessage]
    system: SystemMessage | None
    tool_names: tuple[str, ...]
    state_tokens: int
    view_tokens: int
    raw_tokens: int
    view_by_category: dict[str, int]
    state_by_category: dict[str, int]
    response: AIMessage | None = None
    recorded_input_tokens: int | None = None
    events: list[Event] = field(default_factory=list)
    # the request's tool objects (schemas or LangChain tools), as sent: the thread's and the layers'
    tools: tuple[Any, ...] = ()

    def view_entries(self, counter: TokenCounter) -> list[dict[str, Any]]:
        """The view message by message: `{id, role, kind, tokens}` (system prompt first); a recorded message
        that carries tokens its text does not show lists them by category in `hidden` (part of `tokens`)."""
        out: list[dict[str, Any]] = []
        if self.system is not None:
            out.append({"id": self.system.id or "system", "role": "system", "kind": message_kind(self.system),
                        "tokens": counter.count_message(self.system)})
        calibration = getattr(counter, "calibration", None)
        for m in self.view:
            entry: dict[str, Any] = {"id": m.id, "role": m.type, "kind": message_kind(m),
                                     "tokens": counter.count_message(m)}
            hidden = calibration.hidden_of(m) if calibration is not None else None
            if hidden:
                entry["hidden"] = hidden
            out.append(entry)
        return out


class FrozenSteps(Sequence[StepRecord]):
    """A finished run's records when a later replay took its driver over (a followed session's next
    lines): the first `n` of the list that replay goes on appending to, the last one as this run ended
    it (with the events after its model call). Read-only, like every Run's steps; no copy is made."""

    __slots__ = ("src", "n", "last")

    def __init__(self, src: list[StepRecord], n: int, last: StepRecord) -> None:
        self.src, self.n, self.last = src, n, last

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self.n))]
        if i < 0:
            i += self.n
        if not 0 <= i < self.n:
            raise IndexError(i)
        return self.last if i == self.n - 1 else self.src[i]

    def __iter__(self) -> Iterator[StepRecord]:
        yield from itertools.islice(self.src, self.n - 1)
        if self.n:
            yield self.last


@dataclass
class Run:
    """The result of replaying one thread with one config."""

    thread: Thread
    config: EngineConfig
    counter: TokenCounter
    window_tokens: int
    steps: Sequence[StepRecord]
    files: VirtualFilesystem
    final_state: Sequence[BaseMessage] = ()  # a read-only sequence (the driver's state list, as it ended)
    layer_names: tuple[str, ...] = ()
    summarizer_name: str = "offline"
    summarizer_calls: int = 0
    summarizer_input_tokens: int = 0
    # engine.recorded.calibration.Calibration when recorded usage calibrated the counts, else None (estimates)
    calibration: Any = None
    # What every threshold rule measured and decided at every step (engine.thread.decisions), in step order.
    decisions: list[Decision] = field(default_factory=list)
    # Views derived from the run on demand (engine.cost.run_cost keeps its cost here): computed once, never
    # inside the replay loop.
    derived: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    # What deciding layers measured at each check (engine/layers/checks.py), by layer name, and the
    # replay's checkpoints (engine/run/driver.py): what a later replay of this thread resumes from
    # (engine/run/resume.py). Not part of the report; `drop_checkpoints` frees them.
    checks: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    checkpoints: list[Any] | None = field(default=None, repr=False, compare=False)
    # how many of `checkpoints` are this run's: a replay that took its driver over appends its own to
    # the same list (None: all of them)
    checkpoints_held: int | None = field(default=None, repr=False, compare=False)
    # The step this run was replayed from when it resumed an earlier run (None: replayed from the start).
    resumed_from: int | None = field(default=None, compare=False)
    # The replay's driver as it ended (engine/run/driver.py), for a replay of the same thread grown by new
    # messages to go on from (taken once); None when the end of the run changed what it would read.
    live: Any = field(default=None, repr=False, compare=False)

    def drop_checkpoints(self) -> None:
        """Forget the checkpoints and the ended driver (a cache short of memory): later re-runs of this
        thread replay from the start."""
        self.checkpoints = None
        self.checkpoints_held = None
        self.live = None

    def own_checkpoints(self) -> list[Any]:
        """This run's checkpoints (engine/run/resume.py picks from them)."""
        found = self.checkpoints or []
        return found if self.checkpoints_held is None else found[: self.checkpoints_held]

    @property
    def events(self) -> list[Event]:
        return [e for s in self.steps for e in s.events]

    def decisions_at(self, step: int) -> list[Decision]:
        """The decisions made before the model call of `step`."""
        index = self.derived.get("decisions_by_step")
        if index is None:
            index = {}
            for d in self.decisions:
                index.setdefault(d.step, []).append(d)
            self.derived["decisions_by_step"] = index
        return list(index.get(step, ()))

    def peak_view_tokens(self) -> int:
        return max((s.view_tokens for s in self.steps), default=0)

    def peak_raw_tokens(self) -> int:
        return max((s.raw_tokens for s in self.steps), default=0)

    def tokens_saved(self) -> int:
        """Input tokens not sent over the whole run: the sum over steps of raw minus view."""
        return sum(max(0, s.raw_tokens - s.view_tokens) for s in self.steps)

    def events_by_kind(self) -> dict[str, int]:
        return dict(sorted(Counter(f"{e.layer}.{e.kind}" for e in self.events).items()))

    def events_by_layer(self) -> dict[str, int]:
        return dict(sorted(Counter(e.layer for e in self.events).items()))

    def counts_label(self) -> str:
        """How the numbers were made: calibrated to the provider's recorded input, or our estimate."""
        return ("calibrated to recorded input" if self.calibration is not None
                else f"{self.counter.name} estimate")

    def tokenizer_statement(self) -> str | None:
        """"Claude tokenizer ≈ 1.13 × o200k_base on this session, fitted on 137 calls" (None without usage)."""
        return self.calibration.fit.statement() if self.calibration is not None else None

    def recorded_unexplained(self) -> float | None:
        """The largest unexplained share of a step's recorded input (engine.recorded.calibration)."""
        shares = [s.view_by_category.get("unexplained", 0) / s.recorded_input_tokens
                  for s in self.steps if s.recorded_input_tokens]
        return round(max(shares), 6) if shares else None

    def recorded_deviation(self) -> float | None:
        """The largest |view − recorded input| / recorded input over steps with recorded usage."""
        devs = [abs(s.view_tokens - s.recorded_input_tokens) / s.recorded_input_tokens
                for s in self.steps if s.recorded_input_tokens]
        return round(max(devs), 6) if devs else None

    def totals(self) -> dict[str, Any]:
        cal = self.calibration
        return {
            "steps": len(self.steps),
            "window_tokens": self.window_tokens,
            "window_origin": self.config.window_origin(self.thread),
            "peak_view_tokens": self.peak_view_tokens(),
            "peak_raw_tokens": self.peak_raw_tokens(),
            "peak_view_fraction": round(self.peak_view_tokens() / self.window_tokens, 4) if self.window_tokens else None,
            "tokens_saved": self.tokens_saved(),
            "events": len(self.events),
            "events_by_layer": self.events_by_layer(),
            "events_by_kind": self.events_by_kind(),
            "warnings": sum(1 for e in self.events if e.severity == "warning"),
            "summarizer": self.summarizer_name,
            "summarizer_calls": self.summarizer_calls,
            "summarizer_input_tokens": self.summarizer_input_tokens,
            "files": len(self.files),
            "calibrated": cal is not None,
            "tokenizer": self.tokenizer_statement(),
            "agent_prompt_tokens": cal.prompt_tokens if cal is not None else 0,
            "first_turn_context_tokens": cal.first_turn_tokens if cal is not None else 0,
            "unexplained_tokens": cal.unexplained_tokens if cal is not None else 0,
            "recorded_steps": sum(1 for s in self.steps if s.recorded_input_tokens),
            "recorded_max_deviation": self.recorded_deviation(),
            "recorded_max_unexplained": self.recorded_unexplained(),
            "decisions": len(self.decisions),
            "fired": sum(1 for d in self.decisions if d.fired),
        }

    def to_report(self, *, include_views: bool = True) -> dict[str, Any]:
        """The documented JSON report (docs/replay-json.md); identical for identical inputs."""
        steps = []
        for s in self.steps:
            entry: dict[str, Any] = {
                "index": s.index,
                "message_index": s.message_index,
                "message_id": s.message_id,
                "state_tokens": s.state_tokens,
                "view_tokens": s.view_tokens,
                "raw_tokens": s.raw_tokens,
                "recorded_input_tokens": s.recorded_input_tokens,
                "counts": "calibrated" if self.calibration is not None else "estimated",
                "view_by_category": {c: s.view_by_category.get(c, 0) for c in CATEGORIES},
                "decisions": [d.to_dict() for d in self.decisions_at(s.index)],
                "events": [e.to_dict() for e in s.events],
            }
            if include_views:
                entry["view"] = s.view_entries(self.counter)
            steps.append(entry)
        return {
            "schema": REPORT_SCHEMA,
            "version": REPORT_VERSION,
            "thread_id": self.thread.thread_id,
            "source_format": self.thread.source_format,
            "counter": self.counter.name,
            "layers": list(self.layer_names),
            "config": self.config.to_dict(),
            "calibration": self.calibration.to_dict() if self.calibration is not None else None,
            "steps": steps,
            "files": [
                {"path": e.path, "tokens": self.counter.count_text(e.content), "chars": e.size_chars,
                 "step": e.step, "layer": e.layer, "source_id": e.source_id}
                for e in self.files.entries()
            ],
            "totals": self.totals(),
        }
