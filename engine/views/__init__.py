"""What the pages show, as plain data from a Run (no Streamlit, no Plotly), one module per page: the
Timeline (`timeline`, `timeline_table`), the Step page (`step`, `step_page`), the Layers page
(`layers`, `middleware`), Compare (`compare`) and the Threads page (`threads`).

May import: base, thread, tokens, config, policies, run.
"""
