"""A builtin LLM judge called with the key of the run's ``credential_refs`` at the metric's ``judge_base_url``.

Real components: google-adk's own judge (``final_response_match_v2``), LiteLLM for ``openai/…`` judges and
google-genai for ``gemini-…`` ones, talking HTTP to a loopback stand-in of the judge's API; the request must
arrive with the resolved key in its auth header, and the stand-in's verdict decides the score. Through the
Python API (``agentevals.evaluate(credential_refs=…)``) and through a real ``agentevals serve`` answering
agentevals-cli 0.11's requests (``/api/evaluate/json`` with ``credentialRefs``, ``/api/evaluate`` with the
``credential_refs`` form field), with a 0.11 resolver plugin installed through its entry point.
Runs in the hatch ``adk`` environment (``hatch run adk:test``).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

import pytest

pytestmark = pytest.mark.adk
pytest.importorskip("google.adk.evaluation", reason="needs the adk extra (hatch run adk:test)")
pytest.importorskip("litellm", reason="google-adk's LiteLLM models need litellm (the adk extra installs it)")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # LiteLLM would fetch its price table from GitHub

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ → `support` is importable

import agentevals  # noqa: E402
import requests  # noqa: E402
from support.live_server import start_server, stop_server  # noqa: E402
from support.openai_server import ChatServer, LoopbackServer, Reply, chat_completion  # noqa: E402
from support.plugins import install_distribution, with_site  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data"
TRACE = DATA / "traces" / "genai" / "openai_otel_genai_v2_latest.otlp.json"  # one turn: the weather in Paris
EVAL_SET = DATA / "credentials" / "weather_eval_set.json"
VERDICT = {"valid": ("PASSED", 1.0), "invalid": ("FAILED", 0.0)}
DECOYS = {"OPENAI_API_KEY": "sk-decoy-from-the-environment", "GOOGLE_API_KEY": "decoy-google-key"}


def critique(label: str) -> str:
    """What ADK's final_response_match_v2 judge prompt asks the model to answer."""
    return json.dumps({"reasoning": "compared with the golden answer", "is_the_agent_response_valid": label})


def config_file(tmp_path: Path, **judge: str) -> Path:
    """An eval_config.yaml as 0.11 wrote it (camelCase): the judged metric and one without a judge."""
    path = tmp_path / "eval_config.yaml"
    keys = "".join(f"\n    {key}: {value!r}" for key, value in judge.items())
    path.write_text("evaluators:\n  - name: final_response_match_v2\n    type: builtin" + keys +
                    "\n  - name: response_match_score\n    type: builtin\n")
    return path


@pytest.fixture
def decoys(monkeypatch):
    """Keys in the environment that a judge given a credential_ref must not use."""
    for name, value in DECOYS.items():
        monkeypatch.setenv(name, value)


@pytest.mark.parametrize("label", ["valid", "invalid"])
def test_python_api_openai_judge_gets_the_resolved_key_and_its_verdict_decides(tmp_path, monkeypatch, decoys, label):
    monkeypatch.setenv("AE_TEST_JUDGE_KEY", "sk-resolved-for-the-judge")
    with ChatServer() as judge:
        judge.chat = lambda body: critique(label)
        cfg = config_file(tmp_path, judgeModel="openai/gpt-4o-mini", credentialRef="judge",
                          judgeBaseUrl=judge.base_url)
        run = agentevals.evaluate(str(TRACE), eval_set=str(EVAL_SET), config=str(cfg),
                                  credential_refs={"judge": {"kind": "env", "name": "AE_TEST_JUDGE_KEY"}})
    (case,) = run.cases
    judged, plain = case.metrics
    assert (judged.name, judged.status.value, judged.score) == ("final_response_match_v2", *VERDICT[label])
    assert judged.details["credential_ref"] == "judge" and judged.details["judge_base_url"] == judge.base_url
    assert plain.status.value == "PASSED"
    calls = judge.requests_to("POST", "/chat/completions")
    assert calls, "the judge was never called"
    assert {c.headers["authorization"] for c in calls} == {"Bearer sk-resolved-for-the-judge"}
    assert {c.json["model"] for c in calls} == {"gpt-4o-mini"}
    assert "What's the weather in Paris?" in json.dumps(calls[0].json["messages"])
    document = run.model_dump_json()
    assert "sk-resolved-for-the-judge" not in document and run.notes == []


