"""Dependencies next to an evaluator: requirements.txt → cached venv (the SDK still imports),
package.json → npm install once; locks, deadlines, progress messages."""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from agentevals.engine.evaluate import run_one
from agentevals.evaluators.code import CodeEvaluator
from agentevals.execution.cache import cache_root
from agentevals.execution.environments import check_requirements, requirement_lines
from agentevals.execution.program import ProgramFailure
from agentevals.results import MetricResult, Status
from custom_eval_helpers import evaluate, write

REPO = Path(__file__).resolve().parents[4]

USES_SIX = """\
import json, six
from agentevals_evaluator_sdk import EvalInput, EvalResult, evaluator

@evaluator
def uses_six(input: EvalInput) -> EvalResult:
    return EvalResult(score=1.0, details={"six": six.__version__, "six_file": six.__file__})

if __name__ == "__main__":
    uses_six.run()
"""


def build(tmp_path: Path, name: str = "e", **fields) -> CodeEvaluator:
    entry = {"name": name, "type": "code", **fields}
    return CodeEvaluator(CodeEvaluator.Config.model_validate(entry), base_dir=tmp_path)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_requirements_get_a_cached_venv_where_the_sdk_imports(tmp_path, ctx, caplog):
    write(tmp_path / "e" / "e.py", USES_SIX)
    write(tmp_path / "e" / "requirements.txt", "six==1.16.0\n")
    first, second = build(tmp_path, "first", path="e/e.py", timeout=240), build(tmp_path, "second", path="e/e.py",
                                                                                  timeout=240)

    async def both():  # two evaluators, one requirements.txt: built once, under the lock
        try:
            return await asyncio.gather(first.evaluate(ctx), second.evaluate(ctx))
        finally:
            await asyncio.gather(first.aclose(), second.aclose())  # their persistent workers

    with caplog.at_level(logging.WARNING, logger="agentevals"):
        results = asyncio.run(both())
    for result in results:
        assert result.status == Status.PASSED, result.error
        assert result.details["six"] == "1.16.0"  # the venv's, not the CLI's own six
        assert Path(result.details["six_file"]).is_relative_to(cache_root() / "venvs")
    creating = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Creating a Python environment")]
    assert len(creating) == 1 and "requirements.txt" in creating[0]

    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="agentevals"):
        again = evaluate(build(tmp_path, path="e/e.py"), ctx)
    assert again.status == Status.PASSED, again.error
    assert not caplog.records  # cached: no progress message, nothing installed


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_venv_timeout_is_an_error_and_the_next_run_rebuilds(tmp_path, ctx, monkeypatch):
    write(tmp_path / "e.py", USES_SIX)
    write(tmp_path / "requirements.txt", "six==1.16.0\n")
    monkeypatch.setenv("AGENTEVALS_SETUP_TIMEOUT", "0.05")
    result = evaluate(build(tmp_path, path="e.py", timeout=240), ctx)
    assert result.status == Status.ERROR
    assert result.error.startswith("timed out after 0.05s while ")  # in whichever step of the setup
    assert result.error.endswith(" (the setup limit, AGENTEVALS_SETUP_TIMEOUT)")
    monkeypatch.delenv("AGENTEVALS_SETUP_TIMEOUT")
    result = evaluate(build(tmp_path, path="e.py", timeout=240), ctx)
    assert result.status == Status.PASSED, result.error


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_venv_without_uv(tmp_path, ctx, monkeypatch):
    real_which = shutil.which
    monkeypatch.setattr("agentevals.execution.environments.shutil.which",
                        lambda name, *a, **k: None if name == "uv" else real_which(name, *a, **k))
    write(tmp_path / "e.py", USES_SIX)
    write(tmp_path / "requirements.txt", "six==1.16.0\n")
    result = evaluate(build(tmp_path, path="e.py", timeout=240), ctx)
    assert (result.status, result.details.get("six")) == (Status.PASSED, "1.16.0"), result.error


PLAIN = 'import json, sys\njson.load(sys.stdin)\nprint(json.dumps({"score": 1.0}))\n'
"""An evaluator that needs nothing from its venv (so the venv builds offline, from an empty requirements.txt)."""


