"""Engine tests: generated inputs, real evaluator processes."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # ``support`` is importable
