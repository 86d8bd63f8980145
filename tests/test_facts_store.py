"""Facts in the real embedded Postgres: written with their document, replaced and removed
with it, read back as statements with provenance, and shown by `finrag facts`."""

from __future__ import annotations

import csv
import io
import json
from datetime import date
from decimal import Decimal

from finrag.db.documents import remove_document
from finrag.embed import get_embedder
from finrag.facts import model
from finrag.facts.checks import check_facts
from finrag.facts.extract import table_facts
from finrag.facts.periods import FiscalCalendar
from finrag.facts.statements import statement_view
from finrag.facts.store import count_facts, query_facts, write_facts
from finrag.ingest.chunk import Chunk
from tests.conftest import clean_env, run_finrag
from tests.corpus import add_document
from tests.test_facts_tables import APPLE_OPERATIONS


def _store_apple(conn, settings, name: str = "AAPL_2024_10K.htm") -> tuple[int, int]:
    """Apple's statement of operations as page 31's table chunk, with its facts."""
    texts = ["Apple designs smartphones.", APPLE_OPERATIONS]
    doc_id = add_document(
        conn,
        get_embedder(settings.embed),
        name,
        texts,
        company="Apple Inc.",
        year=2024,
        kinds=["text", "table"],
    )
    chunks = [
        Chunk(i, kind, i + 1, i + 1, [], text, text, 1)
        for i, (kind, text) in enumerate(zip(["text", "table"], texts, strict=True))
    ]
    company_id = conn.execute(
        "SELECT company_id FROM documents WHERE id = %s", (doc_id,)
    ).fetchone()[0]
    with conn.transaction():
        write_facts(conn, doc_id, company_id, check_facts(table_facts(chunks, FiscalCalendar(9))))
    return doc_id, company_id


def test_round_trip_with_provenance(store_and_settings) -> None:
    store, settings = store_and_settings
    with store.connect() as conn:
        doc_id, company_id = _store_apple(conn, settings)
        assert count_facts(conn, doc_id) == {"table": 24}  # 8 rows of numbers, 3 years
        [sales] = query_facts(
            conn, company_id=company_id, labels=["total net sales"], fiscal_year=2024
        )
        assert sales.value == Decimal("391035000000")
        assert (sales.unit, sales.months, sales.instant) == ("USD", 12, False)
        assert sales.period_end.isoformat() == "2024-09-28"
        assert sales.statement == model.INCOME
        assert (sales.page, sales.printed) == (2, "391,035")
        chunk = conn.execute(
            "SELECT content FROM chunks WHERE id = %s", (sales.chunk_id,)
        ).fetchone()
        assert "|Total net sales|391,035|" in chunk[0], "the fact points at the chunk printing it"


def test_facts_go_with_their_document(store_and_settings) -> None:
    store, settings = store_and_settings
    with store.connect() as conn:
        doc_id, _ = _store_apple(conn, settings)
        # Ingested again (changed file): the document and its facts are replaced whole.
        new_id, _ = _store_apple(conn, settings)
        assert new_id != doc_id
        assert (
            conn.execute("SELECT count(*) FROM facts WHERE document_id = %s", (doc_id,)).fetchone()[
                0
            ]
            == 0
        )
        assert count_facts(conn, new_id) == {"table": 24}  # 8 rows of numbers, 3 years
        with conn.transaction():
            remove_document(conn, new_id)
        assert conn.execute("SELECT count(*) FROM facts").fetchone()[0] == 0


def test_statement_view_periods_by_line_items(store_and_settings) -> None:
    store, settings = store_and_settings
    with store.connect() as conn:
        _, company_id = _store_apple(conn, settings)
        view = statement_view(conn, company_id, "Apple Inc.", model.INCOME)
    assert view.periods == ["FY2024", "FY2023", "FY2022"]
    names = [row.name for row in view.rows]
    assert names[:3] == ["Products (Net sales)", "Services (Net sales)", "Total net sales"]
    income = next(row for row in view.rows if row.label == "Net income")
    assert income.cells["FY2022"].value == Decimal("99803000000")


