"""Keep API keys out of everything a user sees: error lines, pages, logs, saved threads and exports.

The engine never reads a key itself (provider packages read their own environment variables), but
a provider's error can quote what it was sent: a 401 body with the key, a proxy echoing the
`Authorization` header, an exception whose text includes the request's headers. Every message that
comes from a model provider goes through `redact` before it is shown, logged or saved.

Three rules, applied in order:
1. header and field values that carry credentials (`Authorization: Bearer …`, `x-api-key: …`,
   `api_key='…'`) are replaced whatever their shape;
2. the value of every environment variable whose name says it holds a secret (`is_secret_name`:
   `*_API_KEY`, `*_TOKEN`, `*_SECRET`, `*_PASSWORD`, `*_KEY`) is replaced wherever it appears, and so is any run
   of FRAGMENT_CHARS (12) or more of its characters (an error that quotes the key cut short, or
   glued to other text);
3. strings shaped like the providers' published key formats are replaced (OpenAI `sk-…` and
   `sk-proj-…`, Anthropic `sk-ant-…`, xAI `xai-…`, Groq `gsk_…`, Google `AIza…`, Hugging Face
   `hf_…`, GitHub `ghp_…`/`github_pat_…`, AWS access key ids `AKIA…`).
Rules 2 and 3 also hold for a key with invisible characters (zero-width spaces, joiners, a soft hyphen)
between its characters: they are matched on the text without them (`_through_invisible`).

What a model writes is redacted the same way before it is stored, shown or printed (a compromised or
misconfigured endpoint, or a proxy, can echo the key it was sent into the reply): `redact_message`
for a reply the engine records (live runs, the summarizer's text), and `model_output_redaction()`, a
LangChain callback on every chat model call made inside it (a replay, a live run), for the replies
of models the engine does not call itself (a user's middleware with its own model).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

REDACTED = "[redacted]"
# Values shorter than this are not treated as secrets (an empty or "1" token would wipe out text).
MIN_SECRET_CHARS = 8
# A run of this many characters of a secret is redacted wherever it appears (#38.5); a run this long
# of a random key does not occur in ordinary text by chance.
FRAGMENT_CHARS = 12
_ANCHOR = FRAGMENT_CHARS // 2  # every run of FRAGMENT_CHARS covers one anchor at a multiple of this

# A name says it holds a secret by one of its `_`-separated words (`GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`,
# `DB_PASSWORD`), `API_KEY`/`APIKEY` anywhere, or `KEY` as its last word. Words inside another word do not
# count (`TIKTOKEN_CACHE_DIR` is tiktoken's cache folder, `TOKENIZERS_PARALLELISM` a flag: redacting their
# values blanked every path under the cache folder out of error lines), and neither does a name that ends
# in a location word (`RAY_AUTH_TOKEN_PATH`, `PASSWORD_FILE`: the path is not the secret).
_SECRET_WORDS = frozenset({"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "CREDENTIALS"})
_LOCATION_WORDS = frozenset({"DIR", "DIRECTORY", "PATH", "FILE", "HOME", "FOLDER"})
_API_KEY = re.compile(r"API_?KEY", re.IGNORECASE)


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name says its value is a secret (see `_SECRET_WORDS`)."""
    words = [w for w in re.split(r"[_\-]", name.upper()) if w]
    if not words or words[-1] in _LOCATION_WORDS:
        return False
    return bool(_API_KEY.search(name)) or words[-1] == "KEY" or any(w in _SECRET_WORDS for w in words)

