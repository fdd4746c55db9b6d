"""Figures across many sessions: each session's peak, overflows, compactions, cost and cache hit rate
(from the list's rows, nothing replayed), and which agent's policy would have done best on all of them
(from a sweep over the sessions with one grid point per policy preset, engine.evals.sweep)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.sessions.summary import Summary

# The agents' own policies and the frameworks' defaults a user compares first (engine.config.presets).
DEFAULT_POLICIES: tuple[str, ...] = ("claude-code", "codex", "gemini-cli", "deepagents", "langchain")
# Above this many sessions a comparison may go to Ray (engine.evals.sweep's executor) when it is installed.
RAY_SESSIONS = 40


def session_figures(rows: Sequence[Summary]) -> list[dict[str, Any]]:
    """One row per session: what it recorded (the agent's own run), nothing replayed."""
    out = []
    for r in rows:
        out.append({"agent": r.agent, "title": r.title, "steps": r.steps, "peak_tokens": r.peak_tokens,
                    "window_tokens": r.window_tokens,
                    "peak_fraction": (round(r.peak_tokens / r.window_tokens, 4)
                                      if r.peak_tokens and r.window_tokens else None),
                    "overflows": r.overflows, "compactions": r.compactions, "dollars": r.dollars,
                    "hit_rate": r.hit_rate, "model": r.model, "project": r.project, "id": r.id})
    return out


def totals(rows: Sequence[Summary]) -> dict[str, Any]:
    """The set at a glance: how many sessions overflowed or compacted, and what they cost."""
    priced = [r.dollars for r in rows if r.dollars is not None]
    inputs = sum(r.input_tokens + r.cache_read_tokens + r.cache_write_tokens for r in rows)
    return {"sessions": len(rows), "steps": sum(r.steps for r in rows),
            "overflowed": sum(1 for r in rows if r.overflows), "compacted": sum(1 for r in rows if r.compactions),
            "compactions": sum(r.compactions for r in rows),
            "peak_tokens": max((r.peak_tokens or 0 for r in rows), default=0) or None,
            "dollars": round(sum(priced), 6) if priced else None, "unpriced": len(rows) - len(priced),
            "hit_rate": round(sum(r.cache_read_tokens for r in rows) / inputs, 4) if inputs else None}


@dataclass(frozen=True)
class PolicyRow:
    """One policy over every selected session."""

    policy: str
    peak_tokens: int
    compactions: int
    tokens_saved: int
    saved_per_compaction: float | None
    dollars: float | None
    retention: float | None
    survival: float | None
    best: bool = False

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def policy_table(result: Any) -> list[PolicyRow]:
    """The sweep's points as one row per policy, the best one marked: it saves the most tokens for the
    fewest compactions (the largest `tokens_saved / compactions`, ties to fewer compactions; a policy
    that never compacts saves nothing and is never the best)."""
    rows = []
    for p in result.points:
        m = p.metrics
        label = dict(p.point.values).get("preset") or p.point.label
        compactions = int(m["compactions"])
        saved = int(m["tokens_saved"])
        rows.append(PolicyRow(policy=str(label), peak_tokens=int(m["peak_view_tokens"]), compactions=compactions,
                              tokens_saved=saved, saved_per_compaction=round(saved / compactions, 1) if compactions else None,
                              dollars=m.get("dollars"), retention=m.get("retention"), survival=m.get("survival")))
    ranked = [r for r in rows if r.saved_per_compaction]
    if ranked:
        best = max(ranked, key=lambda r: (r.saved_per_compaction, -r.compactions, r.tokens_saved))
        rows = [PolicyRow(**{**r.to_dict(), "best": r is best}) for r in rows]
    return rows


def verdict(rows: Sequence[PolicyRow], sessions: int) -> str:
    """One sentence: which policy saves the most for the fewest compactions on these sessions."""
    best = next((r for r in rows if r.best), None)
    if best is None:
        return f"No policy compacted on these {sessions} session(s): none saved anything."
    most = max(rows, key=lambda r: r.tokens_saved)
    text = (f"On these {sessions} session(s), {best.policy} saves the most per compaction: "
            f"{best.tokens_saved:,} tokens in {best.compactions:,} compaction(s) ({best.saved_per_compaction:,.0f} each)")
    if most is not best:
        text += f"; {most.policy} saves more in all ({most.tokens_saved:,}) but compacts {most.compactions:,} times"
    return text + "."


__all__ = ["DEFAULT_POLICIES", "PolicyRow", "RAY_SESSIONS", "policy_table", "session_figures", "totals", "verdict"]
