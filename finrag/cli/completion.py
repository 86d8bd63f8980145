"""Shell completion of the store's names: companies, documents, chat sessions.

Read from the store when it can be reached cheaply (see :func:`reachable_store`): an
external database that answers within a second, or the embedded server, started for the
query and stopped after it when no other command uses it. Otherwise, and on any error,
nothing: a completion never prints an error.
"""

from __future__ import annotations

import contextlib
import os
import shlex
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
from typer import _click as click

CONNECT_TIMEOUT_S = 1


@contextlib.contextmanager
def reachable_store(config_file: Path | None = None) -> Iterator[psycopg.Connection | None]:
    """A read-only connection to the store, or None when there is none to read.

    An external database is used if it answers within a second. An embedded server that
    is stopped is started for this one query and stopped again when it ends (it takes
    about 0.3 s; should completion be killed, the server's watchdog stops it); a home
    with no cluster yet is left alone (no initdb for a completion)."""
    from finrag.config import load_settings
    from finrag.db.connection import SCHEMA
    from finrag.db.embedded import EmbeddedServer

    settings = load_settings(config_file)
    server = None
    if settings.database_url is not None:
        url = settings.database_url.get_secret_value()
    elif (settings.home / "pgdata" / "PG_VERSION").exists():
        server = EmbeddedServer(settings.home)
        url = server.acquire()
    else:
        yield None
        return
    try:
        with psycopg.connect(
            url, connect_timeout=CONNECT_TIMEOUT_S, options=f"-c search_path={SCHEMA}"
        ) as conn:
            conn.read_only = True
            yield conn
    finally:
        if server is not None:
            server.release()  # stops the server if completion was its only client


def company_names(conn: psycopg.Connection, prefix: str = "") -> list[str]:
    """Company names and tickers starting with ``prefix`` (any case)."""
    rows = conn.execute("SELECT name, ticker FROM companies ORDER BY name").fetchall()
    names = [n for row in rows for n in row if n]
    return [n for n in dict.fromkeys(names) if n.lower().startswith(prefix.lower())]


def document_names(conn: psycopg.Connection, prefix: str = "") -> list[str]:
    """Stored documents' file names starting with ``prefix``."""
    rows = conn.execute("SELECT path FROM documents ORDER BY path").fetchall()
    names = [Path(path).name for (path,) in rows]
    return [n for n in dict.fromkeys(names) if n.startswith(prefix)]


def session_names(conn: psycopg.Connection, prefix: str = "") -> list[str]:
    from finrag.agent.memory import session_names as stored_session_names

    return stored_session_names(conn, prefix)


def _from_store(
    names: Callable[[psycopg.Connection, str], list[str]],
) -> Callable[[click.Context, str], list[str]]:
    def complete(ctx: click.Context, incomplete: str) -> list[str]:
        config_file = ctx.find_root().params.get("config")
        with reachable_store(config_file) as conn:
            found = [] if conn is None else names(conn, incomplete)
        if os.environ.get("_FINRAG_COMPLETE") == "complete_bash":
            # bash inserts a reply as typed: "Best Buy Co., Inc." would become 3 words.
            found = [shlex.quote(name) for name in found]
        return found

    return complete


complete_companies = _from_store(company_names)
complete_documents = _from_store(document_names)
complete_sessions = _from_store(session_names)

# Options completed wherever they appear, and arguments by (top command, parameter).
FOR_OPTION = {"--company": complete_companies, "--session": complete_sessions}
FOR_ARGUMENT = {
    ("facts", "company"): complete_companies,
    ("kpi", "companies"): complete_companies,
    ("analyze", "companies"): complete_companies,
    ("docs", "ref"): complete_documents,
    ("docs", "refs"): complete_documents,
    ("open", "target"): complete_documents,
    ("sessions", "name"): complete_sessions,
}
