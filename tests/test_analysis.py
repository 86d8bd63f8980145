"""`finrag analyze` (persona analysis) and `finrag research` (a memo read in rounds), on a
real embedded store holding Apple's FY2024 and Netflix's FY2024 10-Ks, ingested once for
the module (the same filings as test_kpi_cmd, so their parse is shared). The model is off
or a script; every sign a synthesis reads is checked against the KPI engine itself."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from finrag.analysis.findings import read_sign
from finrag.analysis.memo import memo_markdown
from finrag.analysis.persona_analysis import analyze
from finrag.analysis.research import research
from finrag.analysis.research_plan import plan_for, plan_research, topic_of, topic_pattern
from finrag.analysis.subjects import Subject
from finrag.answer.citations import MARK
from finrag.answer.extraction import CalculationOutcome
from finrag.answer.pipeline import Asker
from finrag.answer.result import Answer
from finrag.errors import FinragError
from finrag.facts.kpi import KpiValue, kpi, kpi_table
from finrag.facts.lookup import Period
from finrag.llm.fake import FakeLLM
from finrag.personas import load_persona, parse_persona, persona_names
from tests.conftest import clean_env, ingested_home, run_finrag
from tests.test_kpi_cmd import APPLE, NETFLIX, needs_filings

PERSONA_HEAD = 'title = "t"\nsummary = "s"\nemphasis = ["e"]\ninstructions = "i"\nkpis = ["roe"]\n'


@pytest.fixture(scope="module")
def two_companies(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("analysis") / "home"
    with ingested_home(home, [APPLE, NETFLIX]):
        yield home


@pytest.fixture
def opened(two_companies: Path, monkeypatch: pytest.MonkeyPatch):
    """(settings, store) on the module's home; answer.use_llm off unless a test turns it on."""
    from finrag.config import load_settings
    from finrag.db import open_store

    monkeypatch.setenv("FINRAG_HOME", str(two_companies))
    settings = load_settings(answer={"use_llm": False})
    with open_store(settings) as store:
        yield settings, store


def _engine(store, company: str, measure: str, periods: list[str]) -> list[float]:
    """What the KPI engine itself computes for ``measure``, read apart from any answer."""
    from finrag.db.companies import require_company

    chosen = [Period(int(p[2:6])) for p in periods]
    with store.connect() as conn:
        company_id, _, _ = require_company(conn, company)
        results = kpi_table(conn, company_id, [kpi(measure)], chosen)
        conn.rollback()
    by_period = {str(r.period): float(r.value) for r in results if isinstance(r, KpiValue)}
    return [by_period[p] for p in periods]


def _markers(text: str) -> set[int]:
    return {int(n) for m in MARK.finditer(text) for n in re.split(r"\s*[,;]\s*", m.group(1))}


# ---------------------------------------------------------------- persona files


def test_every_persona_carries_its_own_questions_and_bad_ones_fail_loudly() -> None:
    for name in persona_names():
        persona = load_persona(name)
        assert persona.questions, name
        assert all("{company}" in q.ask for q in persona.questions), name
    angles = {n: {q.angle for q in load_persona(n).questions} for n in ("credit", "equity", "esg")}
    assert {"leverage", "interest coverage", "liquidity", "debt maturities", "covenants"} <= angles[
        "credit"
    ]
    assert {"revenue growth", "margins", "EPS", "segment growth", "guidance"} <= angles["equity"]
    assert {"emissions", "governance", "board", "human capital"} <= angles["esg"]
    bad = PERSONA_HEAD + '[[questions]]\nangle = "a"\nask = "What about {ticker}?"\n'
    with pytest.raises(FinragError, match="unknown placeholder"):
        parse_persona("bad", bad)
    bad = PERSONA_HEAD + '[[questions]]\nangle = "a"\nask = "{company}?"\nmeasure = "zeal"\n'
    with pytest.raises(FinragError, match=r"'zeal' not in finrag/facts/kpis\.toml"):
        parse_persona("bad", bad)
    bad = PERSONA_HEAD + '[[questions]]\nangle = "a"\nask = "{company}?"\nbetter = "sideways"\n'
    with pytest.raises(FinragError, match="better one of"):
        parse_persona("bad", bad)
    assert parse_persona("ok", PERSONA_HEAD).questions == ()  # questions are optional


