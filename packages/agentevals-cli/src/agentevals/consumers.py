"""Deprecated alias of agentevals.engine.consumers."""

import sys

from .engine import consumers as _m

sys.modules[__name__] = _m
