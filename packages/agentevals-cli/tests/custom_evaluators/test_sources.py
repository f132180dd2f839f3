"""``type: remote`` and sources: GitHub over a loopback server (cache, sha256 pins, offline, a server
that never answers), local directories and git repositories, the seed's custom registry, listing."""

from __future__ import annotations

import asyncio
import hashlib
import socket
from pathlib import Path

import pytest
from agentevals.cli import cli
from agentevals.errors import ConfigError
from agentevals.evaluator.sources import EvaluatorInfo, EvaluatorSource, register_source
from agentevals.evaluators.code import CodeEvaluator
from agentevals.evaluators.remote import RemoteEvaluator
from agentevals.execution.cache import cache_root
from agentevals.results import Status
from click.testing import CliRunner
from custom_eval_helpers import evaluate, git, write

EVALUATOR = 'import json, sys\nd = json.load(sys.stdin)\nprint(json.dumps({"score": 0.8, "details": {"v": 1}}))\n'
TAMPERED = 'print(\'{"score": 1.0, "details": {"v": "evil"}}\')\n'
REF = "evaluators/rq/rq.py"
INDEX = """\
evaluators:
  - name: rq
    description: Scores response quality
    language: python
    path: evaluators/rq/rq.py
    tags: [quality]
    author: someone
    lastUpdated: "2025-01-31"
  - name: tool_check
    description: Checks tool use
    language: javascript
    path: evaluators/tool_check/tool_check.js
"""
SHA = hashlib.sha256(EVALUATOR.encode()).hexdigest()


def remote(tmp_path: Path, **fields) -> RemoteEvaluator:
    entry = {"name": "rq", "type": "remote", "ref": REF, "timeout": 5, **fields}
    evaluator = RemoteEvaluator(RemoteEvaluator.Config.model_validate(entry), base_dir=tmp_path)
    evaluator.check()
    return evaluator


def serve(server, branch: str = "main", body: str = EVALUATOR) -> None:
    server.add(f"/team/evals/{branch}/{REF}", body)
    server.add(f"/team/evals/{branch}/index.yaml", INDEX)


# -- github -------------------------------------------------------------------------------------------------


def test_github_fetches_caches_and_runs(tmp_path, ctx, raw_server):
    serve(raw_server)
    raw_server.add("/team/evals/main/evaluators/rq/evaluator.yaml", "name: rq\nprotocol_version: '1.0'\n")
    result = evaluate(remote(tmp_path), ctx)
    assert (result.status, result.score, result.type, result.details) == (Status.PASSED, 0.8, "remote", {"v": 1})
    cached = list((cache_root() / "evaluators" / "github").glob(f"*/{REF}"))
    assert len(cached) == 1 and cached[0].read_text() == EVALUATOR
    assert (cached[0].parent / "evaluator.yaml").is_file()  # siblings come along
    fetched = len(raw_server.requests)

    result = evaluate(remote(tmp_path), ctx)  # a new run: the cache answers, the server is not asked
    assert result.status == Status.PASSED and len(raw_server.requests) == fetched


def test_github_branch_and_revision(tmp_path, ctx, raw_server, monkeypatch):
    serve(raw_server, "v2", body=EVALUATOR.replace("0.8", "0.6"))
    monkeypatch.setenv("AGENTEVALS_EVALUATOR_BRANCH", "v2")
    assert evaluate(remote(tmp_path), ctx).score == 0.6
    serve(raw_server, "abc123", body=EVALUATOR.replace("0.8", "0.7"))
    assert evaluate(remote(tmp_path, revision="abc123"), ctx).score == 0.7


def test_sha256_pin_accepts_the_right_file(tmp_path, ctx, raw_server):
    serve(raw_server)
    assert evaluate(remote(tmp_path, sha256=f"sha256:{SHA.upper()}"), ctx).status == Status.PASSED


def test_tampered_file_is_refused_before_it_runs(tmp_path, ctx, raw_server):
    serve(raw_server, body=TAMPERED)
    result = evaluate(remote(tmp_path, sha256=SHA), ctx)
    actual = hashlib.sha256(TAMPERED.encode()).hexdigest()
    assert (result.status, result.error) == (
        Status.ERROR,
        f"sha256 mismatch for github:{REF}: expected {SHA}, got {actual}; the file was not run "
        "(update the pin if the change is intended)",
    )
    assert not list((cache_root() / "evaluators").rglob("rq.py"))  # nothing tampered is cached