@contextmanager
def another_run_building(tmp_path: Path, ctx) -> Iterator[None]:
    """Hold the venv's build lock as another agentevals run does while it builds the same environment.

    The venv is built once first (to learn its cache key from its folder name), then marked unbuilt, so
    the evaluation under test has to wait for the lock and build it again.
    """
    from filelock import FileLock

    assert evaluate(build(tmp_path, path="e.py"), ctx).status == Status.PASSED
    (venv,) = (cache_root() / "venvs").iterdir()
    (venv / ".agentevals-ready").unlink()
    lock = FileLock(str(cache_root() / "locks" / f"venv-{venv.name}.lock"))
    lock.acquire(timeout=10)
    try:
        yield
    finally:
        lock.release()


def through_the_engine(evaluator: CodeEvaluator, context) -> MetricResult:
    """One evaluation as a run makes it: under the engine's own per-evaluation limit (``run_one``)."""

    async def once() -> MetricResult:
        try:
            (metric,), _ = await run_one(evaluator, context)
            return metric
        finally:
            await evaluator.aclose()

    return asyncio.run(once())


@pytest.mark.timeout(120)
@pytest.mark.parametrize("how", [evaluate, through_the_engine], ids=["evaluator", "engine"])
def test_a_slow_environment_setup_does_not_use_up_the_evaluation_timeout(tmp_path, ctx, how):
    """On a busy machine a venv takes longer to build than a 2 s evaluation; the result must not change.

    The other run holds the build lock for 8 s, longer than the evaluator's whole timeout: the wait and the
    build that follows run under the setup deadline, and the evaluation keeps its 2 s for the run itself
    (also under the engine's limit around each evaluation, which the set-up pauses as well).
    """
    write(tmp_path / "e.py", PLAIN)
    write(tmp_path / "requirements.txt", "# nothing to install\n")
    result: list = []
    with another_run_building(tmp_path, ctx):
        evaluator = build(tmp_path, path="e.py", timeout=2)
        worker = threading.Thread(target=lambda: result.append(how(evaluator, ctx)))
        worker.start()
        worker.join(timeout=8)  # the other run's build takes this long
    worker.join(timeout=100)
    assert (result[0].status, result[0].error) == (Status.PASSED, None)


@pytest.mark.timeout(120)
def test_the_setup_deadline_is_its_own_and_a_failed_setup_is_not_retried_per_case(tmp_path, ctx, monkeypatch):
    write(tmp_path / "e.py", PLAIN)
    write(tmp_path / "requirements.txt", "# nothing to install\n")
    evaluator = build(tmp_path, path="e.py", timeout=60)
    with another_run_building(tmp_path, ctx):
        monkeypatch.setenv("AGENTEVALS_SETUP_TIMEOUT", "1")
        first = evaluate(evaluator, ctx)
    assert (first.status, first.error) == (
        Status.ERROR, "timed out after 1s while waiting for another run to finish preparing e.py "
                      "(the setup limit, AGENTEVALS_SETUP_TIMEOUT)")
    # The lock is free now: the next case of the same run still gets the error (not a rebuild per case) ...
    assert evaluate(evaluator, ctx).error == first.error
    # ... and the next run builds the environment.
    monkeypatch.delenv("AGENTEVALS_SETUP_TIMEOUT")
    assert evaluate(build(tmp_path, path="e.py", timeout=60), ctx).status == Status.PASSED


@pytest.mark.timeout(120)
def test_a_broken_requirements_file_is_an_error_row(tmp_path, ctx):
    write(tmp_path / "e.py", USES_SIX)
    write(tmp_path / "requirements.txt", "six===\n")
    result = evaluate(build(tmp_path, path="e.py", timeout=60), ctx)
    assert result.status == Status.ERROR
    assert result.error.startswith(f"installing {tmp_path / 'requirements.txt'} failed (exit code ")
    assert "\n" not in result.error


@pytest.mark.timeout(120)
def test_package_json_is_installed_once(tmp_path, ctx, node):
    if not shutil.which("npm"):
        pytest.skip("npm is not installed")
    write(tmp_path / "localdep" / "package.json", '{"name": "localdep", "version": "1.0.0", "main": "index.js"}')
    write(tmp_path / "localdep" / "index.js", "module.exports = { score: 0.65 };\n")
    write(tmp_path / "e" / "package.json", json.dumps({"name": "e", "private": True,
                                                        "dependencies": {"localdep": "file:../localdep"}}))
    write(tmp_path / "e" / "e.js", 'require("fs").readFileSync(0);\n'
                                   'console.log(JSON.stringify({ score: require("localdep").score }));\n')
    result = evaluate(build(tmp_path, path="e/e.js", timeout=90), ctx)
    assert (result.status, result.score) == (Status.PASSED, 0.65), result.error
    marker = tmp_path / "e" / "node_modules" / ".agentevals-installed"
    installed_at = marker.stat().st_mtime_ns
    assert evaluate(build(tmp_path, path="e/e.js"), ctx).score == 0.65
    assert marker.stat().st_mtime_ns == installed_at  # not installed again


