"""Runtimes: extension → interpreter, the seed's Go runtime, a registered runtime that really runs,
and how .ts is run depending on the Node version."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from agentevals.custom_evaluators import (
    NodeRuntime,
    PythonRuntime,
    Runtime,
    register_runtime,
    supported_extensions,
)
from agentevals.errors import ConfigError
from agentevals.evaluators.code import CodeEvaluator
from agentevals.execution.runtimes import get_runtimes, runtime_for
from agentevals.results import Status
from custom_eval_helpers import evaluate, write


# The seed's example, exactly as documented.
class GoRuntime(Runtime):
    @property
    def extensions(self) -> tuple[str, ...]:
        return (".go",)

    def build_command(self, path: Path) -> list[str]:
        go = shutil.which("go")
        if not go:
            raise RuntimeError("Go not found on PATH")
        return [go, "run", str(path)]


class BashRuntime(Runtime):
    """A real runtime for the tests: ``.sh`` files run by bash."""

    @property
    def extensions(self) -> tuple[str, ...]:
        return (".sh",)

    def build_command(self, path: Path) -> list[str]:
        return [shutil.which("bash") or "/bin/bash", str(path)]


def code(tmp_path: Path, **fields):
    return CodeEvaluator(CodeEvaluator.Config.model_validate({"name": "e", "type": "code", **fields}),
                         base_dir=tmp_path)


def test_builtin_runtimes_by_extension():
    assert isinstance(runtime_for(Path("x.py")), PythonRuntime)
    for ext in (".js", ".mjs", ".cjs", ".ts"):
        assert isinstance(runtime_for(Path(f"x{ext}")), NodeRuntime)
    assert supported_extensions() == [".cjs", ".js", ".mjs", ".py", ".ts"]


def test_unknown_extension_names_the_supported_ones():
    with pytest.raises(ConfigError) as info:
        runtime_for(Path("x.rb"))
    assert str(info.value) == (
        "no runtime runs '.rb' files (supported: .cjs, .js, .mjs, .py, .ts); "
        "register one with agentevals.custom_evaluators.register_runtime()"
    )


def test_seed_go_runtime_registers_and_extension_validation_picks_it_up(tmp_path):
    evaluator = code(tmp_path, path="check.go")
    write(tmp_path / "check.go", "package main\n")
    with pytest.raises(ConfigError, match=r"no runtime runs '\.go' files"):
        evaluator.check()

    register_runtime(GoRuntime())

    assert ".go" in supported_extensions()
    assert isinstance(runtime_for(tmp_path / "check.go"), GoRuntime)
    assert GoRuntime().name == "go"
    if shutil.which("go") is None:
        with pytest.raises(ConfigError, match=r"^Go not found on PATH$"):
            evaluator.check()
        assert GoRuntime().is_available() is False
    else:  # pragma: no cover - machines with Go
        evaluator.check()


def test_registered_runtime_really_runs(tmp_path, ctx):
    register_runtime(BashRuntime())
    script = write(tmp_path / "score.sh", 'cat > /dev/null\necho \'{"score": 0.75, "details": {"via": "bash"}}\'\n')
    evaluator = code(tmp_path, path=script.name, threshold=0.7)
    evaluator.check()
    result = evaluate(evaluator, ctx)
    assert (result.status, result.score, result.details, result.type) == (Status.PASSED, 0.75, {"via": "bash"}, "code")


def test_later_registration_wins_for_a_shared_extension():
    class OtherPython(PythonRuntime):
        @property
        def name(self) -> str:
            return "other-python"

    other = OtherPython()
    register_runtime(other)
    assert runtime_for(Path("x.py")) is other
    assert get_runtimes()[0] is other


def test_register_runtime_validates():
    with pytest.raises(TypeError, match="needs a Runtime instance"):
        register_runtime(object())  # type: ignore[arg-type]

    class NoDot(Runtime):
        extensions = ("go",)

        def build_command(self, path: Path) -> list[str]:
            return []

    with pytest.raises(ValueError, match=r"must declare extensions like \('.go',\)"):
        register_runtime(NoDot())


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ((20, 20, 2), None),
        ((22, 5, 9), None),
        ((22, 6, 0), ["--experimental-strip-types", "--disable-warning=ExperimentalWarning"]),
        ((23, 6, 0), ["--disable-warning=ExperimentalWarning"]),
        ((24, 1, 0), ["--disable-warning=ExperimentalWarning"]),
    ],
)
def test_typescript_uses_type_stripping_only_where_node_has_it(monkeypatch, tmp_path, version, expected):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no tsx on PATH
    runtime = NodeRuntime(node="/opt/node/bin/node")
    monkeypatch.setattr(runtime, "node_version", lambda: version)
    target = tmp_path / "e.ts"
    if expected is None:
        with pytest.raises(RuntimeError) as info:
            runtime.build_command(target)
        shown = ".".join(map(str, version))
        assert str(info.value) == (
            f"cannot run e.ts: Node {shown} cannot strip TypeScript types and tsx was not found; upgrade to "
            "Node >= 22.6, or run `npm install --save-dev tsx` in the evaluator's directory (or put tsx on PATH "
            "/ set AGENTEVALS_TSX)"
        )
    else:
        assert runtime.build_command(target) == ["/opt/node/bin/node", *expected, str(target)]
    assert runtime.build_command(tmp_path / "e.js") == ["/opt/node/bin/node", str(tmp_path / "e.js")]


def test_typescript_prefers_the_evaluators_own_tsx(monkeypatch, tmp_path):
    tsx = write(tmp_path / "project" / "node_modules" / ".bin" / "tsx", "#!/bin/sh\n")
    target = write(tmp_path / "project" / "evals" / "deep" / "e.ts", "")
    runtime = NodeRuntime(node="/opt/node/bin/node")
    monkeypatch.setattr(runtime, "node_version", lambda: (24, 0, 0))
    assert runtime.build_command(target) == [str(tsx), str(target)]
    monkeypatch.setenv("AGENTEVALS_TSX", "/somewhere/tsx")
    assert runtime.build_command(target) == ["/somewhere/tsx", str(target)]


def test_ts_node_cannot_run_is_not_a_config_error(monkeypatch, tmp_path):
    """Node 20 without tsx: npm installs tsx at the first run (or that row is an ERROR), as 0.11 failed only the row."""
    monkeypatch.setattr(NodeRuntime, "node_version", lambda self: (20, 1, 0))
    monkeypatch.setattr(NodeRuntime, "node", lambda self: "/opt/node/bin/node")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    write(tmp_path / "e.ts", "")
    code(tmp_path, path="e.ts").check()
    monkeypatch.setattr(NodeRuntime, "node", lambda self: None)
    with pytest.raises(ConfigError, match="node not found on PATH"):
        code(tmp_path, path="e.ts").check()


def test_missing_node_is_refused_at_load(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    write(tmp_path / "e.js", "")
    with pytest.raises(ConfigError, match=r"^node not found on PATH \(needed for .js/.ts evaluators\); install Node.js$"):
        code(tmp_path, path="e.js").check()


def test_missing_node_at_run_time_is_an_error_row(monkeypatch, tmp_path, ctx):
    write(tmp_path / "e.js", "")
    evaluator = code(tmp_path, path="e.js")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    result = evaluate(evaluator, ctx)
    assert result.status == Status.ERROR
    assert result.error == "node not found on PATH (needed for .js/.ts evaluators); install Node.js"


def test_support_report_never_claims_a_runtime_that_cannot_run(monkeypatch, tmp_path):
    monkeypatch.setattr(NodeRuntime, "node", lambda self: None)
    rows = {s.extensions: s for rt in get_runtimes() for s in rt.support(tmp_path)}
    assert rows[(".py",)].available
    assert not rows[(".js", ".mjs", ".cjs", ".ts")].available
