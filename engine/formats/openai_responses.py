"""OpenAI Responses API items: `{object: "list", data: [...]}`, a bare item list, or a Response.

Items become messages this way:
- `message` items with role user / system / developer: HumanMessage / SystemMessage (parts
  `input_text` / `output_text` become text; a single text part becomes a plain string);
- output items (assistant `message`, `reasoning`, `function_call`, `custom_tool_call` and built-in
  `*_call` items) are grouped: consecutive output items created by one response (`created_by`)
  form one AIMessage, whose id is that response id. Its content is the assistant text; function
  calls become tool calls (the `call_id` is the tool-call id, `arguments` a JSON string; arguments
  that do not parse to an object become invalid_tool_calls); item ids of the calls are kept in
  `additional_kwargs["__openai_function_call_ids__"]`, as langchain-openai does. Client-run built-in
  calls (`computer_call`, `local_shell_call`, ...) answered by a `*_call_output` become tool calls
  named by their type (args: the `action`). Server-run built-in calls (`web_search_call`,
  `file_search_call`, `mcp_call`, `code_interpreter_call`, ...) stay in the content as blocks of
  their own type: their results are part of the conversation, so they are counted;
- `reasoning` goes to `additional_kwargs["reasoning"]` (the item, summary included), not into the
  content: the API does not send earlier reasoning summaries back as text, so they are not context
  and are not counted;
- `function_call_output` (and `*_call_output`) items become ToolMessages paired with their call
  by `call_id` (the tool name is taken from the call).

Order. The list endpoint can return items newest first (`order=desc` is its default), so the order
is decided from the items themselves: if some `function_call_output` comes before the
`function_call` with its `call_id`, or (with no pairs) the list starts with an output item and ends
with a user message, the list is newest first and is reversed. Otherwise the file order is kept.
The storymachine sample is oldest first by both tests (its call precedes its output).

A Response object (`{object: "response", output, usage, instructions}`, optionally with the request
`input`) also loads: `instructions` become the system prompt and `usage.input_tokens` the
RecordedUsage of its AI message. So does a request body (`{model, input, instructions?, tools?}`,
which loggers save with or without its `response`, or as `{request, response}`); `tools` become
`thread.tools` (built-in tools named by their type). JSON Lines of such calls (a request log, a
Batch API file `{custom_id, body}`) hold one thread a line.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.tool import invalid_tool_call, tool_call

from engine.formats.jsonshape import (
    JsonlRecordsImporter,
    Where,
    assemble,
    default_thread_id,
    guarded_sniff,
    json_type,
    jsonl_head,
    leading,
    parse_arguments,
    parsed_if,
    unwrap_exchange,
    usage_from_openai,
)
from engine.formats.source import Source
from engine.thread.model import RecordedUsage, Thread, stable_id

FORMAT = "openai_responses"

# Item types only the Responses API has (a `message` item alone could be another API's message).
ITEM_TYPES = frozenset(
    {
        "function_call",
        "function_call_output",
        "reasoning",
        "custom_tool_call",
        "custom_tool_call_output",
        "web_search_call",
        "file_search_call",
        "computer_call",
        "computer_call_output",
        "local_shell_call",
        "local_shell_call_output",
        "code_interpreter_call",
        "image_generation_call",
        "mcp_call",
        "mcp_list_tools",
        "mcp_approval_request",
        "mcp_approval_response",
        "item_reference",
    }
)
# Built-in calls the client carries out and answers with a `*_call_output` item: tool calls by call_id.
CLIENT_CALLS = frozenset({"computer_call", "local_shell_call", "shell_call", "apply_patch_call"})
PART_TYPES = frozenset({"input_text", "output_text", "refusal", "input_image", "input_file", "input_audio"})
TEXT_PARTS = frozenset({"input_text", "output_text", "text"})
INPUT_ROLES = {"user": HumanMessage, "system": SystemMessage, "developer": SystemMessage}


def _is_item(item: Any) -> bool:
    if not isinstance(item, dict) or "data" in item:
        return False
    itype = item.get("type")
    if itype in ITEM_TYPES:
        return True
    content = item.get("content")
    return (
        itype == "message"
        and isinstance(content, list)
        and any(isinstance(p, dict) and p.get("type") in PART_TYPES for p in content[:20])
    )


def item_list(doc: Any) -> tuple[list[Any], str] | None:
    """The item list a document holds and its JSON path, when it has a Responses shape."""
    if isinstance(doc, list):
        return (doc, "$") if any(_is_item(x) for x in leading(doc)) else None
    if not isinstance(doc, dict):
        return None
    if doc.get("object") == "list" and isinstance(doc.get("data"), list):
        data = doc["data"]
        return (data, "$.data") if not data or any(_is_item(x) for x in leading(data)) else None
    return None


def is_response(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("object") == "response" and isinstance(doc.get("output"), list)


def is_request(doc: Any) -> bool:
    """A `responses.create` request body (`{model, input, instructions?, tools?}`), maybe with its response."""
    return (
        isinstance(doc, dict)
        and "messages" not in doc
        and isinstance(doc.get("input"), (str, list))
        and ("model" in doc or "instructions" in doc)
        and (not isinstance(doc.get("response"), dict) or is_response(doc["response"]))
    )


def as_response(doc: Any) -> Any:
    """A request (or a logger's `{request, response}`) merged with its response into one Response shape."""
    doc = unwrap_exchange(doc)
    if is_response(doc) or not is_request(doc):
        return doc
    merged = {k: v for k, v in doc.items() if k != "response"}
    response = doc.get("response")
    if isinstance(response, dict):
        merged.update({k: v for k, v in response.items() if k != "input"})
        if response.get("instructions") is None and doc.get("instructions") is not None:
            merged["instructions"] = doc["instructions"]
    merged.setdefault("output", [])
    merged["object"] = "response"
    return merged


def tool_schemas(doc: dict[str, Any], where: Where) -> list[dict[str, Any]]:
    """Responses `tools` as `{name, description, parameters}`; built-in tools are named by their type."""
    schemas: list[dict[str, Any]] = []
    raw = doc.get("tools")
    for k, tool in enumerate(where.want_list(raw if raw is not None else [], "$.tools")):
        tool = where.want_dict(tool, f"$.tools[{k}]", "a tool object")
        name = tool.get("name") if isinstance(tool.get("name"), str) else tool.get("type")
        if not isinstance(name, str):
            where.fail(f"$.tools[{k}].name", f"tool needs a name or a type, got {json_type(name)}")
        description = tool.get("description") if isinstance(tool.get("description"), str) else ""
        parameters = tool.get("parameters") if isinstance(tool.get("parameters"), dict) else {}
        schemas.append({"name": name, "description": description, "parameters": parameters})
    return schemas


def is_output(item: dict[str, Any]) -> bool:
    """Whether the model produced this item (it belongs to an AI message)."""
    itype = item.get("type")
    if itype == "message" or (itype is None and "role" in item):
        return item.get("role") == "assistant"
    return isinstance(itype, str) and not itype.endswith("_output") and itype not in (
        "item_reference",
        "mcp_approval_response",
    )


def newest_first(items: list[Any]) -> bool:
    """Whether the list runs newest first (see the module docstring for the rule)."""
    call_at: dict[str, int] = {}
    output_at: dict[str, int] = {}
    for i, item in enumerate(items):
        if isinstance(item, dict) and isinstance(item.get("call_id"), str):
            itype = str(item.get("type", ""))
            (output_at if itype.endswith("_output") else call_at).setdefault(item["call_id"], i)
    pairs = [(call_at[c], output_at[c]) for c in call_at.keys() & output_at.keys()]
    if pairs:
        return sum(1 for call, out in pairs if out < call) > len(pairs) / 2
    dicts = [x for x in items if isinstance(x, dict)]
    if len(dicts) < 2:
        return False
    first, last = dicts[0], dicts[-1]
    return is_output(first) and not is_output(last) and last.get("role") in INPUT_ROLES


def _text_content(content: Any, where: Where, location: str) -> str | list[Any]:
    """Responses message content as LangChain content: text parts become `text` blocks."""
    content = where.want_content(content, location)
    if isinstance(content, str):
        return content
    blocks: list[Any] = []
    for part in content:
        if isinstance(part, dict) and part.get("type") in TEXT_PARTS:
            blocks.append({"type": "text", "text": part["text"]})
        elif isinstance(part, dict) and part.get("type") == "refusal":
            blocks.append({"type": "text", "text": str(part.get("refusal", ""))})
        else:
            blocks.append(part)
    if len(blocks) == 1 and isinstance(blocks[0], dict) and blocks[0].get("type") == "text":
        return blocks[0]["text"]
    return blocks


class ItemBuilder:
    """Walks items in order, grouping output items into AI messages (also used by the cassette importer)."""

    def __init__(self, where: Where) -> None:
        self.where = where
        self.messages: list[BaseMessage] = []
        self.call_names: dict[str, str] = {}
        self._group: list[tuple[dict[str, Any], str]] = []
        self._group_key: Any = None
        self._ai_ids: set[str] = set()

    def add(self, item: Any, location: str, position: int) -> None:
        where = self.where
        item = where.want_dict(item, location, "a Responses item object")
        itype = item.get("type")
        if itype is not None and not isinstance(itype, str):
            where.fail(f"{location}.type", f"expected an item type string, got {json_type(itype)}")
        if itype in (None, "message"):
            role = item.get("role")
            if not isinstance(role, str):
                where.fail(f"{location}.role", f"expected a role string, got {json_type(role)}")
            if role != "assistant" and role not in INPUT_ROLES:
                where.fail(f"{location}.role", f"unknown role {role!r}; expected user, system, developer or assistant")
        if is_output(item):
            key = item.get("created_by")
            if self._group and key != self._group_key:
                self.close()
            self._group_key = key
            self._group.append((item, location))
            return
        self.close()
        if itype == "item_reference":
            return
        item_id = item.get("id") if isinstance(item.get("id"), str) and item.get("id") else None
        msg_id = item_id or stable_id(FORMAT, position, item)
        if itype in (None, "message"):
            cls = INPUT_ROLES[item["role"]]
            extra = {"__openai_role__": "developer"} if item["role"] == "developer" else {}
            content = _text_content(item.get("content"), where, f"{location}.content")
            self.messages.append(cls(content=content, id=msg_id, additional_kwargs=extra))
            return
        call_id = where.want_text(item.get("call_id"), f"{location}.call_id")
        output = item.get("output")
        result: Any
        if isinstance(output, list):
            result = _text_content(output, where, f"{location}.output")
        elif isinstance(output, str) or output is None:
            result = output or ""
        else:
            # computer_call_output and friends carry an object (e.g. a screenshot reference)
            result = [where.want_dict(output, f"{location}.output", "a string, parts or an object")]
        name = self.call_names.get(call_id)
        self.messages.append(ToolMessage(content=result, tool_call_id=call_id, id=msg_id, name=name))

    def close(self) -> None:
        if not self._group:
            return
        group, self._group = self._group, []
        where = self.where
        texts: list[Any] = []
        calls: list[Any] = []
        invalid: list[Any] = []
        reasoning: list[dict[str, Any]] = []
        call_item_ids: dict[str, str] = {}
        for item, location in group:
            itype = item.get("type")
            if itype in (None, "message"):
                text = _text_content(item.get("content"), where, f"{location}.content")
                texts.extend([{"type": "text", "text": text}] if isinstance(text, str) else text)
            elif itype == "reasoning":
                summary = item.get("summary")
                if summary is not None:
                    for j, part in enumerate(where.want_list(summary, f"{location}.summary")):
                        where.want_dict(part, f"{location}.summary[{j}]", "a summary part object")
                reasoning.append(item)
            elif itype in ("function_call", "custom_tool_call"):
                self._call(item, location, calls, invalid, call_item_ids)
            elif itype in CLIENT_CALLS and isinstance(item.get("call_id"), str):
                # Its output comes back as a tool result, so it pairs like a function call.
                name = itype.removesuffix("_call")
                self.call_names[item["call_id"]] = name
                raw_action = item.get("action")
                action: dict[str, Any] = raw_action if isinstance(raw_action, dict) else {"action": raw_action}
                calls.append(tool_call(name=name, args=action, id=item["call_id"]))
                if isinstance(item.get("id"), str):
                    call_item_ids[item["call_id"]] = item["id"]
            else:
                # Built-in calls (web/file search, MCP, code interpreter) ran on the server and their
                # results are part of the conversation: keep the item as a content block, so it counts.
                texts.append(item)
        kwargs: dict[str, Any] = {}
        if reasoning:
            kwargs["reasoning"] = reasoning[0] if len(reasoning) == 1 else reasoning
        if call_item_ids:
            kwargs["__openai_function_call_ids__"] = call_item_ids
        content: Any = texts
        if len(texts) == 1 and isinstance(texts[0], dict) and texts[0].get("type") == "text":
            content = texts[0]["text"]
        elif not texts:
            content = ""
        msg_id = self._ai_id(group)
        self.messages.append(
            AIMessage(content=content, tool_calls=calls, invalid_tool_calls=invalid, additional_kwargs=kwargs, id=msg_id)
        )

    def _call(self, item: dict[str, Any], location: str, calls: list[Any], invalid: list[Any], ids: dict[str, str]) -> None:
        where = self.where
        call_id = where.want_text(item.get("call_id"), f"{location}.call_id")
        name = where.want_text(item.get("name"), f"{location}.name")
        self.call_names[call_id] = name
        if isinstance(item.get("id"), str):
            ids[call_id] = item["id"]
        if item.get("type") == "custom_tool_call":
            calls.append(tool_call(name=name, args={"input": item.get("input")}, id=call_id))
            return
        raw = item.get("arguments")
        if raw is not None and not isinstance(raw, str):
            where.fail(f"{location}.arguments", f"expected a JSON string, got {json_type(raw)}")
        args, error = parse_arguments(raw)
        if args is None:
            invalid.append(invalid_tool_call(name=name, args=raw, id=call_id, error=error))
        else:
            calls.append(tool_call(name=name, args=args, id=call_id))

    def _ai_id(self, group: list[tuple[dict[str, Any], str]]) -> str:
        """The response id (as langchain-openai names its AI messages), else the first item's id."""
        first = group[0][0]
        candidates = [first.get("created_by"), first.get("id")]
        for candidate in candidates:
            if isinstance(candidate, str) and candidate and candidate not in self._ai_ids:
                self._ai_ids.add(candidate)
                return candidate
        return stable_id(FORMAT, len(self.messages), [item for item, _ in group])


class OpenAIResponsesImporter(JsonlRecordsImporter):
    """One item list, response or request per JSON file, or one call per line of a JSONL log."""

    name = FORMAT

    def sniff(self, source: Source) -> bool:
        def probe(s: Source) -> bool:
            doc = parsed_if(s, b"[{")
            return item_list(doc) is not None or is_response(as_response(doc)) or self.is_jsonl(s)

        return guarded_sniff(probe, source)

    def is_jsonl(self, source: Source) -> bool:
        rows = jsonl_head(source)
        return bool(rows) and is_response(as_response(rows[0]))

    def record_id(self, record: Any) -> str | None:
        doc = as_response(record)
        rid = doc.get("id") if isinstance(doc, dict) else None
        return rid if isinstance(rid, str) and rid else None

    def build(self, doc: Any, source: Source, where: Where) -> Thread:
        builder = ItemBuilder(where)
        usage: list[tuple[BaseMessage, RecordedUsage]] = []
        system_prompt: str | None = None
        model: str | None = None
        extra: dict[str, Any] = {}
        tools: list[dict[str, Any]] = []
        doc = as_response(doc)
        if is_response(doc):
            tools = tool_schemas(doc, where)
            instructions = doc.get("instructions")
            if isinstance(instructions, str) and instructions:
                system_prompt = instructions
                builder.messages.append(SystemMessage(content=instructions, id=stable_id(FORMAT, "instructions", instructions)))
            inputs = doc.get("input")
            if isinstance(inputs, str):
                inputs = [{"role": "user", "content": inputs}]
            for i, item in enumerate(where.want_list(inputs or [], "$.input")):
                builder.add(item, f"$.input[{i}]", i)
            builder.close()
            for i, item in enumerate(where.want_list(doc["output"], "$.output")):
                if isinstance(item, dict) and is_output(item) and isinstance(doc.get("id"), str):
                    item = {"created_by": doc["id"], **item}
                builder.add(item, f"$.output[{i}]", i)
            builder.close()
            model = doc.get("model") if isinstance(doc.get("model"), str) else None
            ai = [m for m in builder.messages if isinstance(m, AIMessage)]
            if doc.get("usage") is not None and ai:
                recorded = usage_from_openai(where.want_dict(doc["usage"], "$.usage"), where, "$.usage")
                if recorded is not None:
                    usage.append((ai[-1], recorded))
            thread_id = doc.get("id") if isinstance(doc.get("id"), str) else default_thread_id(source)
        else:
            found = item_list(doc)
            if found is None:
                if isinstance(doc, dict) and "data" in doc:
                    items, base = where.want_list(doc["data"], "$.data"), "$.data"
                else:
                    items, base = where.want_list(doc, "$", "an array of Responses items"), "$"
            else:
                items, base = found
            order = list(range(len(items)))
            if newest_first(items):
                order.reverse()
                extra["order"] = "reversed (file was newest first)"
            for i in order:
                builder.add(items[i], f"{base}[{i}]", i)
            builder.close()
            thread_id = default_thread_id(source)
        return_thread = assemble(
            builder.messages, usage, thread_id=thread_id, model=model, system_prompt=system_prompt, tools=tools
        )
        return_thread.extra.update(extra)
        return return_thread


IMPORTER = OpenAIResponsesImporter()
