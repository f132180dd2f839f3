"""Secrets never leave in what agentevals writes: one redactor for reports, logs, error rows and the run store.

``redact(text, *values)`` replaces with ``***``:

- the value of every environment variable whose name looks secret (``*_KEY``, ``*TOKEN*``, ``*SECRET*``,
  ``*PASSWORD*``, ``*CREDENTIAL*``, ``*_AUTH*``, ``DATABASE_URL``, …; values of 6 characters or more);
- well-known token shapes, wherever they come from: OpenAI ``sk-…``, GitHub ``ghp_…``/``github_pat_…``,
  AWS access key ids, Slack ``xox?-…``, Google ``AIza…``, GitLab ``glpat-…``, Hugging Face ``hf_…``,
  npm ``npm_…``, JSON Web Tokens, ``Bearer …`` / ``Basic …`` credentials, private key blocks, and the
  password of a URL (``https://user:***@host``);
- ``values`` the caller knows to be secret (an API key read from a config, not from the environment).

``redact_obj(obj)`` does the same to every string inside nested dicts, lists and tuples (keys included).
``redact_argv(argv)`` hides the value of every secret-looking option (``--api-token X``,
``--api-token=X``, ``--password X``…), whatever the value looks like (``redact`` the joined line for the rest).
``redact_url(url)`` hides only the password of a URL (a run store's location, shown as where it is).

Example:
    ```python
    from agentevals.core.redact import redact, redact_obj

    redact("token ghp_" + "a" * 36)          # 'token ***'
    redact("401 for key k-123456", "k-123456")                 # '401 for key ***'
    redact_url("postgresql://ci:s3cret@db:5432/evals")        # 'postgresql://ci:***@db:5432/evals'
    redact_obj({"error": "401 for sk-live-abcdef123456"})   # {'error': '401 for ***'}
    ```
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import Any, TypeVar

__all__ = ["MASK", "may_need_redaction", "redact", "redact_argv", "redact_obj", "redact_url", "secret_values"]

MASK = "***"

T = TypeVar("T")

_SECRET_NAME = re.compile(
    r"(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|PWD_?HASH|CREDENTIALS?|AUTH|"
    r"COOKIE|SIGNATURE|DSN|CONN(?:ECTION)?_?STR(?:ING)?|DATABASE_URL|ACCESS_KEY(?:_ID)?)(?:_|$)"
    r"|TOKEN|SECRET|PASSWORD|APIKEY|WEBHOOK",  # a webhook URL (Slack's, say) is its own credential
    re.IGNORECASE,
)
_NOT_SECRET = frozenset({"PATH", "HOME", "PWD", "OLDPWD", "SHELL", "TERM", "USER", "LOGNAME", "LANG",
                         "KEYTIMEOUT", "SSH_AUTH_SOCK", "GPG_AGENT_INFO", "PASSWORD_STORE_DIR"})
_MIN_SECRET = 6
"""Shorter values (``1``, ``true``, ``yes``) are not redacted: they would mangle every report."""

_TOKEN_SHAPES = re.compile(
    "|".join([
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)",
        r"\bsk-(?:proj-|live-|test-|ant-)?[A-Za-z0-9_\-]{16,}",
        r"\bgh[pousr]_[A-Za-z0-9]{30,}",
        r"\bgithub_pat_[A-Za-z0-9_]{30,}",
        r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b",
        r"\bxox[abposr]-[A-Za-z0-9\-]{10,}",
        r"\bAIza[0-9A-Za-z_\-]{35}",
        r"\bglpat-[A-Za-z0-9_\-]{20,}",
        r"\bhf_[A-Za-z0-9]{30,}",
        r"\bnpm_[A-Za-z0-9]{36}",
        r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
        r"(?<=\bBearer )[A-Za-z0-9_\-.~+/]{8,}=*",
        r"(?<=\bBasic )[A-Za-z0-9+/]{8,}=*",
    ])
)
# The literal that every alternative of ``_TOKEN_SHAPES`` contains: a string without any of them has no
# token, and this search (no character classes to try at each position) costs a quarter of the full one.
# Each alternative starts at the literal's rarest character (``-``, ``_``, ``J``, ``A``, ``B``) and looks
# behind for the rest: the search stops at far fewer places than at every ``s``, ``g``, ``h``, ``n``, ``e``
# and ``x`` of ordinary text (a run store row is scanned in about 60% of the time). Same strings found as
# ``-----BEGIN |sk-|gh[pousr]_|github_pat_|AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|xox[abposr]-|AIza|glpat-|hf_|npm_
# |eyJ|Bearer |Basic ``.
_TOKEN_HINT = re.compile(
    r"-(?:(?<=sk-)|(?<=glpat-)|(?<=xox[abposr]-)|----BEGIN )|_(?:(?<=gh[pousr]_)|(?<=hf_)|(?<=npm_)|(?<=github_)pat_)"
    r"|J(?<=eyJ)|A(?:KIA|SIA|GPA|IDA|ROA|NPA|NVA|IPA|Iza)|B(?:earer |asic )"
)
# user:password@ in a URL: keep the user, hide the password.
_URL_PASSWORD = re.compile(r"(?<=://)([^/\s:@]+):([^/\s@]+)@")


def _is_secret_name(name: str) -> bool:
    return name.upper() not in _NOT_SECRET and bool(_SECRET_NAME.search(name))


def secret_values(environ: Any = None) -> list[str]:
    """Values of the secret-looking variables of ``environ`` (default: ``os.environ``), longest first."""
    environ = os.environ if environ is None else environ
    values = {v for k, v in environ.items() if len(v) >= _MIN_SECRET and _is_secret_name(k)}
    return sorted(values, key=len, reverse=True)


@lru_cache(maxsize=8)
def _values_pattern(values: tuple[str, ...]) -> re.Pattern[str] | None:
    return re.compile("|".join(map(re.escape, values))) if values else None


@lru_cache(maxsize=8)
def _environ_pattern(snapshot: tuple[tuple[bytes, bytes], ...]) -> re.Pattern[str] | None:
    return _values_pattern(tuple(secret_values()))


def _secrets_pattern() -> re.Pattern[str] | None:
    # Keyed on a snapshot of the environment (one C-level copy): a report redacts hundreds of thousands
    # of strings, and scanning every variable name for each of them dominated a whole run.
    environ = getattr(os.environ, "_data", None)
    if not isinstance(environ, dict):
        return _values_pattern(tuple(secret_values()))
    return _environ_pattern(tuple(environ.items()))


def _redact(text: str, pattern: re.Pattern[str] | None) -> str:
    if not text:
        return text
    if pattern is not None:
        text = pattern.sub(MASK, text)
    if _TOKEN_HINT.search(text):
        text = _TOKEN_SHAPES.sub(MASK, text)
    if "://" in text:
        text = _URL_PASSWORD.sub(lambda m: f"{m.group(1)}:{MASK}@", text)
    return text


def redact(text: str, *values: str | None) -> str:
    """``text`` with secrets (environment values, token shapes, URL passwords and the given ``values``)
    replaced by ``***``."""
    if not text:
        return text
    for value in values:
        if value:
            text = text.replace(value, MASK)
    return _redact(text, _secrets_pattern())


def redact_url(url: str) -> str:
    """``url`` with only its password hidden (``scheme://user:***@host…``); anything else as it is."""
    if "://" not in url or "@" not in url:
        return url
    scheme, rest = url.split("://", 1)
    credentials, host = rest.rsplit("@", 1)  # the last @: a password may hold one
    user = credentials.split(":", 1)[0]
    return f"{scheme}://{user}:{MASK}@{host}" if ":" in credentials else url


def redact_argv(argv: list[str]) -> list[str]:
    """A command line with the values of secret-looking options (``--api-token``…) masked; the other
    arguments are left as they are (``redact`` the joined command line for token shapes and URLs).

    Example: ``redact_argv(["serve", "--api-token", "s3cr3t", "--api-token=s3cr3t"])`` →
    ``["serve", "--api-token", "***", "--api-token=***"]``.
    """
    out: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            out.append(MASK)
            hide_next = False
            continue
        if arg.startswith("--") and len(arg) > 2:
            name, eq, _ = arg[2:].partition("=")
            if _is_secret_name(name.replace("-", "_")):
                if eq:
                    out.append(f"--{name}={MASK}")
                else:
                    out.append(arg)
                    hide_next = True
                continue
        out.append(arg)
    return out


def may_need_redaction(text: str) -> bool:
    """Whether ``redact`` could change ``text``, or any string JSON-encoded inside it; False means ``redact_obj``
    of the value that ``text`` encodes is that value, as it is. A whole document is checked in a few scans
    in C instead of one call per string (what the run store writes, row after row, has nothing to hide):

        text = json.dumps(value)
        if may_need_redaction(text):
            text = json.dumps(redact_obj(value))
    """
    pattern = _secrets_pattern()
    # A secret with a character JSON escapes (a quote, a backslash, a control character) is not in the
    # encoded text as it is: then every document takes the full walk.
    if pattern is not None and (_escaped_in_json(pattern.pattern) or pattern.search(text)):
        return True
    return bool(_TOKEN_HINT.search(text)) or ("://" in text and _URL_PASSWORD.search(text) is not None)


@lru_cache(maxsize=8)
def _escaped_in_json(source: str) -> bool:
    # ``re.escape`` writes a backslash as two and leaves quotes and control characters as they are.
    return '"' in source or "\\\\" in source or any(ord(c) < 0x20 for c in source)


def redact_obj(obj: T) -> T:
    """A copy of ``obj`` with every string inside it (dict keys too) passed through ``redact``."""
    return _redact_obj(obj, _secrets_pattern())


def _redact_obj(obj: Any, pattern: re.Pattern[str] | None) -> Any:
    if isinstance(obj, str):
        return _redact(obj, pattern)
    if isinstance(obj, dict):
        return {_redact_obj(k, pattern): _redact_obj(v, pattern) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_redact_obj(v, pattern) for v in obj]
    if isinstance(obj, tuple):
        return tuple(_redact_obj(v, pattern) for v in obj)
    return obj
