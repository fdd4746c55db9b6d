"""pydantic's validation errors as readable lines: each refused setting's dotted config key, the rule,
and the value given — every one of them (up to `MAX_LISTED`), not only the first pydantic found.

A value of the wrong type or out of range reads as what the setting allows, from the schema's own
type and bounds: "model.max_input_tokens: must be a whole number greater than 0, got 'abc'", not
pydantic's "Input should be a valid integer, unable to parse string as an integer"; so does a size, a
section or a list given a value of another kind ("summarization.keep: must be a size like 'messages:20',
'tokens:4000' or 'fraction:0.1', got -5", not "Input should be a valid dictionary or instance of ContextSize").
tests/engine/test_config_every_field_worded.py walks every setting with values of every wrong kind.
"""

from __future__ import annotations

import re
import types
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from engine.base.errors import ConfigError
from engine.config.sizes import ContextSize

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
        # a union's members each refuse the same value ("a valid integer", "a valid number"); and a setting
        # refused whole (`clear_tool_inputs: [1, 2]` is neither true/false nor a list of text) is not
        # refused again item by item, nor a list again as a whole once an item of it is
        if key in keys or any(key.startswith(f"{k}.") or k.startswith(f"{key}.") for k in keys):
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
    field, owner = _field(model, loc)
    if owner is ContextSize and (err["type"] in ("missing", "extra_forbidden")
                                 or isinstance(_walk(doc, loc[:-1])[2], (list, tuple))):
        # `keep: {tokens: 5}` lacks `type` and `value`, `keep: [1, 2]` has no type 1: the size as a whole is
        # refused, said as one
        loc = [p for p in loc[:-1] if not _is_type_tag(p)]
        field, _ = _field(model, loc)
        err = {**err, "type": "model_type", "ctx": {"class_name": "ContextSize"}}
    if field is None and err["type"] in ("model_type", "model_attributes_type") and loc:  # an item of a list
        parent, _ = _field(model, loc[:-1])
        items = [t for t in _leaf_types(parent.annotation) if _is_model(t)] if parent is not None else []
        if len(items) == 1 and items[0] is not ContextSize:
            err = {**err, "type": "items_model", "ctx": {"words": f"a mapping {_mapping(items[0])}"}}
    rule = _allowed(err, field, ".".join(p for p in loc if not p.isdigit()))
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
    elif err["type"] == "missing":
        msg = "is missing" + ("" if rule is None else f"; it must be {rule}")
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
_TYPE_ERRORS = _NUMBER_ERRORS | {"literal_error", "string_type", "bool_type", "bool_parsing", "model_type",
                                 "model_attributes_type", "dict_type", "tuple_type", "list_type", "missing",
                                 "too_short", "too_long", "string_too_short", "string_too_long"}
_LENGTH_ERRORS = frozenset({"too_short", "too_long", "string_too_short", "string_too_long"})
SIZE_WORDS = "a size like 'messages:20', 'tokens:4000' or 'fraction:0.1'"
TRIGGER_WORDS = ("a size like 'tokens:30000', several separated by commas (any fires), "
                 "an AND clause like 'tokens:30000&messages:50', or null")
# a size that takes no `messages:N` (ContextEditingConfig._tokens_only)
_TOKEN_SIZES = {"context_editing.trigger": "a size like 'tokens:4000' or 'fraction:0.1'"}


def _allowed(err: Any, field: FieldInfo | None, where: str = "") -> str | None:
    """What the setting allows, in words ("a whole number greater than 0", "a size like 'messages:20', …"),
    when `err` is about a value's type, range or length; None for any other error (its message says it)."""
    kind = err["type"]
    if kind == "items_model":
        return str(err["ctx"]["words"])
    if kind not in _TYPE_ERRORS:
        return None
    if field is not None:  # the schema's own type and bounds, a union's members all said
        rule = _words(field.annotation, field.metadata, where)
        if kind in _LENGTH_ERRORS and rule is not None:
            ctx = err.get("ctx") or {}
            n = ctx.get("min_length") if kind.endswith("too_short") else ctx.get("max_length")
            unit = "character" if kind.startswith("string") else "item"
            return (f"{rule}, with {'at least' if kind.endswith('too_short') else 'at most'} {n} "
                    f"{unit}{'s' if n != 1 else ''}")
        if rule is not None:
            return rule
        if kind in _NUMBER_ERRORS:
            return None  # a number inside a text or a list: pydantic's words
    # an item of a list or a part of a size: the error's own kind says what was wanted
    if kind == "literal_error":  # pydantic lists the choices: "'auto', 'all', 'last_turn' or 'none'"
        return str(err["ctx"]["expected"])
    if kind == "string_type":
        return "text"
    if kind in ("bool_type", "bool_parsing"):
        return "true or false"
    if kind in ("model_type", "model_attributes_type"):
        return SIZE_WORDS if (err.get("ctx") or {}).get("class_name") == "ContextSize" else "a mapping of settings"
    return None


