"""A third-party ``TraceSource`` is one module and one entry point: installed as a real distribution
(a ``*.dist-info`` with ``entry_points.txt`` on ``PYTHONPATH``), ``demo://…`` inputs are read by it in
``agentevals run`` and the Python API alike; an unknown scheme is one input error naming the known ones."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SOURCE = '''\
from typing import ClassVar

from agentevals.protocol import InvocationData
from agentevals.trace_sources import TraceSource
from agentevals.traces.model import ConvertedTrace


class DemoSource(TraceSource):
    name: ClassVar[str] = "demo"

    def read(self, ctx, position):
        count = int(self.item.rsplit("/", 1)[-1])
        for i in range(count):
            position.fraction = (i + 1) / count
            yield ConvertedTrace(trace_id=f"demo-{i}", source=self.label, invocations=[InvocationData.model_validate(
                {"invocation_id": f"i{i}", "user_content": f"question {i}", "final_response": "a sunny answer"})])
'''


def install(site: Path) -> None:
    (site / "demo_source.py").write_text(SOURCE)
    info = site / "demo_source-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: demo-source\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[agentevals.trace_sources]\ndemo = demo_source:DemoSource\n")


def run(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=120, env=env, cwd=site)


def test_entry_point_source_is_read_by_run_and_the_api(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    install(site)
    (site / "eval_config.yaml").write_text("evaluators:\n  - type: contains\n    value: sunny\n")
    cli = run(site, "-m", "agentevals", "run", "demo://host/3", "-c", "eval_config.yaml", "-o", "json")
    assert cli.returncode == 0, cli.stderr
    cases = json.loads(cli.stdout)["cases"]
    assert [(c["trace_ids"], c["sources"], c["user_contents"]) for c in cases] == [
        ([f"demo-{i}"], ["demo://host/3"], [f"question {i}"]) for i in range(3)]
    assert {m["status"] for c in cases for m in c["metrics"]} == {"PASSED"}
    api = run(site, "-c", "import agentevals, json\n"
                           "run = agentevals.evaluate(['demo://host/2', 'nosuch://x'], config='eval_config.yaml')\n"
                           "print(json.dumps([[c.case_id for c in run.cases], [e.error for e in run.input_errors]]))")
    assert api.returncode == 0, api.stderr
    cases, errors = json.loads(api.stdout)
    assert cases == ["demo-0", "demo-1"]
    assert len(errors) == 1 and errors[0].startswith("nosuch://x: unknown trace source 'nosuch'")
    assert "demo" in errors[0] and "files" in errors[0]  # the known names, the plugin's among them
