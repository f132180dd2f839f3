"""Dependencies say what the code uses: every third-party import is declared where its module belongs.

Each module of agentevals-cli imports only the core dependencies (``[tool.hatch.metadata.hooks.custom]
dependencies`` of its pyproject.toml) and those of the extra it belongs to (``EXTRA_OF`` below); the SDK
imports only its own ``dependencies``. Imports are read from the AST (module level and inside functions)
and mapped to distributions with ``importlib.metadata``. The reverse holds too: a declared dependency
that nothing imports is listed in ``NOT_IMPORTED`` with the reason it is there.
"""

from __future__ import annotations

import ast
import importlib.metadata as metadata
import sys
from functools import cache
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

try:
    import tomllib
except ImportError:  # Python 3.10: pytest's own dependency
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
CLI = ROOT / "packages/agentevals-cli"
SDK = ROOT / "packages/agentevals-evaluator-sdk"
FIRST_PARTY = {"agentevals", "agentevals_evaluator_sdk", "__future__"}

EXTRA_OF = {
    "agentevals/serve/": "serve",  # live mode: OTLP receivers, HTTP API, web UI, MCP
    "agentevals/cli/mcp_cmd.py": "serve",  # `agentevals mcp` runs serve's MCP tools on stdio (anyio)
    "agentevals/execution/ray_executor.py": "ray",
    "agentevals/engine/ray_pool.py": "ray",  # the run-level Ray pool (run --executor ray)
    "agentevals/evaluators/llm.py": "openai",  # the OpenAI-compatible client of llm judges and openai_eval
    "agentevals/evaluators/builtin/adk_backed.py": "adk",
    "agentevals/store/_db.py": "postgres",  # psycopg, for a postgresql:// store (SQLite is stdlib)
    "agentevals/live/": "otel",  # AgentEvals session helper and its OTLP exporters
    "agentevals/report/otel_events.py": "otel",
}
"""Module (or folder) of agentevals-cli → the extra whose dependencies it may import besides the core's."""

PROBES = {
    "opentelemetry.instrumentation.openai_v2": "AgentEvals turns the user's OpenAI instrumentation on when installed",
    "strands": "AgentEvals picks Strands' semconv mode when the user's agent uses Strands",
}
"""Imports of the user's own packages, tried under ``except ImportError``: never ours to declare."""

NOT_INSTALLED = {"google.adk": "google-adk", "google.genai": "google-genai"}
"""Distributions of modules that the test environment may lack (the adk extra lives in its own env)."""

NOT_IMPORTED = {
    "agentevals-evaluator-sdk": "installed so that the .py evaluators this CLI runs can import it",
    "python-multipart": "FastAPI's form parsing (serve's upload routes)",
}
"""Declared dependencies that no module of the package imports by name, and why they are declared."""


def _pyproject(package: Path) -> dict:
    return tomllib.loads((package / "pyproject.toml").read_text("utf-8"))


def _names(requirements: list[str]) -> set[str]:
    return {canonicalize_name(Requirement(line).name) for line in requirements}


@cache
def cli_declared() -> dict[str, set[str]]:
    """'' → core dependency names; extra → its names (with the extras it includes, like serve → otel)."""
    data = _pyproject(CLI)
    raw = data["project"]["optional-dependencies"]
    declared = {"": _names(data["tool"]["hatch"]["metadata"]["hooks"]["custom"]["dependencies"])}

    def expand(extra: str) -> set[str]:
        names: set[str] = set()
        for line in raw[extra]:
            requirement = Requirement(line)
            if canonicalize_name(requirement.name) == "agentevals-cli":
                for included in requirement.extras:
                    names |= expand(included)
            else:
                names.add(canonicalize_name(requirement.name))
        return names

    declared.update({extra: expand(extra) for extra in raw})
    return declared


