"""Find an eval file's tests: inline ``tests:`` (with ``file://`` includes), ``tests: ./file.(yaml|jsonl)``,
``tests: ./folder/`` (one test per subfolder, as AgentV reads it), or a ``.jsonl`` with sidecar."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputFileError
from ._formats import expand_test_includes
from ._yaml import YamlMap, YamlSeq, load_jsonl, load_yaml, where

__all__ = ["describe", "load_suite"]


def describe(value: object) -> str:
    """A short name for a YAML value's kind, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _load_tests(path: Path, source: str) -> YamlSeq:
    if path.suffix.lower() == ".jsonl":
        return load_jsonl(path, source)
    tests = load_yaml(path, source)
    if not isinstance(tests, YamlSeq):
        at = where(source, tests)
        raise InputFileError(f"{at}: a test file must hold a list of tests, got {describe(tests)}")
    return tests


CASE_FILES = ("case.yaml", "case.yml")
"""The file that makes a subfolder of a ``tests:`` folder a test (AgentV's ``loadCasesFromDirectory``)."""


def _load_case_folder(folder: Path, source: str, warnings: list[str] | None) -> YamlSeq:
    """AgentV's ``tests: ./folder/``: each immediate subfolder, by name (code-point order), holding ``case.yaml``
    (else ``case.yml``) is one test, a mapping whose ``id`` defaults to the subfolder's name; a subfolder
    without one is skipped with a warning; files directly in the folder are not tests."""
    tests = YamlSeq()
    for sub in sorted((p for p in folder.iterdir() if p.is_dir()), key=lambda p: p.name):
        case_path = next((sub / name for name in CASE_FILES if (sub / name).is_file()), None)
        if case_path is None:
            if warnings is not None:
                warnings.append(f"{source}: skipping folder '{sub.name}': no case.yaml found")
            continue
        case_source = str(Path(source) / sub.name / case_path.name)
        case = load_yaml(case_path, case_source)
        if not isinstance(case, YamlMap):
            raise InputFileError(f"{where(case_source, case)}: a case file must hold a mapping (one test), "
                                 f"got {describe(case)}")
        if case.get("id") is None:
            case["id"] = sub.name
        tests.append(case)
        tests.item_origins.append(case.origin)
    return tests


def load_suite(path: Path, *, source: str | None = None, warnings: list[str] | None = None) -> object:
    """Parse ``path`` into a suite mapping whose ``tests`` is the resolved list of tests.

    * ``*.jsonl``: one test per line; ``<base>.yaml`` next to it, if present, is the suite header
      (``description``, suite-level ``assertions``…).
    * ``*.yaml`` / ``*.yml``: an EVAL.yaml; ``tests`` may be a list or a path (relative to the file)
      to a YAML list, a JSONL file or a folder of ``<id>/case.yaml``; ``file://PATH`` entries of the list (globs too) are replaced by
      the tests of those files, as AgentV expands them (a glob matching nothing adds to ``warnings``).

    Anything that is not a mapping is returned as parsed; the transpiler reports it.
    """
    source = source or str(path)
    if path.suffix.lower() == ".jsonl":
        sidecar_path = path.with_suffix(".yaml")
        suite = YamlMap()
        if sidecar_path.is_file():
            sidecar_source = str(Path(source).with_suffix(".yaml"))
            sidecar = load_yaml(sidecar_path, sidecar_source)
            if not isinstance(sidecar, YamlMap):
                raise InputFileError(
                    f"{where(sidecar_source, sidecar)}: sidecar must be a mapping, got {describe(sidecar)}"
                )
            suite = sidecar
        suite["tests"] = tests = load_jsonl(path, source)
        suite.key_origins["tests"] = tests.origin
        return suite
    suite = load_yaml(path, source)
    if isinstance(suite, YamlMap) and isinstance(suite.get("tests"), str):
        ref = suite["tests"]
        ref_source = str(Path(source).parent / ref)
        ref_path = path.parent / ref
        if ref_path.is_dir():
            suite["tests"] = _load_case_folder(ref_path, ref_source, warnings)
        elif not ref_path.is_file():
            raise InputFileError(
                f"{where(source, suite, 'tests')}: tests file or folder '{ref}' not found (looked for {ref_source})"
            )
        else:
            suite["tests"] = _load_tests(ref_path, ref_source)
    if isinstance(suite, YamlMap) and isinstance(suite.get("tests"), YamlSeq):
        suite["tests"], notes = expand_test_includes(suite["tests"], path.parent, source)
        if warnings is not None:
            warnings.extend(notes)
    return suite
