"""``agentevals evalset``: real runs of the shipped samples into a temp store, sets built from them, run again."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from agentevals.cli import cli
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ → `support` is importable
from support.stored_runs import HELM_ID
from support.traces import clone_traces

REPO = Path(__file__).resolve().parents[4]
SAMPLES = [str(REPO / "examples/traces" / name) for name in ("helm.json", "k8s.json", "helm_3.json")]
SAMPLE_SET = str(REPO / "examples/evalsets/eval_set_helm.json")
METRICS = ["-m", "tool_trajectory_avg_score", "-m", "response_match_score"]


def run(*args: str, env: dict | None = None):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False, env=env)


def stored_run(tmp_path: Path, *inputs: str, eval_set: str | None = None) -> str:
    store = str(tmp_path / "runs.sqlite")
    result = run("run", *inputs, *METRICS, *(["-e", eval_set] if eval_set else []), "--store", store)
    assert result.exit_code in (0, 1), result.output
    return store


def one_error(result, text: str) -> None:
    """Exit 2 and the one line ``Error: …`` (no traceback)."""
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [f"Error: {text}"]


def test_round_trip_the_set_from_a_run_scores_the_same_traces(tmp_path):
    store = stored_run(tmp_path, *SAMPLES)  # no eval set: everything NOT_EVALUATED, cases stored
    out = tmp_path / "golden.evalset.json"
    result = run("evalset", "from-run", "latest", "-o", str(out), "--store", store)
    assert result.exit_code == 0, result.output
    run_id = json.loads(run("runs", "list", "--json", "--store", store).output)[0]["run_id"]
    assert result.output == f"wrote {out}: 3 cases from run {run_id}\n"
    assert run("evalset", "validate", str(out)).output == f"{out}: valid: 3 case(s), 3 turn(s), 2 tool call(s)\n"
    data = json.loads(out.read_text())
    assert data["eval_set_id"] == "golden" and data["description"] == (
        f"Built from run {run_id} by agentevals evalset from-run (all).")
    by_case = {c["metadata"]["provenance"]["case_id"]: c for c in data["eval_cases"]}
    assert [c["metadata"]["provenance"]["sources"] for c in data["eval_cases"]] == [[s] for s in SAMPLES]
    assert [c["metadata"]["provenance"]["trace_ids"] for c in data["eval_cases"]] == [[c] for c in by_case]
    # The same bytes when built again (sorted keys, run order, the run's own timestamp).
    again = tmp_path / "again.evalset.json"
    run("evalset", "from-run", run_id[:12], "-o", str(again), "--store", store)
    assert again.read_text().replace('"again"', '"golden"') == out.read_text()

    # The set scores the traces it came from: the same cases match (by the turns' span ids) and pass.
    report = tmp_path / "r.json"
    result = run("run", *SAMPLES, *METRICS, "-e", str(out), "--store", store, "-o", f"json={report}")
    assert result.exit_code == 0, result.output
    doc = json.loads(report.read_text())
    assert doc["totals"]["cases"]["PASSED"] == 3
    for c in doc["cases"]:
        assert by_case[c["case_id"]]["eval_id"] == c["eval_id"] and c["match_reason"] == "invocation id"
        assert {m["status"] for m in c["metrics"]} == {"PASSED"}

    # Built again from that run, the set has the same cases; only their provenance moved on.
    second = tmp_path / "second.evalset.json"
    run("evalset", "from-run", "latest", "-o", str(second), "--store", store)
    result = run("evalset", "diff", str(out), str(second), "--json")
    diff = json.loads(result.output)
    assert (diff["added"], diff["removed"], diff["unchanged"]) == ([], [], 0)
    assert {f["field"] for c in diff["changed"] for f in c["fields"]} == {
        "metadata", "creation_timestamp", "conversation[0].creation_timestamp"}


def test_failed_cases_sampling_add_merge_and_diff(tmp_path):
    store = stored_run(tmp_path, *SAMPLES, eval_set=SAMPLE_SET)  # helm passes, k8s fails, helm_3 unmatched
    failed = tmp_path / "failed.json"
    assert run("evalset", "from-run", "--cases", "failed", "-o", str(failed), "--store", store).exit_code == 0
    (only,) = json.loads(failed.read_text())["eval_cases"]
    assert only["eval_id"] == "helm_list_releases"  # the eval case it was scored against
    assert only["metadata"]["provenance"]["status"] == "FAILED"
    assert only["conversation"][0]["intermediate_data"] == {"tool_uses": []}  # what k8s did: no tool call

    # add: the passing helm case, then the same again (not twice)
    helm_id = "3e289017fe03ffd7c4145316d2eb3d0d"
    result = run("evalset", "add", str(failed), "latest", helm_id, "--store", store)
    assert result.output.startswith(f"{failed}: added 1 case(s) from run ") and "(helm_list_releases_2)" in result.output
    result = run("evalset", "add", str(failed), "latest", helm_id, "--store", store)
    assert "added 0 case(s)" in result.output and "already in the set: helm_list_releases_2" in result.output
    assert len(json.loads(failed.read_text())["eval_cases"]) == 2
    fresh = tmp_path / "new" / "fresh.evalset.json"  # a set that does not exist yet is created
    assert run("evalset", "add", str(fresh), "latest", "passed", "--store", store).exit_code == 0
    created = json.loads(fresh.read_text())
    assert created["eval_set_id"] == "fresh" and [c["eval_id"] for c in created["eval_cases"]] == ["helm_list_releases"]

    # merge with the shipped set: its helm_list_releases differs from the failed one's
    merged = tmp_path / "merged.json"
    one_error(run("evalset", "merge", SAMPLE_SET, str(failed), "-o", str(merged)),
              f"eval case 'helm_list_releases' differs between {SAMPLE_SET} and {failed}: pass --on-conflict "
              "keep-a or keep-b (see 'agentevals evalset diff')")
    result = run("evalset", "merge", SAMPLE_SET, str(failed), "-o", str(merged), "--on-conflict", "keep-a")
    assert result.output == f"wrote {merged}: 2 case(s); 1 conflict(s) kept from {SAMPLE_SET}: helm_list_releases\n"
    assert run("evalset", "validate", str(merged)).exit_code == 0

    result = run("evalset", "diff", SAMPLE_SET, str(failed), "--exit-code")
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0] == f"{SAMPLE_SET} → {failed}: 1 added, 0 removed, 1 changed, 0 unchanged"
    assert lines[1:3] == ["+ helm_list_releases_2", "~ helm_list_releases"]
    assert "    conversation[0].tool_uses: [{\"args\": {}, \"name\": \"helm_list_releases\"}] → []" in lines
    assert run("evalset", "diff", str(failed), str(failed), "--exit-code").exit_code == 0


def test_secrets_planted_in_a_trace_never_reach_the_set(tmp_path):
    planted = tmp_path / "planted.json"
    text = (REPO / "examples/traces/helm.json").read_text()
    token = "sk-live-" + "Q" * 24
    planted.write_text(text.replace("list all Helm releases", f"list all Helm releases (key {token}, "
                                                               "pass PLANTED-env-secret-42)"))
    env = {"PLANTED_SERVICE_TOKEN": "PLANTED-env-secret-42"}
    store = str(tmp_path / "runs.sqlite")
    run("run", str(planted), *METRICS, "--store", store, env=env)
    out = tmp_path / "set.json"
    assert run("evalset", "from-run", "-o", str(out), "--store", store, env=env).exit_code == 0
    written = out.read_text()
    assert token not in written and "PLANTED-env-secret-42" not in written
    user = json.loads(written)["eval_cases"][0]["conversation"][0]["user_content"]["parts"][0]["text"]
    assert user == "list all Helm releases (key ***, pass ***)"


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    store = stored_run(tmp_path, SAMPLES[0])
    out = str(tmp_path / "s.json")
    one_error(run("evalset", "from-run", "nope", "-o", out, "--store", store),
              f"no run 'nope' in the run store {store} (see 'agentevals runs list')")
    one_error(run("evalset", "from-run", "--cases", "faild", "-o", out, "--store", store),
              "--cases: no case 'faild' in the run (did you mean 'failed'?) (use failed, passed, all or case ids as "
              "'agentevals runs show' prints them)")
    one_error(run("evalset", "from-run", "--sample", "1", "--stratify-by", "tool_trajectory", "-o", out, "--store", store),
              "--stratify-by: no metric 'tool_trajectory' in the chosen cases (did you mean "
              "'tool_trajectory_avg_score'?) (metrics: response_match_score, tool_trajectory_avg_score)")
    one_error(run("evalset", "from-run", "--stratify-by", "x", "-o", out, "--store", store),
              "--stratify-by needs --sample N (how many cases to draw)")
    one_error(run("evalset", "from-run", "--cases", "passed", "-o", out, "--store", store),
              f"run {json.loads(run('runs', 'list', '--json', '--store', store).output)[0]['run_id']}: no passed case "
              "to write (1 cases in the run)")
    one_error(run("evalset", "validate", SAMPLES[0]),
              f"{SAMPLES[0]}: this is a trace file, not an eval set (pass traces as arguments)")
    broken = tmp_path / "broken.json"
    broken.write_text('{"eval_cases": [')
    assert run("evalset", "validate", str(broken)).exit_code == 2
    one_error(run("evalset", "merge", str(tmp_path / "missing.json"), SAMPLE_SET, "-o", out),
              f"{tmp_path / 'missing.json'}: no such file")
    bad = tmp_path / "bad.json"
    data = json.loads(Path(SAMPLE_SET).read_text())
    data["eval_cases"][0]["conversation"][0]["score"] = 1
    bad.write_text(json.dumps(data))
    result = run("evalset", "validate", str(bad))
    assert result.exit_code == 2
    assert result.stdout == (f"{bad}: eval_cases[0] ('helm_list_releases').conversation[0]: unknown key 'score' "
                             "(ADK refuses unknown keys in a turn)\n")
    assert result.stderr == f"Error: {bad}: 1 problem(s) (listed above)\n"
    assert not Path(out).exists()


def test_builder_over_2000_stored_cases(tmp_path):
    helm, k8s = tmp_path / "helm2000.json", tmp_path / "k8s2000.json"
    adk = Path(__file__).resolve().parents[1] / "data" / "adk"
    clone_traces(adk / "helm.json", 1500, helm)
    clone_traces(adk / "k8s.json", 500, k8s, start=10_000)
    store = str(tmp_path / "runs.sqlite")
    result = run("run", str(helm), str(k8s), "-m", "tool_trajectory_avg_score", "-e", str(adk / "eval_set_helm.json"),
                 "--group-by", "trace", "--store", store, "-q")
    assert result.exit_code == 1
    out = tmp_path / "sample.json"
    result = run("evalset", "from-run", "--sample", "100", "--stratify-by", "tool_trajectory_avg_score", "--seed", "3",
                 "-o", str(out), "--store", store)
    assert result.exit_code == 0, result.output
    assert result.output.endswith("(FAILED 25, PASSED 75)\n")
    cases = json.loads(out.read_text())["eval_cases"]
    assert len(cases) == 100 and len({c["eval_id"] for c in cases}) == 100
    assert [c["metadata"]["provenance"]["status"] for c in cases].count("FAILED") == 25
    everything = tmp_path / "all.json"
    assert run("evalset", "from-run", "-o", str(everything), "--store", store).exit_code == 0
    assert run("evalset", "validate", str(everything)).output.endswith(": valid: 2000 case(s), 2000 turn(s), "
                                                                       "1500 tool call(s)\n")


def test_a_conversation_round_trips_turn_by_turn(tmp_path):
    from support.generate import replicate

    # 3 turns in conversation "chat-a", 2 in "chat-b": two cases of several turns, each turn its own trace.
    traces = replicate(tmp_path / "chats.json", 5, session_of=lambda i: "chat-a" if i < 3 else "chat-b")
    doc = json.loads(traces.read_text())
    for i, trace in enumerate(doc["data"]):  # span ids are random in real traces: unique across the copies too
        text = json.dumps(trace)
        for span in trace["spans"]:
            text = text.replace(span["spanID"], f"{i:02x}{span['spanID'][2:]}")
        doc["data"][i] = json.loads(text)
    traces.write_text(json.dumps(doc))
    store = stored_run(tmp_path, str(traces))
    out = tmp_path / "chats.evalset.json"
    assert run("evalset", "from-run", "-o", str(out), "--store", store).exit_code == 0
    cases = json.loads(out.read_text())["eval_cases"]
    assert [(c["eval_id"], len(c["conversation"]), len(c["metadata"]["provenance"]["trace_ids"])) for c in cases] == [
        ("case_chat_a", 3, 3), ("case_chat_b", 2, 2)]
    report = tmp_path / "r.json"
    assert run("run", str(traces), *METRICS, "-e", str(out), "--store", store, "-o", f"json={report}").exit_code == 0
    doc = json.loads(report.read_text())
    assert [(c["case_id"], c["eval_id"], c["match_reason"]) for c in doc["cases"]] == [
        ("chat-a", "case_chat_a", "invocation id"), ("chat-b", "case_chat_b", "invocation id")]


def test_provenance_and_tool_responses_travel_with_the_set(tmp_path):
    store = stored_run(tmp_path, *SAMPLES)
    first = json.loads(run("runs", "list", "--json", "--store", store).output)[0]["run_id"]
    out = tmp_path / "golden.evalset.json"
    assert run("evalset", "from-run", "latest", "-o", str(out), "--store", store).exit_code == 0
    helm_id = HELM_ID
    cases = {c["metadata"]["provenance"]["case_id"]: c for c in json.loads(out.read_text())["eval_cases"]}
    # What helm_list_releases returned (a JSON object as text in the trace) is the turn's expected response.
    (response,) = cases[helm_id]["conversation"][0]["intermediate_data"]["tool_responses"]
    assert response["name"] == "helm_list_releases" and response["response"]["isError"] is False
    assert "kagent-crds" in response["response"]["content"][0]["text"]
    k8s = cases["d497c9dd55717f2c5ecb79bda3028993"]["conversation"][0]["intermediate_data"]
    assert k8s == {"tool_uses": []}  # k8s called no tool: nothing returned either
    assert run("evalset", "validate", str(out)).exit_code == 0

    # Run against the set: the same cases match and pass, each shows where its eval case came from.
    report = tmp_path / "r.json"
    result = run("run", *SAMPLES, *METRICS, "-e", str(out), "--store", store, "-o", f"json={report}")
    assert result.exit_code == 0, result.output
    assert json.loads(report.read_text())["totals"]["cases"]["PASSED"] == 3
    shown = run("runs", "show", "--store", store)
    assert shown.exit_code == 0
    assert f"  eval case from run {first} · case {helm_id} · traces {helm_id} · sources {SAMPLES[0]}\n" in shown.output
    assert shown.output.count("  eval case from run ") == 3
    assert f"files {', '.join(SAMPLES)}\n" in shown.output

    doc = json.loads(run("runs", "show", "-o", "json", "--store", store).output)
    assert doc["sources"] == [{"uri": s, "kind": "file", "cases": 1} for s in SAMPLES]
    by_case = {c["case_id"]: c for c in doc["cases"]}
    assert by_case[helm_id]["provenance"] == cases[helm_id]["metadata"]["provenance"]
    html = run("runs", "show", "-o", "html", "--store", store).output
    assert f"eval case from run {first} · case {helm_id}" in html and f"{SAMPLES[1]} (1 case)" in html

    # The first run had no eval set: no provenance, and -o json without runs show has no sources.
    old = json.loads(run("runs", "show", first, "-o", "json", "--store", store).output)
    assert all("provenance" not in c for c in old["cases"])
    assert "sources" not in json.loads(report.read_text())
