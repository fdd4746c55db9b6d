"""Compare sessions at 1024 px (a projector): the settings radio is clear of the facts table's hover toolbar."""

from __future__ import annotations


def test_the_settings_radio_has_a_row_of_its_own_and_room_under_it(start) -> None:  # noqa: ANN001
    """In a third column beside the pickers its labels wrapped to four lines at 1024 px and the facts table's toolbar
    (search, download, full screen: shown above the table's top right corner on hover) covered them."""
    at = start("pages/compare.py", thread="sample:a_demo", vs="sample:b_small")
    assert not at.exception, at.exception
    children = list(at.main.children.values())
    kinds = [getattr(c, "type", type(c).__name__) for c in children]
    radio = kinds.index("radio")
    assert children[radio].key == "cmp_how" and children[radio].proto.horizontal
    assert kinds[radio + 1:radio + 3] == ["space", "dataframe"], kinds
