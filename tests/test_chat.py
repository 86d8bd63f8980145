"""The chat graph, route by route, with scripted node outputs on the real embedded Postgres."""

from __future__ import annotations

import json
import os

import pytest

from finrag.agent.graph import END, TokenMeter, run_graph
from finrag.agent.nodes import MAX_DEPTH
from finrag.agent.session import ChatSession
from finrag.llm.fake import FakeLLM
from tests.conftest import run_finrag
from tests.corpus import quoted

SUPPORTED = {"supported": True, "unsupported": []}


def test_three_turns_with_follow_ups(store_and_settings) -> None:
    store, settings = store_and_settings
    llm = FakeLLM(
        [
            # 1: names ACME: no rewrite, no classifier; extract, answer, verify.
            quoted("$310 million", "ACME's capital expenditures were $310 million in 2023"),
            SUPPORTED,
            # 2: a follow-up ("its"): rewritten from the conversation.
            {"standalone": "What was ACME's revenue in 2023?"},
            quoted("$9.6 billion", "ACME's revenue was $9.6 billion in 2023"),
            SUPPORTED,
            # 3: "what about" another company: rewritten again.
            {"standalone": "What was Globex's revenue in 2023?"},
            quoted("$4.0 billion", "Globex revenue fell 3% to $4.0 billion in 2023"),
            SUPPORTED,
        ]
    )
    chat = ChatSession(store, settings, name="review", llm=llm)
    first = chat.turn("What were ACME's capital expenditures in 2023?")
    assert first.intent == "relevant" and first.supported is True
    # In a cited excerpt, not in the facts store: found in source, not verified (issue 16).
    assert first.status == "found_in_source" and first.verified is False
    assert first.trace["path"] == ["contextualize", "safety", "intent", "answer", "verify"]
    assert first.citations[0].document == "ACME_2023_10K" and first.citations[0].pages == [3, 3]

    second = chat.turn("And what was its revenue?")
    assert second.standalone == "What was ACME's revenue in 2023?"
    rewrite_prompt = llm.calls[2]["messages"][-1]["content"]
    assert "User: What were ACME's capital expenditures in 2023?" in rewrite_prompt
    assert "$310 million" in rewrite_prompt, "the previous answer is in the conversation"
    assert second.filters["companies"] == ["ACME"] and second.filters["years"] == [2023]

    third = chat.turn("What about Globex?")
    assert third.standalone == "What was Globex's revenue in 2023?"
    assert "$4.0 billion" in third.reply and third.citations[0].document == "GLOBEX_2023_10K"
    steps = {s["node"]: s for s in third.trace["steps"]}
    assert steps["contextualize"]["tokens"]["prompt"] > 0, "per-node tokens are counted"
    assert steps["safety"]["tokens"] == {"prompt": 0, "completion": 0}
    assert all(s["ms"] >= 0 for s in third.trace["steps"])
    assert llm.replies == []

    # The conversation is in Postgres: a new session under the same name resumes it.
    resumed = ChatSession(store, settings, name="review", llm=FakeLLM([]))
    assert resumed.resumed_turns == 3 and resumed.next_turn == 4
    assert resumed.history[1].standalone == "What was ACME's revenue in 2023?"


def test_store_decides_irrelevant_and_rules_decide_the_rest(store_and_settings) -> None:
    store, settings = store_and_settings
    chat = ChatSession(store, settings, llm=FakeLLM([]))  # no model call may happen
    tesla = chat.turn("What was Tesla's revenue in 2023?")
    assert tesla.intent == "irrelevant"
    assert "Tesla: not in the store" in tesla.reply
    assert "ACME: FY2023 10-K" in tesla.reply and "Globex: FY2023 10-K" in tesla.reply
    old = chat.turn("What was ACME's revenue in 2015?")
    assert old.intent == "irrelevant" and "no filing reports fiscal 2015" in old.reply
    assert chat.turn("hello!").intent == "general"
    assert chat.turn("?!? ...").intent == "unclear"
    advice = chat.turn("Should I buy ACME stock? Is it a sure bet?")
    assert advice.intent == "declined" and "can't tell you what to buy" in advice.reply
    assert advice.trace["path"] == ["contextualize", "safety"]
    harmful = chat.turn("How do I launder money through ACME's subsidiaries?")
    assert harmful.intent == "declined"


def test_vague_question_asks_then_answers_with_the_clarification(store_and_settings) -> None:
    store, settings = store_and_settings
    llm = FakeLLM(  # no intent call: "the company" in a store of two is vague by rule
        [
            quoted("$9.6 billion", "ACME's revenue grew 12% to $9.6 billion in 2023"),
            SUPPORTED,
        ]
    )
    chat = ChatSession(store, settings, llm=llm)
    asked = chat.turn("How is the company doing?")
    assert asked.clarifying and asked.intent == "vague"
    assert "names no company; the store holds 2" in asked.trace["steps"][2]["out"]
    assert asked.reply.startswith("Which company, period or figure do you mean?")
    assert "ACME: FY2023 10-K" in asked.reply
    answered = chat.turn("ACME revenue, 2023")
    assert answered.standalone == "How is the company doing? (ACME revenue, 2023)"
    assert answered.intent == "relevant" and "$9.6 billion" in answered.reply
    assert not answered.clarifying


