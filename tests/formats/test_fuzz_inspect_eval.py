"""Issue 11: hostile Inspect AI `.eval` zip archives (engine/formats/inspect_ai_log.py) give one line, in bounded memory.

tests/formats/test_inspect_ai.py mutates the JSON inside a sample and tests/safety fuzzes the
`.json` log; this file attacks the zip itself, from the real `.eval` logs of inspect_ai's own
tests (or a hand-made one when the traces are absent): random bytes overwritten or the archive
cut, members dropped, renamed (`../`, absolute, a directory, a duplicate, a huge epoch), of the
wrong type (a list header, invalid JSON, not UTF-8, a BOM alone), a huge header.json, a field of
a sample or of the header given a wrong type, members compressed with bzip2 or LZMA or flagged as
encrypted, and zip bombs: a member that inflates far past the file limit, and headers that
declare sizes they do not have. Listing and loading must give a valid Thread (which inspects)
or one ThreadLoadError line naming the file, never a traceback; the loads run with a 2 MB file
limit so every bomb is past it.

Examples: CTXI_FUZZ_EXAMPLES (default 12, so the whole suite stays fast; e.g. CTXI_FUZZ_EXAMPLES=500
for a longer hunt).
"""

from __future__ import annotations

import io
import json
import os
import struct
import tracemalloc
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.base.errors import ThreadLoadError, ThreadNotFoundError
from engine.formats import list_threads, load_thread
from engine.recorded.inspect import inspect_thread
from engine.tokens.counters import TiktokenCounter
from tests.conftest import TRACES
from tests.formats.mutations import WRONG_VALUES, mutate, paths

