"""``agentevals eval assert``: judge discovery up to the repository root, real judge processes, exit codes."""

from __future__ import annotations

import json
import shutil
import sys
import textwrap
from pathlib import Path

import pytest
from agentevals.cli import cli, main
from click.testing import CliRunner

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

PY_CONTAINS = """\
import json, sys
payload = json.load(sys.stdin)
ok = "hello" in payload["answer"]
print(json.dumps({"score": 1.0 if ok else 0.0, "reasoning": "said hello" if ok else "no hello",
                  "hits": ["hello"] if ok else [], "misses": [] if ok else ["hello"]}))
"""

JS_ECHO = """\
let raw = "";
process.stdin.on("data", (c) => (raw += c));
process.stdin.on("end", () => {
  const p = JSON.parse(raw);
  const words = p.answer.split(/\\s+/).filter(Boolean).length;
  console.log(JSON.stringify({ score: words >= 3 ? 0.75 : 0.25, reasoning: `${words} words for: ${p.question}` }));
});
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with judges at its root; the command runs two directories below."""
    (tmp_path / ".git").mkdir()
    judges = tmp_path / ".agentevals" / "judges"
    judges.mkdir(parents=True)
    (judges / "check-hello.py").write_text(PY_CONTAINS, "utf-8")
    (tmp_path / ".agentv" / "judges").mkdir(parents=True)
    (tmp_path / ".agentv" / "judges" / "word-count.js").write_text(JS_ECHO, "utf-8")
    work = tmp_path / "evals" / "suite"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    return tmp_path


def run(*args: str):
    return CliRunner().invoke(cli, ["eval", "assert", *args], catch_exceptions=False)


