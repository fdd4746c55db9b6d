"""Scripts as JSON files: a reviewer's own differential cases (docs/config.md, "Your own scripts").

One script is one JSON object (a `.json` file, or one line of a `.jsonl` file). Messages are plain
dicts a person can write: a human message is its text (or `{"content", "id"}`), an AI message is
`{"content", "tool_calls": [{"name", "args", "id"}], ...}` with LangChain's field names, a tool result
is its text (or `{"content", "name", "id", "status"}`); LangChain's `messages_to_dict` form
(`{"type": "ai", "data": {...}}`) is accepted too. `load_scripts` validates everything the harness
relies on and raises `ScriptError`, one line naming the file and the field, never a traceback from
inside a framework. script_write.py writes a `Script` back in the same form (`--write`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from tests.differential.scripts import CUSTOM_TOOLS, TASK_PREFIX, Script, Turn

FORMAT = "ctxi-differential-script/1"
ENV = "CTXI_DIFF_SCRIPTS"
# What each agent can call besides the project's tools (CUSTOM_TOOLS). LangChain's create_agent has
# only the tools it is given; DeerFlow's TodoMiddleware adds write_todos (LangChain's
# TodoListMiddleware, which it subclasses); create_deep_agent 0.7.32 binds these (its filesystem
# middleware and the task tool; the list the scripted model is sent).
BUILT_IN: dict[str, tuple[str, ...]] = {
    "langchain": (),
    "deerflow": ("write_todos",),
    "deepagents": ("ls", "read_file", "write_file", "edit_file", "delete", "glob", "grep", "task"),
}
FRAMEWORKS = ("langchain", "deepagents", "deerflow:v2.0-m0", "deerflow:head")
KNOWN_TOOLS = frozenset(CUSTOM_TOOLS) | {t for tools in BUILT_IN.values() for t in tools}
# The settings each harness reads from `params`, with the value it uses when a key is absent.
PARAM_DEFAULTS: dict[str, dict[str, Any]] = {
    # LangChain 1.5 SummarizationMiddleware.__init__: trigger=None, keep=("messages", 20),
    # trim_tokens_to_summarize=4000 (null: no trimming)
    "langchain": {"trigger": None, "keep": ("messages", 20), "trim": 4000},
    # DeerFlow's summarization config (deerflow.md; engine.config.sections.SummarizationConfig mirrors it):
    # trigger null, keep messages 20; trim null = not set, so the middleware's own default applies
    "deerflow": {"trigger": None, "keep": ("messages", 20), "trim": None},
    # create_deep_agent() as a new user calls it: no setting is drawn, the default stack runs
    "deepagents": {},
}


class ScriptError(ValueError):
    """A script file the harness cannot play: one line naming the file and the field."""


def _unwrap(kind: str) -> Any:
    """Accept LangChain's messages_to_dict form ({"type": ..., "data": {...}}) as the plain form."""
    def unwrap(v: Any) -> Any:
        if isinstance(v, dict) and set(v) == {"type", "data"} and isinstance(v["data"], dict):
            if v["type"] != kind:
                raise ValueError(f"a {v['type']!r} message where a {kind!r} message belongs")
            return {k: x for k, x in v["data"].items() if k != "type"}
        return v
    return BeforeValidator(unwrap)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ToolCallIn(_Model):
    name: str
    args: dict[str, Any] = {}
    id: str = Field(min_length=1)
    type: Literal["tool_call"] = "tool_call"


class AIIn(_Model):
    content: str | list[dict[str, Any] | str] = ""
    id: str | None = None
    tool_calls: list[ToolCallIn] = []
    invalid_tool_calls: list[dict[str, Any]] = []
    usage_metadata: dict[str, Any] | None = None
    response_metadata: dict[str, Any] = {}
    additional_kwargs: dict[str, Any] = {}
    name: str | None = None


class HumanIn(_Model):
    content: str | list[dict[str, Any] | str]
    id: str | None = None


class ResultIn(_Model):
    content: str | list[dict[str, Any] | str]
    name: str | None = None
    id: str | None = None
    status: Literal["success", "error"] = "success"
    tool_call_id: str | None = None  # accepted from messages_to_dict; must equal the key


