"""SWE-agent trajectories (`*.traj`): `{trajectory, history, info, replay_config?, environment?}`.

`history` is the conversation: `system`/`user`/`assistant`/`tool` messages with SWE-agent's own keys
(`agent`, `message_type`, `thought`, `action`, `is_demo`). Function-calling runs put OpenAI
`tool_calls` on assistant turns and answer them with `tool` messages carrying a **list**
`tool_call_ids`; older runs without function calling return observations as `user` turns and are
imported as they are. Without `history` (very old files) the conversation is rebuilt from the
steps' `thought`/`action`/`observation`.

`trajectory[i].query` (`messages` in 1.0 pre-releases) is the exact model input at step i, after
SWE-agent's history processors elided old observations: its size per step is kept in
`extra["step_inputs"]` (messages and characters), beside `info` (`model_stats`, `exit_status`).

A RetryAgent run nests whole trajectories under `attempts`; when it has chosen one, that attempt
is also merged into the top level (`info.best_attempt_idx`). Such a file holds several threads:
the chosen one under the file's stem, and each attempt as `<stem>.attempt-<i>`. Without `--thread`
the chosen one is loaded, or the first attempt when none was chosen yet.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from engine.base.errors import ThreadLoadError, ThreadNotFoundError
from engine.formats.callids import make_call_ids_unique
from engine.formats.jsonshape import (
    SingleThreadImporter,
    Where,
    assemble,
    default_thread_id,
    guarded_sniff,
    parsed_if,
)
from engine.formats.openai_messages import OpenAIMessageReader
from engine.formats.source import Source, ThreadRef
from engine.thread.model import Thread, stable_id, title_line
from engine.tokens.content import content_parts

FORMAT = "swe_agent"
# Bulky `info` entries (file snippets around the edits) that the inspector does not need.
_INFO_SKIP_PREFIX = "edited_files"
_KWARGS = {"agent": "swe_agent_agent", "message_type": "swe_agent_message_type", "action": "swe_agent_action",
           "is_demo": "swe_agent_demo", "thinking_blocks": "thinking_blocks"}


SHOWN_IDS = 5


def is_trajectory(doc: Any) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("trajectory"), list) and (
        isinstance(doc.get("history"), list) or isinstance(doc.get("info"), dict)
    )


def is_retry_run(doc: Any) -> bool:
    """A RetryAgent file: `attempts` holding trajectories (the chosen one may also sit at the top)."""
    attempts = doc.get("attempts") if isinstance(doc, dict) else None
    return isinstance(attempts, list) and bool(attempts) and all(is_trajectory(a) for a in attempts[:5])


def attempt_id(stem: str, index: int) -> str:
    return f"{stem}.attempt-{index}"


def _openai_items(history: list[Any], where: Where, at: str) -> tuple[list[dict[str, Any]], list[str]]:
    """History items as OpenAI message dicts (one per tool call id), with their JSON paths."""
    items: list[dict[str, Any]] = []
    paths: list[str] = []
    for i, raw in enumerate(history):
        item = dict(where.want_dict(raw, f"{at}[{i}]", "a message object"))
        ids = item.pop("tool_call_ids", None)
        if item.get("role") == "tool" and "tool_call_id" not in item:
            ids = where.want_list(ids, f"{at}[{i}].tool_call_ids", "a list of tool call ids") if ids is not None else []
            if not ids:
                # A tool turn without ids cannot be paired: keep it as the observation it is.
                item["role"] = "user"
            for k, call_id in enumerate(ids):
                # SWE-agent runs one call per turn; extra ids would share one observation.
                items.append({**item, "tool_call_id": str(call_id), **({"content": ""} if k else {})})
                paths.append(f"{at}[{i}]")
            if ids:
                continue
        items.append(item)
        paths.append(f"{at}[{i}]")
    return items, paths


def _history_messages(history: list[Any], where: Where, at: str) -> list[BaseMessage]:
    items, paths = _openai_items(history, where, at)
    reader = OpenAIMessageReader(where, id_prefix=FORMAT)
    messages: list[BaseMessage] = []
    for position, (item, path) in enumerate(zip(items, paths, strict=True)):
        message = reader.read({k: v for k, v in item.items() if k not in _KWARGS and k != "thought"}, path, position)
        if message is None:
            continue
        for key, kwarg in _KWARGS.items():
            if item.get(key) not in (None, "", False):
                message.additional_kwargs[kwarg] = item[key]
        messages.append(message)
    make_call_ids_unique(messages)
    tool_names = {tc["id"]: tc["name"] for m in messages if isinstance(m, AIMessage) for tc in m.tool_calls}
    for m in messages:
        if isinstance(m, ToolMessage) and m.name is None:
            m.name = tool_names.get(m.tool_call_id)
    return messages


def _steps_messages(trajectory: list[Any], where: Where, at: str) -> list[BaseMessage]:
    """The conversation rebuilt from the steps (files without `history`)."""
    messages: list[BaseMessage] = []
    for i, raw in enumerate(trajectory):
        step = where.want_dict(raw, f"{at}[{i}]", "a step object")
        response = step.get("response") or step.get("thought") or ""
        action = step.get("action") or ""
        text = str(response) if response else str(action)
        messages.append(AIMessage(content=text, id=stable_id(FORMAT, 2 * i, text),
                                  additional_kwargs={"swe_agent_action": action} if action else {}))
        observation = str(step.get("observation") or "")
        messages.append(HumanMessage(content=observation, id=stable_id(FORMAT, 2 * i + 1, observation)))
    return messages


def _step_inputs(trajectory: list[Any]) -> list[dict[str, int]]:
    """Per step, the size of the model input SWE-agent recorded (`query`, or `messages` before 1.0)."""
    out: list[dict[str, int]] = []
    for i, step in enumerate(trajectory):
        query = step.get("query", step.get("messages")) if isinstance(step, dict) else None
        if not isinstance(query, list) or not query:
            continue
        chars = 0
        for m in query:
            if isinstance(m, dict):
                texts, _ = content_parts(m.get("content"))
                chars += sum(len(t) for t in texts)
        out.append({"step": i, "messages": len(query), "chars": chars})
    return out


def _replay_config(doc: dict[str, Any]) -> dict[str, Any]:
    config = doc.get("replay_config")
    if isinstance(config, str):
        try:
            config = json.loads(config)
        except (json.JSONDecodeError, RecursionError):
            return {}
    return config if isinstance(config, dict) else {}


def _model(doc: dict[str, Any]) -> str | None:
    agent = _replay_config(doc).get("agent")
    model = agent.get("model") if isinstance(agent, dict) else None
    name = model.get("name") or model.get("model_name") if isinstance(model, dict) else None
    return name if isinstance(name, str) and name else None


def _title(messages: list[BaseMessage]) -> str | None:
    """The issue's first line when the task text quotes one, else the first task line."""
    for m in messages:
        if isinstance(m, HumanMessage) and not m.additional_kwargs.get("swe_agent_demo"):
            text = "\n".join(content_parts(m.content)[0])
            # 0.x templates quote the issue after "ISSUE:", 1.x ones inside <pr_description>.
            _, marker, after = text.partition("ISSUE:\n")
            if not marker:
                _, marker, after = text.partition("<pr_description>")
            lines = [line for line in (after if marker else text).splitlines() if line.strip()]
            return title_line(lines[0]) if lines else None
    return None


