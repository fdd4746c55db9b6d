"""Discovery and the sessions list: each agent's on-disk layout, titles, sub-agents, figures equal to the importer's."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from engine.formats import load_thread
from engine.sessions.listing import SummaryIndex, search, summarize_listing
from engine.sessions.summary import _codex_thread_name, blank, summary_from_thread
from engine.workspace.disk_sessions import (
    SessionRootError,
    configured_roots,
    discover,
    load_listed,
    resolve_roots,
    session_id,
)
from tests.conftest import trace_path
from tests.sessions import trees

FIGURES = ("steps", "peak_tokens", "window_tokens", "overflows", "compactions", "edits", "subagents", "input_tokens",
           "cache_read_tokens", "cache_write_tokens", "output_tokens", "dollars", "hit_rate", "model")


def listed(root: Path) -> tuple[list, dict]:
    listing = discover(resolve_roots([root]))
    result = summarize_listing(listing, index=SummaryIndex(), workers=1)
    return listing.sessions, {r.path: r for r in result.rows}


def test_every_layout_is_found_with_its_companions(tmp_path: Path) -> None:
    made = trees.make_all(tmp_path)
    sessions, rows = listed(tmp_path)
    by_rel = {s.rel: s for s in sessions}
    rel = {agent: str(path.relative_to(tmp_path)) for agent, path in made.items()}
    assert sorted((s.agent, s.rel) for s in sessions) == sorted([
        ("claude-code", rel["claude-code"]),
        ("claude-code", f".claude/projects/-home-u-proj/{trees.CC_OTHER}.jsonl"),
        ("codex", rel["codex"]),
        ("codex", ".codex/archived_sessions/rollout-2026-04-01T09-00-00-0199aaaa-0000-7000-8000-000000000002.jsonl.zst"),
        ("gemini-cli", rel["gemini-cli"]),
        ("cline", rel["cline"]),
    ])
    # sub-agent files travel with their session, never listed alone; tool-results/ is not walked
    assert by_rel[rel["claude-code"]].companions == (
        f".claude/projects/-home-u-proj/{trees.CC_SESSION}/subagents/agent-sub1.jsonl",)
    assert by_rel[rel["gemini-cli"]].companions == (f".gemini/tmp/myproj/chats/{trees.GEMINI_ID}/sub-1.jsonl",)
    folder = ".globalStorage/saoudrizwan.claude-dev".lstrip(".")
    assert by_rel[rel["cline"]].companions == (f"{folder}/tasks/1733000000000/task_metadata.json",
                                               f"{folder}/tasks/1733000000000/ui_messages.json")
    assert by_rel[rel["claude-code"]].id == session_id(tmp_path.resolve(), rel["claude-code"])
    assert len(rows) == 6


def test_titles_are_the_agents_own(tmp_path: Path) -> None:
    trees.make_all(tmp_path)
    _, rows = listed(tmp_path)
    titles = {r.agent + ":" + r.path.rsplit("/", 1)[-1]: r.title for r in rows.values()}
    assert titles == {
        f"claude-code:{trees.CC_SESSION}.jsonl": "Flaky IO test, fixed",  # the last /rename over the AI title
        f"claude-code:{trees.CC_OTHER}.jsonl": "Old summary title",
        f"codex:rollout-2026-05-01T10-00-00-{trees.CODEX_ID}.jsonl": "Fix the failing test",  # session_index.jsonl
        "codex:rollout-2026-04-01T09-00-00-0199aaaa-0000-7000-8000-000000000002.jsonl.zst": "fix the test",
        f"gemini-cli:session-2026-05-01T10-00-{trees.GEMINI_ID[:8]}.jsonl": "Reading two files",
        "cline:api_conversation_history.json": "Fix the bug in app.py",
    }
    projects = {r.agent: r.project for r in rows.values() if r.agent != "claude-code"}
    assert projects == {"codex": "/repo", "gemini-cli": "/home/u/myproj", "cline": None}
    assert {r.project for r in rows.values() if r.agent == "claude-code"} == {"/home/u/proj"}


def test_the_importer_gives_the_same_title_and_attaches_the_sub_agent(tmp_path: Path) -> None:
    made = trees.make_all(tmp_path)
    listing = discover(resolve_roots([tmp_path]))
    cc = next(s for s in listing.sessions if s.rel.endswith(f"{trees.CC_SESSION}.jsonl"))
    thread = load_listed(cc)
    assert thread.title == "Flaky IO test, fixed"
    assert list(thread.subagents) == ["toolu_task"]
    assert load_thread(made["claude-code"]).title == "Flaky IO test, fixed"


def test_each_row_equals_the_figures_of_the_imported_thread(tmp_path: Path) -> None:
    trees.make_all(tmp_path)
    listing = discover(resolve_roots([tmp_path]))
    _, rows = listed(tmp_path)
    for sf in listing.sessions:
        expected = summary_from_thread(blank(sf), load_listed(sf))
        got = rows[sf.rel]
        assert {f: getattr(got, f) for f in FIGURES} == {f: getattr(expected, f) for f in FIGURES}, sf.rel
    cc = rows[f".claude/projects/-home-u-proj/{trees.CC_SESSION}.jsonl"]
    assert (cc.steps, cc.peak_tokens, cc.subagents, cc.compactions) == (2, 5205, 1, 0)
    assert cc.hit_rate == round(5000 / (10 + 5000 + 5 + 200 + 5000), 4)


def test_a_codex_sessions_root_alone_has_no_thread_names(tmp_path: Path) -> None:
    trees.make_codex(tmp_path)
    _, rows = listed(tmp_path / ".codex" / "sessions")
    assert [r.title for r in rows.values()] == ["fix the test"]


def test_search_and_agent_filter(tmp_path: Path) -> None:
    trees.make_all(tmp_path)
    _, rows = listed(tmp_path)
    everything = sorted(rows.values(), key=lambda r: r.path)
    assert [r.title for r in search(everything, "flaky fixed")] == ["Flaky IO test, fixed"]
    assert {r.agent for r in search(everything, "", ["codex"])} == {"codex"}
    assert search(everything, "nothing-like-this") == []


def test_an_unchanged_file_is_not_read_again_and_a_grown_one_is(tmp_path: Path) -> None:
    made = trees.make_all(tmp_path)
    index = SummaryIndex(tmp_path / "ws" / "sessions" / "index.json")
    root = resolve_roots([tmp_path / ".claude"])
    first = summarize_listing(discover(root), index=index, workers=1)
    assert (first.read_files, first.cached) == (2, 0)
    again = summarize_listing(discover(root), index=index, workers=1)
    assert (again.read_files, again.cached) == (0, 2)
    extra = trees.cc_assistant("a9", "a3", "msg_9", [{"type": "text", "text": "More."}], trees.cc_usage(1, 0, 9000, 2))
    with made["claude-code"].open("ab") as fh:
        fh.write(trees.jsonl([extra]))
    grown = summarize_listing(discover(root), index=index, workers=1)
    assert (grown.read_files, grown.cached) == (1, 1)
    row = next(r for r in grown.rows if r.path.endswith(f"{trees.CC_SESSION}.jsonl"))
    assert (row.steps, row.peak_tokens) == (3, 9001)
    # the index kept in the workspace answers a new process
    index.save()
    fresh = summarize_listing(discover(root), index=SummaryIndex(index.path), workers=1)
    assert (fresh.read_files, fresh.cached) == (0, 2)


def test_roots_come_from_the_command_line_then_the_environment_then_settings(tmp_path: Path) -> None:
    (tmp_path / "settings.yaml").write_text("sessions:\n  roots: [/from/settings]\n")
    assert configured_roots(["/cli"], environ={"CTXI_SESSIONS": "/env"}, workspace_root=tmp_path) == ["/cli"]
    assert configured_roots([], environ={"CTXI_SESSIONS": "/env1:/env2"}, workspace_root=tmp_path) == ["/env1", "/env2"]
    assert configured_roots([], environ={}, workspace_root=tmp_path) == ["/from/settings"]
    (tmp_path / "settings.yaml").write_text("sessions:\n  roots: /not/a/list\n")
    with pytest.raises(SessionRootError, match="sessions.roots must be a list"):
        configured_roots([], environ={}, workspace_root=tmp_path)
    with pytest.raises(SessionRootError, match="sessions root not found"):
        resolve_roots([tmp_path / "missing"])
    (tmp_path / "file").write_text("x")
    with pytest.raises(SessionRootError, match="is not a folder"):
        resolve_roots([tmp_path / "file"])


def _lay_out_traces(root: Path, traces: Path) -> dict[str, Path]:
    """../shared/traces laid out as Claude Code and Codex write them."""
    project = root / ".claude" / "projects" / "-home-marco-projects-spotter"
    project.mkdir(parents=True)
    out = {}
    for f in sorted((traces / "claude-code").glob("*.jsonl")):
        shutil.copy(f, project / f.name)
        out[f"claude-code:{f.name}"] = f
        if f.with_suffix("").is_dir():
            shutil.copytree(f.with_suffix(""), project / f.stem)
    day = root / ".codex" / "sessions" / "2025" / "09" / "19"
    day.mkdir(parents=True)
    for i, f in enumerate(sorted((traces / "codex").glob("*.jsonl"))):
        name = f"rollout-2025-09-19T09-0{i}-12-01996135-afde-7911-97f0-d863511eca5{i}.jsonl"
        shutil.copy(f, day / name)
        out[f"codex:{name}"] = f
    return out


def test_the_shared_traces_laid_out_as_claude_code_and_codex(tmp_path: Path) -> None:
    traces = trace_path("claude-code").parent
    laid = _lay_out_traces(tmp_path, traces)
    listing = discover(resolve_roots([tmp_path]))
    _, rows = listed(tmp_path)
    assert sorted(f"{s.agent}:{s.rel.rsplit('/', 1)[-1]}" for s in listing.sessions) == sorted(laid)
    for sf in listing.sessions:
        thread = load_thread(laid[f"{sf.agent}:{sf.rel.rsplit('/', 1)[-1]}"])
        expected = summary_from_thread(blank(sf), thread)
        got = rows[sf.rel]
        assert {f: getattr(got, f) for f in FIGURES} == {f: getattr(expected, f) for f in FIGURES}, sf.rel
        # a rollout that names its thread (event_msg thread_name_updated) is listed under that name
        named = _codex_thread_name(sf.path.read_bytes()) if sf.agent == "codex" else None
        assert got.title == (named or thread.title)
    assert rows[".codex/sessions/2025/09/19/rollout-2025-09-19T09-00-12-01996135-afde-7911-97f0-d863511eca50.jsonl"
                ].title == "[trimmed for fixture]"
    big = rows[".claude/projects/-home-marco-projects-spotter/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"]
    assert (big.steps, big.peak_tokens, big.compactions, big.subagents) == (157, 166874, 1, 2)
    assert big.project == "/home/USER/projects/spotter-worktrees/spotter-a0y"


def test_ctxi_ui_hands_its_sessions_roots_to_the_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.cli import ui as ui_command
    from engine.cli.ctxi import main

    seen: dict = {}
    # `launch` execs into Streamlit on POSIX (the test process would become the server): replaced here
    monkeypatch.setattr(ui_command, "launch", lambda cmd, env: seen.update(cmd=cmd, env=env) or 0)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert main(["ui", "--headless", "--port", "8999", "--sessions", str(tmp_path / "a"),
                 "--sessions", str(tmp_path / "b")]) == 0
    assert seen["env"]["CTXI_SESSIONS"] == f"{(tmp_path / 'a').resolve()}:{(tmp_path / 'b').resolve()}"
    assert main(["ui", "--sessions", str(tmp_path / "missing")]) == 2  # one line, before the server starts


def test_ctxi_sessions_lists_and_prints_json(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from engine.cli.ctxi import main

    trees.make_all(tmp_path / "root")
    monkeypatch.setenv("CTXI_WORKSPACE", str(tmp_path / "ws"))
    assert main(["sessions", str(tmp_path / "root"), "--json", "--agent", "claude-code"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert sorted(r["title"] for r in doc["sessions"]) == ["Flaky IO test, fixed", "Old summary title"]
    assert (doc["read_files"], doc["cached"]) == (6, 0)
    assert main(["sessions", str(tmp_path / "root"), "--search", "flaky"]) == 0
    out = capsys.readouterr()
    assert "Flaky IO test, fixed" in out.out and "1 of 6 sessions" in out.err and "6 unchanged" in out.err
    monkeypatch.delenv("CTXI_SESSIONS", raising=False)
    assert main(["sessions"]) == 2
    assert "no sessions root" in capsys.readouterr().err
