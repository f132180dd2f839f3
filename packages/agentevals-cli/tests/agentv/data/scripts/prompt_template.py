"""Executable prompt template: prints the prompt built from the payload and its config."""

import json
import sys

payload = json.load(sys.stdin)
print(f"Is '{payload['answer']}' {payload['config']['style']}? Question: {payload['question']}")
