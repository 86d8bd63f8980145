"""`finrag market`: figures over a fiscal quarter from the recorded price cache
(tests/fixtures/market/BBY.json, a hand-made fixture in the cache's format; never the
network), fiscal vs calendar quarter dates, the bounded download, and the yes/no
questions `finrag eval answers` scores."""

from __future__ import annotations

import json
import math
import shutil
import threading
from datetime import date
from pathlib import Path

import pytest
from pydantic import SecretStr

from finrag.config import load_settings
from finrag.db import open_store
from finrag.embed import get_embedder
from finrag.errors import ExitCode, UsageError
from finrag.evaluate.dataset import load_dataset
from finrag.facts.periods import FiscalCalendar
from finrag.market import (
    MarketDataUnavailable,
    PriceBar,
    PriceCache,
    market_summary,
    performance_question,
    resolve_period,
    summarize,
)
from finrag.market.periods import (
    MarketPeriod,
    calendar_period,
    fiscal_period,
    from_filing_end,
    parse_period,
)
from tests.conftest import clean_env, run_finrag
from tests.corpus import add_document

FIXTURES = Path(__file__).parent / "fixtures" / "market"
# Best Buy's Q2 FY2024: 13 weeks ending July 29, 2023 (its 10-Q's period end).
BBY_Q2_FY2024 = (date(2023, 4, 30), date(2023, 7, 29))


def _rows(start: date, end: date) -> list[list]:
    """The fixture's rows in [start, end], read straight from the JSON."""
    rows = json.loads((FIXTURES / "BBY.json").read_text())["rows"]
    return [r for r in rows if start <= date.fromisoformat(r[0]) <= end]


def _by_hand(start: date, end: date) -> dict[str, float]:
    """Price change and volatility computed the long way, to check the module against."""
    closes = [r[4] for r in _rows(start, end)]
    change = (closes[-1] - closes[0]) / closes[0] * 100
    logs = [math.log(closes[i + 1] / closes[i]) for i in range(len(closes) - 1)]
    mean = sum(logs) / len(logs)
    variance = sum((x - mean) ** 2 for x in logs) / (len(logs) - 1)  # sample variance
    return {
        "change": change,
        "volatility": math.sqrt(variance) * math.sqrt(252) * 100,
        "days": len(closes),
        "volume": sum(r[5] for r in _rows(start, end)) / len(closes),
    }


def _home_with_cache(tmp_path: Path) -> Path:
    home = tmp_path / "market-home"
    (home / "cache" / "market").mkdir(parents=True)
    shutil.copy(FIXTURES / "BBY.json", home / "cache" / "market" / "BBY.json")
    return home


# ---- periods ---------------------------------------------------------------------------


def test_period_texts() -> None:
    assert parse_period("2024Q2") == (2024, 2)
    assert parse_period("FY2024Q2") == (2024, 2)
    assert parse_period("Q2 FY2024") == (2024, 2)
    assert parse_period("q3 2023") == (2023, 3)
    assert parse_period("FY2023") == (2023, None)
    with pytest.raises(UsageError, match="not a quarter"):
        parse_period("2023H1")


def test_fiscal_and_calendar_quarter_dates() -> None:
    # Best Buy's fiscal year ends in January: Q2 FY2024 is May-July 2023 by whole months...
    by_months = fiscal_period(2024, 2, FiscalCalendar(1))
    assert (by_months.start, by_months.end) == (date(2023, 5, 1), date(2023, 7, 31))
    assert by_months.label == "Q2 FY2024"
    year = fiscal_period(2024, None, FiscalCalendar(1))
    assert (year.start, year.end) == (date(2023, 2, 1), date(2024, 1, 31))
    # ...and exactly 13 weeks when a filing states the quarter's end (a 52/53-week year).
    exact = from_filing_end(2024, 2, date(2023, 7, 29), "BESTBUY_2024Q2_10Q.pdf")
    assert (exact.start, exact.end) == BBY_Q2_FY2024
    month_end = from_filing_end(2023, 3, date(2023, 9, 30), "AAPL_10Q.pdf")
    assert (month_end.start, month_end.end) == (date(2023, 7, 1), date(2023, 9, 30))
    calendar = calendar_period(2023, 2, "no store")
    assert (calendar.start, calendar.end, calendar.label) == (
        date(2023, 4, 1),
        date(2023, 6, 30),
        "Q2 2023",
    )


@pytest.fixture
def bby_store(database_url: str) -> str:
    """A store holding a Best Buy 10-Q for Q2 FY2024 (period end 2023-07-29), ticker BBY."""
    settings = load_settings(database_url=SecretStr(database_url))
    text = "Best Buy Domestic segment revenue was $8.0 billion in the quarter ended July 29, 2023."
    with open_store(settings) as store, store.connect() as conn:
        doc = add_document(
            conn,
            get_embedder(settings.embed),
            "BESTBUY_2024Q2_10Q.pdf",
            [text],
            company="Best Buy",
            year=2024,
            form="10-Q",
            quarter=2,
        )
        conn.execute("UPDATE documents SET period_end = '2023-07-29' WHERE id = %s", (doc,))
        conn.execute("UPDATE companies SET ticker = 'BBY' WHERE name = 'Best Buy'")
        conn.commit()
    return database_url