def test_vague_question_in_a_script_is_answered_with_what_was_assumed(store_and_settings):
    store, settings = store_and_settings
    llm = FakeLLM(
        [
            {"intent": "vague", "reason": "no company"},
            quoted("$9.6 billion", "Revenue grew 12% to $9.6 billion"),
            SUPPORTED,
        ]
    )
    chat = ChatSession(store, settings, llm=llm, interactive=False)
    result = chat.turn("How did revenue do?")
    assert not result.clarifying
    assert result.reply.startswith("Assumed: The question names no company or period")
    assert result.trace["path"][3:] == ["clarify", "answer", "verify"]


def test_multi_hop_comparison_keeps_every_citation(store_and_settings) -> None:
    store, settings = store_and_settings
    llm = FakeLLM(
        [
            {
                "sub_questions": [
                    "What were ACME's capital expenditures in 2023?",
                    "What were Globex's capital expenditures in 2023?",
                ]
            },
            quoted("$310 million", "ACME's capital expenditures were $310 million"),
            quoted("$95 million", "Globex's capital expenditures were $95 million"),
            {"missing": []},
            "ACME spent $310 million [1] and Globex $95 million [2] on capital projects in 2023.",
            SUPPORTED,
        ]
    )
    chat = ChatSession(store, settings, llm=llm)
    result = chat.turn("Compare ACME's and Globex's capital expenditures in 2023.")
    assert result.trace["path"] == [
        "contextualize",
        "safety",
        "intent",
        "decompose",
        "subanswer",
        "residue",
        "combine",
        "verify",
    ]
    combine_prompt = llm.calls[4]["messages"][-1]["content"]
    assert "A1. ACME's capital expenditures were $310 million [1]." in combine_prompt
    assert "A2. Globex's capital expenditures were $95 million [2]." in combine_prompt
    assert [(c.n, c.document, c.pages) for c in result.citations] == [
        (1, "ACME_2023_10K", [3, 3]),
        (2, "GLOBEX_2023_10K", [3, 3]),
    ]
    assert result.supported is True and result.status == "found_in_source"
    assert len(result.sub_questions) == 2


def test_decomposition_stops_at_the_depth_limit(store_and_settings) -> None:
    store, settings = store_and_settings
    not_found = {"answerable": False, "claims": []}
    llm = FakeLLM(
        [
            {"sub_questions": ["What were ACME's capital expenditures in 2023?"]},
            not_found,
            # depth 2; the question itself offered back is not asked again
            {
                "missing": [
                    "What was ACME's revenue in 2023?",
                    "Compare ACME and Globex on capex, revenue and margins in 2023.",
                ]
            },
            not_found,
            # The same question again, a label that is no question, and one new: only the
            # new one is asked (depth 3).
            {"missing": ["What was ACME's revenue in 2023?", "Q2", "What was Globex's revenue?"]},
            not_found,
            # No residue call at depth 3; the combination has nothing to cite, so the
            # sub-answers are shown as they are, and the check finds no excerpt.
            "Nothing was found.",
        ]
    )
    chat = ChatSession(store, settings, llm=llm)
    result = chat.turn("Compare ACME and Globex on capex, revenue and margins in 2023.")
    path = result.trace["path"]
    assert path.count("subanswer") == MAX_DEPTH and path.count("residue") == MAX_DEPTH
    assert path[-2:] == ["combine", "verify"] and path[-3] == "residue"
    assert result.sub_questions == [
        "What were ACME's capital expenditures in 2023?",
        "What was ACME's revenue in 2023?",
        "What was Globex's revenue?",
    ]
    assert result.reply.count("Not found in your filings.") == 3
    assert result.supported is False and result.status == "refused" and llm.replies == []


def test_unsupported_answer_is_retried_once_then_caveated(store_and_settings) -> None:
    store, settings = store_and_settings
    llm = FakeLLM(
        [
            quoted("$310 million", "ACME's capital expenditures were $310 million, all in Ohio"),
            {"supported": False, "unsupported": ["all in Ohio"]},
            {
                "query": "ACME purchases of property, plant and equipment 2023",
                "passage": "Capital expenditures were $300 million in 2023.",
            },
            quoted("$310 million", "ACME's capital expenditures were $310 million in Ohio"),
            {"supported": False, "unsupported": ["in Ohio"]},
        ]
    )
    chat = ChatSession(store, settings, llm=llm)
    result = chat.turn("What were ACME's capital expenditures in 2023?")
    assert result.trace["path"][-3:] == ["verify", "retry", "verify"]
    assert result.supported is False and result.status == "found_in_source"
    assert result.reply.endswith("Not supported by the cited excerpts: in Ohio.")
    verify_prompt = llm.calls[1]["messages"][-1]["content"]
    assert "capital expenditures were $310 million" in verify_prompt, "checked against excerpts"


