"""Company names as people write them: aliases derived from registrant names and tickers,
former names read from filing text, the nickname table, and matching questions against
them in a real store."""

from __future__ import annotations

import json
import os

import pytest
from pydantic import SecretStr

from finrag.config import load_settings
from finrag.db import open_store
from finrag.db.companies import aliases_of, lookup_company, resolve_company
from finrag.db.company_names import (
    alias_key,
    base_name,
    company_aliases,
    former_names,
    issuers,
    needs_capital,
    parse_issuers,
)
from finrag.ingest.metadata import from_content, resolve_metadata
from finrag.ingest.parse import Page, ParsedDocument
from finrag.retrieve.filters import extract_query_filters
from tests.conftest import run_finrag


def keys(name: str, ticker: str | None = None) -> set[str]:
    return {alias_key(a) for a in company_aliases([name], ticker)}


@pytest.mark.parametrize(
    ("name", "ticker", "expected"),
    [
        ("Johnson & Johnson", "JNJ", {"johnson&johnson", "jnj", "j&j"}),
        ("The Procter & Gamble Company", "PG", {"procter&gamble", "pg", "p&g", "png"}),
        (
            "International Business Machines Corporation",
            "IBM",
            {"internationalbusinessmachines", "ibm"},
        ),
        ("Netflix, Inc.", "NFLX", {"netflix", "nflx"}),
        ("Best Buy Co., Inc.", "BBY", {"bestbuy", "bby"}),
        ("Costco Wholesale Corporation", None, {"costcowholesale", "costco", "cost"}),
        ("MGM Resorts International", None, {"mgmresortsinternational", "mgmresorts", "mgm"}),
        ("Amazon.com, Inc.", None, {"amazoncom", "amazon", "amzn"}),
        ("American Express Company", None, {"americanexpress", "amex", "axp"}),
        ("Verizon Communications Inc.", None, {"verizoncommunications", "verizon", "vz"}),
        ("Advanced Micro Devices, Inc.", "AMD", {"advancedmicrodevices", "amd"}),
        ("United Parcel Service, Inc.", "UPS", {"unitedparcelservice", "ups"}),
        ("Eli Lilly and Company", "LLY", {"elilillyand", "elililly", "lilly", "lly"}),
        ("Meta Platforms, Inc.", "META", {"metaplatforms", "meta", "facebook", "fb"}),
        ("3M COMPANY", None, {"3m", "mmm"}),
        # No table entry: only what the name itself implies.
        ("Archer-Daniels-Midland Company", "ADM", {"archerdanielsmidland", "adm"}),
        ("Initech Software Solutions, Inc.", None, {"initechsoftwaresolutions", "initech"}),
        ("Stanley Black & Decker, Inc.", "SWK", {"stanleyblack&decker", "swk", "sbd"}),
        # Generic first words name no one; two-letter initialisms are too short.
        ("General Electric Company", None, {"generalelectric", "ge"}),
        ("American Airlines Group Inc.", "AAL", {"americanairlines", "aal"}),
        ("Texas Instruments Incorporated", "TXN", {"texasinstruments", "txn"}),
        ("Home Depot, Inc.", "HD", {"homedepot", "hd"}),
        # A cover read with a word split in two (NVIDIA's 10-Q in the dev set) gives no "NCO".
        ("NVIDIA CORP ORATION", None, {"nvidiaoration"}),
        # A derived name that is another well-known issuer's stays that issuer's.
        ("Apple Hospitality REIT, Inc.", "APLE", {"applehospitalityreit", "aple"}),
    ],
)
def test_aliases_of_real_registrant_names(name: str, ticker: str | None, expected) -> None:
    assert keys(name, ticker) == expected


def test_base_names_lose_only_legal_suffixes() -> None:
    assert base_name("The Procter & Gamble Company") == "Procter & Gamble"
    assert base_name("JPMorgan Chase & Co.") == "JPMorgan Chase"
    assert base_name("Best Buy Co., Inc.") == "Best Buy"
    assert base_name("UnitedHealth Group Incorporated") == "UnitedHealth"
    assert base_name("Holdings") == "Holdings"


def test_short_and_everyday_aliases_need_a_capital() -> None:
    assert needs_capital("ups") and needs_capital("meta") and needs_capital("ibm")
    assert needs_capital("block") and needs_capital("target"), "everyday words in the table"
    assert not needs_capital("j&j") and not needs_capital("netflix")


def test_the_nickname_table_names_each_alias_once() -> None:
    table = issuers()
    assert 60 <= len(table) <= 130
    owners = [key for issuer in table for key in issuer.keys]
    assert len(owners) == len(set(owners))
    with pytest.raises(ValueError, match="'gm' is both"):
        parse_issuers(
            '[[issuer]]\nnames = ["General Motors", "GM"]\n'
            '[[issuer]]\nnames = ["Green Mountain"]\ntickers = ["GM"]\n'
        )


