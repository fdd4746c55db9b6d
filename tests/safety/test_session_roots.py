"""Sessions roots: nothing outside a root is listed or read, nothing under one is written, a link names no path."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from engine.base.files import RefusedFile
from engine.sessions.follow import Follower
from engine.sessions.listing import SummaryIndex, summarize_listing
from engine.workspace.disk_sessions import (
    discover,
    load_listed,
    open_under,
    read_under,
    resolve_roots,
    session_id,
    session_key_id,
)
from engine.workspace.keys import ThreadRoots, load_thread_key, resolve_thread_key
from tests.sessions import trees


def snapshot(root: Path) -> dict[str, tuple[int, int, str]]:
    """Every entry under `root`: size, modification time and a hash of its bytes (a FIFO is never opened)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            st = path.lstat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() and not path.is_symlink() else ""
            out[str(path.relative_to(root))] = (st.st_size, st.st_mtime_ns, digest)
    return out


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A Claude Code session outside the root, which nothing may reach."""
    secret = tmp_path / "outside"
    secret.mkdir()
    (secret / f"{trees.CC_OTHER}.jsonl").write_bytes(trees.jsonl(trees.claude_code_session()))
    (secret / "subagents").mkdir()
    return secret


def test_symlinks_out_of_a_root_fifos_and_odd_names_are_refused(tmp_path: Path, outside: Path) -> None:
    root = tmp_path / "root"
    project = trees.make_claude_code(root)
    (project / "linked.jsonl").symlink_to(outside / f"{trees.CC_OTHER}.jsonl")
    (root / ".claude" / "projects" / "linked-folder").symlink_to(outside)
    (project / "zero.jsonl").symlink_to("/dev/zero")
    os.mkfifo(project / "pipe.jsonl")
    listing = discover(resolve_roots([root]))
    rels = sorted(s.rel for s in listing.sessions)
    assert rels == sorted([f".claude/projects/-home-u-proj/{trees.CC_SESSION}.jsonl",
                           f".claude/projects/-home-u-proj/{trees.CC_OTHER}.jsonl"])
    refused = {Path(p).name: why for p, why in listing.refused}
    assert refused == {"linked.jsonl": "a symlink leading outside the root",
                       "linked-folder": "a symlink leading outside the root",
                       "zero.jsonl": "a symlink leading outside the root",
                       "pipe.jsonl": "is a FIFO (named pipe), not a regular file"}
    # a symlink that stays inside the root is listed under its target, once
    (project / "alias.jsonl").symlink_to(project / f"{trees.CC_SESSION}.jsonl")
    assert len(discover(resolve_roots([root])).sessions) == 2


def test_a_listed_file_swapped_for_a_symlink_or_a_fifo_is_not_read(tmp_path: Path, outside: Path) -> None:
    root = tmp_path / "root"
    project = trees.make_claude_code(root)
    sf = next(s for s in discover(resolve_roots([root])).sessions if s.rel.endswith(f"{trees.CC_SESSION}.jsonl"))
    target = project / f"{trees.CC_SESSION}.jsonl"
    target.unlink()
    target.symlink_to(outside / f"{trees.CC_OTHER}.jsonl")
    with pytest.raises(RefusedFile, match="symlink"):
        read_under(sf.root, sf.rel, 1 << 20)
    with pytest.raises(RefusedFile, match="symlink"):
        Follower(session=sf).poll()
    target.unlink()
    os.mkfifo(target)
    with pytest.raises(RefusedFile, match="FIFO"):
        open_under(sf.root, sf.rel)
    # a folder on the way swapped for a symlink is refused too
    moved = root / ".claude" / "projects" / "moved"
    project.rename(moved)
    project.symlink_to(outside)
    with pytest.raises(RefusedFile, match="symlink or no folder"):
        open_under(sf.root, sf.rel)
    with pytest.raises(RefusedFile):
        open_under(sf.root, "../outside/x.jsonl")


def test_nothing_under_a_root_is_written(tmp_path: Path) -> None:
    root = tmp_path / "root"
    trees.make_all(root)
    before = snapshot(root)
    listing = discover(resolve_roots([root]))
    index = SummaryIndex(tmp_path / "ws" / "sessions" / "index.json")
    summarize_listing(listing, index=index, workers=1)
    index.save()
    for sf in listing.sessions:
        load_listed(sf)
        follower = Follower(session=sf)
        follower.poll()
        follower.close()
    assert snapshot(root) == before
    assert (tmp_path / "ws" / "sessions" / "index.json").is_file()  # the index lives in the workspace


def test_a_link_can_pick_a_listed_session_by_id_and_never_a_path(tmp_path: Path, outside: Path) -> None:
    root = tmp_path / "root"
    trees.make_claude_code(root)
    listing = discover(resolve_roots([root]))
    by_id = listing.by_id()
    roots = ThreadRoots(samples=tmp_path / "samples", sessions=by_id.get)
    sf = listing.sessions[0]
    assert resolve_thread_key(sf.key, roots).session == sf  # type: ignore[union-attr]
    assert load_thread_key(sf.key, roots) is not None
    unlisted = session_id(outside.resolve(), f"{trees.CC_OTHER}.jsonl")
    for key in (f"session:{unlisted}", "session:../../outside", f"session:{outside}/x.jsonl", "session:" + "0" * 24,
                "session:" + sf.id.upper(), "session:" + sf.id + "0", "session:" + sf.id[:-1], "session:"):
        assert resolve_thread_key(key, roots) is None, key
        assert load_thread_key(key, roots) is None, key
    assert session_key_id("session:" + sf.id) == sf.id
    # a server started without roots resolves no session key at all
    assert resolve_thread_key(sf.key, ThreadRoots(samples=tmp_path)) is None