def _words(annotation: Any, metadata: list[Any], where: str = "") -> str | None:
    """An annotation in words: `int | Literal['all'] | None` -> "a whole number, or 'all'"."""
    members = [t for t in _members(annotation) if t is not type(None)]
    if any(_is_model(t) and t.__name__ == "AllOf" for t in _leaf_types(annotation)):
        return TRIGGER_WORDS
    parts: list[str] = []
    numbers = {t for t in members if t in (int, float)}
    if numbers:
        parts.append(_number_words(numbers == {int}, metadata))
    choices = [repr(a) for t in members if get_origin(t) is Literal for a in get_args(t)]
    if choices:
        parts.append(choices[0] if len(choices) == 1 else f"{', '.join(choices[:-1])} or {choices[-1]}")
    for t in members:
        if t in (int, float) or get_origin(t) is Literal:
            continue
        word = _one_type(t, where)
        if word is None:
            return None
        parts.append(word)
    return ", or ".join(parts) or None


def _one_type(t: Any, where: str) -> str | None:
    if t is bool:
        return "true or false"
    if t is str:
        return "text"
    if t is ContextSize:
        return _TOKEN_SIZES.get(where, SIZE_WORDS)
    if get_origin(t) in (tuple, list):
        items = [a for a in get_args(t) if a is not Ellipsis]
        item = items[0] if len(items) == 1 else None
        if item is str:
            return "a list of text values"
        if item is ContextSize:
            return "a list of sizes like 'tokens:4000'"
        if isinstance(item, type) and issubclass(item, BaseModel):
            return f"a list of mappings, each {_mapping(item)}"
        return None
    if get_origin(t) is dict or t is dict:
        return "a mapping"
    if _is_model(t):
        return f"a mapping {_mapping(t)}"
    return None


def _mapping(model: type[BaseModel]) -> str:
    """A mapping's keys: "with content (and optionally category, confidence)" or "of settings (known here: …)"."""
    required = [name for name, f in model.model_fields.items() if f.is_required()]
    optional = [name for name in model.model_fields if name not in required]
    if not required:
        return f"of settings (known here: {', '.join(optional)})"
    return f"with {', '.join(required)}" + (f" (and optionally {', '.join(optional)})" if optional else "")


def _number_words(whole: bool, metadata: list[Any]) -> str:
    bounds = {name: getattr(m, name) for m in metadata for name in ("gt", "ge", "lt", "le")
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


def _field(model: type[BaseModel] | None, loc: list[str]) -> tuple[FieldInfo | None, type[BaseModel] | None]:
    """The field of `model` that `loc` ends at, through nested sections and list items, and the model it is a
    field of; None when it ends at an item of a list or a key of a mapping (the field's type is the
    container's, not the value's)."""
    if model is None:
        return None, None
    models: list[type[BaseModel]] = [model]
    field: FieldInfo | None = None
    owner: type[BaseModel] | None = None
    for part in loc:
        found = next(((m, m.model_fields[part]) for m in models if part in m.model_fields), None)
        if found is not None:
            owner, field = found
            models = [t for t in _leaf_types(field.annotation) if _is_model(t)]
        elif not _is_type_tag(part):  # a list index or a mapping's key: go on into the items' models
            field = None
    return field, owner


def _members(annotation: Any) -> list[Any]:
    """A union's members, nested unions flattened: `int | Literal['all'] | None` -> [int, Literal['all'], None]."""
    if get_origin(annotation) in (Union, types.UnionType):
        return [m for arg in get_args(annotation) for m in _members(arg)]
    return [annotation]


def _leaf_types(annotation: Any) -> list[Any]:
    """The types inside an annotation: `int | None` -> [int, None], `tuple[Price, ...]` -> [Price, Ellipsis]."""
    if get_origin(annotation) in (Union, types.UnionType) or get_args(annotation):
        return [leaf for arg in get_args(annotation) for leaf in _leaf_types(arg)]
    return [annotation]


def _is_model(t: Any) -> bool:
    return isinstance(t, type) and issubclass(t, BaseModel)


def _is_type_tag(part: str) -> bool:
    return part in _TYPE_TAGS or "[" in part or part[:1].isupper()
