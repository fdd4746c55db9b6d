"""pydantic's validation errors as one short line with a JSON path, for ThreadLoadError.

`str(ValidationError)` is several lines ("2 validation errors for HumanMessage / content.str /
Input should be a valid string [type=string_type, input_value=5, input_type=int] / For further
information visit https://errors.pydantic.dev/…"): the house rule is one line naming the file, the
format and the place. The first error is kept; its location becomes a JSON path suffix, with the
names pydantic adds for union members (`str`, `list[union[str,dict]]`, `function-after[…]`) left
out, and its message is said the way the importers say theirs ("expected a string, got array").
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from engine.formats.jsonshape import json_type

# pydantic error type -> what was expected (https://docs.pydantic.dev/latest/errors/validation_errors/)
_EXPECTED = {
    "string_type": "a string",
    "dict_type": "an object",
    "list_type": "an array",
    "tuple_type": "an array",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "dataclass_type": "an object",
    "none_required": "null",
}


def _is_member_name(part: Any) -> bool:
    """A location part pydantic adds for a union member or a validator, not a key of the input."""
    if not isinstance(part, str):
        return False
    return ("[" in part or part in {"str", "int", "float", "bool", "list", "dict", "none", "any"}
            or part.startswith(("function-", "tagged-union", "json-or-python", "lax-or-strict", "chain")))


def json_path_suffix(loc: tuple[Any, ...]) -> str:
    """`("tool_calls", 0, "args")` -> `.tool_calls[0].args` (member names dropped)."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not _is_member_name(part):
            out += f".{part}"
    return out


def validation_detail(exc: ValidationError) -> tuple[str, str]:
    """(JSON path suffix, one-line message) of the first error; the count of the others is added."""
    errors = exc.errors(include_url=False)
    if not errors:
        return "", "invalid value"
    first = errors[0]
    suffix = json_path_suffix(tuple(first.get("loc", ())))
    kind = str(first.get("type", ""))
    # a union (`content: str | list`) reports one error per member at the same place: say them together
    same = [e for e in errors if json_path_suffix(tuple(e.get("loc", ()))) == suffix]
    wanted = [_EXPECTED[str(e.get("type"))] for e in same if str(e.get("type")) in _EXPECTED]
    if "input" in first and wanted:
        message = f"expected {' or '.join(dict.fromkeys(wanted))}, got {json_type(first['input'])}"
    elif kind == "missing":
        message = "missing required field"
    else:
        message = " ".join(str(first.get("msg", "invalid value")).split())[:200]
    others = len({json_path_suffix(tuple(e.get("loc", ()))) for e in errors}) - 1
    if others > 0:
        message += f" (and {others} more field{'s' if others > 1 else ''})"
    return suffix, message


def error_detail(exc: BaseException) -> tuple[str, str]:
    """`validation_detail` for a ValidationError; the exception's first line for anything else."""
    if isinstance(exc, ValidationError):
        return validation_detail(exc)
    # LangChain's errors end in a troubleshooting link (langchain_core/_api/…: "For troubleshooting, visit: …")
    text = " ".join(str(exc).split()).split(" For troubleshooting, visit:")[0][:200]
    return "", f"{type(exc).__name__}: {text}" if text else type(exc).__name__


__all__ = ["error_detail", "json_path_suffix", "validation_detail"]
