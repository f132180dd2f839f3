"""Run the fuzz targets of tests/hostile/test_fuzz.py with the long hypothesis profile (thousands of
examples per target; minutes). CI runs the short profile as part of ``hatch run test``.

    hatch run python tools/fuzz.py            # every target
    hatch run python tools/fuzz.py -k config  # some (pytest's -k)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

if __name__ == "__main__":
    env = {**os.environ, "AGENTEVALS_FUZZ_PROFILE": os.environ.get("AGENTEVALS_FUZZ_PROFILE", "long")}
    command = [sys.executable, "-m", "pytest", str(ROOT / "tests" / "hostile" / "test_fuzz.py"), "-q", *sys.argv[1:]]
    sys.exit(subprocess.call(command, cwd=ROOT, env=env))
