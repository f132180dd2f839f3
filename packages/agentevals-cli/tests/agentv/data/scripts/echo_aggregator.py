"""Composite aggregator that returns the member results it received as its reasoning."""

import json
import sys

results = json.load(sys.stdin)["results"]
print(json.dumps({"score": 0.65, "verdict": "pass", "reasoning": json.dumps(results, sort_keys=True)}))
