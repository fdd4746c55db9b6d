"""Reading an Inspect AI log: the `.eval` zip or the `.json` log, as a header plus samples.

An `.eval` file (Inspect's default log format since 0.3.46, `inspect_ai/log/_recorders/eval.py`) is a
zip of `header.json` (eval spec, plan, results, stats), one `samples/<id>_epoch_<n>.json` per sample
and epoch, `summaries.json` (id, epoch, input, target, scores per sample), `reductions.json` and a
`_journal/` written while the eval ran (`_journal/start.json` holds the header before results). The
`.json` log is one document `{version, status, eval, plan, results, stats, samples, reductions}`.

The zip is read from the bytes already in memory and never extracted (a member's name is only
matched, never used as a path, so `../` in it reaches nothing): members are decompressed one at a
time, each to at most the size a file may have (`--max-bytes`, `Source.max_bytes`) and all of them
to at most MAX_DECOMPRESSED_BYTES, checked against the declared sizes first and enforced while
inflating (the headers can lie). Only stored and deflated members are read: Inspect writes deflate
(`ZipFile(..., compression=ZIP_DEFLATED)`, log/_recorders/eval.py), and zipfile inflates deflate in
bounded steps but a bzip2 or LZMA chunk all at once (a 400-byte bzip2 member filled 600 MB on its
first 1 MB read). The member count is capped, so a zip bomb or a corrupt archive is one clear line.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
import zlib
from dataclasses import dataclass, field
from typing import Any

from engine.base.errors import ThreadLoadError
from engine.formats.jsonshape import Where, first_byte, json_type
from engine.formats.source import Source

FORMAT = "inspect_ai"
ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a local file header, or the end record of an empty zip
# Refuse archives that would inflate past this in total, or hold more members than a log can have
# (a log holds a few files per sample; 100k members is far past any real eval).
MAX_DECOMPRESSED_BYTES = 2 * 1024**3
MAX_MEMBERS = 100_000
# What the members read for one thread (header, summaries, the sample) may hold: JSON objects, counted
# as "{" bytes while inflating (an upper bound: a brace inside a string counts too) and refused before
# anything is parsed. Each object becomes a dict of a few hundred bytes, a message a LangChain object of
# ~1 KB: a 332 KB archive of 3 million tiny messages took 4.5 GB to inspect (issues 38.4, 39.6). A real
# sample holds thousands of messages and events; a million tiny messages (the bench) load in ~1.3 GB.
MAX_ARCHIVE_OBJECTS = 2_000_000
READ_CHUNK = 1024 * 1024
HEADER = "header.json"
JOURNAL_START = "_journal/start.json"
SUMMARIES = "summaries.json"
# Inspect names sample files `samples/{id}_epoch_{epoch}.json` (log/_recorders/eval.py, `_sample_filename`).
SAMPLE_NAME = re.compile(r"^samples/(?P<id>.+)_epoch_(?P<epoch>\d+)\.json$")


def is_zip(source: Source) -> bool:
    return source.data[:4] in ZIP_MAGIC


def _json_log_shape(doc: Any) -> bool:
    """An Inspect `.json` log: `eval` names a task, next to `version` and `samples`/`results`/`status`."""
    if not isinstance(doc, dict) or not isinstance(doc.get("eval"), dict):
        return False
    spec = doc["eval"]
    return (
        isinstance(doc.get("version"), int)
        and ("task" in spec or "task_id" in spec)
        and "model" in spec
        and any(k in doc for k in ("samples", "results", "status", "plan"))
    )


def sniff(source: Source) -> bool:
    if is_zip(source):
        try:
            with zipfile.ZipFile(io.BytesIO(source.data)) as zf:
                names = set(zf.namelist()[:MAX_MEMBERS])
        except (zipfile.BadZipFile, ValueError, EOFError, OSError):
            return False
        return HEADER in names or JOURNAL_START in names
    if first_byte(source) != b"{":
        return False
    return _json_log_shape(source.try_json())


@dataclass(frozen=True)
class SampleKey:
    """One sample and epoch: the thread id is `<sample id>:epoch<n>`."""

    sample_id: str
    epoch: int

    @property
    def thread_id(self) -> str:
        return f"{self.sample_id}:epoch{self.epoch}"


@dataclass
class EvalLog:
    """The log's header and its samples, read lazily from a zip or taken from a parsed document."""

    where: Where
    header: dict[str, Any]
    keys: list[SampleKey]
    summaries: dict[SampleKey, dict[str, Any]] = field(default_factory=dict)
    _zip: zipfile.ZipFile | None = None
    _members: dict[SampleKey, str] = field(default_factory=dict)
    _inline: dict[SampleKey, tuple[dict[str, Any], str]] = field(default_factory=dict)
    # What the archive may still inflate to (bytes, JSON objects), shared by every member read from it.
    _budget: list[int] = field(default_factory=lambda: [MAX_DECOMPRESSED_BYTES, MAX_ARCHIVE_OBJECTS])
    _member_limit: int = MAX_DECOMPRESSED_BYTES  # what one member may inflate to: the file limit

    def sample(self, key: SampleKey) -> tuple[dict[str, Any], str]:
        """The sample object and the JSON path prefix errors inside it are named with."""
        if key in self._inline:
            return self._inline[key]
        assert self._zip is not None
        member = self._members[key]
        doc = read_member_json(self._zip, member, self.where, self._budget, self._member_limit)
        return self.where.want_dict(doc, f"{member}: $", "a sample object"), f"{member}: $"


