"""Release check (run by CI): every package's version has its changelog entry and the packages pair up.

    python tools/check_release.py                  # exit 0, or one line per problem and exit 1
    python tools/check_release.py --build dist/    # also build the release wheels and sdists, then check them
    python tools/check_release.py --dist dist/     # also check wheels and sdists built before

``--build`` is how release artefacts are built (docs/releasing.md): ``hatch build -t wheel -t sdist`` in
each package with ``AGENTEVALS_RELEASE_BUILD=1``, so that the CLI's SDK requirement is the plain range and
not the checkout's ``file://`` SDK (packages/agentevals-cli/hatch_build.py).

Checks, for both packages:

- the version in ``src/<pkg>/__about__.py`` has a ``## <version>`` heading in the package's CHANGELOG.md
  (a version bump without its entry fails);
- the version is above the last release of the previous code line published under the same name
  (``agentevals-cli`` 0.11.0, ``agentevals-evaluator-sdk`` 0.2.0): a lower one would never be picked by
  an ``agentevals-cli>=0.11`` pin, and pip would prefer the index's older SDK over ours;

and that the CLI's ``agentevals-evaluator-sdk`` requirement admits the SDK's own version but no earlier
minor release, so an install never pairs this CLI with an older SDK. With ``--build``/``--dist``, every
wheel's and sdist's metadata must carry that requirement as written and no direct reference
(``name @ url``, which PyPI refuses).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from email.parser import HeaderParser
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {
    "agentevals-cli": ROOT / "packages/agentevals-cli",
    "agentevals-evaluator-sdk": ROOT / "packages/agentevals-evaluator-sdk",
}
RELEASE_ENV = "AGENTEVALS_RELEASE_BUILD"
"""Set to 1 while building release artefacts: the CLI then requires the SDK by range, never by path."""
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


def artefact_metadata(path: Path) -> str:
    """The core metadata of a wheel (``*.dist-info/METADATA``) or an sdist (top-level ``PKG-INFO``)."""
    if path.name.endswith(".whl"):
        with zipfile.ZipFile(path) as wheel:
            name = next(n for n in wheel.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA"))
            return wheel.read(name).decode("utf-8")
    with tarfile.open(path) as sdist:
        member = next(m for m in sdist.getmembers() if m.name.count("/") == 1 and m.name.endswith("/PKG-INFO"))
        return sdist.extractfile(member).read().decode("utf-8")


def artefact_problems(dist: Path, packages: dict[str, Path] = PACKAGES) -> list[str]:
    """Problems of the wheels and sdists in ``dist``: each package has both, requirements publishable."""
    out: list[str] = []
    wanted = sdk_requirement(packages["agentevals-cli"])
    for name, directory in packages.items():
        stem = f"{name.replace('-', '_')}-{package_version(directory)}"
        found = sorted([*dist.glob(f"{stem}-*.whl"), *dist.glob(f"{stem}.tar.gz")])
        if len(found) != 2:
            out.append(f"{dist}: expected a wheel and an sdist of {name} {package_version(directory)}, "
                       f"found {[p.name for p in found] or 'none'}")
        for artefact in found:
            lines = HeaderParser().parsestr(artefact_metadata(artefact)).get_all("Requires-Dist") or []
            requires = [(line, Requirement(line)) for line in lines]
            direct = [f"{artefact.name}: Requires-Dist '{line}' is a direct reference (PyPI refuses it; build "
                      f"with {RELEASE_ENV}=1)" for line, r in requires if r.url]
            sdk = [str(r) for _, r in requires if r.name == wanted.name]
            if not direct and name == "agentevals-cli" and sdk != [str(wanted)]:
                direct.append(f"{artefact.name}: requires {sdk}, expected ['{wanted}']")
            out += direct
    return out


def build(dist: Path, packages: dict[str, Path] = PACKAGES) -> list[str]:
    """Build each package's wheel and sdist into ``dist`` as a release does; the builds that failed."""
    dist.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, RELEASE_ENV: "1"}
    out = []
    for name, directory in packages.items():
        command = ["hatch", "build", "-t", "wheel", "-t", "sdist", str(dist.resolve())]
        try:
            proc = subprocess.run(command, cwd=directory, env=env, capture_output=True, text=True, timeout=300)
        except (OSError, subprocess.TimeoutExpired) as exc:
            out.append(f"{name}: '{' '.join(command)}' could not run: {exc}")
            continue
        if proc.returncode:
            last = (proc.stderr.strip() or proc.stdout.strip() or "no output").splitlines()[-1]
            out.append(f"{name}: '{' '.join(command)}' exited {proc.returncode}: {last}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--build", type=Path, metavar="DIR", help="build the release wheels and sdists into DIR, check them")
    group.add_argument("--dist", type=Path, metavar="DIR", help="check the wheels and sdists in DIR")
    args = parser.parse_args(argv)
    found = problems()
    dist = args.build or args.dist
    if args.build:
        found += build(args.build)
    if dist and not found:
        found += artefact_problems(dist)
    for line in found:
        print(f"release check: {line}", file=sys.stderr)
    if not found:
        checked = f"; {dist}: wheels and sdists publishable" if dist else ""
        print("release check: " + ", ".join(f"{n} {package_version(d)}" for n, d in PACKAGES.items())
              + " consistent" + checked)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
