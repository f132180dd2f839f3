"""Hostile cases of the run store and the result cache (issue 22, "Stale results and bad store input").

Each case is one param: an attack or a broken input, and the documented outcome (refused with one line, or
the right result). All run the real CLI, in this process (click's runner) or as a subprocess where a new
interpreter matters (the result cache across runs).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from agentevals.cli._main import cli
from agentevals.store import SCHEMA_VERSION
from click.testing import CliRunner

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "packages" / "agentevals-cli" / "tests"))

from support.asgi import serving_store  # noqa: E402

HELM = REPO / "examples" / "traces" / "helm.json"
EVAL_SET = REPO / "examples" / "evalsets" / "eval_set_helm.json"
WORKFLOW_LINE = re.compile(r"^\s*::", re.MULTILINE)
"""What a GitHub Actions runner reads as a workflow command: ``::`` after a line's leading whitespace."""


def cli_run(*args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args), catch_exceptions=False, env=env)


def one_line_error(output: str) -> str:
    assert "Traceback" not in output
    (line,) = [line for line in output.splitlines() if line.startswith("Error: ")]
    return line


# -- the store: schema version, run ids, location schemes -------------------------------------------------

def _recorded(tmp_path: Path) -> str:
    store = str(tmp_path / "runs.sqlite")
    cli_run("run", str(HELM), "-e", str(EVAL_SET), "-o", "summary", "--store", store)
    return store


def _future(tmp_path: Path) -> str:
    store = _recorded(tmp_path)
    with sqlite3.connect(store) as db:
        db.execute("INSERT INTO schema_migrations VALUES (99, 'from the future', 'then')")
    return store


@dataclass
class StoreCase:
    id: str
    args: Callable[[Path], list[str]]
    exit: int
    message: str
    """A regex the one ``Error:`` line must match entirely (or, for exit 0, a text in the output)."""
    absent: tuple[str, ...] = ()
    """Texts that must appear nowhere in the output (a password)."""


def _show(ref: str) -> Callable[[Path], list[str]]:
    return lambda tmp: ["runs", "show", ref, "--store", _recorded(tmp)]


STORE_CASES = [
    StoreCase("future-schema-runs-list", lambda tmp: ["runs", "list", "--store", _future(tmp)], 2,
              r"Error: run store .*runs\.sqlite is at schema version 99, written by a newer agentevals; this "
              rf"agentevals knows up to version {SCHEMA_VERSION}: upgrade agentevals-cli \(or use another --store\)"),
    StoreCase("future-schema-store-migrate", lambda tmp: ["store", "migrate", "--store", _future(tmp)], 2,
              r"Error: run store .*is at schema version 99, written by a newer agentevals; this agentevals knows "
              rf"up to version {SCHEMA_VERSION}: .*"),
    StoreCase("future-schema-run", lambda tmp: ["run", str(HELM), "--store", _future(tmp)], 2,
              r"Error: run store .*is at schema version 99, .*"),
    StoreCase("run-id-percent-wildcard", _show("%"), 2,
              r"Error: no run '%' in the run store .*runs\.sqlite \(see 'agentevals runs list'\)"),
    StoreCase("run-id-underscore-wildcard", _show("2_______"), 2, r"Error: no run '2_______' in the run store .*"),
    StoreCase("run-id-100k-characters", _show("a" * 100_000), 2,
              r"Error: no run 'a{40}'… \(100000 characters\) in the run store .* \(see 'agentevals runs list'\)"),
    StoreCase("run-id-nul-byte", _show("2026\0"), 2, r"Error: no run '2026\\x00'… \(5 characters\) in the run .*"),
    StoreCase("store-scheme-mysql-with-password", lambda tmp: ["runs", "list", "--store", "mysql://u:hunter2@h/x"], 2,
              r"Error: run store: unsupported location scheme 'mysql': use a file path, sqlite:///PATH, or "
              r"postgresql://USER@HOST/DB", absent=("hunter2",)),
    StoreCase("store-scheme-http-on-run", lambda tmp: ["run", str(HELM), "--store", "http://u:pw-9f2@h/x"], 2,
              r"Error: run store: unsupported location scheme 'http': .*", absent=("pw-9f2",)),
    StoreCase("store-scheme-sqlite-memory", lambda tmp: ["runs", "list", "--store", "sqlite://"], 2,
              r"Error: run store: unsupported location scheme 'sqlite': .*"),
    StoreCase("store-scheme-sqlite-url-works", lambda tmp: ["runs", "list", "--store", f"sqlite:///{tmp}/u.sqlite"], 0,
              "no runs recorded yet"),
]


