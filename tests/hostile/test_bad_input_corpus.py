"""The bad-input corpus: each case is an input, the one line agentevals must say about it, and the exit code.

Every case runs the real CLI (click's runner, in this process) in a fresh directory. Where other inputs or
evaluators are present, their results must still be in the output (the helm trace's case, the
``tool_call_count_v1`` row): one bad input never costs the others. No case may print a traceback.

Add a case = one ``Bad(...)`` line. ``files`` are written into the case's directory (``bytes``/``str``, or
a function of the path for what must be made, like a FIFO).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Union

import pytest
from agentevals.cli._main import cli
from click.testing import CliRunner

HELM = Path(__file__).resolve().parents[2] / "examples" / "traces" / "helm.json"
EVAL_SET = Path(__file__).resolve().parents[2] / "examples" / "evalsets" / "eval_set_helm.json"
HELM_ID = "3e289017fe03ffd7c4145316d2eb3d0d"
KEPT = "tool_call_count_v1"
"""The good evaluator whose row must be present next to a failing one."""

File = Union[bytes, str, Callable[[Path], None]]


@dataclass
class Bad:
    id: str
    files: dict[str, File]
    args: list[str]
    exit: int
    message: str
    """Must appear within one line of the output (stdout + stderr)."""
    kept: tuple[str, ...] = (HELM_ID, KEPT)
    """Texts of the other results that must still be there (empty: nothing runs on a usage error)."""
    env: dict[str, str] = field(default_factory=dict)


def fifo(path: Path) -> None:
    os.mkfifo(path)


def deep(n: int, wrap: str = "{}") -> str:
    inner = "[" * n + "]" * n
    return wrap.replace("{}", inner) if wrap != "{}" else inner


def run_trace(name: str) -> list[str]:
    return ["run", name, "helm.json", "-m", KEPT]


def with_config(**evaluator: object) -> str:
    entry = {"name": "bad", **evaluator}
    return json.dumps({"evaluators": [entry, {"name": KEPT, "type": "builtin"}]})


def script(body: str) -> str:
    """A ``type: code`` evaluator that reads its EvalInput and then runs ``body``."""
    return "import json, os, sys, time\ndata = json.load(sys.stdin)\n" + body + "\n"


def code_case(id: str, body: str, message: str, *, exit: int = 1, timeout: float = 10, **extra: object) -> Bad:
    return Bad(id, {"ev.py": script(body), "c.yaml": with_config(type="code", path="ev.py", timeout=timeout, **extra)},
               ["run", "helm.json", "-c", "c.yaml"], exit, message)


def python_case(id: str, body: str, message: str, *, timeout: float = 10) -> Bad:
    source = ("from agentevals import Evaluator\n\nclass E(Evaluator):\n"
              "    def filter_traces(self, traces):\n        return traces\n\n"
              "    def __call__(self, traces, final_answer=None):\n"
              + "".join(f"        {line}\n" for line in body.splitlines()))
    return Bad(id, {"ev.py": source, "c.yaml": with_config(type="python", path="ev.py:E", timeout=timeout)},
               ["run", "helm.json", "-c", "c.yaml"], 1, message)


def config_case(id: str, text: str, message: str) -> Bad:
    return Bad(id, {"c.yaml": text}, ["run", "helm.json", "-c", "c.yaml"], 2, message, kept=())


BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(8))

CORPUS: list[Bad] = [
    # -- trace files: each bad one is an input error; the helm trace is still evaluated ------------
    Bad("trace-empty", {"bad.json": ""}, run_trace("bad.json"), 1, "bad.json: empty file, expected JSON"),
    Bad("trace-blank", {"bad.json": " \n\t\n"}, run_trace("bad.json"), 1, "bad.json: empty file, expected JSON"),
    Bad("trace-not-json", {"bad.json": "hello"}, run_trace("bad.json"), 1, "bad.json:1:1: invalid JSON: Expecting value"),
    Bad("trace-truncated", {"bad.json": '{"data": [{"traceID": "a"'}, run_trace("bad.json"), 1,
        "bad.json:1:26: invalid JSON: Expecting ',' delimiter (file looks truncated)"),
    Bad("trace-utf16", {"bad.json": "\ufeff{}".encode("utf-16")}, run_trace("bad.json"), 1,
        "bad.json: UTF-16 text, expected UTF-8 JSON"),
    Bad("trace-latin1", {"bad.json": b'{"data": "\xe9t\xe9"}'}, run_trace("bad.json"), 1, "bad.json: not UTF-8 text, expected JSON"),
    Bad("trace-number", {"bad.json": "42"}, run_trace("bad.json"), 1, "bad.json: not a trace file: expected Jaeger JSON"),
    Bad("trace-string", {"bad.json": '"x"'}, run_trace("bad.json"), 1, "bad.json: not a trace file"),
    Bad("trace-null", {"bad.json": "null"}, run_trace("bad.json"), 1, "bad.json: not a trace file"),
    Bad("trace-empty-object", {"bad.json": "{}"}, run_trace("bad.json"), 1, "found an empty object"),
    Bad("trace-list-of-numbers", {"bad.json": "[1, 2, 3]"}, run_trace("bad.json"), 1, "bad.json: not a trace file"),
    Bad("trace-is-eval-set", {"bad.json": '{"eval_set_id": "s", "eval_cases": []}'}, run_trace("bad.json"), 1,
        "bad.json: this is an ADK eval set, not a trace file: pass it with -e/--eval-set"),
    Bad("trace-jaeger-data-empty", {"bad.json": '{"data": []}'}, run_trace("bad.json"), 1, "bad.json: no spans in the file"),
    Bad("trace-jaeger-no-trace-id", {"bad.json": '{"data": [{"spans": [{"spanID": "1"}]}]}'}, run_trace("bad.json"), 1,
        "bad.json: data[0].spans[0] has no 'traceID'"),
    Bad("trace-otlp-not-list", {"bad.json": '{"resourceSpans": 5}'}, run_trace("bad.json"), 1,
        "bad.json: OTLP JSON 'resourceSpans' must be a list"),
    Bad("trace-otlp-no-ids", {"bad.json": '{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "x"}]}]}]}'},
        run_trace("bad.json"), 1, "bad.json: resourceSpans[0].scopeSpans[0].spans[0] has no 'traceId'"),
    Bad("trace-jsonl-bad-line", {"bad.json": '{"resourceSpans": []}\n{"resourceSpans": [}\n'}, run_trace("bad.json"),
        1, "bad.json:2:20: invalid JSON: Expecting value"),
    Bad("trace-nan", {"bad.json": '{"data": NaN}'}, run_trace("bad.json"), 1, "bad.json: invalid JSON: unexpected character"),
    Bad("trace-huge-number", {"bad.json": '{"data": [1e999]}'}, run_trace("bad.json"), 1, "bad.json: invalid JSON: number is infinity"),
    Bad("trace-binary", {"bad.json": bytes(range(256))}, run_trace("bad.json"), 1, "bad.json:1:1: invalid JSON: Expecting value"),
    Bad("trace-deep-array", {"bad.json": deep(100_000)}, run_trace("bad.json"), 1,
        "bad.json: JSON nested deeper than 512 levels; set AGENTEVALS_MAX_JSON_DEPTH to allow more"),
    Bad("trace-deep-object", {"bad.json": '{"a":' * 100_000 + "1" + "}" * 100_000}, run_trace("bad.json"), 1,
        "bad.json: JSON nested deeper than 512 levels"),
    Bad("trace-deep-streamed", {"bad.json": '{"data": [' + deep(100_000) + "]}" + " " * (9 * 2**20)},
        run_trace("bad.json"), 1, "bad.json: JSON nested deeper than 512 levels"),
    Bad("trace-deep-configured", {"bad.json": '{"data": [' + deep(40) + "]}"}, run_trace("bad.json"), 1,
        "bad.json: JSON nested deeper than 20 levels", env={"AGENTEVALS_MAX_JSON_DEPTH": "20"}),
    Bad("trace-too-large", {"bad.json": '{"data": []}' + " " * 400_000}, run_trace("bad.json"), 1,
        "bad.json: larger than 293 KiB (the input size limit); set AGENTEVALS_MAX_INPUT_BYTES to allow more",
        env={"AGENTEVALS_MAX_INPUT_BYTES": "300000"}),
    Bad("trace-missing", {}, run_trace("nowhere.json"), 1, "nowhere.json: no such file"),
    Bad("trace-directory", {"dir/x": "1"}, run_trace("dir"), 1, "dir: is a directory, expected a trace file"),
    Bad("trace-dev-zero", {}, run_trace("/dev/zero"), 1,
        "/dev/zero: not JSON: it starts with b'\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00"),
    Bad("trace-dev-urandom", {}, run_trace("/dev/urandom"), 1, "/dev/urandom: not JSON: it starts with"),
    Bad("trace-dev-null", {}, run_trace("/dev/null"), 1, "/dev/null: empty file, expected JSON"),
    Bad("trace-fifo-no-writer", {"pipe": fifo}, run_trace("pipe"), 1,
        "pipe: no end of input after 0.5s (a pipe whose writer never finished?); set AGENTEVALS_INPUT_TIMEOUT",
        env={"AGENTEVALS_INPUT_TIMEOUT": "0.5"}),
    Bad("trace-symlink-loop", {"loop.json": lambda p: os.symlink(p, p)}, run_trace("loop.json"), 1,
        "loop.json: cannot read: Too many levels of symbolic links"),
    Bad("trace-self-parent-span", {"bad.json": json.dumps({"data": [{"traceID": "t1", "spans": [
        {"traceID": "t1", "spanID": "s1", "operationName": "execute_tool f", "references": [
            {"refType": "CHILD_OF", "traceID": "t1", "spanID": "s1"}], "startTime": 1, "duration": 1,
         "tags": [{"key": "gen_ai.operation.name", "value": "execute_tool"}]}]}]})},
        run_trace("bad.json"), 0, "span s1 ('execute_tool f') is its own parent; it is read as a root span"),
    Bad("trace-span-cap", {"bad.json": json.dumps({"data": [{"traceID": "t1", "spans": [
        {"traceID": "t1", "spanID": f"s{i}", "operationName": "x", "startTime": i, "duration": 1} for i in range(5)]}]})},
        run_trace("bad.json"), 1, "trace t1 has 5 spans; only the first 3 were read (set AGENTEVALS_MAX_SPANS",
        env={"AGENTEVALS_MAX_SPANS": "3"}),
    Bad("trace-logs-alone", {"bad.json": '{"resourceLogs": []}'}, ["run", "bad.json", "helm.json", "-m", KEPT], 1,
        "bad.json: not an OTLP logs file: expected {\"resourceLogs\": [...]}"),
    # -- eval sets (-e): usage errors, nothing runs -----------------------------------------------------
    Bad("evalset-missing", {}, ["run", "helm.json", "-e", "nowhere.json"], 2, "nowhere.json: no such file", kept=()),
    Bad("evalset-directory", {"d/x": "1"}, ["run", "helm.json", "-e", "d"], 2, "Error: Invalid value for '-e' / '--eval-set': File 'd' is a directory.", kept=()),
    Bad("evalset-empty", {"e.json": ""}, ["run", "helm.json", "-e", "e.json"], 2, "e.json: empty file, expected JSON",
        kept=()),
    Bad("evalset-truncated", {"e.json": '{"eval_cases": ['}, ["run", "helm.json", "-e", "e.json"], 2,
        "e.json:1:17: invalid JSON", kept=()),
    Bad("evalset-deep", {"e.json": deep(50_000)}, ["run", "helm.json", "-e", "e.json"], 2,
        "e.json: JSON nested deeper than 512 levels", kept=()),
    Bad("evalset-list", {"e.json": "[]"}, ["run", "helm.json", "-e", "e.json"], 2, "e.json: not an ADK eval set: an empty list", kept=()),
    Bad("evalset-cases-not-list", {"e.json": '{"eval_set_id": "s", "eval_cases": 5}'},
        ["run", "helm.json", "-e", "e.json"], 2, "e.json: not an ADK eval set: 'eval_cases' must be a list, got 5", kept=()),
    Bad("evalset-dev-zero", {}, ["run", "helm.json", "-e", "/dev/zero"], 2, "/dev/zero: not JSON", kept=()),
    Bad("evalset-fifo", {"pipe": fifo}, ["run", "helm.json", "-e", "pipe"], 2, "pipe: no end of input after 0.5s",
        kept=(), env={"AGENTEVALS_INPUT_TIMEOUT": "0.5"}),
    # -- configs (-c): usage errors naming file:line:col ------------------------------------------------
    config_case("config-empty", "", "c.yaml: no evaluators configured (the file is empty or 'evaluators' is an empty list)"),
    config_case("config-evaluators-empty", "evaluators: []\n", "c.yaml: no evaluators configured"),
    config_case("config-comment-only", "# nothing\n", "c.yaml: no evaluators configured"),
    config_case("config-list", "- a\n- b\n", "c.yaml: the config must be a mapping with an 'evaluators' list, got a list"),
    config_case("config-scalar", "hello\n", "c.yaml: the config must be a mapping with an 'evaluators' list"),
    config_case("config-bad-yaml", "evaluators: [\n", "c.yaml:2:1: invalid YAML"),
    config_case("config-tab", "evaluators:\n\t- name: x\n", "c.yaml:2:1: invalid YAML"),
    config_case("config-duplicate-key", "evaluators: []\nevaluators: []\n", "duplicate key 'evaluators'"),
    config_case("config-unknown-top-key", "evaluator: []\n", "c.yaml:1:1: unknown key 'evaluator' in the config (did you mean 'evaluators'?)"),
    config_case("config-evaluators-not-list", "evaluators: 5\n", "c.yaml:1:1: 'evaluators' must be a list"),
    config_case("config-entry-scalar", "evaluators: [5]\n", "c.yaml:1:14: evaluators[0] must be a mapping with 'name' and 'type'"),
    config_case("config-no-type", "evaluators:\n  - name: x\n", "c.yaml:2:5: evaluator 'x' has no 'type'"),
    config_case("config-unknown-type", "evaluators:\n  - name: x\n    type: regexp\n", "unknown evaluator type 'regexp'"),
    config_case("config-typo-key", "evaluators:\n  - name: x\n    type: builtin\n    treshold: 0.5\n",
                "c.yaml:4:5: unknown key 'treshold' in evaluator 'x' (did you mean 'threshold'?)"),
    config_case("config-threshold-high", "evaluators:\n  - name: tool_call_count_v1\n    type: builtin\n    threshold: 2\n",
                "threshold: Input should be less than or equal to 1"),
    config_case("config-threshold-text", "evaluators:\n  - {name: tool_call_count_v1, type: builtin, threshold: high}\n",
                "threshold: Input should be a valid number"),
    config_case("config-weight-negative", "evaluators:\n  - {name: tool_call_count_v1, type: builtin, weight: -1}\n",
                "weight: Input should be greater than or equal to 0"),
    config_case("config-weight-inf", "evaluators:\n  - {name: tool_call_count_v1, type: builtin, weight: .inf}\n",
                "weight: Input should be a finite number"),
    config_case("config-required-high", "evaluators:\n  - {name: tool_call_count_v1, type: builtin, required: 1.5}\n",
                "required must be true or a number in (0, 1], got 1.5"),
    config_case("config-timeout-inf-builtin", "evaluators:\n  - {name: tool_call_count_v1, type: builtin, timeout: .inf}\n",
                "timeout: Input should be a finite number"),
    config_case("config-timeout-inf-code", "evaluators:\n  - {name: x, type: code, path: ev.py, timeout: .inf}\n",
                "timeout: Input should be a finite number"),
    config_case("config-timeout-inf-python", "evaluators:\n  - {name: x, type: python, path: 'ev.py:E', timeout: .inf}\n",
                "timeout: Input should be a finite number"),
    config_case("config-timeout-inf-code-judge", "evaluators:\n  - {name: x, type: code_judge, command: [python, j.py], timeout: .inf}\n",
                "timeout: Input should be a finite number"),
    config_case("config-timeout-inf-regex", "evaluators:\n  - {name: x, type: regex, value: a, timeout: .inf}\n",
                "timeout: Input should be a finite number"),
    config_case("config-timeout-zero", "evaluators:\n  - {name: x, type: contains, value: a, timeout: 0}\n",
                "timeout: Input should be greater than 0"),
    config_case("config-timeout-nan", "evaluators:\n  - {name: x, type: equals, value: a, timeout: .nan}\n",
                "timeout: Input should be"),
    config_case("config-env-string", "evaluators:\n  - {name: x, type: code, path: ev.py, env: everything}\n",
                "env must be 'inherit' or a list of variable names, got 'everything'"),
    config_case("config-env-bad-name", "evaluators:\n  - {name: x, type: code, path: ev.py, env: ['A B']}\n",
                "env lists names of environment variables; not a name: 'A B'"),
    config_case("config-env-number", "evaluators:\n  - {name: x, type: code, path: ev.py, env: 5}\n",
                "env must be 'inherit' or a list of variable names, got int"),
    config_case("config-yaml-bomb", "evaluators:\n  - name: x\n    type: code\n    path: ev.py\n    config:\n"
                + "".join("      " + line + "\n" for line in BOMB.splitlines()),
                "invalid YAML: the document expands to more than 100000 nodes (aliases included); set AGENTEVALS_MAX_YAML_NODES"),
    config_case("config-recursive-alias", "evaluators: &e\n  - *e\n", "an alias refers to a node that contains it"),
    config_case("config-deep-yaml", "evaluators: " + "[" * 20_000 + "]" * 20_000 + "\n",
                "c.yaml: invalid YAML: the document is nested too deeply to read"),
    config_case("config-path-directory", "evaluators:\n  - {name: x, type: code, path: sub}\n",
                "is a directory, expected an evaluator file"),
    config_case("config-path-missing", "evaluators:\n  - {name: x, type: code, path: nope.py}\n", "file not found:"),
    Bad("config-python-no-class", {"ev.py": "X = 1\n", "c.yaml": "evaluators:\n  - {name: x, type: python, path: 'ev.py:Nope'}\n"},
        ["run", "helm.json", "-c", "c.yaml"], 2, "'Nope' is not a class in ev.py", kept=()),
    config_case("config-regex-invalid", "evaluators:\n  - {name: x, type: regex, value: '(a'}\n", "invalid regex '(a'"),
    config_case("config-regex-flag", "evaluators:\n  - {name: x, type: regex, value: a, flags: q}\n", "unknown regex flag(s) 'q'"),
    config_case("config-duplicate-names", "evaluators:\n  - {name: tool_call_count_v1, type: builtin}\n"
                "  - {name: tool_call_count_v1, type: builtin}\n", "duplicate evaluator name 'tool_call_count_v1'"),
    config_case("config-pass-at-k-zero", "pass_at_k: [0]\nevaluators:\n  - {name: tool_call_count_v1, type: builtin}\n",
                "pass_at_k[0]: Input should be greater than or equal to 1"),
    config_case("config-not-utf8", "evaluators: [caf\xe9]\n".encode("latin-1"), "c.yaml: cannot read config"),
    Bad("config-missing", {}, ["run", "helm.json", "-c", "nope.yaml"], 2, "nope.yaml: config file not found", kept=()),
    Bad("config-dev-zero", {}, ["run", "helm.json", "-c", "/dev/zero"], 2,
        "Error: /dev/zero: binary data (NUL bytes), expected text", kept=()),
    Bad("config-fifo", {"pipe": fifo}, ["run", "helm.json", "-c", "pipe"], 2, "pipe: no end of input after 0.5s",
        kept=(), env={"AGENTEVALS_INPUT_TIMEOUT": "0.5"}),
    # -- EVAL.yaml (transpile): one line, exit 2 -----------------------------------------------------------
    Bad("eval-yaml-nul", {"EVAL.yaml": b"\x00"}, ["transpile", "EVAL.yaml", "--stdout"], 1,
        "EVAL.yaml: invalid YAML: unacceptable character #x0000: special characters are not allowed", kept=()),
    Bad("eval-yaml-bomb", {"EVAL.yaml": "tests:\n  - id: t\n    input: hi\n    vars:\n"
                           + "".join("      " + line + "\n" for line in BOMB.splitlines())},
        ["transpile", "EVAL.yaml", "--stdout"], 1, "invalid YAML: the document expands to more than 100000 nodes",
        kept=()),
    Bad("eval-yaml-deep", {"EVAL.yaml": "tests: " + "[" * 20_000 + "]" * 20_000 + "\n"},
        ["transpile", "EVAL.yaml", "--stdout"], 1, "EVAL.yaml: invalid YAML: the document is nested too deeply to read",
        kept=()),
    Bad("eval-yaml-missing", {}, ["transpile", "EVAL.yaml", "--stdout"], 1, "Error: EVAL.yaml: no such file", kept=()),
    Bad("eval-yaml-dev-zero", {}, ["transpile", "/dev/zero", "--stdout"], 1,
        "Error: /dev/zero: binary data (NUL bytes), expected text", kept=()),
    # -- evaluator outputs: that evaluator's ERROR row; the other row is still there ---------------------
    code_case("code-no-output", "pass", "bad wrote nothing on stdout (expected one EvalResult JSON object)"),
    code_case("code-not-json", "print('hello')", "bad wrote invalid JSON on stdout"),
    code_case("code-score-text", "print(json.dumps({'score': 'abc'}))",
              "bad returned an invalid EvalResult: score: Input should be a valid number (got 'abc')"),
    code_case("code-score-nan", "print('{\"score\": NaN}')", "bad returned an invalid EvalResult: score must be finite (got nan)"),
    code_case("code-score-high", "print(json.dumps({'score': 2}))",
              "bad returned an invalid EvalResult: score: Input should be less than or equal to 1 (got 2)"),
    code_case("code-json-list", "print('[1, 2]')", "bad wrote a JSON list, expected an EvalResult object"),
    code_case("code-two-results", "print(json.dumps({'score': 1}))\nprint(json.dumps({'score': 0}))",
              "bad wrote more than one result on stdout"),
    code_case("code-exit-3", "sys.stderr.write('went wrong\\n'); sys.exit(3)", "exited with code 3: went wrong"),
    code_case("code-killed", "os.kill(os.getpid(), 9)", "was killed by signal 9"),
    code_case("code-timeout", "time.sleep(60)", "timed out after 1s while running ev.py", timeout=1),
    code_case("code-stdout-flood-no-result", "sys.stdout.write('x' * (3 * 2**20))",
              "stdout was 3145728 bytes, only its last 1048576 were kept"),
    Bad("code-env-secret-missing", {"ev.py": script("print(json.dumps({'score': 1, 'details': {'seen': "
                                                    "os.environ.get('AGENTEVALS_TEST_SECRET_TOKEN')}}))"),
                                    "c.yaml": with_config(type="code", path="ev.py")},
        ["run", "helm.json", "-c", "c.yaml", "-o", "json"], 0, '"seen": null'),
    python_case("python-sys-exit", "import sys\nsys.exit(3)", "python evaluator 'bad' called sys.exit(3)"),
    python_case("python-keyboard-interrupt", "raise KeyboardInterrupt", "python evaluator 'bad' raised KeyboardInterrupt"),
    python_case("python-infinite-loop", "while True:\n    pass", "python evaluator 'bad' timed out after 1s", timeout=1),
    python_case("python-not-dict", "return 5", "E.__call__ returned int, expected a dict of metrics"),
    python_case("python-score-high", "return {'score': 7}", "metric 'score' must be a number in [0, 1]"),
    python_case("python-raises", "raise ValueError('boom')", "ValueError: boom"),
    Bad("regex-catastrophic", {"c.yaml": with_config(type="regex", value=r"^([\s\S]|[\s\S][\s\S])*T$", timeout=1)},
        ["run", "helm.json", "-c", "c.yaml"], 1, r"error: regex /^([\s\S]|[\s\S][\s\S])*T$/ timed out after 1s"),
]
# The flood cases need the cap small (the default is 16 MiB).
for _case in CORPUS:
    if _case.id.startswith("code-stdout-flood"):
        _case.env["AGENTEVALS_MAX_OUTPUT_BYTES"] = str(2**20)
    if _case.id == "code-env-secret-missing":
        _case.env["AGENTEVALS_TEST_SECRET_TOKEN"] = "hunter2-very-secret"


def test_the_corpus_is_large_and_unique():
    assert len(CORPUS) >= 80
    assert len({case.id for case in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize("case", CORPUS, ids=[case.id for case in CORPUS])
def test_bad_input(case: Bad, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(HELM, tmp_path / "helm.json")
    (tmp_path / "sub").mkdir()
    for name, content in case.files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if callable(content):
            content(path)
        else:
            path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    monkeypatch.chdir(tmp_path)
    for key, value in case.env.items():
        monkeypatch.setenv(key, value)
    result = CliRunner().invoke(cli, case.args)
    output = result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), output
    assert "Traceback" not in output
    assert any(case.message in line for line in output.splitlines()), output
    assert result.exit_code == case.exit, output
    for text in case.kept:
        assert text in output, output
