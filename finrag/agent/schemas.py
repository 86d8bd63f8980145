"""What the chat graph's model calls must return: JSON schemas with every string and list
bounded, so a small model's reply always ends within its token budget."""

from __future__ import annotations

from pydantic import BaseModel, Field

MAX_SUB_QUESTIONS = 5


class Standalone(BaseModel):
    standalone: str = Field(max_length=400)


class IntentChoice(BaseModel):
    intent: str = Field(pattern="^(relevant|vague|unclear|general|irrelevant)$")
    reason: str = Field(max_length=160)


class SubQuestions(BaseModel):
    sub_questions: list[str] = Field(max_length=MAX_SUB_QUESTIONS)


class Missing(BaseModel):
    missing: list[str] = Field(max_length=3)


class Support(BaseModel):
    supported: bool
    unsupported: list[str] = Field(max_length=5)


class Rewrite(BaseModel):
    query: str = Field(max_length=300)
    passage: str = Field(max_length=600)
