"""Client side of live mode: ``AgentEvals`` instruments an agent in-process and sends its spans to ``serve``.

Needs only OpenTelemetry's SDK (extra ``serve`` or ``otel``), never serve's web stack.
"""