EXAMPLES = int(os.environ.get("CTXI_FUZZ_EXAMPLES", "12"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
NAME = "hostile.eval"
LIMIT = 2 * 1024 * 1024  # the file limit the loads run with (--max-bytes): every bomb below is past it
REAL = ("inspect/2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval", "inspect/log_message_deduplication.eval")

Members = list[tuple[str, bytes, int]]  # (name, bytes, compression method), in archive order


def hand_made() -> Members:
    sample = {"id": "a", "epoch": 1, "input": "Fix the bug.", "target": "", "attachments": {},
              "messages": [{"role": "user", "content": "Fix the bug.", "id": "u0"},
                           {"role": "assistant", "content": "done", "id": "a1"}],
              "events": [{"event": "model", "model": "m", "input": [], "tools": [],
                          "output": {"choices": [{"message": {"role": "assistant", "content": "done", "id": "a1"}}],
                                     "usage": {"input_tokens": 5, "output_tokens": 1, "total_tokens": 6}}}]}
    header = {"version": 2, "status": "success", "eval": {"task": "fix", "task_id": "t", "model": "openai/gpt-4o"}}
    return [("header.json", json.dumps(header).encode(), zipfile.ZIP_DEFLATED),
            ("samples/a_epoch_1.json", json.dumps(sample).encode(), zipfile.ZIP_DEFLATED),
            ("summaries.json", json.dumps([{"id": "a", "epoch": 1, "input": "Fix the bug."}]).encode(), zipfile.ZIP_DEFLATED)]


def members_of(path: Path) -> Members:
    with zipfile.ZipFile(path) as zf:
        return [(i.filename, zf.read(i), i.compress_type) for i in zf.infolist()]


@pytest.fixture(scope="module")
def archives() -> list[Members]:
    found = [members_of(TRACES / rel) for rel in REAL if (TRACES / rel).is_file()]
    return [*found, hand_made()]


def pack(members: Members, flags: dict[str, int] | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data, method in members:
            info = zipfile.ZipInfo(name, date_time=(2025, 1, 1, 0, 0, 0))
            info.compress_type = method
            info.flag_bits |= (flags or {}).get(name, 0)
            zf.writestr(info, data)
    return buf.getvalue()


def set_declared_size(blob: bytes, size: int, only: str | None = None) -> bytes:
    """The uncompressed size of every entry (or of the one named `only`), in its local and central
    headers, overwritten with `size` (32 bits): headers that lie."""
    out = bytearray(blob)
    # (signature, offset of the uncompressed size, offset of the name length, offset of the name)
    for magic, size_at, length_at, name_at in ((b"PK\x03\x04", 22, 26, 30), (b"PK\x01\x02", 24, 28, 46)):
        at = out.find(magic)
        while at != -1:
            (length,) = struct.unpack("<H", out[at + length_at:at + length_at + 2])
            if only is None or out[at + name_at:at + name_at + length] == only.encode():
                out[at + size_at:at + size_at + 4] = struct.pack("<I", size & 0xFFFFFFFF)
            at = out.find(magic, at + 4)
    return bytes(out)


# -- what a member may become -------------------------------------------------------------------

BOMB = b" " * (40 * 1024 * 1024)  # 40 MB of JSON whitespace: deflates to ~40 kB
NAMES = st.sampled_from([
    "../header.json", "/header.json", "header.json/", "samples/../../etc/passwd_epoch_1.json", "samples/a/../b_epoch_1.json",
    "samples/x_epoch_99999999999999999999999.json", "samples/_epoch_1.json", "samples/" + "n" * 300 + "_epoch_1.json",
    "samples/a_epoch_1.json", "summaries.json", "header.json", "_journal/start.json", "C:\\header.json", "samples/é_epoch_1.json"])
safe_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
WRONG_MEMBERS = st.sampled_from([
    b"", b"\xef\xbb\xbf", b"[]", b"null", b"1", b'"header"', b"{", b"\xff\xfe\x00", b'{"eval": []}', b'{"version": 2}',
    b"[" * 100_000 + b"]" * 100_000, json.dumps({"version": 2, "eval": {"task": "t", "model": "m"}, "pad": "h" * (3 << 20)}).encode(),
    json.dumps([{"id": "a", "epoch": "1"}] * 20_000).encode(), json.dumps({"id": [], "epoch": -1}).encode(),
]) | st.binary(max_size=64) | st.recursive(st.none() | st.booleans() | st.integers() | safe_text,
                                           lambda c: st.lists(c, max_size=4) | st.dictionaries(safe_text, c, max_size=4),
                                           max_leaves=15).map(lambda v: json.dumps(v).encode())


def draw_archive(data: st.DataObject, members: Members) -> bytes:
    members = list(members)
    flags: dict[str, int] = {}
    declared: int | None = None
    for _ in range(data.draw(st.integers(min_value=1, max_value=3))):
        change = data.draw(st.sampled_from(["drop", "rename", "wrong", "field", "field", "method", "encrypted", "bomb",
                                            "declared", "duplicate"]))
        i = data.draw(st.integers(min_value=0, max_value=len(members) - 1)) if members else 0
        if not members:
            break
        name, blob, method = members[i]
        if change == "drop":
            del members[i]
        elif change == "rename":
            members[i] = (data.draw(NAMES), blob, method)
        elif change == "wrong":
            members[i] = (name, data.draw(WRONG_MEMBERS), method)
        elif change == "field":  # one field of the member's JSON given a wrong type, or dropped
            try:
                doc = json.loads(blob)
            except ValueError:
                continue
            path = data.draw(st.sampled_from(paths(doc)[:4000]))
            members[i] = (name, json.dumps(mutate(doc, path, data.draw(WRONG_VALUES), data.draw(st.booleans()))).encode(),
                          method)
        elif change == "method":
            members[i] = (name, blob, data.draw(st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])))
        elif change == "encrypted":
            flags[name] = 0x1
        elif change == "bomb":
            members[i] = (name, BOMB if data.draw(st.booleans()) else blob + BOMB,
                          data.draw(st.sampled_from([zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2])))
        elif change == "declared":
            declared = data.draw(st.sampled_from([0, 1, 100, LIMIT + 1, 2**31, 2**32 - 1]))
        else:
            members.insert(i, (name, data.draw(WRONG_MEMBERS), method))
    blob = pack(members, flags)
    if declared is not None:
        blob = set_declared_size(blob, declared)
    if data.draw(st.integers(min_value=0, max_value=3)) == 0:  # random bytes overwritten, or the archive cut
        for _ in range(data.draw(st.integers(min_value=1, max_value=8))):
            at = data.draw(st.integers(min_value=0, max_value=max(len(blob) - 1, 0)))
            blob = blob[:at] + bytes([data.draw(st.integers(0, 255))]) + blob[at + 1:]
        if data.draw(st.booleans()):
            blob = blob[:data.draw(st.integers(min_value=0, max_value=len(blob)))]
    return blob


def check(call: Any) -> Any:
    """The call's result, or None after one ThreadLoadError line naming the file."""
    try:
        return call()
    except (ThreadLoadError, ThreadNotFoundError) as exc:
        text = str(exc)
        assert "\n" not in text and "Traceback" not in text, text
        assert text.startswith((NAME + ", ", NAME + ": ")), text  # without a format when nothing recognised it
        assert len(text) <= 1000, f"{len(text):,} characters: {text[:300]}"
        assert "validation error" not in text and "pydantic.dev" not in text, text
        return None


def load_everything(blob: bytes) -> None:
    for forced in (None, "inspect_ai"):
        refs = check(lambda forced=forced: list_threads(data=blob, name=NAME, format=forced, max_bytes=LIMIT))
        ids = [None] + [r.thread_id for r in (refs or [])[:2]]
        for tid in ids:
            thread = check(lambda tid=tid, forced=forced: load_thread(data=blob, name=NAME, format=forced,
                                                                      thread_id=tid, max_bytes=LIMIT))
            if thread is not None:
                inspect_thread(thread, TiktokenCounter())


@FUZZ
@given(data=st.data())
def test_hostile_eval_archives_give_a_thread_or_one_line(archives: list[Members], data: st.DataObject) -> None:
    load_everything(draw_archive(data, archives[data.draw(st.integers(min_value=0, max_value=len(archives) - 1))]))


def test_the_unchanged_archives_load(archives: list[Members]) -> None:
    for members in archives:
        blob = pack(members)
        refs = list_threads(data=blob, name=NAME, max_bytes=LIMIT)
        assert refs and load_thread(data=blob, name=NAME, max_bytes=LIMIT).source_format == "inspect_ai"


# -- zip bombs: refused while inflating, in bounded memory ---------------------------------------

@pytest.mark.parametrize("method", [zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
@pytest.mark.parametrize("lie", [None, 100])
def test_a_zip_bomb_is_refused_in_bounded_memory(method: int, lie: int | None) -> None:
    """A 40 MB sample (or one whose headers say 100 bytes) under an 2 MB limit: one line, and what
    the load allocated stays near the limit, not the member's size."""
    header, sample, summaries = hand_made()
    blob = pack([header, ("samples/a_epoch_1.json", sample[1] + BOMB, method), summaries])
    assert len(blob) < 300_000
    if lie is not None:
        blob = set_declared_size(blob, lie, only="samples/a_epoch_1.json")
    tracemalloc.start()
    try:
        with pytest.raises(ThreadLoadError) as info:
            load_thread(data=blob, name=NAME, thread_id="a:epoch1", max_bytes=LIMIT)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    text = str(info.value)
    assert "\n" not in text and text.startswith(NAME + ", format inspect_ai")
    assert peak < 4 * LIMIT, f"{peak:,} bytes allocated for a {len(blob):,}-byte archive"
    if method == zipfile.ZIP_DEFLATED and lie is None:
        assert text == (f"{NAME}, format inspect_ai, at samples/a_epoch_1.json: refusing to decompress: the member "
                        f"declares {len(sample[1]) + len(BOMB):,} bytes, above the {LIMIT:,}-byte limit for one file "
                        "(--max-bytes; a zip bomb or a log too large to read)")
    elif method == zipfile.ZIP_DEFLATED:
        assert info.value.location == "samples/a_epoch_1.json" and "corrupt member" in text  # cut at 100 bytes: bad CRC
    else:
        name = "bzip2" if method == zipfile.ZIP_BZIP2 else "LZMA"
        assert text == (f"{NAME}, format inspect_ai, at samples/a_epoch_1.json: the member is compressed with {name}; "
                        "only stored or deflated members are read (Inspect writes deflate)")


def test_a_member_that_inflates_past_its_declared_size_stops_at_the_limit() -> None:
    """Headers that declare the limit exactly while the data inflates to 40 MB: the read stops there."""
    header, sample, summaries = hand_made()
    member = "samples/a_epoch_1.json"
    blob = set_declared_size(pack([header, (member, BOMB, zipfile.ZIP_DEFLATED), summaries]), LIMIT, only=member)
    with pytest.raises(ThreadLoadError) as info:
        load_thread(data=blob, name=NAME, thread_id="a:epoch1", max_bytes=LIMIT)
    # zipfile stops at the declared size and then finds the CRC wrong; the 40 MB were never inflated
    assert (info.value.location, info.value.message) == (member, "corrupt member in the .eval zip archive (Bad CRC-32 "
                                                                 f"for file '{member}')")
