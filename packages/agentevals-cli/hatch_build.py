"""Build-time metadata of agentevals-cli: its SDK requirement, pointed at the monorepo's SDK in a checkout.

The CLI requires ``agentevals-evaluator-sdk>=0.3,<0.4``. A release of the pair publishes the SDK first,
but in a checkout the SDK of the same release line may not be on the index yet, so
``pip install ./packages/agentevals-cli`` alone would find nothing to satisfy the range. This hook
(hatchling's ``[tool.hatch.metadata.hooks.custom]``) keeps the range, and when the build runs in a
checkout whose sibling ``../agentevals-evaluator-sdk`` has a version inside it, requires that directory
instead (``agentevals-evaluator-sdk @ file:///…/packages/agentevals-evaluator-sdk``)::

    pip install ./packages/agentevals-cli      # installs ./packages/agentevals-evaluator-sdk too

The plain range is kept (no direct reference, which PyPI refuses anyway) when:

- ``AGENTEVALS_RELEASE_BUILD=1`` is set: the release procedure sets it to build the wheel and sdist it
  publishes (docs/releasing.md; ``tools/check_release.py --dist`` checks the artefacts);
- the build is an sdist (a published artefact; a wheel built from it has no sibling anyway);
- there is no sibling SDK, as when building a wheel from the sdist;
- the sibling's version is outside the range (the check_release test says which to fix);
- the build is an editable one (``pip install -e``, ``hatch env``): the editable install lists the SDK
  itself (``-e packages/agentevals-evaluator-sdk``), and pip and uv refuse a second, non-editable
  requirement for the same project by URL.
"""

from __future__ import annotations

import inspect
import os
import re
from pathlib import Path

from hatchling.metadata.plugin.interface import MetadataHookInterface
from packaging.requirements import Requirement
from packaging.version import Version

SDK = "agentevals-evaluator-sdk"
RELEASE_ENV = "AGENTEVALS_RELEASE_BUILD"
EDITABLE_HOOKS = {"build_editable", "prepare_metadata_for_build_editable", "get_requires_for_build_editable"}
"""PEP 660 backend functions: the build is an editable install when one of them is on the call stack."""
BACKEND = os.path.join("hatchling", "build.py")


def sibling_sdk_version(root: Path) -> Version | None:
    """The version of the SDK beside this package in the monorepo, or None when there is none."""
    sdk = root.parent / SDK
    about = next(iter(sorted(sdk.glob("src/*/__about__.py"))), None)
    if not (sdk / "pyproject.toml").is_file() or about is None:
        return None
    match = re.search(r'^__version__\s*=\s*"([^"]+)"', about.read_text("utf-8"), re.M)
    return Version(match.group(1)) if match else None


def editable_or_sdist_build() -> bool:
    """Whether hatchling was called through a PEP 660 (editable) hook or is building an sdist.

    The metadata hook API does not say which target asks for the metadata; hatchling's call stack does.
    """
    from hatchling.builders.sdist import SdistBuilder

    return any((frame.filename.endswith(BACKEND) and frame.function in EDITABLE_HOOKS)
               or isinstance(frame.frame.f_locals.get("self"), SdistBuilder) for frame in inspect.stack(context=0))


def sdk_requirement(range_requirement: str, root: Path) -> str:
    """The SDK requirement to publish in this build's metadata (see the module docstring)."""
    requirement = Requirement(range_requirement)
    if os.environ.get(RELEASE_ENV, "") not in ("", "0") or editable_or_sdist_build():
        return range_requirement
    version = sibling_sdk_version(root)
    if version is None or not requirement.specifier.contains(version, prereleases=True):
        return range_requirement
    return f"{SDK} @ {(root.parent / SDK).resolve().as_uri()}"


class CustomMetadataHook(MetadataHookInterface):
    """Sets ``dependencies`` from the hook's ``dependencies`` list, the SDK line as described above."""

    def update(self, metadata: dict) -> None:
        root = Path(self.root)
        metadata["dependencies"] = [
            sdk_requirement(line, root) if Requirement(line).name == SDK else line
            for line in self.config["dependencies"]
        ]
