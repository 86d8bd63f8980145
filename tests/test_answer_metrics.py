"""The rule-based answer metrics (finrag.evaluate.faithfulness) on hand-written answers,
passages and facts: which statements are supported and why, answer relevance, and
context precision and recall by pages."""

from __future__ import annotations

import pytest

from finrag.answer.citations import Citation
from finrag.answer.extraction import CalculationOutcome
from finrag.answer.result import Answer
from finrag.evaluate.faithfulness import (
    answer_relevance,
    context_scores,
    faithfulness,
    statements,
)
from finrag.retrieve.context import ContextChunk
from finrag.retrieve.filters import CompanyRef, QueryFilters
from finrag.retrieve.hybrid import Hit


def hit(chunk_id: int, content: str, *, doc: str = "ZEPHYR_2022_10K.pdf", page: int = 4) -> Hit:
    return Hit(
        chunk_id=chunk_id,
        document_id=1,
        document=f"/filings/{doc}",
        company="Zephyr Outfitters",
        fiscal_year=2022,
        fiscal_quarter=None,
        form_type="10-K",
        kind="text",
        page_start=page,
        page_end=page,
        section_path=["Item 7. Management's Discussion"],
        content=content,
        score=1.0,
        dense_rank=1,
        dense_score=0.6,
        text_rank=1,
        text_score=0.1,
    )


def cite(n: int, h: Hit, quote: str = "") -> Citation:
    return Citation(n, "ZEPHYR_2022_10K", [h.page_start, h.page_end], "", h.chunk_id, quote)


FREIGHT = hit(
    11,
    "Gross margin declined to 31.4% in fiscal 2022 from 33.0% a year earlier, mainly because "
    "inbound freight costs rose and clearance markdowns deepened in the fourth quarter.",
)
STORES = hit(12, "We closed 14 stores and opened 9 new stores during fiscal 2022.", page=7)


def text_answer(text: str, *chunks: Hit) -> Answer:
    context = [ContextChunk(n, h) for n, h in enumerate(chunks, 1)]
    return Answer(
        question="q",
        answer=text,
        citations=[cite(n, h) for n, h in enumerate(chunks, 1)],
        chunks=context,
    )


def test_a_statement_its_passage_holds_is_supported() -> None:
    a = text_answer(
        "Zephyr's gross margin declined to 31.4% in fiscal 2022, because inbound freight "
        "costs rose [1].",
        FREIGHT,
    )
    (s,) = statements(a)
    assert s.supported and s.by == "passage" and s.numbers_not_found == []
    assert s.overlap >= 0.5
    assert faithfulness([s]) == 1.0


def test_a_number_the_cited_passage_lacks_is_unsupported() -> None:
    # The margin is right in passage 1, but the sentence cites the store-count passage.
    a = text_answer(
        "Gross margin declined to 31.4% because inbound freight costs rose [2]. "
        "Zephyr closed 14 stores during fiscal 2022 [2].",
        FREIGHT,
        STORES,
    )
    wrong, right = statements(a)
    assert not wrong.supported and wrong.numbers_not_found == ["31.4%"]
    assert right.supported and right.by == "passage"
    assert faithfulness([wrong, right]) == 0.5


def test_words_the_passage_never_says_are_unsupported_even_without_numbers() -> None:
    a = text_answer(
        "The decline came from a currency translation loss in European subsidiaries [1].",
        FREIGHT,
    )
    (s,) = statements(a)
    assert not s.supported and s.by is None and s.overlap < 0.5


def test_a_change_the_evidence_prints_as_two_figures_is_supported() -> None:
    # The table prints both rates; the sentence's company, fiscal labels and direction
    # word are in no passage's words, and need not be.
    rates = hit(15, "Effective tax rate | 21.6 % | 24.6 %", page=61)
    a = text_answer(
        "Zephyr's effective tax rate decreased from 24.6% in FY2021 to 21.6% in FY2022 [1].",
        rates,
    )
    (s,) = statements(a)
    assert s.supported and s.by == "passage" and s.overlap == 1.0
    # A rate the table does not print is still caught.
    a.answer = "Zephyr's effective tax rate decreased from 26.0% in FY2021 [1]."
    (s,) = statements(a)
    assert not s.supported and s.numbers_not_found == ["26.0%"]


def test_an_uncited_sentence_is_read_against_everything_the_answer_cites() -> None:
    a = text_answer(
        "Clearance markdowns deepened in the fourth quarter. The margin fell to 31.4% [1].",
        FREIGHT,
    )
    first, second = statements(a)
    assert first.supported and second.supported
    # Given the passage but citing nothing: nothing supports it (a naive answer that
    # cites no source is not faithful by the passages it happened to be shown).
    bare = text_answer("Clearance markdowns deepened in the fourth quarter.", FREIGHT)
    bare.citations = []
    [only] = statements(bare)
    assert not only.supported


