"""Dependencies next to an evaluator: requirements.txt → cached venv (the SDK still imports),
package.json → npm install once; locks, deadlines, progress messages."""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
import time
from pathlib import Path

import pytest
from agentevals.evaluators.code import CodeEvaluator
from agentevals.execution.cache import cache_root
from agentevals.execution.environments import check_requirements
from agentevals.execution.program import ProgramFailure
from agentevals.results import Status
from custom_eval_helpers import evaluate, write

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
        return await asyncio.gather(first.evaluate(ctx), second.evaluate(ctx))

    with caplog.at_level(logging.WARNING, logger="agentevals"):
        results = asyncio.run(both())
    for result in results:
        assert result.status == Status.PASSED, result.error
        assert result.details["six"] == "1.16.0"  # the venv's, not the CLI's own six
        assert Path(result.details["six_file"]).is_relative_to(cache_root() / "venvs")
    creating = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Creating a Python environment")]
    assert len(creating) == 1 and "requirements.txt" in creating[0]

    caplog.clear()
    start = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="agentevals"):
        again = evaluate(build(tmp_path, path="e/e.py"), ctx)
    assert again.status == Status.PASSED and time.monotonic() - start < 10
    assert not caplog.records  # cached: no progress message, nothing installed


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_venv_timeout_is_an_error_and_the_next_run_rebuilds(tmp_path, ctx):
    write(tmp_path / "e.py", USES_SIX)
    write(tmp_path / "requirements.txt", "six==1.16.0\n")
    result = evaluate(build(tmp_path, path="e.py", timeout=0.05), ctx)
    assert result.status == Status.ERROR
    assert result.error.startswith("timed out after 0.05s while ")
    assert ("creating the Python environment" in result.error or "installing" in result.error
            or "preparing e.py" in result.error)
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
