"""Plain OpenAI chat message lists: `[{role, content}, ...]`, and the converter openai_chat shares.

Accepted shapes (the loosest format, so it is tried last):
- a bare array of `{role, content}` objects (mini-swe-agent's `*.traj.json` in our traces is one);
- an object whose `messages` is such an array and that is not a chat-completions dump (openai_chat
  takes those: it needs `model`, `tools`, `choices` or `usage` next to `messages`), e.g.
  mini-swe-agent's newer `{info, messages, trajectory_format}` files.

Roles: `system` and `developer` become SystemMessage (developer keeps `__openai_role__`, as
LangChain does), `user` HumanMessage, `assistant` AIMessage (`tool_calls` with JSON-string
`arguments` become LangChain tool calls; arguments that do not parse to an object become
`invalid_tool_calls`), `tool` ToolMessage (one without `tool_call_id`, as Ollama writes them,
answers the oldest unanswered call, of its `tool_name` when given; with no call open it is an error), legacy `function` a ToolMessage answering the
preceding `function_call`. mini-swe-agent's `exit` record is not a model message: it is kept in
`thread.extra["exit"]`. Messages carry no ids in this format: `stable_id(format, position, message)`.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.tool import invalid_tool_call, tool_call

from engine.formats.jsonshape import (
    SingleThreadImporter,
    Where,
    anthropic_evidence,
    assemble,
    default_thread_id,
    guarded_sniff,
    is_role_list,
    json_type,
    parse_arguments,
    parsed_if,
    usage_from_openai,
)
from engine.formats.openai_responses import item_list
from engine.formats.source import Source
from engine.thread.model import RecordedUsage, Thread, stable_id

FORMAT = "openai_messages"
ROLES = ("system", "developer", "user", "assistant", "tool", "function", "exit")
# Keys that make an object with `messages` a chat-completions request or response dump.
CHAT_DUMP_KEYS = frozenset({"model", "tools", "functions", "choices", "usage", "tool_choice"})
# Objects of other formats that also hold role lists (SWE-agent's history, Anthropic requests).
_FOREIGN_KEYS = frozenset({"trajectory", "history"})


class OpenAIMessageReader:
    """Converts OpenAI chat message dicts to LangChain messages, naming the JSON path of bad values."""

    def __init__(self, where: Where, *, id_prefix: str) -> None:
        self.where = where
        self.id_prefix = id_prefix
        self.usage: list[tuple[BaseMessage, RecordedUsage]] = []
        self.extra: dict[str, Any] = {}
        self._open_function_call: str | None = None  # legacy function_call awaiting its `function` reply
        self._unanswered: list[tuple[str, str]] = []  # (call id, tool name) of calls without a result yet

    def read_all(self, raw: list[Any], base: str, *, start: int = 0) -> list[BaseMessage]:
        out: list[BaseMessage] = []
        for i, item in enumerate(raw):
            message = self.read(item, f"{base}[{i}]", start + i)
            if message is not None:
                out.append(message)
        return out

    def read(self, raw: Any, location: str, position: int) -> BaseMessage | None:
        where = self.where
        raw = where.want_dict(raw, location, "a message object")
        if "role" not in raw:
            where.fail(f"{location}.role", "message has no 'role'")
        role = raw["role"]
        if not isinstance(role, str):
            where.fail(f"{location}.role", f"expected a role string, got {json_type(role)}")
        if role not in ROLES:
            where.fail(f"{location}.role", f"unknown role {role!r}; expected one of {', '.join(ROLES)}")
        if role == "exit":
            details = raw.get("extra")
            self.extra["exit"] = {"content": raw.get("content"), **(details if isinstance(details, dict) else {})}
            return None
        content = where.want_content(raw.get("content"), f"{location}.content")
        name = where.want_str(raw.get("name"), f"{location}.name", optional=True)
        msg_id = raw.get("id") if isinstance(raw.get("id"), str) and raw.get("id") else None
        msg_id = msg_id or stable_id(self.id_prefix, position, raw)
        fields: dict[str, Any] = {"content": content, "id": msg_id}
        if name:
            fields["name"] = name
        if role in ("system", "developer"):
            if role == "developer":
                fields["additional_kwargs"] = {"__openai_role__": "developer"}
            return SystemMessage(**fields)
        if role == "user":
            return HumanMessage(**fields)
        if role == "assistant":
            return self._assistant(raw, location, position, fields)
        if role == "tool":
            if "tool_call_id" not in raw and self._unanswered:
                # Ollama's chat API answers calls in order without ids (naming the tool in `tool_name`).
                tool_name = raw.get("tool_name") if isinstance(raw.get("tool_name"), str) else name
                call_id, call_name = self._answer(tool_name, position)
                if call_name and "name" not in fields:
                    fields["name"] = call_name
            else:
                call_id = where.want_text(raw.get("tool_call_id"), f"{location}.tool_call_id")
                self._unanswered = [c for c in self._unanswered if c[0] != call_id]
            return ToolMessage(tool_call_id=call_id, **fields)
        # role == "function": the legacy reply to the preceding assistant `function_call`
        call_id = self._open_function_call or stable_id(f"{self.id_prefix}-call", position, name)
        self._open_function_call = None
        return ToolMessage(tool_call_id=call_id, **fields)

    def _answer(self, tool_name: str | None, position: int) -> tuple[str, str | None]:
        """The oldest unanswered call (of that tool, when named) for a result without an id: (id, name)."""
        for k, (call_id, call_name) in enumerate(self._unanswered):
            if tool_name is None or call_name == tool_name:
                del self._unanswered[k]
                return call_id, call_name
        return stable_id(f"{self.id_prefix}-call", position, tool_name), tool_name

    def _assistant(self, raw: dict[str, Any], location: str, position: int, fields: dict[str, Any]) -> AIMessage:
        where = self.where
        calls: list[Any] = []
        invalid: list[Any] = []
        raw_calls = raw.get("tool_calls")
        if raw_calls is not None:
            for k, call in enumerate(where.want_list(raw_calls, f"{location}.tool_calls")):
                self._tool_call(call, f"{location}.tool_calls[{k}]", f"{position}.{k}", calls, invalid)
        legacy = raw.get("function_call")
        if legacy is not None:
            where.want_dict(legacy, f"{location}.function_call")
            call_id = stable_id(f"{self.id_prefix}-call", position, legacy)
            self._function(legacy, f"{location}.function_call", call_id, calls, invalid)
            self._open_function_call = call_id
        extra_kwargs: dict[str, Any] = {}
        for key in ("refusal", "reasoning_content"):
            if isinstance(raw.get(key), str) and raw[key]:
                extra_kwargs[key] = raw[key]
        if extra_kwargs:
            fields["additional_kwargs"] = extra_kwargs
        message = AIMessage(tool_calls=calls, invalid_tool_calls=invalid, **fields)
        self._unanswered.extend((str(c["id"]), str(c["name"])) for c in [*calls, *invalid])
        recorded = self._usage(raw, location)
        if recorded is not None:
            self.usage.append((message, recorded))
        return message

    def _tool_call(self, call: Any, location: str, position: str, calls: list[Any], invalid: list[Any]) -> None:
        where = self.where
        call = where.want_dict(call, location, "a tool call object")
        call_id = where.want_str(call.get("id"), f"{location}.id", optional=True) or stable_id(
            f"{self.id_prefix}-call", position, call
        )
        if call.get("type", "function") == "custom" and isinstance(call.get("custom"), dict):
            # Custom (free-text) tools send one string; LangChain keeps it as a one-key args dict.
            custom = call["custom"]
            tool_name = where.want_text(custom.get("name"), f"{location}.custom.name")
            calls.append(tool_call(name=tool_name, args={"input": custom.get("input")}, id=call_id))
            return
        function = where.want_dict(call.get("function"), f"{location}.function")
        self._function(function, f"{location}.function", call_id, calls, invalid)

    def _function(self, function: dict[str, Any], location: str, call_id: str, calls: list[Any], invalid: list[Any]) -> None:
        where = self.where
        tool_name = where.want_text(function.get("name"), f"{location}.name")
        raw_args = function.get("arguments")
        if raw_args is not None and not isinstance(raw_args, (str, dict)):
            where.fail(f"{location}.arguments", f"expected a JSON string or an object, got {json_type(raw_args)}")
        args, error = parse_arguments(raw_args)
        if args is None:
            invalid.append(invalid_tool_call(name=tool_name, args=str(raw_args), id=call_id, error=error))
        else:
            calls.append(tool_call(name=tool_name, args=args, id=call_id))

    def _usage(self, raw: dict[str, Any], location: str) -> RecordedUsage | None:
        """Per-message usage some loggers attach (`usage`, or mini-swe-agent's `extra.response.usage`)."""
        usage, where_usage = raw.get("usage"), f"{location}.usage"
        extra = raw.get("extra")
        if usage is None and isinstance(extra, dict) and isinstance(extra.get("response"), dict):
            usage, where_usage = extra["response"].get("usage"), f"{location}.extra.response.usage"
        if not isinstance(usage, dict):
            return None
        return usage_from_openai(usage, self.where, where_usage)


def holds_plain_messages(doc: Any) -> bool:
    """An object with a role list under `messages` that no more specific format claims."""
    return (
        isinstance(doc, dict)
        and is_role_list(doc.get("messages"))
        and not (CHAT_DUMP_KEYS | _FOREIGN_KEYS) & doc.keys()
        and not anthropic_evidence(doc)
    )


def _model_of(doc: dict[str, Any]) -> str | None:
    """mini-swe-agent records its model under info.config.model.model_name."""
    node: Any = doc.get("info")
    for key in ("config", "model", "model_name"):
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, str) else None


class OpenAIMessagesImporter(SingleThreadImporter):
    name = FORMAT

    def sniff(self, source: Source) -> bool:
        def probe(s: Source) -> bool:
            doc = parsed_if(s, b"[{")
            if is_role_list(doc):
                # Anthropic blocks or Responses items in the list belong to those formats.
                return not anthropic_evidence(doc) and item_list(doc) is None
            return holds_plain_messages(doc)

        return guarded_sniff(probe, source)

    def build(self, doc: Any, source: Source, where: Where) -> Thread:
        if isinstance(doc, dict):
            if "messages" not in doc:
                where.fail("$", "expected an array of {role, content} messages or an object with 'messages'")
            raw, base = where.want_list(doc["messages"], "$.messages"), "$.messages"
        else:
            raw, base = where.want_list(doc, "$", "an array of {role, content} messages"), "$"
        reader = OpenAIMessageReader(where, id_prefix=FORMAT)
        messages = reader.read_all(raw, base)
        thread = assemble(
            messages,
            reader.usage,
            thread_id=default_thread_id(source),
            model=_model_of(doc) if isinstance(doc, dict) else None,
        )
        thread.extra.update(reader.extra)
        return thread


IMPORTER = OpenAIMessagesImporter()
