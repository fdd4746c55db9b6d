"""Agents' own sessions where they already are: listing and summarising the sessions found under the
configured roots at disk speed (`summary`, `listing`), following one as its file grows (`follow`), the
live budget gauge (`gauge`), figures across sessions (`across`), and carrying a tuned setting back into
an agent's own configuration (`export`). What a root is and how a listed file is read safely is
`engine.workspace.disk_sessions`.

May import: base, thread, tokens, config, formats, recorded, workspace, policies, run, views, cost.
"""