def test_python_api_gemini_judge_gets_the_key_at_its_base_url(tmp_path, monkeypatch, decoys):
    monkeypatch.setenv("AE_TEST_GEMINI_KEY", "gemini-resolved-key")
    answer = {"candidates": [{"content": {"role": "model", "parts": [{"text": critique("invalid")}]},
                              "finishReason": "STOP"}],
              "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}}
    with LoopbackServer() as judge:
        judge.route("POST", "/v1beta/models/{call}", lambda request, params: Reply(json=answer))
        base = judge.base_url.removesuffix("/v1")
        cfg = config_file(tmp_path, judge_model="gemini-2.5-flash", credential_ref="gemini", judge_base_url=base)
        run = agentevals.evaluate(str(TRACE), eval_set=str(EVAL_SET), config=str(cfg),
                                  credential_refs={"gemini": {"kind": "env", "name": "AE_TEST_GEMINI_KEY"}})
    judged = run.cases[0].metrics[0]
    assert (judged.status.value, judged.score) == ("FAILED", 0.0)
    assert judge.requests, "the judge was never called"
    assert {r.path for r in judge.requests} == {"/v1beta/models/gemini-2.5-flash:generateContent"}
    assert {r.headers.get("x-goog-api-key") for r in judge.requests} == {"gemini-resolved-key"}


def test_without_credential_refs_the_judge_reads_the_environment_and_a_note_says_so(tmp_path, monkeypatch, decoys):
    """A plain run (``agentevals run``, ``evaluate`` without ``credential_refs``) has no map to resolve
    ``credential_ref`` in: the judge uses the environment's key and endpoint (0.11: an error row)."""
    with ChatServer() as judge:
        judge.chat = lambda body: critique("valid")
        monkeypatch.setenv("OPENAI_BASE_URL", judge.base_url)  # LiteLLM's own variable for openai/… models
        cfg = config_file(tmp_path, judgeModel="openai/gpt-4o-mini", credentialRef="judge",
                          judgeBaseUrl="http://127.0.0.1:9/never")
        run = agentevals.evaluate(str(TRACE), eval_set=str(EVAL_SET), config=str(cfg))
    assert (run.cases[0].metrics[0].status.value, run.cases[0].metrics[0].score) == ("PASSED", 1.0)
    assert {c.headers["authorization"] for c in judge.requests} == {f"Bearer {DECOYS['OPENAI_API_KEY']}"}
    (note,) = run.notes
    assert note.endswith("evaluator 'final_response_match_v2': 'credential_ref' and 'judge_base_url' not read "
                         "(agentevals-cli 0.11 used them only with a server run's credential_refs); the judge reads "
                         "its credentials and endpoint from the environment (GOOGLE_API_KEY, …)")


VAULT = """\
    class VaultResolver:
        async def resolve(self, ref):
            return {"kv/judge-b": "sk-from-the-vault-plugin"}[ref["path"]]

    def create_vault_resolver(spec):
        return VaultResolver()
    """


def test_serve_answers_0_11_requests_with_credential_refs_each_with_its_own_key(tmp_path):
    """Two 0.11 clients at once: ``/api/evaluate/json`` with an ``env`` reference and ``/api/evaluate`` with a
    reference of a 0.11 resolver plugin (``kind: vault``). The stand-in judges by key (A: valid, B: invalid),
    so each run's score shows its own key reached its judge; no key is in an answer or serve's log."""
    site = install_distribution(tmp_path / "site", "acme_vault", VAULT,
                                {"agentevals.secret_resolvers": {"vault": "acme_vault:create_vault_resolver"}})
    keys = {"Bearer sk-env-key-a": "valid", "Bearer sk-from-the-vault-plugin": "invalid"}
    with LoopbackServer() as judge:
        judge.route("POST", "/chat/completions", lambda request, params: Reply(json=chat_completion(
            critique(keys.get(request.headers.get("authorization", ""), "?")), model="gpt-4o-mini")))
        env = with_site(site, {"AE_TEST_KEY_A": "sk-env-key-a", "LITELLM_LOCAL_MODEL_COST_MAP": "True", **DECOYS})
        server = start_server("--no-store", "--allow-code-evaluators", env=env)  # judgeBaseUrl in a sent config
        try:
            evaluators = [{"name": "final_response_match_v2", "type": "builtin", "judgeModel": "openai/gpt-4o-mini",
                           "credentialRef": "judge", "judgeBaseUrl": judge.base_url}]
            json_body = {"traces": json.loads(TRACE.read_text()), "evalSet": json.loads(EVAL_SET.read_text()),
                         "config": {"evaluators": evaluators},
                         "credentialRefs": {"judge": {"kind": "env", "name": "AE_TEST_KEY_A"}}}
            form = {"config": json.dumps({"evaluators": evaluators}),
                    "credential_refs": json.dumps({"judge": {"kind": "vault", "path": "kv/judge-b"}})}
            files = [("trace_files", ("weather.json", TRACE.read_bytes())),
                     ("eval_set_file", ("weather_set.json", EVAL_SET.read_bytes()))]
            answers: dict[str, requests.Response] = {}
            calls = [threading.Thread(target=lambda: answers.__setitem__("json", requests.post(
                         f"{server.api}/evaluate/json", json=json_body, timeout=240))),
                     threading.Thread(target=lambda: answers.__setitem__("form", requests.post(
                         f"{server.api}/evaluate", files=files, data=form, timeout=240)))]
            for call in calls:
                call.start()
            for call in calls:
                call.join(300)
            server.process.errors.seek(0)
            log = server.process.errors.read()  # serve's stderr: its log
        finally:
            stop_server(server.process)
    for route, expected in (("json", VERDICT["valid"]), ("form", VERDICT["invalid"])):
        answer = answers[route]
        assert answer.status_code == 200, answer.text
        (metric,) = answer.json()["data"]["cases"][0]["metrics"]
        assert (metric["status"], metric["score"]) == expected, (route, metric)
        (legacy,) = answer.json()["data"]["traceResults"][0]["metricResults"]
        assert (legacy["evalStatus"], legacy["score"]) == expected
        for secret in ("sk-env-key-a", "sk-from-the-vault-plugin"):
            assert secret not in answer.text
    seen = [r.headers.get("authorization") for r in judge.requests]
    assert set(seen) == set(keys) and seen.count("Bearer sk-env-key-a") == seen.count("Bearer sk-from-the-vault-plugin")
    assert not any(decoy in (r.headers.get("authorization") or "") for r in judge.requests for decoy in DECOYS.values())
    for secret in ("sk-env-key-a", "sk-from-the-vault-plugin"):
        assert secret not in log
