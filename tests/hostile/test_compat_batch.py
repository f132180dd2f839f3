"""Hostile inputs for the 0.11 / AgentV compatibility of the batch side: ``tests:`` folders of EVAL.yaml
(``transpile``), 0.11's judge keys, ``agentv_rules`` and AgentV 5's ``assert-set`` in eval_config.yaml.

Each case runs the real CLI in a fresh directory and must end with one line naming the file (and line), the
expected exit code, no traceback and no hang (a FIFO named ``case.yaml`` is not read).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Union

import pytest
from agentevals.cli._main import cli
from click.testing import CliRunner

HELM = Path(__file__).resolve().parents[2] / "examples" / "traces" / "helm.json"
BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(8))
File = Union[str, bytes, Callable[[Path], None]]


@dataclass
class Case:
    id: str
    files: dict[str, File]
    args: list[str]
    exit: int
    message: str


def folder_suite(id: str, files: dict[str, File], exit: int, message: str) -> Case:
    return Case(id, {"EVAL.yaml": "tests: ./cases/\n", **files}, ["transpile", "EVAL.yaml", "--stdout"], exit, message)


def config(id: str, text: str, exit: int, message: str) -> Case:
    return Case(id, {"c.yaml": text}, ["run", "helm.json", "-c", "c.yaml"], exit, message)


def symlink_loop(path: Path) -> None:
    os.symlink(path.name, path)


CASES = [
    folder_suite("tests-folder-alias-bomb", {"cases/one/case.yaml": BOMB}, 1,
                 "cases/one/case.yaml:5:4: invalid YAML: the document expands to more than 100000 nodes"),
    folder_suite("tests-folder-case-not-utf8", {"cases/one/case.yaml": b"\xff\xfe\x00bad"}, 1,
                 "cases/one/case.yaml: not UTF-8 text"),
    folder_suite("tests-folder-case-is-a-list", {"cases/one/case.yaml": "- input: x\n"}, 1,
                 "cases/one/case.yaml:1:1: a case file must hold a mapping (one test), got a list"),
    folder_suite("tests-folder-case-is-a-fifo", {"cases/one/case.yaml": lambda p: os.mkfifo(p)}, 1,
                 "EVAL.yaml: no tests found, nothing to write"),
    folder_suite("tests-folder-case-is-a-folder", {"cases/one/case.yaml/x": "input: x\n"}, 1,
                 "EVAL.yaml: no tests found, nothing to write"),
    folder_suite("tests-folder-empty", {"cases/.keep": ""}, 1, "EVAL.yaml: no tests found, nothing to write"),
    folder_suite("tests-folder-symlink-loop", {"cases": symlink_loop}, 1,
                 "EVAL.yaml:1:8: tests file or folder './cases/' not found"),
    folder_suite("tests-folder-only-files", {"cases/a.yaml": "- id: a\n  input: x\n  criteria: c\n"}, 1,
                 "EVAL.yaml: no tests found, nothing to write"),
    config("credential-ref-not-a-string",
           "evaluators: [{name: tool_trajectory_avg_score, type: builtin, credential_ref: [a]}]\n", 2,
           "c.yaml:1:63: evaluator 'tool_trajectory_avg_score': credential_ref: Input should be a valid string"),
    config("judge-base-url-alone-is-read", "evaluators: [{name: tool_call_count_v1, type: builtin, "
           "judge_base_url: 'http://127.0.0.1:9'}]\n", 0, "'judge_base_url' not read"),
    config("agentv-rules-unknown", "agentv_rules: newest\nevaluators: [{type: contains, value: x}]\n", 2,
           "the config: agentv_rules: Input should be 'auto', '2.19' or 'current' (got 'newest')"),
    config("assert-set-empty", "evaluators: [{type: assert-set, metric: s, assert: []}]\n", 2,
           "c.yaml:1:44: evaluators[0]: assert: List should have at least 1 item"),
    config("assert-set-member-not-a-mapping", "evaluators: [{type: assert-set, metric: s, assert: [5]}]\n", 2,
           "evaluators[0]: assert[0]: Input should be a valid dictionary (got 5)"),
    config("assert-set-threshold-out-of-range",
           "evaluators: [{type: assert-set, metric: s, threshold: 2, assert: [{type: contains, value: x}]}]\n", 2,
           "evaluators[0]: threshold: Input should be less than or equal to 1 (got 2)"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_compat_batch_input(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(HELM, tmp_path / "helm.json")
    for name, content in case.files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if callable(content):
            content(path)
        else:
            path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, case.args)
    output = result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), output
    assert "Traceback" not in output
    assert any(case.message in line for line in output.splitlines()), output
    assert result.exit_code == case.exit, output
