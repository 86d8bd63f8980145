"""Rows whose statement's structure, not their label, says which line item they are."""

from __future__ import annotations

from finrag.facts.periods import FiscalCalendar
from finrag.facts.structure import readings
from finrag.facts.table_facts import facts_from_table_chunk

TITLE = "Item 8 > Consolidated Statements of Operations\n(In millions)\n\n"
HEAD = "||2024|2023|\n|---|---|---|\n"
# Apple prints one non-operating line: it takes operating income to pretax income alone.
APPLE = (
    "|Total net sales|391,035|383,285|\n|Operating income|123,216|114,301|\n"
    "|Other income/(expense), net|269|(565)|\n"
    "|Income before provision for income taxes|123,485|113,736|\n"
)
# Tesla prints interest beside it: "Other income (expense), net" is one component.
TESLA = (
    "|Total revenues|97,690|96,773|\n|Income from operations|7,076|8,891|\n"
    "|Interest income|1,569|1,066|\n|Interest expense|(350)|(156)|\n"
    "|Other income (expense), net|697|172|\n|Income before income taxes|8,992|9,973|\n"
)
# Boeing's "Total costs and expenses" is its cost of sales: G&A and R&D follow it.
BOEING = (
    "|Total revenues|66,517|77,794|\n|Cost of products|(60,213)|(63,969)|\n"
    "|Total costs and expenses|(68,508)|(70,070)|\n"
    "|General and administrative expense|(5,021)|(4,632)|\n"
    "|Research and development expense, net|(3,812)|(3,377)|\n"
    "|Loss from operations|(10,707)|(773)|\n"
    "|Net loss|(11,829)|(2,242)|\n"
    "|Less: net loss attributable to noncontrolling interest|(12)|(20)|\n"
    "|Net loss attributable to Boeing shareholders|(11,817)|(2,222)|\n"
    "|Less: Mandatory convertible preferred stock dividends|58||\n"
    "|Net loss attributable to Boeing common shareholders|(11,875)|(2,222)|\n"
)


def _read(rows: str) -> dict[str, str | None]:
    facts = facts_from_table_chunk(
        TITLE + HEAD + rows, page=1, chunk_ordinal=0, calendar=FiscalCalendar(12)
    )
    found = readings(facts, table=lambda f: f.period, filing=lambda f: 0)
    return {
        f"{facts[i].label} {facts[i].period.fiscal_year}": (m.name if m else None)
        for i, m in found.items()
    }


def test_other_income_is_the_nonoperating_total_only_where_the_arithmetic_says_so() -> None:
    assert _read(APPLE) == {
        "Other income/(expense), net 2024": "nonoperating_income",
        "Other income/(expense), net 2023": "nonoperating_income",
    }
    assert _read(TESLA) == {}


def test_costs_net_income_and_common_shares_by_the_rows_around_them() -> None:
    assert _read(BOEING) == {
        "Total costs and expenses 2024": "cost_of_revenue",
        "Total costs and expenses 2023": "cost_of_revenue",
        "Net loss 2024": "net_income_including_noncontrolling",
        "Net loss 2023": "net_income_including_noncontrolling",
        "Net loss attributable to Boeing common shareholders 2024": "net_income_to_common",
        "Net loss attributable to Boeing common shareholders 2023": "net_income_to_common",
    }
    # Without a noncontrolling interest or a preferred dividend, the labels stand.
    plain = BOEING.replace(
        "|Less: net loss attributable to noncontrolling interest|(12)|(20)|\n", ""
    )
    plain = plain.replace("|Net loss attributable to Boeing shareholders|(11,817)|(2,222)|\n", "")
    assert {k: v for k, v in _read(plain).items() if "Net" in k} == {}


def test_a_noncontrolling_share_with_its_words_run_together_is_not_the_parents() -> None:
    # Boeing's 10-Q printed to PDF and read back: "noncontrollinginterest", one word.
    from finrag.facts.dictionary import match_label

    glued = "Less: net earnings/(loss)attributable to noncontrollinginterest"
    found = match_label(glued, "income_statement")
    assert found is not None and found.name == "net_income_noncontrolling"
    balance = match_label("Noncontrollinginterests", "balance_sheet")
    assert balance is not None and balance.name == "noncontrolling_interests"
    for label, statement, name in (
        ("Basic lossper share", "income_statement", "eps_basic"),
        ("Cash & cash equivalents,includingrestricted,at beginningofyear", "cash_flow", None),
        ("Cash & cash equivalents, including restricted, at end ofperiod", "cash_flow", None),
    ):
        found = match_label(label, statement)
        assert found is not None and found.name == (name or "cash_and_restricted_cash")


def test_shareholders_equity_that_holds_the_noncontrolling_interest_is_total_equity() -> None:
    # P&G prints no parent-only subtotal: its "TOTAL SHAREHOLDERS' EQUITY" holds the
    # noncontrolling interest, as total liabilities and equity less liabilities shows.
    rows = (
        "|TOTAL LIABILITIES|73,006|71,811|\n|Retained earnings|131,000|128,000|\n"
        "|Noncontrolling interest|300|288|\n|TOTAL SHAREHOLDERS' EQUITY|52,545|50,559|\n"
        "|TOTAL LIABILITIES AND SHAREHOLDERS' EQUITY|125,551|122,370|\n"
    )
    content = "Item 1 > Consolidated Balance Sheets\n(Amounts in millions)\n\n" + HEAD + rows
    facts = facts_from_table_chunk(content, page=4, chunk_ordinal=0, calendar=FiscalCalendar(12))
    found = readings(facts, table=lambda f: f.period, filing=lambda f: 0)
    assert {facts[i].printed: m and m.name for i, m in found.items()} == {
        "52,545": "total_equity",
        "50,559": "total_equity",
    }
    # Where a "Total equity" row follows, the shareholders' line is the parent's.
    parent = rows.replace(
        "|TOTAL LIABILITIES AND", "|Total equity|52,545|50,559|\n|TOTAL LIABILITIES AND"
    )
    facts = facts_from_table_chunk(
        content.replace(rows, parent), page=4, chunk_ordinal=0, calendar=FiscalCalendar(12)
    )
    assert readings(facts, table=lambda f: f.period, filing=lambda f: 0) == {}


def test_a_bare_ppe_line_is_net_unless_the_balance_sheet_prints_its_depreciation() -> None:
    def read(rows: str) -> dict[str, str | None]:
        content = "Item 8 > Consolidated Balance Sheets\n(In millions)\n\n" + HEAD + rows
        facts = facts_from_table_chunk(
            content, page=5, chunk_ordinal=0, calendar=FiscalCalendar(12)
        )
        found = readings(facts, table=lambda f: f.period, filing=lambda f: 0)
        return {facts[i].printed: m and m.name for i, m in found.items()}

    # Pfizer prints one PP&E line: the net amount, the only one a balance sheet carries.
    net = "|Long-term investments|5,054|3,406|\n|Property, plant and equipment|14,882|13,745|\n"
    assert read(net + "|Total assets|181,476|154,229|\n") == {
        "14,882": "ppe_net",
        "13,745": "ppe_net",
    }
    # Verizon prints the gross cost, then accumulated depreciation and the net line.
    gross = (
        "|Property, plant and equipment|307,689|289,897|\n"
        "|Less Accumulated depreciation|200,255|190,201|\n"
        "|Property, plant and equipment, net|107,434|99,696|\n"
    )
    assert read(gross + "|Total assets|379,680|366,596|\n") == {}
