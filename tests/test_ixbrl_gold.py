"""The iXBRL-gold question set: its own tag reader, gold values the filing prints, and the
committed JSONL (enough questions, every type, loadable, scored right when stated)."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from lxml import html

from finrag.evaluate.correctness import score_correctness
from finrag.evaluate.dataset import load_dataset
from tests.conftest import REPO, SHARED

SCRIPT = REPO / "eval" / "datasets" / "make_ixbrl_gold.py"
DATASET = REPO / "eval" / "datasets" / "ixbrl_gold.jsonl"
EDGAR = SHARED / "edgar-html"
APPLE_10K = EDGAR / "aapl-10-k-2024-11-01.html"
needs_edgar = pytest.mark.skipif(
    not APPLE_10K.is_file(),
    reason=f"EDGAR filings not found at {EDGAR} (../shared beside the repository)",
)


def _load_script():
    spec = importlib.util.spec_from_file_location("make_ixbrl_gold", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


gold = _load_script()

_TINY = """<?xml version="1.0" encoding="utf-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:ix="http://www.xbrl.org/2013/inlineXBRL"
 xmlns:xbrli="http://www.xbrl.org/2003/instance" xmlns:xbrldi="http://xbrl.org/2006/xbrldi"
 xmlns:ixt="http://www.xbrl.org/inlineXBRL/transformation/2020-02-12"
 xmlns:us-gaap="http://fasb.org/us-gaap/2024" xmlns:dei="http://xbrl.sec.gov/dei/2024"
 xmlns:iso4217="http://www.xbrl.org/2003/iso4217"><body>
<div style="display:none"><ix:header><ix:hidden>
<ix:nonNumeric name="dei:DocumentFiscalYearFocus" contextRef="fy">2024</ix:nonNumeric>
<ix:nonNumeric name="dei:DocumentFiscalPeriodFocus" contextRef="fy">FY</ix:nonNumeric>
</ix:hidden><ix:resources>
<xbrli:context id="fy"><xbrli:entity><xbrli:identifier scheme="x">1</xbrli:identifier>
 </xbrli:entity><xbrli:period><xbrli:startDate>2024-01-01</xbrli:startDate>
 <xbrli:endDate>2024-12-31</xbrli:endDate></xbrli:period></xbrli:context>
<xbrli:context id="fy-seg"><xbrli:entity><xbrli:identifier scheme="x">1</xbrli:identifier>
 <xbrli:segment><xbrldi:explicitMember dimension="srt:ProductOrServiceAxis">x:WidgetsMember
 </xbrldi:explicitMember></xbrli:segment></xbrli:entity><xbrli:period>
 <xbrli:startDate>2024-01-01</xbrli:startDate><xbrli:endDate>2024-12-31</xbrli:endDate>
 </xbrli:period></xbrli:context>
<xbrli:context id="end"><xbrli:entity><xbrli:identifier scheme="x">1</xbrli:identifier>
 </xbrli:entity><xbrli:period><xbrli:instant>2024-12-31</xbrli:instant></xbrli:period>
 </xbrli:context>
<xbrli:unit id="usd"><xbrli:measure>iso4217:USD</xbrli:measure></xbrli:unit>
<xbrli:unit id="eps"><xbrli:divide><xbrli:unitNumerator><xbrli:measure>iso4217:USD
 </xbrli:measure></xbrli:unitNumerator><xbrli:unitDenominator><xbrli:measure>xbrli:shares
 </xbrli:measure></xbrli:unitDenominator></xbrli:divide></xbrli:unit>
