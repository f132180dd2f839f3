"""Script grader (AgentV 5 `type: script`): the share of the keywords in `config.value` the answer contains."""

import json
import sys

payload = json.load(sys.stdin)
keywords = payload["config"].get("value") or []
answer = payload["answer"].lower()
found = [k for k in keywords if k.lower() in answer]
print(json.dumps({
    "score": len(found) / len(keywords) if keywords else 0.0,
    "hits": [f"mentions {k!r}" for k in found],
    "misses": [f"does not mention {k!r}" for k in keywords if k not in found],
}))
