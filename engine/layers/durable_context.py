"""The `durable_context` and `coalesce` layers: DeerFlow HEAD's DurableContextMiddleware and
SystemMessageCoalescingMiddleware.

DeerFlow HEAD f1f4af99b (`agents/middlewares/durable_context_middleware.py`; its lead agent places it
before summarization, `agents/lead_agent/agent.py` `_build_middlewares`):
- `before_model` captures the `task` delegations and the loaded skill files of the state into the
  `delegations` and `skill_context` channels (so summarization cannot take them away), `after_model`
  the delegations again (engine.layers.durable_context_rules);
- `wrap_model_call`, when the summary (`summary_text`, written by DeerFlow HEAD's summarization), the
  ledger or the skills are not all empty, inserts after the request's leading system messages a
  `SystemMessage` (the authority contract) and a hidden `HumanMessage` holding
  `<durable_context_data>…</durable_context_data>`; never written to the state.
`SystemMessageCoalescingMiddleware` (`agents/middlewares/system_message_coalescing_middleware.py`,
innermost but a few) then merges the request's system message and every SystemMessage among its
messages into one (`"\\n\\n".join` of their flattened texts, a list content's texts joined by "\\n";
of several dynamic-context reminders only the last; the first one's id, every part's
additional_kwargs), so after a HEAD summary the model's system prompt ends with the contract.
Events: `durable_context.inject` when the data block changes (a new summary, delegation or skill).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Annotated, Any, ClassVar, NotRequired

from langchain.agents.middleware import AgentState, ModelRequest
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from engine.config.schema import EngineConfig
from engine.layers import durable_context_rules as rules
from engine.layers.base import ContextLayer, LayerContext, RequestLayer
from engine.layers.deerflow_summary import SUMMARY_FIELD, is_dynamic_context_reminder
from engine.layers.request_copy import overridden
from engine.thread.kinds import mark
from engine.thread.model import stable_id


class DurableContextState(AgentState):
    """DeerFlow HEAD's ThreadState channels this layer reads and writes (thread_state.py reducers)."""

    delegations: Annotated[list[dict[str, str]], rules.merge_delegations]
    skill_context: Annotated[list[dict[str, Any]], rules.merge_skills]
    summary_text: NotRequired[str | None]


class DurableContextLayer(ContextLayer):
    """DeerFlow HEAD's DurableContextMiddleware (see the module docstring)."""

    layer = "durable_context"
    state_schema = DurableContextState
    # how a checkpoint keeps each run-time attribute (engine/layers/checkpoint.py): the block is replaced whole
    checkpoint_kinds: ClassVar[dict[str, str]] = {"_block": "value"}

    def __init__(self, context: LayerContext | None = None, *, skills_root: str = rules.DEFAULT_SKILLS_ROOT,
                 skill_read_tools: Sequence[str] | None = None) -> None:
        super().__init__(context)
        self.skills_root = skills_root
        self.skill_read_tools = tuple(rules.DEFAULT_SKILL_READ_TOOLS if skill_read_tools is None else skill_read_tools)
        self._block: tuple[str, list[BaseMessage]] | None = None

    @classmethod
    def from_config(cls, config: EngineConfig, context: LayerContext) -> DurableContextLayer:
        # DeerFlow passes summarization.skill_file_read_tool_names (None: its default read tools)
        return cls(context, skill_read_tools=config.summarization.skill_file_read_tool_names)

    # -- capture ---------------------------------------------------------------------------------
    def _delegations(self, state: Mapping[str, Any]) -> dict[str, Any]:
        existing = list(state.get("delegations") or [])
        changed = rules.changed_delegations(rules.extract_delegations(state.get("messages") or []), existing)
        # the reducer's result (the replay stores a channel as it is returned)
        return {"delegations": rules.merge_delegations(existing, changed)} if changed else {}

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        updates = self._delegations(state)
        skills = rules.extract_skills(state.get("messages") or [], skills_root=self.skills_root,
                                      read_tools=self.skill_read_tools)
        if skills:
            merged = rules.merge_skills(state.get("skill_context"), skills)
            if merged != list(state.get("skill_context") or []):
                updates["skill_context"] = merged
        return updates or None

    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self._delegations(state) or None

    # -- injection -------------------------------------------------------------------------------
    def _messages(self, text: str, summary: bool) -> list[BaseMessage]:
        """The contract and the data message, the same objects while the text is the same."""
        if self._block is not None and self._block[0] == text:
            return self._block[1]
        data = HumanMessage(content=text, additional_kwargs={"hide_from_ui": True, rules.DATA_KEY: True},
                            id=stable_id("durable-context", self.current_step() or 0, text))
        mark(data, "summary" if summary else "reminder")
        injected: list[BaseMessage] = [SystemMessage(content=rules.AUTHORITY_CONTRACT, id="durable-context-contract"), data]
        before = self._block
        self._block = (text, injected)
        self.emit("inject", tokens_before=None, tokens_after=sum(self.counter.count_message(m) for m in injected),
                  message_id=data.id, replaces=before[1][1].id if before is not None else None,
                  message="DeerFlow's durable context (summary, delegations, skills) injected after the system prompt")
        return injected

    def _prepare(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        state: Mapping[str, Any] = request.state if isinstance(request.state, Mapping) else {}
        summary = state.get(SUMMARY_FIELD)
        text = rules.render_data(summary if isinstance(summary, str) else None, state.get("delegations") or [],
                                 state.get("skill_context") or [])
        if not text:
            return request
        messages = list(request.messages)
        lead = next((k for k, m in enumerate(messages) if not isinstance(m, SystemMessage)), len(messages))
        injected = self._messages(text, summary=bool(summary))
        return overridden(request, messages=[*messages[:lead], *injected, *messages[lead:]])

    def wrap_model_call(self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Any]) -> Any:
        return handler(self._prepare(request))

    async def awrap_model_call(self, request: ModelRequest[Any],
                               handler: Callable[[ModelRequest[Any]], Awaitable[Any]]) -> Any:
        return await handler(self._prepare(request))


