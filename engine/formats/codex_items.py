"""Codex rollout items (OpenAI Responses items as Codex records them) as LangChain message parts.

Item shapes: `codex-rs/protocol/src/models.rs` (`ResponseItem`) in openai/codex. What Codex sends
the model back is its history of these items (`ContextManager::get_history_for_prompt`), so each one
becomes the message the model was sent, except `ghost_snapshot` (an undo checkpoint Codex filters
out of every prompt, `is_api_message`).
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, ToolMessage

from engine.formats.jsonshape import Where, json_type
from engine.thread.model import stable_id

FORMAT = "codex"
TEXT_PARTS = frozenset({"input_text", "output_text", "text"})
# Items the model produced (Codex's `is_model_generated_item`, codex-rs/core/src/context_manager/
# history.rs): one model call's worth of them becomes one AIMessage.
OUTPUT_ITEMS = frozenset({
    "reasoning", "function_call", "custom_tool_call", "local_shell_call", "tool_search_call",
    "web_search_call", "image_generation_call",
})
# Tool calls Codex runs itself and answers with an output item carrying the same call_id.
CALL_ITEMS = frozenset({"function_call", "custom_tool_call", "local_shell_call", "tool_search_call"})
OUTPUT_RESULTS = frozenset({"function_call_output", "custom_tool_call_output", "tool_search_output"})
# Never sent to the model (`is_api_message` is false for them).
NOT_SENT = frozenset({"ghost_snapshot", "other"})
# Keys Codex adds for its own bookkeeping; they are not part of what the item says.
BOOKKEEPING = frozenset({"id", "metadata", "internal_chat_message_metadata_passthrough", "status", "phase",
                         "end_turn", "timestamp"})
# User messages Codex injects as context rather than typing by the user (`is_contextual_user_fragment`,
# codex-rs/core/src/contextual_user_message.rs and event_mapping.rs across versions): AGENTS.md and
# user instructions, the environment context, skills, `!cmd` shell output, abort and sub-agent notes.
CONTEXT_PREFIXES = (
    "<environment_context>", "<user_instructions>", "# agents.md instructions for", "<instructions>",
    "<skill>", "<skills_instructions>", "<user_shell_command>", "<turn_aborted>", "<subagent_notification>",
)
# codex-rs/core/templates/compact/summary_prefix.md: the start of every local compaction summary.
SUMMARY_PREFIX = (
    "Another language model started to solve this problem and produced a summary of its thinking process."
)
# The IDE extension wraps the typed prompt after this marker (`USER_MESSAGE_BEGIN`, protocol.rs).
USER_MESSAGE_BEGIN = "## My request for Codex:"


def loc(line: int, path: str) -> str:
    return f"line {line}: {path}"


def is_output(item: dict[str, Any]) -> bool:
    itype = item.get("type")
    if itype == "message":
        return item.get("role") == "assistant"
    return isinstance(itype, str) and itype in OUTPUT_ITEMS


def item_key(item: dict[str, Any]) -> tuple[str, str]:
    """What makes two records the same item: its id when it has one, else its content."""
    if isinstance(item.get("id"), str) and item["id"]:
        return ("id", item["id"])
    body = {k: v for k, v in item.items() if k not in BOOKKEEPING}
    return ("json", json.dumps(body, sort_keys=True, ensure_ascii=False, default=str))


def message_text(content: Any) -> str:
    """The text of a Responses message content (a string or its text parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p["text"]) for p in content
                         if isinstance(p, dict) and isinstance(p.get("type"), str) and p["type"] in TEXT_PARTS
                         and isinstance(p.get("text"), str))
    return ""


def is_contextual(content: Any) -> bool:
    """Whether a user message is context Codex injected (AGENTS.md, environment...), not a prompt."""
    parts = [content] if isinstance(content, str) else content if isinstance(content, list) else []
    for part in parts:
        text = part if isinstance(part, str) else part.get("text") if isinstance(part, dict) else None
        if isinstance(text, str) and text.lstrip().lower().startswith(CONTEXT_PREFIXES):
            return True
    return False


def prompt_text(text: str) -> str:
    """The typed prompt: the IDE extension's context preamble dropped."""
    at = text.find(USER_MESSAGE_BEGIN)
    return text[at + len(USER_MESSAGE_BEGIN):].strip() if at >= 0 else text.strip()


