"""Questions about years no filing of the named company covers are refused before any
model call, naming what the store holds; years a held filing reports are not."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from finrag.answer.coverage import HeldFiling, covers, unheld_period_message
from finrag.answer.pipeline import Asker
from finrag.config import load_settings
from finrag.db import open_store
from finrag.db.documents import CompanyCoverage
from finrag.embed import get_embedder
from finrag.llm.fake import FakeLLM
from finrag.retrieve.filters import CompanyRef, QueryFilters
from tests.corpus import ACME_PAGES, GLOBEX_PAGES, add_document


@pytest.mark.parametrize(
    ("form", "filed_for", "year", "quarterly", "expected"),
    [
        ("10-K", 2024, 2022, False, True),  # three years of statements
        ("10-K", 2024, 2021, False, True),  # a calendar year off a fiscal one
        ("10-K", 2024, 2020, False, False),
        ("10-K", 2017, 2013, False, True),  # five years of selected financial data
        ("10-K", 2017, 2011, False, False),
        ("10-K", 2024, 2025, False, True),  # what it expects next
        ("10-K", 2024, 2026, False, False),
        ("10-K", 2024, 2022, True, True),
        ("10-K", 2024, 2021, True, False),  # no quarter three years back
        ("10-Q", 2025, 2023, False, True),
        ("10-Q", 2025, 2022, False, False),
        ("8-K", None, 1999, True, True),  # undated: may report anything
    ],
)
def test_what_a_filing_can_report(form, filed_for, year, quarterly, expected) -> None:
    filing = HeldFiling(company_id=1, fiscal_year=filed_for, form_type=form)
    assert covers(filing, year, quarterly=quarterly) is expected


def test_a_year_no_held_filing_covers_is_refused(database_url: str) -> None:
    settings = load_settings(database_url=SecretStr(database_url), answer={"use_llm": False})
    with open_store(settings) as store:
        embedder = get_embedder(settings.embed)
        with store.connect() as conn:
            add_document(conn, embedder, "ACME_2023_10K.pdf", ACME_PAGES, company="ACME", year=2023)
            add_document(
                conn, embedder, "GLOBEX_2024Q2_10Q.pdf", GLOBEX_PAGES, company="Globex", year=2024,
                form="10-Q", quarter=2,
            )  # fmt: skip
        asker = Asker(store, settings, llm=FakeLLM([]))  # a model call would fail
        old = asker.ask("What were ACME's capital expenditures in fiscal 2015?")
        quarter = asker.ask("What was Globex revenue in Q3 2021?")
        held = asker.ask("What was ACME revenue in 2021?")
        globex_2023 = asker.ask("What was Globex revenue in the second quarter of 2023?")
        unnamed = asker.ask("Which company had revenue of $4.0 billion in 2015?")
        both = asker.ask("Compare ACME and Globex capital expenditures in 2015 and 2023.")

    assert old.refused and old.refusal == "unheld-period"
    assert old.answer == (
        "The store holds no ACME filing covering fiscal 2015, so I cannot answer that. "
        "It holds ACME: FY2023 10-K."
    )
    assert quarter.refusal == "unheld-period"
    assert "covering Q3 of fiscal 2021" in quarter.answer
    assert "Globex: FY2024 Q2 10-Q" in quarter.answer
    # Held filings report these years (comparatives): past the check, to the excerpts.
    assert held.refusal != "unheld-period" and globex_2023.refusal != "unheld-period"
    assert unnamed.refusal != "unheld-period"  # no company named: nothing to hold it to
    assert both.refusal != "unheld-period"  # 2023 is held: answered for what is


@pytest.mark.parametrize(
    ("coverage", "holds"),
    [
        ([], "It holds: no filings yet"),
        ([CompanyCoverage("Globex", "GLBX", ["FY2023 10-K"])], "It holds: Globex (GLBX): FY2023"),
    ],
)
def test_a_company_without_filings_is_refused_naming_what_is_held(coverage, holds) -> None:
    # A company row left without a document (a store from before `docs rm` removed them).
    acme = CompanyRef(1, "ACME", None)
    message = unheld_period_message([acme], QueryFilters(companies=[acme], years=[2023]), coverage)
    assert message.startswith("The store holds no ACME filing, so I cannot answer that.")
    assert holds in message and "holds ." not in message
