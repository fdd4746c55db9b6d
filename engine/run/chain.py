"""The hook chains the replay driver runs, as `create_agent` composes them, built once per run.

- `ReplayRequest`: the `ModelRequest` the driver hands the layers. Its fields, their values and
  `override`'s result are LangChain's (langchain 1.5 `agents/middleware/types.py`: `__init__` sets
  the nine dataclass fields, `override` is `dataclasses.replace`); building one and overriding it
  copy the fields directly instead of going through `dataclasses.replace`'s generic walk (a few
  microseconds a call, several calls a step). It compares equal to a `ModelRequest` with the same
  fields (`tests/engine/test_replay_chain.py` checks both against LangChain's own).
- `model_chain`: the `wrap_model_call` chain (first layer outermost); each layer's handler returns
  a plain `ModelResponse`, and commands from `ExtendedModelResponse` results accumulate inner first,
  then outer (langchain 1.5 `agents/factory.py`, `_chain_model_call_handlers`).
- `tool_chain`: the `wrap_tool_call` chain around a handler that returns the recorded result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse
from langchain_core.messages import AIMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from engine.layers.base import RequestLayer
from engine.layers.request_copy import copied

ModelHandler = Callable[[ModelRequest[Any]], tuple[ModelResponse[Any], list[Command[Any]]]]

_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(ModelRequest))


class ReplayRequest(ModelRequest[Any]):
    """A `ModelRequest` whose `override` copies the fields directly (the same result as LangChain's)."""

    def override(self, **overrides: Any) -> ModelRequest[Any]:  # type: ignore[override]
        new = copied(self, overrides)  # the layers' copy, kept a ReplayRequest
        return new if new is not None else super().override(**overrides)  # LangChain's own (or its error)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ModelRequest):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in _FIELDS)

    __hash__ = None  # type: ignore[assignment]


def new_request(model: Any, messages: list[Any], system_message: Any, tools: list[Any], state: Any,
                runtime: Any) -> ReplayRequest:
    """`ModelRequest(model=..., messages=..., system_message=..., tools=..., state=..., runtime=...)`."""
    request = object.__new__(ReplayRequest)
    request.__dict__.update(model=model, messages=messages, system_message=system_message, tool_choice=None,
                            tools=tools, response_format=None, state=state, runtime=runtime, model_settings={})
    return request


def new_tool_request(call: Any, state: Any) -> ToolCallRequest:
    """`ToolCallRequest(tool_call=call, tool=None, state=state, runtime=None)` (its `__setattr__` asks
    `hasattr` twice a field while it is built; the fields are the same)."""
    request = object.__new__(ToolCallRequest)
    request.__dict__.update(tool_call=call, tool=None, state=state, runtime=None)
    return request


def normalize_model_result(result: Any) -> tuple[ModelResponse[Any], list[Command[Any]]]:
    if isinstance(result, ExtendedModelResponse):
        return result.model_response, [result.command] if result.command is not None else []
    if isinstance(result, AIMessage):
        return ModelResponse(result=[result]), []
    return result, []


def _compose_model(mw: AgentMiddleware, inner: ModelHandler) -> ModelHandler:
    wrap = mw.wrap_model_call

    def composed(request: ModelRequest[Any]) -> tuple[ModelResponse[Any], list[Command[Any]]]:
        accumulated: list[Command[Any]] = []

        def inner_handler(req: ModelRequest[Any]) -> ModelResponse[Any]:
            accumulated.clear()  # a retrying layer calls the handler again
            response, commands = inner(req)
            if commands:
                accumulated.extend(commands)
            return response

        result = wrap(request, inner_handler)
        if type(result) is ModelResponse:  # the common case: no command of its own
            return result, list(accumulated)
        response, own = normalize_model_result(result)
        return response, [*accumulated, *own]

    return composed


def _compose_request_layer(mw: RequestLayer, inner: ModelHandler) -> ModelHandler:
    """`_compose_model(mw, inner)` for a layer whose wrap_model_call is `RequestLayer`'s own: it calls
    the handler once with `_prepare(request)` and returns what the handler returned, a plain
    `ModelResponse` (or what an inner link normalized, which normalizes to itself), so the link is
    `inner` after `_prepare`, with the inner links' commands as they came (no handler closure, no
    accumulator per call)."""
    prepare = mw._prepare

    def composed(request: ModelRequest[Any]) -> tuple[ModelResponse[Any], list[Command[Any]]]:
        return inner(prepare(request))

    return composed


def _prepares_only(mw: AgentMiddleware) -> bool:
    return isinstance(mw, RequestLayer) and type(mw).wrap_model_call is RequestLayer.wrap_model_call


def model_chain(layers: Sequence[AgentMiddleware], innermost: ModelHandler) -> ModelHandler:
    chain = innermost
    for mw in reversed(layers):
        chain = _compose_request_layer(mw, chain) if _prepares_only(mw) else _compose_model(mw, chain)  # type: ignore[arg-type]
    return chain


def _bind_tool(mw: AgentMiddleware, handler: Callable[..., Any]) -> Callable[..., Any]:
    wrap = mw.wrap_tool_call
    return lambda request: wrap(request, handler)


def tool_chain(layers: Sequence[AgentMiddleware], innermost: Callable[[ToolCallRequest], Any]) -> Callable[..., Any]:
    handler: Callable[[ToolCallRequest], Any] = innermost
    for mw in reversed(layers):
        handler = _bind_tool(mw, handler)
    return handler


__all__ = ["ReplayRequest", "model_chain", "new_request", "new_tool_request", "normalize_model_result",
           "tool_chain"]
