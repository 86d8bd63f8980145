"""The bounded full-text first stage on the real embedded Postgres: below the budget it is
the scan; above it, it scores the rows holding the most of the rarer terms first, and
with room for every matching row it returns exactly what the scan returns."""

from __future__ import annotations

import pytest
from pydantic import SecretStr, ValidationError

from finrag.config import RetrieveSettings, load_settings
from finrag.db import open_store
from finrag.embed import get_embedder
from finrag.retrieve.hybrid import hybrid_search, text_query
from tests.corpus import add_document

QUESTION = "Globex revenue dividends"
ALL_THREE = "Globex revenue and dividends both rose."


@pytest.fixture
def store_conn(database_url: str):
    settings = load_settings(database_url=SecretStr(database_url))
    store = open_store(settings)
    embedder = get_embedder(settings.embed)
    with store.connect() as conn:
        texts = [ALL_THREE] * 2
        texts += [f"Globex revenue in region {i}." for i in range(3)]  # no 'dividends'
        texts += [f"Globex dividends in plan {i}." for i in range(5)]  # no 'revenue'
        texts += [f"Globex staff in office {i}." for i in range(5)]
        texts += [f"Weather was mild in month {i}." for i in range(10)]
        first = add_document(
            conn, embedder, "GLOBEX_2023_10K.pdf", texts, company="Globex", year=2023
        )
        second = add_document(
            conn,
            embedder,
            "GLOBEX_2022_10K.pdf",
            ["Globex revenue in 2022.", "Globex dividends and revenue in 2022."],
            company="Globex",
            year=2022,
        )
        yield conn, (first, second)
    store.close()


def text_hits(conn, settings: RetrieveSettings, docs=None) -> list[tuple[int, float]]:
    hits = hybrid_search(conn, text_query(QUESTION), None, docs, settings, k=100)
    return [(h.chunk_id, h.text_score) for h in hits]


def contents(conn, ids) -> list[str]:
    rows = conn.execute("SELECT content FROM chunks WHERE id = ANY(%s)", (list(ids),))
    return sorted(r[0] for r in rows)


def test_bounded_stage_scores_the_rows_with_the_most_rare_terms_first(store_conn) -> None:
    conn, _ = store_conn
    # Budget 1: even the rarest term ('revenu', in 7 chunks) is over it.
    scan = RetrieveSettings(text_common_share=1.0, text_match_budget=1, text_first_stage="scan")
    bounded = scan.model_copy(update={"text_first_stage": "bounded", "text_bounded_rows": 3})
    exact = text_hits(conn, scan)
    # The scan scores every row holding the rarest term: 2 + 3 + 2 in the second filing.
    assert len(exact) == 7
    assert all("revenue" in c for c in contents(conn, [i for i, _ in exact]))
    found = text_hits(conn, bounded)
    assert len(found) == 3
    # First the rows holding all three terms (three of them, one in each filing)...
    top = contents(conn, [i for i, _ in found])
    assert top == sorted([ALL_THREE, ALL_THREE, "Globex dividends and revenue in 2022."])
    # ...which are also the scan's best three, with the same scores.
    assert sorted(found) == sorted(exact[:3])


def test_rows_missing_one_rare_term_can_come_first(database_url: str) -> None:
    """'orchid' is rarer than 'quartz' and 'saffron', but not rarer than both together: the
    row holding those two comes before the row holding 'orchid' alone."""
    settings = load_settings(database_url=SecretStr(database_url))
    store = open_store(settings)
    try:
        embedder = get_embedder(settings.embed)
        with store.connect() as conn:
            texts = ["Ledger orchid.", "Ledger quartz saffron.", "Orchid one.", "Orchid two."]
            texts += [f"Quartz saffron {i}." for i in range(3)]
            texts += [f"Weather was mild in month {i}." for i in range(13)]
            add_document(conn, embedder, "ACME_2023_10K.pdf", texts, company="ACME", year=2023)
            scan = RetrieveSettings(
                text_common_share=1.0, text_match_budget=1, text_first_stage="scan"
            )
            bounded = scan.model_copy(
                update={"text_first_stage": "bounded", "text_bounded_rows": 1}
            )
            query = text_query("ledger orchid quartz saffron")
            exact = hybrid_search(conn, query, None, None, scan, k=10)
            assert [h.content for h in exact] == ["Ledger quartz saffron.", "Ledger orchid."]
            found = hybrid_search(conn, query, None, None, bounded, k=10)
            assert [(h.chunk_id, h.text_score) for h in found] == [
                (exact[0].chunk_id, exact[0].text_score)
            ]
    finally:
        store.close()


def test_bounded_stage_with_room_for_every_row_is_the_scan(store_conn) -> None:
    conn, (first, _) = store_conn
    scan = RetrieveSettings(text_common_share=1.0, text_match_budget=1, text_first_stage="scan")
    bounded = scan.model_copy(update={"text_first_stage": "bounded", "text_bounded_rows": 7})
    assert text_hits(conn, bounded) == text_hits(conn, scan)
    assert text_hits(conn, bounded, [first]) == text_hits(conn, scan, [first])
    # A filter holds in the bounded stage: only the first filing's rows come back.
    in_first = text_hits(conn, bounded.model_copy(update={"text_bounded_rows": 2}), [first])
    assert contents(conn, [i for i, _ in in_first]) == [ALL_THREE, ALL_THREE]


def test_a_filter_within_the_budget_is_scanned(store_conn) -> None:
    """The second filing has 2 chunks: with a budget of 2 there is no need to bound."""
    conn, (first, second) = store_conn
    scan = RetrieveSettings(text_common_share=1.0, text_match_budget=2, text_first_stage="scan")
    bounded = scan.model_copy(update={"text_first_stage": "bounded", "text_bounded_rows": 1})
    exact = text_hits(conn, scan, [second])
    assert len(exact) == 2 and text_hits(conn, bounded, [second]) == exact
    # The first filing's 25 chunks are over the budget: bounded to one row.
    assert len(text_hits(conn, bounded, [first])) == 1


def test_below_the_budget_both_stages_match_every_term(store_conn) -> None:
    conn, _ = store_conn
    scan = RetrieveSettings(text_common_share=1.0, text_first_stage="scan")
    bounded = scan.model_copy(update={"text_first_stage": "bounded", "text_bounded_rows": 1})
    exact = text_hits(conn, scan)
    # Every chunk naming Globex, revenue or dividends: the rarest terms fit the budget.
    assert len(exact) == 17
    assert text_hits(conn, bounded) == exact


def test_first_stage_settings_parse(monkeypatch) -> None:
    assert load_settings().retrieve.text_first_stage == "bounded"
    monkeypatch.setenv("FINRAG_RETRIEVE__TEXT_FIRST_STAGE", "scan")
    monkeypatch.setenv("FINRAG_RETRIEVE__TEXT_BOUNDED_ROWS", "250")
    monkeypatch.setenv("FINRAG_RETRIEVE__TEXT_BOUNDED_TERMS", "3")
    settings = load_settings().retrieve
    assert (settings.text_first_stage, settings.text_bounded_rows) == ("scan", 250)
    assert settings.text_bounded_terms == 3
    with pytest.raises(ValidationError):
        RetrieveSettings(text_first_stage="postings")
    with pytest.raises(ValidationError):
        RetrieveSettings(text_bounded_rows=0)
    with pytest.raises(ValidationError):
        RetrieveSettings(text_bounded_terms=7)
