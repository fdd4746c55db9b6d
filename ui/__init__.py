"""The dashboard's figure builders, widgets and session helpers (Streamlit and Plotly live here, not in engine/)."""

# Import pandas fully before any script thread runs: plotly's validators look pandas up in
# sys.modules without importing it, so a second session drawing a chart while the first is still
# importing pandas (for a dataframe) would see a half-initialised module and fail.
import pandas as _pandas  # noqa: F401
