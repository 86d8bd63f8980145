"""Retrieval aimed at the kind of question (finrag.retrieve.intents): intents imply section
kinds, which boost candidates but never filter them; several companies or years share the
top-k between their documents."""

from __future__ import annotations

import pytest

from finrag.retrieve.filters import CompanyRef, QueryFilters
from finrag.retrieve.hybrid import Hit
from finrag.retrieve.intents import capped, intent_kinds
from finrag.retrieve.retriever import Variant


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("Which uncertainties could hurt the business next year?", ("risk_factors",)),
        ("Is the company being sued over its patents?", ("legal_proceedings",)),
        ("What pushed the gross margin down, and why?", ("mdna",)),
        ("How much room is left under the revolving credit facility?", ("debt_note", "mdna")),
        ("What does management forecast for next year's sales?", ("guidance_outlook", "mdna")),
        ("How did the regions perform?", ("segment_note", "mdna")),
        ("How much went to buybacks this year?", ("equity_statement",)),
        ("What was total revenue in 2023?", ()),
    ],
)
def test_intents_imply_section_kinds(question: str, kinds: tuple[str, ...]) -> None:
    assert intent_kinds(question) == kinds


def _hit(chunk_id: int, document_id: int) -> Hit:
    return Hit(chunk_id, document_id, f"doc{document_id}", None, None, None, None, "text",
               1, 1, [], "", 1.0 / chunk_id, None, None, None, None)  # fmt: skip


def test_several_companies_share_the_top_k_and_nothing_is_dropped() -> None:
    hits = [_hit(i, 1) for i in range(1, 6)] + [_hit(i, 2) for i in range(6, 9)]
    two = QueryFilters(companies=[CompanyRef(1, "A", None), CompanyRef(2, "B", None)])
    out = capped(hits, two, 4)
    assert [h.document_id for h in out[:4]] == [1, 1, 2, 2]
    assert sorted(h.chunk_id for h in out) == list(range(1, 9))  # a cap, not a filter
    # One company and one year: the order stands.
    assert capped(hits, QueryFilters(years=[2024]), 4) == hits


def test_the_variant_part_names_the_stage() -> None:
    variant = Variant.parse("hybrid+filters+sections")
    assert variant.sections and variant.name == "hybrid+filters+sections"