def test_facts_command_json_and_csv(store_and_settings) -> None:
    store, settings = store_and_settings
    with store.connect() as conn:
        _store_apple(conn, settings)
    env = clean_env(
        FINRAG_DATABASE_URL=settings.database_url.get_secret_value(),
        FINRAG_EMBED__BACKEND="hash",
    )
    shown = run_finrag("facts", "AAPL 2024", "--json", env=env)
    assert shown.returncode == 2, "an unknown company is a usage error naming what is held"
    assert "Apple Inc." in shown.stderr

    shown = run_finrag("facts", "Apple", "--statement", "income", "--json", env=env)
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["periods"] == ["FY2024", "FY2023", "FY2022"]
    row = next(r for r in data["rows"] if r["label"] == "Total net sales")
    cell = row["values"]["FY2024"]
    assert cell["value"] == "391035000000"
    assert (cell["page"], cell["printed"], cell["unit"]) == (2, "391,035", "USD")
    assert cell["document"].endswith("AAPL_2024_10K.htm")

    shown = run_finrag("facts", "Apple", "--csv", "--year", "2023", env=env)
    assert shown.returncode == 0, shown.stderr
    rows = list(csv.DictReader(io.StringIO(shown.stdout)))
    assert {r["period"] for r in rows} == {"FY2023"}
    assert any(r["line_item"] == "Net income" and r["value"] == "96995000000" for r in rows)

    shown = run_finrag("facts", "Apple", "--statement", "balance", env=env)
    assert shown.returncode == 7, "nothing to show is exit 7, as for every data command"
    assert "nothing found: no balance statement facts" in shown.stderr


def test_a_line_item_through_the_metric_dictionary(store_and_settings) -> None:
    from finrag.facts.dictionary import metric
    from finrag.facts.lookup import metric_values

    store, settings = store_and_settings
    with store.connect() as conn:
        _, company_id = _store_apple(conn, settings)
        revenue = metric_values(conn, company_id, metric("revenue"))
        eps = metric_values(conn, company_id, metric("EPS diluted"), fiscal_year=2023)
    assert [(v.period, v.value) for v in revenue] == [
        ("FY2024", Decimal("391035000000")),
        ("FY2023", Decimal("383285000000")),
        ("FY2022", Decimal("394328000000")),
    ]
    assert revenue[0].fact.label == "Total net sales", "the total, not the Products row"
    assert [(v.period, v.value, v.fact.unit) for v in eps] == [
        ("FY2023", Decimal("6.13"), "USD/shares")
    ]


def test_facts_command_metric(store_and_settings) -> None:
    store, settings = store_and_settings
    with store.connect() as conn:
        _store_apple(conn, settings)
    env = clean_env(
        FINRAG_DATABASE_URL=settings.database_url.get_secret_value(), FINRAG_EMBED__BACKEND="hash"
    )
    shown = run_finrag("facts", "Apple", "--metric", "net income", "--json", env=env)
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["metric"] == "net_income"
    first = data["values"][0]
    assert (first["period"], first["value"], first["page"], first["printed"]) == (
        "FY2024",
        "93736000000",
        2,
        "$93,736",
    )
    shown = run_finrag("facts", "Apple", "--metric", "net income", env=env | {"COLUMNS": "160"})
    assert shown.returncode == 0, shown.stderr
    assert "\t93,736\t" in shown.stdout and "93,736,000,000" not in shown.stdout, "in millions"
    assert "USD and shares in millions" in shown.stdout
    wrong = run_finrag("facts", "Apple", "--metric", "revnue", env=env)
    assert wrong.returncode == 2
    assert "revenue" in wrong.stderr, "an unknown metric suggests close matches"


YEAR_ONLY_BALANCE = """\
PART II > Item 8 > Consolidated Balance Sheet
(Dollars in millions)

|At December 31|2018|2017|
|---|---|---|
|Total current assets|$13,709|$14,277|
|Property, plant and equipment - net|8,738|8,866|
|Total assets|$36,500|$37,987|
"""