def test_requirement_lines_read_comments_as_pip_does(tmp_path):
    """One reader for the venv check and Ray's pip list: a '#' inside a requirement is not a comment."""
    path = tmp_path / "requirements.txt"
    path.write_text("# tools\nsix==1.16  # pinned\n\n  rapidfuzz>=3\t# fast\npkg @ https://h/p.whl#sha256=ab\n")
    assert requirement_lines(path) == [(2, "six==1.16"), (4, "rapidfuzz>=3"), (5, "pkg @ https://h/p.whl#sha256=ab")]


def test_check_requirements_allows_only_index_requirements(tmp_path):
    ok = write(tmp_path / "ok.txt", "# comment\nsix==1.16.0  # pinned\nrequests>=2 --hash=sha256:abc\n\n")
    check_requirements(ok)
    for line, problem in [
        ("-e .", "installer options are not allowed"),
        ("six --index-url x", "only --hash options may follow a requirement"),
        ("pkg @ https://x.invalid/p.whl", "URL, VCS and direct references are not allowed"),
        ("git+https://x.invalid/r", "URL, VCS and direct references are not allowed"),
        ("./local", "local paths and archives are not allowed"),
        ("thing-1.0.tar.gz", "local paths and archives are not allowed"),
        ("six==${VERSION}", "environment variable references are not allowed"),
    ]:
        bad = write(tmp_path / "bad.txt", f"six\n{line}\n")
        with pytest.raises(ProgramFailure) as info:
            check_requirements(bad)
        assert str(info.value) == f"downloaded bad.txt line 2: {problem} ({line!r})"


@pytest.mark.timeout(120)
def test_package_json_environment_is_cached_by_hash_and_shared(tmp_path, ctx, node):
    """Two evaluator dirs with the same package.json share one environment under the cache dir."""
    if not shutil.which("npm"):
        pytest.skip("npm is not installed")
    from agentevals.execution.cache import cache_root

    write(tmp_path / "localdep" / "package.json", '{"name": "localdep", "version": "1.0.0", "main": "index.js"}')
    write(tmp_path / "localdep" / "index.js", "module.exports = { score: 0.4 };\n")
    manifest = json.dumps({"name": "e", "private": True, "dependencies": {"localdep": f"file:{tmp_path / 'localdep'}"}})
    for name in ("a", "b"):
        write(tmp_path / name / "package.json", manifest)
        write(tmp_path / name / "e.mjs", 'import dep from "localdep";\nimport fs from "fs";\nfs.readFileSync(0);\n'
                                         "console.log(JSON.stringify({ score: dep.score }));\n")
        assert evaluate(build(tmp_path, path=f"{name}/e.mjs", timeout=90), ctx).score == 0.4
    links = [(tmp_path / name / "node_modules") for name in ("a", "b")]
    assert all(link.is_symlink() for link in links)
    assert links[0].resolve() == links[1].resolve()
    assert links[0].resolve().parent.parent == (cache_root() / "node").resolve()


def test_author_managed_node_modules_is_left_alone(tmp_path, ctx, node):
    write(tmp_path / "e" / "package.json", '{"name": "e", "private": true, "dependencies": {"nothing-here": "1.0.0"}}')
    write(tmp_path / "e" / "node_modules" / "dep" / "index.js", "module.exports = { score: 0.9 };\n")
    write(tmp_path / "e" / "e.js", 'require("fs").readFileSync(0);\n'
                                   'console.log(JSON.stringify({ score: require("dep").score }));\n')
    result = evaluate(build(tmp_path, path="e/e.js"), ctx)
    assert (result.status, result.score) == (Status.PASSED, 0.9), result.error
    assert not (tmp_path / "e" / "node_modules").is_symlink()


# -- .ts without a package.json on a Node that cannot strip types: tsx installed by npm once ----------

TS_EVALUATOR = """\
const input: { invocations: unknown[] } = JSON.parse(require("fs").readFileSync(0, "utf8"));
const score: number = input.invocations.length > 0 ? 0.75 : 0.0;
console.log(JSON.stringify({ score }));
"""


