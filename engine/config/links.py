"""What a dashboard link may say: a link is data, never authority over the server.

A link (the dashboard's query string) is something anyone can send to the person running the
dashboard, so it may only choose what that person could click to: a bundled sample, a page, a step,
a preset, and the replay settings of the sidebar and the Config form. It never names a file, a
folder, a model or an endpoint: those reach the server's disk, its network or its API keys, and
stay the user's own choice on the page (see SECURITY.md).

`LINK_SETTINGS` is an allow-list: a config key that is not on it — including any key added later —
is refused from a link, with one notice, and dropped from the URL.
"""

from __future__ import annotations

import re
from pathlib import Path

# Query parameters that are not config keys: the view itself (the Workshop's lesson, presenter mode
# and slide, and Compare sessions' second thread `vs`, under the same rules as `thread`: they only
# choose what is shown), and Streamlit's own embed flags.
VIEW_PARAMS = frozenset({"thread", "step", "preset", "tab", "lesson", "presenter", "slide", "vs", "embed",
                         "embed_options"})

# The settings a link may carry: exactly the sidebar's controls and the Config form's fields that
# only change how the replay computes (thresholds, switches, limits, prompt text counted as text).
LINK_SETTINGS: frozenset[str] = frozenset({
    # sidebar
    "order", "summarization.trigger", "summarization.keep", "summarization.mode", "model.max_input_tokens",
    "tokens.counter", *(f"{layer}.enabled" for layer in
                        ("filesystem", "subagents", "summarization", "todo", "dangling", "memory")),
    # Config form: L2 summarization
    "summarization.trim_tokens_to_summarize", "summarization.summary_prompt", "summarization.overflow_fallback",
    "summarization.skill_file_read_tool_names", "summarization.style",
    # L0 filesystem
    "filesystem.tool_result_token_limit", "filesystem.excluded_tools", "filesystem.truncate_args.enabled",
    "filesystem.truncate_args.trigger", "filesystem.truncate_args.keep", "filesystem.truncate_args.max_length",
    "filesystem.truncate_args.truncation_text", "filesystem.truncate_args.tools", "filesystem.human_message_token_limit",
    # L1 sub-agents, L4 dangling calls
    "subagents.max_concurrent", "subagents.max_total", "subagents.task_tool_names",
    "dangling.style", "dangling.drop_orphans", "todo.style", "todo.system_prompt", "todo.tool",
    # L5 memory (facts are prompt text; the files come from the thread, never from disk)
    "memory.facts", "memory.max_injection_tokens",
    # prompt assembly and the model's window
    "input_context.custom_prompt", "input_context.base_prompt", "input_context.tool_prompts",
    "input_context.skills", "input_context.agent_tools", "model.name", "model.max_output_tokens", "model.thinking", "model.provider",
    # the as-recorded baseline and the coding-agent compaction policies
    "tokens.calibrate", "tokens.layer_counter", "recorded.enabled", "recorded.compactions", "recorded.edits",
    "compaction.enabled", "compaction.policy", "compaction.trigger", "compaction.restore_files",
    "compaction.restore_file_tokens", "compaction.restore_budget_tokens", "compaction.keep", "compaction.keep_first",
    "compaction.tool_output_tokens",
    # the cost model (a model name here is only looked up in the price table, never called)
    "cost.cache", "cost.cache_ttl", "cost.model",
    # clearing old tool results (numbers, tool names and placeholder text counted as text)
    *(f"context_editing.{k}" for k in ("enabled", "style", "trigger", "idle_minutes", "keep", "keep_tokens",
                                       "clear_at_least", "exclude_tools", "only_tools", "clear_tool_inputs",
                                       "placeholder", "keep_thinking_turns")),
})

# Settings the Config form edits that a link may not: why, in the words of the refusal notice.
REFUSED_SETTINGS: dict[str, str] = {
    "memory.workspace": "it is a folder on the server's disk",
    "memory.sources": "it names files",
    "summarization.history_dir": "it names a folder",
    "summarization.summarizer": "it names a model, which would be called with the server's API key",
    "summarization.model_name": "it names a model",
    "compaction.summarizer": "it names a model, which would be called with the server's API key",
    "cost.prices": "prices come from the price table or your own config, not from whoever sent the link",
    "middleware": "it names Python code, which would be imported and run on the server",
}

# Config keys that are no setting at all, so never from a link either: the file's schema version
# (`preset` is a config key too, and a view parameter above: a link may choose one).
NOT_SETTINGS: frozenset[str] = frozenset({"version"})

# A sample is named by its file's stem: letters, digits, dot, dash, underscore; no separators.
_SAMPLE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,199}")


# Thread keys a link may carry besides `sample:NAME`: a library entry by its content address (see
# engine/workspace/library.py), and a sub-agent transcript of a thread a link may open, by the id of the Task
# call that spawned it. Neither names a path: an entry id is hex digits only, and a sub-agent is
# looked up in its parent's `subagents` dict, never on disk.
LIBRARY_PREFIX = "library:"
SUBAGENT_PREFIX = "sub:"
LIBRARY_ID_LENGTH = 24
MAX_THREAD_KEY_CHARS = 1000
_LIBRARY_ID = re.compile(rf"[0-9a-f]{{{LIBRARY_ID_LENGTH}}}")
_TOOL_CALL_ID = re.compile(r"[A-Za-z0-9_.:-]{1,200}")