</ix:resources></ix:header></div>
<p>Revenue <ix:nonFraction name="us-gaap:Revenues" contextRef="fy" unitRef="usd" decimals="-6"
 scale="6" format="ixt:num-dot-decimal">1,234.5</ix:nonFraction>; widgets
 <ix:nonFraction name="us-gaap:Revenues" contextRef="fy-seg" unitRef="usd" decimals="-6"
 scale="6" format="ixt:num-dot-decimal">200</ix:nonFraction>; other income
 (<ix:nonFraction name="us-gaap:OtherNonoperatingIncomeExpense" contextRef="fy" unitRef="usd"
 decimals="-6" scale="6" sign="-" format="ixt:num-dot-decimal">17</ix:nonFraction>);
 goodwill impairment <ix:nonFraction name="us-gaap:GoodwillImpairmentLoss" contextRef="fy"
 unitRef="usd" decimals="-6" scale="6" format="ixt:fixed-zero">—</ix:nonFraction>;
 EPS <ix:nonFraction name="us-gaap:EarningsPerShareDiluted" contextRef="fy" unitRef="eps"
 decimals="2" format="ixt:num-dot-decimal">6.08</ix:nonFraction>; tax
 <ix:nonFraction name="us-gaap:IncomeTaxExpenseBenefit" contextRef="fy" unitRef="usd"
 decimals="-8" scale="9" format="ixt:num-dot-decimal">4.8</ix:nonFraction> or
 <ix:nonFraction name="us-gaap:IncomeTaxExpenseBenefit" contextRef="fy" unitRef="usd"
 decimals="-6" scale="6" format="ixt:num-dot-decimal">4,784</ix:nonFraction>; assets
 <ix:nonFraction name="us-gaap:Assets" contextRef="end" unitRef="usd" decimals="-6" scale="6"
 format="ixt:num-dot-decimal">900</ix:nonFraction> or
 <ix:nonFraction name="us-gaap:Assets" contextRef="end" unitRef="usd" decimals="-6" scale="6"
 format="ixt:num-dot-decimal">901</ix:nonFraction>.</p></body></html>
