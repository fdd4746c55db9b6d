"""pydantic's validation errors as one line: the dotted config key, the rule, and the value given."""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError

from engine.base.errors import ConfigError


def config_error(exc: ValidationError, doc: Any, source: str) -> ConfigError:
    err = exc.errors()[0]
    loc = [str(p) for p in err["loc"] if not str(p).startswith(("function-", "tagged-union"))]
    # pydantic appends union member names to locations; keep only real keys and indices
    clean = [p for p in loc if p not in ("ContextSize", "AllOf", "list[union[ContextSize,AllOf]]", "tuple[union[ContextSize,AllOf],...]")]
    key = ".".join(clean) or source
    msg = err["msg"].removeprefix("Value error, ")
    # a whole-config check names its own key: "order: unknown layer 'x'"
    own = _OWN_KEY.match(msg) if not clean else None
    if own:
        key, msg, clean = own.group(1), own.group(2), own.group(1).split(".")
    value = _lookup(doc, clean)
    if err["type"] == "extra_forbidden":
        msg = "unknown key"
    elif err["type"] == "literal_error":
        msg = f"{msg}"
    # a message that already names the value ("got 'potato'") does not get it twice (issue 35)
    shown = f" (got {value!r})" if value is not _MISSING and f"got {value!r}" not in msg else ""
    return ConfigError(f"{msg}{shown}", key=key)


_MISSING = object()
_OWN_KEY = re.compile(r"([a-z_]+(?:\.\w+)*): (.*)", re.DOTALL)


def _lookup(doc: Any, path: list[str]) -> Any:
    node = doc
    for p in path:
        if isinstance(node, dict) and p in node:
            node = node[p]
        elif isinstance(node, (list, tuple)) and p.isdigit() and int(p) < len(node):
            node = node[int(p)]
        else:
            return _MISSING
    return node
