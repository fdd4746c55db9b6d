"""What an image block costs in tokens, from the size of the picture inside it.

A transcript keeps images as base64 (Anthropic `source.data`, an OpenAI `data:` URL, LangChain's
`base64`/`data`), so the width and height can be read from the first bytes of the file (PNG,
JPEG, GIF, WebP headers) without decoding the picture. The providers publish how a size becomes
tokens:

- Anthropic (Vision, "Evaluate image size"): tokens = width * height / 750, after the image is
  scaled down, keeping its aspect ratio, until its long edge is at most 1568 px and it costs at most
  about 1,600 tokens (newer models read larger images; this is the documented rule).
- OpenAI (gpt-4o and gpt-4.1 vision pricing): "low" detail costs 85; otherwise the image is scaled to
  fit 2048 x 2048, then its short side to 768, and it costs 85 + 170 per 512-px tile.

An image whose size cannot be read (a remote URL, a file id, an unknown format) costs the fixed
price LangChain's approximate counter charges.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import struct
from collections.abc import Mapping
from typing import Any

UNKNOWN_IMAGE_TOKENS = 85
# Enough of a file to reach a JPEG's frame header behind its EXIF block in most photos.
HEADER_BYTES = 96 * 1024

ANTHROPIC_MAX_EDGE = 1568
ANTHROPIC_MAX_TOKENS = 1600
ANTHROPIC_PIXELS_PER_TOKEN = 750
OPENAI_LOW_DETAIL = 85
OPENAI_PER_TILE = 170
OPENAI_TILE = 512

_DATA_URL = re.compile(r"^data:[^;,]*;base64,", re.IGNORECASE)


def image_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG, GIF, JPEG or WebP header; None when it cannot be read."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        width, height = struct.unpack(">II", data[16:24])
        return _valid(width, height)
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        width, height = struct.unpack("<HH", data[6:10])
        return _valid(width, height)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return _webp_size(data)
    if data[:2] == b"\xff\xd8":
        return _jpeg_size(data)
    return None


def _valid(width: int, height: int) -> tuple[int, int] | None:
    return (width, height) if width > 0 and height > 0 else None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 " and len(data) >= 30:
        width, height = struct.unpack("<HH", data[26:30])
        return _valid(width & 0x3FFF, height & 0x3FFF)
    if chunk == b"VP8L" and len(data) >= 25:
        bits = int.from_bytes(data[21:25], "little")
        return _valid((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
    if chunk == b"VP8X" and len(data) >= 30:
        return _valid(int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1)
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    """Walk the JPEG segments to the first start-of-frame marker, which holds the size."""
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # markers without a length
            i += 2
            continue
        length = struct.unpack(">H", data[i + 2 : i + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[i + 5 : i + 9])
            return _valid(width, height)
        i += 2 + length
    return None


def _head_of_base64(text: str) -> bytes:
    """The first HEADER_BYTES of a base64 payload (whitespace and a data: URL prefix allowed)."""
    text = _DATA_URL.sub("", text.strip(), count=1)
    chars = "".join(text[: HEADER_BYTES * 4 // 3 + 8].split())
    chars = chars[: len(chars) - len(chars) % 4]
    try:
        return base64.b64decode(chars, validate=False)
    except (binascii.Error, ValueError):
        return b""


def block_image_data(block: Mapping[str, Any]) -> str | None:
    """The base64 payload of an image block in any of the shapes transcripts use, else None."""
    source = block.get("source")
    if isinstance(source, Mapping) and source.get("type") == "base64" and isinstance(source.get("data"), str):
        return str(source["data"])  # Anthropic
    url = block.get("image_url")
    if isinstance(url, Mapping):
        url = url.get("url")  # OpenAI chat
    if isinstance(url, str) and _DATA_URL.match(url):
        return url  # OpenAI chat and Responses
    for key in ("base64", "data"):  # LangChain standard blocks
        value = block.get(key)
        if isinstance(value, str) and (key == "base64" or block.get("source_type") == "base64"):
            return value
    return None


def _detail(block: Mapping[str, Any]) -> str:
    url = block.get("image_url")
    detail = url.get("detail") if isinstance(url, Mapping) else block.get("detail")
    return detail if isinstance(detail, str) else "auto"


def anthropic_image_tokens(width: int, height: int) -> int:
    scale = min(1.0, ANTHROPIC_MAX_EDGE / max(width, height))
    scale = min(scale, math.sqrt(ANTHROPIC_MAX_TOKENS * ANTHROPIC_PIXELS_PER_TOKEN / (width * height)))
    w, h = max(1, int(width * scale)), max(1, int(height * scale))
    return math.ceil(w * h / ANTHROPIC_PIXELS_PER_TOKEN)


def openai_image_tokens(width: int, height: int, detail: str = "auto") -> int:
    if detail == "low":
        return OPENAI_LOW_DETAIL
    scale = min(1.0, 2048 / max(width, height))
    w, h = width * scale, height * scale
    scale = min(1.0, 768 / min(w, h))
    w, h = w * scale, h * scale
    tiles = math.ceil(w / OPENAI_TILE) * math.ceil(h / OPENAI_TILE)
    return OPENAI_LOW_DETAIL + OPENAI_PER_TILE * tiles


def image_tokens(block: Mapping[str, Any], framing: str) -> int:
    """Tokens of one image block for the provider `framing` names ("anthropic" or "openai")."""
    payload = block_image_data(block)
    size = image_size(_head_of_base64(payload)) if payload else None
    if size is None:
        return UNKNOWN_IMAGE_TOKENS
    if framing == "anthropic":
        return anthropic_image_tokens(*size)
    return openai_image_tokens(*size, detail=_detail(block))
