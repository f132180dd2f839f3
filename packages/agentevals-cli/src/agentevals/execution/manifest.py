"""``evaluator.yaml``: the manifest next to an evaluator file (name, description, protocol version…).

Only ``protocol_version`` changes how the evaluator is run: the CLI sends the version both sides
speak (same major, the lower minor); without one it sends the CLI's own version. The other fields
(``name``, ``description``, ``language``, ``entrypoint``, ``tags``, ``author``) feed registry indexes.
Unknown keys are kept for other tools and ignored here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..core._docs import ATTRIBUTE_DOCS
from ..core._validation import format_validation_error
from ..errors import ConfigError, ProtocolVersionError
from ..protocol import PROTOCOL_VERSION, negotiate

__all__ = ["MANIFEST_NAME", "Manifest", "protocol_version_for", "read_manifest"]

MANIFEST_NAME = "evaluator.yaml"


class Manifest(BaseModel):
    """Metadata of one evaluator."""

    model_config = ConfigDict(extra="allow", **ATTRIBUTE_DOCS)

    name: str | None = None
    description: str | None = None
    language: str | None = None
    entrypoint: str | None = None
    """The evaluator file, relative to the manifest."""
    tags: list[str] = Field(default_factory=list)
    author: str | None = None
    protocol_version: str | None = None
    """Wire protocol version the evaluator speaks ("MAJOR.MINOR")."""


def read_manifest(directory: Path) -> Manifest | None:
    """The manifest in ``directory``, or None when there is none. Raises ``ConfigError`` when invalid."""
    path = directory / MANIFEST_NAME
    if not path.is_file():
        return None
    import yaml

    from ..core._files import read_input
    from ..core._yaml import safe_load
    from ..errors import InputFileError

    try:
        data: Any = safe_load(read_input(path).decode("utf-8"))
    except InputFileError as exc:
        raise ConfigError(str(exc)) from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot read the manifest: {str(exc).splitlines()[0]}") from None
    if data is None:
        return Manifest()
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of manifest fields, got {type(data).__name__}")
    if isinstance(data.get("protocol_version"), (int, float)):
        data["protocol_version"] = str(data["protocol_version"])
    try:
        return Manifest.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{path}: {format_validation_error(exc)}") from None


def protocol_version_for(program: Path) -> str:
    """The protocol version to send to ``program`` (from its manifest, else the CLI's)."""
    manifest = read_manifest(program.parent)
    declared = manifest.protocol_version if manifest else None
    if declared is None:
        return PROTOCOL_VERSION
    try:
        return negotiate(declared, peer=f"{program.parent / MANIFEST_NAME}")
    except ProtocolVersionError as exc:
        raise ConfigError(str(exc)) from None
