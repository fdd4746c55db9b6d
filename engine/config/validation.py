"""pydantic's validation errors as readable lines: each refused setting's dotted config key, the rule,
and the value given — every one of them (up to `MAX_LISTED`), not only the first pydantic found."""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError

from engine.base.errors import ConfigError

MAX_LISTED = 10  # a file of many bad settings lists this many, then "and N more"


class InvalidConfig(ConfigError):
    """The settings a config document got wrong.

    `problems` holds `(dotted key, message)` for each refused setting, in the order pydantic checked
    them (at most `MAX_LISTED`; `more` counts the rest); `key` is the first one's, for a form to mark
    its field. One problem reads as always, "summarization.keep: …"; several read as one line,
    "3 settings are not valid: model.max_input_tokens: …; summarization.trigger: …; …".
    """

    def __init__(self, problems: list[tuple[str, str]], more: int = 0) -> None:
        self.problems = problems
        self.more = more
        first_key, first = problems[0]
        if len(problems) == 1 and not more:
            super().__init__(first, key=first_key)
            return
        listed = "; ".join(f"{k}: {m}" for k, m in problems) + (f"; and {more:,} more" if more else "")
        super().__init__(f"{len(problems) + more:,} settings are not valid: {listed}")
        self.key = first_key


def config_error(exc: ValidationError, doc: Any, source: str) -> InvalidConfig:
    """Every setting `exc` refuses, once each, naming the setting and the value it was given."""
    problems: list[tuple[str, str]] = []
    keys: set[str] = set()
    more = 0
    for err in exc.errors():
        key, message = _problem(err, doc, source)
        if key in keys:  # a union's members each refuse the same value ("a valid integer", "a valid number")
            continue
        keys.add(key)
        if len(problems) < MAX_LISTED:
            problems.append((key, message))
        else:
            more += 1
    return InvalidConfig(problems or [(source, "not valid")], more)


def _problem(err: Any, doc: Any, source: str) -> tuple[str, str]:
    loc = [str(p) for p in err["loc"] if not str(p).startswith(("function-", "tagged-union"))]
    msg = err["msg"].removeprefix("Value error, ")
    # a whole-config check names its own key: "order: unknown layer 'x'"
    own = _OWN_KEY.match(msg) if not loc else None
    if own:
        msg, loc = own.group(2), own.group(1).split(".")
    key, inner, value = _walk(doc, loc)
    if inner:  # "trigger: banana:12" fails at trigger.type, a part of what the reader made of the text
        name = inner[-1]
        msg = f"the {name}{msg[len('Input'):]}" if msg.startswith("Input ") else f"{name}: {msg}"
    if err["type"] == "extra_forbidden":
        msg = "unknown key"
    # a message that already names the value ("got 'potato'") does not get it twice (issue 35)
    # and one that says what it got in the reader's terms ("… greater than 0, got -3" for 'messages:-3') gets
    # the text as written, not a second "got"
    shown = ("" if value is _MISSING or f"got {value!r}" in msg
             else f" (as written: {value!r})" if ", got " in msg else f" (got {value!r})")
    return ".".join(key) or source, f"{msg}{shown}"


_MISSING = object()
_OWN_KEY = re.compile(r"([a-z_]+(?:\.\w+)*): (.*)", re.DOTALL)
# what pydantic adds to a location for a union's member ("int", "ContextSize", "list[union[...]]")
_TYPE_TAGS = frozenset({"int", "float", "str", "bool", "none", "list", "dict", "tuple", "set", "bytes"})


def _walk(doc: Any, loc: list[str]) -> tuple[list[str], list[str], Any]:
    """`loc` as the setting's keys in `doc`, the parts of a text value the reader made (trigger.type of
    "banana:12"), and the value given (`_MISSING` for a key the document does not have)."""
    node = doc
    key: list[str] = []
    inner: list[str] = []
    for p in loc:
        if inner or node is _MISSING:
            if not _is_type_tag(p):
                (inner if inner or node is not _MISSING else key).append(p)
        elif isinstance(node, dict) and p in node:
            node = node[p]
            key.append(p)
        elif isinstance(node, (list, tuple)) and p.isdigit() and int(p) < len(node):
            node = node[int(p)]
            key.append(p)
        elif _is_type_tag(p):
            continue
        elif isinstance(node, (dict, list, tuple)):  # a key the document lacks (a required one)
            node = _MISSING
            key.append(p)
        else:  # a part of a text or number the reader parsed
            inner.append(p)
    return key, inner, node


def _is_type_tag(part: str) -> bool:
    return part in _TYPE_TAGS or "[" in part or part[:1].isupper()