# Sentences as filings print them; the negatives are from the dev filings (3M, PepsiCo,
# Verizon, Pfizer, IBM, Best Buy) and name someone other than the registrant.
@pytest.mark.parametrize(
    ("registrant", "text", "expected"),
    [
        (
            "Block, Inc.",
            "Block, Inc. (formerly known as Square, Inc.) was founded in 2009.",
            ["Square, Inc."],
        ),
        (
            "Block, Inc.",
            "On December 10, 2021, Square, Inc. changed its name to Block, Inc.",
            ["Square, Inc."],
        ),
        (
            "Meta Platforms, Inc.",
            "On October 28, 2021, we changed our name from Facebook, Inc. to Meta Platforms, Inc.",
            ["Facebook, Inc."],
        ),
        (
            "Honeywell International Inc.",
            "Several companies have been sued along with 3M, including Saint-Gobain Performance "
            "Plastics Corp., Honeywell International Inc. f/k/a Allied-Signal Inc. and/or "
            "AlliedSignal Laminate Systems, Inc.",
            ["Allied-Signal Inc."],
        ),
        (
            "Block, Inc.",
            "(Registrant's telephone number, including area code)\n\nSquare, Inc.\n\n"
            "(Former name, former address and former fiscal year, if changed since last report)",
            ["Square, Inc."],
        ),
        (
            "3M Company",
            "Several companies have been sued along with 3M, including Saint-Gobain Performance "
            "Plastics Corp., Honeywell International Inc. f/k/a Allied-Signal Inc. and/or "
            "AlliedSignal Laminate Systems, Inc.",
            [],
        ),
        (
            "PepsiCo, Inc.",
            "4.2 Indenture dated May 21, 2007 between PepsiCo, Inc. and The Bank of New York "
            "Mellon (formerly known as The Bank of New York), as trustee",
            [],
        ),
        (
            "Verizon Communications Inc.",
            "U.S. Bank National Association, as successor trustee to Wachovia Bank, National "
            "Association, formerly known as First Union National Bank, as Trustee",
            [],
        ),
        (
            "Pfizer Inc.",
            "In 2009, as part of our acquisition of Wyeth, we assumed responsibility for "
            "environmental remediation at the Wyeth Holdings LLC (formerly known as, Wyeth "
            "Holdings Corporation and American Cyanamid Company) discontinued facility",
            [],
        ),
        (
            "Amazon.com, Inc.",
            "pertaining to the Amazon.com, Inc. 1997 Stock Incentive Plan (formerly the "
            "“1997 Stock Option Plan”)",
            [],
        ),
        (
            "Best Buy Co., Inc.",
            "(612) 291-1000 \n\n(Registrant’s telephone number, including area code) \n\nN/A "
            "\n\n(Former name, former address and former fiscal year, if changed since last "
            "report)",
            [],
        ),
        (
            # IBM's real history: a three-letter former name would claim "CTR".
            "International Business Machines Corporation",
            "This was signaled over 100 years ago, in 1924, when C-T-R changed its name to "
            "International Business Machines Corporation.",
            [],
        ),
    ],
)
def test_former_names_in_filing_text(registrant: str, text: str, expected: list[str]) -> None:
    assert former_names(text, registrant) == expected


def test_metadata_adds_former_names_to_the_company_aliases(tmp_path) -> None:
    cover = (
        "UNITED STATES SECURITIES AND EXCHANGE COMMISSION\n\nFORM 10-K\n\n"
        "For the fiscal year ended December 31, 2021\n\nBLOCK, INC.\n\n"
        "(Exact name of registrant as specified in its charter)\n\n"
        "Square, Inc.\n\n(Former name, former address and former fiscal year, if changed "
        "since last report)\n"
    )
    parsed = ParsedDocument([Page(1, cover)], "text")
    meta = resolve_metadata(tmp_path / "block-10k.pdf", tmp_path, parsed)
    assert meta.company == "BLOCK, INC."
    assert meta.former_names == ["Square, Inc."]
    assert meta.company_aliases == ["BLOCK, INC.", "Square, Inc."]


