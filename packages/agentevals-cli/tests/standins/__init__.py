"""Loopback stand-ins for trace backends that cannot be installed in tests (Jaeger, Tempo, Langfuse).

Each one implements the backend's documented HTTP endpoints (required parameters, limits, error bodies,
auth) over data BUILT FROM the real shipped traces, with timestamps moved into the query window. They run
on ``127.0.0.1`` with a port from the OS, in a thread of the test (``StandIn.start()``/``stop()``, or
``with``), or in their own process (``python -m standins.jaeger --traces 100000``) for the benchmarks.

    from standins.jaeger import JaegerStandIn
    with JaegerStandIn.from_files([HELM]) as jaeger:
        uri = f"jaeger+{jaeger.url}?service=helm_agent&since=2h"
"""