def test_fiscal_quarter_from_the_store(bby_store: str) -> None:
    settings = load_settings(database_url=SecretStr(bby_store))
    with open_store(settings) as store, store.connect() as conn:
        name, q2 = resolve_period(conn, "bby", "2024Q2")
        _, q3 = resolve_period(conn, "BBY", "Q3 FY2024")
        _, default = resolve_period(conn, "BBY", None)
        _, next_year = resolve_period(conn, "BBY", "2025Q1")
        other, apple = resolve_period(conn, "AAPL", "2023Q2")
    assert name == "Best Buy" and q2.basis == "fiscal"
    assert (q2.start, q2.end) == BBY_Q2_FY2024
    assert "BESTBUY_2024Q2_10Q.pdf" in q2.how
    assert (q3.start, q3.end) == (date(2023, 7, 30), date(2023, 10, 28))  # 13 weeks on
    assert default == q2  # no --period: the quarter of the latest filing
    assert (next_year.start, next_year.end) == (date(2024, 2, 1), date(2024, 4, 30))
    assert other is None and apple.basis == "calendar" and "not in the store" in apple.how
    assert (apple.start, apple.end) == (date(2023, 4, 1), date(2023, 6, 30))


# ---- figures from the recorded cache ------------------------------------------------------


def test_summary_matches_a_hand_computation() -> None:
    prices = PriceCache(FIXTURES).load("BBY")
    assert prices is not None and prices.covers(*BBY_Q2_FY2024)
    period = from_filing_end(2024, 2, BBY_Q2_FY2024[1], "10-Q")
    summary = summarize("BBY", "Best Buy", period, prices, from_cache=True)
    hand = _by_hand(*BBY_Q2_FY2024)
    assert summary.trading_days == hand["days"] == 62  # Memorial Day, Juneteenth, July 4 off
    assert summary.first.day == date(2023, 5, 1) and summary.last.day == date(2023, 7, 28)
    assert summary.change_pct == pytest.approx(hand["change"])
    assert summary.change_pct == pytest.approx((83.03 / 74.50 - 1) * 100)
    assert summary.volatility_pct == pytest.approx(hand["volatility"])
    assert summary.average_volume == pytest.approx(hand["volume"])
    rows = _rows(*BBY_Q2_FY2024)
    assert summary.high.high == max(r[2] for r in rows)
    assert summary.low.low == min(r[3] for r in rows)


def test_cli_from_the_cache_human_and_json(bby_store: str, tmp_path: Path) -> None:
    env = clean_env(
        FINRAG_HOME=str(_home_with_cache(tmp_path)),
        FINRAG_DATABASE_URL=bby_store,
        FINRAG_EMBED__BACKEND="hash",
    )
    hand = _by_hand(*BBY_Q2_FY2024)
    result = run_finrag("market", "BBY", "--period", "2024Q2", "--json", env=env)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["period"]["basis"] == "fiscal" and data["company"] == "Best Buy"
    assert (data["period"]["start"], data["period"]["end"]) == ("2023-04-30", "2023-07-29")
    assert data["price_change_pct"] == pytest.approx(hand["change"], abs=1e-4)
    assert data["volatility_pct"] == pytest.approx(hand["volatility"], abs=1e-4)
    assert data["trading_days"] == 62 and data["from_cache"] is True
    assert "hand-made" in data["source"]

    human = run_finrag("market", "BBY", "--period", "Q2 FY2024", env=env)
    assert human.returncode == 0, human.stderr
    assert "Q2 FY2024 · 2023-04-30 to 2023-07-29" in human.stdout
    assert f"price change   {hand['change']:+.2f}%" in human.stdout
    assert f"volatility     {hand['volatility']:.1f}%" in human.stdout
    assert "from the cache" in human.stdout

    # --calendar: the calendar quarter, also inside the cached range.
    calendar = run_finrag("market", "BBY", "--period", "2023Q2", "--calendar", "-j", env=env)
    assert calendar.returncode == 0, calendar.stderr
    data = json.loads(calendar.stdout)
    assert data["period"]["basis"] == "calendar" and data["period"]["label"] == "Q2 2023"
    hand = _by_hand(date(2023, 4, 1), date(2023, 6, 30))
    assert data["price_change_pct"] == pytest.approx(hand["change"], abs=1e-4)


# ---- offline: bounded, with a hint ----------------------------------------------------------


