"""What every context layer shares: a token counter, the virtual filesystem, the window, events."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse

from engine.thread import events
from engine.thread.model import Thread
from engine.tokens.counters import TokenCounter, get_counter
from engine.workspace.vfs import VirtualFilesystem


@dataclass
class LayerContext:
    """What `build_layers` hands every layer: shared by all layers of one run."""

    counter: TokenCounter = field(default_factory=get_counter)
    # what thresholds are measured with when it is not `counter` (config `tokens.layer_counter`)
    layer_counter: TokenCounter | None = None
    vfs: VirtualFilesystem = field(default_factory=VirtualFilesystem)
    window_tokens: int | None = None
    thread: Thread | None = None
    summarizer: Any = None
    workspace: Any = None
    # The thread's engine.recorded.calibration.Calibration when its recorded usage calibrates the counts:
    # the agent's own prompt is then measured (agent prompt), so ours is not added.
    calibration: Any = None
    # The provider's thinking rule for this run ("all", "last_turn", "none") and the thread's
    # RecordedHistory that applies it (None when "all"): what a request is as the model receives it.
    provider: Any = None
    thinking_rule: str = "all"

    def sent(self, messages: Any) -> Any:
        """`messages` as the provider hands them to the model (earlier thinking dropped by its rule)."""
        return messages if self.provider is None else self.provider.provider_view(messages, rule=self.thinking_rule)

    def agent_prompt(self, step: int | None) -> int:
        """The agent's own prompt a request at `step` carries (measured; 0 without recorded usage)."""
        return self.calibration.prompt_at(step or 0) if self.calibration is not None else 0


class ContextLayer(AgentMiddleware):
    """Base class of the engine's layers; a real LangChain `AgentMiddleware`.

    Subclasses set `layer` (the event layer name) and implement LangChain hooks. They take
    everything from `LayerContext` so the same object works in `create_agent` and in replay.
    """

    layer: ClassVar[str] = "layer"

    def __init__(self, context: LayerContext | None = None) -> None:
        super().__init__()
        self.context = context or LayerContext()

    @property
    def counter(self) -> TokenCounter:
        """The run's counter: what events report, so their tokens match the timeline."""
        return self.context.counter

    @property
    def decision_counter(self) -> TokenCounter:
        """What this layer's thresholds are measured with (the framework's own counter)."""
        return self.context.layer_counter or self.context.counter

    @property
    def vfs(self) -> VirtualFilesystem:
        return self.context.vfs

    def window_tokens(self, model: Any = None) -> int | None:
        """The context window: the configured one, else the model profile's max_input_tokens."""
        if self.context.window_tokens:
            return self.context.window_tokens
        profile = getattr(model, "profile", None)
        if isinstance(profile, dict) and isinstance(profile.get("max_input_tokens"), int):
            return int(profile["max_input_tokens"])
        return None

    def current_step(self) -> int | None:
        rec = events.current_recorder()
        return rec.step if rec is not None else None

    def emit(self, kind: str, **kwargs: Any) -> events.Event | None:
        return events.emit(self.layer, kind, **kwargs)

    @property
    def pure_after_agent(self) -> bool:
        """Whether `after_agent` leaves the state, this layer and the events as they were (a replay whose
        thread grows goes on from where it ended: engine/run/replay.py)."""
        return type(self).after_agent is AgentMiddleware.after_agent

    def grown_from(self, changed: int) -> bool:
        """Whether what this layer measured on the steps before message `changed` holds for a thread that
        differs from the run's from there on (False: something it read of the whole thread may move, and
        the replay starts over)."""
        return True

    def thread_grew(self, thread: Thread, old_length: int) -> bool:
        """Take `thread`, the run's thread with messages added after its first `old_length` (the same
        objects before): a layer that read the thread when it was made reads the new part; False when it
        cannot (the replay then starts over)."""
        return True

    def first_change(self, old: Any, new: Any, run: Any) -> int:
        """The first step at which this layer, built from config `new`, can act otherwise than it did in
        `run` (replayed with config `old`, whose section for this layer differs): 0 unless the layer can
        tell from what `run` recorded (engine/layers/checks.py); a resumed replay starts at or before it."""
        return 0


class RequestLayer(ContextLayer):
    """A layer that only rewrites the model request (never the state): subclasses implement
    `_prepare(request) -> request`; the sync and async model-call hooks are the same two lines."""

    def _prepare(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        raise NotImplementedError

    def wrap_model_call(self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]) -> Any:
        return handler(self._prepare(request))

    async def awrap_model_call(self, request: ModelRequest[Any],
                               handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]) -> Any:
        return await handler(self._prepare(request))
