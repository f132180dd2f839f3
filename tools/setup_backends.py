"""Install the real trace backends the connector tests start (Phoenix, MLflow) into their own virtualenv.

Run by ``hatch run test`` before pytest. The servers are separate processes the tests reach over HTTP, so
they live apart from the dev environment (their pins never meet ours). The virtualenv is
``.local/backends`` (or ``$AGENTEVALS_BACKENDS_VENV``); it is rebuilt when tests/backends/requirements.txt
changes. A failed install is reported and the tests that need a server skip with the reason (a failure
under ``CI=true``).

    python tools/setup_backends.py          # install if needed; prints the virtualenv's bin folder
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REQUIREMENTS = ROOT / "tests" / "backends" / "requirements.txt"


def venv_dir() -> Path:
    return Path(os.environ.get("AGENTEVALS_BACKENDS_VENV") or ROOT / ".local" / "backends")


def bin_dir() -> Path:
    return venv_dir() / ("Scripts" if os.name == "nt" else "bin")


def main() -> int:
    target = venv_dir()
    digest = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()
    stamp = target / ".requirements-sha256"
    if stamp.exists() and stamp.read_text().strip() == digest:
        print(bin_dir())
        return 0
    shutil.rmtree(target, ignore_errors=True)
    try:
        venv.EnvBuilder(with_pip=True, clear=True).create(target)
        subprocess.run([str(bin_dir() / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        "-r", str(REQUIREMENTS)], check=True, timeout=1800)
    except (subprocess.SubprocessError, OSError) as exc:
        print(f"setup_backends: installing tests/backends/requirements.txt failed ({exc}); the Phoenix and MLflow "
              "tests will be skipped", file=sys.stderr)
        return 0
    stamp.write_text(digest)
    print(bin_dir())
    return 0


if __name__ == "__main__":
    sys.exit(main())
