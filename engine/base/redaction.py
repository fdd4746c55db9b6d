"""Keep API keys out of everything a user sees: error lines, pages, logs, saved threads and exports.

The engine never reads a key itself (provider packages read their own environment variables), but
a provider's error can quote what it was sent: a 401 body with the key, a proxy echoing the
`Authorization` header, an exception whose text includes the request's headers. Every message that
comes from a model provider goes through `redact` before it is shown, logged or saved.

Three rules, applied in order:
1. header and field values that carry credentials (`Authorization: Bearer …`, `x-api-key: …`,
   `api_key='…'`) are replaced whatever their shape;
2. the value of every environment variable whose name says it holds a secret (`*_API_KEY`,
   `*_TOKEN`, `*_SECRET`, `*PASSWORD*`, `*_KEY`) is replaced wherever it appears;
3. strings shaped like the providers' published key formats are replaced (OpenAI `sk-…` and
   `sk-proj-…`, Anthropic `sk-ant-…`, xAI `xai-…`, Groq `gsk_…`, Google `AIza…`, Hugging Face
   `hf_…`, GitHub `ghp_…`/`github_pat_…`, AWS access key ids `AKIA…`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

REDACTED = "[redacted]"
# Values shorter than this are not treated as secrets (an empty or "1" token would wipe out text).
MIN_SECRET_CHARS = 8

_SECRET_NAME = re.compile(r"(API_?KEY|_KEY$|^KEY$|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)", re.IGNORECASE)
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
    values = {v for k, v in env.items() if v and len(v) >= MIN_SECRET_CHARS and _SECRET_NAME.search(k)}
    return sorted(values, key=len, reverse=True)  # a key that contains another is replaced whole


def redact(text: str, environ: Mapping[str, str] | None = None) -> str:
    """`text` with every secret replaced by `[redacted]` (the rules in the module docstring)."""
    if not text:
        return text
    text = _CREDENTIAL_FIELD.sub(lambda m: f"{m.group('name')}{m.group('sep')}{m.group('scheme') or ''}{REDACTED}",
                                 text)
    for value in secret_values(environ):
        if value in text:
            text = text.replace(value, REDACTED)
    return _KEY_SHAPES.sub(REDACTED, text)


def one_line(text: str, limit: int = 300) -> str:
    """A message as one line of at most `limit` characters (whitespace collapsed), secrets redacted."""
    flat = " ".join(redact(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def describe_error(exc: BaseException, limit: int = 300) -> str:
    """`Type: message` of an exception in one redacted line (a provider's error text may quote a key)."""
    text = str(exc) or repr(exc)
    return one_line(f"{type(exc).__name__}: {text}", limit)


__all__ = ["REDACTED", "describe_error", "one_line", "redact", "secret_values"]