# Securities tables from the dev filings' PDF covers, as PyMuPDF reads them.
@pytest.mark.parametrize(
    ("cover", "ticker"),
    [
        (  # 3M 2022 10-K: a Markdown table, the symbol in its own column
            "|Title of each class|Trading Symbol(s)|Name of each exchange on which registered|\n"
            "|---|---|---|\n|Common Stock, Par Value $.01 Per Share|MMM|New York Stock Exchange|\n"
            "||MMM|Chicago Stock Exchange, Inc.|\n"
            "|0.950% Notes due 2023|MMM23|New York Stock Exchange|",
            "MMM",
        ),
        (  # PepsiCo 2022 10-K: "Trading Symbols"
            "|Title of each class|Trading Symbols|Name of each exchange on which registered|\n"
            "|---|---|---|\n|Common Stock, par value 1-2/3 cents per share|PEP|The Nasdaq Stock "
            "Market LLC|\n|0.250% Senior Notes Due 2024|PEP24|The Nasdaq Stock Market LLC|",
            "PEP",
        ),
        (  # Corning 2022 10-K: the table read as one line of text
            "Title of each class Trading Symbol(s) Name of each exchange on which registered "
            "Common Stock, $0.50 par value per share GLW New York Stock Exchange (NYSE) \n",
            "GLW",
        ),
        (  # Adobe 2022 10-K: the same, in title case
            "Title of Each Class Trading Symbol Name of Each Exchange on Which Registered Common "
            "Stock, $0.0001 par value per share ADBE NASDAQ \n",
            "ADBE",
        ),
    ],
)
def test_the_ticker_from_a_pdf_cover_s_securities_table(cover: str, ticker: str) -> None:
    text = "Securities registered pursuant to Section 12(b) of the Act: \n\n" + cover
    assert from_content(ParsedDocument([Page(1, text)], "pymupdf"))["ticker"] == ticker


@pytest.fixture
def conn(database_url: str):
    store = open_store(load_settings(database_url=SecretStr(database_url)))
    with store.connect() as connection:
        resolve_company(connection, ["JOHNSON & JOHNSON"], "JNJ")
        resolve_company(connection, ["The Procter & Gamble Company"], None)
        resolve_company(connection, ["AMERICAN EXPRESS COMPANY", "AMERICANEXPRESS"], None)
        resolve_company(connection, ["3M COMPANY", "3M"], None)
        resolve_company(connection, ["International Business Machines Corporation"], "IBM")
        resolve_company(connection, ["Block, Inc.", "Square, Inc."], None)
        resolve_company(connection, ["Costco Wholesale Corporation"], None)
        resolve_company(connection, ["United Parcel Service, Inc."], "UPS")
        resolve_company(connection, ["Apple Inc."], "AAPL")
        resolve_company(connection, ["Meta Platforms, Inc."], "META")
        resolve_company(connection, ["Citigroup Inc."], "C")
        connection.commit()
        yield connection
    store.close()


def companies(conn, question: str) -> list[str]:
    return sorted(c.name for c in extract_query_filters(question, conn).companies)


JNJ, PG, AXP = "Johnson & Johnson", "The Procter & Gamble Company", "American Express Company"


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What was J&J's revenue in 2023?", [JNJ]),
        ("What was JnJ's revenue in 2023?", [JNJ]),
        ("JNJ operating margin", [JNJ]),
        ("How did jnj do?", []),  # three letters in lower case: a typo, not a name
        ("What did P & G say about pricing?", [PG]),
        ("P&G's organic sales growth", [PG]),
        ("What was AMEX's card member loan growth?", [AXP]),
        ("AmEx discount revenue", [AXP]),
        ("What drove 3M's capex?", ["3M Company"]),
        ("How many employees does IBM have?", ["International Business Machines Corporation"]),
        ("What did Block (formerly Square) say about Cash App?", ["Block, Inc."]),
        ("What did Square report for bitcoin revenue?", ["Block, Inc."]),
        ("How did Costco membership fees change?", ["Costco Wholesale Corporation"]),
        ("How did Facebook ad revenue grow?", ["Meta Platforms, Inc."]),
        ("Compare J&J and P&G margins", [JNJ, PG]),
        # False friends.
        ("What did Apple Hospitality REIT pay in 2022?", []),
        ("What does General say?", []),
        ("Explain the ups and downs of margins", []),
        ("What is the meta point of this block of shares?", []),
        ("What does the square footage of stores look like?", []),
        ("What are the Series C preferred dividends?", []),  # Citigroup's ticker is C
    ],
)
def test_questions_name_companies_as_people_write_them(conn, question: str, expected) -> None:
    assert companies(conn, question) == expected


