"""Reading config YAML in bounded time and memory, and checking a config document before it is built.

Every YAML a config comes from — a `--config` file, a `--set` value, a dashboard link's value, the
Config page's editor, form fields and uploads — goes through `load_yaml`:

- only PyYAML's safe loader builds it (its C build when present), so a `!!python/...` tag is an error,
  never run;
- one pass over the parser's events (libyaml's parser is iterative) comes first and refuses, at the
  line where it happens, nesting deeper than `MAX_DEPTH` (the constructor and everything after it
  recurse: 5,000 nested `[` were a RecursionError) and aliases that expand the document beyond
  `max(len(text), MIN_VALUE_BUDGET)` values ("billion laughs": a 500-byte config with a 9x9 alias
  chain in a middleware's kwargs aborted the process) or that refer to a value containing them
  (a recursive structure, which nothing after the loader can walk).

`check_document` walks a built document (a dict from YAML, the form, or Python) once, iteratively:
the same depth bound, and text that is not Unicode text — an unpaired UTF-16 surrogate, which YAML's
and JSON's `\\ud800` escapes produce and which nothing can encode as UTF-8 (a link's
`input_context.custom_prompt="\\ud800"` broke the dashboard's URL on every page) — is refused with
the key it is under. (libyaml's own parser refuses a surrogate escape already; this holds for the
pure-Python loader and for documents built in Python.)
"""

from __future__ import annotations

import codecs
import re
from typing import Any

import yaml

from engine.base.errors import ConfigError

# A config is a few levels deep (middleware kwargs add a few more); the cassette reader allows 200,
# whose documents are recorded HTTP bodies. Python's recursion limit (1,000) must stay far away for
# pydantic, the deep merge, `to_yaml` and the JSON hash of middleware kwargs.
MAX_DEPTH = 100
# A plain document has at most one value per byte; aliases may add this many values on top.
MIN_VALUE_BUDGET = 100_000
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_SURROGATE = re.compile("[\ud800-\udfff]")


class InvalidYaml(ConfigError):
    """The text is not YAML at all (as opposed to YAML refused by a bound or a tag)."""


def load_yaml(text: str, *, source: str) -> Any:
    """The YAML document in `text`, or a ConfigError naming `source`, the line and the rule."""
    try:
        _check_events(text, source)
        return yaml.load(text, Loader=_LOADER)  # noqa: S506 - the safe loader (yaml.safe_load's), C build when present
    except yaml.constructor.ConstructorError as exc:
        tag = (getattr(exc, "problem", "") or "").strip()
        raise ConfigError(f"{_where(exc)}refused: {tag or 'a YAML tag this reader does not build'} "
                          "(only plain YAML is read, never Python tags)", key=source) from None
    except yaml.reader.ReaderError as exc:  # a control character: binary data, not a YAML text (no mark)
        raise InvalidYaml(f"not YAML text: {_control(text, exc.position)}", key=source) from None
    except yaml.MarkedYAMLError as exc:
        if "maximum nesting depth" in (exc.problem or ""):
            # libyaml >= 0.2.6 (PyYAML 6.0.4's wheels) refuses 1,000 levels in its scanner, which reads
            # a flow collection's brackets ahead of the events our own depth check counts.
            raise ConfigError(f"{_where(exc)}YAML nested more than {MAX_DEPTH} levels deep "
                              "(a config is a few levels deep)", key=source) from None
        raise InvalidYaml(f"invalid YAML{_at(exc)}: {exc.problem or exc.context or 'unreadable'}", key=source) from None
    except yaml.YAMLError as exc:
        raise InvalidYaml(f"invalid YAML: {exc}", key=source) from None
    except RecursionError:  # pragma: no cover - the event pass bounds the depth first
        raise ConfigError(f"YAML nested more than {MAX_DEPTH} levels deep", key=source) from None


# YAML 1.1's printable characters (PyYAML's reader.Reader.NON_PRINTABLE): the rest make a text binary
_NOT_TEXT = re.compile("[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\U00010000-\U0010FFFF]")


# git's test for a binary file (xdiff-interface.c, buffer_is_binary): a NUL in the first 8,000 bytes.
# A .png, .zip, .jpg or .pdf has one within a few bytes; UTF-8 and Latin-1 text never does. A UTF-16
# text (Windows' "Unicode", with its byte order mark) has many but is not called binary.
BINARY_PROBE_BYTES = 8000


def is_binary(data: bytes) -> bool:
    """Whether `data` is a binary file rather than text, by git's rule."""
    return b"\0" in data[:BINARY_PROBE_BYTES] and not data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))


def yaml_text(data: bytes, *, source: str) -> str:
    """An uploaded file's bytes as YAML text, or an InvalidYaml saying it is not a text file and where.

    The first byte that is not UTF-8, or the first control character YAML refuses, is named with its
    byte offset and line, and a binary file (a .png or .zip uploaded by mistake: `is_binary`) is said
    to be one; PyYAML's own message for it named its internals ('control characters are not allowed
    in "<unicode string>", position 0').
    """
    text, bad = _first_not_text(data)
    if bad is None:
        return text
    raise _not_text(data, *bad, source=source)