def test_tampered_cache_is_downloaded_again(tmp_path, ctx, raw_server):
    serve(raw_server)
    assert evaluate(remote(tmp_path, sha256=SHA), ctx).status == Status.PASSED
    (cached,) = (cache_root() / "evaluators").rglob("rq.py")
    cached.write_text(TAMPERED)
    result = evaluate(remote(tmp_path, sha256=SHA), ctx)
    assert (result.status, result.details) == (Status.PASSED, {"v": 1})
    assert cached.read_text() == EVALUATOR


def test_offline_uses_the_cached_pinned_copy(tmp_path, ctx, raw_server):
    serve(raw_server)
    assert evaluate(remote(tmp_path, sha256=SHA), ctx).status == Status.PASSED
    raw_server.close()  # the network is down
    assert evaluate(remote(tmp_path, sha256=SHA), ctx).status == Status.PASSED
    assert evaluate(remote(tmp_path, ref="evaluators/other/other.py"), ctx).error.startswith("cannot reach 127.0.0.1:")


def test_offline_without_a_cached_copy_is_an_error_row(tmp_path, ctx, closed_port, monkeypatch):
    monkeypatch.setenv("AGENTEVALS_GITHUB_RAW_URL", closed_port)
    result = evaluate(remote(tmp_path), ctx)
    assert result.status == Status.ERROR
    assert result.error == f"cannot reach {closed_port.removeprefix('http://')}: [Errno 111] Connection refused"


def _connections(listener: socket.socket) -> int:
    """How many connections reached ``listener`` since the last call (accepted and closed)."""
    listener.setblocking(False)
    count = 0
    while True:
        try:
            conn, _ = listener.accept()
        except BlockingIOError:
            return count
        conn.close()
        count += 1


def test_server_that_never_answers_errors_within_the_deadline(tmp_path, ctx, monkeypatch):
    write(tmp_path / "good.py", 'print(\'{"score": 1}\')\n')
    with socket.socket() as silent:  # listens, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        monkeypatch.setenv("AGENTEVALS_GITHUB_RAW_URL", f"http://127.0.0.1:{silent.getsockname()[1]}")
        hung = remote(tmp_path, timeout=1)
        good = CodeEvaluator(CodeEvaluator.Config(name="good", type="code", path="good.py"), base_dir=tmp_path)

        async def both():
            return await asyncio.gather(hung.evaluate(ctx), good.evaluate(ctx))

        results = asyncio.run(both())  # the hung fetch ends only at its deadline
        assert [(r.name, r.status, r.error) for r in results] == [
            ("rq", Status.ERROR, f"timed out after 1s while fetching {REF} from source 'github'"),
            ("good", Status.PASSED, None),
        ]
        assert _connections(silent) >= 1
        assert evaluate(hung, ctx).error == results[0].error
        assert _connections(silent) == 0  # the next case does not ask (and wait for) the same dead server again


def test_missing_ref_is_a_404_error(tmp_path, ctx, raw_server):
    serve(raw_server)
    result = evaluate(remote(tmp_path, ref="evaluators/nope/nope.py"), ctx)
    assert result.error == "evaluators/nope/nope.py not found in team/evals@main (HTTP 404)"