# `Authorization: Bearer X`, `"authorization": "Basic X"`, `x-api-key: X`, `api_key='X'`, `apiKey=X`
_CREDENTIAL_FIELD = re.compile(
    r"""(?P<name>\b(?:proxy-)?authorization|\bx-api-key|\bx-goog-api-key|\bapi[-_]?key|\baccess[-_]?token)"""
    r"""(?P<sep>["']?\s*[:=]\s*["']?)(?P<scheme>(?:bearer|basic|token)\s+)?(?P<value>[^\s"',;}\])]+)""",
    re.IGNORECASE,
)
# Keys are long random strings, so each shape needs a digit in it: `sk-learn-experiment-results` stays.
_KEY_SHAPES = re.compile(
    r"\b(?:sk|rk|pk)[-_](?=[A-Za-z*_-]*\d)[A-Za-z0-9*_-]{16,}"  # OpenAI sk-, sk-proj-; Anthropic sk-ant-
    r"|\bxai-(?=[A-Za-z]*\d)[A-Za-z0-9]{20,}|\bgsk_(?=[A-Za-z]*\d)[A-Za-z0-9]{20,}"
    r"|\bAIza(?=[A-Za-z_-]*\d)[0-9A-Za-z_-]{30,}|\bhf_(?=[A-Za-z]*\d)[A-Za-z0-9]{20,}"
    r"|\bgh[pousr]_(?=[A-Za-z]*\d)[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}|\bAKIA[0-9A-Z]{16}\b"
)


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """The values of the environment variables whose names say they hold a secret, longest first."""
    env = os.environ if environ is None else environ
    values = {v for k, v in env.items() if v and len(v) >= MIN_SECRET_CHARS and is_secret_name(k)}
    return sorted(values, key=len, reverse=True)  # a key that contains another is replaced whole


def redact(text: str, environ: Mapping[str, str] | None = None) -> str:
    """`text` with every secret replaced by `[redacted]` (the rules in the module docstring)."""
    if not text:
        return text
    text = _CREDENTIAL_FIELD.sub(lambda m: f"{m.group('name')}{m.group('sep')}{m.group('scheme') or ''}{REDACTED}",
                                 text)
    values = secret_values(environ)
    if _INVISIBLE.search(text):
        text = _through_invisible(text, values)
    for value in values:
        if value in text:
            text = text.replace(value, REDACTED)
    spans = [span for value in values if len(value) >= FRAGMENT_CHARS for span in _fragments(text, value)]
    if spans:
        text = _replace_spans(text, spans)
    return _KEY_SHAPES.sub(REDACTED, text)


# Characters that draw nothing (zero-width spaces and joiners, the word joiner, the soft hyphen,
# bidirectional marks, the BOM): a key with them between its characters reads, and copies, as the key,
# but matched character by character it was no fragment at all.
_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff]")


def _through_invisible(text: str, values: list[str]) -> str:
    """`text` with the rules 2 and 3 applied as if its invisible characters were not there: a span found in
    the visible characters is replaced in `text` from its first character to its last, with whatever
    invisible characters are between them."""
    keep = [i for i, ch in enumerate(text) if not _INVISIBLE.match(ch)]
    visible = "".join(text[i] for i in keep)
    spans: list[tuple[int, int]] = []
    for value in values:
        at = visible.find(value)
        while at >= 0:
            spans.append((at, at + len(value)))
            at = visible.find(value, at + len(value))
        if len(value) >= FRAGMENT_CHARS:
            spans += _fragments(visible, value)
    spans += [m.span() for m in _KEY_SHAPES.finditer(visible)]
    if not spans:
        return text
    return _replace_spans(text, [(keep[lo], keep[hi - 1] + 1) for lo, hi in spans if hi > lo])


def _fragments(text: str, secret: str) -> list[tuple[int, int]]:
    """Spans of `text` that are runs of at least FRAGMENT_CHARS characters of `secret`, each as long as it goes.

    Any such run contains the `_ANCHOR` characters of `secret` that start at a multiple of `_ANCHOR`,
    so only those anchors are searched (`str.find`, linear) and each hit is extended both ways.
    """
    spans: list[tuple[int, int]] = []
    for at in range(0, len(secret) - _ANCHOR + 1, _ANCHOR):
        anchor = secret[at:at + _ANCHOR]
        i = text.find(anchor)
        while i >= 0:
            lo, s_lo = i, at
            while lo > 0 and s_lo > 0 and text[lo - 1] == secret[s_lo - 1]:
                lo, s_lo = lo - 1, s_lo - 1
            hi, s_hi = i + _ANCHOR, at + _ANCHOR
            while hi < len(text) and s_hi < len(secret) and text[hi] == secret[s_hi]:
                hi, s_hi = hi + 1, s_hi + 1
            if hi - lo >= FRAGMENT_CHARS:
                spans.append((lo, hi))
                i = text.find(anchor, max(i + 1, hi))  # past this run: a repeated secret stays linear
            else:
                i = text.find(anchor, i + 1)
    return spans


