"""tau-bench and tau2-bench results: one thread per result, listed and picked by `task_id-trial`.

tau-bench writes an array of `{task_id, trial, reward, info, traj}`: `traj` is an OpenAI message
list (system policy, simulated user, assistant with `tool_calls`, `{role: "tool", tool_call_id,
name, content}`) without usage. A run that crashed before the first turn keeps `traj: []` and an
`info.error`.

tau2-bench writes `{timestamp, info, tasks, simulations}`. Each simulation has `messages` in
tau2's own shape: tool calls are `{id, name, arguments: object, requestor}`, a tool result is
`{role: "tool", id, content, requestor, error}` whose `id` is the call's id, and assistant turns
carry OpenAI `usage`, which becomes recorded usage. In the telecom domain the simulated *user*
also calls tools (`requestor: "user"`): those calls and their results live on the user's
side and never reach the agent's context, so they are kept out of the messages and counted in
`extra["user_side_messages"]` instead. Full-duplex (voice) runs keep `ticks` instead of
`messages`; their chunks are flattened in tick order, as tau2's `Tick.get_all_messages` does.

Thread ids are `f"{task_id}-{trial}"`; a repeated pair gets `~2`, `~3`… in file order, so ids stay
unique and stable. Without `--thread` the first result is loaded. Reward, task info and costs go
to `thread.extra`.
"""

from __future__ import annotations

from typing import Any

from engine.base.errors import ThreadLoadError, ThreadNotFoundError
from engine.formats.callids import make_call_ids_unique
from engine.formats.jsonshape import Where, assemble, guarded_sniff, json_type, leading, parsed_if
from engine.formats.openai_messages import OpenAIMessageReader
from engine.formats.source import Source, ThreadRef
from engine.thread.model import Thread, stable_id, title_line

FORMAT = "tau_bench"
TITLE_CHARS = 72
SHOWN_IDS = 5
SIMULATIONS = "$.simulations"
# What a tau2 simulation says about its run, copied to `thread.extra`.
_TAU2_EXTRA = ("id", "task_id", "trial", "termination_reason", "reward_info", "agent_cost", "user_cost", "duration", "seed")


def is_results(doc: Any) -> bool:
    if not isinstance(doc, list) or not doc:
        return False
    head = leading(doc, 5)
    return bool(head) and all("task_id" in x and isinstance(x.get("traj"), list) for x in head)


def is_tau2_results(doc: Any) -> bool:
    """tau2-bench's `{info, tasks, simulations}`; an empty run still has `simulations: []` beside `info`."""
    if not isinstance(doc, dict) or not isinstance(doc.get("simulations"), list):
        return False
    sims = doc["simulations"]
    if not sims:
        return "info" in doc or "tasks" in doc
    head = leading(sims, 5)
    return bool(head) and all(
        "task_id" in x and (isinstance(x.get("messages"), list) or isinstance(x.get("ticks"), list)) for x in head
    )


def thread_ids(entries: list[Any]) -> list[str]:
    """`task_id-trial` per entry, made unique in file order."""
    ids: list[str] = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(entries):
        base = f"{entry.get('task_id')}-{entry.get('trial', 0)}" if isinstance(entry, dict) else f"entry-{i}"
        seen[base] = seen.get(base, 0) + 1
        ids.append(base if seen[base] == 1 else f"{base}~{seen[base]}")
    return ids


def _first_line(text: Any) -> str:
    lines = text.strip().splitlines() if isinstance(text, str) else []
    return title_line(lines[0], TITLE_CHARS) if lines else ""


def _instruction(entry: dict[str, Any]) -> str:
    info = entry.get("info")
    task = info.get("task") if isinstance(info, dict) else None
    text = task.get("instruction") if isinstance(task, dict) else None
    if isinstance(text, str):
        return text
    # A run that crashed before its first turn says why instead.
    error = info.get("error") if isinstance(info, dict) else None
    return f"error: {error}" if isinstance(error, str) else ""


def _titled(reward: Any, head: str) -> str:
    if reward is None:
        return head
    return f"reward {reward}: {head}" if head else f"reward {reward}"


def _title(entry: dict[str, Any]) -> str:
    return _titled(entry.get("reward"), _first_line(_instruction(entry)))


# -- tau2-bench ---------------------------------------------------------------------------------


def _tau2_reward(sim: dict[str, Any]) -> Any:
    info = sim.get("reward_info")
    return info.get("reward") if isinstance(info, dict) else None


def _tau2_task_texts(doc: dict[str, Any]) -> dict[str, str]:
    """Per task id, the user's reason for calling (what a picker shows)."""
    out: dict[str, str] = {}
    tasks = doc.get("tasks")
    for task in tasks if isinstance(tasks, list) else []:
        if not isinstance(task, dict):
            continue
        scenario = task.get("user_scenario")
        instructions = scenario.get("instructions") if isinstance(scenario, dict) else None
        if isinstance(instructions, dict):
            instructions = instructions.get("reason_for_call") or instructions.get("task_instructions")
        if isinstance(instructions, str):
            out[str(task.get("id"))] = instructions
    return out


