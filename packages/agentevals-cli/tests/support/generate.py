"""Generated trace files: the shipped helm trace replicated with fresh trace ids, sessions and times."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Optional

HELM = Path(__file__).resolve().parent.parent / "data" / "adk" / "helm.json"
K8S = HELM.with_name("k8s.json")
"""Against ``eval_set_helm.json`` a HELM trace passes ``tool_trajectory_avg_score`` and a K8S trace fails it."""
SESSION_KEYS = ("gen_ai.conversation.id", "gcp.vertex.agent.session_id")


def replicate(path: Path, n: int, *, session_of: Optional[callable] = None,
              passes: Optional[callable] = None) -> Path:
    """Write a Jaeger file of ``n`` helm traces: trace ``i`` gets id ``i`` (hex), starts ``i`` minutes
    after the original, and belongs to session ``session_of(i)`` (default: its own, ``session-i``; None:
    no session id at all). With ``passes``, trace ``i`` is the HELM trace when ``passes(i)`` is true, else
    the K8S one: runs against ``eval_set_helm.json`` with a known verdict per case."""
    bases = {True: json.loads(HELM.read_text())["data"][0], False: json.loads(K8S.read_text())["data"][0]}
    traces = []
    for i in range(n):
        trace = copy.deepcopy(bases[passes(i) if passes else True])
        trace["traceID"] = f"{i + 1:032x}"
        session = session_of(i) if session_of else f"session-{i}"
        for span in trace["spans"]:
            span["traceID"] = trace["traceID"]
            span["startTime"] += i * 60_000_000
            if session is None:
                span["tags"] = [tag for tag in span["tags"] if tag["key"] not in SESSION_KEYS]
            for tag in span["tags"]:
                if tag["key"] in SESSION_KEYS:
                    tag["value"] = session
        traces.append(trace)
    path.write_text(json.dumps({"data": traces}))
    return path
