"""What a sweep's worker needs before its first task, loaded once in the forkserver it forks from.

`engine.evals.sweep` names this module in `set_forkserver_preload`: the server imports it once, and every
worker forked from it starts with the replay's modules imported and the default counter's encoding
built (`load_encoding("o200k_base")`: 0.22 s of CPU in each new worker, every sweep, when each built its
own; a worker's first task took 0.41 s against 0.14 s for the next). The encoding's tables are shared
with the workers copy-on-write. Importing this module anywhere else builds that encoding, nothing more.
"""

from __future__ import annotations

import engine.cost
import engine.evals
import engine.run.replay  # noqa: F401 - imported for the forked workers
from engine.tokens.counters import DEFAULT_COUNTER
from engine.tokens.encodings import load_encoding

load_encoding(DEFAULT_COUNTER)
