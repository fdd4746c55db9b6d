"""The facts of a conversation by class, and whether a text still holds them (no model: regexes).

Classes (docs/evals.md, *Compaction survival*, states every rule; tests/evals/test_fact_classes.py
checks each class):

- `path`: file paths written in the tool calls' arguments (path-valued keys, paths inside commands,
  `apply_patch` headers), in what people and the agent wrote; not in tool results (a listing or a file
  read back holds hundreds);
- `command`: the shell commands the agent ran (first line, whitespace collapsed, 200 characters) and
  the user's own `!cmd` (Claude Code's `<bash-input>`);
- `number`: numbers with their unit (`120 ms`, `98 %`, `42 passed`, `$4200`, `port 8443`) in any message
  but a file read back (at most 20 per message);
- `error`: error lines (an `…Error`/`…Exception` name, `error[E…]`, `error:`/`fatal:`/`panic:`,
  FAILED) in tool results that are not files read back, and in what a person pasted (at most 5 per
  message); a failed call's first line when none is error-shaped;
- `identifier`: URLs, codes (`OPS-2210`), slugs with a digit (`spotter-a0y`), CamelCase and backticked
  names (`TranscriptRenderer`, `parse_config`), issue numbers (`#1234`), git hashes;
- `decision`: the agent's sentences that decide ("I'll use …", "the fix is …", "instead of …") and the
  todos still open when the history was cut.

A fact is *held* by a text when (`Holder.holds`): a path appears whole or by its last two components;
a command appears whole, or without a leading `cd DIR &&`; a number appears with the same unit (commas
and the space before the unit ignored); an error line appears whole, or its error name does with
≥ 60 % of its words in one message; an identifier appears (any case; a git hash by its first 7
characters); a decision's content words (≥ 3 letters, not stop words), ≥ 60 % and at least 2 of them,
appear in one message — the public measurement the issue cites counted a decision kept "if a few of
its longer words appear anywhere in the summary" (vshulcz/deja-vu issue #543).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from engine.evals.actions import (
    COMMAND_KEYS,
    PATH_KEYS,
    PATTERN_KEYS,
    READ,
    Action,
    command_text,
    normalize_command,
)
from engine.tokens.content import message_text

CLASSES: tuple[str, ...] = ("path", "command", "number", "error", "identifier", "decision")
CLASS_LABELS: dict[str, str] = {"path": "file paths", "command": "commands", "number": "numbers with units",
                                "error": "error messages", "identifier": "identifiers and URLs",
                                "decision": "decisions and open todos"}

MAX_FACT_CHARS = 200
NUMBERS_PER_MESSAGE = 20  # a log or a test report floods a tool result with numbers: its first ones
ERRORS_PER_MESSAGE = 5
SCAN_CHARS_PER_MESSAGE = 50_000  # a huge result's facts are in its head; bounds the regexes' time
KEPT_WORD_SHARE = 0.6


@dataclass(frozen=True)
class Fact:
    """One fact: its class and its value as matched (paths and commands as written, numbers normalised)."""

    cls: str
    value: str


# -- paths -----------------------------------------------------------------------------------------
_URL = re.compile(r"\b(?:https?|ftp|file)://[^\s<>\"'`)\]}]+", re.IGNORECASE)
_PATH = re.compile(
    r"(?<![\w/.:~@$%-])"
    r"("
    r"(?:~|\.{1,2})?/(?:[\w.@+-]+/)*[\w@+-][\w.@+-]*/?"                     # /abs/path, ~/x, ./x, ../x, dir/
    r"|[A-Za-z]:\\(?:[\w.@+ -]+\\)*[\w.@+-]+"                                # C:\dir\file
    r"|(?:[\w@+-][\w.@+-]*/)+[\w@+-]+(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,7}"  # rel/dir/name.ext
    r")"
    # never ends inside a name: a match cut back to fit would be a wrong, shorter path
    r"(?::\d+(?::\d+)?)?(?![\w/@+-]|\.[\w/])")


def paths_in(text: str) -> list[str]:
    """File paths written in `text`, in order (URLs excluded, a `:line` suffix and punctuation dropped)."""
    urls = [m.span() for m in _URL.finditer(text)]
    out: list[str] = []
    for m in _PATH.finditer(text):
        start = m.start(1)
        if any(a <= start < b for a, b in urls):
            continue
        path = m.group(1).rstrip(".,;:")
        path = path.rstrip("/") if len(path) > 1 else path
        if _is_path(path):
            out.append(path)
    return out


def _is_path(path: str) -> bool:
    if len(path) < 3 or not re.search(r"[A-Za-z]", path):
        return False
    if "\\" in path:
        return True
    parts = [p for p in path.split("/") if p and p not in (".", "..", "~")]
    if not parts:
        return False
    if path.startswith(("/", "~", ".")):
        # one bare word after the root ("/tmp", "/s") is prose or an option more often than a file
        return len(parts) >= 2 or "." in parts[-1]
    return True


def path_tail(path: str) -> str:
    """The last two components (`src/app.py` of `/home/u/p/src/app.py`), or '' for a shorter path."""
    parts = [p for p in re.split(r"[/\\]", path) if p and p not in (".", "..", "~")]
    return "/".join(parts[-2:]) if len(parts) >= 3 else ""


# -- numbers with units ----------------------------------------------------------------------------
_UNITS = (r"ms|msec|s|sec|secs|seconds?|mins?|minutes?|h|hrs?|hours?|days?|%|kb|mb|gb|tb|kib|mib|gib|tib|bytes?|"
          r"tokens?|lines?|files?|tests?|passed|failed|errors?|warnings?|req/s|rps|qps|fps|x")
_NUMBER = re.compile(
    r"(?<![\w./#:$€£-])(?:(?P<cur>[$€£])\s?(?P<amount>\d[\d,]*(?:\.\d+)?)"
    r"|(?P<num>\d[\d,]*(?:\.\d+)?)\s?(?P<unit>" + _UNITS + r"))(?![\w/])"
    r"|\bport\s+(?P<port>\d{2,5})\b",
    re.IGNORECASE)
_PLURAL = {"seconds": "second", "secs": "sec", "minutes": "minute", "mins": "min", "hours": "hour", "hrs": "hr",
           "days": "day", "bytes": "byte", "tokens": "token", "lines": "line", "files": "file", "tests": "test",
           "errors": "error", "warnings": "warning"}


def numbers_in(text: str) -> list[str]:
    """Numbers with their unit, normalised (`1,200ms` -> `1200 ms`, `$4,200` -> `$4200`, `30 days` -> `30 day`)."""
    out: list[str] = []
    for m in _NUMBER.finditer(text):
        if m.group("cur"):
            out.append(f"{m.group('cur')}{m.group('amount').replace(',', '')}")
        elif m.group("port"):
            out.append(f"port {m.group('port')}")
        else:
            unit = m.group("unit").lower()
            value = m.group("num").replace(",", "")
            if unit in ("s", "h", "x", "%") and "." not in value and len(value) < 2 and unit != "%":
                continue  # "2s", "3x": too common to be a measure anybody keeps
            out.append(f"{value} {_PLURAL.get(unit, unit)}")
    return out


# -- errors ----------------------------------------------------------------------------------------
_ERROR_LINE = re.compile(
    r"\b[A-Z]\w*(?:Error|Exception|Failure)\b|\berror\[E\d+\]|(?i:\b(?:error|fatal|panic)\b):|\bFAILED\b|^\s*E\s{2,}\S")
_ERROR_LINE_ANYWHERE = re.compile(_ERROR_LINE.pattern, re.MULTILINE)
_ERROR_NAME = re.compile(r"\b[A-Z]\w*(?:Error|Exception|Failure)\b|\berror\[E\d+\]|(?i:\b(?:fatal|panic|error)\b)|\bFAILED\b")
# a line of code that names an error is not an error that happened
_CODE_LINE = re.compile(r"^\s*(?:\d+\s*(?:→|\||:)\s*)?(?:raise|throw|except|catch|class|def|import|from|new|"
                        r"@|//|#|\*|if|elif|else|return|rescue|defmodule|fn|pub|let|const|var)\b")


def errors_in(text: str, *, failed: bool = False) -> list[str]:
    """Error lines (see the module docstring); `failed`: the call failed, so its first line is one if none is."""
    out: list[str] = []
    if _ERROR_LINE_ANYWHERE.search(text):  # most outputs hold none: one pass instead of one per line
        for line in text.splitlines():
            if _ERROR_LINE.search(line) and not _CODE_LINE.match(line):
                out.append(_clip(line))
    if not out and failed:
        first = next((ln for ln in text.splitlines() if ln.strip()), "")
        if first:
            out.append(_clip(first))
    return out


def _clip(text: str) -> str:
    return " ".join(text.split())[:MAX_FACT_CHARS]


# -- identifiers and URLs --------------------------------------------------------------------------
_CODE = re.compile(r"\b[A-Z][A-Z0-9]*(?:[-_][A-Z0-9]+)+\b")
_SLUG = re.compile(r"(?<![\w/.-])[a-z][a-z0-9]*(?:[-_][a-z0-9]+)+(?![\w/-]|\.\w)")
_CAMEL = re.compile(r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+\b|\b[a-z]+(?:[A-Z][a-z0-9]+)+\b")
_TICKED = re.compile(r"`([A-Za-z_][\w.:]*(?:\(\))?)`")
_FILE_NAME = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,4}$")
_ISSUE = re.compile(r"(?<![\w&/])#\d{2,6}\b")
_HASH = re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b")
HASH_PREFIX = 7  # git's short hash


def identifiers_in(text: str) -> list[str]:
    """URLs, codes, slugs with a digit, CamelCase and backticked names, issue numbers, git hashes, in order."""
    found: list[tuple[int, str]] = []
    urls = [(m.start(), m.group(0).rstrip(".,;:")) for m in _URL.finditer(text)]
    found.extend(urls)
    skip = [(s, s + len(u)) for s, u in urls] + [m.span(1) for m in _PATH.finditer(text)]

    def add(start: int, word: str) -> None:
        if not any(a <= start < b for a, b in skip):
            found.append((start, word))

    for m in _CODE.finditer(text):
        if any(c.isdigit() for c in m.group(0)):
            add(m.start(), m.group(0))
    for m in _SLUG.finditer(text):
        if any(c.isdigit() for c in m.group(0)) and not _HASH.fullmatch(m.group(0)):
            add(m.start(), m.group(0))
    for m in _CAMEL.finditer(text):
        add(m.start(), m.group(0))
    for m in _TICKED.finditer(text):
        word = m.group(1)
        if (len(word) >= 3 and not _FILE_NAME.search(word)
                and ("_" in word or "(" in word or "." in word or any(c.isupper() for c in word[1:]))):
            add(m.start(1), word)
    for m in _ISSUE.finditer(text):
        add(m.start(), m.group(0))
    for m in _HASH.finditer(text):
        add(m.start(), m.group(0))
    return [w for _, w in sorted(found, key=lambda f: f[0])]


# -- decisions -------------------------------------------------------------------------------------
_DECISION = re.compile(
    r"\b(?:I'll|I will|we'll|we will|let's|I decided|we decided|decided to|I'm going to|we're going to|going to|"
    r"I chose|we chose|the fix is|the plan is|instead of|the root cause is|the cause is)\b", re.IGNORECASE)
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_STOP = frozenset("""the and for are but not you all any can had her was one our out has him his how its may new now
old see two way who did get got let put say she too use will with this that from have they been were what when where
which while would could should there their them then than these those into onto upon about above after again
against also because before being below between both does doing down during each further having here itself just
more most only other over same some such through under until very your yours once like make made need needs next
first last now done sure okay well just really""".split())


def decisions_in(text: str) -> list[str]:
    """Sentences where the agent decides (see the module docstring), with at least 2 content words."""
    out = []
    for m in _SENTENCE.finditer(text):
        sentence = m.group(0).strip()
        if _DECISION.search(sentence) and len(content_words(sentence)) >= 2:
            out.append(_clip(sentence))
    return out


def content_words(text: str) -> list[str]:
    """Words of 3+ letters that are not stop words, lower-cased, each once, in order."""
    words = re.findall(r"[a-z][a-z0-9_'-]*", text.lower())
    return list(dict.fromkeys(w for w in words if len(w) >= 3 and w not in _STOP))


# -- one message ------------------------------------------------------------------------------------
_BASH_INPUT = re.compile(r"<bash-input>(.*?)</bash-input>", re.DOTALL)
TODO_TOOLS = frozenset({"TodoWrite", "write_todos", "update_plan"})
_DONE = frozenset({"completed", "done", "cancelled", "canceled"})


def facts_in_message(message: BaseMessage, calls: Mapping[str, Action] | None = None) -> list[Fact]:
    """The facts `message` states, in order (each once). `calls`: the action of each tool call by id, so a
    tool result of a file read back is known as one (its numbers and error-like lines are the file's)."""
    out: list[Fact] = []
    text = message_text(message)[:SCAN_CHARS_PER_MESSAGE]
    if isinstance(message, ToolMessage):
        action = (calls or {}).get(message.tool_call_id)
        if action is None or action.kind != READ:
            out += [Fact("number", n) for n in numbers_in(text)[:NUMBERS_PER_MESSAGE]]
            out += [Fact("error", e) for e in errors_in(text, failed=message.status == "error")[:ERRORS_PER_MESSAGE]]
        return _unique(out)
    out += [Fact("path", p) for p in paths_in(text)]
    if isinstance(message, AIMessage):
        out += [Fact("decision", d) for d in decisions_in(text)]
        for tc in message.tool_calls:
            out += _call_facts(tc)
    else:
        out += [Fact("command", normalize_command(c)) for c in _BASH_INPUT.findall(text) if c.strip()]
        out += [Fact("error", e) for e in errors_in(text)[:ERRORS_PER_MESSAGE]]
    out += [Fact("identifier", i) for i in identifiers_in(text)]
    out += [Fact("number", n) for n in numbers_in(text)[:NUMBERS_PER_MESSAGE]]
    return _unique(out)


def _call_facts(tool_call: Mapping[str, Any]) -> list[Fact]:
    args = tool_call.get("args")
    if not isinstance(args, Mapping):
        return []
    out: list[Fact] = []
    for key, value in args.items():
        if key in PATH_KEYS and isinstance(value, str) and value.strip():
            out.append(Fact("path", value.strip()))
        elif key in COMMAND_KEYS and isinstance(value, (str, list)):
            command = command_text(value)
            first = next((ln for ln in command.splitlines() if ln.strip()), "")
            if first:
                out.append(Fact("command", normalize_command(first)))
            out += [Fact("path", p) for p in paths_in(command)]
        elif key in ("input", "patch") and isinstance(value, str) and "*** " in value:
            out += [Fact("path", p.strip()) for p in re.findall(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", value,
                                                               re.MULTILINE)]
        elif key in PATTERN_KEYS or key == "url":
            out += [Fact("identifier", i) for i in identifiers_in(str(value))]
    return out


def open_todos(tool_call: Mapping[str, Any]) -> list[str] | None:
    """The open items of a todo-list call (Claude Code's TodoWrite, Deep Agents' write_todos, Codex's
    update_plan), or None when the call is not one."""
    if tool_call.get("name") not in TODO_TOOLS:
        return None
    args = tool_call.get("args")
    items = (args or {}).get("todos", (args or {}).get("plan")) if isinstance(args, Mapping) else None
    if not isinstance(items, list):
        return None
    out = []
    for item in items:
        if isinstance(item, Mapping):
            status = str(item.get("status") or "").lower()
            text = item.get("content") or item.get("step") or item.get("description") or ""
            if str(text).strip() and status not in _DONE:
                out.append(_clip(str(text)))
    return out


def _unique(facts: Iterable[Fact]) -> list[Fact]:
    return list(dict.fromkeys(facts))


# -- does a text still hold a fact ------------------------------------------------------------------
class Holder:
    """What one part of a view says (its messages' searchable texts), asked whether it holds a fact.

    Every check searches the text for the fact (never extracts all facts of a long text first): a view or a
    history file can hold megabytes, and a compaction asks about a few hundred facts."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.texts = [t for t in texts if t]
        self.text = "\n".join(self.texts)
        self.lower = self.text.lower()
        self._words: list[frozenset[str]] | None = None

    @property
    def words(self) -> list[frozenset[str]]:
        if self._words is None:
            self._words = [frozenset(content_words(t)) for t in self.texts]
        return self._words

    def holds(self, fact: Fact) -> bool:
        value = fact.value
        if not self.text:
            return False
        if fact.cls == "path":
            tail = path_tail(value)
            return value in self.text or bool(tail and tail in self.text)
        if fact.cls == "command":
            rest = re.match(r"cd\s+\S+\s*&&\s*(.+)", value)
            # a cheap test before each regex: a history file can be megabytes
            return any(_longest_word(v).lower() in self.lower and _spaced(v).search(self.text)
                       for v in ([value, rest.group(1)] if rest else [value]))
        if fact.cls == "number":
            return _holds_number(value, self.lower)
        if fact.cls == "error":
            if _longest_word(value).lower() in self.lower and _spaced(value, ignore_case=True).search(self.text):
                return True
            name = _ERROR_NAME.search(value)
            return bool(name) and self._words_in_one(value, must=name.group(0).lower() if name else "")
        if fact.cls == "identifier":
            if _HASH.fullmatch(value):
                return value[:HASH_PREFIX].lower() in self.lower
            return value.lower() in self.lower
        if fact.cls == "decision":
            return self._words_in_one(value)
        return False

    def _words_in_one(self, text: str, must: str = "") -> bool:
        """≥ 60 % (and at least 2) of `text`'s content words in one message; `must` among them when given."""
        wanted = content_words(text)
        if len(wanted) < 2:
            return False
        need = max(2, KEPT_WORD_SHARE * len(wanted))
        must_words = set(content_words(must))
        if not all(w in self.lower for w in must_words) or sum(1 for w in wanted if w in self.lower) < need:
            return False  # not even in the whole text: no message holds them
        return any(sum(1 for w in wanted if w in words) >= need and must_words <= words for words in self.words)


class FactIndex:
    """Messages carried over unchanged, asked whether they state a fact: the facts they state themselves (the
    same extractors), looked up instead of searched — a carried-over history can hold megabytes. A path is
    also found by its last two components, a git hash by its first 7 characters, a command without its `cd`."""

    def __init__(self, facts: Iterable[Fact]) -> None:
        self.facts = set(facts)
        self.tails = {path_tail(f.value) or f.value for f in self.facts if f.cls == "path"}
        self.identifiers = {f.value.lower() for f in self.facts if f.cls == "identifier"}
        self.short_hashes = {v[:HASH_PREFIX] for v in self.identifiers if _HASH.fullmatch(v)}
        self.commands = {f.value for f in self.facts if f.cls == "command"}

    def holds(self, fact: Fact) -> bool:
        if fact in self.facts:
            return True
        value = fact.value
        if fact.cls == "path":
            tail = path_tail(value)
            return bool(tail) and tail in self.tails or value in self.tails
        if fact.cls == "identifier":
            low = value.lower()
            return low in self.identifiers or bool(_HASH.fullmatch(low)) and low[:HASH_PREFIX] in self.short_hashes
        if fact.cls == "command":
            rest = re.match(r"cd\s+\S+\s*&&\s*(.+)", value)
            return bool(rest) and rest.group(1) in self.commands if rest else False
        return False


def _longest_word(text: str) -> str:
    return max(text.split(), key=len, default="")


def _spaced(text: str, *, ignore_case: bool = False) -> re.Pattern[str]:
    """`text` with any run of whitespace between its words (commands and error lines are matched so)."""
    return re.compile(r"\s+".join(re.escape(w) for w in text.split()), re.IGNORECASE if ignore_case else 0)


_NUMBER_VALUE = re.compile(r"^(?:(?P<cur>[$€£])(?P<amount>[\d.]+)|port (?P<port>\d+)|(?P<num>[\d.]+) (?P<unit>.+))$")


def _holds_number(value: str, lower: str) -> bool:
    """The number with the same unit somewhere in `lower` (thousands separators and the space before the unit
    ignored, a unit in the singular or the plural)."""
    m = _NUMBER_VALUE.match(value.lower())
    if m is None:
        return value.lower() in lower
    digits = m.group("amount") or m.group("port") or m.group("num") or ""
    spellings = {digits}
    whole, _, frac = digits.partition(".")
    if whole.isdigit() and len(whole) > 3:
        spellings.add(f"{int(whole):,}" + (f".{frac}" if frac else ""))
    if m.group("cur"):
        after = ""
        before = re.escape(m.group("cur")) + r"\s?"
    elif m.group("port"):
        after, before = "", r"\bport\s+"
    else:
        unit = re.escape(m.group("unit"))
        after, before = r"\s?" + unit + r"(?:e?s)?(?![a-z])", r"(?<![\w.,$€£])"
    for spelling in spellings:
        start = lower.find(spelling)
        while start >= 0:  # the digits first (str.find), the unit and the boundary only where they occur
            window = lower[max(0, start - 8):start + len(spelling) + 16]
            if re.search(before + re.escape(spelling) + after + r"(?![\d])", window):
                return True
            start = lower.find(spelling, start + 1)
    return False


__all__ = ["CLASSES", "CLASS_LABELS", "Fact", "FactIndex", "Holder", "content_words", "decisions_in", "errors_in", "facts_in_message",
           "identifiers_in", "numbers_in", "open_todos", "path_tail", "paths_in"]
