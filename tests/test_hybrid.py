"""The hybrid SQL on the real embedded Postgres: exact acronyms, both fusions, halves
switched off, and filtered HNSW search that still returns k rows."""

from __future__ import annotations

import math

import pytest
from pydantic import SecretStr

from finrag.config import RetrieveSettings, load_settings
from finrag.db import open_store
from finrag.embed import get_embedder
from finrag.retrieve.filters import QueryFilters
from finrag.retrieve.hybrid import hybrid_search, search, text_query
from tests.corpus import add_document


@pytest.fixture
def db(database_url: str):
    settings = load_settings(database_url=SecretStr(database_url))
    store = open_store(settings)
    embedder = get_embedder(settings.embed)
    with store.connect() as conn:
        yield conn, embedder
    store.close()


def fill(conn, embedder) -> None:
    add_document(
        conn,
        embedder,
        "ACME_2023_10K.pdf",
        [
            "Purchases of PP&E were $1,577 million in 2023.",
            "The pp team shipped release e of the e-commerce site.",
            "M&A activity picked up: two acquisitions closed.",
            "Mr. M said the quarter was strong.",
            "Revenue grew 12% to $9.6 billion on strong demand.",
            "Operating income rose to $2.1 billion; margin expanded.",
        ],
        company="ACME",
        year=2023,
    )
    add_document(
        conn,
        embedder,
        "GLOBEX_2023_10K.pdf",
        [
            "Globex revenue fell 3% to $4.0 billion.",
            "Globex capital expenditures were $95 million.",
            "Dividends of $1.10 per share were paid.",
        ],
        company="Globex",
        year=2023,
    )


def test_exact_acronyms_match_only_the_glued_token(db) -> None:
    conn, embedder = db
    fill(conn, embedder)
    settings = RetrieveSettings()
    for question, expected in (
        ("PP&E purchases", "Purchases of PP&E"),
        ("M&A", "M&A activity"),
    ):
        query = text_query(question)
        hits = hybrid_search(conn, query, None, None, settings, k=10)
        matched = [h.content for h in hits if "PP&E" not in question or h.text_rank]
        assert matched and matched[0].startswith(expected), matched
        assert all(h.dense_rank is None for h in hits), "dense half was off"
    only = hybrid_search(conn, text_query("M&A"), None, None, settings, k=10)
    assert [h.content[:12] for h in only] == ["M&A activity"]
    # Control: the english configuration alone matches the unrelated 'm' chunks too.
    english = conn.execute(
        "SELECT count(*) FROM chunks WHERE to_tsvector('english', embed_text) "
        "@@ websearch_to_tsquery('english', 'M&A')"
    ).fetchone()[0]
    assert english >= 2


def test_rrf_is_the_weighted_sum_of_reciprocal_ranks(db) -> None:
    conn, embedder = db
    fill(conn, embedder)
    question = "How much did revenue grow and what were capital expenditures?"
    vector = embedder.embed([question])[0]
    settings = RetrieveSettings(dense_weight=0.7, text_weight=1.3, rrf_k=10)
    hits = hybrid_search(conn, text_query(question), vector, None, settings, k=50)
    assert any(h.dense_rank and h.text_rank for h in hits), "some chunks are in both halves"
    assert any(h.dense_rank and not h.text_rank for h in hits)
    for h in hits:
        expected = (0.7 / (10 + h.dense_rank) if h.dense_rank else 0) + (
            1.3 / (10 + h.text_rank) if h.text_rank else 0
        )
        assert math.isclose(h.score, expected, rel_tol=1e-9)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    dense_only = hybrid_search(
        conn, text_query(question), vector, None, RetrieveSettings(text_weight=0), k=50
    )
    ranked = [h.dense_rank for h in dense_only if h.dense_rank]
    assert ranked == sorted(ranked), "with the text weight at 0 the dense order decides"


