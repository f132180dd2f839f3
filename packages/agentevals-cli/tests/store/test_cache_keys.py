"""The result cache never returns a stale result: run, change what decides the result, run again.

Each run is a real ``agentevals run`` process (as in CI: a new interpreter, nothing held in memory) on the
same run store; the second run's result must be the new one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from agentevals.store.keys import MAX_TREE_BYTES, MAX_TREE_FILES, NotCacheable, code_root, tree_digest

REPO = Path(__file__).resolve().parents[4]
HELM = REPO / "examples" / "traces" / "helm.json"
REUSED = "1 result reused from the run store"

PY_WITH_HELPER = """\
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from helper import SCORE
json.load(sys.stdin)
print(json.dumps({"score": SCORE}))
"""

JS_WITH_HELPER = """\
const { SCORE } = require("./helper.js");
let raw = "";
process.stdin.on("data", (c) => (raw += c));
process.stdin.on("end", () => { JSON.parse(raw); console.log(JSON.stringify({ score: SCORE })); });
"""

PY_FROM_ENV = """\
import json, os, sys
json.load(sys.stdin)
print(json.dumps({"score": float(os.environ.get("SCORE_FROM_ENV", "0"))}))
"""

PYTHON_CLASS = """\
from agentevals import Evaluator

class E(Evaluator):
    def filter_traces(self, traces):
        return traces

    def __call__(self, traces, final_answer=None):
        return {{"score": {score}}}
