"""Key spellings: camelCase keys read as snake_case, one rule for every reader.

agentevals-cli 0.11 and ADK's web API write camelCase (``evalSetId``, ``judgeModel``); the config loader, the
eval-set reader, the 0.11 compatibility routes and the server's trust check all read those keys as snake_case.
They must agree: the trust check refuses a key by its snake_case form, and the loader reads the key it let
through by that same form.

Example:
    ```python
    snake_case("maxConcurrentTraces")  # "max_concurrent_traces"
    snake_case("eval_set_id")          # "eval_set_id" (unchanged)
    snake_case("judgeBaseURL")         # "judge_base_url"
    ```
"""

from __future__ import annotations

import re

__all__ = ["snake_case"]

_HUMP = re.compile(r"(?<=[a-z0-9])([A-Z])")
"""A capital after a lower-case letter or a digit starts a word; a run of capitals (``URL``) is one word."""


def snake_case(name: str) -> str:
    """``name`` in snake_case: ``_`` before each capital that follows a lower-case letter or digit, then lower case.

    snake_case names come back unchanged; an acronym stays one word (``baseURL`` → ``base_url``)."""
    return _HUMP.sub(r"_\1", name).lower()
