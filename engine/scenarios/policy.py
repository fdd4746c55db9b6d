"""The scenario model: a deterministic chat model that decides its next tool call from what it sees.

`PolicyChatModel` is a real LangChain `BaseChatModel` (with `bind_tools` returning itself, as
`create_agent` requires). At each call it parses the request it received — the messages after every
layer rewrote them — into `Seen` (the task, the tool calls and their results, summaries, reminders,
memory in the system prompt) and asks its `Policy` for the next move. Policies are plain classes
with a seeded `random.Random`, so the same seed always gives the same thread, while what the
agent does still follows from what it could see (a summary or an offloaded result changes it).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict, PrivateAttr

from engine.thread.kinds import message_kind
from engine.tokens.content import message_text

STUB_PATH = re.compile(r"(/large_tool_results/[A-Za-z0-9_\-.]+)")
LS_LINE = re.compile(r"^(/\S+?)(/)?(?: \((\d+) lines\))?$")


@dataclass
class SeenCall:
    """A tool call visible in the request, with its result when that is visible too."""

    name: str
    args: dict[str, Any]
    id: str
    result: str | None = None
    status: str = "success"


@dataclass
class Seen:
    """What the model could see in one request."""

    system: str
    humans: list[str]  # original human messages (not summaries or reminders), in order
    summaries: list[str]
    reminders: list[str]
    calls: list[SeenCall]
    ai_texts: list[str]

    @classmethod
    def parse(cls, messages: Sequence[BaseMessage]) -> Seen:
        results = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
        system, humans, summaries, reminders, calls, ai_texts = "", [], [], [], [], []
        for m in messages:
            kind = message_kind(m)
            if isinstance(m, SystemMessage):
                system += message_text(m)
            elif isinstance(m, HumanMessage):
                text = message_text(m)
                if kind == "summary":
                    summaries.append(text)
                elif kind == "reminder" or "<system_reminder>" in text:
                    reminders.append(text)
                elif kind == "memory":
                    system += "\n" + text
                else:
                    humans.append(text)
            elif isinstance(m, AIMessage):
                if message_text(m).strip():
                    ai_texts.append(message_text(m))
                for tc in m.tool_calls:
                    res = results.get(tc.get("id") or "")
                    calls.append(SeenCall(tc["name"], dict(tc.get("args") or {}), tc.get("id") or "",
                                          message_text(res) if res is not None else None,
                                          getattr(res, "status", "success") if res is not None else "missing"))
        return cls(system, humans, summaries, reminders, calls, ai_texts)

    # -- queries the policies ask --------------------------------------------------------------
    @property
    def task(self) -> str:
        return self.humans[0] if self.humans else (self.summaries[0] if self.summaries else "")

    @property
    def last_human(self) -> str:
        return self.humans[-1] if self.humans else ""

    def calls_named(self, *names: str) -> list[SeenCall]:
        return [c for c in self.calls if c.name in names]

    def all_text(self) -> str:
        """Everything visible, for facts the policy looks for (a codename, a memory)."""
        parts = [self.system, *self.humans, *self.summaries, *self.reminders, *self.ai_texts]
        for c in self.calls:
            parts.append(" ".join(str(v) for v in c.args.values()))
            if c.result:
                parts.append(c.result)
        return "\n".join(parts)

    def listed_files(self) -> dict[str, int | None]:
        """Files seen in ls/glob results, with their line count when ls showed it."""
        out: dict[str, int | None] = {}
        for c in self.calls_named("ls", "glob"):
            for line in (c.result or "").splitlines():
                m = LS_LINE.match(line.strip())
                if m and not m.group(2):
                    out[m.group(1)] = int(m.group(3)) if m.group(3) else out.get(m.group(1))
        return out

    def listed_dirs(self) -> list[str]:
        out = []
        for c in self.calls_named("ls"):
            for line in (c.result or "").splitlines():
                if line.strip().endswith("/"):
                    out.append(line.strip())
        return out

    def read_paths(self) -> set[str]:
        """Files whose content the model has seen (read_file, or `cat` through execute)."""
        out = {str(c.args.get("file_path")) for c in self.calls_named("read_file") if c.result is not None}
        for c in self.calls_named("execute"):
            cmd = str(c.args.get("command", ""))
            if cmd.startswith("cat ") and c.result is not None:
                out.update(cmd.split()[1:])
        return out

    def stub_paths(self) -> list[str]:
        """Offloaded results the model was pointed to (the filesystem layer's stubs)."""
        out: list[str] = []
        for c in self.calls:
            for p in STUB_PATH.findall(c.result or ""):
                if p not in out:
                    out.append(p)
        return out

    def todos(self) -> list[dict[str, str]] | None:
        """The todo list as last visible: a write_todos call, else a reminder, else None."""
        todo_calls = self.calls_named("write_todos")
        if todo_calls:
            return [dict(t) for t in todo_calls[-1].args.get("todos", [])]
        for text in reversed(self.reminders):
            items = re.findall(r"^- \[(pending|in_progress|completed)\] (.+)$", text, re.M)
            if items:
                return [{"content": c, "status": s} for s, c in items]
        return None


@dataclass
class Move:
    """What a policy decided: optional text and tool calls (name, args)."""

    text: str = ""
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


class Policy(Protocol):
    def decide(self, seen: Seen, step: int, rng: random.Random) -> Move: ...


class PolicyChatModel(BaseChatModel):
    """A scripted chat model: `policy.decide(Seen.parse(request), step, rng)` at every call.

    Ids are deterministic: AI message `{prefix}ai-{step}`, tool call `{prefix}call-{step}-{k}`.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    policy: Any
    seed: int = 0
    id_prefix: str = ""
    model_label: str = "scenario"
    _step: int = PrivateAttr(default=0)
    _rng: random.Random = PrivateAttr()

    def model_post_init(self, __context: Any) -> None:
        # a str seed is hashed with sha512 by random, so it is stable across processes
        self._rng = random.Random(f"{self.seed}:{self.id_prefix}")

    @property
    def _llm_type(self) -> str:
        return "ctxi-scenario"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model": self.model_label}

    def bind_tools(self, tools: Any, **kwargs: Any) -> PolicyChatModel:
        return self

    @property
    def steps(self) -> int:
        return self._step

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        step = self._step
        self._step += 1
        move = self.policy.decide(Seen.parse(messages), step, self._rng)
        calls = [{"name": name, "args": args, "id": f"{self.id_prefix}call-{step}-{k}", "type": "tool_call"}
                 for k, (name, args) in enumerate(move.calls)]
        message = AIMessage(content=move.text, tool_calls=calls, id=f"{self.id_prefix}ai-{step}")
        return ChatResult(generations=[ChatGeneration(message=message)])
