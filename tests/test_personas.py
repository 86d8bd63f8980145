"""Personas (finrag/personas/): the files load and name only KPIs kpis.toml defines; an
unknown name is a usage error listing them; a persona's instructions reach the answer
and phrasing prompts; its KPIs beside an answer come from the facts store; chat switches
persona with /persona. On the real embedded Postgres with a scripted model."""

from __future__ import annotations

import json
import os
from decimal import Decimal

import pytest

from finrag.errors import ExitCode, FinragError, UsageError
from finrag.facts.checks import check_facts
from finrag.facts.extract import table_facts
from finrag.facts.kpi import kpis
from finrag.facts.periods import FiscalCalendar
from finrag.facts.store import write_facts
from finrag.ingest.chunk import Chunk
from finrag.llm.fake import FakeLLM
from finrag.personas import load_persona, parse_persona, persona_names, with_persona
from tests.conftest import run_finrag
from tests.corpus import add_document, quoted
from tests.test_facts_tables import APPLE_OPERATIONS

APPLE = "What were Apple's total net sales in fiscal 2024?"
GLOBEX = "What was Globex revenue in 2023?"

# Apple's FY2024 balance sheet (10-K p.32), the lines the credit KPIs read; in millions.
APPLE_BALANCE = """\
PART II > Item 8. Financial Statements > CONSOLIDATED BALANCE SHEETS
(In millions)

|ASSETS:|September 28, 2024|September 30, 2023|
|---|---|---|
|Cash and cash equivalents|$29,943|$29,965|
|Inventories|7,286|6,331|
|Total current assets|152,987|143,566|
|Total assets|$364,980|$352,583|
|Total current liabilities|176,392|145,308|
|Total liabilities|308,030|290,437|
"""


def _store_apple(conn, settings) -> None:
    """Apple's statement of operations and balance sheet as table chunks, with their facts."""
    from finrag.embed import get_embedder

    texts = ["Apple designs smartphones.", APPLE_OPERATIONS, APPLE_BALANCE]
    kinds = ["text", "table", "table"]
    doc_id = add_document(
        conn,
        get_embedder(settings.embed),
        "AAPL_2024_10K.htm",
        texts,
        company="Apple Inc.",
        year=2024,
        kinds=kinds,
    )
    pairs = enumerate(zip(kinds, texts, strict=True))
    chunks = [Chunk(i, kind, i + 1, i + 1, [], text, text, 1) for i, (kind, text) in pairs]
    company_id = conn.execute(
        "SELECT company_id FROM documents WHERE id = %s", (doc_id,)
    ).fetchone()[0]
    with conn.transaction():
        # The fiscal year ends in September: a balance on September 28 is the year's.
        conn.execute("UPDATE documents SET period_end = '2024-09-28' WHERE id = %s", (doc_id,))
        write_facts(conn, doc_id, company_id, check_facts(table_facts(chunks, FiscalCalendar(9))))


@pytest.fixture
def apple_store(store_and_settings):
    store, settings = store_and_settings
    with store.connect() as conn:
        _store_apple(conn, settings)
    return store, settings


@pytest.fixture
def env(apple_store, database_url: str, tmp_path):
    def make(replies: list | None = None) -> dict[str, str]:
        script = tmp_path / "replies.json"
        script.write_text(json.dumps(replies or []))
        return dict(
            os.environ,
            FINRAG_DATABASE_URL=database_url,
            FINRAG_LLM__BACKEND="fake",
            FINRAG_LLM__FAKE_SCRIPT=str(script),
        )

    return make


# ---------------------------------------------------------------- the files


def test_every_persona_file_loads_and_names_only_defined_kpis() -> None:
    assert persona_names() == ["credit", "equity", "esg", "retail"]
    defined = {k.name for k in kpis()}
    for name in persona_names():
        persona = load_persona(name)
        assert persona.name == name and persona.title and persona.instructions
        assert persona.emphasis and persona.kpis
        assert set(persona.kpis) <= defined, name
    assert load_persona("Credit") is load_persona("Credit")
    credit, equity = load_persona("credit"), load_persona("equity")
    assert "interest_coverage" in credit.kpis and "revenue_growth" in equity.kpis
    assert set(credit.kpis) != set(equity.kpis)


