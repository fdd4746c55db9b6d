"""Image tokens from the picture's size: header parsing and the providers' published rules."""

from __future__ import annotations

import base64
import io

import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from PIL import Image  # a Streamlit dependency: real files to read the headers of

from engine.tokens.counters import get_counter
from engine.tokens.images import (
    UNKNOWN_IMAGE_TOKENS,
    anthropic_image_tokens,
    block_image_data,
    image_size,
    image_tokens,
    openai_image_tokens,
)


def picture(fmt: str, size: tuple[int, int], **save: object) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (200, 30, 30)).save(out, format=fmt, **save)
    return out.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.mark.parametrize("fmt, save", [
    ("PNG", {}), ("GIF", {}), ("JPEG", {}), ("WEBP", {"lossless": True}), ("WEBP", {"lossless": False}),
])
def test_sizes_are_read_from_real_headers(fmt: str, save: dict[str, object]) -> None:
    assert image_size(picture(fmt, (1366, 639), **save)) == (1366, 639)


def test_a_jpeg_frame_behind_a_large_exif_block_is_found() -> None:
    exif = Image.Exif()
    exif[0x010E] = "x" * 40_000  # ImageDescription: a 40 kB APP1 segment before the frame header
    assert image_size(picture("JPEG", (800, 600), exif=exif)) == (800, 600)


def test_unknown_or_broken_data_has_no_size() -> None:
    assert image_size(b"") is None
    assert image_size(b"\x89PNG\r\n\x1a\n") is None  # signature only
    assert image_size(b"BM" + b"\0" * 40) is None  # BMP: not read
    assert image_size(b"\xff\xd8\xff\xe0\x00\x10JFIF") is None  # JPEG cut before its frame


def test_documented_examples() -> None:
    # Anthropic, Vision: width * height / 750; 1000x1000 is about 1334, 1092x1092 (1:1 max) about 1590
    assert anthropic_image_tokens(1000, 1000) == 1334
    assert anthropic_image_tokens(1092, 1092) == 1590
    # larger images are scaled down to at most ~1,600 tokens and a 1568 px long edge
    assert 1590 <= anthropic_image_tokens(4000, 3000) <= 1600
    assert anthropic_image_tokens(3000, 200) == anthropic_image_tokens(1568, 104)
    # OpenAI, gpt-4o vision pricing: 1024x1024 high detail = 765, 2048x4096 = 1105, low detail = 85
    assert openai_image_tokens(1024, 1024) == 765
    assert openai_image_tokens(2048, 4096) == 1105
    assert openai_image_tokens(4096, 4096, detail="low") == 85


def test_payloads_in_every_block_shape() -> None:
    png = b64(picture("PNG", (1000, 1000)))
    shapes = [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}"}},
        {"type": "input_image", "image_url": f"data:image/png;base64,{png}"},
        {"type": "image", "base64": png, "mime_type": "image/png"},
        {"type": "image", "source_type": "base64", "data": png, "mime_type": "image/png"},
    ]
    for block in shapes:
        assert block_image_data(block) is not None, block
        assert image_tokens(block, "anthropic") == 1334
        assert image_tokens(block, "openai") == 765
    remote = {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}
    assert block_image_data(remote) is None and image_tokens(remote, "openai") == UNKNOWN_IMAGE_TOKENS
    low = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}", "detail": "low"}}
    assert image_tokens(low, "openai") == 85


def test_counters_price_a_screenshot_by_its_size() -> None:
    shot = b64(picture("PNG", (1366, 639)))
    block = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": shot}}
    result = ToolMessage([{"type": "text", "text": "ok"}, block], tool_call_id="t1", name="screenshot")
    claude = get_counter(framing="anthropic").breakdown(result)["tool_results"]
    plain = get_counter(framing="anthropic").breakdown(ToolMessage("ok", tool_call_id="t1", name="screenshot"))
    assert claude - plain["tool_results"] == anthropic_image_tokens(1366, 639) == 1164
    human = HumanMessage([{"type": "image_url", "image_url": {"url": f"data:image/png;base64,{shot}"}}])
    assert get_counter().breakdown(human)["human"] == 3 + openai_image_tokens(1366, 639) == 3 + 1105  # 3 x 2 tiles
