"""``agentevals evaluator init`` and ``runtimes``: names are checked, nothing is overwritten, and the
generated evaluators run as they are (Python, JavaScript, TypeScript) on a real EvalInput."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from agentevals.cli import cli
from agentevals.evaluators.code import CodeEvaluator
from agentevals.results import Status
from click.testing import CliRunner
from custom_eval_helpers import evaluate


def init(tmp_path: Path, *args: str):
    return CliRunner().invoke(cli, ["evaluator", "init", *args, "--output-dir", str(tmp_path)])


def run_generated(tmp_path: Path, relative: str, ctx):
    config = CodeEvaluator.Config(name="generated", type="code", path=relative, timeout=60)
    evaluator = CodeEvaluator(config, base_dir=tmp_path)
    evaluator.check()
    return evaluate(evaluator, ctx)


def test_init_python_output_and_files(tmp_path, ctx, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(cli, ["evaluator", "init", "my_evaluator", "-o", "evals"])
    assert out.exit_code == 0, out.output
    assert out.output == (
        "Created evals/my_evaluator/\n  my_evaluator.py\n  evaluator.yaml\n  sample_input.json\n"
        "  test_my_evaluator.py\n\n"
        "Try it: agentevals evaluator run evals/my_evaluator/my_evaluator.py --input "
        "evals/my_evaluator/sample_input.json\n"
        "Test it: cd evals/my_evaluator && python -m pytest\n\n"
        "Add it to eval_config.yaml (path relative to the config file; this one is for a config in the "
        "current directory):\n\n  evaluators:\n    - name: my_evaluator\n      type: code\n"
        "      path: ./evals/my_evaluator/my_evaluator.py\n      threshold: 0.5\n"
    )
    folder = tmp_path / "evals" / "my_evaluator"
    assert sorted(p.name for p in folder.iterdir()) == ["evaluator.yaml", "my_evaluator.py", "sample_input.json",
                                                        "test_my_evaluator.py"]
    manifest = yaml.safe_load((folder / "evaluator.yaml").read_text())
    assert manifest == {"name": "my_evaluator", "description": "TODO: describe what my_evaluator evaluates",
                        "language": "python", "entrypoint": "my_evaluator.py", "tags": [], "author": ""}
    result = run_generated(tmp_path, "evals/my_evaluator/my_evaluator.py", ctx)
    assert (result.status, result.score, result.per_invocation_scores) == (Status.PASSED, 1.0, [1.0])


def test_the_printed_next_step_runs_as_is(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(cli, ["evaluator", "init", "my_evaluator"])
    command = next(line for line in out.output.splitlines() if line.startswith("Try it: "))
    args = command.removeprefix("Try it: agentevals ").split()
    run = CliRunner().invoke(cli, args)
    assert (run.exit_code, run.output) == (0, "my_evaluator: PASSED  score 1.000  threshold 0.5\nper invocation: 1\n")
    from agentevals.protocol import EvalInput

    sample = EvalInput.model_validate_json((tmp_path / "my_evaluator" / "sample_input.json").read_text())
    assert (sample.metric_name, len(sample.invocations), len(sample.expected_invocations)) == ("my_evaluator", 1, 1)


def _run_scaffolded_tests(folder: Path, command: list[str], env: dict[str, str] | None = None) -> str:
    import os
    import subprocess

    proc = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_the_scaffolded_python_test_passes_and_can_fail(tmp_path):
    import sys

    assert init(tmp_path, "py_eval").exit_code == 0
    folder = tmp_path / "py_eval"
    out = _run_scaffolded_tests(folder, [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"])
    assert "2 passed" in out
    # The test is real: an evaluator that scores everything 0 fails it.
    code = folder / "py_eval.py"
    code.write_text(code.read_text().replace("score = 1.0\n", "score = 0.0\n"))
    import subprocess

    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=folder,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "1 failed, 1 passed" in proc.stdout, proc.stdout


@pytest.mark.parametrize("name", ["js_eval.js", "ts_eval.ts"])
def test_the_scaffolded_node_test_passes(tmp_path, node, name, request):
    from agentevals.execution.runtimes import NodeRuntime

    env = {}
    if name.endswith(".ts") and NodeRuntime().node_version() < NodeRuntime.STRIP_TYPES_SINCE:
        env["AGENTEVALS_TSX"] = request.getfixturevalue("tsx")  # skips when tests/node has no tsx
    assert init(tmp_path, name).exit_code == 0
    stem = name.split(".")[0]
    assert (tmp_path / stem / f"{stem}.test.mjs").is_file()
    out = _run_scaffolded_tests(tmp_path / stem, [node, "--test"], env)
    assert "# pass 2" in out and "# skipped 0" in out, out


@pytest.mark.slow
def test_the_scaffolded_typescript_test_passes_after_npm_install_on_node_without_type_stripping(
        tmp_path, node, monkeypatch):
    """What `Test it:` prints on Node 20 without tsx: `npm install && node --test` (tsx from the registry)."""
    import shutil

    from agentevals.execution.runtimes import NodeRuntime

    if NodeRuntime().node_version() >= NodeRuntime.STRIP_TYPES_SINCE:
        pytest.skip("this Node strips types itself")
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed")
    monkeypatch.delenv("AGENTEVALS_TSX", raising=False)
    monkeypatch.setenv("PATH", str(Path(node).parent))  # no tsx on PATH
    assert init(tmp_path, "ts_eval.ts").exit_code == 0
    folder = tmp_path / "ts_eval"
    _run_scaffolded_tests(folder, [npm, "install", "--no-audit", "--no-fund"])
    out = _run_scaffolded_tests(folder, [node, "--test"])
    assert "# pass 2" in out and "# skipped 0" in out, out


def test_init_javascript_runs_as_is(tmp_path, ctx, node):
    assert init(tmp_path, "js_eval", "--runtime", "js").exit_code == 0
    assert yaml.safe_load((tmp_path / "js_eval" / "evaluator.yaml").read_text())["language"] == "javascript"
    result = run_generated(tmp_path, "js_eval/js_eval.js", ctx)
    assert (result.status, result.score, result.per_invocation_scores) == (Status.PASSED, 1.0, [1.0])


def test_init_typescript_from_the_extension_runs_as_is(tmp_path, ctx, tsx):
    out = init(tmp_path, "ts_eval.ts")
    assert out.exit_code == 0
    assert (tmp_path / "ts_eval" / "ts_eval.ts").is_file()
    result = run_generated(tmp_path, "ts_eval/ts_eval.ts", ctx)
    assert (result.status, result.score, result.per_invocation_scores) == (Status.PASSED, 1.0, [1.0])


def test_generated_evaluators_score_an_empty_answer_zero(tmp_path, helm_input, node):
    from agentevals.evaluators.base import EvalContext

    empty = helm_input.invocations[0].model_copy(update={"final_response": None})
    ctx = EvalContext(case_id="x", invocations=[empty, helm_input.invocations[0]])
    assert init(tmp_path, "py_eval").exit_code == 0
    assert init(tmp_path, "js_eval.js").exit_code == 0
    for relative in ("py_eval/py_eval.py", "js_eval/js_eval.js"):
        result = run_generated(tmp_path, relative, ctx)
        assert (result.score, result.per_invocation_scores) == (0.5, [0.0, 1.0])


@pytest.mark.parametrize(
    ("name", "suggestion"),
    [("my-eval", "my_eval"), ("1st", "evaluator_1st"), ("class", "class_evaluator"), ("a/b", "a_b"),
     ("ça va", "a_va"), ("x" * 65, "x" * 64)],
)
def test_init_refuses_names_that_make_invalid_code(tmp_path, name, suggestion):
    out = init(tmp_path, name)
    assert out.exit_code == 2
    assert out.output == (
        f"Error: invalid evaluator name {name!r}: use letters, digits and '_', starting with a letter or '_' "
        f"(at most 64 characters, not a Python keyword), e.g. {suggestion!r}\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_init_never_overwrites_without_force(tmp_path):
    assert init(tmp_path, "keep").exit_code == 0
    code = tmp_path / "keep" / "keep.py"
    code.write_text("# my work\n")
    out = init(tmp_path, "keep")
    assert out.exit_code == 2
    assert out.output == f"Error: refusing to overwrite {code}; choose another name, remove it, or use --force\n"
    assert code.read_text() == "# my work\n"
    # Another language in the same folder is fine, but never the manifest.
    (tmp_path / "keep" / "evaluator.yaml").unlink()
    assert init(tmp_path, "keep", "-r", "js").exit_code == 0
    assert init(tmp_path, "keep", "-r", "ts").exit_code == 2
    assert init(tmp_path, "keep", "--force").exit_code == 0
    assert "TODO: implement your scoring logic" in code.read_text()


def test_init_into_a_file_is_a_clear_error(tmp_path):
    (tmp_path / "taken").write_text("")
    out = init(tmp_path, "taken")
    assert (out.exit_code, out.output) == (2, f"Error: {tmp_path / 'taken'} exists and is not a directory\n")


def test_init_typescript_brings_tsx_where_node_cannot_strip_types(tmp_path, monkeypatch):
    monkeypatch.setattr("agentevals.execution.runtimes.NodeRuntime.node_version", lambda self: (20, 0, 0))
    monkeypatch.setattr("agentevals.execution.runtimes.shutil.which",
                        lambda name: "/usr/bin/node" if name == "node" else None)
    out = init(tmp_path, "ts_eval.ts")
    assert out.exit_code == 0, out.output
    assert "  package.json (tsx: this Node cannot run TypeScript by itself; npm installs it on the first run)\n" in out.output
    assert f"Test it: cd {tmp_path / 'ts_eval'} && npm install && node --test\n" in out.output
    package = json.loads((tmp_path / "ts_eval" / "package.json").read_text())
    assert package == {"name": "ts_eval", "private": True, "devDependencies": {"tsx": "^4.7.0"}}

    monkeypatch.setattr("agentevals.execution.runtimes.NodeRuntime.node_version", lambda self: (23, 6, 0))
    assert init(tmp_path, "ts_new.ts").exit_code == 0
    assert not (tmp_path / "ts_new" / "package.json").exists()


@pytest.mark.slow
def test_init_typescript_runs_as_is_on_node_without_type_stripping(tmp_path, ctx, node, monkeypatch):
    """A real ``npm install`` of tsx from the registry on the first run (Node 20 here)."""
    from agentevals.execution.runtimes import NodeRuntime

    if NodeRuntime().node_version() >= NodeRuntime.STRIP_TYPES_SINCE:
        pytest.skip("this Node strips types itself")
    monkeypatch.setenv("PATH", str(Path(node).parent))  # no tsx on PATH
    assert init(tmp_path, "ts_eval.ts").exit_code == 0
    config = CodeEvaluator.Config(name="generated", type="code", path="ts_eval/ts_eval.ts", timeout=180)
    evaluator = CodeEvaluator(config, base_dir=tmp_path)
    evaluator.check()
    result = evaluate(evaluator, ctx)
    assert (result.status, result.score) == (Status.PASSED, 1.0), result.error


def test_init_runtime_conflicts_and_unknown_runtimes(tmp_path):
    out = init(tmp_path, "x.ts", "--runtime", "py")
    assert (out.exit_code, out.output) == (2, "Error: the name says .ts but --runtime says 'py'; give only one of them\n")
    out = init(tmp_path, "x", "--runtime", "ruby")
    assert (out.exit_code, out.output) == (2, "Error: unknown runtime 'ruby' for init; choose one of: py, js, ts\n")
    out = init(tmp_path, "x.rb")
    assert out.exit_code == 2 and "invalid evaluator name 'x.rb'" in out.output


def test_runtimes_reports_versions_and_only_what_runs(tmp_path, monkeypatch, node, tsx):
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(cli, ["evaluator", "runtimes"])
    assert out.exit_code == 0
    lines = out.output.splitlines()
    assert lines[0] == "Runtimes:"
    assert any(line.split()[:4] == ["node", ".js", ".mjs", ".cjs"] and "node v" in line for line in lines)
    assert any(line.split()[:2] == ["node", ".ts"] and "tsx v" in line for line in lines)
    assert any(line.split()[:2] == ["python", ".py"] and "Python 3." in line for line in lines)
    assert lines[-1] == "Executors: docker, local, ray"

    monkeypatch.delenv("AGENTEVALS_TSX")
    monkeypatch.setattr("agentevals.execution.runtimes.NodeRuntime.node_version", lambda self: (20, 0, 0))
    monkeypatch.setattr("agentevals.execution.runtimes.shutil.which", lambda name: "/usr/bin/node" if name == "node" else None)
    out = CliRunner().invoke(cli, ["evaluator", "runtimes"])
    not_available = out.output.split("Not available:\n")[1].splitlines()[0]
    assert not_available.split()[:2] == ["node", ".ts"]
    assert "Node 20.0.0 cannot strip TypeScript types" in not_available


def test_runtimes_reports_typescript_through_npm_provisioned_tsx(tmp_path, monkeypatch, node):
    """Node < 22.6 without tsx but with npm: `.ts` evaluators run (their package.json brings tsx), so say so."""
    import shutil

    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AGENTEVALS_TSX", raising=False)
    monkeypatch.setattr("agentevals.execution.runtimes.NodeRuntime.node_version", lambda self: (20, 0, 0))
    monkeypatch.setattr("agentevals.execution.runtimes.shutil.which",
                        lambda name: {"node": node, "npm": npm}.get(name))
    out = CliRunner().invoke(cli, ["evaluator", "runtimes"])
    assert "Not available" not in out.output
    ts = next(line for line in out.output.splitlines() if line.split()[:2] == ["node", ".ts"])
    import re

    assert re.search(r"tsx from the evaluator's package\.json, else tsx \^4\.7\.0 installed by npm \d+\.\d+\.\d+ "
                     r"once per machine, on first use", ts), ts