def _replace_spans(text: str, spans: list[tuple[int, int]]) -> str:
    merged: list[list[int]] = []
    for lo, hi in sorted(spans):
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    parts: list[str] = []
    last = 0
    for lo, hi in merged:
        parts += [text[last:lo], REDACTED]
        last = hi
    parts.append(text[last:])
    return "".join(parts)


# -- what a model writes -----------------------------------------------------------------------------
MAX_VALUE_DEPTH = 100


def redact_value(value: Any, depth: int = 0) -> Any:
    """A JSON-like value (a reply's content blocks, tool call arguments, metadata) with every text redacted."""
    if isinstance(value, str):
        return redact(value)
    if depth > MAX_VALUE_DEPTH and isinstance(value, (dict, list, tuple)):
        return REDACTED  # no model writes this deep; nothing of it is kept unredacted
    if isinstance(value, dict):
        return {k: redact_value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact_value(v, depth + 1) for v in value)
    return value


def redact_message(message: Any) -> Any:
    """A model's reply (a LangChain message) without the keys the process holds in any text it carries:
    content, tool call arguments, additional_kwargs, response_metadata. In place; returned."""
    for name in ("content", "additional_kwargs", "response_metadata"):
        value = getattr(message, name, None)
        if value:
            setattr(message, name, redact_value(value))
    for name in ("tool_calls", "invalid_tool_calls"):
        calls = getattr(message, name, None)
        if calls:
            setattr(message, name, [redact_value(call) for call in calls])
    return message


_MODEL_OUTPUT: ContextVar[Any] = ContextVar("ctxi_model_output_redaction", default=None)
_HOOKED: list[bool] = []


@contextmanager
def model_output_redaction() -> Iterator[None]:
    """Inside: every LangChain chat model's reply is redacted (`redact_message`) before its caller sees it.

    A callback handler that LangChain adds to every callback manager it configures in this context
    (`langchain_core.tracers.context.register_configure_hook`); its `on_llm_end` receives the very
    generations `BaseChatModel.generate` returns, so the redacted reply is what the agent, a middleware
    or a summarizer gets. (A streamed reply's chunks pass before it: what the engine stores of one is
    redacted where it is recorded.)
    """
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.tracers.context import register_configure_hook

    class _Redact(BaseCallbackHandler):
        run_inline = True  # in the model's own call, before its result is returned
        raise_error = True

        def on_llm_end(self, response: Any, **kwargs: Any) -> None:
            for generations in response.generations:
                for generation in generations:
                    message = getattr(generation, "message", None)
                    if message is not None:
                        redact_message(message)
                    elif isinstance(getattr(generation, "text", None), str):
                        generation.text = redact(generation.text)

    if not _HOOKED:
        register_configure_hook(_MODEL_OUTPUT, True)
        _HOOKED.append(True)
    token = _MODEL_OUTPUT.set(_Redact())
    try:
        yield
    finally:
        _MODEL_OUTPUT.reset(token)


def one_line(text: str, limit: int = 300) -> str:
    """A message as one line of at most `limit` characters (whitespace collapsed), secrets redacted."""
    flat = " ".join(redact(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def describe_error(exc: BaseException, limit: int = 300) -> str:
    """`Type: message` of an exception in one redacted line (a provider's error text may quote a key)."""
    text = str(exc) or repr(exc)
    return one_line(f"{type(exc).__name__}: {text}", limit)


__all__ = ["FRAGMENT_CHARS", "REDACTED", "describe_error", "model_output_redaction", "one_line", "redact",
           "redact_message", "redact_value", "secret_values"]
