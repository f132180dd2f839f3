"""Logging for the command: the level from -v/-q, and every record redacted on its way out.

    install_logging(verbose=1, quiet=False)   # INFO and up on stderr, through RedactingFilter

Its own module so that ``agentevals --help`` does not import logging (the group's callback never runs for it).
"""

from __future__ import annotations

import logging
import sys

from ..core.redact import redact

__all__ = ["RedactingFilter", "install_logging"]


class RedactingFilter(logging.Filter):
    """Log records leave with secrets redacted and no line able to start a CI workflow command (the message
    is rendered once, then cleaned: it may quote a trace or an evaluator's stderr)."""

    def filter(self, record: logging.LogRecord) -> bool:
        from ..report._workflow import defuse

        record.msg, record.args = defuse(redact(record.getMessage()), "log"), None
        if record.exc_info and not record.exc_text:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
        return True


def install_logging(*, verbose: int, quiet: bool) -> None:
    """-vv debug, -v info, -q errors only, else warnings; on stderr, redacted."""
    level = (logging.DEBUG if verbose >= 2 else logging.INFO if verbose == 1 else logging.ERROR if quiet
             else logging.WARNING)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
