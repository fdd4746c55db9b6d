"""Unpaired UTF-16 surrogates in text from outside: found and replaced with U+FFFD.

JSON may spell a code point D800–DFFF on its own (`"\\ud800"`): RFC 8259 §8.2 allows the syntax and
calls what a reader does with it unpredictable. Python's `json.loads` (and YAML's `\\uXXXX` /
`\\UXXXXXXXX` escapes) hand it back as a one-character string that no UTF-8 encoder accepts, so the
tokenizer, a JSON report or the dashboard failed on it ("surrogates not allowed"). A paired escape
(`"\\ud83d\\ude00"`) is one astral character and stays. Text from a transcript is untrusted: each
unpaired surrogate becomes U+FFFD REPLACEMENT CHARACTER, what a UTF-8 decoder puts in place of an
ill-formed sequence (The Unicode Standard, §3.9 "U+FFFD Substitution of Maximal Subparts"), and the
caller says that it happened.
"""

from __future__ import annotations

import re
from typing import Any

LONE_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"
# JSON and YAML spell a surrogate only as an escape: `\uD800` (JSON, YAML), `\U0000D800` (YAML). Text
# decoded twice (JSON inside a JSON string: OpenAI `arguments`, OTel attributes) spells it after the first
# decode, and that first decode can make each character of `\ud800` from an escape of its own
# (`\u005cud800`, `\\\u0075d800`, YAML's `\x5c`): every path to a surrogate passes through one of
# these escapes in the bytes, however deep the nesting. Bytes without any decode to none, as long as the
# reader does not join pieces before decoding them (a stream's partial JSON) or decode something else
# first (base64, gzip): engine.formats.surrogates lists those readers.
_ESCAPES = (b"\\u", b"\\U", b"\\x")


def may_hold_surrogates(data: bytes) -> bool:
    """False when text decoded (strictly) from `data` by JSON or YAML readers, at any depth of JSON text
    inside JSON strings, cannot hold a surrogate."""
    return any(escape in data for escape in _ESCAPES)


def scrub(text: str) -> str:
    """`text` with every unpaired surrogate replaced by U+FFFD (the same string when there is none)."""
    if text.isascii() or not LONE_SURROGATE.search(text):
        return text
    return LONE_SURROGATE.sub(REPLACEMENT, text)


class Scrubber:
    """Replaces unpaired surrogates in strings, dict keys and values, lists and tuples, in place where
    the container is mutable; counts what it replaced and remembers where it first did."""

    def __init__(self) -> None:
        self.replaced = 0
        self.first: str | None = None

    def text(self, value: str, place: str) -> str:
        if value.isascii():
            return value
        found = len(LONE_SURROGATE.findall(value))
        if not found:
            return value
        self.replaced += found
        if self.first is None:
            self.first = place
        return LONE_SURROGATE.sub(REPLACEMENT, value)

    def value(self, value: Any, place: str) -> Any:
        """`value` scrubbed: strings are new strings, dicts and lists are changed in place and returned."""
        kind = type(value)
        if kind is str:
            return self.text(value, place)
        if kind is dict or isinstance(value, dict):
            changed_keys = False
            for key, item in value.items():
                if isinstance(key, str) and not key.isascii() and LONE_SURROGATE.search(key):
                    changed_keys = True
                fixed = self.value(item, place)
                if fixed is not item:
                    value[key] = fixed
            if changed_keys:
                items = [(self.text(k, place) if isinstance(k, str) else k, v) for k, v in value.items()]
                value.clear()
                value.update(items)
            return value
        if kind is list or isinstance(value, list):
            for i, item in enumerate(value):
                fixed = self.value(item, place)
                if fixed is not item:
                    value[i] = fixed
            return value
        if kind is tuple:
            fixed_items = tuple(self.value(item, place) for item in value)
            return value if all(a is b for a, b in zip(fixed_items, value, strict=True)) else fixed_items
        if isinstance(value, str):  # a str subclass
            return self.text(str(value), place)
        return value


__all__ = ["LONE_SURROGATE", "REPLACEMENT", "Scrubber", "may_hold_surrogates", "scrub"]
