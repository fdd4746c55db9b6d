"""pydantic's validation errors as readable lines: each refused setting's dotted config key, the rule,
and the value given — every one of them (up to `MAX_LISTED`), not only the first pydantic found.

A value of the wrong type or out of range reads as what the setting allows, from the schema's own
type and bounds: "model.max_input_tokens: must be a whole number greater than 0, got 'abc'", not
pydantic's "Input should be a valid integer, unable to parse string as an integer".
"""

from __future__ import annotations

import re
import types
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

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


def config_error(exc: ValidationError, doc: Any, source: str, model: type[BaseModel] | None = None) -> InvalidConfig:
    """Every setting `exc` refuses, once each, naming the setting and the value it was given.

    `model` is the class that refused `doc`: a number's type and bounds are read from its fields.
    """
    problems: list[tuple[str, str]] = []
    keys: set[str] = set()
    more = 0
    for err in exc.errors():
        key, message = _problem(err, doc, source, model)
        if key in keys:  # a union's members each refuse the same value ("a valid integer", "a valid number")
            continue
        keys.add(key)
        if len(problems) < MAX_LISTED:
            problems.append((key, message))
        else:
            more += 1
    return InvalidConfig(problems or [(source, "not valid")], more)


def _problem(err: Any, doc: Any, source: str, model: type[BaseModel] | None) -> tuple[str, str]:
    loc = [str(p) for p in err["loc"] if not str(p).startswith(("function-", "tagged-union"))]
    msg = err["msg"].removeprefix("Value error, ")
    rule = _allowed(err, _field(model, loc))
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
    elif rule is not None and not inner:
        msg = f"must be {rule}" + ("" if value is _MISSING else f", got {value!r}")
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


# pydantic's errors for a value of the wrong type or out of a number's bounds
# (https://docs.pydantic.dev/latest/errors/validation_errors/)
_NUMBER_ERRORS = frozenset({"int_type", "int_parsing", "int_parsing_size", "int_from_float", "float_type",
                            "float_parsing", "finite_number", "greater_than", "greater_than_equal", "less_than",
                            "less_than_equal"})


def _allowed(err: Any, field: FieldInfo | None) -> str | None:
    """What the setting allows, in words ("a whole number greater than 0"), when `err` is about a value's
    type or range; None for any other error (its message says it already)."""
    kind = err["type"]
    if kind == "literal_error":  # pydantic lists the choices: "'auto', 'all', 'last_turn' or 'none'"
        return str(err["ctx"]["expected"])
    if kind == "string_type":
        return "text"
    if kind in ("bool_type", "bool_parsing"):
        return "true or false"
    if kind not in _NUMBER_ERRORS or field is None:
        return None
    types_ = {t for t in _leaf_types(field.annotation) if t is not type(None)}
    if not types_ or not types_ <= {int, float}:  # a number inside a text or a list: pydantic's words
        return None
    whole = types_ == {int}
    bounds = {name: getattr(m, name) for m in field.metadata for name in ("gt", "ge", "lt", "le")
              if getattr(m, name, None) is not None}
    if whole and "gt" in bounds and "le" in bounds:  # a whole number greater than 0 and at most 4: from 1 to 4
        bounds["ge"] = bounds.pop("gt") + 1
    if "ge" in bounds and "le" in bounds:
        limits = [f"from {_number(bounds['ge'])} to {_number(bounds['le'])}"]
    else:
        words = {"gt": "greater than {}", "ge": "of {} or more", "lt": "less than {}", "le": "of at most {}"}
        limits = [words[name].format(_number(v)) for name, v in bounds.items()]
        limits[1:] = [limit.removeprefix("of ") for limit in limits[1:]]  # "greater than 0 and at most 1"
    return " ".join(["a whole number" if whole else "a number", " and ".join(limits)]).strip()


def _number(v: Any) -> str:
    return f"{v:,}" if isinstance(v, int) else f"{v:g}"


def _field(model: type[BaseModel] | None, loc: list[str]) -> FieldInfo | None:
    """The field of `model` that `loc` ends at, through nested sections and list items; None when it ends at
    an item of a list or a key of a mapping (the field's type is the container's, not the value's)."""
    if model is None:
        return None
    models: list[type[BaseModel]] = [model]
    field: FieldInfo | None = None
    for part in loc:
        found = next((m.model_fields[part] for m in models if part in m.model_fields), None)
        if found is not None:
            field, models = found, [t for t in _leaf_types(found.annotation) if _is_model(t)]
        elif not _is_type_tag(part):  # a list index or a mapping's key: go on into the items' models
            field = None
    return field


def _leaf_types(annotation: Any) -> list[Any]:
    """The types inside an annotation: `int | None` -> [int, None], `tuple[Price, ...]` -> [Price, Ellipsis]."""
    if get_origin(annotation) in (Union, types.UnionType) or get_args(annotation):
        return [leaf for arg in get_args(annotation) for leaf in _leaf_types(arg)]
    return [annotation]


def _is_model(t: Any) -> bool:
    return isinstance(t, type) and issubclass(t, BaseModel)


def _is_type_tag(part: str) -> bool:
    return part in _TYPE_TAGS or "[" in part or part[:1].isupper()