def test_derived_aliases_are_stored_and_never_taken_from_another_company(conn) -> None:
    jnj = lookup_company(conn, "J&J")
    assert jnj is not None and jnj[1] == JNJ
    assert lookup_company(conn, "JnJ")[0] == jnj[0]
    assert lookup_company(conn, "Square")[1] == "Block, Inc."
    assert {"j&j", "jnj", "johnson&johnson"} <= set(aliases_of(conn, jnj[0]))
    # A second company whose derived names collide keeps none of the first one's.
    other, _ = resolve_company(conn, ["Jones & Jacobs Inc."], None)
    assert aliases_of(conn, other) == ["jones&jacobs"], "J&J and JNJ are Johnson & Johnson's"
    assert lookup_company(conn, "J&J")[0] == jnj[0]


def test_a_product_after_a_name_is_the_company_s_when_its_filings_say_it(
    database_url: str,
) -> None:
    """'BMS Eliquis' is Bristol-Myers Squibb's product; 'Apple Hospitality' is no Apple
    product: the words after a name are looked up in that company's own filings."""
    from finrag.embed import get_embedder
    from tests.corpus import add_document

    settings = load_settings(database_url=SecretStr(database_url))
    with open_store(settings) as store, store.connect() as conn:
        embedder = get_embedder(settings.embed)
        for name, company, text in [
            ("BMY_2023_10K.pdf", "BRISTOL-MYERS SQUIBB COMPANY", "Eliquis revenues grew 4%."),
            ("AAPL_2023_10K.pdf", "Apple Inc.", "iPhone net sales fell 2%."),
        ]:
            add_document(conn, embedder, name, [text], company=company, year=2023)
        assert companies(conn, "How did BMS Eliquis sales change?") == [
            "Bristol-Myers Squibb Company"
        ]
        assert companies(conn, "What did Apple Hospitality REIT pay?") == []
        assert companies(conn, "What did Apple iPhone sales do?") == ["Apple Inc."]


def test_a_store_ingested_before_derivation_matches_on_the_fly(database_url: str) -> None:
    """Rows as the previous code stored them: registrant and file-name keys only."""
    store = open_store(load_settings(database_url=SecretStr(database_url)))
    with store.connect() as conn:
        conn.execute(
            "INSERT INTO companies (name, ticker, aliases) VALUES "
            "('Johnson & Johnson', NULL, ARRAY['johnson&johnson']), "
            "('American Express Company', NULL, ARRAY['americanexpress']), "
            "('Apple Hospitality REIT, Inc.', NULL, ARRAY['applehospitalityreit'])"
        )
        assert companies(conn, "J&J's revenue in 2023") == [JNJ]
        assert lookup_company(conn, "AmEx")[1] == AXP, "--company, facts and kpi lookups too"
        assert companies(conn, "AXP card fees") == [AXP]
        assert companies(conn, "What was Apple's revenue?") == []
        found = extract_query_filters("What was Apple's revenue?", conn)
        assert found.unknown_companies == ["Apple"]
    store.close()


@pytest.mark.parametrize(
    ("question", "unknown"),
    [
        ("What was Microsoft's revenue?", ["Microsoft"]),
        ("What was Procter & Gamble's revenue?", []),  # held under its registrant name
        ("What was Bank of America's net interest income?", ["Bank of America"]),
        ("How did BofA's deposits change?", ["Bank of America"]),
        ("What was Walmart (formerly Wal-Mart Stores) revenue?", ["Walmart"]),
        ("What did Hooli (formerly Pied Piper) report?", ["Hooli"]),
        ("What was HP's revenue?", ["HP"]),
        # Short names and everyday words of the table, written as words.
        ("What was the gm in 2023?", []),
        ("How much hp does the engine have?", []),
        ("What is a block of shares worth?", []),
        ("What is the target leverage ratio?", []),
        ("What was Target Corporation's revenue?", ["Target Corporation"]),
    ],
)
def test_names_the_store_lacks_are_reported(conn, question: str, unknown) -> None:
    assert extract_query_filters(question, conn).unknown_companies == unknown


def test_docs_show_lists_the_company_aliases(database_url: str) -> None:
    from finrag.embed import get_embedder
    from tests.corpus import add_document

    settings = load_settings(database_url=SecretStr(database_url))
    with open_store(settings) as store, store.connect() as conn:
        doc = add_document(
            conn,
            get_embedder(settings.embed),
            "JNJ_2023_10K.pdf",
            ["Johnson & Johnson revenue grew."],
            company="JOHNSON & JOHNSON",
            year=2023,
        )
    env = dict(os.environ, FINRAG_DATABASE_URL=database_url)
    shown = json.loads(run_finrag("docs", "show", str(doc), "--json", env=env).stdout)
    assert {"j&j", "jnj", "johnson&johnson"} <= set(shown["company_aliases"])
    plain = run_finrag("docs", "show", str(doc), env=env)
    assert plain.returncode == 0 and "company_aliases: " in plain.stdout
    assert "j&j" in plain.stdout