def test_a_hanging_download_is_cut_off_with_a_hint(tmp_path: Path) -> None:
    release = threading.Event()

    def hangs(ticker: str, start: date, end: date, timeout: float) -> list[PriceBar]:
        release.wait(60)  # as yfinance does on a socket that never answers
        return []

    period = calendar_period(2023, 2, "test")
    try:
        with pytest.raises(MarketDataUnavailable) as caught:
            market_summary("BBY", None, period, PriceCache(tmp_path), timeout=0.2, downloader=hangs)
    finally:
        release.set()
    error = caught.value
    assert "no answer from Yahoo Finance (yfinance) within 0.2 s" in error.message
    assert "BBY Q2 2023" in error.message
    assert error.hint and "no network and nothing cached" in error.hint
    assert error.exit_code == ExitCode.NO_ANSWER
    assert not (tmp_path / "BBY.json").exists()


def test_empty_frames_and_errors_are_one_clear_error(tmp_path: Path) -> None:
    period = calendar_period(2023, 2, "test")

    def empty(*_args) -> list[PriceBar]:
        return []

    def fails(*_args) -> list[PriceBar]:
        raise ConnectionError("Could not resolve host: query2.finance.yahoo.com")

    with pytest.raises(MarketDataUnavailable, match="returned no prices"):
        market_summary("BBY", None, period, PriceCache(tmp_path), downloader=empty)
    with pytest.raises(MarketDataUnavailable, match="Could not resolve host"):
        market_summary("BBY", None, period, PriceCache(tmp_path), downloader=fails)


def test_offline_cli_with_an_empty_cache_fails_with_the_hint(tmp_path: Path) -> None:
    env = clean_env(FINRAG_HOME=str(tmp_path / "empty-home"))
    result = run_finrag("market", "BBY", "--period", "2023Q2", "--offline", env=env)
    assert result.returncode == ExitCode.NO_ANSWER
    assert "nothing cached for BBY Q2 2023" in result.stderr
    assert "no network and nothing cached" in result.stderr and "run once with network" in (
        result.stderr
    )
    assert result.stdout == ""


def test_a_download_is_cached_and_then_answered_without_network(tmp_path: Path) -> None:
    cache = PriceCache(tmp_path)
    period = calendar_period(2023, 2, "test")
    calls: list[tuple[date, date]] = []

    def recorded(ticker: str, start: date, end: date, timeout: float) -> list[PriceBar]:
        calls.append((start, end))
        source = PriceCache(FIXTURES).load(ticker)
        assert source is not None
        return source.between(start, end)

    first = market_summary("BBY", None, period, cache, downloader=recorded)
    assert not first.from_cache and calls == [(date(2023, 4, 1), date(2023, 6, 30))]
    again = market_summary("BBY", None, period, cache, offline=True)
    assert again.from_cache and again.change_pct == pytest.approx(first.change_pct)
    # A neighbouring period extends the one cached range rather than replacing it.
    july = MarketPeriod(2023, None, date(2023, 7, 1), date(2023, 7, 31), "calendar", "test")
    market_summary("BBY", None, july, cache, downloader=recorded)
    stored = cache.load("BBY")
    assert stored is not None and (stored.start, stored.end) == (
        date(2023, 4, 1),
        date(2023, 7, 31),
    )


# ---- the generation check: yes/no questions scored by eval answers ---------------------------


def test_questions_follow_the_rule() -> None:
    prices = PriceCache(FIXTURES).load("BBY")
    assert prices is not None
    rose = summarize("BBY", "Best Buy", calendar_period(2023, 2, "t"), prices, from_cache=True)
    april = MarketPeriod(2023, None, date(2023, 4, 1), date(2023, 4, 30), "calendar", "t")
    fell = summarize("BBY", None, april, prices, from_cache=True)
    assert rose.change_pct > 0 > fell.change_pct
    up, down = performance_question(rose), performance_question(fell)
    assert up["answer"] == "Yes" and up["question"] == "Did Best Buy perform well in Q2 2023?"
    assert down["answer"] == "No" and down["company"] == "BBY"
    assert "closing price rose" in up["rule"]


def test_questions_file_is_scored_by_eval_answers(bby_store: str, tmp_path: Path) -> None:
    env = clean_env(
        FINRAG_HOME=str(_home_with_cache(tmp_path)),
        FINRAG_DATABASE_URL=bby_store,
        FINRAG_EMBED__BACKEND="hash",
    )
    questions = tmp_path / "market.jsonl"
    # 2024Q1 is not cached and there is no network: a warning, the other written, exit 6.
    made = run_finrag(
        "market",
        "BBY",
        "--periods",
        "2024Q2,2024Q1",
        "--offline",
        "--questions",
        str(questions),
        env=env,
    )
    assert made.returncode == ExitCode.PARTIAL, made.stderr
    assert "nothing cached for BBY Q1 FY2024" in made.stderr
    (question,) = load_dataset(questions)
    assert question.question == "Did Best Buy perform well in Q2 FY2024?"
    assert question.answer == "Yes" and question.question_type == "market-performance"

    scored = run_finrag("eval", "answers", str(questions), "--no-llm", "--json", env=env)
    assert scored.returncode == 0, scored.stderr
    report = json.loads(scored.stdout)
    assert report["summary"]["by_question_type"]["market-performance"]["n"] == 1
    (result,) = report["results"]
    assert result["id"] == "market-BBY-2024Q2" and result["gold"] == "Yes"