# ---------------------------------------------------------------- persona analysis


def _computed(measure: str, points: list[tuple[str, float]], inputs: list[float]) -> Answer:
    """A facts-route answer as the Asker returns one for ``measure`` (Boeing's FY2024
    10-K figures: a shareholders' deficit, an operating loss)."""
    calc = CalculationOutcome(
        f"{measure} {points[-1][0]} = ...",
        "...",
        points[-1][1],
        inputs=[{"value": v} for v in inputs],
    )
    return Answer(
        question="q",
        answer="a",
        route="facts",
        series=[
            {
                "measure": kpi(measure).display.lower(),
                "points": [{"period": p, "value": v} for p, v in points],
            }
        ],
        calculations=[calc],
        retrieval={"route_reason": f"facts store: change of {measure} for FY2023, FY2024"},
    )


def test_a_sign_is_not_read_where_it_means_nothing() -> None:
    # Debt to equity under a deficit: -3.04 -> -13.78 "fell", yet leverage did not improve.
    deficit = _computed("debt_to_equity", [("FY2023", -3.04), ("FY2024", -13.78)], [1, -2])
    reading, why = read_sign(deficit, "debt_to_equity", "change", "down", positive_only=True)
    assert reading is None and "at or below zero in FY2023, FY2024" in why
    reading, why = read_sign(deficit, "debt_to_equity", "change", "down")
    assert reading.direction == "down" and reading.favourable and why is None
    # EPS from -3.67 to -18.36 a share is +400% "growth": a deepening loss, not a gain.
    loss = _computed("eps_growth", [("FY2024", 400.3)], [-18.36, -3.67])
    reading, why = read_sign(loss, "eps_growth", "value", "up")
    assert reading is None and why.startswith("EPS growth (YoY) is a growth rate over a negative")
    # A growth rate over a positive base to a negative value is a reading: percent_change
    # (old, new) has its base first, and only the base can make the sign meaningless.
    fall = _computed("eps_growth", [("FY2024", -150.0)], [1.0, -0.5])
    fall.calculations[0].expression = "percent_change(1, -0.5)"
    reading, why = read_sign(fall, "eps_growth", "value", "up")
    assert reading.direction == "down" and reading.favourable is False and why is None
    fall.calculations[0].expression = "percent_change(-0.5, 1)"
    fall.calculations[0].inputs = [{"value": -0.5}, {"value": 1.0}]
    assert read_sign(fall, "eps_growth", "value", "up")[0] is None
    # An operating loss deepening: interest coverage -0.31x -> -3.93x is read, and is bad.
    cover = _computed("interest_coverage", [("FY2023", -0.314), ("FY2024", -3.93)], [-10707, 2725])
    reading, _ = read_sign(cover, "interest_coverage", "change", "up")
    assert reading.direction == "down" and reading.favourable is False
    assert reading.words() == "interest coverage fell from -0.31x (FY2023) to -3.93x (FY2024)"


