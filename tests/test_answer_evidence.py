"""The text route answers from quotes: the retrieved chunks split into numbered sentences
and rows, the few that answer selected by id, the model's reply held to a schema whose
sources are those ids, a yes/no stated first with its deciding quote, a number no quote
holds removed, and a refusal that names the closest passages. The selection on chunks
built here; the route end to end on the real Postgres with a scripted model."""

from __future__ import annotations

import json
import os

import pytest

from finrag.answer.pipeline import Asker
from finrag.answer.stages.compose import asks_one_pick, compose, is_yes_no, reply_model
from finrag.answer.stages.evidence import needs_arithmetic, select, units
from finrag.errors import ExitCode
from finrag.llm.base import LLMError, json_schema
from finrag.llm.fake import FakeLLM
from finrag.retrieve.context import ContextChunk
from tests.conftest import run_finrag
from tests.corpus import excerpt_number, make_hit, quoted

MDA = (
    "Revenue decreased 7% in the quarter. The decrease was driven primarily by lower "
    "demand for computing and home theater products. Our gross margin rate increased 0.4 "
    "percentage points. We opened two stores and closed eleven stores during the quarter."
)
LEGAL = (
    "We are involved in a number of legal proceedings. In the opinion of management, the "
    "outcome of these proceedings will not have a material adverse effect on our results."
)
TABLE = "Revenue by category ($ in millions)\n\n|Category|2024|2023|\n|---|---|---|\n" + (
    "|Computing and Mobile Phones|3,981|4,350|\n|Entertainment|581|637|"
)


def chunk(n: int, content: str, *, page: int, kind: str = "text", score: float = 0.5):
    hit = make_hit(
        chunk_id=n,
        document="/filings/SHOP_2024Q2_10Q.pdf",
        company="Shop",
        kind=kind,
        page_start=page,
        page_end=page,
        content=content,
        score=score,
        dense_score=score,
    )
    return ContextChunk(n, hit)


CONTEXT = [chunk(1, MDA, page=4), chunk(2, LEGAL, page=20), chunk(3, TABLE, page=6, kind="table")]


def test_chunks_split_into_sentences_and_table_rows() -> None:
    assert units(CONTEXT[0])[1] == (
        "The decrease was driven primarily by lower demand for computing and home theater products."
    )
    rows = units(CONTEXT[2])
    assert any(r.startswith("Computing and Mobile Phones") and "3,981" in r for r in rows)


def test_the_driver_sentence_is_selected_with_the_sentence_it_refers_to() -> None:
    picked = select("What drove the decline in Shop's revenue?", CONTEXT, ignore=["Shop"])
    first = picked.chosen[0]
    assert first.n == 1 and first.chunk.n == 1
    # "The decrease was..." says nothing alone: quoted with the sentence before it.
    assert first.text == (
        "Revenue decreased 7% in the quarter. The decrease was driven primarily by lower "
        "demand for computing and home theater products."
    )
    assert [e.n for e in picked.chosen] == list(range(1, len(picked.chosen) + 1))
    assert "legal proceedings" not in " ".join(e.text for e in picked.chosen[:2])


def test_a_litigation_question_selects_the_legal_sentences() -> None:
    picked = select("Is Shop involved in any litigation?", CONTEXT, ignore=["Shop"])
    assert picked.chosen[0].chunk.n == 2
    assert "legal proceedings" in picked.chosen[0].text


REGIONS = "Net revenues by region (In thousands)\n\n|Region|2024|2023|\n|---|---|---|\n" + (
    "|Harbor Resorts|2,297|1,806|\n|Inland Operations|991|899|\n|Island Resort|174|314|"
)
REGION_TEXT = (
    "Each region is managed by its own president. Our regions compete with other resorts "
    "for visitors in every market we serve."
)


def test_a_table_row_is_scored_with_its_tables_title() -> None:
    context = [
        chunk(1, REGION_TEXT, page=3, score=0.6),
        chunk(2, REGIONS, page=13, kind="table", score=0.5),
    ]
    picked = select("What were Shop's net revenues in Island Resort?", context, ignore=["Shop"])
    # "Island Resort: 2024 174; 2023 314" holds "net revenues" only through its table's title.
    assert picked.chosen[0].text.startswith("Island Resort")


