"""``agentevals evaluator init``: write a runnable evaluator skeleton, its test, ``evaluator.yaml`` and a sample input.

The test passes as written: ``test_<name>.py`` (pytest, through the SDK's ``run_evaluator``) for Python,
``<name>.test.mjs`` (``node --test``, running the program on its sample input) for JavaScript and TypeScript.

A JavaScript or TypeScript skeleton uses the JS evaluator SDK (packages/agentevals-evaluator-sdk-js, npm
``@agentevals/evaluator-sdk``), so that agentevals runs it as a persistent worker. The SDK is one file
with no dependencies: it is vendored next to the evaluator (``agentevals-evaluator-sdk.mjs`` and its
types, ``.d.mts``), copied from this package's templates, so the skeleton runs with no ``npm install`` and
no network. (The copies in templates/ are the SDK's ``index.js``/``index.d.ts``; a test keeps them equal.)

A TypeScript skeleton also gets a ``package.json`` that brings ``tsx`` when this machine's Node cannot
run TypeScript by itself (Node < 22.6 and no tsx found), so that it runs as written.
"""

from __future__ import annotations

import json
import keyword
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template

from ..errors import ConfigError
from ..execution.environments import TSX_VERSION  # one pin for the scaffold and the runtime

__all__ = ["LANGUAGES", "SAMPLE_INPUT", "TSX_VERSION", "Language", "scaffold_evaluator"]


@dataclass(frozen=True)
class Language:
    """A language ``init`` can write a skeleton for."""

    name: str
    extension: str
    template: str
    aliases: tuple[str, ...]
    test_template: str
    test_name: str
    """File name of the scaffolded test; ``{name}`` is the evaluator's name."""
    test_command: str
    """How to run that test from the evaluator's folder."""


LANGUAGES: tuple[Language, ...] = (
    Language("python", ".py", "python.py.tmpl", ("py", "python"),
             "python_test.py.tmpl", "test_{name}.py", "python -m pytest"),
    Language("javascript", ".js", "javascript.js.tmpl", ("js", "javascript", "node"),
             "node_test.mjs.tmpl", "{name}.test.mjs", "node --test"),
    Language("typescript", ".ts", "typescript.ts.tmpl", ("ts", "typescript"),
             "node_test.mjs.tmpl", "{name}.test.mjs", "node --test"),
)

SAMPLE_INPUT = "sample_input.json"

JS_SDK_FILES = ("agentevals-evaluator-sdk.mjs", "agentevals-evaluator-sdk.d.mts")
"""The JS evaluator SDK and its types, vendored next to a JavaScript/TypeScript skeleton."""


def _sample_input(name: str) -> str:
    """An EvalInput document (the seed's example turn, with its golden turn) to try the evaluator on."""
    from ..protocol import PROTOCOL_VERSION

    turn = {
        "invocation_id": "inv-001",
        "user_content": "What is 2+2?",
        "final_response": "The answer is 4.",
        "intermediate_steps": {
            "tool_calls": [{"name": "calculator", "args": {"expression": "2+2"}}],
            "tool_responses": [{"name": "calculator", "output": "4"}],
        },
    }
    document = {
        "protocol_version": PROTOCOL_VERSION,
        "metric_name": name,
        "threshold": 0.5,
        "config": {},
        "invocations": [turn],
        "expected_invocations": [turn],
    }
    return json.dumps(document, indent=2) + "\n"


def _needs_tsx(directory: Path) -> bool:
    """Whether ``.ts`` files in ``directory`` cannot run here without installing tsx."""
    from ..execution.runtimes import NodeRuntime

    runtime = NodeRuntime()
    if runtime.node() is None:
        return False  # no Node at all: tsx would not help; the runtime's error says so
    try:
        runtime.build_command(directory / "probe.ts")
    except RuntimeError:
        return True
    return False


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def _language(runtime: str | None, suffix: str) -> Language:
    by_alias = {alias: lang for lang in LANGUAGES for alias in lang.aliases}
    by_ext = {lang.extension: lang for lang in LANGUAGES}
    from_name = by_ext.get(suffix)
    if runtime is None:
        return from_name or by_ext[".py"]
    chosen = by_alias.get(runtime.lower())
    if chosen is None:
        raise ConfigError(f"unknown runtime {runtime!r} for init; choose one of: py, js, ts")
    if from_name is not None and from_name is not chosen:
        raise ConfigError(f"the name says {suffix} but --runtime says {runtime!r}; give only one of them")
    return chosen