def run_main(args: list[str], capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(["eval", "assert", *args])
    captured = capsys.readouterr()
    return info.value.code, captured.out, captured.err


def test_python_judge_two_directories_up_passes(repo):
    result = run("check-hello", "--agent-output", "well hello there", "--agent-input", "greet me")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {
        "score": 1.0,
        "reasoning": "said hello",
        "hits": ["hello"],
        "misses": [],
    }


def test_python_judge_failing_score_exits_1(repo):
    result = run("check-hello", "--agent-output", "goodbye")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["score"] == 0.0


@needs_node
@pytest.mark.node
def test_js_judge_in_agentv_dir_gets_the_payload(repo):
    result = run("word-count", "--agent-output", "one two three", "--agent-input", "count")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {
        "score": 0.75,
        "reasoning": "3 words for: count",
        "hits": [],
        "misses": [],
    }
    low = run("word-count", "--agent-output", "one")
    assert (low.exit_code, json.loads(low.stdout)["score"]) == (1, 0.25)


def test_file_mode_reads_output_and_input(repo, tmp_path_factory):
    data = tmp_path_factory.mktemp("in") / "result.json"
    data.write_text(json.dumps({"output": "hello world", "input": "say hello"}), "utf-8")
    result = run("check-hello", "--file", str(data))
    assert result.exit_code == 0


def test_payload_is_agentvs_codeevaluator_payload(repo):
    (repo / ".agentevals" / "judges" / "dump.py").write_text(
        "import json, sys\np = json.load(sys.stdin)\nprint(json.dumps({'score': 1, 'details': p}))\n", "utf-8"
    )
    result = run("dump", "--agent-output", "OUT", "--agent-input", "IN", "--config", '{"threshold": 3}')
    payload = json.loads(result.stdout)["details"]
    assert payload == {
        "answer": "OUT",
        "output": [{"role": "assistant", "content": "OUT"}],
        "input": [{"role": "user", "content": "IN"}],
        "question": "IN",
        "criteria": "",
        "expected_output": [],
        "reference_answer": "",
        "guideline_files": [],
        "input_files": [],
        "trace": None,
        "token_usage": None,
        "cost_usd": None,
        "duration_ms": None,
        "start_time": None,
        "end_time": None,
        "file_changes": None,
        "workspace_path": None,
        "config": {"threshold": 3},
        "metadata": {},
        "input_text": "IN",
        "output_text": "OUT",
        "expected_output_text": "",
    }


def test_file_mode_payload_carries_expected_output_and_criteria(repo, tmp_path_factory):
    (repo / ".agentevals" / "judges" / "dump.py").write_text(
        "import json, sys\np = json.load(sys.stdin)\nprint(json.dumps({'score': 1, 'details': p}))\n", "utf-8"
    )
    data = tmp_path_factory.mktemp("in") / "result.json"
    data.write_text(json.dumps({"output": "OUT", "expected_output": "EXP", "criteria": "C"}), "utf-8")
    payload = json.loads(run("dump", "--file", str(data)).stdout)["details"]
    assert payload["expected_output"] == [{"role": "assistant", "content": "EXP"}]
    assert (payload["reference_answer"], payload["expected_output_text"], payload["criteria"]) == ("EXP", "EXP", "C")
    assert (payload["input"], payload["question"], payload["config"]) == ([{"role": "user", "content": ""}], "", None)


def test_nearest_judge_wins_and_agentevals_beats_agentv(repo):
    near = repo / "evals" / ".agentv" / "judges"
    near.mkdir(parents=True)
    (near / "check-hello.py").write_text('print(\'{"score": 0.5, "reasoning": "near"}\')\n', "utf-8")
    assert json.loads(run("check-hello", "--agent-output", "x").stdout)["reasoning"] == "near"
    (repo / ".agentv" / "judges" / "word-count.py").write_text("print('{\"score\": 0}')\n", "utf-8")
    (repo / ".agentevals" / "judges" / "word-count.py").write_text("print('{\"score\": 1}')\n", "utf-8")
    assert run("word-count", "--agent-output", "x").exit_code == 0


def test_discovery_stops_at_the_repository_root(repo, capsys):
    inner = repo / "evals" / "suite"
    (inner / ".git").mkdir()  # the suite is its own repository now: the judges above are out of reach
    code, out, err = run_main(["check-hello", "--agent-output", "hello"], capsys)
    assert (code, out) == (2, "")
    assert err.startswith("Error: unknown judge 'check-hello'; judges found: none")


def test_unknown_name_exits_2_listing_what_was_found(repo, capsys):
    code, out, err = run_main(["check-helo", "--agent-output", "x"], capsys)
    assert (code, out) == (2, "")
    assert err == (
        "Error: unknown judge 'check-helo' (did you mean 'check-hello'?); judges found: check-hello, word-count"
        f" (searched .agentevals/judges/ and .agentv/judges/ from {repo.resolve() / 'evals' / 'suite'} up to {repo.resolve()});"
        " builtin assertions: contains, contains-all, contains-any, ends-with, equals, icontains, icontains-all,"
        " icontains-any, is-json, regex, starts-with\n"
    )


def test_invalid_name_is_refused(repo, capsys):
    code, _, err = run_main(["../check-hello", "--agent-output", "x"], capsys)
    assert code == 2
    assert (
        err
        == "Error: invalid judge name '../check-hello': only letters, digits, hyphens and underscores are allowed\n"
    )


def test_judge_timeout_is_a_clear_error(repo, capsys):
    (repo / ".agentevals" / "judges" / "slow.py").write_text("import time\ntime.sleep(30)\n", "utf-8")
    code, out, err = run_main(["slow", "--agent-output", "x", "--timeout", "0.5"], capsys)
    assert (code, out) == (1, "")
    script = repo / ".agentevals" / "judges" / "slow.py"
    assert (
        err
        == f"Error: judge 'slow' ({script.resolve()}) timed out after 0.5s and was killed; fix the judge or raise --timeout\n"
    )


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("import sys\nsys.stderr.write('boom\\nreally')\nsys.exit(3)\n", "exited with code 3: boom really"),
        ("print('score: 1')\n", 'must print one JSON object like {"score": 1} on stdout, printed: score: 1'),
        ("print('[1]')\n", "must print a JSON object, printed list: [1]"),
    ],
)
def test_broken_judges_fail_with_one_line(repo, capsys, source, message):
    (repo / ".agentevals" / "judges" / "broken.py").write_text(source, "utf-8")
    code, out, err = run_main(["broken", "--agent-output", "x"], capsys)
    assert (code, out) == (1, "")
    assert err.startswith("Error: judge 'broken'") and err.endswith(message + "\n") and err.count("\n") == 1


