"""Whole-input reruns (``store._replay``): a rerun of unchanged files with unchanged settings is served from
the run store without reading a trace, and any change of bytes, config, eval set or ``--no-cache`` reads
again. Real parts only: the ``agentevals`` command as a subprocess, a real store (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from support.traces import clone_traces, settled

ADK = Path(__file__).resolve().parents[1] / "data" / "adk"
SERVED = "file(s) served from the cache"
CONFIG = "evaluators:\n  - name: tool_trajectory_avg_score\n    type: builtin\n    threshold: {threshold}\n"


def project(tmp_path: Path) -> list[str]:
    """Two trace files (passing and failing cases), a config with a threshold and an eval set."""
    clone_traces(ADK / "helm.json", 3, tmp_path / "a.json")
    clone_traces(ADK / "k8s.json", 2, tmp_path / "b.json", start=100)
    (tmp_path / "eval_config.yaml").write_text(CONFIG.format(threshold=0.5))
    (tmp_path / "eval_set.json").write_bytes((ADK / "eval_set_helm.json").read_bytes())
    return [str(tmp_path / "a.json"), str(tmp_path / "b.json"), "-c", str(tmp_path / "eval_config.yaml"),
            "-e", str(tmp_path / "eval_set.json"), "--group-by", "trace"]


def agentevals(store: str, *args: str, report: Path) -> tuple[dict[str, Any], str]:
    """One ``agentevals run`` with a JSON report: (the report, stderr)."""
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("AGENTEVALS_STORE", None)
    proc = subprocess.run([sys.executable, "-m", "agentevals", "run", *args, "--store", store,
                           "-o", "summary", "-o", f"json={report}"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 1, proc.stderr  # the k8s cases fail the trajectory: exit 1, every result kept
    return json.loads(report.read_text()), proc.stdout + proc.stderr


def comparable(doc: dict[str, Any]) -> dict[str, Any]:
    """A report without what differs between any two runs: its id, times and run-level notes."""
    return {k: v for k, v in doc.items() if k not in ("run_id", "started_at", "finished_at", "notes")}


def test_an_unchanged_rerun_is_served_whole_and_recorded_as_a_new_run(tmp_path, store_url):
    args = project(tmp_path)
    first, said = agentevals(store_url, *args, report=tmp_path / "1.json")
    assert SERVED not in said
    second, said = agentevals(store_url, *args, report=tmp_path / "2.json")
    assert f"2 {SERVED} (run {first['run_id']}" in said
    assert second["run_id"] != first["run_id"]
    assert comparable(second) == comparable(first)
    assert len(second["cases"]) == 5 and second["totals"]["cases"]["FAILED"] == 2
    shown = subprocess.run([sys.executable, "-m", "agentevals", "runs", "show", second["run_id"], "-o", "json",
                            "--store", store_url], capture_output=True, text=True, timeout=60)
    assert json.loads(shown.stdout)["cases"] == second["cases"]  # the store holds the copied cases


def test_a_changed_byte_reads_again(tmp_path, store_url):
    args = project(tmp_path)
    first, _ = agentevals(store_url, *args, report=tmp_path / "1.json")
    b = tmp_path / "b.json"
    b.write_bytes(b.read_bytes() + b"\n")  # the same traces, other bytes
    again, said = agentevals(store_url, *args, report=tmp_path / "2.json")
    assert SERVED not in said
    assert "results reused from the run store" in said  # the per-case cache still answers
    assert comparable(again)["cases"] == comparable(first)["cases"]


def test_a_changed_config_eval_set_or_no_cache_reads_again(tmp_path, store_url):
    args = project(tmp_path)
    agentevals(store_url, *args, report=tmp_path / "1.json")
    _, said = agentevals(store_url, *args, "--no-cache", report=tmp_path / "2.json")
    assert SERVED not in said
    (tmp_path / "eval_config.yaml").write_text(CONFIG.format(threshold=0.6))
    _, said = agentevals(store_url, *args, report=tmp_path / "3.json")
    assert SERVED not in said
    _, said = agentevals(store_url, *args, report=tmp_path / "4.json")
    assert f"2 {SERVED}" in said  # the new threshold's run is now the one served
    es = tmp_path / "eval_set.json"
    es.write_text(json.dumps(json.loads(es.read_text()), indent=3))
    _, said = agentevals(store_url, *args, report=tmp_path / "5.json")
    assert SERVED not in said


def test_an_eval_set_named_by_the_config_is_in_the_key(tmp_path, store_url):
    """The eval set named by the config's ``eval_set:`` (no ``-e``) decides the results as ``-e`` does: a change of
    its bytes reads again."""
    args = project(tmp_path)
    args = args[:args.index("-e")] + args[args.index("-e") + 2:]
    config = tmp_path / "eval_config.yaml"
    config.write_text(f"eval_set: {tmp_path / 'eval_set.json'}\n" + CONFIG.format(threshold=0.5))
    agentevals(store_url, *args, report=tmp_path / "1.json")
    _, said = agentevals(store_url, *args, report=tmp_path / "2.json")
    assert f"2 {SERVED}" in said
    es = tmp_path / "eval_set.json"
    es.write_text(json.dumps(json.loads(es.read_text()), indent=3))
    _, said = agentevals(store_url, *args, report=tmp_path / "3.json")
    assert SERVED not in said


def test_a_settled_file_is_keyed_by_its_stored_digest_and_an_edit_of_the_same_size_reads_again(tmp_path, store_url):
    """The input's digest comes from the store while its stat is unchanged (``store._digests``): a rerun is served;
    the same size with other bytes and a later mtime reads again; a touch with the bytes unchanged is served."""
    args = project(tmp_path)
    a = tmp_path / "a.json"
    settled(a)
    first, said = agentevals(store_url, *args, report=tmp_path / "1.json")
    assert SERVED not in said
    _, said = agentevals(store_url, *args, report=tmp_path / "2.json")
    assert f"2 {SERVED} (run {first['run_id']}" in said
    text = a.read_text()
    before = os.stat(a)
    a.write_text(text.replace("helm-agent.kagent", "kelm-agent.kagent", 1))  # the same size, other bytes
    os.utime(a, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000))
    assert os.stat(a).st_size == before.st_size and a.read_text() != text
    edited, said = agentevals(store_url, *args, report=tmp_path / "3.json")
    assert SERVED not in said
    os.utime(a)  # touched: hashed again, the same bytes as the edited run's
    _, said = agentevals(store_url, *args, report=tmp_path / "4.json")
    assert f"2 {SERVED} (run {edited['run_id']}" in said


FORMATS = {"summary": "txt", "table": "txt", "json": "json", "junit": "xml", "markdown": "md", "html": "html"}
_CACHE_NOTE = re.compile(r'(<div class="muted">)?(- )?note: [^<\n]*(served from the cache|reused from the run store)'
                         r'[^<\n]*(</div>)?\n?')


def reports(store: str, args: list[str], folder: Path) -> dict[str, str]:
    """Every report format of one run, written to files; what differs between any two runs (run ids, times, the
    cache's notes) taken out."""
    folder.mkdir()
    outputs = [f"-o{name}={folder / f'{name}.{ext}'}" for name, ext in FORMATS.items()]
    proc = subprocess.run([sys.executable, "-m", "agentevals", "run", *args, "--store", store, *outputs],
                          capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"}, timeout=120)
    assert proc.returncode == 1, proc.stderr
    found = {}
    for name, ext in FORMATS.items():
        text = (folder / f"{name}.{ext}").read_text()
        if name == "json":
            text = json.dumps(comparable(json.loads(text)))
        text = re.sub(r"\d{8}-\d{6}-\d{6}-[0-9a-f]{6}", "RUN", _CACHE_NOTE.sub("", text))
        found[name] = re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+Z?", "TIME", text)
    return found


def test_every_report_of_a_served_rerun_is_the_first_runs(tmp_path, store_url):
    """A rerun served from the store (its cases loaded in one pass, its totals counted as they are emitted)
    writes every report format as the run it repeats did, but for its id, times and the cache's notes."""
    args = project(tmp_path)
    first = reports(store_url, args, tmp_path / "first")
    again = reports(store_url, args, tmp_path / "again")
    assert "served from the cache" in (tmp_path / "again" / "summary.txt").read_text()
    for name in FORMATS:
        assert again[name] == first[name], name
    assert "helm_list_releases" in again["html"] and "RUN" in again["junit"]  # transcripts and ids kept
