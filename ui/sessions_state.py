"""The server's own view of the sessions roots: one listing, one summary index and one follower per session.

The roots are read once, when the server starts (`ctxi ui --sessions DIR` puts them in CTXI_SESSIONS, or
the workspace's settings.yaml names them); nothing a browser sends can add one. A `session:<id>` key is
looked up in this listing (engine.workspace.keys), refreshed at most every `LISTING_TTL_S` seconds.
Each opened session is read by a Follower, so a session that grows is read from where it stopped.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import streamlit as st

from engine.base.errors import ContextInspectorError
from engine.sessions.follow import Follower, Update, replay_grown
from engine.sessions.listing import SessionList, SummaryIndex, summarize_listing
from engine.thread.model import Thread
from engine.workspace.disk_sessions import Listing, SessionFile, configured_roots, discover, resolve_roots
from engine.workspace.workspace import default_root

LISTING_TTL_S = 5.0
FOLLOW_KEY = "follow_session"  # session state: the key of the session being followed (set by a click only)


@dataclass
class _Followed:
    follower: Follower
    thread: Thread | None = None
    update: Update | None = None
    version: int = 0  # bumped on every poll that changed the thread
    last_change_s: float = 0.0
    error: str | None = None


@dataclass
class SessionsServer:
    roots: tuple[Path, ...]
    error: str | None = None
    index: SummaryIndex = field(default_factory=SummaryIndex)
    listing: Listing | None = None
    listed_at: float = 0.0
    followed: dict[str, _Followed] = field(default_factory=dict)
    # the last Run of each (session id, config, offline summaries): a grown session resumes from it
    runs: dict[tuple[Any, ...], Any] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock)

    # -- the listing ---------------------------------------------------------------------------------
    def current(self, *, fresh: bool = False) -> Listing:
        with self.lock:
            if self.listing is None or fresh or time.monotonic() - self.listed_at > LISTING_TTL_S:
                self.listing = discover(self.roots)
                self.listed_at = time.monotonic()
            return self.listing

    def rows(self, *, fresh: bool = False, progress: Any = None) -> SessionList:
        listing = self.current(fresh=fresh)
        return summarize_listing(listing, index=self.index, progress=progress)

    def lookup(self, session_id: str) -> SessionFile | None:
        """The listed session with this id (a link's `session:<id>`), or None."""
        found = self.current().by_id().get(session_id)
        if found is None:  # listed since the last walk? walk again once
            found = self.current(fresh=True).by_id().get(session_id)
        return found

    # -- reading and following -----------------------------------------------------------------------
    def _followed(self, sf: SessionFile) -> _Followed:
        with self.lock:
            entry = self.followed.get(sf.id)
            if entry is None:
                entry = _Followed(Follower(session=sf))
                self.followed[sf.id] = entry
            return entry

    def poll(self, sf: SessionFile) -> _Followed:
        """Read what the session's file gained since the last poll (only the new bytes)."""
        entry = self._followed(sf)
        with self.lock:
            try:
                update = entry.follower.poll()
            except (ContextInspectorError, OSError) as exc:
                entry.error = str(getattr(exc, "reason", None) or exc)
                return entry
            except Exception as exc:  # noqa: BLE001 - a Refused file or an importer bug: one line on the page
                entry.error = f"{type(exc).__name__}: {exc}"
                return entry
            entry.error = None
            if update is not None:
                entry.update, entry.thread = update, update.thread
                entry.version += 1
                entry.last_change_s = time.time()
            return entry

    def thread(self, sf: SessionFile) -> Thread | None:
        """The session as its file is now: a poll reads only what was appended since the last one."""
        entry = self.poll(sf)
        if entry.thread is None and entry.error:
            raise ContextInspectorError(f"{sf.path}: {entry.error}")
        return entry.thread

    def version(self, sf: SessionFile) -> str:
        entry = self._followed(sf)
        return f"session:{sf.id}#{entry.version}"

    def replay(self, session_key: str, config: Any, offline: bool, thread: Thread) -> Any:
        """Replay a session's current thread, handing the engine the Run of its previous version."""
        sid = session_key.split(":", 1)[1]
        entry = self.followed.get(sid)
        slot = (sid, config, offline)
        previous = self.runs.get(slot)
        changed_from = entry.update.first_changed_message if entry is not None and entry.update is not None else None
        run = replay_grown(thread, config, previous=previous, changed_from=changed_from,
                           summarizer="offline" if offline else None)
        self.runs[slot] = run
        return run


@st.cache_resource(show_spinner=False)
def _server(sessions_env: str | None, workspace: str) -> SessionsServer:
    try:
        roots = resolve_roots(configured_roots([], workspace_root=Path(workspace)))
    except ContextInspectorError as exc:
        return SessionsServer(roots=(), error=str(exc))
    return SessionsServer(roots=roots)


def server() -> SessionsServer:
    """This server's roots, from its start (its environment, the workspace's settings.yaml; never a browser)."""
    import os

    from engine.workspace.disk_sessions import ENV_VAR

    return _server(os.environ.get(ENV_VAR), str(default_root()))


def lookup(session_id: str) -> SessionFile | None:
    s = server()
    return s.lookup(session_id) if s.roots else None


def following() -> str | None:
    """The session key this browser session follows, if any."""
    value = st.session_state.get(FOLLOW_KEY)
    return value if isinstance(value, str) else None


def set_following(key: str | None) -> None:
    st.session_state[FOLLOW_KEY] = key


__all__ = ["FOLLOW_KEY", "LISTING_TTL_S", "SessionsServer", "following", "lookup", "server", "set_following"]