@pytest.mark.parametrize("case", STORE_CASES, ids=[c.id for c in STORE_CASES])
def test_store_input(case: StoreCase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    before = set(os.listdir(tmp_path))
    result = cli_run(*case.args(tmp_path))
    assert result.exit_code == case.exit, result.output
    if case.exit == 0:
        assert case.message in result.output
    else:
        assert re.fullmatch(case.message, one_line_error(result.output)), result.output
    for text in case.absent:
        assert text not in result.output
    # Never a folder named after a URL (the password in its name).
    assert not any(":" in name or "@" in name for name in set(os.listdir(tmp_path)) - before)


def test_store_input_postgres_future_schema(tmp_path: Path) -> None:
    """The same refusal on Postgres, where ``store migrate`` is the only writer of the schema."""
    from support.postgres import start_postgres

    server = start_postgres()
    if isinstance(server, str):
        pytest.skip(server)
    try:
        url = server.create_database("future_schema")
        assert cli_run("store", "migrate", "--store", url).exit_code == 0
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("INSERT INTO schema_migrations VALUES (99, 'from the future', 'then')")
        for args in (["store", "migrate"], ["runs", "list"]):
            result = cli_run(*args, "--store", url)
            assert result.exit_code == 2
            assert re.fullmatch(r"Error: run store postgresql://.* is at schema version 99, written by a newer "
                                rf"agentevals; this agentevals knows up to version {SCHEMA_VERSION}: .*",
                                one_line_error(result.output))
    finally:
        server.stop()


def test_store_input_run_ids_in_one_second_are_unique_and_ordered() -> None:
    from agentevals.store import new_run_id

    ids = [new_run_id() for _ in range(2000)]
    assert len(set(ids)) == len(ids) and ids == sorted(ids)
    assert all(re.fullmatch(r"\d{8}-\d{6}-\d{6}-[0-9a-f]{6}", i) for i in ids)


def test_store_input_old_run_ids_stay_readable(tmp_path: Path) -> None:
    store = _recorded(tmp_path)
    (new_id,) = [line.split()[0] for line in cli_run("runs", "list", "--store", store).output.splitlines()[1:]]
    old_id = "20250102-030405-1a2b3c"  # the format of agentevals 0.12
    with sqlite3.connect(store) as db:
        for table in ("runs", "cases", "metric_results"):
            db.execute(f"UPDATE {table} SET run_id = ? WHERE run_id = ?", (old_id, new_id))
    shown = cli_run("runs", "show", "20250102-0304", "-o", "json", "--store", store)
    assert shown.exit_code == 0 and json.loads(shown.output)["run_id"] == old_id


# -- the result cache: a changed evaluator is run again ------------------------------------------------------

SCORE_PY = "import json, sys\njson.load(sys.stdin)\nprint(json.dumps({'score': SCORE}))\n"
HELPER_PY = "import json, os, sys\nsys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))\n" \
            "from helper import SCORE\njson.load(sys.stdin)\nprint(json.dumps({'score': SCORE}))\n"
ENV_PY = "import json, os, sys\njson.load(sys.stdin)\nprint(json.dumps({'score': float(os.environ['S'])}))\n"
PY_CLASS = ("from agentevals import Evaluator\n\nclass E(Evaluator):\n    def filter_traces(self, traces):\n"
            "        return traces\n\n    def __call__(self, traces, final_answer=None):\n        return {'score': 1.0}\n")
JS_HELPER = ('const { SCORE } = require("./lib/helper.js");\nlet raw = "";\nprocess.stdin.on("data", (c) => (raw += c));\n'
             'process.stdin.on("end", () => console.log(JSON.stringify({ score: SCORE })));\n')


@dataclass
class CacheCase:
    id: str
    files: dict[str, str]
    """Written before the first run, which scores 1.0."""
    entry: dict[str, object]
    change: Callable[[Path], dict[str, str]]
    """Changes what decides the result (SCORE becomes 0.0); returns the second run's extra environment."""
    first_env: dict[str, str] | None = None


def _rewrite(name: str) -> Callable[[Path], dict[str, str]]:
    def change(folder: Path) -> dict[str, str]:
        path = folder / name
        path.write_text(path.read_text().replace("1.0", "0.0").replace("SCORE: 1", "SCORE: 0"))
        return {}
    return change


CACHE_CASES = [
    CacheCase("python-type-module-edited", {"ev.py": PY_CLASS}, {"type": "python", "path": "ev.py:E"}, _rewrite("ev.py")),
    CacheCase("code-py-helper-edited", {"ev/judge.py": HELPER_PY, "ev/helper.py": "SCORE = 1.0\n"},
              {"type": "code", "path": "ev/judge.py"}, _rewrite("ev/helper.py")),
    CacheCase("code-py-package-sibling-edited",
              {"pkg/__init__.py": "", "pkg/util.py": "SCORE = 1.0\n", "pkg/judges/__init__.py": "",
               "pkg/judges/j.py": "import json, os, sys\nsys.path.insert(0, os.path.join(os.path.dirname("
                                  "os.path.abspath(__file__)), '..', '..'))\nfrom pkg.util import SCORE\n"
                                  "json.load(sys.stdin)\nprint(json.dumps({'score': SCORE}))\n"},
              {"type": "code", "path": "pkg/judges/j.py"}, _rewrite("pkg/util.py")),
    CacheCase("code-js-helper-in-subfolder-edited",
              {"judge.js": JS_HELPER, "lib/helper.js": "module.exports = { SCORE: 1 };\n"},
              {"type": "code", "path": "judge.js"}, _rewrite("lib/helper.js")),
    CacheCase("code-data-file-beside-it-edited",
              {"ev/judge.py": SCORE_PY.replace("SCORE", "float(open(__file__.replace('judge.py', 'weight.txt')).read())"),
               "ev/weight.txt": "1.0"},
              {"type": "code", "path": "ev/judge.py"}, _rewrite("ev/weight.txt")),
    CacheCase("env-value-changed", {"judge.py": ENV_PY}, {"type": "code", "path": "judge.py", "env": ["S"]},
              lambda folder: {"S": "0.0"}, first_env={"S": "1.0"}),
]


def _score(folder: Path, env: dict[str, str]) -> tuple[float, str]:
    done = subprocess.run([sys.executable, "-m", "agentevals", "run", str(HELM), "-c", "c.yaml", "-o", "json"],
                          cwd=folder, capture_output=True, text=True, timeout=180, env={**os.environ, **env})
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr
    (case,) = json.loads(done.stdout)["cases"]
    (metric,) = case["metrics"]
    return metric["score"], done.stderr


@pytest.mark.parametrize("case", CACHE_CASES, ids=[c.id for c in CACHE_CASES])
def test_cache_reruns_a_changed_evaluator(case: CacheCase, tmp_path: Path) -> None:
    if case.id.startswith("code-js") and not any(
            Path(p, "node").is_file() for p in os.environ.get("PATH", "").split(os.pathsep)):
        pytest.skip("node is not installed")
    for name, text in case.files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "c.yaml").write_text(json.dumps({"evaluators": [{"name": "judge", **case.entry}]}))
    env = case.first_env or {}
    assert _score(tmp_path, env)[0] == 1.0
    assert "1 result reused" in _score(tmp_path, env)[1]  # unchanged: the cache still works
    score, stderr = _score(tmp_path, {**env, **case.change(tmp_path)})
    assert score == 0.0 and "reused" not in stderr


