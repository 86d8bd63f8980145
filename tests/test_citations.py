"""Citations and facts without a model: mapping markers, moving a misnumbered fact to the
excerpt its quote is in, adding the citation a model dropped, and tables as the model
reads them."""

from __future__ import annotations

from finrag.answer.citations import attach_citations, check_numbers, map_citations
from finrag.answer.extraction import Fact, check_facts
from finrag.retrieve.context import ContextChunk
from finrag.tables import table_in_words
from tests.corpus import make_hit

CASH_FLOW = """PART II > Item 8. > Consolidated Statement of Cash Flows
(Millions)

|Cash Flows from Investing Activities|2018|2017|2016|
|---|---|---|---|
|Purchases of property, plant and equipment (PP&E)|(1,577)|(1,373)|(1,420)|
|Proceeds from sale of PP&E and other assets|262|49|58|"""


def chunk(n: int, content: str, *, page: int, kind: str = "text") -> ContextChunk:
    hit = make_hit(
        chunk_id=100 + n,
        document="/filings/3M_2018_10K.pdf",
        company="3M",
        fiscal_year=2018,
        kind=kind,
        page_start=page,
        page_end=page,
        section_path=["PART II", "Item 8.", "Cash Flows"],
        content=content,
        dense_rank=n,
        dense_score=0.6,
    )
    return ContextChunk(n, hit)


CONTEXT = [
    chunk(1, "Employment increased 1,980 positions in 2018.", page=39),
    chunk(2, CASH_FLOW, page=60, kind="table"),
    chunk(3, "3M paid dividends of $3.193 billion in 2018.", page=48),
]


def test_table_in_words_pairs_every_value_with_its_column() -> None:
    text = table_in_words(CASH_FLOW)
    assert text.startswith("PART II > Item 8. > Consolidated Statement of Cash Flows\n(Millions)")
    assert (
        "Purchases of property, plant and equipment (PP&E): 2018 (1,577); 2017 (1,373); "
        "2016 (1,420)" in text
    )
    assert "|" not in text
    assert table_in_words("no table here") == "no table here"
    assert CONTEXT[1].render().startswith("[2] 3M_2018_10K p.60 · Item 8. > Cash Flows\n")
    assert "2018 (1,577)" in CONTEXT[1].render()


def test_a_fact_named_under_the_wrong_excerpt_moves_to_its_quote() -> None:
    facts = check_facts(
        [
            Fact(
                source=3,
                quote="Purchases of property, plant and equipment (PP&E) (1,577)",
                value="1,577",
            ),
            Fact(source=3, quote="capex was 1,577", value="1,577"),  # quote is nowhere
            Fact(source=9, quote="whatever", value="7"),
        ],
        CONTEXT,
    )
    moved, unquoted, missing = facts
    assert (moved.ok, moved.source, moved.moved_from) == (True, 2, 3)
    assert not unquoted.ok and unquoted.problem == "1,577 not in excerpt [3]"
    assert not missing.ok and missing.problem == "no such excerpt"


def test_dropped_citations_are_added_only_for_numbers_the_facts_hold() -> None:
    facts = check_facts(
        [
            Fact(
                source=2, quote="Purchases of property, plant and equipment (PP&E)", value="(1,577)"
            )
        ],
        CONTEXT,
    )
    answer = (
        "3M's capital expenditure in 2018 was $1,577 million. It is on page 49 of the "
        "filing.\nDividends were $3.193 billion [3]."
    )
    text, added = attach_citations(answer, facts)
    assert added == [2]
    assert text == (
        "3M's capital expenditure in 2018 was $1,577 million [2]. It is on page 49 of the "
        "filing.\nDividends were $3.193 billion [3]."
    )
    problems = check_numbers(text, CONTEXT, facts, [])
    assert [(p.number, p.reason) for p in problems] == [("49", "no citation")]
    citations, invalid = map_citations(text + " Also [7].", CONTEXT, facts)
    assert [c.n for c in citations] == [2, 3] and invalid == [7]
    assert citations[0].pages == [60, 60] and "1,577" in citations[0].quote


def test_a_marker_after_the_full_stop_counts_for_the_sentence_before() -> None:
    facts = check_facts([Fact(source=2, quote="Purchases of property", value="(1,577)")], CONTEXT)
    answer = "3M's capital expenditure in 2018 was $1,577 million. [2]"
    assert attach_citations(answer, facts) == (answer, []), "no second [2]"
    uncited = "3M's capital expenditure in 2018 was $1,577 million. It grew."
    assert attach_citations(uncited, facts) == (
        "3M's capital expenditure in 2018 was $1,577 million [2]. It grew.",
        [2],
    ), "a marker on the next sentence's own words is not this one's"


# Corning's 2022 10-K, page 24, as PyMuPDF parses it: "December 31," split across columns.
TAX = """RESULTS OF OPERATIONS

||Year ended De|cember 31,|% change|
|---|---|---|---|
|Income before income taxes|$1,797|$2,426|(26%)|
|Provision for income taxes|$(411)|$(491)|16%|
|Effective tax rate|23%|20%||"""


def test_a_quote_from_a_table_as_the_model_read_it_finds_its_excerpt() -> None:
    context = [chunk(1, "The U.S. statutory rate of 21% applied.", page=26)]
    context.append(chunk(2, TAX, page=24, kind="table"))
    assert "Effective tax rate: Year ended De 23%; cember 31, 20%" in context[1].render()
    # What the embedded Qwen 1.5B returned, naming the wrong excerpt:
    quote = "Effective tax rate: Year ended De 23%; cember 31, 2022"
    (fact,) = check_facts([Fact(source=1, quote=quote, value="23%")], context)
    assert (fact.ok, fact.source, fact.moved_from) == (True, 2, 1)