def _tau2_info(doc: dict[str, Any], section: str, key: str) -> str | None:
    """A string under `info.<section>.<key>`: the agent's model, the domain policy."""
    info = doc.get("info")
    node = info.get(section) if isinstance(info, dict) else None
    value = node.get(key) if isinstance(node, dict) else None
    return value if isinstance(value, str) and value else None


def _tick_messages(ticks: list[Any], where: Where, base: str) -> list[tuple[dict[str, Any], str]]:
    """A full-duplex run's ticks as messages, in tau2's own order: agent, its results, user, its results."""
    out: list[tuple[dict[str, Any], str]] = []
    for i, raw in enumerate(ticks):
        tick = where.want_dict(raw, f"{base}[{i}]", "a tick object")
        at = f"{base}[{i}]"
        for side, role in (("agent", "assistant"), ("user", "user")):
            chunk = tick.get(f"{side}_chunk")
            chunk = where.want_dict(chunk, f"{at}.{side}_chunk", "a message object") if chunk is not None else {}
            calls = tick.get(f"{side}_tool_calls") or None
            if chunk or calls:
                out.append(({**chunk, "role": role, "tool_calls": calls if calls else chunk.get("tool_calls")}, f"{at}.{side}_chunk"))
            results = tick.get(f"{side}_tool_results") or []
            for k, result in enumerate(where.want_list(results, f"{at}.{side}_tool_results")):
                result = where.want_dict(result, f"{at}.{side}_tool_results[{k}]", "a tool message object")
                out.append(({"requestor": role, **result, "role": "tool"}, f"{at}.{side}_tool_results[{k}]"))
    return out


def _flat_messages(sim: dict[str, Any], where: Where, base: str) -> list[tuple[dict[str, Any], str]]:
    """The simulation's messages with their JSON paths; a multi-tool turn becomes its tool messages."""
    raw = sim.get("messages")
    if not raw and isinstance(sim.get("ticks"), list):
        return _tick_messages(sim["ticks"], where, f"{base}.ticks")
    out: list[tuple[dict[str, Any], str]] = []
    for i, item in enumerate(where.want_list(raw, f"{base}.messages", "an array of messages")):
        at = f"{base}.messages[{i}]"
        item = where.want_dict(item, at, "a message object")
        if isinstance(item.get("tool_messages"), list):
            for k, inner in enumerate(item["tool_messages"]):
                out.append((where.want_dict(inner, f"{at}.tool_messages[{k}]", "a tool message object"), f"{at}.tool_messages[{k}]"))
        else:
            out.append((item, at))
    return out


class _Tau2Converter:
    """tau2 message dicts to OpenAI ones; calls without ids get stable ones, results pair in call order."""

    def __init__(self, where: Where, prefix: str) -> None:
        self.where = where
        self.prefix = prefix
        self.pending: list[str] = []  # assistant call ids still waiting for their result
        self.names: dict[str, str] = {}
        self.user_side: list[str] = []  # paths of the simulated user's own tool traffic

    def convert(self, item: dict[str, Any], at: str, position: int) -> dict[str, Any] | None:
        role = item.get("role")
        if role == "tool":
            return self._result(item, at, position)
        if role == "user" and item.get("tool_calls"):
            self.user_side.append(at)
            if not _has_text(item.get("content")):
                return None  # a pure user-side tool call: nothing of it reaches the agent
            return {"role": "user", "content": item.get("content")}
        out: dict[str, Any] = {k: item[k] for k in ("role", "content", "usage") if k in item}
        if role == "assistant" and item.get("tool_calls") is not None:
            calls = self.where.want_list(item["tool_calls"], f"{at}.tool_calls")
            out["tool_calls"] = [self._call(call, f"{at}.tool_calls[{k}]", f"{position}.{k}") for k, call in enumerate(calls)]
        return out

    def _call(self, raw: Any, at: str, position: str) -> dict[str, Any]:
        where = self.where
        call = where.want_dict(raw, at, "a tool call object")
        name = where.want_text(call.get("name"), f"{at}.name")
        arguments = call.get("arguments")
        if arguments is not None and not isinstance(arguments, (dict, str)):
            where.fail(f"{at}.arguments", f"expected an object, got {json_type(arguments)}")
        call_id = where.want_str(call.get("id"), f"{at}.id", optional=True) or stable_id(f"{self.prefix}-call", position, call)
        self.pending.append(call_id)
        self.names[call_id] = name
        return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}

    def _result(self, item: dict[str, Any], at: str, position: int) -> dict[str, Any] | None:
        if item.get("requestor") == "user":
            self.user_side.append(at)
            return None
        call_id = self.where.want_str(item.get("id"), f"{at}.id", optional=True)
        if call_id in self.pending:
            self.pending.remove(call_id)
        elif self.pending:
            call_id = self.pending.pop(0)  # results without ids answer the oldest open call
        if not call_id:
            call_id = stable_id(f"{self.prefix}-orphan", position, item)
        out: dict[str, Any] = {"role": "tool", "tool_call_id": call_id, "content": item.get("content")}
        if call_id in self.names:
            out["name"] = self.names[call_id]
        return out