def test_notes_and_short_fragments_are_no_statements() -> None:
    a = text_answer(
        "Yes. Gross margin declined to 31.4% [1]. (A statement with a figure no quote "
        "holds was removed.)\n\nNot supported by the cited excerpts: the markdown claim.",
        FREIGHT,
    )
    assert [s.sentence for s in statements(a)] == ["Gross margin declined to 31.4% [1]."]


def test_a_figure_from_a_stored_fact_or_a_calculation_is_supported_by_the_fact() -> None:
    # The fact's row quote says "Net sales", the sentence "revenue": a passage's words
    # would not carry it, the stored value does.
    row = hit(21, "Net sales | 2,104 | 1,988", page=41)
    a = Answer(
        question="q",
        answer="Zephyr's revenue grew 5.8% to $2,104 million in fiscal 2022 [1].",
        route="facts",
        citations=[cite(1, row, "Net sales: 2,104")],
        chunks=[ContextChunk(1, row)],
        fact_values=[{"n": 1, "value": "2104000000"}, {"n": 2, "value": "1988000000"}],
        calculations=[
            CalculationOutcome(
                description="growth",
                expression="(2104 - 1988) / 1988 * 100",
                result=5.835,
            )
        ],
    )
    (s,) = statements(a)
    assert s.supported and s.by == "fact"
    a.calculations = []  # without the calculation, 5.8% comes from nowhere
    (s,) = statements(a)
    assert not s.supported


def test_a_refused_answer_has_no_statements() -> None:
    a = Answer(question="q", answer="Nothing relevant was found.", refused=True)
    assert statements(a) == [] and faithfulness([]) is None


def test_answer_relevance_names_entity_period_and_measure() -> None:
    filters = QueryFilters(
        companies=[CompanyRef(1, "Zephyr Outfitters Inc.", "ZPH")],
        years=[2022],
        matched={"company": ["Zephyr"]},
    )
    question = "What was Zephyr's gross margin in FY2022?"
    full = text_answer("Zephyr Outfitters' gross margin was 31.4% in fiscal 2022 [1].", FREIGHT)
    assert answer_relevance(question, filters, full) == {
        "value": 1.0,
        "parts": {"entity": True, "period": True, "measure": True},
        "missing": [],
    }
    # A ticker names the company; "FY22" names the year; the measure is missing.
    partial = text_answer("ZPH reported 31.4% for FY22 [1].", FREIGHT)
    scored = answer_relevance(question, filters, partial)
    assert scored["missing"] == ["measure"] and scored["value"] == pytest.approx(2 / 3, abs=1e-4)
    off = text_answer("Margins fell because freight costs rose [1].", FREIGHT)
    assert answer_relevance(question, filters, off)["missing"] == ["entity", "period", "measure"]
    refused = Answer(question=question, answer="", refused=True)
    assert answer_relevance(question, filters, refused) is None


def test_context_precision_and_recall_by_pages() -> None:
    other = hit(13, "Unrelated risk factor text.", page=20)
    chunks = [ContextChunk(1, FREIGHT), ContextChunk(2, STORES), ContextChunk(3, other)]
    gold = {("zephyr_2022_10k", 4), ("zephyr_2022_10k", 9)}
    precision, recall = context_scores(chunks, gold)
    assert precision == pytest.approx(1 / 3, abs=1e-4)  # only page 4 is gold
    assert recall == 0.5  # page 9 was never given
    # A passage spanning pages 8-9 reaches the second gold page.
    span = hit(14, "continued table", page=8)
    span.page_end = 9
    assert context_scores([*chunks, ContextChunk(4, span)], gold) == (0.5, 1.0)
    assert context_scores(chunks, set()) == (None, None)
    assert context_scores([], gold) == (None, 0.0)


def test_a_refusal_is_never_right_by_a_figure_it_computed() -> None:
    from finrag.answer.extraction import CalculationOutcome
    from finrag.evaluate.answers import score_answer
    from finrag.evaluate.dataset import EvalQuestion

    q = EvalQuestion("q1", "What was the growth?", "12.7%", [])
    refused = Answer(
        question=q.question,
        answer="Not answered: the figures could not be checked.",
        refused=True,
        refusal="unverified-facts",
        calculations=[CalculationOutcome("growth", "percent_change(275, 310)", 12.727)],
    )
    scored = score_answer(q, refused, tolerance=0.01, latency_s=1.0)
    assert not scored.auto_correct
    answered = Answer(question=q.question, answer="It grew.", calculations=refused.calculations)
    assert score_answer(q, answered, tolerance=0.01, latency_s=1.0).auto_correct