def test_a_question_after_a_figure_prefers_the_sentence_that_prints_one() -> None:
    # Both sentences hold the question's words; the better-ranked chunk's has no figure.
    context = [
        chunk(
            1, "The spin-off costs are mostly for consulting and systems work.", page=9, score=0.9
        ),
        chunk(2, "The spin-off costs will total about $250 million.", page=30, score=0.5),
    ]
    picked = select("How much will the spin-off cost Shop?", context, ignore=["Shop"])
    assert "$250 million" in picked.chosen[0].text
    plain = select("What are the spin-off costs for Shop?", context, ignore=["Shop"])
    assert plain.chosen[0].chunk.n == 1  # no figure asked: the better-ranked sentence


def test_no_sentence_sharing_a_word_means_no_evidence() -> None:
    picked = select("How many employees does Shop have in Brazil?", CONTEXT, ignore=["Shop"])
    assert picked.chosen == [] and picked.candidates > 0
    assert len(picked.closest) == 3, "the closest passages, for the refusal"


def test_the_reply_schema_holds_sources_to_the_quotes_shown() -> None:
    model = reply_model([1, 2, 3], yes_no=True)
    schema = json_schema(model)
    assert schema["properties"]["decisive"]["enum"] == [1, 2, 3]
    assert list(schema["properties"]) == ["answerable", "decisive", "verdict", "claims"]
    assert schema["properties"]["claims"]["maxItems"] == 3
    ok = {"answerable": True, "decisive": 2, "verdict": "No", "claims": []}
    assert model.model_validate(ok).verdict == "No"
    # A scripted model that names a quote it was not shown fails as a real one cannot
    # (the grammar built from the schema never lets it write one).
    llm = FakeLLM([{"answerable": True, "claims": [{"text": "x", "source": 7}]}])
    with pytest.raises(LLMError, match="does not fit EvidenceAnswer"):
        llm.chat([{"role": "user", "content": "q"}], output=reply_model([1, 2], yes_no=False))


def test_a_question_after_one_pick_gets_one_claim() -> None:
    assert asks_one_pick("Which segment had the largest operating income for ACME in 2023?")
    assert not asks_one_pick("What drove ACME's revenue growth in 2023?")
    assert not asks_one_pick("What drove the change in Best Buy's gross margin in 2023?")
    assert asks_one_pick("Which region grew fastest at ACME?")
    schema = json_schema(reply_model([1, 2], yes_no=False, max_claims=1))
    assert schema["properties"]["claims"]["maxItems"] == 1
    # compose holds such a question to it: a second candidate does not fit the reply.
    chosen = select("Which category had the largest revenue?", CONTEXT, ignore=["Shop"]).chosen
    n = chosen[0].n
    two = {"answerable": True, "claims": [{"text": "A", "source": n}, {"text": "B", "source": n}]}
    question = "Which category had the largest revenue for Shop?"
    with pytest.raises(LLMError, match="does not fit"):
        compose(FakeLLM([two]), question, chosen)
    assert len(compose(FakeLLM([two]), "What drove Shop's revenue?", chosen).claims) == 2


def test_a_claim_restated_with_another_figure_is_dropped() -> None:
    chosen = select("What was Shop's revenue by category?", CONTEXT, ignore=["Shop"]).chosen
    first, second = chosen[0].n, chosen[-1].n
    said = [
        {"text": "Shop's category revenue was $4.1 billion.", "source": first},
        {"text": "Shop's category revenue was $2.7 billion.", "source": second},
        {"text": "Online sales grew 12%.", "source": second},
    ]
    composed = compose(FakeLLM([{"answerable": True, "claims": said}]), "Shop revenue?", chosen)
    assert [text for text, _ in composed.claims] == [
        f"Shop's category revenue was $4.1 billion [{first}].",
        f"Online sales grew 12% [{second}].",
    ]


def test_question_kinds() -> None:
    assert is_yes_no("Did ACME buy back shares in 2023?")
    assert not is_yes_no("What drove ACME's revenue?")
    assert needs_arithmetic("How did ACME's capex change from 2022 to 2023?")
    assert not needs_arithmetic("What drove the change in ACME's capex?")


def test_yes_no_states_the_verdict_then_the_deciding_quote(store_and_settings) -> None:
    store, settings = store_and_settings

    def decide(messages):
        n = excerpt_number(messages, "capital expenditures were $310 million")
        claim = {"text": "ACME spent $310 million, mostly for rocket plants", "source": n}
        return {"answerable": True, "decisive": n, "verdict": "Yes", "claims": [claim]}

    llm = FakeLLM([decide])
    answer = Asker(store, settings, llm=llm).ask("Did ACME invest in rocket plants in 2023?")
    assert not answer.refused, answer.answer
    quote = "ACME capital expenditures were $310 million in 2023, mostly for rocket plants."
    assert answer.answer.startswith(f"Yes. The filing says: “{quote}” [")
    assert llm.calls[0]["output"] == "EvidenceAnswer"
    assert answer.evidence[0] == {
        "n": answer.citations[0].n,
        "document": "ACME_2023_10K.pdf",
        "page": 3,
        "quote": quote,
    }
    assert answer.status == "found_in_source" and answer.flags == []