def _zip_error(where: Where, exc: BaseException) -> ThreadLoadError:
    detail = str(exc) or type(exc).__name__
    return ThreadLoadError(f"not a readable .eval zip archive ({detail})", path=where.label, format=where.format)


BOUNDED_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate"}
METHOD_NAMES = {zipfile.ZIP_BZIP2: "bzip2", zipfile.ZIP_LZMA: "LZMA", 9: "deflate64"}


def read_member(zf: zipfile.ZipFile, name: str, where: Where, budget: list[int],
                limit: int = MAX_DECOMPRESSED_BYTES) -> bytearray:
    """A member's bytes, inflating at most `limit` for it and the remaining `budget` for the archive:
    `[bytes, JSON objects]` (the objects counted as "{" bytes as each chunk inflates, so a member of
    millions of tiny objects is refused after reading about as many, before any is parsed)."""
    info = zf.getinfo(name)
    if info.compress_type not in BOUNDED_METHODS:
        method = METHOD_NAMES.get(info.compress_type, f"method {info.compress_type}")
        where.fail(name, f"the member is compressed with {method}; only stored or deflated members are read "
                   "(Inspect writes deflate)")
    cap = min(limit, budget[0])
    if info.file_size > cap:  # a quick refusal; the loop below enforces the cap whatever the header says
        where.fail(name, _too_big(info.file_size, limit, budget[0], declared=True))
    out = bytearray()
    objects = 0
    objects_left = budget[1] if len(budget) > 1 else None
    try:
        with zf.open(info) as fh:
            while chunk := fh.read(min(READ_CHUNK, cap + 1 - len(out))):
                out += chunk
                if len(out) > cap:
                    where.fail(name, _too_big(len(out), limit, budget[0], declared=False))
                if objects_left is not None:
                    objects += chunk.count(b"{")
                    if objects > objects_left:
                        where.fail(name, f"refusing to read: the archive expands to more than {MAX_ARCHIVE_OBJECTS:,} "
                                   f"JSON objects ({objects:,} in this member's first {len(out):,} bytes; a zip bomb "
                                   "of tiny messages, or a log too large to read)")
        budget[0] -= len(out)
        if objects_left is not None:
            budget[1] -= objects
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, RuntimeError, ValueError) as exc:
        raise ThreadLoadError(f"corrupt member in the .eval zip archive ({exc or type(exc).__name__})",
                              path=where.label, format=where.format, location=name) from None
    return out  # not copied to bytes: the JSON decode reads it as it is


def _too_big(size: int, limit: int, budget: int, *, declared: bool) -> str:
    """Why a member is not inflated: its own limit (the file limit) or what the archive has left."""
    said = f"declares {size:,} bytes, above" if declared else "inflates past"
    if limit <= budget:
        return (f"refusing to decompress: the member {said} the {limit:,}-byte limit for one file "
                "(--max-bytes; a zip bomb or a log too large to read)")
    return (f"refusing to decompress: the member {said} the {budget:,} bytes the archive may still inflate to "
            f"(of {MAX_DECOMPRESSED_BYTES:,}; a zip bomb or a log too large to read)")


def read_member_json(zf: zipfile.ZipFile, name: str, where: Where, budget: list[int] | None = None,
                     limit: int = MAX_DECOMPRESSED_BYTES) -> Any:
    raw = read_member(zf, name, where, budget if budget is not None else [MAX_DECOMPRESSED_BYTES, MAX_ARCHIVE_OBJECTS],
                      limit)
    try:
        return json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        where.fail(name, f"not UTF-8 text (invalid byte at offset {exc.start})")
    except json.JSONDecodeError as exc:
        where.fail(f"{name}: line {exc.lineno}, column {exc.colno}", f"invalid JSON ({exc.msg})")
    except RecursionError:
        where.fail(name, "JSON is nested too deeply to read")
    except ValueError as exc:
        where.fail(name, f"invalid JSON ({exc})")