AI = Annotated[AIIn, _unwrap("ai")]
Kind = Literal["messages", "tokens", "fraction"]
Size = tuple[Kind, Annotated[int | float, Field(gt=0)]]


class TurnIn(_Model):
    human: Annotated[str | HumanIn, _unwrap("human")]
    replies: list[AI] = Field(min_length=1)
    interrupted: bool = False


class ParamsIn(_Model):
    trigger: Size | dict[Kind, Annotated[int | float, Field(gt=0)]] | list[Size] | None = None
    keep: Size | None = None
    trim: int | None = Field(default=None, gt=0)


class ScriptIn(_Model):
    format: Literal["ctxi-differential-script/1"] = FORMAT
    name: str | None = None
    seed: int = 0
    frameworks: list[Literal["langchain", "deepagents", "deerflow", "deerflow:v2.0-m0", "deerflow:head"]] | None = None
    window: int = Field(gt=0)
    system_prompt: str
    turns: list[TurnIn] = Field(min_length=1)
    results: dict[str, Annotated[str | ResultIn, _unwrap("tool")]] = {}
    params: ParamsIn = ParamsIn()
    subagents: dict[str, list[AI]] = {}


def _loc(loc: Iterable[Any]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("str", "HumanIn", "ResultIn", "list[...]") or str(part).startswith(("tuple[", "dict[", "list[", "function-")):
            continue  # pydantic's name for a union branch, not a field
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def _ai(m: AIIn, default_id: str, where: str) -> AIMessage:
    extra: dict[str, Any] = {}
    if m.usage_metadata is not None:
        extra["usage_metadata"] = m.usage_metadata
    try:
        return AIMessage(content=m.content, id=m.id or default_id, tool_calls=[c.model_dump() for c in m.tool_calls],
                         invalid_tool_calls=m.invalid_tool_calls, response_metadata=m.response_metadata,
                         additional_kwargs=m.additional_kwargs, name=m.name, **extra)
    except ValidationError as e:  # e.g. usage_metadata or invalid_tool_calls without their keys
        first = e.errors()[0]
        raise ValueError(f"{where}.{_loc(first['loc'])}", first["msg"]) from None


def _check(s: ScriptIn, turns: list[Turn], subagents: dict[str, list[AIMessage]]) -> None:
    """What the harness relies on, named by field (raises ValueError(field, reason))."""
    calls: dict[str, tuple[str, str]] = {}  # call id -> (tool name, field)
    ai_ids: dict[str, str] = {}

    def see(where: str, reply: AIMessage, *, lane: str) -> None:
        if reply.id in ai_ids:
            raise ValueError(f"{where}.id", f"{reply.id!r} is also the id of {ai_ids[reply.id]}")
        ai_ids[str(reply.id)] = where
        for j, c in enumerate(reply.tool_calls):
            at = f"{where}.tool_calls[{j}]"
            if c["name"] not in KNOWN_TOOLS:
                raise ValueError(f"{at}.name", f"{c['name']!r} is no agent's tool (the project's: "
                                 f"{', '.join(CUSTOM_TOOLS)}; built in: {', '.join(sorted(KNOWN_TOOLS - set(CUSTOM_TOOLS)))})")
            if c["id"] in calls:
                raise ValueError(f"{at}.id", f"{c['id']!r} is also the id of {calls[c['id']][1]}")
            calls[c["id"]] = (c["name"], at)
            # the scripted model tells whose turn it is by ids (harness.lane_of)
            if lane == "main" and ".s" in c["id"]:
                raise ValueError(f"{at}.id", "a main-agent call id may not contain '.s' (that marks a sub-agent's call)")
            if lane != "main" and not c["id"].startswith(f"{lane}.s"):
                raise ValueError(f"{at}.id", f"a sub-agent's call id must start with '{lane}.s'")
            if c["name"] == "task":
                if lane != "main":
                    raise ValueError(f"{at}.name", "a sub-agent cannot call task here (the general-purpose sub-agent has no task tool)")
                description = str(c["args"].get("description", ""))
                if not description.startswith(f"{TASK_PREFIX}{c['id']}:"):
                    raise ValueError(f"{at}.args.description", f"must start with '{TASK_PREFIX}{c['id']}:' (the sub-agent's "
                                     "first message; how the scripted model knows whose turn it is)")
                if c["id"] not in subagents:
                    raise ValueError(f"{at}.id", f"a task call needs subagents[{c['id']!r}] (the sub-agent's replies)")

    for t, turn in enumerate(turns):
        for k, reply in enumerate(turn.replies):
            see(f"turns[{t}].replies[{k}]", reply, lane="main")
    for cid, replies in subagents.items():
        if calls.get(cid, ("",))[0] != "task":
            raise ValueError(f"subagents.{cid}", "no task call has this id")
        if not replies:
            raise ValueError(f"subagents.{cid}", "a sub-agent needs at least one reply")
        for k, reply in enumerate(replies):
            see(f"subagents.{cid}[{k}]", reply, lane=cid)
        if replies[-1].tool_calls:
            raise ValueError(f"subagents.{cid}[{len(replies) - 1}].tool_calls", "a sub-agent's last reply answers (no tool calls)")
    for cid in s.results:
        if cid not in calls:
            raise ValueError(f"results.{cid}", "no tool call has this id")
        if calls[cid][0] not in CUSTOM_TOOLS:
            raise ValueError(f"results.{cid}", f"{calls[cid][0]} is a built-in tool: the framework makes its result")
    stops = {c["id"] for t in turns if t.interrupted for c in t.replies[-1].tool_calls}
    for t, turn in enumerate(turns):
        if turn.interrupted:
            last = turn.replies[-1]
            at = f"turns[{t}].replies[{len(turn.replies) - 1}].tool_calls"
            if not last.tool_calls or any(c["name"] not in CUSTOM_TOOLS for c in last.tool_calls):
                raise ValueError(at, f"an interrupted turn ends with calls to the project's tools ({', '.join(CUSTOM_TOOLS)}) "
                                 "that never return")
            if any(c["id"] in s.results for c in last.tool_calls):
                raise ValueError(at, "an interrupted turn's last calls have no results (the run stops before they return)")
    for cid, (name, at) in calls.items():
        if name in CUSTOM_TOOLS and cid not in s.results and cid not in stops:
            raise ValueError(f"{at}.id", f"no results[{cid!r}] (only an interrupted turn's last calls go unanswered)")


def _script(s: ScriptIn, default_name: str) -> Script:
    turns: list[Turn] = []
    for t, tin in enumerate(s.turns):
        h = tin.human if isinstance(tin.human, HumanIn) else HumanIn(content=tin.human)
        turns.append(Turn(HumanMessage(content=h.content, id=h.id or f"h{t}"),
                          [_ai(r, f"a{t}-{k}", f"turns[{t}].replies[{k}]") for k, r in enumerate(tin.replies)], tin.interrupted))
    subagents = {cid: [_ai(r, f"{cid}.a{k}", f"subagents.{cid}[{k}]") for k, r in enumerate(rs)] for cid, rs in s.subagents.items()}
    _check(s, turns, subagents)
    names = {c["id"]: c["name"] for t in turns for r in t.replies for c in r.tool_calls}
    names.update({c["id"]: c["name"] for rs in subagents.values() for r in rs for c in r.tool_calls})
    results: dict[str, ToolMessage] = {}
    for cid, rin in s.results.items():
        r = rin if isinstance(rin, ResultIn) else ResultIn(content=rin)
        if r.tool_call_id not in (None, cid):
            raise ValueError(f"results.{cid}.tool_call_id", "differs from its key")
        results[cid] = ToolMessage(content=r.content, tool_call_id=cid, name=r.name or names[cid], id=r.id or f"t-{cid}",
                                   status=r.status)
    params = {k: getattr(s.params, k) for k in s.params.model_fields_set}
    frameworks = tuple(s.frameworks) if s.frameworks is not None else None
    return Script(s.seed, s.window, s.system_prompt, turns, results, params, subagents,
                  name=s.name or ("" if "seed" in s.model_fields_set else default_name), frameworks=frameworks)


def parse_script(doc: Any, *, where: str, default_name: str) -> Script:
    try:
        validated = ScriptIn.model_validate(doc)
    except ValidationError as e:
        first = e.errors()[0]
        more = f" (and {e.error_count() - 1} more)" if e.error_count() > 1 else ""
        raise ScriptError(f"{where}: {_loc(first['loc'])}: {first['msg']}{more}") from None
    try:
        return _script(validated, default_name)
    except ValueError as e:
        field, reason = e.args if len(e.args) == 2 else ("(top level)", str(e))
        raise ScriptError(f"{where}: {field}: {reason}") from None


def load_file(path: Path) -> list[Script]:
    """The scripts in one .json (one script) or .jsonl (one a line) file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ScriptError(f"{path}: cannot read: {e}") from None
    docs: list[tuple[str, str, Any]] = []
    lines = [(i, line) for i, line in enumerate(text.splitlines(), 1) if line.strip()] if path.suffix == ".jsonl" else [(0, text)]
    for i, line in lines:
        where = f"{path}:{i}" if i else str(path)
        try:
            docs.append((where, f"{path.stem}-{i}" if i else path.stem, json.loads(line)))
        except json.JSONDecodeError as e:
            raise ScriptError(f"{where}: not JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    return [parse_script(doc, where=where, default_name=name) for where, name, doc in docs]


def load_scripts(path: Path) -> list[Script]:
    """A file, or every .json / .jsonl file in a folder (sorted by name, not recursive)."""
    files = sorted(p for p in path.iterdir() if p.suffix in (".json", ".jsonl")) if path.is_dir() else [path]
    if not files:
        raise ScriptError(f"{path}: no .json or .jsonl script files in this folder")
    return [s for f in files for s in load_file(f)]


def unsuited(script: Script, framework: str) -> str | None:
    """Why `framework` ("langchain", "deepagents", "deerflow:<version>") cannot play `script`, or None."""
    family = framework.split(":")[0]
    if script.frameworks is not None and framework not in script.frameworks and family not in script.frameworks:
        return f"frameworks is {list(script.frameworks)}"
    tools = set(CUSTOM_TOOLS) | set(BUILT_IN[family])
    for r in script.replies() + [r for rs in script.subagents.values() for r in rs]:
        for c in r.tool_calls:
            if c["name"] not in tools:
                return f"calls {c['name']}, which {family} has not"
    if family == "deepagents" and script.params:
        return f"{family} reads no params (given: {', '.join(sorted(script.params))})"
    if family == "deerflow" and isinstance(script.params.get("trigger"), dict):
        return "DeerFlow's trigger is one size or a list (OR), not an AND dict"
    return None


def user_scripts(framework: str) -> tuple[list[Script], list[tuple[str, str]]] | None:
    """The scripts of $CTXI_DIFF_SCRIPTS this framework plays, and why the others are left out;
    None when the variable is unset (the generated scripts play). A missing path skips the test; a
    malformed file fails it with the one line `ScriptError` gives."""
    value = os.environ.get(ENV)
    if not value:
        return None
    path = Path(value)
    if not path.exists():
        pytest.skip(f"{ENV}={value}: no such file or folder")
    try:
        scripts = load_scripts(path)
    except ScriptError as e:
        pytest.fail(str(e), pytrace=False)
    played: list[Script] = []
    left: list[tuple[str, str]] = []
    for s in scripts:
        why = unsuited(s, framework)
        if why is None:
            played.append(s)
        else:
            left.append((s.thread_id, why))
    return played, left


def scripts_for(framework: str, chunk: int, chunks: int, generate: Any) -> tuple[list[Script], str | None]:
    """What one chunk of a framework's test plays: the generated scripts (`generate()`), or, when
    $CTXI_DIFF_SCRIPTS is set, its share of the file scripts that framework suits (instead of the
    generated ones), with a note for the report naming the ones left out and why."""
    found = user_scripts(framework)
    if found is None:
        return generate(), None
    played, left = found
    mine = played[chunk::chunks]
    reasons: dict[str, list[str]] = {}
    for name, why in left:
        reasons.setdefault(why, []).append(name)
    note = (f"{ENV}={os.environ[ENV]}: {len(played)} script(s) suit {framework}, {len(mine)} in this chunk"
            + "".join(f"\n  left out {len(names)}: {why} (e.g. {names[0]})" for why, names in reasons.items()))
    if not mine:
        pytest.skip(note.replace("\n  ", "; "))
    return mine, note


__all__ = ["ENV", "FORMAT", "FRAMEWORKS", "PARAM_DEFAULTS", "ScriptError", "load_file", "load_scripts",
           "parse_script", "scripts_for", "unsuited", "user_scripts"]
