"""Mutating real session files for robustness tests: wrong types in fields, fields dropped.

Shared by the JSONL session importers' tests (Codex, Gemini CLI): a mutated file must load or
raise ThreadLoadError naming the file, never anything else.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from engine.base.errors import ThreadLoadError
from engine.formats import load_thread
from engine.thread.model import Thread

NAME = "mutated-session.jsonl"
FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
WRONG_VALUES = st.sampled_from([None, 0, -1, 3.5, True, "", "x", [], {}, [None], {"type": 1}, [[[]]]])
MAX_DEPTH = 7


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place inside a JSON value, up to MAX_DEPTH keys deep."""
    out = [prefix]
    if len(prefix) >= MAX_DEPTH:
        return out
    if isinstance(node, dict):
        for k, v in node.items():
            out.extend(paths(v, (*prefix, k)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.extend(paths(v, (*prefix, i)))
    return out


def mutate(doc: Any, path: tuple[Any, ...], value: Any, drop: bool) -> Any:
    """`doc` with the value at `path` replaced by `value`, or (with `drop`) that dict key removed."""
    if not path:
        return value
    doc = copy.deepcopy(doc)
    node = doc
    for key in path[:-1]:
        node = node[key]
    if drop and isinstance(node, dict):
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return doc


def attempt(data: bytes, format: str | None, name: str = NAME) -> Thread | None:
    """Load; a ThreadLoadError naming the file is an accepted outcome, anything else fails."""
    try:
        return load_thread(data=data, name=name, format=format)
    except ThreadLoadError as exc:
        assert name in str(exc), f"error does not name the file: {exc}"
        return None


def jsonl(rows: list[Any]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()


def mutated_lines(data: st.DataObject, rows: list[Any]) -> bytes:
    """One line of a JSONL file with one field given a wrong value or dropped."""
    i = data.draw(st.integers(min_value=0, max_value=len(rows) - 1))
    path = data.draw(st.sampled_from(paths(rows[i])))
    drop = data.draw(st.booleans())
    changed = mutate(rows[i], path, data.draw(WRONG_VALUES), drop)
    return jsonl([*rows[:i], changed, *rows[i + 1:]])


def mutated_document(data: st.DataObject, doc: Any) -> bytes:
    """A JSON document with one field given a wrong value or dropped."""
    path = data.draw(st.sampled_from(paths(doc)[:4000]))
    changed = mutate(doc, path, data.draw(WRONG_VALUES), data.draw(st.booleans()))
    return json.dumps(changed).encode()
