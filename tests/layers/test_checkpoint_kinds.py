"""Every attribute a layer changes while it replays has a checkpoint kind (engine/layers/checkpoint.py).

A resumed replay (engine/run/resume.py) puts each layer's state back from a checkpoint by those
kinds; an attribute without one would be left at its fresh value, silently. These tests replay every
preset (and the request-only context-editing styles) over real and synthetic threads, compare each
layer's attributes (and its helpers') before and after, and name any attribute that changed without
a kind. They also check the kinds themselves and the invariant the `grow` kind relies on.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from engine.config.presets import PRESETS
from engine.config.schema import EngineConfig, preset
from engine.formats import load_thread
from engine.layers import checkpoint as layer_state
from engine.layers.checkpoint import KINDS, CheckpointError, checkpointable, kinds_of
from engine.run import replay as replay_module
from engine.run.replay import replay
from engine.thread.model import Thread
from engine.thread.synthetic import synthetic_thread
from tests.conftest import TRACES

_TRACES = ("claude-code/4d5611e5-241a-462a-8d15-5122611a9569.jsonl", "codex/vibecodingtracker-codex.jsonl",
           "gemini/vibecodingtracker-session.jsonl", "swe-agent/pydicom__pydicom-1458.traj")


def _threads() -> Iterator[Thread]:
    yield synthetic_thread(90, seed=5)
    for name in _TRACES:
        path = TRACES / name
        if path.exists():
            yield load_thread(path)


def _configs() -> Iterator[EngineConfig]:
    for name in PRESETS:
        yield preset(name)
    for style in ("anthropic", "langchain"):  # the request-only styles (the presets' is claude-code)
        yield preset("claude-code").with_overrides([f"context_editing.style={style}", "context_editing.trigger=tokens:2000"])


def _fingerprint(value: Any) -> Any:
    """What tells a value changed: its identity, and for containers a shallow copy of what they hold."""
    if isinstance(value, (list, dict, set)):
        return (id(value), copy.copy(value))
    return (id(value), None)


def _changed(before: Any, value: Any) -> bool:
    ident, held = before
    if ident != id(value):
        return True
    return held is not None and held != value


def _walk(obj: Any, path: str) -> Iterator[tuple[str, Any]]:
    """`obj` and the helper objects under it (attributes of kind `helper`), with their paths."""
    yield path, obj
    for name, kind in kinds_of(obj).items():
        value = getattr(obj, name, None)
        if kind == "helper" and value is not None:
            yield from _walk(value, f"{path}.{name}")


def _state(obj: Any) -> dict[str, Any]:
    names = getattr(obj, "__dict__", None)
    if names is not None:
        return {k: _fingerprint(v) for k, v in vars(obj).items()}
    return {k: _fingerprint(getattr(obj, k)) for k in getattr(type(obj), "__slots__", ()) if hasattr(obj, k)}


def test_every_attribute_a_replay_changes_has_a_checkpoint_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[Any] = []
    before: dict[tuple[int, str], dict[str, Any]] = {}
    build = replay_module.build_layers

    def recording_build(config: EngineConfig, context: Any) -> list[Any]:
        layers = build(config, context)
        made.clear()
        made.extend(layers)
        for layer in layers:
            for path, obj in _walk(layer, type(layer).__name__):
                before[(id(layer), path)] = _state(obj)
        return layers

    monkeypatch.setattr(replay_module, "build_layers", recording_build)
    missing: set[str] = set()
    checked = 0
    for thread in _threads():
        for config in _configs():
            before.clear()
            replay(thread, config)
            for layer in made:
                assert checkpointable(layer), f"{type(layer).__name__} declares no checkpoint_kinds"
                for path, obj in _walk(layer, type(layer).__name__):
                    kinds = kinds_of(obj)
                    old = before.get((id(layer), path), {})
                    for name in _state(obj):
                        changed = name not in old or _changed(old[name], getattr(obj, name))
                        checked += 1
                        if changed and name not in kinds:
                            missing.add(f"{path}.{name}")
    # not vacuous: 917 attributes checked on the synthetic thread alone (../shared/traces absent), more with them
    assert checked > 800
    assert not missing, ("attributes a replay changes without a checkpoint kind (add them to the class's "
                         f"checkpoint_kinds, engine/layers/checkpoint.py): {sorted(missing)}")


def test_every_declared_kind_is_one_the_checkpoint_knows() -> None:
    seen = 0
    for thread in list(_threads())[:1]:
        for config in _configs():
            from engine.layers import LayerContext, build_layers

            for layer in build_layers(config, LayerContext(thread=thread, window_tokens=200_000)):
                for _, obj in _walk(layer, type(layer).__name__):
                    for name, kind in kinds_of(obj).items():
                        seen += 1
                        assert kind in KINDS, f"{type(obj).__name__}.{name}: unknown kind {kind!r}"
    assert seen > 50


def test_a_list_written_below_its_checkpointed_length_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The verification mode the resume tests run in: a `grow` list changed below its length after the
    checkpoint makes the restore fail loudly instead of resuming from a state that never was."""

    class Holder:
        checkpoint_kinds = {"seen": "grow", "ids": "ordered"}

        def __init__(self) -> None:
            self.seen: list[int] = [1, 2, 3]
            self.ids: dict[str, None] = {"a": None, "b": None}

    monkeypatch.setenv(layer_state.VERIFY_ENV, "1")
    holder = Holder()
    saved = layer_state.save(holder)
    holder.seen.append(4)  # appending is what `grow` allows
    holder.ids["c"] = None
    fresh = Holder()
    layer_state.restore(fresh, saved)
    assert fresh.seen == [1, 2, 3] and fresh.seen is not holder.seen
    assert list(fresh.ids) == ["a", "b"]
    holder.seen[0] = 99  # a write below the checkpointed length
    with pytest.raises(CheckpointError, match="seen: the list was written below"):
        layer_state.restore(Holder(), saved)
