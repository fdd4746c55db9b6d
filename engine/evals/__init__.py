"""Targeted evals of a Run: needle retention and goal drift after compaction, and stress mode. Settings sweeps
(`sweep`) and several agents' policies on one thread (`policy_compare`).

May import: base, thread, tokens, config, formats, recorded, workspace, run, cost, views.
"""

from engine.evals.compactions import TOO_LONG_PLACEHOLDER, Compaction, compactions
from engine.evals.drift import DriftCheck, DriftReport, goal_drift, session_intent, step_ranges
from engine.evals.facts import pick_needles
from engine.evals.needle import CLASSES, NEVER, STEP_CLASSES, NeedleReport, needle_retention
from engine.evals.stress import DEFAULT_STRESS_FRACTION, STRESS_RANGE, stress_config

__all__ = [
    "CLASSES",
    "DEFAULT_STRESS_FRACTION",
    "NEVER",
    "STEP_CLASSES",
    "STRESS_RANGE",
    "TOO_LONG_PLACEHOLDER",
    "Compaction",
    "DriftCheck",
    "DriftReport",
    "NeedleReport",
    "compactions",
    "goal_drift",
    "needle_retention",
    "pick_needles",
    "session_intent",
    "step_ranges",
    "stress_config",
]
