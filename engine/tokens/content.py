"""What a message is made of, as a counter reads it: text pieces, media blocks, opaque blocks, and Claude's
tool-use markup (how a Claude model is sent tool calls and results)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from engine.tokens.images import UNKNOWN_IMAGE_TOKENS, image_tokens

# An image costs what its provider charges for its size (engine.tokens.images), or this fixed price, the
# one LangChain's approximate counter charges, when its size cannot be read. Other binary blocks
# (audio, files, base64 documents) get the fixed price: their base64 is not text the model reads,
# and their real cost (pages, seconds) cannot be known offline without decoding them.
TOKENS_PER_IMAGE = UNKNOWN_IMAGE_TOKENS
IMAGE_BLOCKS = frozenset({"image", "image_url", "input_image"})
MEDIA_BLOCKS = IMAGE_BLOCKS | {"document", "input_audio", "audio", "file", "input_file", "video"}
# Opaque blocks: encrypted model state whose size in tokens cannot be read from the file
# (Anthropic's redacted thinking; a Responses `compaction` item and `encrypted_content` parts, which
# Codex sends back as the provider returned them).
OPAQUE_BLOCKS = frozenset({"redacted_thinking", "compaction", "encrypted_content"})


THINKING_TYPES = frozenset({"thinking", "reasoning"})


def thinking_texts(content: Any) -> list[str]:
    """The thinking (Anthropic `thinking`) and reasoning (LangChain's standard block) texts of a content."""
    if not isinstance(content, list):
        return []
    out: list[str] = []
    for block in content:
        if isinstance(block, dict):
            btype = block.get("type")
            if btype == "thinking":
                out.append(str(block.get("thinking", "")))
            elif btype == "reasoning" and isinstance(block.get("reasoning"), str):
                out.append(block["reasoning"])
    return out


def content_parts(content: Any, *, thinking: bool = True) -> tuple[list[str], list[dict[str, Any]]]:
    """Text pieces of a message content, and its media blocks (images, audio, files) to be priced apart.

    `thinking=False` leaves the thinking and reasoning blocks out (`thinking_texts` has them)."""
    if isinstance(content, str):
        return [content], []
    texts: list[str] = []
    media: list[dict[str, Any]] = []
    if isinstance(content, list):
        for block in content:
            if isinstance(block, str):
                texts.append(block)
            elif isinstance(block, dict):
                btype = block.get("type")
                if not isinstance(btype, str):  # a wrong type from a hand-edited file: counted as its JSON
                    btype = None
                if btype in ("text", "input_text", "output_text"):
                    texts.append(str(block.get("text", "")))
                elif btype == "thinking":
                    if thinking:
                        texts.append(str(block.get("thinking", "")))
                elif btype == "reasoning" and isinstance(block.get("reasoning"), str):
                    if thinking:
                        texts.append(block["reasoning"])  # LangChain's standard reasoning block
                elif btype == "document" and (document := _text_document(block)) is not None:
                    texts.append(document)
                elif btype in MEDIA_BLOCKS:
                    media.append(block)
                elif btype in OPAQUE_BLOCKS:
                    continue
                elif btype == "tool_result":
                    inner, inner_media = content_parts(block.get("content", ""))
                    texts.extend(inner)
                    media.extend(inner_media)
                else:
                    texts.append(json.dumps(block, ensure_ascii=False, sort_keys=True, default=str))
            else:
                texts.append(str(block))
    elif content is not None:
        texts.append(str(content))
    return texts, media


def media_tokens(block: Mapping[str, Any], framing: str) -> int:
    """An image costs what its provider charges for its size (engine.tokens.images); other media a fixed price."""
    if block.get("type") in IMAGE_BLOCKS:
        return image_tokens(block, framing)
    return TOKENS_PER_IMAGE


def _text_document(block: Mapping[str, Any]) -> str | None:
    """The text of an Anthropic `document` block whose source is plain text, else None."""
    source = block.get("source")
    if isinstance(source, Mapping) and source.get("type") == "text" and isinstance(source.get("data"), str):
        return str(source["data"])
    return None


def message_text(message: BaseMessage) -> str:
    """The plain text of a message's content (blocks joined by newlines)."""
    texts, _ = content_parts(message.content)
    return "\n".join(texts)


def tool_call_text(tool_call: Mapping[str, Any]) -> str:
    return json.dumps(tool_call.get("args", {}), ensure_ascii=False, sort_keys=True, default=str)


# -- Claude's tool-use prompt format ---------------------------------------------------------------
# Anthropic documents that the API builds a special tool-use system prompt from the tool
# definitions (Implement tool use, "Tool use system prompt":
# https://platform.claude.com/docs/en/agents-and-tools/tool-use/implement-tool-use) and that tool_use
# and tool_result blocks cost input tokens (Tool use pricing and tokens). The call markup below, the
# `function_calls`/`invoke name`/`parameter name` block with "String and scalar parameters [...] as
# is, while lists and objects should use JSON format", is that prompt as extracted from the API
# (jujumilk3/leaked-system-prompts, anthropic-claude-api-tool-use_20250119.md; not an official
# document). Its tags carry the `antml:` namespace: the extract prints them bare but keeps the
# instruction "DO NOT use antml unless you intend to invoke a tool", and Claude Code's recorded
# output usage agrees. Over the calls whose final usage the two large sessions in shared/traces
# record, output tokens per counted token are 1.49 and 1.36 for tool-only replies without the
# namespace (1.37 and 1.38 for replies mixing text) and 1.26 and 1.24 with it (1.25 and 1.28): bare
# tags undercount tool-only replies by 9-15 %. The result wrapper is the published legacy
# tool-use format (https://docs.anthropic.com/claude/docs/legacy-tool-use; anthropics/anthropic-tools,
# tool_use_package/prompt_constructors.py: `construct_successful_function_run_injection_prompt`);
# the current wrapper is not published, so an error result puts `<error>` where `<stdout>` was.
CALL_NAMESPACE = "antml:"


def _parameter_value(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def render_function_calls(tool_calls: Sequence[Mapping[str, Any]]) -> str:
    """The tool calls of one AI message as Claude's namespaced `function_calls` block."""
    ns = CALL_NAMESPACE
    lines = [f"<{ns}function_calls>"]
    for tc in tool_calls:
        lines.append(f'<{ns}invoke name="{tc.get("name", "")}">')
        args = tc.get("args", {})
        if isinstance(args, Mapping):
            lines.extend(f'<{ns}parameter name="{key}">{_parameter_value(value)}</{ns}parameter>'
                         for key, value in args.items())
        elif args:
            lines.append(_parameter_value(args))
        lines.append(f"</{ns}invoke>")
    lines.append(f"</{ns}function_calls>")
    return "\n".join(lines)


def render_function_result(name: str, content: str, *, error: bool = False) -> str:
    """One tool result as Claude's `<function_results>` wrapper (`<error>` for a failed call)."""
    tag = "error" if error else "stdout"
    return (f"<function_results>\n<result>\n<tool_name>{name}</tool_name>\n<{tag}>\n{content}\n</{tag}>\n"
            "</result>\n</function_results>")


def content_without_call_blocks(message: BaseMessage) -> Any:
    """AI content minus the call blocks that duplicate its tool_calls (they are counted once, there):
    Anthropic `tool_use` blocks and LangChain 1.x standard-content `tool_call` blocks."""
    content = message.content
    if not isinstance(message, AIMessage) or not isinstance(content, list) or not message.tool_calls:
        return content
    ids = {tc.get("id") for tc in message.tool_calls}
    return [b for b in content
            if not (isinstance(b, dict) and b.get("type") in ("tool_use", "tool_call")
                    and isinstance(b.get("id"), str) and b.get("id") in ids)]
