"""A Cline task exported with its `ui_messages.json` alone: the API history rebuilt from it.

Cline records every request it sends in `ui_messages.json` (cline/cline `src/core/task/index.ts`
`recursivelyMakeClineRequests`): an `api_req_started` ClineMessage whose text is `ClineApiReqInfo`
JSON, `{request, tokensIn, tokensOut, cacheWrites, cacheReads, cost}`, where `request` is the user
content of that request as Cline formats it for display (`formatContentBlockToMarkdown`, blocks joined
by a blank line: the task or feedback, each tool result under its `[tool for '…'] Result:` header, the
`<environment_details>`). What the model answered follows as ClineMessages until the next request:
`say: text` (its text), and one row per tool it called (`say`/`ask: tool` with JSON
`{tool, path, content, diff, regex, …}`, `ask: command`, `say: command`, `ask: followup`,
`say`/`ask: completion_result`, `ask: plan_mode_respond`, `say`/`ask: use_mcp_server`).

Rebuilt: each request becomes the user message at `conversationHistoryIndex + 1` (where Cline adds
it to api_conversation_history) and the answer the assistant message after it, its tool calls written
as the XML Cline's models use (`cline_xml`), so the task loads like one with its API history: the same
messages (tool results split under their headers), usage per request and `conversationHistoryDeletedRange`
compactions. The model's exact wording of a call is not in the file (only what Cline displayed), so
those messages are close to, not exactly, what was sent; calibration takes the difference.
"""

from __future__ import annotations

import json
import re
from typing import Any

from engine.formats.cline_context import parse_request_info

# ClineSayTool.tool (src/shared/ExtensionMessage.ts) -> the XML tool the model called, and its params
UI_TOOLS: dict[str, tuple[str, tuple[str, ...]]] = {
    "readFile": ("read_file", ("path",)),
    "newFileCreated": ("write_to_file", ("path", "content")),
    "editedExistingFile": ("replace_in_file", ("path", "diff")),
    "fileDeleted": ("replace_in_file", ("path", "diff")),
    "listFilesTopLevel": ("list_files", ("path",)),
    "listFilesRecursive": ("list_files", ("path", "recursive")),
    "listCodeDefinitionNames": ("list_code_definition_names", ("path",)),
    "searchFiles": ("search_files", ("path", "regex", "filePattern")),
    "webFetch": ("web_fetch", ("url",)),
    "summarizeTask": ("summarize_task", ("context",)),
}
_PARAM_NAMES = {"filePattern": "file_pattern"}
_HEADER = re.compile(r"^\[[a-z_]+(?: for '.*')?\] Result:$")


def _xml(name: str, params: dict[str, Any]) -> str:
    body = "".join(f"\n<{key}>\n{value}\n</{key}>" for key, value in params.items())
    return f"<{name}>{body}\n</{name}>"


def _tool_text(say: str, text: str) -> str | None:
    """The XML call a tool row stands for, or None for a row that is not one."""
    if say in ("command",):
        return _xml("execute_command", {"command": text, "requires_approval": "false"})
    if say == "completion_result":
        return _xml("attempt_completion", {"result": text})
    if say in ("followup", "plan_mode_respond"):
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            value = {}
        key = "question" if say == "followup" else "response"
        return _xml("ask_followup_question" if say == "followup" else "plan_mode_respond",
                    {key: value.get(key, text) if isinstance(value, dict) else text})
    if say == "use_mcp_server":
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            return None
        if not isinstance(value, dict):
            return None
        return _xml("use_mcp_tool", {k: value[k] for k in ("serverName", "toolName", "arguments") if k in value})
    if say == "tool":
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            return None
        if not isinstance(value, dict) or value.get("tool") not in UI_TOOLS:
            return None
        name, keys = UI_TOOLS[value["tool"]]
        params = {_PARAM_NAMES.get(k, k): value[k] for k in keys if isinstance(value.get(k), (str, bool, int))}
        return _xml(name, params)
    return None


def request_blocks(text: str) -> list[dict[str, str]]:
    """A request's display text split back into blocks: each `[tool …] Result:` header on its own,
    its result up to the next header, the `<environment_details>` block on its own."""
    blocks: list[list[str]] = [[]]
    for line in text.split("\n"):
        if _HEADER.match(line.strip()):
            blocks += [[line], []]
        elif line.lstrip().startswith("<environment_details>"):
            blocks.append([line])
        else:
            blocks[-1].append(line)
    out = []
    for lines in blocks:
        chunk = "\n".join(lines).strip("\n")
        if chunk.strip():
            out.append({"type": "text", "text": chunk})
    return out


def _row_say(row: dict[str, Any]) -> str:
    return str(row.get("say") or row.get("ask") or "")


def has_requests(ui: Any) -> bool:
    """The file records its requests' text (Cline's `request` field; Roo Code's rows carry none)."""
    return isinstance(ui, list) and any(isinstance(r, dict) and r.get("say") == "api_req_started"
                                        and isinstance(parse_request_info(r.get("text")).get("request"), str) for r in ui)


def api_from_ui(ui: list[Any]) -> list[dict[str, Any]]:
    """The api_conversation_history the requests and answers of `ui` stand for (see the module docstring)."""
    api: list[dict[str, Any] | None] = []
    reply: list[str] | None = None
    at = -1

    def close() -> None:
        if reply is not None and 0 <= at < len(api):
            text = "\n\n".join(t for t in reply if t)
            api[at] = {"role": "assistant", "content": [{"type": "text", "text": text or "(no answer recorded)"}]}

    for row in ui:
        if not isinstance(row, dict):
            continue
        say = _row_say(row)
        text: str = row["text"] if isinstance(row.get("text"), str) else ""
        if row.get("say") == "api_req_started":
            close()
            request = parse_request_info(text).get("request")
            index = row.get("conversationHistoryIndex")
            position = index + 1 if isinstance(index, int) and not isinstance(index, bool) and index + 1 > at else at + 1
            while len(api) < position + 2:
                api.append(None)
            api[position] = {"role": "user", "content": request_blocks(request) if isinstance(request, str) else []}
            at, reply = position + 1, []
        elif reply is not None and say == "text" and row.get("type") == "say":
            reply.append(text)
        elif reply is not None:
            call = _tool_text(say, text)
            if call is not None:
                reply.append(call)
    close()
    # gaps (requests Cline did not record) become empty turns, so positions stay Cline's
    return [m if m is not None else {"role": "assistant" if k % 2 else "user", "content": []}
            for k, m in enumerate(api)]


__all__ = ["UI_TOOLS", "api_from_ui", "has_requests", "request_blocks"]
