"""Connections to the store, and the checks that a server can be one."""

from __future__ import annotations

import re
from dataclasses import dataclass

import psycopg

from finrag.errors import DatabaseUnavailable, VectorExtensionMissing

SCHEMA = "finrag"  # where our tables live; see sql/001_schema.sql
# Serializes schema changes (extension, migrations) between processes opening one store.
SCHEMA_LOCK_KEY = 0x66696E72  # "finr"
MIN_PGVECTOR = (0, 7, 0)  # halfvec, sparsevec and the HNSW fixes we rely on
_CONNECT_TIMEOUT_S = 10


@dataclass(frozen=True)
class ServerInfo:
    server_version: str
    pgvector_version: str


_PASSWORD_PARAM = re.compile(r"(?i)(\bpassword=)('[^']*'|[^&\s]*)")


def redact(url: str) -> str:
    """The URL with any password replaced, for messages and `config show`. Found by hand,
    not by urlsplit: a URL it cannot parse, or one without a scheme, is shown too."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    userinfo, at, _ = rest.split("/", 1)[0].rpartition("@")
    if at and ":" in userinfo:
        rest = f"{userinfo.split(':', 1)[0]}:***@{rest[len(userinfo) + 1 :]}"
    return _PASSWORD_PARAM.sub(r"\1***", f"{scheme}{sep}{rest}")


def _scrub(text: str, url: str) -> str:
    """A driver message without the URL's password: libpq quotes the URI it could not parse."""
    text = text.replace(url, redact(url))
    userinfo = url.partition("://")[2].split("/", 1)[0].rpartition("@")[0]
    password = userinfo.partition(":")[2]
    return text.replace(password, "***") if password else text


def connect(url: str, *, autocommit: bool = False) -> psycopg.Connection:
    """Open a connection or raise ``DatabaseUnavailable`` saying what was tried."""
    if not re.match(r"^postgres(ql)?://", url):
        raise DatabaseUnavailable(
            f"not a PostgreSQL URL: {redact(url)!r}",
            hint="use postgresql://USER:PASSWORD@HOST:PORT/DBNAME, or unset "
            "FINRAG_DATABASE_URL for the embedded server",
        )
    try:
        return psycopg.connect(
            url,
            autocommit=autocommit,
            connect_timeout=_CONNECT_TIMEOUT_S,
            options=f"-c search_path={SCHEMA},public",
            application_name="finrag",
        )
    except psycopg.OperationalError as exc:
        reason = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        reason = _scrub(reason, url)
        raise DatabaseUnavailable(
            f"cannot connect to {redact(url)}: {reason}",
            hint="is the server running and the URL right? With docker compose: "
            "`docker compose up -d db`; or unset FINRAG_DATABASE_URL for the embedded server",
        ) from None
    except psycopg.ProgrammingError as exc:  # malformed connection string
        raise DatabaseUnavailable(
            f"invalid database URL {redact(url)}: {_scrub(str(exc), url)}",
            hint="use postgresql://USER:PASSWORD@HOST:PORT/DBNAME",
        ) from None


def parse_version(text: str) -> tuple[int, ...]:
    """'0.8.1' -> (0, 8, 1); trailing labels are ignored."""
    numbers = re.findall(r"\d+", text.split("-")[0])
    return tuple(int(n) for n in numbers[:3])


def ensure_pgvector(conn: psycopg.Connection) -> ServerInfo:
    """Create or check the ``vector`` extension; raise if absent or too old."""
    server_version = conn.execute("SHOW server_version").fetchone()[0]
    row = conn.execute(
        "SELECT default_version, installed_version FROM pg_available_extensions "
        "WHERE name = 'vector'"
    ).fetchone()
    wanted = ".".join(map(str, MIN_PGVECTOR))
    if row is None:
        raise VectorExtensionMissing(
            f"the PostgreSQL {server_version} server has no pgvector extension",
            hint=f"install pgvector >= {wanted} on it (the pgvector/pgvector Docker image "
            "has it), or unset FINRAG_DATABASE_URL to use the embedded server",
        )
    default_version, installed = row
    if installed is None:
        try:
            # IF NOT EXISTS alone races: two sessions can both pass the check.
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK_KEY,))
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector WITH SCHEMA public")
            conn.commit()
        except psycopg.errors.InsufficientPrivilege:
            conn.rollback()
            raise VectorExtensionMissing(
                "pgvector is available but not enabled in this database, "
                "and this user may not enable it",
                hint="ask an administrator to run `CREATE EXTENSION vector;` in it",
            ) from None
        installed = default_version
    if parse_version(installed) < MIN_PGVECTOR:
        raise VectorExtensionMissing(
            f"pgvector {installed} is too old; finrag needs >= {wanted}",
            hint="upgrade the package on the server, then run `ALTER EXTENSION vector UPDATE;`",
        )
    return ServerInfo(server_version=server_version, pgvector_version=installed)
