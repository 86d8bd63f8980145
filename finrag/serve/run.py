"""Running the API: where it may listen, and a stop that lets requests in flight finish."""

from __future__ import annotations

import ipaddress
import signal

from finrag.config import Settings
from finrag.errors import FinragError, UsageError


def is_loopback(host: str) -> bool:
    """Whether ``host`` reaches this machine only (127.0.0.0/8, ::1, localhost)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a name: it may resolve to any address
        return False


def check_bind(host: str, token: str | None) -> None:
    """Beyond loopback anyone on the network could read the store: not without a token."""
    if token is None and not is_loopback(host):
        raise UsageError(
            f"refusing to listen on {host} without a token: anyone who reaches it could "
            "read the store",
            hint="pass --token TOKEN (or set FINRAG_SERVE__TOKEN, or serve.token in the "
            "settings file); clients then send 'Authorization: Bearer TOKEN'",
        )


def serve(settings: Settings, *, host: str, port: int, token: str | None) -> None:
    """Serve until SIGINT or SIGTERM; then stop taking requests, let those in flight
    finish (a second Ctrl-C does not wait), and close the store."""
    import uvicorn

    from finrag.cli.render import err
    from finrag.db import open_store
    from finrag.llm.interrupt import finish_model_calls_on_signals
    from finrag.serve.app import create_app

    check_bind(host, token)
    # finrag's commands stop a model call at once on these signals; a server lets the
    # request that made it finish, and stops after.
    finish_model_calls_on_signals(signal.SIGINT, signal.SIGTERM)
    # Opened first, so a store that will not open fails as every command does; closed
    # (the embedded server let go) once uvicorn has stopped, even by a signal.
    with open_store(settings) as store:
        config = uvicorn.Config(
            create_app(settings, store, token=token),
            host=host,
            port=port,
            # uvicorn's own lines say where it listens and each step of a stop.
            log_level="warning" if err.quiet else "info",
            access_log=False,
            lifespan="off",
        )
        server = uvicorn.Server(config)
        where = f"http://{host if ':' not in host else f'[{host}]'}:{port}"
        err.print(
            f"finrag API over {store.display_url}: {where} (OpenAPI page {where}/api/docs, "
            f"schema {where}/openapi.json); Ctrl-C or SIGTERM stops it once requests in "
            "flight have finished",
            highlight=False,
        )
        try:
            server.run()
        except SystemExit:  # uvicorn's way of saying it could not start
            if server.started:
                raise
            raise FinragError(
                f"the API could not listen on {host}:{port}",
                hint="the line above says why (a port in use?); --port picks another",
            ) from None
