"""Install both packages with the lowest versions their requirements allow and run the README's evaluation and
the core tests there: a floor that is too low (an API the code uses that older releases lack) shows up here,
not in a user's environment.

    python tools/lowest_deps.py [VENV]        # default: .local/lowest (gitignored); needs uv (hatch brings it)

``uv pip install --resolution lowest-direct`` takes each package's own requirements at their floors and the newest
of everything else, twice:

- with the extras ``openai,postgres,serve`` (click 8.2, openai 1.72, mcp 1.10, fastapi 0.115, protobuf 5.26, …;
  pydantic comes at 2.7, mcp 1.10's own floor), every test folder but ``execution`` (Ray is no extra here);
- a plain install (pydantic 2.4, the packages' own floor), the folders that need no extra.

Exit status: 0 when both passed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEST_TOOLS = ["pytest>=8", "pytest-timeout>=2.3", "jsonschema>=4.20", "hypothesis>=6.100", "junitparser>=3",
              "rouge-score>=0.1.2", "scipy>=1.11", "scikit-learn>=1.3", "httpx>=0.27", "websocket-client>=1.6"]
"""hatch.toml's test dependencies that these tests use, at their newest (they are not the floor under test)."""
TESTS = ["agentv", "cli", "config", "custom_evaluators", "engine", "evalsets", "evaluators", "openai_eval",
         "protocol", "python_api", "report", "results", "serve", "store", "traces", "transpile"]
"""The agentevals-cli test folders run with the extras (not ``execution``: Ray is no extra installed here)."""
PLAIN_TESTS = ["config", "engine", "evalsets", "protocol", "report", "results", "traces", "transpile"]
"""The folders run on a plain install: none of their tests needs an extra (an LLM judge needs ``openai``)."""
DEADLINE = 3600
VERSIONS = """
import importlib.metadata as m
names = ("pydantic", "click", "pyyaml", "orjson", "requests", "jinja2", "openai", "mcp", "fastapi", "protobuf")
installed = {d.metadata["Name"].lower() for d in m.distributions()}
print("lowest:", ", ".join(f"{n} {m.version(n)}" for n in names if n in installed))
"""


def uv(scratch: Path) -> list[str]:
    """uv on PATH, else the one of the Python that runs hatch (hatch depends on it), else one installed into
    ``scratch`` from the package registry."""
    found = shutil.which("uv")
    if found:
        return [found]
    if subprocess.run([sys.executable, "-m", "uv", "--version"], capture_output=True, timeout=60).returncode == 0:
        return [sys.executable, "-m", "uv"]
    tools = scratch / "uv-venv"
    subprocess.run([sys.executable, "-m", "venv", str(tools)], check=True, timeout=300)
    subprocess.run([str(tools / "bin" / "pip"), "install", "--quiet", "uv"], check=True, timeout=DEADLINE)
    return [str(tools / "bin" / "uv")]


def run(cmd: list[str], **kwargs: object) -> int:
    print("+", " ".join("<script>" if "\n" in part else part for part in cmd), flush=True)
    return subprocess.run(cmd, cwd=ROOT, timeout=DEADLINE, **kwargs).returncode  # type: ignore[call-overload]


def check(venv: Path, uv_cmd: list[str], extras: str, folders: list[str]) -> int:
    """Install both packages at their floors into ``venv`` (with ``extras``), then run the README's evaluation and
    the tests of ``folders`` there with the SDK's own; the tests' exit status."""
    if venv.exists():
        shutil.rmtree(venv)
    if run([*uv_cmd, "venv", "-q", "-p", sys.executable, str(venv)]):
        return 1
    python = str(venv / "bin" / "python")
    env = {**os.environ, "VIRTUAL_ENV": str(venv)}
    if run([*uv_cmd, "pip", "install", "-q", "--resolution", "lowest-direct", "-e", "packages/agentevals-evaluator-sdk",
            "-e", f"packages/agentevals-cli{f'[{extras}]' if extras else ''}"], env=env):
        return 1
    # The test tools at their newest, leaving the packages' own dependencies where they are.
    if run([*uv_cmd, "pip", "install", "-q", *TEST_TOOLS], env=env):
        return 1
    run([python, "-c", VERSIONS])
    readme = run([str(venv / "bin" / "agentevals"), "run", "examples/traces/helm_3.json", "--eval-set",
                  "examples/evalsets/evalset_helm_3_2026-02-23.json", "-m", "tool_trajectory_avg_score",
                  "-m", "response_match_score", "--no-store"], stdout=subprocess.DEVNULL)
    if readme:
        print(f"the README's evaluation failed on the lowest dependencies (exit {readme})", file=sys.stderr)
        return 1
    tests = [f"packages/agentevals-cli/tests/{name}" for name in folders]
    return run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not adk", *tests,
                "packages/agentevals-evaluator-sdk/tests"])


def main() -> int:
    venv = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / ".local" / "lowest"
    venv.parent.mkdir(parents=True, exist_ok=True)
    uv_cmd = uv(venv.parent)
    print("lowest dependencies, with the extras openai, postgres and serve", flush=True)
    extras = check(venv, uv_cmd, "openai,postgres,serve", TESTS)
    print("lowest dependencies, a plain install", flush=True)
    plain = check(venv.with_name(venv.name + "-plain"), uv_cmd, "", PLAIN_TESTS)
    return extras or plain


if __name__ == "__main__":
    sys.exit(main())