def test_downloaded_requirements_cannot_redirect_the_installer(tmp_path, ctx, raw_server):
    serve(raw_server)
    raw_server.add("/team/evals/main/evaluators/rq/requirements.txt", "--index-url http://evil.invalid/simple\nsix\n")
    result = evaluate(remote(tmp_path), ctx)
    assert result.error == ("downloaded requirements.txt line 1: installer options are not allowed "
                            "('--index-url http://evil.invalid/simple')")


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"ref": "../etc/passwd.py"}, "ref must be a relative path of letters, digits, '_', '-' and single dots "
                                      "(got '../etc/passwd.py')"),
        ({"ref": "/abs/x.py"}, "ref must be a relative path of letters, digits, '_', '-' and single dots (got '/abs/x.py')"),
        ({"ref": "x.rb"}, "ref 'x.rb' has extension '.rb'; supported: .cjs, .js, .mjs, .py, .ts"),
        ({"source": "gihub"}, "unknown evaluator source 'gihub' (did you mean 'github'?); known: builtin, github, local"),
        ({"source": "builtin"}, "source 'builtin' cannot be fetched; use 'type: builtin' for builtin metrics"),
        ({"path": "."}, "source 'github' does not take 'path' (set AGENTEVALS_EVALUATOR_REPO)"),
        ({"source": "local", "path": "nowhere"}, "path 'nowhere' is not a directory"),
        ({"source": "local"}, "no local evaluator registry: set AGENTEVALS_EVALUATOR_PATH or give 'path:' in the entry"),
    ],
)
def test_bad_remote_entries_are_refused_at_load(tmp_path, fields, error):
    with pytest.raises(ConfigError) as info:
        remote(tmp_path, **fields)
    assert str(info.value).startswith(error)


def test_sha256_must_be_a_digest(tmp_path):
    with pytest.raises(ValueError, match="sha256 must be 64 hex digits"):
        remote(tmp_path, sha256="abc")


# -- local registries: a directory, a git repository ---------------------------------------------------------


def make_registry(root: Path, score: str = "0.8") -> Path:
    write(root / "index.yaml", INDEX)
    write(root / REF, EVALUATOR.replace("0.8", score))
    return root


def test_local_directory_from_the_environment(tmp_path, ctx, monkeypatch):
    registry = make_registry(tmp_path / "registry")
    monkeypatch.setenv("AGENTEVALS_EVALUATOR_PATH", str(registry))
    assert evaluate(remote(tmp_path, source="local"), ctx).score == 0.8
    write(registry / REF, EVALUATOR.replace("0.8", "0.3"))  # edits show up on the next run
    assert evaluate(remote(tmp_path, source="local"), ctx).score == 0.3


def test_local_path_is_relative_to_the_config(tmp_path, ctx, monkeypatch):
    make_registry(tmp_path / "team" / "registry")
    monkeypatch.chdir(tmp_path.parent)
    assert evaluate(remote(tmp_path, source="local", path="team/registry"), ctx).score == 0.8


def test_local_git_repository_at_a_revision(tmp_path, ctx):
    repo = make_registry(tmp_path / "repo", score="0.9")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "v1")
    git(repo, "tag", "v1")
    write(repo / REF, EVALUATOR.replace("0.8", "0.2"))  # uncommitted edit
    git(repo, "commit", "-q", "-am", "v2")
    write(repo / REF, EVALUATOR.replace("0.8", "0.1"))  # work in progress
    assert evaluate(remote(tmp_path, source="local", path="repo"), ctx).score == 0.1
    assert evaluate(remote(tmp_path, source="local", path="repo", revision="HEAD"), ctx).score == 0.2
    assert evaluate(remote(tmp_path, source="local", path="repo", revision="v1"), ctx).score == 0.9
    result = evaluate(remote(tmp_path, source="local", path="repo", revision="nope"), ctx)
    assert result.error == f"revision 'nope' not found in {repo}"
    missing = evaluate(remote(tmp_path, source="local", path="repo", revision="v1", ref="evaluators/x/x.py"), ctx)
    assert missing.error == f"evaluators/x/x.py not found in {repo}@v1"

    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    assert evaluate(remote(tmp_path, source="local", path="bare.git"), ctx).score == 0.2  # HEAD of a bare repo


