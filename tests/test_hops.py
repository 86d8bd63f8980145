"""Dependent hops on the two small 10-Ks (tests.corpus): the rules' plan and the model's,
a company slot filled from what hop 1's answer states, with a scripted model on the real
embedded Postgres. The segment slot and `ask --json`'s plan on a real filing are in
tests/test_facts_route.py (its Best Buy store)."""

from __future__ import annotations

from finrag.answer.hop_plan import looks_dependent, plan_for, plan_hops
from finrag.answer.hops import run_chain
from finrag.answer.pipeline import Asker
from finrag.llm.fake import FakeLLM
from tests.corpus import excerpt_number, quoted

LOWER = (
    "Of Globex and ACME, the company with the lower revenue in 2023: "
    "what were its capital expenditures?"
)
NESTED = (
    "What were the capital expenditures of the company with the higher revenue in 2023, "
    "ACME or Globex?"
)


def test_the_rules_split_a_ranking_then_a_reference_and_nothing_else(store_and_settings) -> None:
    store, _ = store_and_settings
    with store.connect() as conn:
        plan = plan_hops(conn, LOWER)
        assert plan is not None and plan.planner == "rules"
        one, two = plan.hops
        assert one.question == "What was the revenue of Globex and ACME in 2023?"
        assert (one.slot, one.pick, one.depends_on) == ("company", "min", [])
        assert two.question == "What were {1}'s capital expenditures in 2023?"
        assert two.depends_on == [1] and two.slot is None
        # One question each: no ranking before the break, no reference after it, no break.
        for single in (
            "What was ACME's revenue in 2023, and what were its capital expenditures?",
            "Which had the higher revenue in 2023: ACME or Globex?",
            "Which company had the higher revenue in 2023, ACME or Globex?",
            "What were ACME's capital expenditures in 2023?",
            # "it" is the revenue here, not what the ranking picked.
            "Which company had the highest revenue in 2023 and how did it change?",
        ):
            assert plan_hops(conn, single) is None, single
            assert plan_for(conn, single, lambda: FakeLLM([])) == (None, None), single
        # The nested form has the shape but no break: without a model it is one question.
        assert plan_hops(conn, NESTED) is None and looks_dependent(NESTED)
        assert plan_for(conn, NESTED, None) == (None, None)


def _revenues(messages) -> dict:
    """The model's answer to hop 1, ACME named first."""
    return {
        "answerable": True,
        "claims": [
            {
                "text": "ACME revenue grew 12% to $9.6 billion in 2023",
                "source": excerpt_number(messages, "$9.6 billion"),
            },
            {
                "text": "Globex revenue fell 3% to $4.0 billion in 2023",
                "source": excerpt_number(messages, "$4.0 billion"),
            },
        ],
    }


def test_a_company_slot_takes_the_company_whose_stated_value_ranks(store_and_settings) -> None:
    store, settings = store_and_settings
    llm = FakeLLM(
        [
            _revenues,
            quoted("$95 million", "Globex capital expenditures were $95 million in 2023"),
        ]
    )
    asker = Asker(store, settings, llm=llm)
    with store.connect() as conn:
        plan, _ = plan_for(conn, LOWER, lambda: llm)
    chain = run_chain(store, plan, LOWER, lambda q, _hop: asker.ask(q))
    first, second = chain.runs
    # The lower of the two revenues the answer states ($4.0 billion against $9.6 billion),
    # not its percentages, and not the company it happens to name first.
    assert first.entity == "Globex"
    assert first.how == "the lowest stated value (Globex 4,000,000,000, ACME 9,600,000,000)"
    assert second.question == "What were Globex's capital expenditures in 2023?"
    assert "$95 million" in second.answer.answer
    assert len(llm.calls) == 2, "the rules planned: no model call for the plan"
    combined = chain.answer
    assert [c.n for c in combined.citations] == [1, 2, 3]
    assert combined.citations[2].document == "GLOBEX_2023_10K"
    assert "were $95 million in 2023 [3]." in combined.answer
    assert [r["status"] for r in chain.rows] == ["answered", "answered"]


