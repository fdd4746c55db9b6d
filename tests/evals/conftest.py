"""The dashboard's AppTest and browser fixtures, shared with the Evals and Workshop page tests."""

from tests.e2e.conftest import (  # noqa: F401 - fixtures: the server, the browser, the screenshot folder
    app_url,
    browser_context_args,
    browser_type_launch_args,
    e2e_samples,
    screenshots,
)
from tests.ui.conftest import navigation_mode, samples_dir, start, workspace  # noqa: F401 - fixtures: AppTest from app.py