def imports(path: Path) -> list[tuple[str, int, bool]]:
    """Third-party ``(module, line, probed)`` imported by ``path``; probed = under ``except ImportError``."""
    tree = ast.parse(path.read_text("utf-8"), str(path))
    probed_lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(_catches_import_error(handler) for handler in node.handlers):
            for inner in node.body:
                probed_lines.update(n.lineno for n in ast.walk(inner) if hasattr(n, "lineno"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
            top = node.module.split(".")[0]
            if top not in FIRST_PARTY and top not in sys.stdlib_module_names and distribution_of(node.module) is None:
                modules = [f"{node.module}.{alias.name}" for alias in node.names]  # from opentelemetry import trace
        else:
            continue
        for module in modules:
            top = module.split(".")[0]
            if top not in FIRST_PARTY and top not in sys.stdlib_module_names:
                found.append((module, node.lineno, node.lineno in probed_lines))
    return found


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    caught = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(getattr(name, "id", "") in ("ImportError", "ModuleNotFoundError") for name in caught)


@cache
def _files(distribution: str) -> tuple[str, ...]:
    return tuple(str(f) for f in metadata.distribution(distribution).files or ())


@cache
def _packages() -> dict[str, list[str]]:
    return metadata.packages_distributions()


@cache
def distribution_of(module: str) -> str | None:
    """The distribution that provides ``module`` (the longest matching path in a shared namespace)."""
    parts = module.split(".")
    candidates = _packages().get(parts[0], [])
    if len(set(candidates)) == 1:
        return canonicalize_name(candidates[0])
    for length in range(len(parts), 1, -1):
        folder = "/".join(parts[:length])
        for distribution in candidates:
            if any(f.startswith(folder + "/") or f == folder + ".py" for f in _files(distribution)):
                return canonicalize_name(distribution)
        if ".".join(parts[:length]) in NOT_INSTALLED:
            return NOT_INSTALLED[".".join(parts[:length])]
    if not candidates and parts[0] not in ("google", "opentelemetry"):
        return canonicalize_name(parts[0])  # not installed in this environment (ray, psycopg…): named as imported
    return None


def extra_of(relative: str) -> str:
    return next((extra for prefix, extra in EXTRA_OF.items() if relative.startswith(prefix)), "")


def _sources(package: Path) -> list[Path]:
    files = sorted((package / "src").rglob("*.py"))
    assert files
    return files


def test_every_cli_import_is_declared_where_its_module_belongs():
    declared = cli_declared()
    problems = []
    for path in _sources(CLI):
        relative = path.relative_to(CLI / "src").as_posix()
        extra = extra_of(relative)
        allowed = declared[""] | (declared[extra] if extra else set())
        for module, line, probed in imports(path):
            if probed and any(module == p or module.startswith(p + ".") for p in PROBES):
                continue
            distribution = distribution_of(module)
            where = f"the '{extra}' extra" if extra else "the core dependencies"
            if distribution is None:
                problems.append(f"{relative}:{line}: cannot tell which distribution provides {module}")
            elif distribution not in allowed:
                problems.append(f"{relative}:{line}: imports {module} ({distribution}), not in {where}")
    assert not problems, "\n".join(problems)


def test_every_sdk_import_is_declared():
    declared = _names(_pyproject(SDK)["project"]["dependencies"])
    problems = [f"{path.name}:{line}: {module}" for path in _sources(SDK) for module, line, _ in imports(path)
                if distribution_of(module) not in declared]
    assert problems == []


def test_every_declared_dependency_is_imported_or_explained():
    used: dict[str, set[str]] = {}
    for path in _sources(CLI):
        extra = extra_of(path.relative_to(CLI / "src").as_posix())
        for module, _, _ in imports(path):
            distribution = distribution_of(module)
            if distribution:
                used.setdefault(extra, set()).add(distribution)
    everything = set().union(*used.values())
    declared = cli_declared()
    unused = {extra: sorted(names - everything - set(NOT_IMPORTED) - {"agentevals-cli"})
              for extra, names in declared.items()}
    assert {extra: names for extra, names in unused.items() if names} == {}


def test_core_imports_are_used_outside_extras_only_when_core():
    """A core dependency imported only by modules of extras belongs to those extras (requests was one)."""
    declared = cli_declared()
    core_users: dict[str, set[str]] = {name: set() for name in declared[""]}
    for path in _sources(CLI):
        extra = extra_of(path.relative_to(CLI / "src").as_posix())
        for module, _, _ in imports(path):
            distribution = distribution_of(module)
            if distribution in core_users:
                core_users[distribution].add(extra)
    only_extras = sorted(name for name, users in core_users.items() if users and "" not in users)
    assert only_extras == []


@pytest.mark.parametrize(("source", "expected"), [
    ("import regex\n", [("regex", 1, False)]),
    ("def f():\n    from starlette.requests import Request\n", [("starlette.requests", 2, False)]),
    ("try:\n    import strands\nexcept ImportError:\n    pass\n", [("strands", 2, True)]),
    ("import os, json\nfrom . import x\nfrom agentevals import y\n", []),
])
def test_the_check_reads_every_kind_of_import(tmp_path, source, expected):
    module = tmp_path / "m.py"
    module.write_text(source)
    assert imports(module) == expected


def test_the_check_maps_a_namespace_module_to_its_own_distribution():
    assert distribution_of("google.protobuf.json_format") == "protobuf"
    assert distribution_of("yaml") == "pyyaml"
    assert extra_of("agentevals/serve/otlp.py") == "serve"
    assert "starlette" not in cli_declared()[""]  # an undeclared import is caught, not tolerated