def test_a_balance_under_a_year_only_header_answers_for_that_year(store_and_settings) -> None:
    """An annual balance sheet whose columns name the year alone (3M's 10-K prints "2018",
    not a date): the balance at that fiscal year's end, found by the year's lookups."""
    from finrag.facts.dictionary import metric
    from finrag.facts.kpi import available_periods
    from finrag.facts.lookup import MetricResolver, MetricValue, Period

    store, settings = store_and_settings
    texts = ["Year-only Co. makes things.", YEAR_ONLY_BALANCE]
    with store.connect() as conn:
        doc_id = add_document(
            conn,
            get_embedder(settings.embed),
            "YONLY_2018_10K.pdf",
            texts,
            company="Year-only Co.",
            year=2018,
            kinds=["text", "table"],
        )
        company_id = conn.execute(
            "SELECT company_id FROM documents WHERE id = %s", (doc_id,)
        ).fetchone()[0]
        chunks = [
            Chunk(i, kind, i + 1, i + 1, [], text, text, 1)
            for i, (kind, text) in enumerate(zip(["text", "table"], texts, strict=True))
        ]
        facts = check_facts(table_facts(chunks, FiscalCalendar(12)))
        ppe = [f for f in facts if f.label and f.label.startswith("Property")]
        # "At December 31" over the years dates each column: the fiscal year's last day.
        assert {(f.period.end, f.period.fiscal_quarter) for f in ppe} == {
            (date(2018, 12, 31), 4),
            (date(2017, 12, 31), 4),
        }
        with conn.transaction():
            write_facts(conn, doc_id, company_id, facts)
        found = MetricResolver(conn, company_id).resolve(metric("ppe_net"), Period(2018))
        assert isinstance(found, MetricValue) and found.value == Decimal("8738000000")
        assert Period(2017) in available_periods(conn, company_id)


# A filer with noncontrolling interests, as P&G's 10-Q prints its statements (the figures
# of its nine months to March 31, 2025), on a calendar-year filer's pages for brevity.
NCI_INCOME = """\
PART I > Item 1 > Consolidated Statements of Earnings
(Amounts in millions)

|Years ended December 31|2024|2023|
|---|---|---|
|NET SALES|$63,395|$63,507|
|OPERATING INCOME|16,096|14,660|
|EARNINGS BEFORE INCOME TAXES|15,646|14,891|
|Income taxes|3,207|3,061|
|NET EARNINGS|12,439|11,830|
|Less: Net earnings attributable to noncontrolling interests|80|88|
|NET EARNINGS ATTRIBUTABLE TO NCI-HOLDING CO.|$12,359|$11,742|
"""
NCI_CASH_FLOW = """\
PART I > Item 1 > Consolidated Statements of Cash Flows
(Amounts in millions)

|Years ended December 31|2024|2023|
|---|---|---|
|Net earnings|12,439|11,830|
|Depreciation and amortization|2,100|2,050|
|Net cash provided by operating activities|12,800|14,100|
|Net cash used in investing activities|(2,800)|(2,600)|
"""


def test_consolidated_net_income_is_not_the_parents_share(store_and_settings) -> None:
    """A plain "Net earnings" in a filing that attributes income to noncontrolling
    interests is consolidated net income, on the cash-flow statement too: asked for net
    income, the store answers the parent's share, never the consolidated figure."""
    from finrag.facts.dictionary import metric
    from finrag.facts.lookup import MetricResolver, MetricValue, Period, metric_values

    store, settings = store_and_settings
    texts = ["NCI-Holding Co. makes things.", NCI_INCOME, NCI_CASH_FLOW]
    kinds = ["text", "table", "table"]
    with store.connect() as conn:
        doc_id = add_document(
            conn,
            get_embedder(settings.embed),
            "NCIH_2024_10K.pdf",
            texts,
            company="NCI-Holding Co.",
            year=2024,
            kinds=kinds,
        )
        company_id = conn.execute(
            "SELECT company_id FROM documents WHERE id = %s", (doc_id,)
        ).fetchone()[0]
        chunks = [
            Chunk(i, kind, i + 1, i + 1, [], text, text, 1)
            for i, (kind, text) in enumerate(zip(kinds, texts, strict=True))
        ]
        with conn.transaction():
            write_facts(
                conn, doc_id, company_id, check_facts(table_facts(chunks, FiscalCalendar(12)))
            )
        resolver = MetricResolver(conn, company_id)
        net = resolver.resolve(metric("net_income"), Period(2024))
        assert isinstance(net, MetricValue) and net.value == Decimal("12359000000")
        consolidated = resolver.resolve(metric("net_income_including_noncontrolling"), Period(2023))
        assert isinstance(consolidated, MetricValue)
        assert consolidated.value == Decimal("11830000000")
        # Every net income the store lists is the parent's share, whichever page it is on.
        listed = metric_values(conn, company_id, metric("net_income"))
        assert sorted(v.value for v in listed) == [Decimal("11742000000"), Decimal("12359000000")]
