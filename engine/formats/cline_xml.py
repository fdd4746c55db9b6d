"""Cline's XML tool calls (versions before native tool calling) as tool calls and tool results.

Cline asked models to call tools as XML in the reply text (`src/core/prompts/system.ts`,
"Tool uses are formatted using XML-style tags"), parsed by `parseAssistantMessageV2`
(`src/core/assistant-message/parse-assistant-message.ts`): a top-level `<tool_name>` tag among
`toolUseNames` (`src/core/assistant-message/index.ts`) holding `<param>value</param>` tags, values
trimmed; `content` and `diff` run to their *last* closing tag, since file contents may hold tags.
A tag left open (a reply cut short) is not a call: Cline only runs complete blocks.

The results come back in the next user message as text blocks (`Task.pushToolResult`): a header
block `[<tool> for '<path or command>'] Result:` (or `[<tool>] Result:`), then the result's blocks,
up to the next header or the `<environment_details>` block.
"""

from __future__ import annotations

import re
from typing import Any

# cline/cline src/core/assistant-message/index.ts (toolUseNames), 2025 releases.
TOOL_NAMES = frozenset({
    "execute_command", "read_file", "write_to_file", "replace_in_file", "search_files", "list_files",
    "list_code_definition_names", "browser_action", "use_mcp_tool", "access_mcp_resource",
    "ask_followup_question", "plan_mode_respond", "plan_mode_response", "load_mcp_documentation",
    "attempt_completion", "new_task", "condense", "summarize_task", "report_bug", "new_rule", "web_fetch",
})
LAST_CLOSE_PARAMS = frozenset({"content", "diff"})
_OPEN = re.compile(r"<([a-z_]+)>")
_PARAM = re.compile(r"<([a-z_]+)>")
RESULT_HEADER = re.compile(r"^\[([a-z_]+)(?: for '(.*)')?\] Result:$", re.DOTALL)


def parse_tool_calls(text: str) -> tuple[str, list[tuple[str, dict[str, str]]]]:
    """The reply text without its complete XML tool calls, and the calls (name, params) in order."""
    calls: list[tuple[str, dict[str, str]]] = []
    kept: list[str] = []
    pos = 0
    while True:
        match = next((m for m in _OPEN.finditer(text, pos) if m.group(1) in TOOL_NAMES), None)
        if match is None:
            break
        name = match.group(1)
        close = text.find(f"</{name}>", match.end())
        if close < 0:
            break  # an unfinished call stays text, as Cline leaves it unexecuted
        kept.append(text[pos:match.start()])
        calls.append((name, _params(text[match.end():close])))
        pos = close + len(name) + 3
    kept.append(text[pos:])
    return "".join(kept).strip(), calls


def _params(body: str) -> dict[str, str]:
    params: dict[str, str] = {}
    pos = 0
    while True:
        match = _PARAM.search(body, pos)
        if match is None:
            return params
        name = match.group(1)
        closing = f"</{name}>"
        end = body.rfind(closing) if name in LAST_CLOSE_PARAMS else body.find(closing, match.end())
        if end < match.end():
            return params
        params[name] = body[match.end():end].strip()
        pos = end + len(closing)


def result_header(block: Any) -> str | None:
    """The tool name of a `[tool ...] Result:` header block, else None."""
    if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
        match = RESULT_HEADER.match(block["text"].strip())
        if match is not None:
            return match.group(1)
    return None


def is_environment_details(block: Any) -> bool:
    return (isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
            and block["text"].lstrip().startswith("<environment_details>"))


def split_results(blocks: list[Any]) -> tuple[list[tuple[str, list[Any]]], list[Any]]:
    """A user message's blocks as tool results (name, blocks incl. header) and the remaining blocks."""
    results: list[tuple[str, list[Any]]] = []
    rest: list[Any] = []
    current: tuple[str, list[Any]] | None = None
    for block in blocks:
        name = result_header(block)
        if name is not None:
            current = (name, [block])
            results.append(current)
        elif current is not None and not is_environment_details(block):
            current[1].append(block)
        else:
            current = None
            rest.append(block)
    return results, rest
