"""One Codex model call: the output items it produced, merged into one AIMessage.

A Responses call can emit reasoning, assistant text and several tool calls; Codex records each as
its own item. Merged, they are the one AI message the model produced (step k = the k-th call).
- `reasoning`: its summary text becomes a LangChain `reasoning` block (raw reasoning text, which
  open-weight models return in `content`, another one). The `encrypted_content` Codex sends back
  is opaque: its token size cannot be read from the file (it is the call's `reasoning_output_tokens`
  while the turn lasts); the items are counted in `additional_kwargs["codex_encrypted_reasoning"]` and
  their lengths in characters listed in `codex_encrypted_reasoning_chars` (what Codex estimates them
  by when it decides to compact).
- `function_call` / `custom_tool_call` / `local_shell_call` / `tool_search_call`: tool calls
  (their item ids kept in `__openai_function_call_ids__`, as langchain-openai does). A
  `function_call` whose `arguments` are not a JSON object (models emit these) stays a call, with
  `{"arguments": <the raw string>}` and its id in `additional_kwargs["codex_unparsed_arguments"]`:
  Codex sent it back as written and answered it with the parse error.
- `web_search_call` / `image_generation_call` ran on the server: their records stay in the content.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.messages.tool import tool_call

from engine.formats.codex_items import content_blocks, fallback_id, item_key, server_block
from engine.formats.jsonshape import Where, json_type, parse_arguments
from engine.thread.model import RecordedUsage

# The tool name a built-in call item is shown under (Codex's own names for them).
CALL_NAMES = {"local_shell_call": "local_shell", "tool_search_call": "tool_search"}


@dataclass
class Call:
    """A model call being collected: its items as `(item, line, location)`, usage, interleaved results."""

    model: str | None = None
    items: list[tuple[dict[str, Any], int, str]] = field(default_factory=list)
    results: list[tuple[tuple[str, str], ToolMessage]] = field(default_factory=list)
    usage: RecordedUsage | None = None

    def key(self) -> tuple[str, str]:
        return ("ai", "\x1f".join(item_key(item)[1] for item, _, _ in self.items))


def call_id_of(item: dict[str, Any], where: Where, location: str) -> str | None:
    """The call_id a tool-call item is answered by; None for one the server ran itself."""
    itype = item.get("type")
    call_id = item.get("call_id")
    if itype == "local_shell_call" and call_id is None:
        call_id = item.get("id")  # early local_shell_call items carried only an id
    if itype == "tool_search_call" and call_id is None:
        return None
    return where.want_text(call_id, f"{location}.call_id")


def call_name(item: dict[str, Any], where: Where, location: str) -> str:
    itype = str(item.get("type"))
    if itype in CALL_NAMES:
        return CALL_NAMES[itype]
    return where.want_text(item.get("name"), f"{location}.name")


def _reasoning_blocks(item: dict[str, Any], where: Where, location: str) -> tuple[list[dict[str, Any]], int]:
    blocks: list[dict[str, Any]] = []
    for key, raw in (("summary", False), ("content", True)):
        parts = item.get(key)
        if parts is None:
            continue
        texts = []
        for j, part in enumerate(where.want_list(parts, f"{location}.{key}")):
            part = where.want_dict(part, f"{location}.{key}[{j}]", "a reasoning part object")
            texts.append(where.want_text(part.get("text"), f"{location}.{key}[{j}].text"))
        if any(texts):
            block: dict[str, Any] = {"type": "reasoning", "reasoning": "\n\n".join(t for t in texts if t)}
            if isinstance(item.get("id"), str):
                block["id"] = item["id"]
            if raw:
                block["extras"] = {"codex_raw_reasoning": True}
            blocks.append(block)
    encrypted = item.get("encrypted_content")
    return blocks, len(encrypted) if isinstance(encrypted, str) else 0


def build_ai(call: Call, where: Where) -> tuple[AIMessage, int]:
    """The AIMessage of one model call, and how many encrypted reasoning items it sent back."""
    content: list[Any] = []
    calls: list[Any] = []
    item_ids: dict[str, str] = {}
    encrypted_lengths: list[int] = []
    unparsed: list[str] = []
    for item, _line, location in call.items:
        itype = item.get("type")
        if itype == "reasoning":
            blocks, length = _reasoning_blocks(item, where, location)
            content.extend(blocks)
            if length:
                encrypted_lengths.append(length)
        elif itype == "message":
            text = content_blocks(item.get("content"), where, f"{location}.content")
            content.extend([{"type": "text", "text": text}] if isinstance(text, str) else text)
        elif itype in ("function_call", "custom_tool_call", "local_shell_call", "tool_search_call") and (
                call_id := call_id_of(item, where, location)) is not None:
            name = call_name(item, where, location)
            if isinstance(item.get("id"), str) and item["id"] != call_id:
                item_ids[call_id] = item["id"]
            if itype == "function_call":
                raw = item.get("arguments")
                if raw is not None and not isinstance(raw, (str, dict)):
                    where.fail(f"{location}.arguments", f"expected a JSON string, got {json_type(raw)}")
                args, error = parse_arguments(raw)
                if args is None:
                    # Codex sent the call back as it was (a function_call item with the raw `arguments`
                    # string) and answered it (the tool reports the parse error): the call stays a call,
                    # its raw arguments kept as they were written
                    args = {"arguments": raw}
                    unparsed.append(call_id)
            elif itype == "custom_tool_call":
                args = {"input": item.get("input")}
            else:
                raw = item.get("action") if itype == "local_shell_call" else item.get("arguments")
                args = raw if isinstance(raw, dict) else {"arguments" if itype == "tool_search_call" else "action": raw}
            calls.append(tool_call(name=name, args=args, id=call_id))
        else:
            content.extend(server_block(item))
    first, line, _ = call.items[0]
    msg_id = first["id"] if isinstance(first.get("id"), str) and first["id"] else fallback_id(
        line, [item for item, _, _ in call.items])
    kwargs: dict[str, Any] = {}
    if item_ids:
        kwargs["__openai_function_call_ids__"] = item_ids
    if encrypted_lengths:
        kwargs["codex_encrypted_reasoning"] = len(encrypted_lengths)
        # each reasoning item's encrypted_content length: what Codex's auto-compaction estimates them by
        # (engine/policies/codex.py `reasoning_tokens`)
        kwargs["codex_encrypted_reasoning_chars"] = encrypted_lengths
    if unparsed:
        kwargs["codex_unparsed_arguments"] = unparsed
    body: Any = content
    if all(isinstance(b, dict) and b.get("type") == "text" for b in content):
        body = "\n".join(str(b["text"]) for b in content)
    message = AIMessage(content=body, tool_calls=calls, id=msg_id,
                        additional_kwargs=kwargs, response_metadata={"model": call.model} if call.model else {})
    return message, len(encrypted_lengths)