def test_the_model_plans_the_nested_form_held_to_its_schema(store_and_settings) -> None:
    store, settings = store_and_settings
    planned = {
        "hops": [
            {
                "question": "Which of ACME and Globex had the higher revenue in 2023?",
                "passes_on": "company",
            },
            {"question": "What were {1}'s capital expenditures in 2023?", "passes_on": "nothing"},
        ]
    }
    llm = FakeLLM(
        [
            planned,
            quoted("$9.6 billion", "ACME had the higher revenue, $9.6 billion in 2023"),
            quoted("$310 million", "ACME capital expenditures were $310 million in 2023"),
        ]
    )
    with store.connect() as conn:
        plan, note = plan_for(conn, NESTED, lambda: llm)
    assert note is None and plan.planner == "model"
    assert llm.calls[0]["output"] == "PlannedHops"
    assert NESTED in llm.calls[0]["messages"][-1]["content"]
    assert [h.depends_on for h in plan.hops] == [[], [1]]
    assert plan.hops[0].slot == "company"
    asker = Asker(store, settings, llm=llm)
    chain = run_chain(store, plan, NESTED, lambda q, _hop: asker.ask(q))
    first, second = chain.runs
    # One company has a stated value: the "which" answer's verdict names the company.
    assert first.entity == "ACME" and first.how == "the first company the answer names"
    assert second.question == "What were ACME's capital expenditures in 2023?"
    assert "$310 million" in second.answer.answer and llm.replies == []


def test_a_model_plan_that_is_no_chain_is_one_question(store_and_settings) -> None:
    store, _ = store_and_settings
    unchained = {
        "hops": [
            {"question": "Which had the higher revenue in 2023?", "passes_on": "company"},
            {"question": "What were ACME's capital expenditures in 2023?", "passes_on": "nothing"},
        ]
    }
    with store.connect() as conn:
        plan, note = plan_for(conn, NESTED, lambda: FakeLLM([unchained]))
        assert plan is None
        assert note == (
            'hop 2 uses no earlier answer ("What were ACME\'s capital expenditures in 2023?")'
            ": asked as one question"
        )
        plan, note = plan_for(conn, NESTED, lambda: FakeLLM([{"__error__": "boom"}]))
        assert plan is None and note.startswith("the model could not plan the hops (")
        # Hop 1 cannot use hop 2's answer: refused as a plan, not a KeyError mid-chain.
        forward = {
            "hops": [
                {"question": "What was {2}'s revenue in 2023?", "passes_on": "company"},
                {"question": "What were {1}'s capital expenditures?", "passes_on": "nothing"},
            ]
        }
        plan, note = plan_for(conn, NESTED, lambda: FakeLLM([forward]))
        assert plan is None
        assert note.startswith("hop 1 uses an answer not found before it (")


def test_a_segment_ranking_then_the_company_is_one_question(store_and_settings) -> None:
    """ "The company's" after a segment ranking is the whole company, not the segment."""
    store, _ = store_and_settings
    with store.connect() as conn:
        question = (
            "Which segment had the largest revenue at ACME in 2023, "
            "and what was the company's total revenue?"
        )
        assert plan_hops(conn, question) is None
        plan = plan_hops(
            conn,
            "Which segment had the largest revenue at ACME in 2023, "
            "and what was that segment's operating income?",
        )
        assert plan is not None and plan.hops[1].question.startswith("What was {1}'s")


NOT_FOUND = {"answerable": False, "claims": []}


