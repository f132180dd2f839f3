"""Code judge: the answer holds a CSV table (two or more lines with the same number of commas)."""

import json
import sys

answer = json.load(sys.stdin)["answer"]
rows = [line for line in answer.splitlines() if "," in line]
ok = len(rows) >= 2 and len({row.count(",") for row in rows}) == 1
print(json.dumps({
    "score": 1.0 if ok else 0.0,
    "reasoning": f"{len(rows)} CSV line(s)" + ("" if ok else ": expected a header and rows with equal columns"),
}))
