"""Scripts written as JSON files (script_files.py's format): `python -m tests.differential.scripts --write`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage

from tests.differential.script_files import ENV, FORMAT, FRAMEWORKS
from tests.differential.scripts import Script


def _ai_out(m: AIMessage) -> dict[str, Any]:
    out: dict[str, Any] = {"id": m.id, "content": m.content}
    if m.tool_calls:
        out["tool_calls"] = [{"name": c["name"], "args": c["args"], "id": c["id"]} for c in m.tool_calls]
    for key in ("invalid_tool_calls", "usage_metadata", "response_metadata", "additional_kwargs", "name"):
        value = getattr(m, key)
        if value:
            out[key] = value
    return out


def dump_script(script: Script) -> dict[str, Any]:
    """The script as a JSON object in the format `load_file` reads (defaults left out)."""
    names = {c["id"]: c["name"] for r in script.replies() + [r for rs in script.subagents.values() for r in rs]
             for c in r.tool_calls}
    results: dict[str, Any] = {}
    for cid, m in script.results.items():
        if m.name == names.get(cid) and m.id == f"t-{cid}" and m.status == "success":
            results[cid] = m.content
        else:
            results[cid] = {"content": m.content, "name": m.name, "id": m.id, "status": m.status}
    doc: dict[str, Any] = {"format": FORMAT}
    if script.name:
        doc["name"] = script.name
    doc["seed"] = script.seed
    if script.frameworks is not None:
        doc["frameworks"] = list(script.frameworks)
    doc.update({"window": script.window, "system_prompt": script.system_prompt})
    if script.params:
        doc["params"] = script.params
    doc["turns"] = [{"human": {"content": t.human.content, "id": t.human.id}, "replies": [_ai_out(r) for r in t.replies],
                     **({"interrupted": True} if t.interrupted else {})} for t in script.turns]
    doc["results"] = results
    if script.subagents:
        doc["subagents"] = {cid: [_ai_out(r) for r in rs] for cid, rs in script.subagents.items()}
    return doc


def generated(framework: str, seed: int) -> Script:
    """The script the framework's own test plays for this seed, `frameworks` set to that framework."""
    if framework == "langchain":
        from tests.differential import langchain_side
        script = langchain_side.make_script(seed)
    elif framework == "deepagents":
        from tests.differential import deepagents_side
        script = deepagents_side.make_script(seed)
    else:
        from tests.differential import deerflow_side
        script = deerflow_side.make_script(seed, framework.split(":")[1])
    script.frameworks = (framework,)
    return script


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tests.differential.scripts",
                                     description="Write the differential tests' generated scripts as JSON files "
                                                 f"({FORMAT}; play them with {ENV}=DIR).")
    parser.add_argument("--write", metavar="DIR", required=True, type=Path, help="folder to write <framework>-<seed>.json to")
    parser.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    parser.add_argument("--count", type=int, default=1, help="scripts per framework (default 1)")
    parser.add_argument("--framework", choices=("langchain", "deepagents", "deerflow"), action="append",
                        help="repeatable; default: all (deerflow writes one script per version, v2.0-m0 and head)")
    args = parser.parse_args(argv)
    chosen = args.framework or ["langchain", "deepagents", "deerflow"]
    args.write.mkdir(parents=True, exist_ok=True)
    written = 0
    for framework in FRAMEWORKS:
        if framework.split(":")[0] not in chosen:
            continue
        for seed in range(args.seed, args.seed + args.count):
            out = args.write / f"{framework.replace(':', '-')}-{seed}.json"
            out.write_text(json.dumps(dump_script(generated(framework, seed)), indent=1, ensure_ascii=False) + "\n",
                           encoding="utf-8")
            written += 1
    print(f"wrote {written} scripts to {args.write}")
    return 0


__all__ = ["dump_script", "generated", "main"]
