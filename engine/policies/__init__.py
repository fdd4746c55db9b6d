"""Coding agents' compaction policies: each one a small set of pure rules, used by the compaction layer.

A policy says when an agent compacts (`threshold_tokens`) and what history it continues from
(`rebuild`). `engine.layers.compaction.CompactionLayer` runs the policy the config names; each
policy module cites the agent's source for every rule.

Codex's tool-output truncation is one rule for the `codex` policy and for rebuilding a Codex rollout's
as-recorded requests, so it lives in engine.recorded.codex_rules and the `codex` policy imports it.

May import: base, thread, tokens, config, recorded, summarizers.
"""

from __future__ import annotations

import importlib

from engine.base.errors import ConfigError
from engine.policies.base import CompactionPolicy, PolicyContext

# policy name -> module defining POLICY
POLICY_MODULES: dict[str, str] = {
    "claude-code": "engine.policies.claude_code",
    "codex": "engine.policies.codex",
    "gemini-cli": "engine.policies.gemini_cli",
    "cline": "engine.policies.cline",
    "openhands": "engine.policies.openhands",
    "anthropic-compaction": "engine.policies.server_compaction",
    "openai-compaction": "engine.policies.server_compaction",
}


def get_policy(name: str) -> CompactionPolicy:
    module = POLICY_MODULES.get(name)
    if module is None:
        raise ConfigError(f"unknown compaction policy {name!r}; known: {', '.join(POLICY_MODULES)}",
                          key="compaction.policy")
    mod = importlib.import_module(module)
    policies = getattr(mod, "POLICIES", None)
    policy: CompactionPolicy = policies[name] if policies is not None else mod.POLICY
    return policy


__all__ = ["POLICY_MODULES", "CompactionPolicy", "PolicyContext", "get_policy"]