def test_non_numeric_score_counts_as_zero(repo):
    (repo / ".agentevals" / "judges" / "odd.py").write_text(
        'print(\'{"score": "1", "hits": "x"}\')\n', "utf-8"
    )
    result = run("odd", "--agent-output", "x")
    assert (result.exit_code, json.loads(result.stdout)) == (
        1,
        {"score": 0.0, "reasoning": "", "hits": [], "misses": []},
    )


@pytest.mark.parametrize(
    ("script", "cause"),
    [
        # .ts runs like a `type: code` evaluator: the node runtime (tsx or Node's type stripping)
        ("typed.ts", "node not found on PATH (needed for .js/.ts evaluators); install Node.js"),
        (
            "typed.mts",
            "it is TypeScript and needs tsx, found neither on PATH nor in node_modules/.bin;"
            " run `npm install --save-dev tsx` in the project (or compile the judge to .js)",
        ),
    ],
)
def test_typescript_judge_without_its_interpreter_names_the_fix(repo, capsys, monkeypatch, tmp_path_factory, script, cause):
    path = repo / ".agentevals" / "judges" / script
    path.write_text("console.log('{\"score\": 1}')\n", "utf-8")
    monkeypatch.setenv("PATH", str(tmp_path_factory.mktemp("empty-path")))
    code, out, err = run_main(["typed", "--agent-output", "x"], capsys)
    assert (code, out) == (1, "")
    assert err == f"Error: judge 'typed' ({path.resolve()}) cannot run: {cause}\n"


@pytest.mark.parametrize("script", [pytest.param("typed.ts", marks=needs_node), "typed.mts"])
def test_typescript_judge_uses_tsx_from_node_modules(repo, script):
    bin_dir = repo / "node_modules" / ".bin"
    bin_dir.mkdir(parents=True)
    fake_tsx = bin_dir / "tsx"  # stands in for tsx: runs the script through python to prove it was chosen
    fake_tsx.write_text(
        f"#!{sys.executable}\nimport sys\nprint('{{\"score\": 1, \"reasoning\": \"tsx ran ' + sys.argv[1].rsplit('/', 1)[-1] + '\"}}')\n",
        "utf-8",
    )
    fake_tsx.chmod(0o755)
    (repo / ".agentevals" / "judges" / script).write_text("export {}\n", "utf-8")
    result = run("typed", "--agent-output", "x")
    assert json.loads(result.stdout)["reasoning"] == f"tsx ran {script}"


def test_shell_judge_runs_with_bash(repo):
    (repo / ".agentevals" / "judges" / "sh-judge.sh").write_text(
        'read -r -d "" _\necho \'{"score": 0.5}\'\n', "utf-8"
    )
    assert run("sh-judge", "--agent-output", "x").exit_code == 0


