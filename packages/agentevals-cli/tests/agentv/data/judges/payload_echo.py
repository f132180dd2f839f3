"""Reports the payload it received in ``details`` (for checking what a code judge gets)."""

import json
import sys

payload = json.load(sys.stdin)
print("log line on stdout before the result is tolerated", flush=True)
print(json.dumps({"score": 1, "details": {"payload": payload}}))
