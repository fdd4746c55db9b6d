"""The dashboard fixtures of tests/ui (AppTest on a folder of test threads) for the safety tests."""

from tests.ui.conftest import navigation_mode, samples_dir, start, workspace  # noqa: F401 - pytest fixtures
