"""Text-route questions whose answer is arithmetic on printed figures, answered without the
model. Superlatives by ranking the rows of a printed table (finrag.answer.printed_ranking,
finrag.answer.stages.ranking): the question read, the table chosen by its measure words,
the asked year's column, growth against the same span a year earlier, a total the
release prints bare, a section of a balance sheet. A revised outlook by the new figure
beside the one it replaces (finrag.answer.stages.revision). The store is real (two small
Markdown earnings releases ingested into the embedded Postgres); each expected winner,
rate and revision is computed here from the printed figures, not written down."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest

from finrag.answer.pipeline import Asker
from finrag.answer.printed_ranking import rank, rank_ask, tables_in
from tests.conftest import asker_without_model, ingested_home

_RELEASE = """\
# {name} Reports Fourth Quarter and Full Year 2024 Results

{name} reported its results for the fourth quarter and the year ended December 31, 2024.
Net revenues rose on strong demand at its coastal properties, while island operations
were affected by travel restrictions.

## Outlook

For 2025, the Company now expects net revenues to grow {rev_new} percent (previously
{rev_old} percent) and adjusted EPS to reach ${eps_new} (previously ${eps_old}), while
capital spending is planned at about $900 million.

## Supplemental data

{upper} SUPPLEMENTAL DATA – NET REVENUES
(In thousands)

{header}
|---|---|---|---|---|
|Coastal Resorts|$1,200,000|$1,000,000|${coastal24}|${coastal23}|
|Mountain Properties|300,000|310,000|1,250,000|1,300,000|
|Island Operations|90,000|150,000|{island24}|{island23}|
|Management and other operations|10,000|8,000|50,000|40,000|
||$1,600,000|$1,468,000|${rev24}|${rev23}|

{upper} SUPPLEMENTAL DATA – ADJUSTED PROPERTY EBITDAR
(In thousands)

{header}
|---|---|---|---|---|
|Coastal Resorts|$400,000|$350,000|$1,600,000|$1,400,000|
|Mountain Properties|100,000|105,000|420,000|430,000|
|Island Operations|(20,000)|10,000|(60,000)|30,000|
|Corporate|(40,000)|(38,000)|(160,000)|(150,000)|
||$440,000|$427,000|$1,800,000|$1,710,000|

## Derivative instruments

The following table sets forth the notional amounts of our outstanding derivative instruments:
(dollars in millions)

|At December 31,|2024|2023|
|---|---|---|
|Interest rate swaps|$5,000|$4,000|
|Cross currency swaps|7,500|6,000|
|Foreign exchange forwards|600|900|

## Balance sheet

CONDENSED CONSOLIDATED BALANCE SHEETS
(In millions)

