"""The package's public surface: every name in ``__all__`` resolves (lazily), nothing public is unlisted."""

from __future__ import annotations

import subprocess
import sys

import agentevals


def test_all_names_resolve():
    assert len(set(agentevals.__all__)) == len(agentevals.__all__)
    for name in agentevals.__all__:
        assert getattr(agentevals, name) is not None, name


def test_every_public_name_is_listed():
    for name in agentevals.__all__:
        getattr(agentevals, name)  # materialise the lazy ones
    submodules = {name for name, value in vars(agentevals).items() if type(value).__name__ == "module"}
    public = {name for name in vars(agentevals) if not name.startswith("_")} - submodules - {"annotations"}
    public.add("__version__")
    assert public == set(agentevals.__all__)


def test_import_is_cheap():
    code = "import sys, agentevals\nprint(sorted(m for m in ('pydantic', 'yaml', 'jinja2', 'requests') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