@pytest.mark.parametrize(
    ("args", "code", "result"),
    [
        (
            ["contains", "--agent-output", "Paris is nice", "--value", "Paris"],
            0,
            {
                "score": 1.0,
                "reasoning": 'Output contains "Paris"',
                "hits": ['Output contains "Paris"'],
                "misses": [],
            },
        ),
        (
            ["contains", "--agent-output", "Lyon", "--value", "Paris"],
            1,
            {
                "score": 0.0,
                "reasoning": 'Output does not contain "Paris"',
                "hits": [],
                "misses": ['Output does not contain "Paris"'],
            },
        ),
        (["is_json", "--agent-output", '{"a": 1}'], 0, None),
        (["is-json", "--agent-output", "NaN"], 1, None),
        (
            ["regex", "--agent-output", "HELLO", "--config", '{"value": "^hello$", "flags": "i"}'],
            0,
            {
                "score": 1.0,
                "reasoning": "Output matches pattern /^hello$/i (flags: i)",
                "hits": ["Output matches pattern /^hello$/i (flags: i)"],
                "misses": [],
            },
        ),
        (["regex", "--agent-output", "hello", "--value", r"(?<l>l)\k<l>"], 0, None),  # JavaScript syntax
        (
            ["contains-any", "--agent-output", "x", "--value", "a", "--value", "b"],
            1,
            {
                "score": 0.0,
                "reasoning": 'Output does not contain any of: "a", "b"',
                "hits": [],
                "misses": ['Output does not contain any of: "a", "b"'],
            },
        ),
        (["contains-any", "--agent-output", "b", "--value", "a", "--value", "b"], 0, None),
        (
            ["icontains-all", "--agent-output", "A b", "--value", "a", "--value", "c"],
            1,
            {
                "score": 0.0,
                "reasoning": 'Output missing (case-insensitive): "c"',
                "hits": [],
                "misses": ['Output missing (case-insensitive): "c"'],
            },
        ),
        (["equals", "--agent-output", "  4 ", "--value", "4"], 0, None),
        (["starts-with", "--agent-output", "Hello you", "--value", "Hello"], 0, None),
        (["ends-with", "--agent-output", "Hello you", "--value", "Hello"], 1, None),
    ],
)
def test_builtin_assertions_by_name(repo, args, code, result):
    out = run(*args)
    assert out.exit_code == code, out.output
    if result is not None:
        assert json.loads(out.stdout) == result


def test_a_judge_shadows_a_builtin_of_the_same_name(repo):
    (repo / ".agentevals" / "judges" / "contains.py").write_text(
        'print(\'{"score": 0.9, "reasoning": "mine"}\')\n', "utf-8"
    )
    assert json.loads(run("contains", "--agent-output", "x", "--value", "y").stdout)["reasoning"] == "mine"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["contains", "--agent-output", "x"],
            "Error: assertion 'contains' needs --value (a non-empty string), got None\n",
        ),
        (["check-hello"], "Error: --agent-output is required (or use --file)\n"),
        (
            ["regex", "--agent-output", "x", "--value", "("],
            "Error: invalid regex '(': missing ), unterminated subpattern at position 0\n",
        ),
        (
            ["contains", "--agent-output", "x", "--config", "[1"],
            "Error: --config is not valid JSON: Expecting ',' delimiter at line 1 column 3\n",
        ),
    ],
)
def test_usage_errors_exit_2(repo, capsys, args, message):
    code, out, err = run_main(args, capsys)
    assert (code, out, err) == (2, "", message)


def test_the_demo_suite_judges_run_end_to_end(tmp_path, monkeypatch):
    demo = Path(__file__).resolve().parent.parent / "data" / "transpile" / "eval-assert-demo"
    shutil.copytree(demo, tmp_path / "demo")
    (tmp_path / "demo" / ".git").mkdir()
    monkeypatch.chdir(tmp_path / "demo" / "evals")
    answer = "The capital of France is Paris."
    result = run("keyword-check", "--agent-output", answer, "--agent-input", "What is the capital of France?")
    assert (result.exit_code, json.loads(result.stdout)["score"]) == (0, 1.0)
    half = run("keyword-check", "--agent-output", "Paris.")
    assert (half.exit_code, json.loads(half.stdout)["score"]) == (0, 0.5)
    if shutil.which("node"):
        short = run("length-check", "--agent-output", "Paris.")
        assert (short.exit_code, json.loads(short.stdout)["reasoning"]) == (1, "1 words")
        assert run("length-check", "--agent-output", answer).exit_code == 0


def test_help_mentions_exit_codes():
    result = CliRunner().invoke(cli, ["eval", "assert", "--help"])
    assert "Exit 0 when score >= 0.5, 1 below" in textwrap.dedent(result.output).replace("\n  ", " ")
