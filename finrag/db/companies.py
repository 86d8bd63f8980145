"""Companies and their aliases: "Apple Inc.", "Apple", "AAPL" are one company.

Aliases are stored as keys (finrag.db.company_names.alias_key), so "BEST BUY CO., INC.",
"Best Buy" and the file-name form "BESTBUY" all meet.
"""

from __future__ import annotations

import re

import psycopg

from finrag.db.company_names import alias_key, company_aliases
from finrag.errors import UsageError

__all__ = [
    "alias_key",
    "alias_owners",
    "aliases_of",
    "display_name",
    "document_aliases",
    "lookup_company",
    "remove_companies_without_documents",
    "require_company",
    "resolve_company",
]


def display_name(name: str) -> str:
    """Registrant names come in capitals ('3M COMPANY', 'BRISTOL-MYERS SQUIBB'): show them
    in title case."""
    if name.isupper() and len(name) > 5:
        return " ".join(
            w
            if re.fullmatch(r"[A-Z0-9&.]{1,3}\.?", w) and len(w) <= 2
            else "-".join(part.capitalize() for part in w.split("-"))
            for w in name.split()
        )
    return name


def resolve_company(
    conn: psycopg.Connection, names: list[str], ticker: str | None
) -> tuple[int, str] | None:
    """Find the company these names or this ticker belong to, or create it; return its id
    and name. Its aliases gain every name derived from these (company_names.company_aliases)
    that no other company holds."""
    names = [n for n in names if n and n.strip()]
    if not names and not ticker:
        return None
    keys = sorted({alias_key(n) for n in names} | ({ticker.lower()} if ticker else set()))
    keys = [k for k in keys if k]
    row = conn.execute(
        "SELECT id, name, ticker FROM companies WHERE aliases && %s::text[] "
        "OR (ticker IS NOT NULL AND ticker = %s) ORDER BY id LIMIT 1",
        (keys, ticker),
    ).fetchone()
    best_name = display_name(names[0]) if names else ticker
    if row is None:
        company_id, name = conn.execute(
            "INSERT INTO companies (name, ticker, aliases) VALUES (%s, %s, %s) "
            "ON CONFLICT (name) DO UPDATE SET aliases = "
            "  ARRAY(SELECT DISTINCT unnest(companies.aliases || EXCLUDED.aliases)) "
            "RETURNING id, name",
            (best_name, ticker, keys),
        ).fetchone()
    else:
        company_id, name, current_ticker = row
        conn.execute(
            "UPDATE companies SET aliases = ARRAY(SELECT DISTINCT unnest(aliases || %s::text[])), "
            "ticker = COALESCE(ticker, %s) WHERE id = %s",
            (
                keys,
                ticker if current_ticker is None and not _ticker_taken(conn, ticker) else None,
                company_id,
            ),
        )
    _add_derived_aliases(conn, company_id, names)
    return company_id, name


def remove_companies_without_documents(conn: psycopg.Connection) -> list[str]:
    """Delete the companies no stored document belongs to (their last one was removed);
    their names. A company is known only through its filings: one left without any would
    be named in refusals and completions as if the store held it."""
    rows = conn.execute(
        "DELETE FROM companies c WHERE NOT EXISTS "
        "(SELECT 1 FROM documents d WHERE d.company_id = c.id) RETURNING name"
    ).fetchall()
    return sorted(name for (name,) in rows)


def _add_derived_aliases(conn: psycopg.Connection, company_id: int, names: list[str]) -> None:
    """Store the names derived from the company's own (and these) names and ticker; an
    alias another company already holds stays that company's."""
    stored_name, ticker = conn.execute(
        "SELECT name, ticker FROM companies WHERE id = %s", (company_id,)
    ).fetchone()
    derived = sorted({alias_key(a) for a in company_aliases([stored_name, *names], ticker)} - {""})
    conn.execute(
        "UPDATE companies SET aliases = ARRAY(SELECT DISTINCT unnest(aliases || ARRAY("
        "  SELECT k FROM unnest(%s::text[]) AS k WHERE NOT EXISTS ("
        "    SELECT 1 FROM companies o WHERE o.id <> %s"
        "    AND (k = ANY(o.aliases) OR k = lower(o.ticker)))))) "
        "WHERE id = %s",
        (derived, company_id, company_id),
    )


def alias_owners(conn: psycopg.Connection) -> dict[str, tuple[int, str, str | None]]:
    """Each alias key the store's companies answer to, with its company (id, name, ticker):
    stored aliases and tickers first, then the names derived from each company's name,
    aliases and ticker (a store ingested before derivation has none stored). A derived
    key two companies share names neither."""
    rows = conn.execute("SELECT id, name, ticker, aliases FROM companies ORDER BY id").fetchall()
    owners: dict[str, tuple[int, str, str | None]] = {}
    derived: dict[str, set[tuple[int, str, str | None]]] = {}
    for company_id, name, ticker, aliases in rows:
        company = (company_id, name, ticker)
        for key in [*aliases, *([ticker.lower()] if ticker else [])]:
            owners.setdefault(key, company)
        for alias in company_aliases([name, *aliases], ticker):
            derived.setdefault(alias_key(alias), set()).add(company)
    for key, companies in derived.items():
        if key and key not in owners and len(companies) == 1:
            owners[key] = next(iter(companies))
    return owners


def aliases_of(conn: psycopg.Connection, company_id: int) -> list[str]:
    """A company's alias keys: those stored, and those derived that no other company holds."""
    row = conn.execute("SELECT aliases FROM companies WHERE id = %s", (company_id,)).fetchone()
    if row is None:
        return []
    derived = {key for key, owner in alias_owners(conn).items() if owner[0] == company_id}
    return sorted(set(row[0]) | derived)


def document_aliases(conn: psycopg.Connection, document_id: int) -> list[str]:
    """The alias keys of the company a document belongs to (none when it has no company)."""
    row = conn.execute("SELECT company_id FROM documents WHERE id = %s", (document_id,)).fetchone()
    return aliases_of(conn, row[0]) if row and row[0] is not None else []


def _ticker_taken(conn: psycopg.Connection, ticker: str | None) -> bool:
    if ticker is None:
        return False
    return (
        conn.execute("SELECT 1 FROM companies WHERE ticker = %s", (ticker,)).fetchone() is not None
    )


def lookup_company(conn: psycopg.Connection, text: str) -> tuple[int, str, str | None] | None:
    """The company a name, alias or ticker refers to: (id, name, ticker)."""
    key = alias_key(text)
    if not key:
        return None
    found = conn.execute(
        "SELECT id, name, ticker FROM companies WHERE %s = ANY(aliases) OR lower(ticker) = %s "
        "ORDER BY id LIMIT 1",
        (key, text.strip().lower()),
    ).fetchone()
    return found or alias_owners(conn).get(key)


def require_company(conn: psycopg.Connection, text: str) -> tuple[int, str, str | None]:
    """Like :func:`lookup_company`, but a name the store does not hold is a usage error
    that lists the companies it does hold."""
    found = lookup_company(conn, text)
    if found is None:
        held = [r[0] for r in conn.execute("SELECT name FROM companies ORDER BY name")]
        raise UsageError(
            f"no company {text!r} in the store",
            hint=f"the store holds: {', '.join(held) or 'nothing yet'}",
        )
    return found
