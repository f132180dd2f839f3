"""tools/check_release.py: a version bump needs its changelog entry; the CLI's SDK range is this tree's SDK."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "tools" / "check_release.py"


def load_tool():
    spec = importlib.util.spec_from_file_location("check_release", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    """A copy of both packages' version, changelog and pyproject files."""
    packages = {}
    for name in ("agentevals-cli", "agentevals-evaluator-sdk"):
        src = ROOT / "packages" / name
        dst = tmp_path / name
        for rel in ("CHANGELOG.md", "pyproject.toml", *(str(p.relative_to(src)) for p in src.glob("src/*/__about__.py"))):
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src / rel, dst / rel)
        packages[name] = dst
    return packages


def set_version(package: Path, version: str) -> None:
    about = next(package.glob("src/*/__about__.py"))
    about.write_text(f'"""Version."""\n\n__version__ = "{version}"\n')


def test_this_tree_is_consistent():
    proc = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("release check: agentevals-cli 0.12.0, agentevals-evaluator-sdk 0.3.0")


def test_a_bump_without_changelog_entry_fails(tree):
    tool = load_tool()
    assert tool.problems(tree) == []
    set_version(tree["agentevals-cli"], "0.12.1")
    assert tool.problems(tree) == [
        "agentevals-cli 0.12.1: agentevals-cli/CHANGELOG.md has no '## 0.12.1' entry "
        "(a version bump needs its changelog entry)"]


def test_versions_must_be_above_the_published_line(tree):
    tool = load_tool()
    set_version(tree["agentevals-cli"], "0.2.0")
    (tree["agentevals-cli"] / "CHANGELOG.md").write_text("## 0.2.0\n")
    assert tool.problems(tree) == [
        "agentevals-cli 0.2.0: must be above 0.11.0, the last release published under this name"]


@pytest.mark.parametrize(
    ("requirement", "problem"),
    [
        ("agentevals-evaluator-sdk>=0.1,<1", "agentevals-cli requires 'agentevals-evaluator-sdk<1,>=0.1', which also "
                                             "admits an older SDK (0.2.999); raise its lower bound to >=0.3"),
        ("agentevals-evaluator-sdk>=0.4", "agentevals-cli requires 'agentevals-evaluator-sdk>=0.4', which excludes "
                                          "this tree's SDK 0.3.0"),
    ],
)
def test_the_cli_pairs_only_with_this_sdk(tree, requirement, problem):
    tool = load_tool()
    pyproject = tree["agentevals-cli"] / "pyproject.toml"
    text = pyproject.read_text()
    pyproject.write_text(text.replace('"agentevals-evaluator-sdk>=0.3,<0.4"', f'"{requirement}"'))
    assert tool.problems(tree) == [problem]


def _artefacts(dist: Path, cli_requires: dict[str, str]) -> None:
    """A wheel and an sdist of each package whose metadata lists ``Requires-Dist`` lines."""
    import io
    import tarfile
    import zipfile

    for name, version, requires in (("agentevals_evaluator_sdk", "0.3.0", ["pydantic<3,>=2.4"]),
                                    ("agentevals_cli", "0.12.0", None)):
        for kind in ("wheel", "sdist"):
            lines = requires or [cli_requires[kind]]
            metadata = f"Metadata-Version: 2.4\nName: {name}\nVersion: {version}\n" + "".join(
                f"Requires-Dist: {line}\n" for line in lines)
            if kind == "wheel":
                with zipfile.ZipFile(dist / f"{name}-{version}-py3-none-any.whl", "w") as wheel:
                    wheel.writestr(f"{name}-{version}.dist-info/METADATA", metadata)
            else:
                with tarfile.open(dist / f"{name}-{version}.tar.gz", "w:gz") as sdist:
                    info = tarfile.TarInfo(f"{name}-{version}/PKG-INFO")
                    info.size = len(metadata.encode())
                    sdist.addfile(info, io.BytesIO(metadata.encode()))


def test_release_artefacts_require_the_sdk_range_and_no_path(tmp_path):
    tool = load_tool()
    _artefacts(tmp_path, {"wheel": "agentevals-evaluator-sdk<0.4,>=0.3", "sdist": "agentevals-evaluator-sdk<0.4,>=0.3"})
    assert tool.artefact_problems(tmp_path) == []

    bad = tmp_path / "bad"
    bad.mkdir()
    _artefacts(bad, {"wheel": "agentevals-evaluator-sdk @ file:///src/packages/agentevals-evaluator-sdk",
                     "sdist": "agentevals-evaluator-sdk>=0.3"})
    assert tool.artefact_problems(bad) == [
        "agentevals_cli-0.12.0-py3-none-any.whl: Requires-Dist 'agentevals-evaluator-sdk @ "
        "file:///src/packages/agentevals-evaluator-sdk' is a direct reference (PyPI refuses it; build with "
        "AGENTEVALS_RELEASE_BUILD=1)",
        "agentevals_cli-0.12.0.tar.gz: requires ['agentevals-evaluator-sdk>=0.3'], expected "
        "['agentevals-evaluator-sdk<0.4,>=0.3']",
    ]
    (bad / "agentevals_cli-0.12.0.tar.gz").unlink()
    assert tool.artefact_problems(bad)[0] == (
        f"{bad}: expected a wheel and an sdist of agentevals-cli 0.12.0, found "
        "['agentevals_cli-0.12.0-py3-none-any.whl']")