def _has_text(content: Any) -> bool:
    return isinstance(content, str) and bool(content.strip())


class TauBenchImporter:
    name = FORMAT

    def sniff(self, source: Source) -> bool:
        return guarded_sniff(lambda s: is_results(parsed_if(s, b"[")) or is_tau2_results(parsed_if(s, b"{")), source)

    def _doc(self, source: Source, where: Where) -> tuple[Any, list[Any], str]:
        """The parsed file, its results and their JSON path (`$` for tau-bench, `$.simulations` for tau2)."""
        try:
            doc = source.json()
        except ThreadLoadError as exc:
            raise where.unparseable(exc) from None
        if isinstance(doc, dict):
            if not isinstance(doc.get("simulations"), list):
                where.fail(SIMULATIONS, "expected an array of tau-bench results or a tau2-bench object with 'simulations'")
            return doc, doc["simulations"], SIMULATIONS
        return doc, where.want_list(doc, "$", "an array of tau-bench results"), "$"

    def list_threads(self, source: Source) -> list[ThreadRef]:
        where = Where(source.label, FORMAT)
        doc, entries, base = self._doc(source, where)
        tau2_tasks = _tau2_task_texts(doc) if base == SIMULATIONS else {}
        refs = []
        for i, (tid, entry) in enumerate(zip(thread_ids(entries), entries, strict=True)):
            entry = where.want_dict(entry, f"{base}[{i}]", "a result object")
            if base == SIMULATIONS:
                title = _titled(_tau2_reward(entry), _first_line(tau2_tasks.get(str(entry.get("task_id")), "")))
                raw = entry.get("messages") or entry.get("ticks")
            else:
                title, raw = _title(entry), entry.get("traj")
            refs.append(ThreadRef(tid, title, len(raw) if isinstance(raw, list) else None))
        return refs

    def load(self, source: Source, thread_id: str | None) -> Thread:
        where = Where(source.label, FORMAT)
        doc, entries, base = self._doc(source, where)
        if not entries:
            where.fail(base, "the results array is empty" if base == "$" else "the run holds no simulations")
        ids = thread_ids(entries)
        if thread_id is None:
            index = 0
        elif thread_id in ids:
            index = ids.index(thread_id)
        else:
            shown = ", ".join(ids[:SHOWN_IDS]) + (f" … ({len(ids)} threads)" if len(ids) > SHOWN_IDS else "")
            raise ThreadNotFoundError(f"thread {thread_id!r} not found; threads: {shown}", path=source.label, format=FORMAT)
        entry = where.want_dict(entries[index], f"{base}[{index}]", "a result object")
        if base == SIMULATIONS:
            thread = self._simulation(doc, entry, ids[index], f"{base}[{index}]", where)
        else:
            thread = self._result(entry, ids[index], f"$[{index}]", where)
        thread.source_format = FORMAT
        return thread

    def _result(self, entry: dict[str, Any], tid: str, at: str, where: Where) -> Thread:
        traj = where.want_list(entry.get("traj"), f"{at}.traj", "an array of messages")
        reader = OpenAIMessageReader(where, id_prefix=f"{FORMAT}-{tid}")
        messages = reader.read_all(traj, f"{at}.traj")
        renamed = make_call_ids_unique(messages)
        extra: dict[str, Any] = {k: entry[k] for k in ("task_id", "trial", "reward", "info") if k in entry}
        extra.update(reader.extra)
        if renamed:
            extra["renamed_tool_call_ids"] = renamed
        return assemble(messages, reader.usage, thread_id=tid, title=_title(entry), extra=extra)

    def _simulation(self, doc: dict[str, Any], sim: dict[str, Any], tid: str, at: str, where: Where) -> Thread:
        prefix = f"{FORMAT}-{tid}"
        reader = OpenAIMessageReader(where, id_prefix=prefix)
        converter = _Tau2Converter(where, prefix)
        messages = []
        for position, (item, path) in enumerate(_flat_messages(sim, where, at)):
            converted = converter.convert(item, path, position)
            message = reader.read(converted, path, position) if converted is not None else None
            if message is None:
                continue
            if item.get("role") == "tool" and item.get("error") is True:
                message.status = "error"  # type: ignore[attr-defined]  # ToolMessage's own field
            messages.append(message)
        renamed = make_call_ids_unique(messages)
        extra: dict[str, Any] = {k: sim[k] for k in _TAU2_EXTRA if k in sim}
        extra["reward"] = _tau2_reward(sim)
        if converter.user_side:
            extra["user_side_messages"] = len(converter.user_side)
        if renamed:
            extra["renamed_tool_call_ids"] = renamed
        reason = _tau2_task_texts(doc).get(str(sim.get("task_id")), "")
        # The agent's system prompt is built from the domain policy, which the messages leave out.
        return assemble(messages, reader.usage, thread_id=tid, title=_titled(extra["reward"], _first_line(reason)),
                        model=_tau2_info(doc, "agent_info", "llm"), extra=extra,
                        system_prompt=_tau2_info(doc, "environment_info", "policy"))


IMPORTER = TauBenchImporter()