def open_log(source: Source, where: Where) -> EvalLog:
    if is_zip(source):
        return _open_zip(source, where)
    try:
        doc = source.json()
    except ThreadLoadError as exc:
        raise where.unparseable(exc) from None
    if not _json_log_shape(doc):
        where.fail("$", "not an Inspect log: expected an object with 'version' and an 'eval' naming task and model")
    return _from_document(doc, where)


def _open_zip(source: Source, where: Where) -> EvalLog:
    try:
        zf = zipfile.ZipFile(io.BytesIO(source.data))
        infos = zf.infolist()
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, NotImplementedError, RuntimeError) as exc:
        raise _zip_error(where, exc) from None
    if len(infos) > MAX_MEMBERS:
        where.fail("$", f"the .eval zip archive holds {len(infos):,} members, above the limit of {MAX_MEMBERS:,}")
    declared = sum(i.file_size for i in infos)
    if declared > MAX_DECOMPRESSED_BYTES:
        where.fail("$", f"refusing to decompress: the archive declares {declared:,} bytes, above the limit of "
                   f"{MAX_DECOMPRESSED_BYTES:,} (a zip bomb or a log too large to read)")
    names = [i.filename for i in infos]
    budget = [MAX_DECOMPRESSED_BYTES, MAX_ARCHIVE_OBJECTS]
    header_name = HEADER if HEADER in names else JOURNAL_START if JOURNAL_START in names else None
    if header_name is None:
        where.fail("$", f"the zip archive holds no {HEADER} (not an Inspect .eval log)")
    limit = source.max_bytes
    header = where.want_dict(read_member_json(zf, header_name, where, budget, limit), f"{header_name}: $",
                             "a log header object")
    if not isinstance(header.get("eval"), dict):
        where.fail(f"{header_name}: $.eval", f"expected an object, got {json_type(header.get('eval'))}")
    members: dict[SampleKey, str] = {}
    for name in names:
        match = SAMPLE_NAME.match(name)
        if match:
            members[SampleKey(match["id"], int(match["epoch"]))] = name
    summaries: dict[SampleKey, dict[str, Any]] = {}
    order: list[SampleKey] = []
    if SUMMARIES in names:
        raw = read_member_json(zf, SUMMARIES, where, budget, limit)
        for i, item in enumerate(where.want_list(raw, f"{SUMMARIES}: $", "an array of sample summaries")):
            item = where.want_dict(item, f"{SUMMARIES}: $[{i}]", "a sample summary object")
            key = _key_of(item, where, f"{SUMMARIES}: $[{i}]")
            summaries[key] = item
            if key in members and key not in order:
                order.append(key)
    # Samples missing from the summaries (a log still being written) follow in archive order.
    order += [k for k in members if k not in order]
    return EvalLog(where, header, order, summaries, _zip=zf, _members=members, _budget=budget, _member_limit=limit)


def _key_of(item: dict[str, Any], where: Where, at: str) -> SampleKey:
    sample_id = item.get("id")
    if isinstance(sample_id, bool) or not isinstance(sample_id, (str, int)):
        where.fail(f"{at}.id", f"expected a sample id (string or integer), got {json_type(sample_id)}")
    epoch = item.get("epoch", 1)
    if isinstance(epoch, bool) or not isinstance(epoch, int):
        where.fail(f"{at}.epoch", f"expected an integer, got {json_type(epoch)}")
    return SampleKey(str(sample_id), epoch)


def _from_document(doc: dict[str, Any], where: Where) -> EvalLog:
    raw = doc.get("samples")
    samples = [] if raw is None else where.want_list(raw, "$.samples", "an array of samples")
    inline: dict[SampleKey, tuple[dict[str, Any], str]] = {}
    for i, sample in enumerate(samples):
        at = f"$.samples[{i}]"
        sample = where.want_dict(sample, at, "a sample object")
        key = _key_of(sample, where, at)
        if key not in inline:  # a repeated id and epoch keeps the first, as Inspect's reader does
            inline[key] = (sample, at)
    header = {k: v for k, v in doc.items() if k != "samples"}
    return EvalLog(where, header, list(inline), {k: s for k, (s, _) in inline.items()}, _inline=inline)