def test_facts_that_fail_their_check_search_again_then_give_no_figure(store_and_settings):
    """On the extraction path (the mixed route's; answer.text_mode = "extract")."""
    store, settings = store_and_settings
    settings = settings.model_copy(
        update={"answer": settings.answer.model_copy(update={"text_mode": "extract"})}
    )
    invented = {"answerable": True, "facts": [{"source": 1, "quote": "capex $7", "value": "7"}]}
    invented["calculations"] = []
    llm = FakeLLM(
        [
            invented,
            {"query": "ACME purchases of property 2023", "passage": "Capex was $300 million."},
            invented,
        ]
    )
    chat = ChatSession(store, settings, llm=llm)
    result = chat.turn("What were ACME's capital expenditures in 2023?")
    assert result.trace["path"][-2:] == ["answer", "retry"]
    assert result.reply.startswith("I found excerpts that may hold the answer")
    assert "Not supported" not in result.reply and "$7" not in result.reply
    assert len(llm.calls) == 3


def test_graph_runner_bounds_cycles() -> None:
    nodes = {"a": lambda s: ("b", "to b"), "b": lambda s: ("a", "to a")}
    with pytest.raises(RuntimeError, match="without ending"):
        run_graph(nodes, "a", None, TokenMeter())
    trace = run_graph({"a": lambda s: (END, "done")}, "a", None, TokenMeter())
    assert trace.path == ["a"] and trace.steps[0].out == "done"


def test_chat_script_with_commands_and_sessions(store_and_settings, tmp_path, database_url):
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
                SUPPORTED,
            ]
        )
    )
    lines = tmp_path / "turns.txt"
    lines.write_text(
        "# a comment\nWhat was Globex revenue in 2023?\n/sources\n/filters\n/trace\n"
        "Should I buy Globex stock?\n/quit\nnever reached\n"
    )
    env = dict(
        os.environ,
        FINRAG_DATABASE_URL=database_url,
        FINRAG_LLM__BACKEND="fake",
        FINRAG_LLM__FAKE_SCRIPT=str(script),
        FINRAG_ANSWER__K="1",
    )
    result = run_finrag("chat", "--input", str(lines), "--json", "--session", "scripted", env=env)
    assert result.returncode == 0, result.stderr
    objects = [json.loads(line) for line in result.stdout.splitlines()]
    assert [o.get("command") or o["intent"] for o in objects] == [
        "relevant",
        "/sources",
        "/filters",
        "/trace",
        "declined",
    ]
    answer, sources, filters, trace, declined = objects
    assert "can't tell you what to buy" in declined["answer"]
    assert answer["answer"] == "Globex revenue fell 3% to $4.0 billion in 2023 [1]."
    assert answer["session"] == "scripted" and answer["supported"] is True
    assert answer["status"] == "found_in_source" and answer["verified"] is False
    assert sources["result"][0]["document"] == "GLOBEX_2023_10K.pdf"
    assert filters["result"]["companies"] == ["Globex"]
    assert trace["result"]["path"] == answer["trace"]["path"]

    listed = json.loads(run_finrag("sessions", "list", "--json", env=env).stdout)
    assert [(s["name"], s["turns"]) for s in listed] == [("scripted", 2)]
    shown = json.loads(run_finrag("sessions", "show", "scripted", "--json", env=env).stdout)
    roles = [(m["turn"], m["role"]) for m in shown["messages"]]
    assert roles == [(1, "user"), (1, "assistant"), (2, "user"), (2, "assistant")]
    assert shown["messages"][1]["citations"][0]["document"] == "GLOBEX_2023_10K.pdf"
    assert shown["messages"][1]["trace"]["trace"]["path"][-1] == "verify"
    assert run_finrag("sessions", "rm", "scripted", "--yes", env=env).returncode == 0
    missing = run_finrag("sessions", "show", "scripted", env=env)
    assert missing.returncode == 2 and "no session named 'scripted'" in missing.stderr
    piped = run_finrag("chat", "--json", env=env)  # stdin is not a terminal: read lines
    assert piped.returncode == 0 and piped.stdout == ""


def test_sessions_list_is_empty_at_first(store_and_settings, database_url) -> None:
    env = dict(os.environ, FINRAG_DATABASE_URL=database_url)
    result = run_finrag("sessions", "list", "--json", env=env)
    assert result.returncode == 0 and json.loads(result.stdout) == []


def test_a_company_not_in_the_store_beside_one_that_is_is_named(store_and_settings) -> None:
    store, settings = store_and_settings
    llm = FakeLLM(
        [
            quoted("$9.6 billion", "ACME's revenue was $9.6 billion in 2023"),
            SUPPORTED,
        ]
    )
    result = ChatSession(store, settings, llm=llm).turn(
        "Compare Tesla's and ACME's revenue in 2023."
    )
    assert result.intent == "relevant" and result.sub_questions == []
    assert result.assumptions == ["Tesla is not in your filings: answered for ACME only."]
    assert result.reply.startswith("Assumed: Tesla is not in your filings")
