"""The public surface: everything public is exported, and the SDK stays dependency-light."""

from __future__ import annotations

import subprocess
import sys

import agentevals_evaluator_sdk as sdk


def test_all_names_resolve_and_are_sorted_sets():
    assert len(set(sdk.__all__)) == len(sdk.__all__)
    for name in sdk.__all__:
        assert hasattr(sdk, name), name


def test_every_public_name_is_exported():
    public = {name for name in vars(sdk) if not name.startswith("_")}
    submodules = {"testing", "types", "decorator", "protocol", "errors"}
    assert public - submodules - set(sdk.__all__) == set()


def test_import_pulls_in_only_pydantic():
    code = (
        "import sys\nbefore = set(sys.modules)\n"
        "import sys, agentevals_evaluator_sdk\n"
        "third = {m.split('.')[0] for m in set(sys.modules) - before if not m.startswith('_')} - set(sys.stdlib_module_names)\n"
        "print(sorted(third))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    names = set(eval(out))
    assert names <= {"agentevals_evaluator_sdk", "pydantic", "pydantic_core", "typing_extensions",
                     "annotated_types", "typing_inspection"}, names
