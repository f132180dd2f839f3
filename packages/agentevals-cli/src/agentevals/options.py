"""Deprecated alias of agentevals.engine.options."""

import sys

from .engine import options as _m

sys.modules[__name__] = _m
