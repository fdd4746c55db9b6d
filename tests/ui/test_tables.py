"""Tables on every page: an empty cell reads "—", never "None" (issue 35: the Sub-agents tab's "peak
inside" and the State vs view tab's token columns read "None")."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from ui.widgets import EMPTY_CELL


def dataframes(at: AppTest) -> list:
    return list(at.dataframe)


def test_every_table_of_the_layers_and_step_pages_names_its_empty_cells(start) -> None:  # noqa: ANN001
    at = start("pages/layers.py", step="40")
    frames = dataframes(at)
    assert frames and all(f.proto.placeholder == EMPTY_CELL for f in frames)
    at = start("pages/step.py", step="40")
    at.session_state["step_tab"] = "State vs view"
    at.run()
    at.segmented_control(key="step_diff_scope").set_value("all rows").run()
    frames = dataframes(at)
    assert len(frames) == 2  # the categories, and the state-vs-view rows (None where a row is only on one side)
    assert frames and all(f.proto.placeholder == EMPTY_CELL for f in frames)