def test_local_source_lists_its_index(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTEVALS_EVALUATOR_PATH", str(make_registry(tmp_path / "registry")))
    out = CliRunner().invoke(cli, ["evaluator", "list", "--source", "local"])
    assert out.exit_code == 0, out.output
    assert out.output.splitlines() == [
        "SOURCE  NAME        REF                                  DESCRIPTION",
        "local   rq          evaluators/rq/rq.py                  Scores response quality [python]",
        "local   tool_check  evaluators/tool_check/tool_check.js  Checks tool use [javascript]",
        "2 evaluator(s) from 1 source(s)",
    ]


# -- the seed's custom registry ---------------------------------------------------------------------------


# Exactly as documented in the seed.
class MyRegistrySource(EvaluatorSource):
    @property
    def source_name(self) -> str:
        return "my-registry"

    async def list_evaluators(self) -> list[EvaluatorInfo]: ...
    async def fetch_evaluator(self, ref: str, dest: Path) -> Path: ...


class WorkingRegistry(EvaluatorSource):
    @property
    def source_name(self) -> str:
        return "team-api"

    async def list_evaluators(self) -> list[EvaluatorInfo]:
        return [EvaluatorInfo(name="x", description="from the API", source="team-api", ref="some/ref/path.py")]

    async def fetch_evaluator(self, ref: str, dest: Path) -> Path:
        dest.write_text('print(\'{"score": 0.55}\')\n')
        return dest


def test_seed_custom_registry_registers_and_is_used(tmp_path, ctx):
    register_source(MyRegistrySource())
    evaluator = remote(tmp_path, name="my_evaluator", source="my-registry", ref="some/ref/path.py")
    result = evaluate(evaluator, ctx)  # the seed's fetch_evaluator is `...`: it writes nothing
    assert result.error == "source 'my-registry' did not write some/ref/path.py where it was asked to"
    with pytest.raises(ConfigError, match=r"^source 'my-registry' does not take 'revision'$"):
        remote(tmp_path, source="my-registry", ref="some/ref/path.py", revision="v1")


def test_custom_registry_fetch_and_list(tmp_path, ctx):
    register_source(WorkingRegistry())
    result = evaluate(remote(tmp_path, source="team-api", ref="some/ref/path.py"), ctx)
    assert (result.status, result.score) == (Status.PASSED, 0.55)
    register_source(MyRegistrySource())
    out = CliRunner().invoke(cli, ["evaluator", "list", "-s", "team-api", "-s", "my-registry"])
    assert out.exit_code == 0
    assert out.stdout.splitlines() == [
        "SOURCE    NAME  REF               DESCRIPTION",
        "team-api  x     some/ref/path.py  from the API",
        "1 evaluator(s) from 1 source(s); 1 unavailable",
    ]
    assert out.stderr == ("warning: source 'my-registry' unavailable: list_evaluators() returned NoneType, "
                          "expected a list of EvaluatorInfo\n")


# -- listing ----------------------------------------------------------------------------------------------


def test_list_github_from_the_index(raw_server):
    serve(raw_server)
    out = CliRunner().invoke(cli, ["evaluator", "list", "--source", "github"])
    assert out.exit_code == 0, out.output
    assert out.output.splitlines()[1] == "github  rq          evaluators/rq/rq.py                  Scores response quality [python]"


def test_list_reports_an_unreachable_source_in_one_line(silent_server, monkeypatch):
    monkeypatch.setenv("AGENTEVALS_GITHUB_RAW_URL", silent_server)
    out = CliRunner().invoke(cli, ["evaluator", "list", "--timeout", "0.5"])
    assert out.exit_code == 0  # builtin still answered
    assert out.stderr == "warning: source 'github' unavailable: timed out after 0.5s while listing source 'github'\n"
    assert "builtin  tool_trajectory_avg_score" in out.stdout
    assert "local" not in out.output  # not configured: skipped quietly

    out = CliRunner().invoke(cli, ["evaluator", "list", "-s", "github", "--timeout", "0.5"])
    assert out.exit_code == 1
    assert out.stdout == "0 evaluator(s) from 0 source(s); 1 unavailable\n"


def test_list_unknown_source_is_a_usage_error():
    from agentevals.cli import main

    with pytest.raises(SystemExit) as info:
        main(["evaluator", "list", "-s", "gitlab"])
    assert info.value.code == 2


def test_list_source_all_is_every_source(raw_server):
    serve(raw_server)
    every = CliRunner().invoke(cli, ["evaluator", "list"])
    assert every.exit_code == 0, every.output
    assert CliRunner().invoke(cli, ["evaluator", "list", "--source", "all"]).output == every.output
    assert "builtin  tool_trajectory_avg_score" in every.output and "github   rq" in every.output


def test_list_is_served_from_the_cache_until_refreshed(raw_server):
    serve(raw_server)
    first = CliRunner().invoke(cli, ["evaluator", "list", "-s", "github"])
    assert first.exit_code == 0, first.output
    raw_server.add("/team/evals/main/index.yaml", INDEX.replace("Scores response quality", "Scores answers"))
    asked = len(raw_server.requests)
    again = CliRunner().invoke(cli, ["evaluator", "list", "-s", "github"])
    assert (again.output, len(raw_server.requests)) == (first.output, asked)  # no request: the cached list
    fresh = CliRunner().invoke(cli, ["evaluator", "list", "-s", "github", "--refresh"])
    assert fresh.exit_code == 0 and len(raw_server.requests) == asked + 1
    assert "rq          evaluators/rq/rq.py                  Scores answers [python]" in fresh.output


def test_list_offline_prints_the_cached_list_and_one_warning(raw_server):
    serve(raw_server)
    assert CliRunner().invoke(cli, ["evaluator", "list", "-s", "github"]).exit_code == 0
    raw_server.close()  # the network is down now
    out = CliRunner().invoke(cli, ["evaluator", "list", "-s", "github", "--refresh", "--timeout", "2"])
    assert out.exit_code == 0
    assert out.stdout.splitlines()[1:] == [
        "github  rq          evaluators/rq/rq.py                  Scores response quality [python]",
        "github  tool_check  evaluators/tool_check/tool_check.js  Checks tool use [javascript]",
        "2 evaluator(s) from 1 source(s)",
    ]
    (warning,) = out.stderr.splitlines()
    assert warning.startswith("warning: source 'github' unavailable: cannot reach 127.0.0.1:")
    assert warning.endswith("; showing its list cached 0m ago")


# -- evaluator config -------------------------------------------------------------------------------------


def config_snippet(*args: str):
    return CliRunner().invoke(cli, ["evaluator", "config", *args])


def test_config_for_a_builtin_metric():
    out = config_snippet("tool_trajectory_avg_score")
    assert out.exit_code == 0, out.output
    assert out.output == (
        "# Add to eval_config.yaml under 'evaluators:' (needs an eval set: -e/--eval-set)\n"
        "evaluators:\n"
        "  - name: tool_trajectory_avg_score\n"
        "    type: builtin\n"
        "    threshold: 0.5\n"
    )
    assert "threshold: 0.8\n" in config_snippet("tool_trajectory_avg_score", "-t", "0.8").output


def test_config_for_a_registry_evaluator(raw_server):
    serve(raw_server)
    out = config_snippet("rq", "--threshold", "0.7")
    assert out.exit_code == 0, out.output
    assert out.output == (
        "# Add to eval_config.yaml under 'evaluators:'\n"
        "evaluators:\n"
        "  - name: rq\n"
        "    type: remote\n"
        "    source: github\n"
        "    ref: evaluators/rq/rq.py\n"
        "    threshold: 0.7\n"
    )


def test_config_for_a_local_file(tmp_path):
    out = config_snippet("mine", "-p", "./evaluators/mine.js")
    assert out.exit_code == 0, out.output
    assert out.output == (
        "# Add to eval_config.yaml under 'evaluators:' (path: relative to eval_config.yaml)\n"
        "evaluators:\n"
        "  - name: mine\n"
        "    type: code\n"
        "    path: ./evaluators/mine.js\n"
        "    threshold: 0.5\n"
    )


def test_config_for_an_unknown_name_offline_suggests_a_code_entry(closed_port, monkeypatch):
    monkeypatch.setenv("AGENTEVALS_GITHUB_RAW_URL", closed_port)
    out = config_snippet("my_evaluator", "--timeout", "2")
    assert out.exit_code == 0, out.output
    assert out.stdout == (
        "# Add to eval_config.yaml under 'evaluators:' (path: relative to eval_config.yaml)\n"
        "evaluators:\n"
        "  - name: my_evaluator\n"
        "    type: code\n"
        "    path: ./my_evaluator/my_evaluator.py\n"
        "    threshold: 0.5\n"
    )
    assert out.stderr.startswith("warning: source 'github' unavailable: cannot reach")
    bad = config_snippet("x", "-t", "2")
    assert bad.exit_code == 2