def _check_name(name: str, raw: str) -> None:
    if _NAME.fullmatch(name) and not keyword.iskeyword(name):
        return
    suggestion = re.sub(r"[^A-Za-z0-9_]", "_", name).strip("_") or "my_evaluator"
    if suggestion[0].isdigit():
        suggestion = f"evaluator_{suggestion}"
    if keyword.iskeyword(suggestion):
        suggestion += "_evaluator"
    suggestion = suggestion[:64]
    raise ConfigError(
        f"invalid evaluator name {raw!r}: use letters, digits and '_', starting with a letter or '_' "
        f"(at most 64 characters, not a Python keyword), e.g. {suggestion!r}"
    )


def scaffold_evaluator(
    name: str, output_dir: Path | None = None, runtime: str | None = None, *, force: bool = False
) -> list[Path]:
    """Create ``<output_dir>/<name>/<name>.<ext>``, its test, ``evaluator.yaml`` and ``sample_input.json``.

    ``name`` may end in ``.py``/``.js``/``.ts`` to pick the language; otherwise ``runtime`` does
    (default Python). Returns the files written (the code file first). Raises ``ConfigError`` when the
    name is invalid or, unless ``force``, when a file exists.
    """
    raw = name
    suffix = Path(name).suffix.lower()
    known = {lang.extension for lang in LANGUAGES}
    stem = name[: -len(suffix)] if suffix in known else name
    language = _language(runtime, suffix if suffix in known else "")
    _check_name(stem, raw)

    directory = (output_dir or Path.cwd()) / stem
    if directory.exists() and not directory.is_dir():
        raise ConfigError(f"{directory} exists and is not a directory")
    code = directory / f"{stem}{language.extension}"
    manifest = directory / "evaluator.yaml"
    if not force:
        for path in (code, manifest):
            if path.exists():
                raise ConfigError(f"refusing to overwrite {path}; choose another name, remove it, or use --force")

    import yaml

    templates = resources.files(__package__).joinpath("templates")
    text = templates.joinpath(language.template).read_text("utf-8")
    meta = {
        "name": stem,
        "description": f"TODO: describe what {stem} evaluates",
        "language": language.name,
        "entrypoint": code.name,
        "tags": [],
        "author": "",
    }
    # The generated evaluator imports the SDK; the CLI itself never does, so the module name is a
    # template variable rather than an import line in this package's files.
    variables = {"name": stem, "sdk": "agentevals_evaluator_sdk", "file": code.name}
    code_text = Template(text).substitute(variables)
    files = [(code, code_text), (manifest, yaml.safe_dump(meta, sort_keys=False))]
    test = directory / language.test_name.format(name=stem)
    sample = directory / SAMPLE_INPUT
    if force or not sample.exists():  # a sample of one's own is kept
        files.append((sample, _sample_input(stem)))
    if force or not test.exists():  # and so is a test of one's own
        files.append((test, Template(templates.joinpath(language.test_template).read_text("utf-8")).substitute(variables)))
    if language.extension in (".js", ".ts"):
        for sdk_name in JS_SDK_FILES:
            sdk = directory / sdk_name
            if force or not sdk.exists():  # a copy already there (another skeleton's, or upgraded by hand) is kept
                files.append((sdk, templates.joinpath(sdk_name).read_text("utf-8")))
    package = directory / "package.json"
    if language.extension == ".ts" and not package.exists() and _needs_tsx(directory):
        package_json = {"name": stem, "private": True, "devDependencies": {"tsx": TSX_VERSION}}
        files.append((package, json.dumps(package_json, indent=2) + "\n"))
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create {directory}: {exc.strerror or exc}") from None
    written = []
    for path, content in files:
        # "x": fail rather than overwrite (races too), unless asked to
        with path.open("w" if force else "x", encoding="utf-8") as handle:
            handle.write(content)
        written.append(path)
    return written