def flatten(content: Any) -> str:
    """`_flatten_content`: a string as it is, a list's items (a block's `text`) joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(item if isinstance(item, str) else item["text"] if isinstance(item, dict) and "text" in item
                         else str(item) for item in content)
    return str(content)


def coalesced(system: SystemMessage | None, messages: Sequence[BaseMessage]) -> tuple[SystemMessage, list[BaseMessage]] | None:
    """`_coalesce_request`: one system message from `system` and the SystemMessages among `messages`, and
    the messages without them; None when there are none among the messages."""
    inner = [m for m in messages if isinstance(m, SystemMessage)]
    if not inner:
        return None
    parts: list[SystemMessage] = ([system] if system is not None else []) + inner
    reminders = [k for k, p in enumerate(parts) if is_dynamic_context_reminder(p)]
    if len(reminders) > 1:
        parts = [p for k, p in enumerate(parts) if k not in reminders[:-1]]
    kwargs: dict[str, Any] = {}
    for p in parts:
        kwargs.update(p.additional_kwargs or {})
    merged = SystemMessage(content="\n\n".join(flatten(p.content) for p in parts), id=parts[0].id, additional_kwargs=kwargs)
    return merged, [m for m in messages if not isinstance(m, SystemMessage)]


class SystemCoalescingLayer(RequestLayer):
    """DeerFlow HEAD's SystemMessageCoalescingMiddleware: the request's system messages merged into one."""

    layer = "coalesce"
    checkpoint_kinds: ClassVar[dict[str, str]] = {"_last": "value"}  # replaced whole (engine/layers/checkpoint.py)

    def __init__(self, context: LayerContext | None = None) -> None:
        super().__init__(context)
        self._last: SystemMessage | None = None

    @classmethod
    def from_config(cls, config: EngineConfig, context: LayerContext) -> SystemCoalescingLayer:
        return cls(context)

    def _prepare(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        done = coalesced(request.system_message, request.messages)
        if done is None:
            return request
        merged, rest = done
        # the same merged message while it says the same (its counts stay cached)
        last = self._last
        if last is not None and last.content == merged.content and last.additional_kwargs == merged.additional_kwargs:
            merged = last
        else:
            self._last = merged
        return overridden(request, system_message=merged, messages=rest)


__all__ = ["DurableContextLayer", "DurableContextState", "SystemCoalescingLayer", "coalesced", "flatten"]
