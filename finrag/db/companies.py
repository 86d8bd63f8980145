"""Companies and their aliases: "Apple Inc.", "Apple", "AAPL" are one company.

Aliases are stored squashed (lower case, no punctuation, no legal suffix, no spaces),
so "BEST BUY CO., INC.", "Best Buy" and the file-name form "BESTBUY" all meet.
"""

from __future__ import annotations

import re

import psycopg

from finrag.errors import UsageError

_SUFFIXES = re.compile(
    r"\b(the|incorporated|inc|corporation|corp|company|co|ltd|limited|plc|llc|lp|sa|ag|nv|"
    r"holdings?|group)\b"
)


def alias_key(name: str) -> str:
    """'BEST BUY CO., INC.' -> 'bestbuy'; '3M Company' -> '3m'; 'AAPL' -> 'aapl'."""
    text = re.sub(r"[^\w\s&]", " ", name.lower().replace("’", "'").replace("'s", ""))
    stripped = _SUFFIXES.sub(" ", text)
    key = re.sub(r"[\s_]+", "", stripped) or re.sub(r"[\s_]+", "", text)
    return key


def display_name(name: str) -> str:
    """Registrant names come in capitals ('3M COMPANY'): show them in title case."""
    if name.isupper() and len(name) > 5:
        return " ".join(
            w if re.fullmatch(r"[A-Z0-9&.]{1,3}\.?", w) and len(w) <= 2 else w.capitalize()
            for w in name.split()
        )
    return name


def resolve_company(conn: psycopg.Connection, names: list[str], ticker: str | None) -> int | None:
    """Find the company these names or this ticker belong to, or create it; return its id."""
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
        return conn.execute(
            "INSERT INTO companies (name, ticker, aliases) VALUES (%s, %s, %s) "
            "ON CONFLICT (name) DO UPDATE SET aliases = "
            "  ARRAY(SELECT DISTINCT unnest(companies.aliases || EXCLUDED.aliases)) "
            "RETURNING id, name",
            (best_name, ticker, keys),
        ).fetchone()
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
    return company_id, name


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
    return conn.execute(
        "SELECT id, name, ticker FROM companies WHERE %s = ANY(aliases) OR lower(ticker) = %s "
        "ORDER BY id LIMIT 1",
        (key, text.strip().lower()),
    ).fetchone()


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
