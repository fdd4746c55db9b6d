"""The advice shown when a run has no compaction matches the sidebar the user has (ui/advice.py):
"lower the trigger" led nowhere on the as-recorded run, whose sidebar has no trigger."""

from __future__ import annotations

from engine.config.schema import preset
from engine.config.settings import with_layer
from ui.advice import no_compaction_advice


def test_each_kind_of_config_gets_the_control_it_has() -> None:
    recorded = no_compaction_advice(preset("as-recorded"))
    assert "replays the source agent's own compactions" in recorded and "pick a preset" in recorded
    assert "Lower the trigger" not in recorded
    assert no_compaction_advice(preset("claude-code")) == "Lower the compaction threshold in the sidebar to see one."
    # LangChain's default: no trigger clause, summarization never fires
    assert preset("langchain").summarization.trigger is None
    assert "has no clause" in no_compaction_advice(preset("langchain"))
    assert no_compaction_advice(preset("stress")) == "Lower the trigger in the sidebar to see one."
    neither = with_layer(preset("deepagents"), "summarization", False)
    assert "Neither summarization nor a compaction policy is on" in no_compaction_advice(neither)
    assert no_compaction_advice(preset("stress"), stress=True).endswith("Or use the Evals page's Stress mode tab.")


def test_the_layers_page_advises_a_preset_on_the_as_recorded_run(start) -> None:  # noqa: ANN001
    at = start(page="pages/layers.py", preset="as-recorded")
    infos = [i.value for i in at.info]
    summaries = [v for v in infos if v.startswith("No summarization happened")]
    assert summaries, infos
    assert "pick a preset in the sidebar" in summaries[0] and "Lower the trigger" not in summaries[0]



def test_the_evals_page_advises_a_preset_and_stress_mode_on_a_recorded_session(start, monkeypatch) -> None:  # noqa: ANN001
    """A recorded Claude Code session with no compaction in it: the as-recorded run has no trigger to lower,
    Stress mode has one (the claude-code preset, engine/evals/stress.py)."""
    from tests.conftest import trace_path

    monkeypatch.setenv("CTXI_OPEN", str(trace_path("claude-code", "short.jsonl")))  # what `ctxi ui FILE` sets
    at = start("pages/evals.py", tab="Needle retention & goal drift")
    assert at.session_state["config"].preset == "as-recorded"
    texts = [i.value for i in at.info if i.value.startswith("No compaction happened")]
    assert texts, [i.value for i in at.info]
    assert "pick a preset in the sidebar" in texts[0] and texts[0].endswith("Or use the Evals page's Stress mode tab.")


def test_the_survival_tab_advises_what_its_sidebar_has(start) -> None:  # noqa: ANN001
    """Evals › Compaction survival on the langchain preset (LangChain's default: no trigger clause)."""
    at = start("pages/evals.py", preset="langchain", tab="Compaction survival")
    texts = [i.value for i in at.info if i.value.startswith("No compaction after the first step")]
    assert texts, [i.value for i in at.info]
    assert "has no clause" in texts[0] and texts[0].endswith("Or use the Evals page's Stress mode tab.")
