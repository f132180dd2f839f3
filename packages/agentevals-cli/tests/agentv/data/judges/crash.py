"""Fails like a broken judge: a message on stderr, exit code 3."""

import sys

print("Traceback (most recent call last): ...", file=sys.stderr)
print("KeyError: 'answer'", file=sys.stderr)
sys.exit(3)
