"""agentevals-cli 0.11's own SDK examples run unchanged against this release's ``serve``.

The examples (``tests/data/compat_0_11/examples``, copied from 0.11.0's sdist) use ``AgentEvals()``,
``AgentEvals(eval_set_id=…)``, ``session(eval_set_id=…, metadata=…)``, ``session_async(…)`` and
``@app.agent`` / ``app.run([...])``; their agent frameworks are stood in for (``frameworks/``, see its
README). Each session must arrive at a real serve as one session with the example's eval set and turns.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")

DATA = Path(__file__).resolve().parents[1] / "data" / "compat_0_11"

CASES = [  # example, its eval set id, the prompts it sends (one turn each)
    ("context_manager_example.py", "sdk-context-manager-demo", ["What is 2 + 2?", "Is that number prime?"]),
    ("decorator_example.py", "sdk-decorator-demo", ["What is 2 + 2?", "Tell me a joke", "Is 17 prime?"]),
    ("async_example.py", "sdk-async-demo", ["Roll a 20-sided die", "Is that number prime?"]),
]


@pytest.mark.parametrize(("example", "eval_set_id", "prompts"), CASES, ids=[c[0] for c in CASES])
def test_0_11_sdk_example_runs_unchanged(serve, tmp_path, example, eval_set_id, prompts):
    (tmp_path / "sets").mkdir()
    (tmp_path / "sets" / "golden.json").write_text(json.dumps({"eval_set_id": eval_set_id, "eval_cases": [{
        "eval_id": "golden", "conversation": [{
            "invocation_id": f"turn-{i}", "user_content": {"role": "user", "parts": [{"text": p}]},
            "final_response": {"role": "model", "parts": [{"text": f"answer to: {p}"}]}}
            for i, p in enumerate(prompts)]}]}))
    # the session must end because the example's `with` block ended, not because it went idle
    server = serve("--session-idle", "600", "--eval-sets", str(tmp_path / "sets"), "-m", "response_match_score")
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(DATA / "frameworks"),
           "AGENTEVALS_OTLP_ENDPOINT": server.otlp_http}
    result = subprocess.run([sys.executable, str(DATA / "examples" / "sdk_example" / example)], capture_output=True,
                            text=True, timeout=60, cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    for prompt in prompts[:1]:
        assert f"answer to: {prompt}" in result.stdout or example == "decorator_example.py"
    session = server.wait_for_session(lambda s: s.get("eval_set_id") == eval_set_id, timeout=30)
    detail = server.get(f"/sessions/{session['session_id']}").json()["data"]
    assert [t["user"] for t in detail["turns"]] == prompts
    assert [t["response"] for t in detail["turns"]] == [f"answer to: {p}" for p in prompts]
    assert session["eval_id"] == "golden" and session["metrics"] == {"response_match_score": "PASSED"}
