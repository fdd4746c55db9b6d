"""DeerFlow HEAD's durable context: our rules against DeerFlow's own functions (the reference copy's
delegation_ledger.py, skill_context.py and durable_context_middleware.py), and the layer in a replay."""

from __future__ import annotations

import random
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from engine.config.schema import preset
from engine.layers import durable_context_rules as rules
from engine.layers.durable_context import coalesced
from engine.run.replay import replay
from engine.thread.model import Thread

df = pytest.importorskip("tests.differential.deerflow_side")
WORDS = ("alpha", "<b>", "&", "beta  gamma", "\n", "delta", "x" * 40, "quote\"s")


def reference() -> Any:
    df.reference_dir()
    middleware = df.durable_context_middleware()
    import sys

    return (sys.modules["deerflow.agents.middlewares.delegation_ledger"], sys.modules["deerflow.agents.middlewares.skill_context"],
            sys.modules[type(middleware).__module__])


def text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def delegations(rng: random.Random) -> list[Any]:
    msgs: list[Any] = [HumanMessage("go", id="h")]
    for k in range(rng.randint(0, 90)):
        args = {"description": text(rng, rng.randint(0, 60)), "subagent_type": rng.choice(["general", "bash", ""])}
        if rng.random() < 0.2:
            args = {"prompt": text(rng, 5)}
        msgs.append(AIMessage("", tool_calls=[{"name": rng.choice(["task", "task", "search"]), "args": args,
                                               "id": f"c{k % 70}"}], id=f"a{k}"))
        if rng.random() < 0.7:
            msgs.append(ToolMessage(text(rng, 3), tool_call_id=f"c{k % 70}", id=f"t{k}"))
    return msgs


def test_the_ledger_is_deerflows() -> None:
    ledger, _, _ = reference()
    for seed in range(60):
        msgs = delegations(random.Random(seed))
        theirs = [{k: v for k, v in e.items() if k != "created_at"} for e in ledger.extract_delegations(msgs)]
        ours = [{k: v for k, v in e.items() if k != "created_at"} for e in rules.extract_delegations(msgs)]
        assert ours == theirs, seed
        for budget in (6000, 300):
            assert rules.render_ledger(ours, budget) == ledger.render_delegation_ledger(theirs, max_chars=budget), seed


def test_the_skills_are_deerflows() -> None:
    _, skills, _ = reference()
    rng = random.Random(5)
    for seed in range(40):
        rng = random.Random(seed)
        msgs: list[Any] = []
        for k in range(rng.randint(0, 12)):
            path = rng.choice(["/mnt/skills/pdf/SKILL.md", "/mnt/skills/a/b/SKILL.md", "/mnt/skills/x/README.md",
                               "/tmp/SKILL.md", "/mnt/skills/../etc/SKILL.md"])
            name = rng.choice(["read_file", "cat", "bash"])
            msgs.append(AIMessage("", tool_calls=[{"name": name, "args": {rng.choice(["path", "file_path"]): path},
                                                   "id": f"r{k}"}], id=f"a{k}"))
            meta = {"skill_context_entry": {"path": rng.choice([path, "/mnt/skills/other/SKILL.md"]),
                                            "description": text(rng, rng.randint(0, 200))}} if rng.random() < 0.8 else {}
            msgs.append(ToolMessage(rng.choice(["ok", "Error: no"]), tool_call_id=f"r{k}", id=f"t{k}",
                                    additional_kwargs=meta, status=rng.choice(["success", "success", "error"])))
        theirs = skills.extract_skills(msgs, skills_root="/mnt/skills", read_tool_names=("read_file", "cat"))
        ours = rules.extract_skills(msgs, skills_root="/mnt/skills", read_tools=("read_file", "cat"))
        assert ours == theirs, seed
        assert rules.render_skills(ours) == skills.render_skill_context(theirs), seed


def test_the_data_block_is_deerflows() -> None:
    ledger, _, middleware = reference()
    rng = random.Random(9)
    for seed in range(30):
        rng = random.Random(seed)
        summary = rng.choice([None, "", text(rng, rng.randint(1, 2500))])
        entries = ledger.extract_delegations(delegations(rng))
        assert rules.render_data(summary, entries, []) == middleware._render_durable_context_data(summary, entries, [])
    assert rules.AUTHORITY_CONTRACT == middleware._AUTHORITY_CONTRACT


def test_a_result_with_deerflows_metadata_completes_its_delegation() -> None:
    call = AIMessage("", tool_calls=[{"name": "task", "args": {"description": "audit the parser", "subagent_type": "general"},
                                      "id": "c1"}], id="a1")
    done = ToolMessage("Task Succeeded. Result: 3 bugs", tool_call_id="c1", id="t1",
                       additional_kwargs={"subagent_status": "completed", "subagent_result_brief": "3 bugs"})
    [entry] = rules.extract_delegations([call, done])
    assert (entry["status"], entry["result_brief"], entry["result_ref"]) == ("completed", "3 bugs", "t1")
    assert rules.render_ledger([entry]).splitlines()[-1] == (
        "- [completed] audit the parser (via general; completed result; do NOT delegate again; reuse this result) -> 3 bugs")
    legacy = done.model_copy(update={"additional_kwargs": {"subagent_status": "max_turns_reached"}})
    assert rules.result_metadata(legacy.additional_kwargs) == {"status": "failed", "stop_reason": "turn_capped"}


def test_coalescing_merges_the_system_messages_into_one() -> None:
    system = SystemMessage(content=[{"type": "text", "text": "You are DeerFlow."}, {"type": "text", "text": "\n\nTodos."}],
                           id="system")
    contract = SystemMessage(content="contract", id="c")
    merged, rest = coalesced(system, [contract, HumanMessage("data", id="d"), HumanMessage("hi", id="h")])
    assert (merged.content, merged.id, [m.id for m in rest]) == ("You are DeerFlow.\n\n\nTodos.\n\ncontract", "system", ["d", "h"])
    assert coalesced(system, [HumanMessage("hi", id="h")]) is None


def test_the_head_preset_sends_the_ledger_of_task_calls() -> None:
    msgs = [HumanMessage("research it", id="h0"),
            AIMessage("", tool_calls=[{"name": "task", "args": {"description": "find sources", "subagent_type": "general"},
                                       "id": "c1"}], id="a0"),
            ToolMessage("Task Succeeded. Result: 4 sources", tool_call_id="c1", id="t1"),
            AIMessage("done", id="a1")]
    run = replay(Thread("t", msgs, system_prompt="You are DeerFlow."), preset("deerflow-head"))
    first, second = run.steps
    assert not any(m.additional_kwargs.get(rules.DATA_KEY) for m in first.view)
    data = second.view[0]
    assert data.additional_kwargs[rules.DATA_KEY] and data.content == (
        "<durable_context_data>\n## Work already delegated\nNewest entries are shown first. In-progress entries are "
        "already delegated. Completed entries are reusable results. Failed, cancelled, or timed-out entries are prior "
        "attempts.\n- [in_progress] find sources (via general; already delegated; do NOT delegate again; wait for or build "
        "on the result)\n</durable_context_data>")
    assert str(second.system.content).endswith("\n\n" + rules.AUTHORITY_CONTRACT)
    assert [e.kind for e in run.events if e.layer == "durable_context"] == ["inject"]