def test_a_number_no_quote_holds_is_removed_and_the_answer_says_so(store_and_settings) -> None:
    store, settings = store_and_settings

    def reply(messages):
        n = excerpt_number(messages, "capital expenditures were $310 million")
        return {
            "answerable": True,
            "claims": [
                {"text": "ACME's capital expenditures were $310 million in 2023", "source": n},
                {"text": "That was 40% above plan", "source": n},
            ],
        }

    llm = FakeLLM([reply])
    answer = Asker(store, settings, llm=llm).ask("What were ACME's capital expenditures in 2023?")
    assert answer.answer.startswith("ACME's capital expenditures were $310 million in 2023 [")
    assert "40%" not in answer.answer
    assert answer.answer.endswith(" (A statement with a figure no quote holds was removed.)")
    assert [p["number"] for p in answer.unverified_numbers] == ["40%"]
    assert any(f.startswith("removed: unverified number 40%") for f in answer.flags)
    assert answer.status == "found_in_source", "what is left is in its quote"
    assert len(llm.calls) == 1, "no second call: the figure is removed, not rewritten"


def test_a_figure_asked_and_none_held_refuses_rather_than_quote(store_and_settings) -> None:
    store, settings = store_and_settings

    def reply(messages):
        n = excerpt_number(messages, "capital expenditures were $310 million")
        return {"answerable": True, "claims": [{"text": "ACME runs 45 rocket plants", "source": n}]}

    # "How many": the one figure written is in no quote, so it is removed, and the best
    # quote alone ("capital expenditures were $310 million") would not say how many.
    answer = Asker(store, settings, llm=FakeLLM([reply])).ask(
        "How many rocket plants does ACME run?"
    )
    assert answer.refused and answer.refusal == "no-evidence", answer.answer
    assert answer.answer.startswith("I could not find that in your filings")
    assert "45" not in answer.answer


def test_no_answering_sentence_refuses_with_exit_7_naming_the_closest(
    store_and_settings, tmp_path, database_url
) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([]))  # any model call would fail: none is made
    env = dict(
        os.environ,
        FINRAG_DATABASE_URL=database_url,
        FINRAG_LLM__BACKEND="fake",
        FINRAG_LLM__FAKE_SCRIPT=str(script),
    )
    question = "How many employees does ACME have in Brazil?"
    result = run_finrag("ask", question, "--json", env=env)
    assert result.returncode == ExitCode.NO_ANSWER, result.stderr
    data = json.loads(result.stdout)
    assert data["refusal"] == "no-evidence" and data["evidence"] == []
    assert data["answer"].startswith("I could not find that in your filings (searched ACME")
    assert "no sentence of the passages found answers it" in data["answer"]
    assert "Closest passages: ACME_2023_10K p." in data["answer"]


def test_the_model_sees_only_the_selected_quotes(store_and_settings) -> None:
    store, settings = store_and_settings
    seen: list[str] = []
    llm = FakeLLM([quoted("$9.6 billion", "ACME's revenue grew 12% to $9.6 billion", seen)])
    answer = Asker(store, settings, llm=llm).ask("What was ACME's revenue in 2023?")
    system, user = seen
    assert "Globex" not in user and user.startswith("Quotes:\n[1] ACME_2023_10K p.")
    assert user.endswith("Question: What was ACME's revenue in 2023?")
    assert "$QUOTES" not in system and "ACME" not in system, "the fixed prefix comes first"
    assert answer.retrieval["evidence"]["selected"][0]["n"] == 1
    assert answer.timings["evidence"] >= 0 and "extract" not in answer.timings