def content_blocks(content: Any, where: Where, location: str) -> str | list[Any]:
    """Responses content as LangChain content: text parts become text, a lone text part a string.

    Images stay image blocks (priced by size); encrypted parts stay opaque blocks (no readable size).
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        where.fail(location, f"expected a string or a list of content parts, got {json_type(content)}")
    blocks: list[Any] = []
    for j, part in enumerate(content):
        if isinstance(part, str):
            blocks.append({"type": "text", "text": part})
            continue
        part = where.want_dict(part, f"{location}[{j}]", "a content part object")
        ptype = part.get("type")
        if not isinstance(ptype, str):
            where.fail(f"{location}[{j}].type", f"content part needs a string 'type', got {json_type(ptype)}")
        if ptype in TEXT_PARTS:
            blocks.append({"type": "text", "text": where.want_text(part.get("text"), f"{location}[{j}].text")})
        elif ptype in ("input_image", "image"):
            url = part.get("image_url")
            blocks.append({"type": "image_url", "image_url": {"url": url}} if isinstance(url, str) and url
                          else {"type": "input_image"})
        else:
            blocks.append(part)
    if len(blocks) == 1 and blocks[0].get("type") == "text":
        return str(blocks[0]["text"])
    return blocks


def input_message(item: dict[str, Any], msg_id: str, where: Where, location: str) -> BaseMessage:
    """A user, developer or system message item, or an inter-agent `agent_message`."""
    content = content_blocks(item.get("content"), where, f"{location}.content")
    if item.get("type") == "agent_message":
        sender = {k: item[k] for k in ("author", "recipient") if isinstance(item.get(k), str)}
        return HumanMessage(content=content, id=msg_id, additional_kwargs={"codex_agent_message": sender})
    role = item.get("role")
    if not isinstance(role, str):
        where.fail(f"{location}.role", f"expected a role string, got {json_type(role)}")
    if role in ("developer", "system"):
        return SystemMessage(content=content, id=msg_id, additional_kwargs={"__openai_role__": role})
    if role != "user":
        where.fail(f"{location}.role", f"unknown role {role!r}; expected user, assistant, developer or system")
    extra = {"codex_context": True} if is_contextual(item.get("content")) else {}
    return HumanMessage(content=content, id=msg_id, additional_kwargs=extra)


def tool_result(item: dict[str, Any], msg_id: str, name: str | None, where: Where, location: str) -> ToolMessage:
    """A `*_output` item: the result Codex sent back for the call with its call_id."""
    call_id = where.want_text(item.get("call_id"), f"{location}.call_id")
    status = "success"
    if item.get("type") == "tool_search_output":
        content: Any = json.dumps(item.get("tools"), ensure_ascii=False, default=str)
    else:
        output = item.get("output")
        # Older Codex wrote FunctionCallOutputPayload as `{content, success}`.
        if isinstance(output, dict) and "content" in output and "type" not in output:
            status = "error" if output.get("success") is False else "success"
            output = output["content"]
        if output is None or isinstance(output, (str, list, dict)):
            content = content_blocks(output, where, f"{location}.output")
        else:
            where.fail(f"{location}.output", f"expected a string or content parts, got {json_type(output)}")
    return ToolMessage(content=content, tool_call_id=call_id, name=name, id=msg_id, status=status)


def opaque_message(item: dict[str, Any], msg_id: str) -> HumanMessage:
    """A `compaction` item: the server's encrypted summary, sent back as is; its size is unreadable."""
    return HumanMessage(content=[{"type": "compaction", "encrypted": isinstance(item.get("encrypted_content"), str)}],
                        id=msg_id, additional_kwargs={"codex_item": item.get("type")})


def server_block(item: dict[str, Any]) -> list[dict[str, Any]]:
    """A built-in call the server ran (web search, image generation): its record stays in the content.

    A generated image's base64 is an image the model sent, not text: it becomes an image block.
    """
    block = {k: v for k, v in item.items() if k not in BOOKKEEPING and k != "result"}
    out = [block]
    result = item.get("result")
    if item.get("type") == "image_generation_call" and isinstance(result, str) and result:
        out.append({"type": "image", "base64": result, "mime_type": "image/png"})
    return out


def fallback_id(line: int, item: Any, suffix: str = "") -> str:
    return stable_id(FORMAT, f"{line}{suffix}", item)
