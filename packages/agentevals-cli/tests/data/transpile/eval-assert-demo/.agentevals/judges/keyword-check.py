"""Judge: the answer names both Paris and France (score = share of keywords found)."""

import json
import sys

payload = json.load(sys.stdin)
answer = payload["answer"].lower()
hits = [f"mentions {word}" for word in ("paris", "france") if word in answer]
misses = [f"does not mention {word}" for word in ("paris", "france") if word not in answer]
print(json.dumps({"score": len(hits) / 2, "reasoning": f"{len(hits)}/2 keywords", "hits": hits, "misses": misses}))
