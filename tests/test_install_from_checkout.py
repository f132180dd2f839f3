"""Installing from a checkout with real pip and uv: the CLI takes the monorepo's SDK; releases keep the range.

``packages/agentevals-cli/hatch_build.py`` points the CLI's SDK requirement at the sibling
``packages/agentevals-evaluator-sdk`` when building from a checkout (the index may not serve this release
line's SDK yet) and keeps ``agentevals-evaluator-sdk>=0.3,<0.4`` in what we publish.

Each installer runs in a fresh venv on a copy of the two packages. To keep the file fast, the pip venvs see
the test environment's third-party packages through a ``.pth`` file (a directory of links, without any
agentevals package), so pip resolves the two agentevals projects for real and installs nothing else; CI's
``.ci/run`` does the same install in an empty venv, with every dependency from the index.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import venv
from pathlib import Path

import pytest

# Builds wheels and runs pip/uv installs (each bounded at 300 s): more than the suite's default.
pytestmark = pytest.mark.timeout(1200)

ROOT = Path(__file__).resolve().parent.parent
SDK_VERSION = re.search(r'__version__ = "([^"]+)"', (
    ROOT / "packages/agentevals-evaluator-sdk/src/agentevals_evaluator_sdk/__about__.py").read_text("utf-8"))[1]
CLI_VERSION = re.search(r'__version__ = "([^"]+)"', (
    ROOT / "packages/agentevals-cli/src/agentevals/__about__.py").read_text("utf-8"))[1]
RANGE = "agentevals-evaluator-sdk<0.4,>=0.3"
OURS = ("agentevals", "_agentevals", "_editable_impl_agentevals", "__editable__")


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The two packages as a checkout has them (sources, metadata, build hook), outside the repository."""
    root = tmp_path_factory.mktemp("checkout")
    for package in ("agentevals-evaluator-sdk", "agentevals-cli"):
        src = ROOT / "packages" / package
        shutil.copytree(src, root / "packages" / package,
                        ignore=shutil.ignore_patterns("tests", "__pycache__", ".pytest_cache"))
    return root