||December 31, 2024|December 31, 2023|
|---|---|---|
|Cash and cash equivalents|$2,000|$1,800|
|Property and equipment, net|14,000|13,500|
|Total assets|$16,000|$15,300|
|Liabilities|||
|Accounts payable|$700|$650|
|Customer deposits|1,900|1,700|
|Long-term debt|6,400|6,900|
|Other long-term obligations|1,000|1,100|
|Total liabilities|$10,000|$10,350|
|Total stockholders' equity|6,000|4,950|
|Total liabilities and stockholders' equity|$16,000|$15,300|
"""
_HEADER = (
    "||"
    + "|".join(
        f"{span} months ended December 31, {year}"
        for span in ("Three", "Twelve")
        for year in (2024, 2023)
    )
    + "|"
)
HARBOR = {"coastal24": "4,800,000", "coastal23": "4,000,000", "island24": "400,000"}
HARBOR |= {"island23": "800,000", "rev24": "6,500,000", "rev23": "6,140,000"}
HARBOR |= {"rev_new": "7", "rev_old": "4.5", "eps_new": "3.10", "eps_old": "3.25"}
# The other company's island business grew: an answer about Harbor must not read it.
SUMMIT = {"coastal24": "4,000,000", "coastal23": "4,200,000", "island24": "900,000"}
SUMMIT |= {"island23": "600,000", "rev24": "6,200,000", "rev23": "6,140,000"}
SUMMIT |= {"rev_new": "3", "rev_old": "5", "eps_new": "2.00", "eps_old": "2.00"}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("ranking")
    files = []
    for stem, name, values in (("HARBOR", "Harbor", HARBOR), ("SUMMIT", "Summit", SUMMIT)):
        path = folder / f"{stem}_2024Q4_EARNINGS.md"
        path.write_text(_RELEASE.format(name=name, upper=name.upper(), header=_HEADER, **values))
        files.append(path)
    with ingested_home(folder / "home", files) as built:
        yield built


@pytest.fixture
def ask(home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Asker]:
    yield from asker_without_model(home, monkeypatch)


def _growth(now: str, before: str) -> Decimal:
    a, b = (Decimal(v.replace(",", "")) for v in (now, before))
    return (a - b) / b * 100


def test_the_weakest_growth_is_computed_from_the_asked_years_columns(ask) -> None:
    answer = ask.ask("Which of Harbor's businesses saw the weakest top-line performance in 2024?")
    expected = _growth(HARBOR["island24"], HARBOR["island23"])
    assert not answer.refused, answer.answer
    assert answer.answer.startswith("Island Operations has the lowest growth"), answer.answer
    assert f"{expected:+.1f}%" in answer.answer
    assert answer.retrieval.get("decided") == "ranked rows of a printed table"
    rates = {round(Decimal(str(c.result)), 1) for c in answer.calculations}
    assert round(expected, 1) in rates
    # each rate's inputs are the printed cells, cited by page with the row as printed
    cited = {c.n: c for c in answer.citations}
    first = answer.calculations[0]
    assert {s for i in first.inputs for s in i["sources"]} <= set(cited)
    island = next(c for c in answer.citations if c.quote.startswith("Island Operations"))
    assert HARBOR["island24"] in island.quote and HARBOR["island23"] in island.quote
    assert all(c.document.startswith("HARBOR") for c in answer.citations)


def test_the_highest_level_names_its_share_of_a_total_printed_bare(ask) -> None:
    answer = ask.ask("Which property group had the highest adjusted EBITDAR at Harbor in 2024?")
    assert answer.answer.startswith("Coastal Resorts has the highest figure"), answer.answer
    share = Decimal(1_600_000) / Decimal(1_800_000) * 100
    assert f"{share:.1f}% of the total" in answer.answer
    assert "$1,600 million" in answer.answer
    assert answer.status != "unsupported", answer.numbers


def test_a_measure_no_dictionary_names_is_ranked_by_its_table(ask) -> None:
    answer = ask.ask(
        "Which derivative instrument had the largest notional amount at Harbor at the end of 2024?"
    )
    assert answer.answer.startswith("Cross currency swaps has the highest figure"), answer.answer
    assert "$7,500" in answer.answer
    # the ranking is the year asked: in 2023 the order is the same, the figures not
    assert "$6,000" not in answer.answer


def test_a_section_heading_the_question_names_confines_the_rows(ask) -> None:
    answer = ask.ask("What was the largest liability on Harbor's balance sheet in 2024?")
    assert answer.answer.startswith("Long-term debt has the highest figure"), answer.answer
    assert "64.0% of the total $10,000 million" in answer.answer  # Total liabilities
    assert "Property and equipment" not in answer.answer  # an asset, not under Liabilities


@pytest.mark.parametrize(
    "question",
    [
        "Which year had the highest net revenues at Harbor?",  # periods are its columns
        "What was the largest expense in Harbor's income statement in 2024?",  # none printed
        "Which is Harbor's largest asset on the balance sheet in 2024?",  # no such section
    ],
)
def test_a_ranking_no_table_holds_is_left_to_the_reading(ask, question) -> None:
    assert ask.ask(question).retrieval.get("decided") is None


def test_a_question_that_asks_no_ranking_goes_on_to_the_quotes(ask) -> None:
    answer = ask.ask("What drove Harbor's growth in net revenues in 2024?")
    assert answer.retrieval.get("decided") is None
    assert answer.refused and answer.refusal == "no-llm"  # the model would read the quotes


@pytest.mark.parametrize(
    ("question", "lowest", "growth"),
    [
        ("Which division posted the biggest decline in sales last year?", True, True),
        ("Which region grew the fastest in 2023?", False, True),
        ("Which unit had the smallest drop in revenue?", False, True),
        ("What was the largest asset on the balance sheet?", False, False),
        ("Which segment earned the least operating income?", True, False),
    ],
)
def test_the_direction_and_the_kind_of_ranking_are_read(question, lowest, growth) -> None:
    found = rank_ask(question)
    assert found is not None
    assert (found.lowest, found.growth) == (lowest, growth)


@pytest.mark.parametrize(
    "question",
    [
        "What was the revenue of the largest segment and why did it grow?",
        "What were the total revenues in 2024?",
        "Which region had the highest and the lowest margin?",
    ],
)
def test_questions_that_rank_nothing_are_left_alone(question) -> None:
    assert rank_ask(question) is None


def test_a_table_cut_under_a_repeated_header_is_read_as_one() -> None:
    half = "||2024|2023|\n|---|---|---|\n"
    text = (
        "REVENUE BY REGION (In millions)\n\n" + half + "|North|50|40|\n|South|30|35|\n\n"
        "REVENUE BY REGION (In millions)\n\n" + half + "|West|25|20|\n||105|95|\n"
    )
    [table] = tables_in(text)
    assert [r.label for r in table.rows] == ["North", "South", "West"]
    assert table.totals and table.totals[-1].values[1] == 105  # the bare row sums the three
    ranked = rank(rank_ask("Which region had the highest revenue in 2024?"), [table], 2024)
    assert ranked is not None and ranked.order[0][0].label == "North"
    assert round(ranked.share, 1) == round(Decimal(50) / 105 * 100, 1)


def test_a_raised_outlook_is_the_new_figure_less_the_old(ask) -> None:
    answer = ask.ask(
        "By how many percentage points did Harbor raise its net revenue growth outlook for 2025?"
    )
    points = Decimal(HARBOR["rev_new"]) - Decimal(HARBOR["rev_old"])
    assert answer.retrieval.get("decided") == "a revised figure beside the one it replaces"
    assert answer.answer.startswith(f"The guidance was raised by {points} percentage points")
    assert answer.calculations[0].result == float(points)
    [quote] = answer.evidence
    assert f"(previously {HARBOR['rev_old']} percent)" in quote["quote"]
    assert quote["document"].startswith("HARBOR")  # not Summit's, which lowered it


def test_the_revised_figure_the_question_names_is_the_one_read(ask) -> None:
    answer = ask.ask("How much did Harbor change its adjusted EPS guidance for 2025?")
    cut = Decimal(HARBOR["eps_old"]) - Decimal(HARBOR["eps_new"])
    assert answer.answer.startswith(f"The guidance was lowered by ${cut:.2f}".rstrip("0")), (
        answer.answer
    )


def test_an_outlook_question_that_asks_no_revision_is_left_to_the_reading(ask) -> None:
    answer = ask.ask("What capital spending does Harbor plan for 2025?")
    assert answer.retrieval.get("decided") is None