def test_minmax_scales_each_half_to_unit_range(db) -> None:
    conn, embedder = db
    fill(conn, embedder)
    question = "revenue growth and capital expenditures"
    vector = embedder.embed([question])[0]
    settings = RetrieveSettings(fusion="minmax", dense_weight=2.0, text_weight=1.0)
    hits = hybrid_search(conn, text_query(question), vector, None, settings, k=50)
    dense = [h.dense_score for h in hits if h.dense_score is not None]
    text = [h.text_score for h in hits if h.text_score is not None]
    assert len(dense) == 9 and len(text) >= 2  # every chunk is a dense candidate

    def scaled(value, values):
        if value is None:
            return 0.0
        lo, hi = min(values), max(values)
        return 1.0 if hi == lo else (value - lo) / (hi - lo)

    for h in hits:
        expected = 2.0 * scaled(h.dense_score, dense) + scaled(h.text_score, text)
        assert math.isclose(h.score, expected, rel_tol=1e-6, abs_tol=1e-9)
    assert hits[0].score <= 3.0 + 1e-9


def test_filters_restrict_both_halves_and_widen_when_empty(db) -> None:
    conn, embedder = db
    fill(conn, embedder)
    globex = conn.execute("SELECT id FROM companies WHERE name = 'Globex'").fetchone()[0]
    from finrag.retrieve.filters import CompanyRef

    filters = QueryFilters(companies=[CompanyRef(globex, "Globex", None)], years=[2019])
    question = "revenue"
    result = search(conn, question, embedder.embed([question])[0], filters, RetrieveSettings())
    assert result.widened == ["years"]
    assert result.applied == {"company_ids": [globex]}
    assert {h.document for h in result.hits} == {"/filings/GLOBEX_2023_10K.pdf"}


def test_filtered_dense_search_still_returns_k_rows(db) -> None:
    """One small document among a big one: HNSW alone finds the big one's chunks first;
    iterative scanning keeps going until k rows pass the filter."""
    conn, embedder = db
    big = add_document(
        conn,
        embedder,
        "BIG_2023_10K.pdf",
        [f"alpha revenue grew strongly in region {i} with sales up" for i in range(300)],
        company="Big",
        year=2023,
    )
    small = add_document(
        conn,
        embedder,
        "SMALL_2023_10K.pdf",
        [f"beta dividends were cut in plan {i} by the board" for i in range(30)],
        company="Small",
        year=2023,
    )
    vector = embedder.embed(["alpha revenue grew strongly with sales up"])[0]
    settings = RetrieveSettings(candidates=10, ef_search=10)
    # With a selective filter the planner rightly prefers an exact sort over the chunks of
    # that document (via the (document_id, ordinal) index). Take both other paths away in
    # this throwaway database so the HNSW path is the one under test.
    conn.execute("ALTER TABLE chunks DROP CONSTRAINT chunks_document_id_ordinal_key")
    conn.execute("SET enable_seqscan = off")
    plan = "\n".join(
        r[0]
        for r in conn.execute(
            "EXPLAIN SELECT id FROM chunks WHERE document_id = ANY(%s) "
            "ORDER BY embedding <=> %s LIMIT 10",
            ([small], vector),
        ).fetchall()
    )
    assert "chunks_embedding_hnsw_idx" in plan
    hits = hybrid_search(conn, text_query(""), vector, [small], settings, k=10)
    assert len(hits) == 10 and {h.document_id for h in hits} == {small}
    # Control: the same filtered scan without iterative scanning comes back short.
    with conn.transaction():
        conn.execute("SET LOCAL hnsw.iterative_scan = off")
        conn.execute("SET LOCAL hnsw.ef_search = 10")
        rows = conn.execute(
            "SELECT id FROM chunks WHERE document_id = ANY(%s) ORDER BY embedding <=> %s LIMIT 10",
            ([small], vector),
        ).fetchall()
    assert len(rows) < 10
    assert big != small