def test_a_persona_file_naming_an_unknown_kpi_or_field_fails_loudly() -> None:
    good = load_persona("credit")
    text = (
        f'title = "{good.title}"\nsummary = "s"\nemphasis = ["e"]\n'
        f'instructions = "i"\nkpis = ["current_ratio", "ebitda_yield"]\n'
    )
    with pytest.raises(FinragError, match=r"'ebitda_yield' not in finrag/facts/kpis\.toml"):
        parse_persona("bad", text)
    with pytest.raises(FinragError, match="unknown field"):
        parse_persona("bad", text.replace("ebitda_yield", "roe") + 'tone = "x"\n')
    with pytest.raises(FinragError, match="lacks kpis"):
        parse_persona("bad", text.split("kpis")[0])
    with pytest.raises(UsageError, match="the personas are credit, equity, esg, retail"):
        load_persona("hedge-fund")


def test_persona_instructions_join_the_system_message() -> None:
    persona = load_persona("retail")
    messages = [{"role": "system", "content": "Be careful."}, {"role": "user", "content": "Q"}]
    joined = with_persona(messages, persona)
    assert joined[0]["content"].startswith("Be careful.\n\nWrite this answer for a retail investor")
    assert persona.instructions in joined[0]["content"]
    assert joined[1] == messages[1] and messages[0]["content"] == "Be careful."
    assert with_persona(messages, None) is messages


def test_an_unknown_persona_exits_2_listing_the_personas() -> None:
    for command in (["ask", GLOBEX, "--no-llm"], ["chat", "--input", "-"]):
        result = run_finrag(*command, "--persona", "hedge-fund")
        assert result.returncode == ExitCode.USAGE == 2, result.stderr
        assert "no persona 'hedge-fund': the personas are credit, equity, esg, retail" in (
            result.stderr
        )
    bad = run_finrag("config", "show", env=dict(os.environ, FINRAG_ANSWER__PERSONA="nobody"))
    assert bad.returncode != 0 and "answer.persona" in bad.stderr and "credit" in bad.stderr


# ---------------------------------------------------------------- the prompts


def test_the_persona_reaches_the_answer_and_phrasing_prompts(apple_store) -> None:
    from finrag.answer.pipeline import Asker
    from finrag.cli.state import with_options

    store, settings = apple_store
    credit = with_options(settings, "answer", persona="credit", k=1)
    instructions = load_persona("credit").instructions

    llm = FakeLLM([quoted("fell 3% to $4.0 billion", "Globex revenue fell 3% to $4.0 billion")])
    answer = Asker(store, credit, llm=llm).ask(GLOBEX)
    assert answer.route == "text" and not answer.refused, answer.flags
    (written,) = (call["messages"][0]["content"] for call in llm.calls)
    assert "Write this answer for a credit analyst" in written and instructions in written

    llm = FakeLLM(["Apple's total net sales were $391,035 million in fiscal 2024 [1]."])
    answer = Asker(store, credit, llm=llm).ask(APPLE)
    assert answer.route == "facts"
    [phrasing] = llm.calls
    assert instructions in phrasing["messages"][0]["content"]

    plain = FakeLLM(["Apple's total net sales were $391,035 million in fiscal 2024 [1]."])
    Asker(store, settings, llm=plain).ask(APPLE)
    assert "Write this answer for" not in plain.calls[0]["messages"][0]["content"]


# ---------------------------------------------------------------- the KPIs


