"""tau-bench results: an array of `{task_id, trial, reward, info, traj}`, one thread per entry.

`traj` is an OpenAI message list (system policy, simulated user, assistant with `tool_calls`,
`{role: "tool", tool_call_id, name, content}`) without usage. Thread ids are
`f"{task_id}-{trial}"`; a repeated pair gets `~2`, `~3`… in file order, so ids stay unique and
stable. Without `--thread` the first entry is loaded. `reward` and `info` (task, reward_info,
user_cost) go to `thread.extra`.
"""

from __future__ import annotations

from typing import Any

from engine.errors import ThreadLoadError, ThreadNotFoundError
from engine.formats.callids import make_call_ids_unique
from engine.formats.jsonshape import Where, assemble, guarded_sniff, leading, parsed_if
from engine.formats.openai_messages import OpenAIMessageReader
from engine.formats.source import Source, ThreadRef
from engine.thread import Thread

FORMAT = "tau_bench"
TITLE_CHARS = 72
SHOWN_IDS = 5


def is_results(doc: Any) -> bool:
    if not isinstance(doc, list) or not doc:
        return False
    head = leading(doc, 5)
    return bool(head) and all("task_id" in x and isinstance(x.get("traj"), list) for x in head)


def thread_ids(entries: list[Any]) -> list[str]:
    """`task_id-trial` per entry, made unique in file order."""
    ids: list[str] = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(entries):
        base = f"{entry.get('task_id')}-{entry.get('trial', 0)}" if isinstance(entry, dict) else f"entry-{i}"
        seen[base] = seen.get(base, 0) + 1
        ids.append(base if seen[base] == 1 else f"{base}~{seen[base]}")
    return ids


def _instruction(entry: dict[str, Any]) -> str:
    info = entry.get("info")
    task = info.get("task") if isinstance(info, dict) else None
    text = task.get("instruction") if isinstance(task, dict) else None
    return text if isinstance(text, str) else ""


def _title(entry: dict[str, Any]) -> str:
    reward = entry.get("reward")
    first = _instruction(entry).strip().splitlines()
    head = first[0][:TITLE_CHARS] if first else ""
    return f"reward {reward}: {head}" if reward is not None else head


class TauBenchImporter:
    name = FORMAT

    def sniff(self, source: Source) -> bool:
        return guarded_sniff(lambda s: is_results(parsed_if(s, b"[")), source)

    def _entries(self, source: Source, where: Where) -> list[Any]:
        try:
            doc = source.json()
        except ThreadLoadError as exc:
            raise where.unparseable(exc) from None
        return where.want_list(doc, "$", "an array of tau-bench results")

    def list_threads(self, source: Source) -> list[ThreadRef]:
        where = Where(source.label, FORMAT)
        entries = self._entries(source, where)
        refs = []
        for i, (tid, entry) in enumerate(zip(thread_ids(entries), entries, strict=True)):
            entry = where.want_dict(entry, f"$[{i}]", "a result object")
            traj = entry.get("traj")
            refs.append(ThreadRef(tid, _title(entry), len(traj) if isinstance(traj, list) else None))
        return refs

    def load(self, source: Source, thread_id: str | None) -> Thread:
        where = Where(source.label, FORMAT)
        entries = self._entries(source, where)
        if not entries:
            where.fail("$", "the results array is empty")
        ids = thread_ids(entries)
        if thread_id is None:
            index = 0
        elif thread_id in ids:
            index = ids.index(thread_id)
        else:
            shown = ", ".join(ids[:SHOWN_IDS]) + (f" … ({len(ids)} threads)" if len(ids) > SHOWN_IDS else "")
            raise ThreadNotFoundError(f"thread {thread_id!r} not found; threads: {shown}", path=source.label, format=FORMAT)
        entry = where.want_dict(entries[index], f"$[{index}]", "a result object")
        traj = where.want_list(entry.get("traj"), f"$[{index}].traj", "an array of messages")
        reader = OpenAIMessageReader(where, id_prefix=f"{FORMAT}-{ids[index]}")
        messages = reader.read_all(traj, f"$[{index}].traj")
        renamed = make_call_ids_unique(messages)
        extra: dict[str, Any] = {k: entry[k] for k in ("task_id", "trial", "reward", "info") if k in entry}
        extra.update(reader.extra)
        if renamed:
            extra["renamed_tool_call_ids"] = renamed
        thread = assemble(messages, reader.usage, thread_id=ids[index], title=_title(entry), extra=extra)
        thread.source_format = FORMAT
        return thread


IMPORTER = TauBenchImporter()
