"""Deprecated alias of agentevals.engine (the engine package; ``run_evaluation`` lives in agentevals.engine.run)."""

import sys

from . import engine as _m

sys.modules[__name__] = _m
