"""Following a growing session: only new bytes read, a half-written line waited for, the same Thread as a full load."""

from __future__ import annotations

import json
import math
import os
import select
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from engine.formats import load_thread
from engine.formats.native import thread_to_dict
from engine.sessions.follow import Follower
from engine.sessions.gauge import bar, gauge
from engine.workspace.disk_sessions import discover, resolve_roots
from tests.conftest import ROOT, trace_path
from tests.sessions import trees

FOLLOW_ONLY = ("followed", "unfinished_last_line", "compaction_calls")


def comparable(thread: object) -> dict:
    d = thread_to_dict(thread)  # type: ignore[arg-type]
    for key in FOLLOW_ONLY:
        d["extra"].pop(key, None)
    return d


def grow(src: Path, dst: Path, every: int) -> list[tuple[bytes, bytes]]:
    """The file's lines in chunks of `every`, each split into a half-written part and its end."""
    lines = src.read_bytes().split(b"\n")
    chunks = []
    for start in range(0, len(lines), every):
        part = lines[start:start + every]
        body = b"\n".join(part) + (b"\n" if start + every < len(lines) else b"")
        if body:
            chunks.append((body[:-20], body[-20:]))
    return chunks


@pytest.mark.parametrize("name,every", [("subagent.jsonl", 9), ("4d5611e5-241a-462a-8d15-5122611a9569.jsonl", 211)])
def test_a_followed_claude_code_session_equals_a_full_load_at_every_poll(tmp_path: Path, name: str, every: int) -> None:
    src = trace_path("claude-code", name)
    if src.with_suffix("").is_dir():
        shutil.copytree(src.with_suffix(""), tmp_path / src.stem)
    dst = tmp_path / name
    dst.write_bytes(b"")
    follower = Follower(path=dst, format="claude_code")
    read = 0
    previous = None
    for head, tail in grow(src, dst, every):
        with dst.open("ab") as fh:
            fh.write(head)
        update = follower.poll()
        if update is not None:
            assert update.waiting_line or update.new_bytes == 0 or head.endswith(b"\n")
            read += update.new_bytes
            previous = update.thread
        with dst.open("ab") as fh:
            fh.write(tail)
        update = follower.poll()
        assert update is not None and not update.waiting_line
        read += update.new_bytes
        assert comparable(update.thread) == comparable(load_thread(dst))
        if previous is not None:  # every message before the first change is the very same object
            first = update.first_changed_message
            assert all(a is b for a, b in zip(previous.messages[:first], update.thread.messages[:first], strict=False))
            assert first <= len(previous.messages)
        previous = update.thread
    assert read == dst.stat().st_size  # each byte read once
    assert follower.poll() is None


def test_a_followed_codex_rollout_equals_a_full_load(tmp_path: Path) -> None:
    src = trace_path("codex", "vibecodingtracker-codex.jsonl")
    dst = tmp_path / "rollout-2025-09-19T09-02-12-01996135-afde-7911-97f0-d863511eca56.jsonl"
    dst.write_bytes(b"")
    follower = Follower(path=dst, format="codex")
    for head, tail in grow(src, dst, 13):
        with dst.open("ab") as fh:
            fh.write(head + tail)
        update = follower.poll()
        assert update is not None
        assert comparable(update.thread) == comparable(load_thread(dst))


def test_a_followed_gemini_cli_jsonl_session_equals_a_full_load(tmp_path: Path) -> None:
    src = trace_path("gemini", "vibecodingtracker-session.jsonl")
    dst = tmp_path / "session-2026-04-23T12-52-0ab84937.jsonl"
    dst.write_bytes(b"")
    follower = Follower(path=dst, format="gemini_cli")
    for head, tail in grow(src, dst, 3):
        with dst.open("ab") as fh:
            fh.write(head + tail)
        update = follower.poll()
        assert update is not None and update.new_bytes == len(head + tail)  # only the appended bytes are read
        assert comparable(update.thread) == comparable(load_thread(dst))