@needs_filings
def test_analysis_without_a_model_reads_each_sign_as_the_kpi_engine_computes_it(opened) -> None:
    settings, store = opened
    llm = FakeLLM([])  # any model call would fail the test: none may be made
    personas = [load_persona(n) for n in ("credit", "equity", "esg")]
    analysis = analyze(Asker(store, settings, llm=llm), store, ["AAPL", "Netflix"], personas)
    assert not llm.calls
    assert [(s.short, s.prior, s.year) for s in analysis.subjects] == [
        ("Apple", "FY2023", "FY2024"),
        ("Netflix", "FY2023", "FY2024"),
    ]
    readings = [f for f in analysis.findings if f.reading is not None]
    assert len(readings) >= 10, "leverage, liquidity, growth and margins are all computed"
    for f in readings:
        r = f.reading
        periods = [p for p, _ in r.points]
        engine = _engine(store, f.company, r.measure, periods)
        assert [v for _, v in r.points] == pytest.approx(engine), (f.company, r.measure)
        amount = engine[-1] - engine[0] if r.reads == "change" else engine[0]
        assert r.direction == ("up" if amount > 0 else "down"), (f.company, r.measure)
    # Apple FY2024 (10-K p.31, p.33): debt to equity up, current ratio down (credit), while
    # revenue grew 2.0% and both margins rose (equity): the one disagreement. Netflix's
    # leverage fell and its margins rose: credit and equity agree.
    [disagreement] = analysis.synthesis.disagreements
    assert disagreement.company == "Apple Inc."
    assert disagreement.unfavourable.persona.name == "credit"
    assert disagreement.favourable.persona.name == "equity"
    words = disagreement.words()
    assert "debt to equity rose from 1.79 (FY2023) to 1.87 (FY2024)" in words
    assert "revenue growth (YoY) was 2.0% in FY2024" in words
    stances = {(s.company, s.persona.name): s.word for s in analysis.synthesis.stances}
    assert stances[("Netflix, Inc.", "credit")] == "favourable"
    assert stances[("Apple Inc.", "esg")] == "no computed reading"
    numbers = {s.n for s in analysis.numbering.sources}
    for f in analysis.findings:
        if f.found:  # every finding keeps its citations, in the analysis's numbering
            assert f.sources and _markers(f.text) <= {s.n for s in f.sources} <= numbers
            assert all(s.page and s.document.endswith(".html") for s in f.sources)
    esg = [f for f in analysis.findings if f.angle in ("emissions", "board", "human capital")]
    assert esg and not any(f.found for f in esg), "the text questions need the model"
    assert any(f.passages for f in esg), "their closest passages are listed to read"
    markdown = analysis.markdown()
    assert "## Where they disagree" in markdown and "## Sources" in markdown
    assert _markers(markdown.split("## Sources")[0]) == numbers, "every source listed is cited"
    data = analysis.as_dict()
    assert {p["name"] for p in data["personas"]} == {"credit", "equity", "esg"}
    assert data["synthesis"]["disagreements"][0]["unfavourable"] == "credit"


def _quoting(needle: str):
    """A scripted model: the evidence prompt gets one claim, the first quote holding
    ``needle`` said in its own words; any facts wording is left to the template."""

    def reply(messages):
        system = str(messages[0]["content"])
        if not system.startswith("You answer questions about company filings"):
            return ""  # the facts route's wording: the template is kept
        text = "\n".join(str(m["content"]) for m in messages)
        for block in re.split(r"\n(?=\[\d+\] )", text):
            m = re.match(r"\[(\d+)\] ", block)
            if m and needle.lower() in block.lower():
                return {
                    "answerable": True,
                    "claims": [
                        {"text": f"The filing discusses {needle}", "source": int(m.group(1))}
                    ],
                }
        return {"answerable": False, "claims": []}

    return reply


@needs_filings
def test_with_a_scripted_model_the_text_questions_become_cited_findings(opened) -> None:
    settings, store = opened
    from finrag.config import load_settings

    settings = load_settings(answer={"use_llm": True})
    llm = FakeLLM([{"__error__": "timeout"}, *[_quoting("board")] * 4])
    asker = Asker(store, settings, llm=llm)
    analysis = analyze(asker, store, ["AAPL"], [load_persona("esg")])
    board = next(f for f in analysis.findings if f.angle == "board")
    assert board.found and board.route == "text", board.text
    assert board.text.startswith("The filing discusses board [")
    emissions = next(f for f in analysis.findings if f.angle == "emissions")
    assert emissions.refusal == "model-failed" and "took longer than 300 s" in emissions.text
    [source] = board.sources
    assert "board" in source.quote.lower() and source.document == APPLE.name
    prompt = llm.calls[-1]["messages"][0]["content"]
    assert "ESG analyst" in prompt, "each persona's questions are answered in its voice"
    assert asker.settings.answer.persona is None, "the Asker is handed back as it came"
    assert analysis.synthesis.disagreements == []
    # Bounded in time: past the bound no question is begun, and each left says so.
    late = analyze(asker, store, ["AAPL"], [load_persona("esg")], seconds=1e-9)
    assert [f.text for f in late.findings] == ["not asked: time (1e-09 s)"] * 5


