"""Question analysis: instructions dropped, statements noted, filing vocabulary added."""

from __future__ import annotations

import pytest

from finrag.retrieve.query import analyze_question


def test_instructions_are_dropped_and_the_statement_kept_as_a_hint() -> None:
    a = analyze_question(
        "How much did 3M spend on capital expenditure in FY2018 (in USD millions)? Give a "
        "response by relying on the details shown in the cash flow statement."
    )
    assert a.focus == "How much did 3M spend on capital expenditure in FY2018 (in USD millions)?"
    assert a.statement == "cash flow"
    assert "purchases of property plant and equipment" in a.search_text
    assert "consolidated statements of cash flows" in a.search_text


@pytest.mark.parametrize(
    "instruction",
    [
        "If operating margin is not a useful metric for a company like this, then state that "
        "and explain why.",
        "If gross margins are not a relevant metric for a company like this, then please state "
        "that and explain why.",
        "Answer the following question by primarily using information shown in the balance sheet.",
        "Assume that you are a public equities analyst.",
        "Calculate what was asked by utilizing the line items clearly shown in the P&L statement.",
    ],
)
def test_instruction_sentences(instruction: str) -> None:
    a = analyze_question(f"Does Adobe have an improving operating margin? {instruction}")
    assert a.focus == "Does Adobe have an improving operating margin?"


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What was Apple's capex in 2023?", "purchases of property plant and equipment"),
        ("Did Pfizer's PPNE grow between FY20 and FY21?", "property plant and equipment net"),
        ("What is Verizon's quick ratio?", "marketable securities accounts receivable"),
        (
            "Which activities brought the most cash: operating, investing or financing activities?",
            "net cash provided by used in operating activities",
        ),
        ("Is the top line growing?", "net sales"),
        ("What was the DPO?", "accounts payable cost of sales"),
    ],
)
def test_metric_vocabulary(question: str, expected: str) -> None:
    assert expected in analyze_question(question).search_text


def test_plain_questions_are_left_alone() -> None:
    a = analyze_question("Who is the chief executive officer of Netflix?")
    assert a.focus == "Who is the chief executive officer of Netflix?"
    assert a.statement is None and a.expansions == ()
    assert a.search_text == a.focus
    assert analyze_question("What is the capital of France?").expansions == ()