def test_a_half_written_last_line_is_waited_for_not_an_error(tmp_path: Path) -> None:
    rows = trees.claude_code_session()
    path = tmp_path / f"{trees.CC_SESSION}.jsonl"
    whole = trees.jsonl(rows)
    cut = whole.rfind(b'"type":"assistant"')
    path.write_bytes(whole[:cut])
    follower = Follower(path=path)
    first = follower.poll()
    assert first is not None and first.waiting_line and len(first.thread.ai_indices()) == 1
    assert first.thread.extra["unfinished_last_line"] == whole[:cut].count(b"\n") + 1
    path.write_bytes(whole)
    second = follower.poll()
    assert second is not None and not second.waiting_line
    assert len(second.thread.ai_indices()) == 2 and second.new_bytes == len(whole) - first.new_bytes


def test_a_replaced_or_cut_file_is_read_again_from_its_start(tmp_path: Path) -> None:
    path = tmp_path / f"{trees.CC_SESSION}.jsonl"
    rows = trees.claude_code_session()
    path.write_bytes(trees.jsonl(rows))
    follower = Follower(path=path)
    assert follower.poll().reread  # the first poll reads from the start
    replacement = tmp_path / "new.jsonl"
    replacement.write_bytes(trees.jsonl(rows[:4]))
    os.replace(replacement, path)  # another inode
    update = follower.poll()
    assert update is not None and update.reread and len(update.thread.ai_indices()) == 1
    with path.open("r+b") as fh:  # the same inode, cut shorter
        fh.truncate(len(trees.jsonl(rows[:2])))
    update = follower.poll()
    assert update is not None and update.reread and update.thread.ai_indices() == []


def test_a_listed_session_is_followed_with_its_sub_agents_from_the_root(tmp_path: Path) -> None:
    trees.make_claude_code(tmp_path)
    listing = discover(resolve_roots([tmp_path]))
    sf = next(s for s in listing.sessions if s.rel.endswith(f"{trees.CC_SESSION}.jsonl"))
    follower = Follower(session=sf)
    update = follower.poll()
    assert update is not None and list(update.thread.subagents) == ["toolu_task"]
    assert comparable(update.thread) == comparable(load_thread(sf.path))
    follower.close()


def test_the_gauge_shows_the_context_now_the_agents_threshold_and_calls_left(tmp_path: Path) -> None:
    src = trace_path("claude-code", "4d5611e5-241a-462a-8d15-5122611a9569.jsonl")
    thread = load_thread(src)
    g = gauge(thread)
    recorded = [thread.usage[m.id].context_tokens for m in thread.messages if m.id in thread.usage]
    assert g.context_tokens == recorded[-1] == 106060 and g.source == "recorded"
    # Claude Code's autocompact: 200,000 − min(max output, 20,000) − 13,000 (engine/policies/claude_code.py)
    assert (g.window_tokens, g.threshold_tokens) == (200_000, 167_000)
    # the median growth of the last five calls (all after the compaction)
    growth = sorted(b - a for a, b in zip(recorded[-6:-1], recorded[-5:], strict=True))[2]
    assert g.growth_per_call == growth and g.calls_left == math.ceil((167_000 - 106_060) / growth)
    assert bar(g, 10).startswith("[#####")


def _read_json_line(proc: subprocess.Popen[bytes], limit_s: float = 120.0) -> dict:
    """The next JSON line `ctxi watch --json` prints (a guard against a hang, not a timing check)."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], limit_s)
    assert ready, "ctxi watch printed nothing"
    line = proc.stdout.readline()
    assert line, (proc.stderr.read() if proc.stderr else b"").decode()
    return json.loads(line)


def test_ctxi_watch_follows_lines_appended_while_it_runs(tmp_path: Path) -> None:
    src = trace_path("claude-code", "subagent.jsonl")
    lines = src.read_bytes().split(b"\n")
    path = tmp_path / "subagent.jsonl"
    path.write_bytes(b"\n".join(lines[:40]) + b"\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "engine.cli", "watch", str(path), "--json", "--interval", "0.2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    try:
        first = _read_json_line(proc)
        with path.open("ab") as fh:  # the agent writes on: half a line first
            rest = b"\n".join(lines[40:])
            fh.write(rest[:-15])
            fh.flush()
            second = _read_json_line(proc)
            fh.write(rest[-15:])
        while second["steps"] < 12 or second["waiting_for_line"]:
            second = _read_json_line(proc)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert first["format"] == "claude_code" and first["steps"] < 12
    assert second["steps"] == 12 and second["gauge"]["context_tokens"] == 43861
    assert second["categories"] and second["preset"] == "as-recorded"
