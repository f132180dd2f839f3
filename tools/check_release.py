"""Release check (run by CI): every package's version has its changelog entry and the packages pair up.

    python tools/check_release.py            # exit 0, or one line per problem and exit 1

Checks, for both packages:

- the version in ``src/<pkg>/__about__.py`` has a ``## <version>`` heading in the package's CHANGELOG.md
  (a version bump without its entry fails);
- the version is above the last release of the previous code line published under the same name
  (``agentevals-cli`` 0.11.0, ``agentevals-evaluator-sdk`` 0.2.0): a lower one would never be picked by
  an ``agentevals-cli>=0.11`` pin, and pip would prefer the index's older SDK over ours;

and that the CLI's ``agentevals-evaluator-sdk`` requirement admits the SDK's own version but no earlier
minor release, so an install never pairs this CLI with an older SDK.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {
    "agentevals-cli": ROOT / "packages/agentevals-cli",
    "agentevals-evaluator-sdk": ROOT / "packages/agentevals-evaluator-sdk",
}
PUBLISHED_BEFORE = {"agentevals-cli": Version("0.11.0"), "agentevals-evaluator-sdk": Version("0.2.0")}
"""The last releases of the previous code line under our names; ours must be above them."""


def package_version(package_dir: Path) -> Version:
    about = next((package_dir / "src").glob("*/__about__.py"))
    match = re.search(r'^__version__\s*=\s*"([^"]+)"', about.read_text("utf-8"), re.M)
    if not match:
        raise SystemExit(f"{about}: no __version__ = \"…\" line")
    return Version(match.group(1))


def changelog_versions(package_dir: Path) -> set[Version]:
    """Versions that have a ``## X.Y.Z`` heading (a date or other text may follow)."""
    text = (package_dir / "CHANGELOG.md").read_text("utf-8")
    return {Version(m.group(1)) for m in re.finditer(r"^## \[?v?(\d+(?:\.\d+)+)\]?", text, re.M)}


def sdk_requirement(cli_dir: Path) -> Requirement:
    text = (cli_dir / "pyproject.toml").read_text("utf-8")
    for line in re.findall(r'^\s*"(agentevals-evaluator-sdk[^"]*)"', text, re.M):
        return Requirement(line)
    raise SystemExit(f"{cli_dir / 'pyproject.toml'}: no agentevals-evaluator-sdk requirement")


def problems(packages: dict[str, Path] = PACKAGES) -> list[str]:
    """Every problem found, one line each (empty when the release is consistent)."""
    out: list[str] = []
    versions = {}
    for name, directory in packages.items():
        version = versions[name] = package_version(directory)
        if version not in changelog_versions(directory):
            out.append(f"{name} {version}: {directory.name}/CHANGELOG.md has no '## {version}' entry "
                       "(a version bump needs its changelog entry)")
        floor = PUBLISHED_BEFORE.get(name)
        if floor is not None and version <= floor:
            out.append(f"{name} {version}: must be above {floor}, the last release published under this name")
    requirement = sdk_requirement(packages["agentevals-cli"])
    sdk = versions["agentevals-evaluator-sdk"]
    if not requirement.specifier.contains(sdk, prereleases=True):
        out.append(f"agentevals-cli requires '{requirement}', which excludes this tree's SDK {sdk}")
    older = Version(f"{sdk.major}.{sdk.minor - 1}.999") if sdk.minor else None
    if older is not None and requirement.specifier.contains(older, prereleases=True):
        out.append(f"agentevals-cli requires '{requirement}', which also admits an older SDK ({older}); "
                   f"raise its lower bound to >={sdk.major}.{sdk.minor}")
    return out


def main() -> int:
    found = problems()
    for line in found:
        print(f"release check: {line}", file=sys.stderr)
    if not found:
        print("release check: " + ", ".join(f"{n} {package_version(d)}" for n, d in PACKAGES.items()) + " consistent")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
