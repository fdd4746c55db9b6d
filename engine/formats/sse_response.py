"""A model response recorded as it streamed (server-sent events): one AI message and its usage.

Test fixtures and HTTP recordings keep streamed responses as their SSE body or one JSON chunk a line
(the Vercel AI SDK's `__fixtures__/*.chunks.txt`); `engine/formats/sse.py` assembles them into the
response the provider would have returned whole (Anthropic Messages, OpenAI Chat Completions, OpenAI
Responses), which then loads as that provider's response alone does: a thread of one model call,
whose request is not in the file (its input tokens, when the stream reported them, are the whole
prompt: calibration shows them as unrecorded prompt). `extra["streamed"]` names the provider and the
number of chunks.
"""

from __future__ import annotations

from typing import Any

from engine.base.errors import ThreadLoadError
from engine.formats import sse
from engine.formats.jsonshape import SingleThreadImporter, Where, check_thread_id, guarded_sniff
from engine.formats.source import Source
from engine.thread.model import Thread

FORMAT = "sse_response"
SNIFF_BYTES = 64 * 1024
_BUILDERS = {"anthropic": "anthropic", "openai_chat": "openai_chat", "openai_responses": "openai_responses"}


def _stream(source: Source, head_only: bool = False) -> list[dict[str, Any]] | None:
    if not head_only:
        return sse.chunks(source.text())  # empty, binary or not UTF-8: the Source's own one-line errors
    if source.is_sqlite():
        return None
    text = source.data[:SNIFF_BYTES].decode("utf-8-sig", errors="ignore")
    if len(source.data) > SNIFF_BYTES:
        text = text[: text.rfind("\n")] if "\n" in text else ""
    return sse.chunks(text)


def sniff(source: Source) -> bool:
    items = _stream(source, head_only=True)
    return bool(items) and sse.provider_of(items) is not None  # type: ignore[arg-type]


class SseResponseImporter(SingleThreadImporter):
    name = FORMAT

    def sniff(self, source: Source) -> bool:
        return guarded_sniff(sniff, source)

    def load(self, source: Source, thread_id: str | None) -> Thread:
        from engine.formats import importers

        where = Where(source.label, FORMAT)
        items = _stream(source)
        if not items:
            raise ThreadLoadError("not a streamed response: expected `data:` lines or one JSON chunk a line",
                                  path=source.label, format=FORMAT)
        done = sse.assembled(items)
        if done is None:
            where.fail("line 1", "these chunks are no Anthropic, OpenAI Chat Completions or Responses stream")
        provider, response = done
        thread = importers()[_BUILDERS[provider]].build(response, source, where)  # type: ignore[attr-defined]
        thread.source_format = FORMAT
        thread.extra["streamed"] = {"provider": provider, "chunks": len(items)}
        return check_thread_id(thread, thread_id, where)


IMPORTER = SseResponseImporter()