@pytest.fixture(scope="module")
def third_party(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Links to this environment's installed packages, except agentevals' own."""
    links = tmp_path_factory.mktemp("third-party")
    site = Path(sysconfig.get_paths()["purelib"])
    for entry in site.iterdir():
        if not entry.name.startswith(OURS) and entry.suffix != ".pth":
            (links / entry.name).symlink_to(entry)
    return links


@pytest.fixture(scope="module")
def pip_env() -> dict[str, str]:
    """pip quiet and non-interactive; the index stays the machine's (the SDK 0.2 it serves must not be taken)."""
    return {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1", "AGENTEVALS_RELEASE_BUILD": ""}


@pytest.fixture(scope="module")
def pip(tmp_path_factory: pytest.TempPathFactory) -> list:
    """One pip for every venv of this file (``pip --python VENV``): the venvs need not bootstrap their own."""
    path = tmp_path_factory.mktemp("pip")
    venv.create(path, with_pip=True)
    return [path / "bin" / "python", "-m", "pip"]


@pytest.fixture(scope="module")
def build_backend(pip: list, pip_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """hatchling (and editables), for the installs run with ``--no-build-isolation`` (each isolated build installs it anew)."""
    target = tmp_path_factory.mktemp("hatchling")
    run([*pip, "install", "-q", "--target", target, "hatchling>=1.24", "editables"], pip_env)
    return target


def make_venv(path: Path, *site_dirs: Path) -> Path:
    """A venv without pip that sees ``site_dirs`` (through a ``.pth`` file)."""
    venv.create(path, with_pip=False)
    python = path / "bin" / "python"
    purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    Path(purelib, "zz_test_site_dirs.pth").write_text("".join(f"{d}\n" for d in site_dirs))
    return python


def run(command: list, env: dict[str, str], cwd: Path = ROOT, timeout: int = 300) -> str:
    proc = subprocess.run([str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, f"{command}: exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


def installed(python: Path, env: dict[str, str]) -> dict[str, dict]:
    """name → {version, requires, url, editable} for the two agentevals projects in that venv."""
    script = """
import importlib.metadata as md, json
out = {}
for name in ("agentevals-cli", "agentevals-evaluator-sdk"):
    dist = md.distribution(name)
    url = json.loads(dist.read_text("direct_url.json") or "{}")
    out[name] = {"version": dist.version, "requires": dist.requires or [], "url": url.get("url"),
                 "editable": url.get("dir_info", {}).get("editable", False)}
print(json.dumps(out))
"""
    return json.loads(run([python, "-c", script], env))


def test_pip_install_of_the_cli_path_installs_the_checkouts_sdk(checkout, third_party, pip, pip_env, tmp_path):
    python = make_venv(tmp_path / "venv", third_party)
    run([*pip, "--python", python, "install", "-q", "./packages/agentevals-cli"], pip_env, cwd=checkout)
    got = installed(python, pip_env)
    assert got["agentevals-evaluator-sdk"]["version"] == SDK_VERSION
    assert got["agentevals-evaluator-sdk"]["url"] == (checkout / "packages/agentevals-evaluator-sdk").resolve().as_uri()
    assert not got["agentevals-cli"]["editable"]
    bin_dir = python.parent
    assert run([bin_dir / "agentevals", "--version"], pip_env).startswith(f"agentevals {CLI_VERSION} ")
    out = run([bin_dir / "agentevals", "run", "examples/traces/helm.json", "-e", "examples/evalsets/eval_set_helm.json",
               "-m", "tool_trajectory_avg_score", "--no-store"], {**pip_env, "NO_COLOR": "1"})
    assert "1 case: 1 passed, 0 failed" in out, out
    # The installed SDK is the one `.py` evaluators import.
    assert run([python, "-c", "import agentevals_evaluator_sdk as s; print(s.__version__)"], pip_env).strip() == SDK_VERSION


def test_pip_install_of_both_paths_still_works(checkout, third_party, build_backend, pip, pip_env, tmp_path):
    python = make_venv(tmp_path / "venv", third_party, build_backend)
    run([*pip, "--python", python, "install", "-q", "--no-build-isolation", "./packages/agentevals-evaluator-sdk", "./packages/agentevals-cli"],
        pip_env, cwd=checkout)
    assert installed(python, pip_env)["agentevals-evaluator-sdk"]["version"] == SDK_VERSION


def test_editable_installs_require_the_range(checkout, third_party, build_backend, pip, pip_env, tmp_path):
    """pip refuses an editable SDK beside a direct-URL requirement of it, so editable builds keep the range."""
    python = make_venv(tmp_path / "venv", third_party, build_backend)
    run([*pip, "--python", python, "install", "-q", "--no-build-isolation", "-e", "packages/agentevals-evaluator-sdk", "-e", "packages/agentevals-cli"],
        pip_env, cwd=checkout)
    got = installed(python, pip_env)
    assert got["agentevals-cli"]["editable"] and got["agentevals-evaluator-sdk"]["editable"]
    assert RANGE in got["agentevals-cli"]["requires"]


@pytest.mark.skipif(shutil.which("uv") is None, reason="uv is not on PATH")
def test_uv_pip_install_of_the_cli_path_installs_the_checkouts_sdk(checkout, pip_env, tmp_path):
    run(["uv", "venv", "-q", tmp_path / "venv"], pip_env)
    python = tmp_path / "venv" / "bin" / "python"
    run(["uv", "pip", "install", "-q", "--python", python, "./packages/agentevals-cli"], pip_env, cwd=checkout)
    got = installed(python, pip_env)
    assert got["agentevals-evaluator-sdk"]["version"] == SDK_VERSION
    assert got["agentevals-evaluator-sdk"]["url"] == (checkout / "packages/agentevals-evaluator-sdk").resolve().as_uri()


@pytest.mark.skipif(shutil.which("hatch") is None, reason="hatch is not on PATH (the release build uses it)")
def test_release_artefacts_require_the_range(checkout, pip_env, tmp_path):
    """tools/check_release.py --build builds what we publish and checks it; a build from the sdist agrees."""
    tool = [sys.executable, ROOT / "tools" / "check_release.py"]
    dist = tmp_path / "dist"
    out = run([*tool, "--build", dist], pip_env)
    assert out.endswith(f"{dist}: wheels and sdists publishable\n"), out
    metadata = {p.name: _metadata(p) for p in dist.glob("agentevals_cli-*")}
    assert sorted(metadata) == [f"agentevals_cli-{CLI_VERSION}-py3-none-any.whl", f"agentevals_cli-{CLI_VERSION}.tar.gz"]
    for text in metadata.values():
        assert f"Requires-Dist: {RANGE}\n" in text and "@ file:" not in text

    # A wheel built from the sdist (no sibling SDK there) has the range, with the release variable unset.
    with tarfile.open(dist / f"agentevals_cli-{CLI_VERSION}.tar.gz") as sdist:
        sdist.extractall(tmp_path / "unpacked", **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    wheels = tmp_path / "from-sdist"
    run(["hatch", "build", "-t", "wheel", wheels], pip_env, cwd=tmp_path / "unpacked" / f"agentevals_cli-{CLI_VERSION}")
    assert f"Requires-Dist: {RANGE}\n" in _metadata(next(wheels.glob("*.whl")))

    # Built from the checkout without the release variable, the wheel points at the sibling SDK, and the
    # check says so: that wheel is not publishable.
    bad = tmp_path / "bad"
    run(["hatch", "build", "-t", "wheel", bad], pip_env, cwd=checkout / "packages" / "agentevals-cli")
    proc = subprocess.run([str(c) for c in [*tool, "--dist", bad]], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    wheel = f"agentevals_cli-{CLI_VERSION}-py3-none-any.whl"
    sibling = (checkout / "packages/agentevals-evaluator-sdk").resolve().as_uri()
    assert (f"release check: {wheel}: Requires-Dist 'agentevals-evaluator-sdk @ {sibling}' is a direct reference "
            "(PyPI refuses it; build with AGENTEVALS_RELEASE_BUILD=1)\n") in proc.stderr, proc.stderr


def _metadata(path: Path) -> str:
    spec = importlib.util.spec_from_file_location("check_release", ROOT / "tools" / "check_release.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.artefact_metadata(path)