RECOUNT = """
SELECT u.lexeme, count(*) FROM chunks, unnest(chunks.tsv) AS u GROUP BY u.lexeme
UNION ALL SELECT '', count(*) FROM chunks
"""


def stats(conn) -> dict[str, int]:
    return dict(conn.execute("SELECT lexeme, chunks FROM lexeme_stats WHERE chunks > 0"))


def test_lexeme_counts_stay_exact_through_insert_and_cascade(db) -> None:
    conn, embedder = db
    fill(conn, embedder)
    assert stats(conn) == dict(conn.execute(RECOUNT).fetchall())
    assert stats(conn)[""] == 9 and stats(conn)["ppe"] == 1
    with conn.transaction():
        conn.execute("DELETE FROM documents WHERE path LIKE %s", ("%GLOBEX%",))
    assert stats(conn) == dict(conn.execute(RECOUNT).fetchall())
    assert stats(conn)[""] == 6 and "globex" not in stats(conn)


def test_full_text_weighs_rare_terms_over_common_ones(db) -> None:
    conn, embedder = db
    texts = [f"The total amount was stable in quarter {i}." for i in range(8)]
    texts += [
        "The amount and the amount and the amount again.",
        "Capital expenditure rose.",
    ]
    add_document(conn, embedder, "ACME_2023_10K.pdf", texts, company="ACME", year=2023)
    settings = RetrieveSettings(text_common_share=1.0)  # keep every term for this check
    hits = hybrid_search(conn, text_query("amount expenditure"), None, None, settings, k=20)
    assert hits[0].content == "Capital expenditure rose.", [h.content for h in hits[:3]]
    n, df = 10, {"amount": 9, "expenditur": 1}

    def weight(term: str, tf: int) -> float:
        idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
        return idf * tf * 2.2 / (tf + 1.2)

    assert math.isclose(hits[0].text_score, weight("expenditur", 1), rel_tol=1e-6)
    repeated = next(h for h in hits if h.content.startswith("The amount and"))
    assert math.isclose(repeated.text_score, weight("amount", 3), rel_tol=1e-6)
    # At the default share, 'amount' (in 90% of chunks) is left out of the match.
    hits = hybrid_search(
        conn, text_query("amount expenditure"), None, None, RetrieveSettings(), k=20
    )
    assert [h.content for h in hits] == ["Capital expenditure rose."]
    # ...unless it is the only term: the rarest term always stays.
    hits = hybrid_search(conn, text_query("amount"), None, None, RetrieveSettings(), k=20)
    assert len(hits) == 9


def test_question_analysis_reaches_the_line_item(database_url: str) -> None:
    """'capex' is 'purchases of property, plant and equipment' in a cash-flow statement:
    with the analysis both halves find that line; with the question as typed they do not."""
    from finrag.retrieve import Retriever
    from tests.corpus import add_small_filings

    settings = load_settings(database_url=SecretStr(database_url))
    store = open_store(settings)
    try:
        embedder = get_embedder(settings.embed)
        with store.connect() as conn:
            add_small_filings(conn, embedder)
        question = (
            "What was ACME's capex in 2022? Give a response by relying on the cash flow statement."
        )
        analyzed = Retriever(store, settings, embedder=embedder).retrieve(question, k=4)
        plain_settings = settings.model_copy(
            update={"retrieve": settings.retrieve.model_copy(update={"query_analysis": False})}
        )
        plain = Retriever(store, plain_settings, embedder=embedder).retrieve(question, k=4)
    finally:
        store.close()
    assert analyzed.hits[0].content.startswith("Purchases of property, plant and equipment")
    assert "purchases of property plant and equipment" in analyzed.query
    assert analyzed.hits[0].text_rank == 1
    # As typed, 'capex' is in no chunk: the full-text half finds the line by its year only.
    assert plain.query == question
    line = next(h for h in plain.hits if h.content.startswith("Purchases of property"))
    assert line.text_rank != 1
    assert analyzed.hits[0].text_score > 2 * line.text_score