def refuse_binary(data: bytes, *, source: str) -> None:
    """An InvalidYaml as `yaml_text` words it when `data` is a binary file; nothing for any text.

    For a reader with its own words for text that is not UTF-8 (`ctxi --config`).
    """
    if is_binary(data):
        _, bad = _first_not_text(data)  # a NUL is a control character, so a binary file always has one
        raise _not_text(data, *(bad or (data.index(b"\0"), "a NUL byte")), source=source)


def _first_not_text(data: bytes) -> tuple[str, tuple[int, str] | None]:
    """The UTF-8 text of `data` up to its first byte that is not text, and that byte's offset and name."""
    try:
        text = data.decode("utf-8")
        bad_byte = None
    except UnicodeDecodeError as exc:
        text, bad_byte = data[:exc.start].decode("utf-8"), exc.start
    found = _NOT_TEXT.search(text)
    if found is not None:
        return text, (len(text[:found.start()].encode("utf-8")), f"a control character (0x{ord(found.group()):02x})")
    if bad_byte is not None:
        return text, (bad_byte, f"a byte that is not UTF-8 (0x{data[bad_byte]:02x})")
    return text, None


def _not_text(data: bytes, offset: int, what: str, *, source: str) -> InvalidYaml:
    line = data.count(b"\n", 0, offset) + 1
    kind = "a binary file, not a text YAML file" if is_binary(data) else "not a text YAML file"
    return InvalidYaml(f"{kind}: {what} at byte {offset:,} (line {line:,})", key=source)


def _control(text: str, position: int) -> str:
    """Where a control character is in `text`, for a person: "a control character (0x07) at line 2, column 5"."""
    line = text.count("\n", 0, position) + 1
    column = position - (text.rfind("\n", 0, position) + 1) + 1
    char = text[position] if 0 <= position < len(text) else ""
    code = f" (0x{ord(char):02x})" if char else ""
    return f"a control character{code} at line {line:,}, column {column:,}"


def _at(exc: yaml.MarkedYAMLError) -> str:
    mark = exc.problem_mark or exc.context_mark
    return f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""


def _where(exc: yaml.MarkedYAMLError) -> str:
    mark = exc.problem_mark or exc.context_mark
    return f"line {mark.line + 1}: " if mark is not None else ""


def _check_events(text: str, source: str) -> None:
    """Depth and alias expansion, from the parser's events, before anything is built."""
    budget = max(len(text), MIN_VALUE_BUDGET)
    sizes: dict[str, int] = {}  # values an anchor stands for, once its node is complete
    open_nodes: list[list[Any]] = []  # [anchor, values so far] of each open mapping/sequence
    done = 0  # values in closed top-level nodes
    for event in yaml.parse(text, Loader=_LOADER):
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            if len(open_nodes) >= MAX_DEPTH:
                raise ConfigError(f"line {event.start_mark.line + 1}: YAML nested more than {MAX_DEPTH} levels deep "
                                  "(a config is a few levels deep)", key=source)
            open_nodes.append([event.anchor, 1])
            continue
        if isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            anchor, count = open_nodes.pop()
            if anchor is not None:
                sizes[anchor] = count
        elif isinstance(event, yaml.ScalarEvent):
            count = 1
            if event.anchor is not None:
                sizes[event.anchor] = 1
        elif isinstance(event, yaml.AliasEvent):
            if any(node[0] == event.anchor for node in open_nodes):
                raise ConfigError(f"line {event.start_mark.line + 1}: the alias *{event.anchor} refers to a value that "
                                  "contains it (a recursive structure)", key=source)
            count = sizes.get(event.anchor, 1)  # an unknown anchor: the loader says so
            if done + count + sum(node[1] for node in open_nodes) > budget:
                raise ConfigError(f"line {event.start_mark.line + 1}: YAML aliases expand the config beyond "
                                  f"{budget:,} values (alias *{event.anchor})", key=source)
        else:
            continue
        if open_nodes:
            open_nodes[-1][1] += count
        else:
            done += count


def check_document(doc: Any, *, source: str) -> None:
    """A ConfigError for nesting beyond MAX_DEPTH or a UTF-16 surrogate in any key or text of `doc`.

    Iterative (no recursion) and read-only, once over the document.
    """
    stack: list[tuple[Any, str, int]] = [(doc, "", 0)]  # (value, dotted path, depth)
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, str):
            _text(value, path or source)
        elif isinstance(value, (dict, list, tuple)):
            if depth >= MAX_DEPTH:
                raise ConfigError(f"nested more than {MAX_DEPTH} levels deep (a config is a few levels deep)",
                                  key=path or source)
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for k, v in items:
                key = f"{path}.{k}" if path else str(k)
                if isinstance(k, str):
                    _text(k, key)
                stack.append((v, key, depth + 1))


def _text(value: str, key: str) -> None:
    found = _SURROGATE.search(value)
    if found is not None:
        raise ConfigError(f"holds a UTF-16 surrogate ({ascii(found.group())[1:-1]} at character {found.start():,}), "
                          "which is not text", key=key[:200])


__all__ = ["BINARY_PROBE_BYTES", "InvalidYaml", "MAX_DEPTH", "MIN_VALUE_BUDGET", "check_document", "is_binary",
           "load_yaml", "refuse_binary", "yaml_text"]