def test_a_hop_refused_for_a_carried_period_is_asked_once_without_it(store_and_settings) -> None:
    """Hop 2 was given "in 2023" from hop 1's clause: a refusal for it gets one corrected
    call without that period; a second refusal gives up, saying both tries."""
    store, settings = store_and_settings
    llm = FakeLLM(
        [
            _revenues,
            NOT_FOUND,  # "What were Globex's capital expenditures in 2023?"
            quoted("$95 million", "Globex capital expenditures were $95 million in 2023"),
        ]
    )
    asker = Asker(store, settings, llm=llm)
    asked: list[str] = []

    def ask(question, _hop):
        asked.append(question)
        return asker.ask(question)

    with store.connect() as conn:
        plan, _ = plan_for(conn, LOWER, None)
    assert plan.hops[1].carried == "in 2023"
    chain = run_chain(store, plan, LOWER, ask)
    second = chain.runs[1]
    assert asked[1:] == [
        "What were Globex's capital expenditures in 2023?",
        "What were Globex's capital expenditures?",
    ]
    assert second.status == "answered" and "$95 million" in second.answer.answer
    assert second.repair.startswith("asked first with “in 2023” (refused: ")
    assert second.repair.endswith("answered without that period")
    assert chain.rows[1]["repair"] == second.repair
    assert chain.rows[1]["question"] == "What were Globex's capital expenditures?"
    assert any(f.startswith("hop 2: repaired: ") for f in chain.answer.flags)

    # Refused again: the chain stops at hop 2, and says both tries.
    llm.replies = [_revenues, NOT_FOUND, NOT_FOUND]
    chain = run_chain(store, plan, LOWER, lambda q, _hop: asker.ask(q))
    second = chain.runs[1]
    assert second.status == "refused" and chain.partial
    assert "then without it (refused: " in second.reason
    assert chain.answer.answer.endswith(
        "The chain stopped at hop 2 of 2: what hop 1 found is above."
    )
    assert llm.replies == []


def test_chat_answers_dependent_hops_as_ask_does(store_and_settings) -> None:
    from finrag.agent.session import ChatSession

    store, settings = store_and_settings
    llm = FakeLLM(
        [
            _revenues,
            quoted("$95 million", "Globex capital expenditures were $95 million in 2023"),
            {"supported": True, "unsupported": []},  # verify: the hops' cited excerpts
        ]
    )
    turn = ChatSession(store, settings, llm=llm).turn(LOWER)
    assert turn.trace["path"] == ["contextualize", "safety", "intent", "hops", "verify"]
    assert turn.sub_questions == [
        "What was the revenue of Globex and ACME in 2023?",
        "What were Globex's capital expenditures in 2023?",
    ]
    data = turn.as_dict()
    assert [row["status"] for row in data["plan"]] == ["answered", "answered"]
    assert data["plan"][0]["passes_on"]["value"] == "Globex"
    assert "were $95 million in 2023 [3]." in turn.reply and turn.supported is True
    assert [c.n for c in turn.citations] == [1, 2, 3]
    assert llm.replies == []


def test_a_hop_answered_with_nothing_to_pass_on_keeps_its_answer(store_and_settings) -> None:
    """Hop 1 answers (one company's revenue, cited) but gives no value for the other, so
    no company can be picked: its answer stands, the chain stops there, and the whole is
    partial, not a refusal."""
    store, settings = store_and_settings
    llm = FakeLLM([quoted("$9.6 billion", "ACME revenue grew 12% to $9.6 billion in 2023")])
    asker = Asker(store, settings, llm=llm)
    with store.connect() as conn:
        plan, _ = plan_for(conn, LOWER, None)
    chain = run_chain(store, plan, LOWER, lambda q, _hop: asker.ask(q))
    first, second = chain.runs
    assert first.status == "failed" and second.status == "skipped"
    assert first.reason == "hop 1's answer gives no one value per company to find the lowest"
    assert chain.partial and not chain.answer.refused
    assert "to $9.6 billion in 2023 [1]. The chain stopped here: " in chain.answer.answer
    assert "Not answered" not in chain.answer.answer.splitlines()[0]
    assert chain.answer.answer.endswith(
        "The chain stopped at hop 1 of 2: what hop 1 found is above."
    )