def valid_library_id(entry_id: str) -> bool:
    """Exactly 24 lowercase hex digits: no separator, no dot, nothing a path could hide in."""
    return bool(_LIBRARY_ID.fullmatch(entry_id))


def library_id(key: str) -> str | None:
    """The entry id a `library:<id>` key names, or None when the key is anything else."""
    if not key.startswith(LIBRARY_PREFIX):
        return None
    entry_id = key[len(LIBRARY_PREFIX):]
    return entry_id if valid_library_id(entry_id) else None


def subagent_key(tool_call_id: str, parent_key: str) -> str:
    return f"{SUBAGENT_PREFIX}{tool_call_id}@{parent_key}"


def split_subagent_key(key: str) -> tuple[str, str] | None:
    """(Task call id, parent thread key) of a `sub:<call id>@<parent key>` key, or None."""
    if not key.startswith(SUBAGENT_PREFIX) or len(key) > MAX_THREAD_KEY_CHARS:
        return None
    call_id, sep, parent = key[len(SUBAGENT_PREFIX):].partition("@")
    if not sep or not parent or not _TOOL_CALL_ID.fullmatch(call_id):
        return None
    return call_id, parent


def link_setting_allowed(key: str) -> bool:
    return key in LINK_SETTINGS


def refusal(key: str) -> str:
    """The one-line notice for a parameter a link may not set."""
    # a key inside a refused setting (middleware.0.use) is refused for the same reason
    section = next((k for k in REFUSED_SETTINGS if key.startswith(k + ".")), key)
    why = REFUSED_SETTINGS.get(section, "links may only carry the sidebar's and the Config form's replay settings")
    shown = key if len(key) <= 60 else key[:59] + "…"
    return (f"{shown}: not taken from a link ({why}); set it on the Config page if you want it")


def link_notice(param: str, value: str, why: str, instead: str) -> str:
    """The one line every bad link value gets: what was ignored, why, and what is shown instead (the URL is
    then rewritten to what is shown). Issue 35: `step=abc` or `lesson=zzz` were fixed up without a word."""
    shown = value if len(value) <= 60 else value[:59] + "…"
    return f"Ignored {param}={shown!r} from the link ({why}); {instead}."


def link_step(raw: str | None, steps: int) -> tuple[int, str | None]:
    """The step a link's `step=` names within a thread of `steps` steps, and the notice when it was not one:
    not a whole number or below 0 → step 0; past the last step → the last step."""
    if raw is None:
        return 0, None
    text = raw.strip()
    if not text.lstrip("-").isdigit() or len(text) > 30:
        return 0, link_notice("step", raw, "not a whole number", "showing step 0")
    value = int(text)
    if value < 0:
        return 0, link_notice("step", raw, "steps count from 0", "showing step 0")
    last = max(0, steps - 1)
    if value > last:
        return last, link_notice("step", raw, f"this thread's last step is {last:,}", f"showing step {last:,}")
    return value, None


def link_whole_number(param: str, raw: str | None, low: int, high: int, default: int) -> tuple[int, str | None]:
    """A whole number in [low, high] from a link (the Workshop's `slide`), else `default` with a notice."""
    if raw is None:
        return default, None
    text = raw.strip()
    if not text.lstrip("-").isdigit() or len(text) > 30:
        return default, link_notice(param, raw, "not a whole number", f"showing {param} {default}")
    value = int(text)
    if not low <= value <= high:
        return default, link_notice(param, raw, f"this one goes from {low} to {high}", f"showing {param} {default}")
    return value, None


LINK_TRUE, LINK_FALSE = frozenset({"true", "1", "on", "yes"}), frozenset({"false", "0", "off", "no"})


def link_switch(param: str, raw: str | None, default: bool = False) -> tuple[bool, str | None]:
    """An on/off value from a link (the Workshop's `presenter=true`), else `default` with a notice."""
    if raw is None:
        return default, None
    text = raw.strip().lower()
    if text in LINK_TRUE or text in LINK_FALSE:
        return text in LINK_TRUE, None
    return default, link_notice(param, raw, "it is true or false", f"showing it {'on' if default else 'off'}")


def sample_path(folder: Path, name: str) -> Path | None:
    """The sample file `name` names inside `folder`, or None: only a regular `*.json` directly in the
    folder, reached without leaving it (no separators, no `..`, no absolute path, no symlink out)."""
    if not _SAMPLE_NAME.fullmatch(name) or ".." in name:
        return None
    try:
        base = folder.resolve(strict=True)
        candidate = folder / f"{name}.json"
        resolved = candidate.resolve(strict=True)
    except (OSError, RuntimeError):  # missing, a symlink loop, an unreadable folder
        return None
    if resolved.parent != base or not resolved.is_file():
        return None
    return candidate


__all__ = ["LIBRARY_ID_LENGTH", "LIBRARY_PREFIX", "LINK_SETTINGS", "MAX_THREAD_KEY_CHARS", "NOT_SETTINGS", "REFUSED_SETTINGS",
           "SUBAGENT_PREFIX", "VIEW_PARAMS", "library_id", "link_notice", "link_setting_allowed", "link_step", "link_switch",
           "link_whole_number", "refusal", "sample_path",
           "split_subagent_key", "subagent_key", "valid_library_id"]