"""


def test_reader_applies_format_scale_sign_and_keeps_entity_totals(tmp_path: Path) -> None:
    path = tmp_path / "tiny-10-k-2025-01-01.html"
    path.write_text(_TINY, encoding="utf-8")
    filing = gold.read_filing(path)
    fy = gold.Period(filing.contexts["fy"].start, filing.contexts["fy"].end)
    end = gold.Period(None, filing.contexts["end"].end)

    def value(concept: str, period) -> float:
        return gold.read_value(filing, concept, period).fact.value

    assert value("revenue", fy) == 1_234_500_000  # the segment's 200 is not the total
    assert [f.value for f in filing.facts if f.context.dimensional] == [200_000_000]
    assert [f.value for f in filing.totals("us-gaap:OtherNonoperatingIncomeExpense")] == [-17e6]
    assert [f.value for f in filing.totals("us-gaap:GoodwillImpairmentLoss")] == [0.0]
    assert value("eps_diluted", fy) == 6.08
    assert filing.totals("us-gaap:EarningsPerShareDiluted")[0].unit == "usd/shares"
    assert value("income_tax", fy) == 4_784_000_000  # the precise tag, not MD&A's 4.8 billion
    with pytest.raises(gold.Missing, match="conflicting"):
        value("total_assets", end)
    with pytest.raises(gold.Missing, match="not tagged"):
        value("net_income", fy)


def test_tag_number_formats() -> None:
    assert gold.tag_number("1,234.50", "ixt:num-dot-decimal") == 1234.5
    assert gold.tag_number("1 234", "ixt:numdotdecimal") == 1234
    assert gold.tag_number("—", "ixt:fixed-zero") == 0
    assert gold.tag_number("twelve", "ixt-sec:numwordsen") is None  # left out, not guessed
    assert gold.tag_number("n/a", "ixt:num-dot-decimal") is None


def _printed_numbers(path: Path) -> set[str]:
    text = html.parse(str(path)).getroot().text_content()
    return set(re.findall(r"\d[\d,]*(?:\.\d+)?", text))


@needs_edgar
def test_generated_gold_agrees_with_the_printed_statements() -> None:
    filing = gold.read_filing(APPLE_10K)
    records = [r for r in gold.questions(filing) if not isinstance(r, gold.Missing)]
    assert len(records) == len(gold.SPECS["aapl-10-k"]), "every Apple question is answerable"
    by_id = {r["id"]: r for r in records}
    assert by_id["aapl-fy24-revenue"]["gold"]["value"] == 391_035e6
    assert by_id["aapl-fy24-net-income"]["gold"]["value"] == 93_736e6
    assert by_id["aapl-fy24-revenue"]["fiscal_year"] == 2024
    assert by_id["aapl-fy23-capex"]["fiscal_year"] == 2023
    printed = _printed_numbers(APPLE_10K)
    # Apple prints money in millions and share counts in thousands: every line item's
    # gold value is a number in its statements.
    shown = {
        "money": lambda v: f"{v / 1e6:,.0f}",
        "per_share": lambda v: f"{v:.2f}",
        "shares": lambda v: f"{v / 1e3:,.0f}",
    }
    metrics = [r for r in records if r["type"] == "metric"]
    assert len(metrics) >= 8
    for r in metrics:
        style = {"USD": "money", "USD/share": "per_share", "shares": "shares"}[r["gold"]["unit"]]
        assert shown[style](abs(r["gold"]["value"])) in printed, r["id"]
    # A KPI is its formula over the tagged inputs recorded beside it.
    margin = by_id["aapl-fy24-gross-margin"]["gold"]
    inputs = {c["input"]: c["value"] for c in margin["contexts"]}
    assert margin["value"] == pytest.approx(inputs["gross_profit"] / inputs["revenue"] * 100)
    assert by_id["aapl-fy24-gross-margin"]["answer"] == "46.2%"


def test_committed_set_loads_with_every_type() -> None:
    questions = load_dataset(DATASET)
    assert len(questions) >= 40
    assert len({q.id for q in questions}) == len(questions)
    types = {q.question_type for q in questions}
    assert types == {"metric", "kpi", "defined-formula"}
    assert sum(q.question_type == "defined-formula" for q in questions) >= 5
    assert all(q.documents and q.company for q in questions)
    records = [json.loads(line) for line in DATASET.read_text().splitlines()]
    for r in records:
        assert r["gold"]["formula"] and r["gold"]["contexts"], r["id"]
        if r["type"] == "defined-formula":
            assert "defined as" in r["question"], r["id"]


def _restatements(answer: str, unit: str, value: float) -> list[str]:
    """The gold written the ways an answer might state it (the first from the value alone)."""
    if unit == "USD":
        return [
            f"It was ${value / 1e9:.3g} billion [1].",
            f"The statement shows {value / 1e6:,.0f} (in millions) [2].",
            f"It was {answer} [1].",
        ]
    if unit == "percent":
        return [f"It was {value:.2f}% [1].", f"Roughly {value:.1f} percent.", f"{answer}"]
    if unit == "ratio":
        return [f"The ratio was {value:.3f}.", f"about {value:.2f}x"]
    if unit == "USD/share":
        return [f"Diluted EPS was ${value:.2f} [1]."]
    return [f"{value / 1e6:,.1f} million shares", f"{value / 1e9:.2f} billion shares"]


def test_scoring_accepts_the_gold_stated_naturally_and_rejects_a_wrong_value() -> None:
    records = [json.loads(line) for line in DATASET.read_text().splitlines()]
    for r in records:
        unit, value = r["gold"]["unit"], r["gold"]["value"]
        for answer in _restatements(r["answer"], unit, value):
            assert score_correctness(r["answer"], answer, []).numeric is True, (r["id"], answer)
        # The calculator's result alone (a KPI answered from a calculation) is right too.
        assert score_correctness(r["answer"], "See the calculation.", [value]).auto is True
        wrong = _restatements(r["answer"], unit, value * 1.08)[0]
        assert score_correctness(r["answer"], wrong, []).numeric is False, (r["id"], wrong)


@needs_edgar
def test_committed_set_is_what_the_script_writes() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(EDGAR)], capture_output=True, text=True, check=True
    )
    assert done.stdout == DATASET.read_text(encoding="utf-8")
    assert "questions from 12 filings" in done.stderr
