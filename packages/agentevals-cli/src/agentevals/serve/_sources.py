"""Source URIs sent to ``serve`` (the API's ``sources`` field, MCP ``evaluate_traces`` on ``--mcp-port``): only
to the hosts the operator allowed, never a local file.

    hosts = SourceHosts(["127.0.0.1:16686", "phoenix.internal"])     # serve --allow-source-host …
    uris = hosts.check(["jaeger+http://127.0.0.1:16686?service=shop&since=1h"])   # or AgentevalsError

A page in the user's browser cannot post to the API at all (``_guard``: Origin, Host, the API token); this is
the second line: even an allowed client cannot make ``serve`` reach a host the operator did not name
(server-side request forgery into an internal network) or read a file of this machine through a URI.
Without ``--allow-source-host``, ``serve`` takes no source URI. An entry is ``HOST`` (any port) or
``HOST:PORT``; host names are compared as written (no DNS lookup, so a name that resolves elsewhere later
changes nothing) and requests to a source never follow redirects (``PullClient``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Optional
from urllib.parse import urlsplit

from ..errors import AgentevalsError, ConfigError

__all__ = ["MAX_SOURCES", "SourceHosts", "SourceRefused"]

MAX_SOURCES = 20
"""Most source URIs in one request."""


class SourceRefused(AgentevalsError):
    """A well-formed source URI this server may not read (no ``--allow-source-host``, or another host): 403."""


def _host_port(text: str) -> Optional[tuple[str, Optional[int]]]:
    try:
        parts = urlsplit(f"//{text.strip()}")
        name, port = parts.hostname, parts.port
    except ValueError:
        return None
    if not name or parts.path or parts.username is not None or parts.password is not None:
        return None
    return name.lower().rstrip("."), port


class SourceHosts:
    """The hosts source URIs may name (``serve --allow-source-host``); empty: source URIs are refused."""

    def __init__(self, entries: Iterable[str] = ()) -> None:
        self.entries: list[tuple[str, Optional[int]]] = []
        for entry in entries:
            parsed = _host_port(entry)
            if parsed is None:
                raise ConfigError(f"--allow-source-host {entry!r}: not a host name or HOST:PORT")
            self.entries.append(parsed)

    def allows(self, host: str, port: Optional[int]) -> bool:
        return any(name == host and (allowed is None or allowed == port) for name, allowed in self.entries)

    def check(self, uris: Sequence[object], *, what: str = "sources") -> list[str]:
        """``uris`` when each is a trace backend's query URI (a ``PullSource``) on an allowed host; else
        ``AgentevalsError`` with one line naming the first refused URI and the fix."""
        if len(uris) > MAX_SOURCES:
            raise AgentevalsError(f"{what}: {len(uris)} URIs; at most {MAX_SOURCES} in one request")
        return [self._check(uri, what) for uri in uris]

    def _check(self, uri: object, what: str) -> str:
        from ..trace_sources import TraceSource
        from ..trace_sources.pull import PullSource
        from ..trace_sources.resolve import source_for

        if not isinstance(uri, str) or "://" not in uri:
            raise AgentevalsError(f"{what}: {str(uri)[:200]!r} is not a source URI (jaeger+http://HOST:PORT?…); "
                                  "send trace files as uploads")
        try:
            source: TraceSource = source_for(uri)
        except AgentevalsError as exc:
            raise AgentevalsError(f"{what}: {exc}") from None
        if not isinstance(source, PullSource):
            # files (file://…) and plain http(s) URLs (which follow redirects, anywhere) are not taken
            raise AgentevalsError(f"{what}: {uri[:200]}: not a trace backend URI (jaeger+http://HOST:PORT?…); "
                                  "send trace files as uploads")
        split = _host_port(urlsplit(source.query.base_url).netloc)
        if split is None:
            raise AgentevalsError(f"{what}: {uri[:200]}: no host")
        host, port = split
        if not self.entries:
            raise SourceRefused(f"{what}: {uri[:200]}: this server takes no source URIs (start it with "
                                  f"--allow-source-host {host})")
        if not self.allows(host, port):
            shown = f"{host}:{port}" if port else host
            raise SourceRefused(f"{what}: {uri[:200]}: host {shown} is not allowed (serve --allow-source-host "
                                  f"{shown} allows it)")
        return uri