@pytest.fixture
def old_node(node, monkeypatch, tmp_path):
    """Node behaves as 20.1 (no type stripping); no tsx anywhere but what npm installs for us."""
    from agentevals.execution.runtimes import NodeRuntime

    monkeypatch.setattr(NodeRuntime, "node_version", lambda self: (20, 1, 0))
    bin_dir = tmp_path / "bin"  # node and npm only: a tsx on PATH would be used before installing one
    bin_dir.mkdir()
    for tool in ("node", "npm"):
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    return node


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_ts_without_package_json_runs_through_tsx_npm_installs_once(tmp_path, ctx, old_node, caplog):
    if not shutil.which("npm"):
        pytest.skip("npm is not installed")
    write(tmp_path / "e.ts", TS_EVALUATOR)
    evaluator = build(tmp_path, path="e.ts", timeout=240)
    evaluator.check()  # not a config error: npm can bring tsx
    with caplog.at_level(logging.WARNING, logger="agentevals.execution.environments"):
        result = evaluate(evaluator, ctx)
    if result.status == Status.ERROR and "npm install tsx" in (result.error or ""):
        pytest.skip(f"npm could not install tsx from the registry: {result.error}")
    assert (result.status, result.score) == (Status.PASSED, 0.75), result.error
    assert any("Installing tsx" in r.getMessage() for r in caplog.records)
    installed = sorted((cache_root() / "node").glob("tsx-*/node_modules/.bin/tsx"))
    assert len(installed) == 1
    caplog.clear()
    write(tmp_path / "other" / "f.ts", TS_EVALUATOR)
    with caplog.at_level(logging.WARNING, logger="agentevals.execution.environments"):
        assert evaluate(build(tmp_path, path="other/f.ts"), ctx).score == 0.75
    assert not caplog.records  # once per machine: the second evaluator reuses it
    assert sorted((cache_root() / "node").glob("tsx-*/node_modules/.bin/tsx")) == installed


@pytest.mark.timeout(120)
def test_ts_tsx_install_offline_is_that_evaluators_error_only(tmp_path, old_node, monkeypatch):
    if not shutil.which("npm"):
        pytest.skip("npm is not installed")
    import socket

    from agentevals import evaluate as run_eval

    with socket.socket() as sock:  # a loopback port nobody listens on: the registry is unreachable
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("npm_config_registry", f"http://127.0.0.1:{port}/")
    monkeypatch.setenv("npm_config_fetch_retries", "0")
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm-cache"))
    write(tmp_path / "e.ts", TS_EVALUATOR)
    write(tmp_path / "eval_config.yaml", "evaluators:\n  - name: ts_eval\n    type: code\n    path: e.ts\n"
                                         "    timeout: 90\n  - name: tool_call_count_v1\n    type: builtin\n")
    traces = REPO / "examples" / "traces"
    run = run_eval([str(traces / "helm.json"), str(traces / "k8s.json")], config=str(tmp_path / "eval_config.yaml"))
    rows = [(m.name, m.status) for c in run.cases for m in c.metrics]
    assert rows == [("ts_eval", Status.ERROR), ("tool_call_count_v1", Status.INFORMATIONAL)] * 2
    errors = {m.error for c in run.cases for m in c.metrics if m.status == Status.ERROR}
    (error,) = errors  # the failed install is not retried for the second case
    assert error.startswith("cannot run e.ts: Node 20.1.0 cannot strip TypeScript types and tsx was not found; ")
    assert "npm install tsx ^4.7.0 failed (exit code " in error
    assert "\n" not in error


def test_ts_without_npm_is_a_clear_error_row(tmp_path, ctx, old_node, monkeypatch):
    import agentevals.execution.environments as environments

    real_which = environments.shutil.which
    monkeypatch.setattr(environments.shutil, "which", lambda name, *a, **k: None if name == "npm" else real_which(name))
    write(tmp_path / "e.ts", TS_EVALUATOR)
    result = evaluate(build(tmp_path, path="e.ts"), ctx)
    assert result.status == Status.ERROR
    assert result.error == ("cannot run e.ts: Node 20.1.0 cannot strip TypeScript types and tsx was not found; upgrade "
                            "to Node >= 22.6, or run `npm install --save-dev tsx` in the evaluator's directory (or put "
                            "tsx on PATH / set AGENTEVALS_TSX); npm not found on PATH to install tsx ^4.7.0")