@needs_filings
def test_analyze_command_json_and_progress(two_companies: Path) -> None:
    env = clean_env(FINRAG_HOME=str(two_companies), FINRAG_EMBED__BACKEND="hash")
    shown = run_finrag(
        "analyze", "AAPL", "--persona", "credit,equity", "--no-llm", "--json", env=env
    )
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)  # stdout holds the JSON alone
    assert [p["name"] for p in data["personas"]] == ["credit", "equity"]
    assert data["synthesis"]["disagreements"][0]["company"] == "Apple Inc."
    leverage = data["personas"][0]["findings"][0]
    assert leverage["reading"]["direction"] == "up" and leverage["citations"][0]["page"] == 33
    assert "[1/12] credit · Apple · leverage" in shown.stderr
    unknown = run_finrag("analyze", "AAPL", "--persona", "hedge-fund", env=env)
    assert unknown.returncode == 2 and "the personas are credit" in unknown.stderr


# ---------------------------------------------------------------- research


def test_the_topic_and_its_words_are_read_by_rule() -> None:
    assert topic_of("How exposed is Boeing to China?", ["Boeing"]) == "China"
    assert topic_of("How dependent is Apple on China?", ["Apple"]) == "China"
    assert topic_of("What is Netflix's exposure to foreign currency?", ["Netflix"]) == (
        "foreign currency"
    )
    chinese = topic_pattern("China")
    assert chinese.search("our Chinese customers") and not chinese.search("Chinook")
    assert not topic_pattern("India").search("Indiana")
    rates = topic_pattern("interest rates")
    assert rates.search("changes in interest rates") and rates.search("an interest-rate swap")
    assert not rates.search("foreign currency rates")


def test_the_model_plans_under_its_schema_and_the_rules_stand_in_when_it_fails() -> None:
    apple = Subject(1, "Apple Inc.", "Apple", "AAPL", "FY2024", "FY2023")
    planned = {
        "sub_questions": [
            {"angle": "sales", "question": "How much did Apple sell in Greater China?"},
            {"angle": "x", "question": "Q2"},  # a label, not a question: dropped
        ]
    }
    plan = plan_research("How exposed is Apple to China?", apple, ["Apple"], llm=FakeLLM([planned]))
    assert plan.planner == "model"
    assert [(q.angle, q.text, q.origin) for q in plan.sub_questions] == [
        ("sales", "How much did Apple sell in Greater China?", "model")
    ]
    failed = FakeLLM([{"__error__": "the model is unreachable"}])
    plan = plan_research("How exposed is Apple to China?", apple, ["Apple"], llm=failed)
    assert plan.planner.startswith("rules (the model's plan failed")
    assert [q.angle for q in plan.sub_questions] == [
        "revenue by geography",
        "customers",
        "supply chain",
        "risk factors",
        "operations and assets",
    ]
    assert plan.sub_questions[0].text == "What was Apple's revenue from China in FY2024?"


def test_a_company_wide_figure_worded_as_the_topic_is_context_not_an_answer() -> None:
    # The facts route answers "revenue from China" with total revenue, and a model's
    # wording may then say "from China": the figure stays context, the question open.
    from finrag.analysis.research import Research, _read
    from finrag.analysis.research_plan import Plan, SubQuestion
    from finrag.answer.citations import Citation

    apple = Subject(1, "Apple Inc.", "Apple", "AAPL", "FY2024", "FY2023")
    q = SubQuestion(1, "revenue by geography", ("What was Apple's revenue from China?",))
    run = Research(Plan("How exposed is Apple to China?", apple, "China", True, "rules", [q]))
    total = Citation(
        1,
        "aapl-10-k-2024-11-01",
        [31, 31],
        "Statements of Operations",
        9,
        "Total net sales: 391,035",
    )
    worded = Answer(
        question=q.text,
        answer="Apple's revenue from China in FY2024 was $391,035 million [1].",
        route="facts",
        citations=[total],
        fact_values=[
            {
                "n": 1,
                "metric": "revenue",
                "value": "391035000000",
                "unit": "USD",
                "period": "FY2024",
            }
        ],
        retrieval={"route_reason": "facts store: value of revenue for FY2024"},
    )
    assert _read(run, q, worded, run.plan.topic_pattern(), 1) == 0 and not run.evidence
    [figure] = run.figures
    assert figure.value == "$391,035 M" and not figure.about_topic
    by_region = Answer(
        question=q.text,
        answer="Apple's revenue in FY2024 by region: China $66,952 million [1].",
        route="facts",
        citations=[
            Citation(
                1,
                "aapl-10-k-2024-11-01",
                [49, 49],
                "Segment Information and Geographic Data · tagged us-gaap:Revenue… · CN",
                10,
                "66,952",
            )
        ],
        fact_values=[
            {"n": 1, "metric": "revenue", "value": "66952000000", "unit": "USD", "period": "FY2024"}
        ],
        retrieval={
            "route_reason": "facts store: revenue by srt:StatementGeographicalAxis (values, FY2024)"
        },
    )
    assert _read(run, q, by_region, run.plan.topic_pattern(), 1) == 1
    assert [f.about_topic for f in run.figures] == [False, True]


