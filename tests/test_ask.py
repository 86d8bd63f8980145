"""`ask` end to end on the real embedded Postgres with a scripted model: facts checked
against their excerpts, arithmetic by the calculator, numbers verified, citations mapped,
refusals without a model call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from finrag.answer.pipeline import Asker
from finrag.errors import ExitCode
from finrag.llm.fake import FakeLLM
from tests.conftest import run_finrag
from tests.corpus import excerpt_number


def extraction(messages, *, calculations=()):
    """What a good model extracts for the ACME capex question."""
    capex = excerpt_number(messages, "capital expenditures were $310 million")
    prior = excerpt_number(messages, "$275 million in 2022")
    return {
        "answerable": True,
        "facts": [
            {"source": capex, "quote": "capital expenditures were $310 million", "value": "$310"},
            {"source": prior, "quote": "plant and equipment were $275 million", "value": "$275"},
        ],
        "calculations": list(calculations),
    }


def test_answer_cites_its_sources_and_uses_the_calculator(store_and_settings) -> None:
    store, settings = store_and_settings
    seen = {}

    def extract(messages):
        seen["capex"] = excerpt_number(messages, "$310 million")
        seen["prior"] = excerpt_number(messages, "$275 million")
        return extraction(
            messages,
            calculations=[
                {"description": "change in capex", "expression": "percent_change(275, 310)"}
            ],
        )

    def write(messages):
        prompt = messages[-1]["content"]
        assert "percent_change(275, 310) = 12.73" in prompt, "the model is given the result"
        return (
            f"ACME's capital expenditures were $310 million in 2023 [{seen['capex']}], up "
            f"12.73% from $275 million in 2022 [{seen['prior']}]."
        )

    llm = FakeLLM([extract, write])
    tokens: list[str] = []
    answer = Asker(store, settings, llm=llm).ask(
        "What were ACME's capital expenditures in 2023 and how did they change?",
        on_token=tokens.append,
    )
    assert not answer.refused, answer.answer
    assert "".join(tokens).strip() == answer.answer, "the answer streamed as it was written"
    assert answer.flags == [] and answer.unverified_numbers == []
    assert [c.n for c in answer.citations] == [seen["capex"], seen["prior"]]
    capex = answer.citations[0]
    assert capex.document == "ACME_2023_10K" and capex.pages == [3, 3]
    assert "310" in capex.quote
    (calc,) = answer.calculations
    assert calc.result == pytest.approx(12.7272727)
    assert [(i["text"], i["sources"]) for i in calc.inputs] == [
        ("275", [seen["prior"]]),
        ("310", [seen["capex"]]),
    ]
    assert answer.retrieval["filters"]["company"] == ["ACME"]
    assert answer.tokens["prompt"] > 0 and answer.tokens["completion"] > 0
    assert set(answer.timings) >= {"retrieve", "extract", "answer", "total"}
    # Every label the model saw names a stored chunk with its page.
    assert all(c["label"].startswith(f"[{c['n']}] ") for c in answer.context)


def extract_mode(settings):
    """The extraction path (the mixed route's; answer.text_mode = "extract") for a text
    question: the model reads whole excerpts, extracts facts, then writes."""
    return settings.model_copy(
        update={"answer": settings.answer.model_copy(update={"text_mode": "extract"})}
    )


def test_a_number_in_no_source_is_regenerated_once_then_flagged(store_and_settings) -> None:
    store, settings = store_and_settings
    settings = extract_mode(settings)
    label = {}

    def extract(messages):
        label["n"] = excerpt_number(messages, "$310 million")
        return extraction(messages)

    llm = FakeLLM(
        [
            extract,
            lambda m: f"ACME spent $410 million on capital projects [{label['n']}].",
            lambda m: f"ACME's capital expenditures were $310 million [{label['n']}].",
        ]
    )
    answer = Asker(store, settings, llm=llm).ask("What were ACME's capital expenditures in 2023?")
    assert "$410" not in answer.answer and "$310 million" in answer.answer
    assert answer.flags == []
    retry = llm.calls[2]["messages"][-1]["content"]
    assert "$410 million" in retry, "the retry names the unsupported number"

    llm = FakeLLM(
        [
            extract,
            lambda m: f"ACME spent $410 million [{label['n']}].",
            lambda m: "ACME spent $410 million, and 7% more than planned.",
        ]
    )
    answer = Asker(store, settings, llm=llm).ask("What were ACME's capital expenditures in 2023?")
    numbers = [p["number"] for p in answer.unverified_numbers]
    assert numbers == ["$410 million", "7%"]
    assert any("unverified number $410 million" in f for f in answer.flags)
    assert "the answer cites no source" in answer.flags


def test_facts_and_calculations_that_do_not_hold_are_dropped(store_and_settings) -> None:
    store, settings = store_and_settings
    settings = extract_mode(settings)

    def extract(messages):
        capex = excerpt_number(messages, "$310 million")
        return {
            "answerable": True,
            "facts": [
                {"source": capex, "quote": "capex was $999 million", "value": "$999"},
                {"source": 42, "quote": "whatever", "value": "1"},
                {"source": capex, "quote": "capital expenditures were $310", "value": "310"},
            ],
            "calculations": [
                {"description": "invented", "expression": "999 - 310"},
                {"description": "hostile", "expression": "__import__('os').getcwd()"},
            ],
        }

    # The one corrected call (finrag.answer.repair) repeats both mistakes: given up.
    again = {
        "calculations": [
            {"description": "invented", "expression": "998 - 310"},
            {"description": "hostile", "expression": "__import__('os').getcwd()"},
        ]
    }
    llm = FakeLLM(
        [
            extract,
            again,
            lambda m: (
                "ACME's capital expenditures were $310 million "
                f"[{excerpt_number(m, 'capital expenditures were $310')}]."
            ),
        ]
    )
    answer = Asker(store, settings, llm=llm).ask("What were ACME's capital expenditures in 2023?")
    assert [f.ok for f in answer.facts] == [False, False, True]
    assert answer.facts[1].problem == "no such excerpt"
    invented, hostile = answer.calculations
    assert invented.unsourced_inputs == ["998"] and invented.expression == "998 - 310"
    assert hostile.result is None and "plain calls" in hostile.error
    # The corrected call was told what failed, each calculation in its own words.
    fed_back = llm.calls[1]["messages"][-1]["content"]
    assert "- invented: 999 - 310 (999 is in no excerpt)" in fed_back
    assert "hostile" in fed_back and "plain calls of the listed functions" in fed_back
    assert llm.calls[1]["output"] == "Recalculation"
    assert "first try 999 - 310: 999 is in no excerpt; corrected try: 998 is in no" in (
        invented.repair
    )
    prompt = llm.calls[2]["messages"][-1]["content"]
    assert "999" not in prompt and "998" not in prompt, "no failed calculation reaches it"
    # Given up loudly: the checks name both tries, and the answer names what failed.
    assert any(
        f.startswith("calculation 'invented' not used: inputs 998 are in no source (first try")
        for f in answer.flags
    )
    assert answer.answer.endswith(
        "Not calculated, after one corrected try: “invented”; “hostile” (the checks say why)."
    )


def _repaired_capex_script(first_try: list[dict]) -> FakeLLM:
    """The model's first extraction asks for ``first_try`` calculations; its corrected call
    gives capex growth as percent_change(275, 310); then it words the answer."""
    return FakeLLM(
        [
            lambda m: extraction(m, calculations=first_try),
            {
                "calculations": [
                    {"description": "capex growth", "expression": "percent_change(275, 310)"}
                ]
            },
            lambda m: (
                f"ACME's capital expenditures were $310 million [{excerpt_number(m, '$310')}], "
                f"up 12.73% from $275 million [{excerpt_number(m, '$275')}]."
            ),
        ]
    )


def test_a_failed_calculation_is_repaired_by_one_corrected_call(store_and_settings) -> None:
    store, settings = store_and_settings
    settings = extract_mode(settings)
    # A '%' the calculator refuses: the error goes back, the corrected call is used.
    llm = _repaired_capex_script([{"description": "capex growth", "expression": "(310-275)/275 %"}])
    answer = Asker(store, settings, llm=llm).ask(
        "What were ACME's capital expenditures in 2023 and how did they change?"
    )
    assert "'%' is not an operator here" in llm.calls[1]["messages"][-1]["content"]
    (calc,) = answer.calculations
    assert calc.error is None and calc.result == pytest.approx(12.7272727)
    assert calc.repair.startswith("first try (310-275)/275 %: the calculator refused it")
    assert [i["text"] for i in calc.inputs] == ["275", "310"] and all(
        i["sources"] for i in calc.inputs
    )
    assert "percent_change(275, 310) = 12.73" in llm.calls[2]["messages"][-1]["content"]
    assert any(f.startswith("calculation 'capex growth' repaired:") for f in answer.flags)
    assert not answer.refused and "Not calculated" not in answer.answer
    assert answer.unverified_numbers == []
    assert answer.as_dict()["calculations"][0]["repair"] == calc.repair


def test_a_corrected_call_is_matched_to_its_calculation_by_name(store_and_settings) -> None:
    """Two calculations fail; the corrected call mends only the second: it lands on the
    second, and the first is said to be left out, not overwritten."""
    store, settings = store_and_settings
    settings = extract_mode(settings)
    llm = _repaired_capex_script(
        [
            {"description": "capex change", "expression": "310 -- 275 %"},
            {"description": "capex growth", "expression": "(310-275)/275 %"},
        ]
    )
    answer = Asker(store, settings, llm=llm).ask(
        "What were ACME's capital expenditures in 2023 and how did they change?"
    )
    change, growth = answer.calculations
    assert growth.description == "capex growth" and growth.error is None
    assert growth.result == pytest.approx(12.7272727)
    assert change.description == "capex change" and change.result is None
    assert change.repair.endswith("the corrected call left it out")


def test_unknown_company_is_refused_without_the_model(store_and_settings) -> None:
    store, settings = store_and_settings
    llm = FakeLLM([])  # any call would fail: there is no reply
    answer = Asker(store, settings, llm=llm).ask("What was Tesla's revenue in 2023?")
    assert answer.refused and answer.refusal == "unknown-company"
    assert "Tesla is not in your filings" in answer.answer
    assert "ACME: FY2023 10-K" in answer.answer and "Globex" in answer.answer
    assert llm.calls == []


def test_irrelevant_retrieval_is_refused_without_the_model(store_and_settings) -> None:
    store, settings = store_and_settings
    settings = settings.model_copy(
        update={"answer": settings.answer.model_copy(update={"min_relevance": 0.99})}
    )
    llm = FakeLLM([])
    answer = Asker(store, settings, llm=llm).ask("What were ACME's capital expenditures in 2023?")
    assert answer.refused and answer.refusal == "not-relevant"
    assert answer.answer.startswith("I could not find that in your filings (searched ACME")
    assert llm.calls == []


def test_context_without_the_facts_is_refused(store_and_settings) -> None:
    store, settings = store_and_settings
    llm = FakeLLM([{"answerable": False, "facts": [], "calculations": []}])
    ask = Asker(store, extract_mode(settings), llm=llm).ask
    answer = ask("What was ACME's goodwill impairment in 2023?")
    assert answer.refused and answer.refusal == "not-in-context"
    assert len(llm.calls) == 1, "no answer is written from nothing"


def test_quotes_the_model_finds_no_answer_in_are_refused_naming_them(store_and_settings):
    store, settings = store_and_settings
    llm = FakeLLM([{"answerable": False, "claims": []}])
    answer = Asker(store, settings, llm=llm).ask("What did ACME say about its rocket plants?")
    assert answer.refused and answer.refusal == "no-evidence"
    assert answer.answer.startswith("I could not find that in your filings (searched ACME")
    assert "the model read the closest quotes" in answer.answer
    assert "Closest passages: ACME_2023_10K p.3 “ACME capital expenditures" in answer.answer
    assert len(llm.calls) == 1, "no answer is written from nothing"


def test_facts_that_all_fail_their_check_give_no_figure(store_and_settings) -> None:
    store, settings = store_and_settings
    settings = extract_mode(settings)
    invented = {"source": 1, "quote": "capital expenditures were $10.5 million", "value": "10.5"}
    llm = FakeLLM([{"answerable": True, "facts": [invented], "calculations": []}])
    answer = Asker(store, settings, llm=llm).ask("What were ACME's capital expenditures in 2023?")
    assert answer.refused and answer.refusal == "unverified-facts"
    assert answer.answer.startswith("I found excerpts that may hold the answer (searched ACME")
    assert "Closest: [" in answer.answer and "ACME" in answer.answer.split("Closest:")[1]
    assert "10.5" not in answer.answer
    assert any(f.startswith("fact from [1] dropped") for f in answer.flags)
    assert len(llm.calls) == 1, "no answer is written from facts that did not hold"


def test_ask_cli_json_and_exit_codes(store_and_settings, tmp_path: Path, database_url) -> None:
    script = tmp_path / "replies.json"
    script.write_text(
        json.dumps(
            [
                {
                    "answerable": True,
                    "claims": [
                        {"text": "Globex revenue fell 3% to $4.0 billion in 2023", "source": 1}
                    ],
                },
            ]
        )
    )
    env_settings = {
        "FINRAG_DATABASE_URL": database_url,
        "FINRAG_LLM__BACKEND": "fake",
        "FINRAG_LLM__FAKE_SCRIPT": str(script),
    }
    import os

    env = dict(os.environ, **env_settings)
    # k=1: the one excerpt is the revenue page, so the scripted [1] is right.
    result = run_finrag("ask", "What was Globex revenue in 2023?", "--k", "1", "--json", env=env)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["answer"] == "Globex revenue fell 3% to $4.0 billion in 2023 [1]."
    (citation,) = data["citations"]
    assert citation["document"] == "GLOBEX_2023_10K.pdf" and citation["pages"] == [2, 2]
    assert citation["ref"] == "GLOBEX_2023_10K.pdf#page=2" and citation["path"].endswith(".pdf")
    assert {"chunk_id", "quote", "section", "n"} <= set(citation)
    assert citation["quote"] == "Globex revenue fell 3% to $4.0 billion in 2023."
    assert data["evidence"] == [
        {
            "n": 1,
            "document": "GLOBEX_2023_10K.pdf",
            "page": 2,
            "quote": "Globex revenue fell 3% to $4.0 billion in 2023.",
        }
    ]
    assert data["backend"] == "fake" and data["flags"] == []
    assert {"prompt", "completion"} == set(data["tokens"])

    plain = run_finrag("ask", "What was Globex revenue in 2023?", "--k", "1", env=env)
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout.startswith("Globex revenue fell 3% to $4.0 billion in 2023 [1].")
    assert "Sources" in plain.stdout and "[1] GLOBEX_2023_10K p.2" in plain.stdout

    refused = run_finrag("ask", "What was Initech Inc. revenue?", "--json", env=env)
    assert refused.returncode == ExitCode.NO_ANSWER, refused.stderr
    assert json.loads(refused.stdout)["refusal"] == "unknown-company"
