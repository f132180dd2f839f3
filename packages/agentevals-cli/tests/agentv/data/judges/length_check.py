"""Length judge in AgentV's style (eval-assert-demo length-check), in Python: 5 to 50 words."""

import json
import sys

payload = json.load(sys.stdin)
words = len(payload["answer"].split())
hits, misses = [], []
(hits if words >= 5 else misses).append(f"Answer has {words} words (need >= 5)")
(hits if words <= 50 else misses).append(f"Answer has {words} words (need <= 50)")
print(json.dumps({
    "score": len(hits) / 2,
    "hits": hits,
    "misses": misses,
    "reasoning": f"Word count: {words}. Passed {len(hits)}/2 checks.",
    "details": {"words": words},
}))
