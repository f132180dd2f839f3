"""A plugin installed as a real distribution: one module plus a ``*.dist-info`` with ``entry_points.txt``, in a
folder to put on a subprocess's ``PYTHONPATH`` (``with_site``), so ``importlib.metadata`` finds its entry points."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

__all__ = ["install_distribution", "with_site"]


def install_distribution(site: Path, module: str, source: str, entry_points: dict[str, dict[str, str]], *,
                         dist: str = "acme-plugin", version: str = "1.0") -> Path:
    """Write ``module.py`` (``source``, dedented) and ``dist``'s dist-info declaring ``entry_points``
    (group → {name: "module:attr"}) into ``site``; returns ``site``."""
    site.mkdir(parents=True, exist_ok=True)
    (site / f"{module}.py").write_text(textwrap.dedent(source))
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in eps.items()) + "\n"
        for group, eps in entry_points.items()))
    return site


def with_site(site: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's environment) with ``site`` first on ``PYTHONPATH``."""
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env