def test_ask_persona_shows_its_kpis_from_stored_facts_and_two_personas_differ(env) -> None:
    result = run_finrag("ask", APPLE, "--no-llm", "--persona", "credit", "--json", env=env())
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    persona = data["persona"]
    assert (persona["name"], persona["companies"], persona["periods"]) == (
        "credit",
        ["Apple Inc."],
        ["FY2024"],
    )
    rows = {r["kpi"]: r for r in persona["kpis"]}
    assert list(rows) == list(load_persona("credit").kpis)
    current = rows["current_ratio"]
    assert Decimal(str(current["value"])) == pytest.approx(Decimal(152_987) / Decimal(176_392))
    assert current["expression"] == "152987000000 / 176392000000"
    assert current["sources"] == ["AAPL_2024_10K.htm#page=3"]
    assert {i["printed"] for i in current["inputs"]} == {"152,987", "176,392"}
    cash = rows["cash_ratio"]
    assert cash["display_value"] == "0.17" and cash["gap"] is None
    # No debt line is stored: the KPI says what is missing rather than a number.
    debt = rows["debt_to_equity"]
    assert debt["value"] is None and debt["gap"]["reason"] == "missing"

    human = run_finrag("ask", APPLE, "--no-llm", "--persona", "credit", env=env())
    assert human.returncode == 0, human.stderr
    block = human.stdout.split("Persona: credit (credit analyst) · Apple Inc. · FY2024\n")[1]
    assert "Current ratio" in block and "0.87" in block and "AAPL_2024_10K.htm#page=3" in block

    # Another reader, the same question: other KPIs, from the same stored facts.
    other = run_finrag("ask", APPLE, "--no-llm", "--persona", "equity", "--json", env=env())
    assert other.returncode == 0, other.stderr
    equity = json.loads(other.stdout)
    assert equity["answer"] == data["answer"], "with --no-llm the answer is the template's"
    shown = {r["kpi"]: r for r in equity["persona"]["kpis"]}
    assert set(shown).isdisjoint(rows)
    growth = shown["revenue_growth"]
    assert growth["expression"] == "100 * (391035000000 - 383285000000) / 383285000000"
    assert shown["net_margin"]["display_value"] == "24.0%"


def test_ask_persona_with_a_scripted_model_and_from_settings(env) -> None:
    wording = "Apple's total net sales were $391,035 million in fiscal 2024 [1]."
    settings_env = env([wording]) | {"FINRAG_ANSWER__PERSONA": "retail"}
    result = run_finrag("ask", APPLE, "--json", env=settings_env)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["answer"] == wording and data["backend"] == "fake"
    assert data["persona"]["name"] == "retail"
    assert [r["kpi"] for r in data["persona"]["kpis"]] == list(load_persona("retail").kpis)
    off = run_finrag("ask", APPLE, "--no-llm", "--persona", "off", "--json", env=settings_env)
    assert off.returncode == 0 and "persona" not in json.loads(off.stdout)


def test_chat_persona_command_switches_and_turns_carry_the_kpis(env, tmp_path) -> None:
    lines = tmp_path / "turns.txt"
    lines.write_text(
        f"/persona\n/persona equity\n{APPLE}\n/persona off\n/persona bogus\n/persona\n/help\n"
    )
    wording = "Apple's total net sales were $391,035 million in fiscal 2024 [1]."
    result = run_finrag(
        "chat", "--input", str(lines), "--json", "--persona", "credit", env=env([wording])
    )
    assert result.returncode == 0, result.stderr
    objects = [json.loads(line) for line in result.stdout.splitlines()]
    first, switched, turn, off, after, helped = objects
    assert first == {"command": "/persona", "result": {"persona": load_persona("credit").as_dict()}}
    assert switched["result"]["persona"]["name"] == "equity"
    assert turn["answer"] == wording
    assert turn["persona"]["name"] == "equity" and turn["persona"]["periods"] == ["FY2024"]
    assert {r["kpi"] for r in turn["persona"]["kpis"]} == set(load_persona("equity").kpis)
    assert off["result"] == {"persona": None} and after["result"] == {"persona": None}
    assert "no persona 'bogus'" in result.stderr, "a typo costs the command, not the session"
    assert "/persona" in helped["result"] and "credit|equity|esg|retail" in helped["result"]


def test_the_kpis_are_for_the_latest_period_an_answer_states(apple_store) -> None:
    from finrag.answer.pipeline import Asker
    from finrag.cli.state import with_options
    from finrag.personas.kpis import kpis_for_answers

    store, settings = apple_store
    offline = with_options(settings, "answer", use_llm=False)
    answer = Asker(store, offline).ask(
        "How did Apple's total net sales change from fiscal 2023 to fiscal 2024?"
    )
    assert answer.route == "facts" and {v["period"] for v in answer.fact_values} == {
        "FY2023",
        "FY2024",
    }
    with store.connect() as conn:
        view = kpis_for_answers(conn, load_persona("equity"), [answer])
    assert view is not None and view.periods == ["FY2024"]
    refused = Asker(store, offline).ask("What was Initech's revenue in 2023?")
    assert refused.refusal == "unknown-company"
    with store.connect() as conn:
        assert kpis_for_answers(conn, load_persona("equity"), [refused]) is None
