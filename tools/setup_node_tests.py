"""Install the Node tools the test-suite uses (tsx, for ``.ts`` evaluators on Node < 22.6) from tests/node.

Run by ``hatch run test`` before pytest; does nothing when they are installed or npm is missing (the
TypeScript tests then skip with the reason).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

NODE_DIR = Path(__file__).resolve().parent.parent / "tests" / "node"


def main() -> int:
    if (NODE_DIR / "node_modules" / ".bin" / "tsx").exists():
        return 0
    npm = shutil.which("npm")
    if npm is None:
        print("setup_node_tests: npm not found; TypeScript evaluator tests will be skipped", file=sys.stderr)
        return 0
    try:
        subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=NODE_DIR, check=True,
                       timeout=600)
    except (subprocess.SubprocessError, OSError) as exc:
        print(f"setup_node_tests: npm ci in tests/node failed ({exc}); TypeScript tests will be skipped",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