# -- trace text never starts a CI workflow command --------------------------------------------------------

HOSTILE_TOOL = "helm\n::add-mask::leak\n  ::stop-commands::tok\r::set-env name=A::b\n##[set-output name=x;]y"
HOSTILE_ID = "id\n\u00a0::add-mask::case ##[debug]x"


def _hostile_trace(folder: Path) -> Path:
    def walk(value: object) -> object:
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value.replace("helm_list_releases", HOSTILE_TOOL) if isinstance(value, str) else value

    doc = walk(json.loads(HELM.read_text()))
    # A second trace whose id (the case id every report shows) is hostile too.
    twin = json.loads(json.dumps(doc["data"][0]).replace("3e289017fe03ffd7c4145316d2eb3d0d",
                                                          json.dumps(HOSTILE_ID)[1:-1]))
    doc["data"].append(twin)
    path = folder / "hostile.json"
    path.write_text(json.dumps(doc))
    return path


def _no_workflow_command(text: str) -> None:
    lines = re.split(r"\r\n|\r|\n", text)
    bad = [line for line in lines if line.lstrip().startswith("::") and not line.startswith("::error file=")]
    assert not bad and "##[" not in text, bad or text


@pytest.mark.parametrize("fmt", ["table", "summary", "markdown", "json", "junit", "html"])
def test_trace_text_cannot_start_a_workflow_command(fmt: str, tmp_path: Path) -> None:
    trace = _hostile_trace(tmp_path)
    result = cli_run("run", str(trace), "-e", str(EVAL_SET), "-o", fmt, "--no-store", "--group-by", "trace",
                     env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": ""})
    assert result.exit_code == 1
    _no_workflow_command(result.stdout)
    _no_workflow_command(result.stderr)  # agentevals' own ::error annotation only
    assert "add-mask" in result.stdout  # the text is kept, only defused
    if fmt == "json":  # …and the JSON report still holds the exact text
        doc = json.loads(result.stdout)
        assert HOSTILE_TOOL in json.dumps(doc["cases"], ensure_ascii=False).encode().decode("unicode_escape")


def test_trace_text_cannot_start_a_workflow_command_in_runs_compare(tmp_path: Path) -> None:
    """A case id (a trace id) is printed by ``runs compare`` as a regression."""
    trace = tmp_path / "hostile_id.json"
    trace.write_text(HELM.read_text().replace("3e289017fe03ffd7c4145316d2eb3d0d", "x\\n::add-mask::y\\r##[z]"))
    (tmp_path / "judge.py").write_text(ENV_PY)
    (tmp_path / "c.yaml").write_text(json.dumps({"evaluators": [{"name": "judge", "type": "code", "path": "judge.py",
                                                                 "env": ["S"]}]}))
    store = str(tmp_path / "runs.sqlite")
    for score in ("1.0", "0.0"):
        cli_run("run", str(trace), "-c", str(tmp_path / "c.yaml"), "--store", store, env={"S": score})
    ids = [line.split()[0] for line in cli_run("runs", "list", "--store", store).output.splitlines()[1:]]
    for extra in ([], ["--json"]):
        result = cli_run("runs", "compare", ids[1], ids[0], *extra, "--store", store)
        assert result.exit_code == 1 and "add-mask" in result.output
        _no_workflow_command(result.output)


# -- the API: run references are looked up literally, never a 5xx ------------------------------------------

@pytest.fixture(scope="module")
def api_over_store(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """The HTTP API (uvicorn on a thread, an OS-chosen loopback port) over a store with one run."""
    with serving_store(_recorded(tmp_path_factory.mktemp("api"))) as url:
        yield url


API_REFS = [
    ("percent", "/api/runs/%25"),
    ("underscores", "/api/runs/2_______"),
    ("100k-characters", "/api/runs/" + "a" * 100_000),
    ("compare-percent", "/api/runs/compare?a=%25&b=latest"),
    ("compare-100k-characters", "/api/runs/compare?a=latest&b=" + "2" * 100_000),
    ("web-page-percent", "/runs/%25"),
]


@pytest.mark.parametrize("path", [p for _, p in API_REFS], ids=[i for i, _ in API_REFS])
def test_api_run_reference_is_literal_and_bounded(api_over_store: str, path: str) -> None:
    import requests

    response = requests.get(api_over_store + path, timeout=30)
    assert response.status_code == 404, response.text[:300]
    assert "no run" in response.text and "Traceback" not in response.text
