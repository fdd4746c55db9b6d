"""Deep Agents' own tools as the `deepagents` preset sends them equal the real `create_deep_agent`'s."""

from __future__ import annotations

import json

import pytest

from engine.layers.agent_tools import DEEPAGENTS_TOOLS_FILE, deepagents_tools

pytest.importorskip("deepagents", reason="deepagents==0.7.32 is a test dependency")
from tests.differential.deepagents_tools import real_tools  # noqa: E402


def test_the_data_file_holds_the_real_agents_tools() -> None:
    real = real_tools()
    assert json.loads(DEEPAGENTS_TOOLS_FILE.read_text(encoding="utf-8"))["tools"] == real == deepagents_tools()
    assert [t["name"] for t in real] == ["ls", "read_file", "write_file", "edit_file", "delete", "glob", "grep", "task"]
    # each property keeps its `title` (the form count_tokens_approximately serializes a BaseTool in)
    assert real[1]["parameters"]["properties"]["file_path"]["title"] == "File Path"