def test_mixed_figures_from_facts_and_the_reasons_from_a_quote(store_and_settings) -> None:
    from tests.corpus import add_document
    from tests.test_facts_store import _store_apple

    store, settings = store_and_settings
    reason = "The increase in net sales was driven primarily by higher net sales of Services."
    with store.connect() as conn:
        _store_apple(conn, settings)
        add_document(
            conn,
            Asker(store, settings, llm=FakeLLM([])).retriever.embedder,
            "AAPL_2024_MDA.htm",
            [f"Net sales rose in fiscal 2024. {reason}"],
            company="Apple Inc.",
            year=2024,
        )
    llm = FakeLLM([quoted("higher net sales of Services", "Services drove the increase")])
    answer = Asker(store, settings, llm=llm).ask(
        "How did Apple's total net sales change in fiscal 2024 and why?"
    )
    assert answer.route == "mixed" and not answer.refused, answer.answer
    n = next(c.n for c in answer.chunks if reason in c.hit.content)
    assert answer.answer.startswith("Apple's revenue went from $383,285 million in FY2023")
    assert n > 2, "the quotes are numbered after the facts' two sources"
    assert answer.answer.endswith(f"Services drove the increase [{n}].")
    assert answer.evidence[-1]["quote"].endswith(reason)
    # The figures' sources quote the rows that print them, as the facts route cited them.
    figures = {c.n: c.quote for c in answer.citations if c.n <= 2}
    assert "383,285" in figures[1] and "391,035" in figures[2], figures
    assert answer.status == "verified" or answer.status == "found_in_source"
    assert len(llm.calls) == 1, "one call: the reasons; the figures need none"


def test_without_the_model_the_quotes_are_still_selected(store_and_settings) -> None:
    store, settings = store_and_settings
    off = settings.model_copy(
        update={"answer": settings.answer.model_copy(update={"use_llm": False})}
    )
    answer = Asker(store, off, llm=FakeLLM([])).ask("What did ACME say about its rocket plants?")
    assert answer.refused and answer.refusal == "no-llm"
    assert answer.evidence[0] == {
        "n": 1,
        "document": "ACME_2023_10K.pdf",
        "page": 3,
        "quote": "ACME capital expenditures were $310 million in 2023, mostly for rocket plants.",
    }


LITIGATION_PAGES = [
    "Initech overview: we sell staplers to offices.",
    "We and our subsidiaries are party to a variety of litigation, claims and legal "
    "proceedings arising in the ordinary course of business.",
    "While the results of such proceedings cannot be predicted with certainty, management "
    "believes that the final outcome of these legal proceedings will not have a material "
    "adverse effect on our financial statements.",
]
SETTLED = "In 2023 we recorded a charge of $1.2 billion to settle the stapler patent lawsuits."


@pytest.mark.parametrize("settled", [False, True])
def test_a_material_litigation_question_is_decided_by_the_filings_conclusion(
    store_and_settings, settled
) -> None:
    from finrag.embed import get_embedder
    from tests.corpus import add_document

    store, settings = store_and_settings
    pages = LITIGATION_PAGES + ([SETTLED] if settled else [])
    with store.connect() as conn:
        add_document(conn, get_embedder(settings.embed), "INITECH_2023_10K.pdf", pages,
                     company="Initech", year=2023)  # fmt: skip

    def boilerplate_yes(messages):  # the small model's answer on the boilerplate
        n = excerpt_number(messages, "party to a variety of litigation")
        claim = {"text": "Initech is party to a variety of litigation", "source": n}
        return {"answerable": True, "decisive": n, "verdict": "Yes", "claims": [claim]}

    asker = Asker(store, settings, llm=FakeLLM([boilerplate_yes]))
    answer = asker.ask("Is Initech facing any material litigation in 2023?")
    if settled:  # a charge with an amount: the conclusion does not decide, the reading does
        assert answer.answer.startswith("Yes."), answer.answer
    else:
        assert answer.answer.startswith(
            "No. The filing says: “While the results of such proceedings cannot be predicted "
            "with certainty, management believes that the final outcome of these legal "
            "proceedings will not have a material adverse effect"
        ), answer.answer
        assert answer.retrieval["evidence"]["decided"]


def test_the_conclusion_decides_only_a_question_after_material_litigation() -> None:
    from finrag.answer.stages.decisive import litigation

    pool = [(chunk(1, LEGAL, page=20), u) for u in units(chunk(1, LEGAL, page=20))]
    assert litigation("Is Shop involved in any material litigation?", pool).verdict == "No"
    assert litigation("Did Shop open stores in 2024?", pool) is None
    risk = chunk(2, LEGAL, page=9)
    risk.hit.section_path = ["Item 1A. Risk Factors"]
    assert litigation("Is Shop involved in material lawsuits?", [(risk, LEGAL)]) is None
    hedged = (
        "We cannot assure that these legal proceedings will not have a material adverse effect."
    )
    assert (
        litigation("Is Shop involved in material lawsuits?", [(chunk(3, hedged, page=21), hedged)])
        is None
    )
