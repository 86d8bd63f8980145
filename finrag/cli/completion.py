"""Shell completion of the store's names: companies, documents, chat sessions.

Read from the store only when it can be reached cheaply: an external database that
answers within a second, or an embedded server that is already running (completion never
starts one: ``finrag db start`` keeps it up between commands). Otherwise nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
from typer import _click as click

CONNECT_TIMEOUT_S = 1


@contextlib.contextmanager
def reachable_store(config_file: Path | None = None) -> Iterator[psycopg.Connection | None]:
    """A read-only connection to the store if one is up now, else None; starts nothing."""
    from finrag.config import load_settings
    from finrag.db.connection import SCHEMA
    from finrag.db.embedded import EmbeddedServer

    settings = load_settings(config_file)
    if settings.database_url is not None:
        url = settings.database_url.get_secret_value()
    elif (settings.home / "pgdata" / "PG_VERSION").exists():
        url = EmbeddedServer(settings.home).status().url
    else:
        url = None
    if url is None:
        yield None
        return
    with psycopg.connect(
        url, connect_timeout=CONNECT_TIMEOUT_S, options=f"-c search_path={SCHEMA}"
    ) as conn:
        conn.read_only = True
        yield conn


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
            return [] if conn is None else names(conn, incomplete)

    return complete


complete_companies = _from_store(company_names)
complete_documents = _from_store(document_names)
complete_sessions = _from_store(session_names)

# Options completed wherever they appear, and arguments by (top command, parameter).
FOR_OPTION = {"--company": complete_companies, "--session": complete_sessions}
FOR_ARGUMENT = {
    ("facts", "company"): complete_companies,
    ("kpi", "companies"): complete_companies,
    ("docs", "ref"): complete_documents,
    ("docs", "refs"): complete_documents,
    ("open", "target"): complete_documents,
    ("sessions", "name"): complete_sessions,
}