"""


def agentevals(folder: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentevals", *args], cwd=folder, capture_output=True, text=True,
                          timeout=120, env={**os.environ, **(env or {})})


def scored(folder: Path, *, env: dict[str, str] | None = None, verbose: bool = False) -> tuple[str, float, str]:
    """(status, score, stderr) of the one result of ``agentevals run helm.json -c c.yaml``."""
    args = ["-v"] if verbose else []
    done = agentevals(folder, *args, "run", str(HELM), "-c", "c.yaml", "-o", "json", env=env)
    assert done.returncode in (0, 1), done.stderr
    (case,) = json.loads(done.stdout)["cases"]
    (metric,) = case["metrics"]
    return metric["status"], metric["score"], done.stderr


def config(folder: Path, **entry: object) -> None:
    (folder / "c.yaml").write_text(json.dumps({"evaluators": [{"name": "judge", **entry}]}), "utf-8")


def test_editing_a_helper_module_of_a_py_evaluator_runs_it_again(tmp_path):
    (tmp_path / "ev").mkdir()
    (tmp_path / "ev" / "judge.py").write_text(PY_WITH_HELPER)
    (tmp_path / "ev" / "helper.py").write_text("SCORE = 1.0\n")
    config(tmp_path, type="code", path="ev/judge.py")
    assert scored(tmp_path)[:2] == ("PASSED", 1.0)
    assert REUSED in scored(tmp_path)[2]  # unchanged: reused
    (tmp_path / "ev" / "helper.py").write_text("SCORE = 0.0\n")
    status, score, stderr = scored(tmp_path)
    assert (status, score) == ("FAILED", 0.0) and "reused" not in stderr


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_editing_a_helper_module_of_a_js_evaluator_runs_it_again(tmp_path):
    (tmp_path / "judge.js").write_text(JS_WITH_HELPER)
    (tmp_path / "helper.js").write_text("module.exports = { SCORE: 1 };\n")
    config(tmp_path, type="code", path="judge.js")
    assert scored(tmp_path)[:2] == ("PASSED", 1.0)
    (tmp_path / "helper.js").write_text("module.exports = { SCORE: 0.25 };\n")
    status, score, stderr = scored(tmp_path)
    assert (status, score) == ("FAILED", 0.25) and "reused" not in stderr


def test_editing_a_python_type_evaluators_module_runs_it_again(tmp_path):
    (tmp_path / "ev.py").write_text(PYTHON_CLASS.format(score=1.0))
    config(tmp_path, type="python", path="ev.py:E")
    assert scored(tmp_path)[:2] == ("PASSED", 1.0)
    (tmp_path / "ev.py").write_text(PYTHON_CLASS.format(score=0.0))
    status, score, stderr = scored(tmp_path)
    assert (status, score) == ("FAILED", 0.0) and "reused" not in stderr


def test_a_new_value_of_an_env_variable_runs_it_again_and_no_value_is_stored(tmp_path):
    (tmp_path / "judge.py").write_text(PY_FROM_ENV)
    config(tmp_path, type="code", path="judge.py", env=["SCORE_FROM_ENV", "UNUSED_TOKEN"])
    env = {"SCORE_FROM_ENV": "0.9", "UNUSED_TOKEN": "tok-8c1f0e2a77"}
    assert scored(tmp_path, env=env)[:2] == ("PASSED", 0.9)
    assert REUSED in scored(tmp_path, env=env)[2]
    status, score, stderr = scored(tmp_path, env={**env, "SCORE_FROM_ENV": "0.25"})
    assert (status, score) == ("FAILED", 0.25) and "reused" not in stderr
    _, _, stderr = scored(tmp_path, env={**env, "UNUSED_TOKEN": "tok-other"})
    assert "reused" not in stderr  # any listed variable's value is in the key
    store = Path(os.environ["AGENTEVALS_STORE"])
    stored = b"".join(p.read_bytes() for p in store.parent.glob(store.name + "*"))
    assert b"tok-8c1f0e2a77" not in stored and b"tok-other" not in stored  # digests only


def test_env_inherit_is_never_cached_and_says_why_with_v(tmp_path):
    (tmp_path / "judge.py").write_text(PY_FROM_ENV)
    config(tmp_path, type="code", path="judge.py", env="inherit")
    scored(tmp_path, env={"SCORE_FROM_ENV": "1"})
    status, _, stderr = scored(tmp_path, env={"SCORE_FROM_ENV": "1"}, verbose=True)
    assert status == "PASSED" and "reused" not in stderr
    (line,) = [line for line in stderr.splitlines() if "result cache" in line]
    assert line.endswith("result cache: evaluator 'judge' runs every time, not cached: env: inherit passes the whole "
                         "environment, which the key cannot cover (list the variables it needs under env:)")


def test_a_folder_too_big_to_hash_is_not_cached_and_says_why(tmp_path):
    (tmp_path / "ev").mkdir()
    (tmp_path / "ev" / "judge.py").write_text(PY_FROM_ENV)
    for i in range(MAX_TREE_FILES + 1):
        (tmp_path / "ev" / f"f{i}.txt").write_bytes(b"")
    config(tmp_path, type="code", path="ev/judge.py")
    scored(tmp_path)
    _, _, stderr = scored(tmp_path, verbose=True)
    assert "reused" not in stderr
    assert (f"result cache: evaluator 'judge' runs every time, not cached: its folder {tmp_path / 'ev'} has more "
            f"than {MAX_TREE_FILES} files to hash (keep the evaluator in a folder of its own)") in stderr


def test_the_reports_a_run_writes_beside_the_evaluator_do_not_change_its_key(tmp_path):
    (tmp_path / "judge.py").write_text(PY_FROM_ENV)
    config(tmp_path, type="code", path="judge.py")
    for attempt in range(2):
        done = agentevals(tmp_path, "run", str(HELM), "-c", "c.yaml", "-o", "json=report.json", "-o", "summary")
        assert ("reused" in done.stdout + done.stderr) == (attempt == 1), done.stderr


def test_code_root_is_the_top_package_or_the_files_folder(tmp_path):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    for init in ("pkg/__init__.py", "pkg/sub/__init__.py"):
        (tmp_path / init).write_text("")
    (tmp_path / "pkg" / "sub" / "ev.py").write_text("")
    (tmp_path / "loose.js").write_text("")
    assert code_root(tmp_path / "pkg" / "sub" / "ev.py") == tmp_path / "pkg"
    assert code_root(tmp_path / "loose.js") == tmp_path


def test_tree_digest_skips_vcs_caches_and_installed_dependencies(tmp_path):
    (tmp_path / "ev.py").write_text("x = 1\n")
    before = tree_digest(tmp_path)
    for skipped in (".git/HEAD", "node_modules/a/index.js", ".venv/bin/python", "__pycache__/ev.pyc"):
        (tmp_path / skipped).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / skipped).write_text("changed")
    assert tree_digest(tmp_path) == before
    (tmp_path / "requirements.txt").write_text("requests==2.0\n")
    assert tree_digest(tmp_path) != before
    with (tmp_path / "big.bin").open("wb") as sparse:  # sizes are counted before any byte is read
        sparse.truncate(MAX_TREE_BYTES + 1)
    with pytest.raises(NotCacheable, match=r"holds more than 64 MiB to hash"):
        tree_digest(tmp_path)


def test_a_config_orjson_cannot_encode_is_keyed_and_its_change_runs_it_again(tmp_path):
    # orjson refuses an integer past 64 bits: the key falls back to the stdlib instead of failing the run
    # ("internal error: TypeError: Integer exceeds 64-bit range")
    (tmp_path / "judge.py").write_text(PY_FROM_ENV)
    entry = "evaluators:\n  - name: judge\n    type: code\n    path: judge.py\n    env: [SCORE_FROM_ENV]\n"
    (tmp_path / "c.yaml").write_text(entry + "    config:\n      seed: 123456789012345678901234567890\n", "utf-8")
    env = {"SCORE_FROM_ENV": "0.75"}
    assert scored(tmp_path, env=env)[:2] == ("PASSED", 0.75)
    assert REUSED in scored(tmp_path, env=env)[2]
    (tmp_path / "c.yaml").write_text(entry + "    config:\n      seed: 123456789012345678901234567891\n", "utf-8")
    assert "reused" not in scored(tmp_path, env=env)[2]
