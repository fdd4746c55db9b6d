"""One validated config: `schema.EngineConfig` and `preset()`, its sections, thresholds as data (`sizes`),
the presets' fields (`presets`), DeerFlow's config.yaml, `--set` overrides, one-line validation errors,
loading a YAML file; and what a dashboard link may set (`links`, `settings`) and settings that defeat
themselves (`setting_warnings`).

May import: base.
"""