class SweAgentImporter(SingleThreadImporter):
    name = FORMAT

    def sniff(self, source: Source) -> bool:
        return guarded_sniff(lambda s: is_trajectory(doc := parsed_if(s, b"{")) or is_retry_run(doc), source)

    def build(self, doc: Any, source: Source, where: Where) -> Thread:
        return self._build(doc, default_thread_id(source), "$", where)

    def _build(self, doc: Any, thread_id: str, at: str, where: Where) -> Thread:
        if not is_trajectory(doc):
            where.fail(at, "expected a SWE-agent trajectory: an object with 'trajectory' (array) and 'history' or 'info'")
        trajectory = doc["trajectory"]
        history = doc.get("history")
        if isinstance(history, list) and history:
            messages = _history_messages(history, where, f"{at}.history")
        else:
            messages = _steps_messages(trajectory, where, f"{at}.trajectory")
        info = doc.get("info") if isinstance(doc.get("info"), dict) else {}
        extra: dict[str, Any] = {"info": {k: v for k, v in info.items() if not k.startswith(_INFO_SKIP_PREFIX)}}
        step_inputs = _step_inputs(trajectory)
        if step_inputs:
            extra["step_inputs"] = step_inputs
        if isinstance(doc.get("environment"), str):
            extra["environment"] = doc["environment"]
        return assemble(messages, thread_id=thread_id, model=_model(doc), title=_title(messages), extra=extra)

    # -- RetryAgent files hold one thread per attempt -------------------------------------------
    def _parsed(self, source: Source, where: Where) -> Any:
        try:
            return source.json()
        except ThreadLoadError as exc:
            raise where.unparseable(exc) from None

    def _threads(self, doc: Any, source: Source) -> list[tuple[str, Any, str]]:
        """(thread id, trajectory document, JSON path) for each thread the file holds."""
        stem = default_thread_id(source)
        threads = [(stem, doc, "$")] if is_trajectory(doc) or not is_retry_run(doc) else []
        if is_retry_run(doc):
            threads += [(attempt_id(stem, i), a, f"$.attempts[{i}]") for i, a in enumerate(doc["attempts"])]
        return threads

    def list_threads(self, source: Source) -> list[ThreadRef]:
        where = Where(source.label, self.name)
        refs = []
        for thread_id, doc, at in self._threads(self._parsed(source, where), source):
            thread = self._build(doc, thread_id, at, where)
            refs.append(ThreadRef(thread_id, thread.title, len(thread.messages)))
        return refs

    def load(self, source: Source, thread_id: str | None) -> Thread:
        where = Where(source.label, self.name)
        threads = self._threads(self._parsed(source, where), source)
        ids = [tid for tid, _, _ in threads]
        if thread_id is not None and thread_id not in ids:
            shown = ", ".join(ids[:SHOWN_IDS]) + (f" … ({len(ids)} threads)" if len(ids) > SHOWN_IDS else "")
            raise ThreadNotFoundError(f"thread {thread_id!r} not found; threads: {shown}", path=source.label, format=FORMAT)
        tid, doc, at = threads[ids.index(thread_id) if thread_id is not None else 0]
        thread = self._build(doc, tid, at, where)
        if len(threads) > 1:
            thread.extra["threads_in_file"] = len(threads)
        thread.source_format = self.name
        return thread


IMPORTER = SweAgentImporter()
