"""Numbered SQL migrations from ``sql/`` (see ``finrag.datadir``), applied in order and recorded.

Each migration runs in its own transaction and is recorded with a checksum in
``schema_migrations``; an advisory lock serializes processes that migrate at once.
Editing an applied migration is an error: add a new file instead.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

import psycopg

from finrag.datadir import data_dir
from finrag.db.connection import SCHEMA, SCHEMA_LOCK_KEY
from finrag.errors import MigrationError

_FILENAME = re.compile(r"^(\d{3})_([a-z0-9_]+)\.sql$")


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


@dataclass(frozen=True)
class MigrationStatus:
    applied: list[int]
    pending: list[int]

    @property
    def current(self) -> bool:
        return not self.pending


def discover() -> list[Migration]:
    """The migrations shipped with this version of finrag, in order."""
    found: dict[int, Migration] = {}
    for entry in data_dir("sql").iterdir():
        match = _FILENAME.match(entry.name)
        if not match:
            continue
        version = int(match.group(1))
        if version in found:
            raise MigrationError(
                f"two migrations numbered {version:03d}: {found[version].name}, {match.group(2)}"
            )
        found[version] = Migration(version, match.group(2), entry.read_text(encoding="utf-8"))
    return [found[v] for v in sorted(found)]


def _ensure_table(conn: psycopg.Connection) -> None:
    conn.execute(
        """
        CREATE TABLE IF NOT EXISTS finrag.schema_migrations (
            version     integer PRIMARY KEY,
            name        text NOT NULL,
            checksum    text NOT NULL,
            applied_at  timestamptz NOT NULL DEFAULT now()
        )
        """
    )


def _applied(conn: psycopg.Connection) -> dict[int, tuple[str, str]]:
    exists = conn.execute("SELECT to_regclass('finrag.schema_migrations') IS NOT NULL").fetchone()[
        0
    ]
    if not exists:
        return {}
    rows = conn.execute("SELECT version, name, checksum FROM finrag.schema_migrations").fetchall()
    return {version: (name, checksum) for version, name, checksum in rows}


def _verify(known: list[Migration], applied: dict[int, tuple[str, str]]) -> None:
    by_version = {m.version: m for m in known}
    for version, (name, checksum) in sorted(applied.items()):
        migration = by_version.get(version)
        if migration is None:
            raise MigrationError(
                f"the database has migration {version:03d}_{name}, which this finrag "
                "does not know: it was written by a newer version",
                hint="upgrade finrag (pip install -U finrag-cli)",
            )
        if migration.checksum != checksum:
            raise MigrationError(
                f"migration {version:03d}_{name} changed after it was applied",
                hint="restore the file; schema changes go into a new numbered migration",
            )


def status(conn: psycopg.Connection) -> MigrationStatus:
    known = discover()
    applied = _applied(conn)
    conn.rollback()  # leave no transaction open behind a read-only look
    _verify(known, applied)
    return MigrationStatus(
        applied=sorted(applied), pending=[m.version for m in known if m.version not in applied]
    )


def migrate(conn: psycopg.Connection) -> list[Migration]:
    """Apply every pending migration; return the ones applied now."""
    known = discover()
    done: list[Migration] = []
    conn.commit()
    conn.execute("SELECT pg_advisory_lock(%s)", (SCHEMA_LOCK_KEY,))
    conn.commit()
    try:
        with conn.transaction():
            conn.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
            _ensure_table(conn)
        applied = _applied(conn)
        conn.commit()
        _verify(known, applied)
        for migration in known:
            if migration.version in applied:
                continue
            try:
                with conn.transaction():
                    conn.execute(migration.sql)
                    conn.execute(
                        "INSERT INTO finrag.schema_migrations (version, name, checksum) "
                        "VALUES (%s, %s, %s)",
                        (migration.version, migration.name, migration.checksum),
                    )
            except psycopg.Error as exc:
                raise MigrationError(
                    f"migration {migration.version:03d}_{migration.name} failed: {exc}",
                    hint="nothing of it was applied; report this with `finrag doctor --json`",
                ) from exc
            done.append(migration)
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (SCHEMA_LOCK_KEY,))
        conn.commit()
    return done
