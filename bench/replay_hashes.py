"""Hash every replay report: each thread of the samples and ../shared/traces under every preset.

A refactor that must not change what the engine computes (a layout change, a faster path) is proved by
running this before and after and comparing the two lists (`--out before.txt`, then `diff`). It drives
the public command line in-process (`ctxi replay FILE --preset P --json`), so it reads the same report a
user gets, whatever modules the engine is made of.

    python bench/replay_hashes.py --out /tmp/before.txt [--traces ../shared/traces] [--presets a,b]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine import preset as _preset  # noqa: E402  (after the path fix above)
from engine.cli.ctxi import main  # noqa: E402

# Files in ../shared/traces that are not threads of their own (a sub-agent file opens with its parent).
_SKIP_PARTS = ("subagents",)


def thread_files(traces: Path | None) -> list[Path]:
    files = sorted(p for p in (ROOT / "sample_threads").glob("*.json"))
    if traces is not None and traces.is_dir():
        files += sorted(p for p in traces.rglob("*") if p.is_file() and p.name != "SOURCE.txt"
                        and not p.name.startswith("LICENSE")
                        and not any(part in _SKIP_PARTS for part in p.parts))
    return files


def preset_names() -> list[str]:
    # Every preset `preset()` accepts: the error for an unknown one lists them.
    try:
        _preset("\0")
    except Exception as exc:  # noqa: BLE001
        text = str(exc)
        return [name.strip() for name in text.split("choose one of", 1)[1].split(",")]
    raise SystemExit("could not list the presets")


def report_hash(file: Path, preset: str | None) -> str:
    """The hash of `ctxi replay FILE --preset P --json`, or of `ctxi inspect FILE --json` without a preset."""
    out, err = io.StringIO(), io.StringIO()
    argv = ["replay", str(file), "--preset", preset, "--json"] if preset else ["inspect", str(file), "--json"]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
    text = out.getvalue() if code == 0 else f"exit {code}: {err.getvalue().strip()}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16] + ("" if code == 0 else " ERR")


def main_(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", default=str(ROOT.parent / "shared" / "traces"))
    ap.add_argument("--presets", help="comma-separated presets (default: every preset)")
    ap.add_argument("--out", help="write the list here as well")
    args = ap.parse_args(argv)
    presets = args.presets.split(",") if args.presets else preset_names()
    lines = []
    for file in thread_files(Path(args.traces)):
        name = file.relative_to(file.parents[1]) if "traces" in file.parts else file.relative_to(ROOT)
        for preset in [None, *presets]:
            line = f"{name} {preset or 'inspect'} {report_hash(file, preset)}"
            lines.append(line)
            print(line, flush=True)
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main_())