@needs_filings
def test_research_reads_in_rounds_and_cites_every_claim(opened) -> None:
    settings, store = opened
    llm = FakeLLM([])
    plan = plan_for(store, "How exposed is Apple to China?")
    assert (plan.topic, plan.place, plan.subject.name) == ("China", True, "Apple Inc.")
    run = research(Asker(store, settings, llm=llm), plan, rounds=3)
    assert not llm.calls
    # Apple's 10-K (p.49) prints Greater China's net sales: the facts store's figure, cited.
    [china] = [f for f in run.figures if f.about_topic]
    assert china.value == "$66,952 M" and china.period == "FY2024"
    assert china.source.document == APPLE.name and china.source.page == 49
    china_words = plan.topic_pattern()
    assert run.evidence and all(china_words.search(e.text) for e in run.evidence)
    assert all(e.sources and all(s.page for s in e.sources) for e in run.evidence)
    kept = [s.n for e in run.evidence if e.kind == "quote" for s in e.sources]
    assert len(kept) == len(set(kept)), "a passage kept once is not kept again"
    first = run.rounds[0]
    assert first.open_before == [1, 2, 3, 4, 5] and first.found_before == []
    for before, after in zip(run.rounds, run.rounds[1:], strict=False):
        still = [a["id"] for a in before.asked if a["outcome"] == "open"]
        assert after.open_before == still + before.follow_ups, "each round takes what is open"
        assert set(after.found_before) >= set(before.found)
    assert run.stopped in ("nothing open", "rounds (3)")
    memo = memo_markdown(run)
    headings = ("## Summary", "## Figures from the facts store", "## Still open", "## Rounds")
    for heading in (*headings, "## Sources"):
        assert memo.count(heading) == 1, heading
    body = memo.split("## Figures from the facts store")[1].split("## Still open")[0]
    claims = [line for line in body.splitlines() if line.startswith("- ")]
    assert claims and all(MARK.search(line) for line in claims), "every claim is cited"
    listed = {s.n for s in run.numbering.sources}
    assert _markers(memo.split("## Sources")[0]) == listed, "every source listed is cited"


@needs_filings
def test_research_with_a_scripted_model_keeps_its_written_answers(opened) -> None:
    _, store = opened
    from finrag.config import load_settings

    settings = load_settings(answer={"use_llm": True})
    llm = FakeLLM([_quoting("China")] * 20)
    run = research(
        Asker(store, settings, llm=llm), plan_for(store, "How exposed is Apple to China?"), rounds=1
    )
    assert run.model_used and llm.calls
    # The yes/no question's reply misses its verdict: that question fails, the run goes on.
    [asked] = run.rounds
    assert len(asked.asked) == 5
    assert [a["angle"] for a in asked.asked if a["refusal"] == "model-failed"] == ["supply chain"]
    # A model failure is no try of the filings: the question stays open, and says why.
    failed = next(q for q in run.plan.sub_questions if q.angle == "supply chain")
    assert (failed.tries, failed.model_failures, failed.state) == (0, 1, "open")
    assert "supply chain: “" in memo_markdown(run)
    assert "the model failed on it 1 time(s); the filings were not read" in memo_markdown(run)
    written = [e for e in run.evidence if e.kind == "answer" and e.text.startswith("The filing")]
    assert written, [e.text for e in run.evidence]
    for e in written:
        assert e.text == f"The filing discusses China [{e.sources[0].n}]."
        assert "china" in e.sources[0].quote.lower() and e.sources[0].page


def test_research_leaves_out_a_written_answer_no_source_backs() -> None:
    """An answer whose number is in no cited passage (kept by the answer step after its
    retry, flagged) or that cites nothing is no claim the memo can stand behind."""
    from finrag.analysis.research import Research, _read
    from finrag.analysis.research_plan import Plan, SubQuestion
    from finrag.answer.citations import Citation

    apple = Subject(1, "Apple Inc.", "Apple", "AAPL", "FY2024", "FY2023")
    q = SubQuestion(1, "supply chain", ("Does Apple depend on suppliers in China?",))
    run = Research(Plan("How exposed is Apple to China?", apple, "China", True, "rules", [q]))
    passage = Citation(
        1,
        "aapl-10-k-2024-11-01",
        [12, 12],
        "Risk Factors",
        3,
        "Substantially all of the Company's manufacturing is performed by outsourcing "
        "partners located primarily in China mainland.",
    )

    def written(text: str, status: str, citations: list) -> Answer:
        return Answer(
            question=q.text, answer=text, route="text", citations=citations, status=status
        )

    invented = written("Apple buys $123.4 billion a year in China [1].", "unsupported", [passage])
    assert _read(run, q, invented, run.plan.topic_pattern(), 1) == 0
    uncited = written("Apple's manufacturing is mostly in China.", "no_numbers", [])
    assert _read(run, q, uncited, run.plan.topic_pattern(), 1) == 0
    assert not run.evidence
    backed = written(
        "Apple's manufacturing is performed mostly by partners in China [1].",
        "no_numbers",
        [passage],
    )
    assert _read(run, q, backed, run.plan.topic_pattern(), 1) == 1 and len(run.evidence) == 1


@needs_filings
def test_research_stops_at_its_bounds(opened) -> None:
    settings, store = opened
    asker = Asker(store, settings, llm=FakeLLM([]))
    one = research(asker, plan_for(store, "How exposed is Apple to China?"), rounds=1)
    assert len(one.rounds) == 1
    assert one.stopped == ("rounds (1)" if one.open_questions() else "nothing open")
    assert any(q.origin == "follow-up" or q.state != "found" for q in one.plan.sub_questions)
    none = research(asker, plan_for(store, "How exposed is Netflix to Japan?"), seconds=1e-9)
    assert none.stopped.startswith("time") and none.rounds[0].asked == []


@needs_filings
def test_research_command_writes_the_memo_and_json(two_companies: Path, tmp_path: Path) -> None:
    env = clean_env(FINRAG_HOME=str(two_companies), FINRAG_EMBED__BACKEND="hash")
    memo = tmp_path / "memo.md"
    shown = run_finrag(
        "research",
        "How exposed is Apple to China?",
        "--no-llm",
        "--rounds",
        "2",
        "--json",
        "--out",
        str(memo),
        env=env,
    )
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["plan"]["topic"] == "China" and len(data["rounds"]) <= 2
    assert data["evidence"] and data["memo"] == memo.read_text()
    assert "round 1: 5 open" in shown.stderr
    refused = run_finrag(
        "research", "How exposed is Apple to China?", "--planner", "model", "--no-llm", env=env
    )
    assert refused.returncode == 2 and "--planner model needs the model" in refused.stderr


def test_an_analysis_line_says_when_its_figure_is_unchecked() -> None:
    from finrag.analysis.findings import Finding
    from finrag.analysis.sources import Source
    from finrag.analysis.synthesis import _finding_line

    source = Source(1, "aapl-10-k-2024-11-01.html", 31, "Total net sales: 391,035", "a#page=31")

    def finding(status: str, sources: list) -> Finding:
        return Finding("q", "growth", "Apple", "Revenue was $391 billion [1].", "text", status,
                       False, None, sources=sources)  # fmt: skip

    assert "unchecked" not in _finding_line(finding("found_in_source", [source]), "reader")
    assert _finding_line(finding("unsupported", [source]), "reader").endswith(
        "*(a number here is in no cited source: unchecked)*"
    )
    assert _finding_line(finding("no_numbers", []), "reader").endswith(
        "*(cites no source: unchecked)*"
    )
