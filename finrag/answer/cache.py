"""The semantic answer cache: a question asked again, or reworded, answered at once.

An earlier answer is returned only when all of this holds:

- the store is the one it was written from (``store_version``, bumped by every ingest,
  replacement and removal);
- the *key* is equal: the resolved filters (companies, fiscal years, quarter, forms,
  what was widened), the figures and periods the question asks for as the facts route
  reads them ("value of revenue for FY2024 Q2"), ``k``, and every setting that shapes an
  answer (retrieval, answering, the model, the embedder);
- the questions' embeddings are within ``answer.cache_similarity`` (cosine).

The key is what keeps a different company, period or figure from ever matching, however
close the wording ("revenue in Q2" and "revenue in Q3" embed almost alike); the
similarity only has to tell a rewording from another question about the same thing.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from finrag.answer.citations import Citation
from finrag.answer.extraction import CalculationOutcome, CheckedFact
from finrag.answer.question_plan import QuestionPlan, plan_question
from finrag.answer.result import Answer
from finrag.config import Settings
from finrag.db import Store
from finrag.db import answer_cache as rows
from finrag.embed import Embedder
from finrag.retrieve import SearchResult

# Bump when an answer's JSON (Answer.as_dict) changes shape: older entries stop matching.
CACHE_FORMAT = 2  # 2: evidence (the quotes an answer rests on)


@dataclass
class CacheKey:
    digest: str
    words: dict[str, Any]


def cache_key(question: str, found: SearchResult, settings: Settings, k: int | None) -> CacheKey:
    f = found.filters
    named = f.matched.get("company", [])
    plan = plan_question(question, f.years, f.quarter, None, named)
    words = {
        "format": CACHE_FORMAT,
        "companies": sorted(c.name for c in f.companies),
        "unknown_companies": sorted(f.unknown_companies),
        "years": sorted(f.years),
        "quarter": f.quarter,
        "forms": sorted(f.form_types),
        "widened": sorted(found.widened),
        "asks_for": _asks_for(question, plan, f, named),
        "k": k or settings.answer.k,
        "settings": {
            "answer": settings.answer.model_dump(
                mode="json", exclude={"cache", "cache_similarity"}
            ),
            "retrieve": settings.retrieve.model_dump(mode="json"),
            "llm": settings.llm.model_dump(mode="json", exclude={"timeout_s", "threads"}),
            "embed": settings.embed.model_dump(mode="json", exclude={"threads"}),
        },
    }
    text = json.dumps(words, sort_keys=True, default=str)
    return CacheKey(hashlib.sha256(text.encode()).hexdigest()[:32], words)


# Words that carry no subject: how a question is put, not what it asks about.
_FUNCTION_TEXT = """
    a about above after again against all also am an and any are as at be been before
    being between both but by can could did do does doing during each for from had has have
    having how i if in into is it its it's me more most my of off on once only or other our
    out over own same should so some such than that the their them then there these they
    this those through to too under until up very was we were what when where which while
    who whom why will with would you your say said says tell told report reported reports
    record recorded disclose disclosed mention mentioned describe described explain explained
    highlight highlighted discuss discussed note noted according main key company company's
    filing quarter quarterly fiscal year annual period q1 q2 q3 q4 fy 10-k 10-q 8-k first
    second third fourth much many total amount"""
_FUNCTION_WORDS = frozenset(_FUNCTION_TEXT.split())
_WORD = re.compile(r"[a-z0-9][a-z0-9&'-]*")


def content_words(question: str, filters: Any, company_words: list[str]) -> list[str]:
    """What a text question asks about, as sorted word stems: the company, the period and
    the way it is put left out. Two text questions share a cache key only when these are
    equal: the embedding alone cannot tell "closed stores" from "opened stores" (cosine
    0.94 with all-MiniLM-L6-v2, above most true rewordings; eval/bench/cache_threshold.py)."""
    from nltk.stem import PorterStemmer

    stem = PorterStemmer().stem
    dropped = {w for name in company_words for w in _WORD.findall(name.lower())}
    dropped |= {w for c in filters.companies for w in _WORD.findall(c.name.lower())}
    words = set()
    for word in _WORD.findall(question.lower()):
        word = word.removesuffix("'s")
        if word in _FUNCTION_WORDS or word in dropped or re.fullmatch(r"(fy)?\d{2,4}", word):
            continue
        words.add(stem(word))
    return sorted(words)


def _asks_for(question: str, plan: QuestionPlan | Any, filters: Any, named: list[str]) -> str:
    """The figures and periods a question asks for as the facts route reads them, with the
    words beside them that the plan does not hold ("online" in "online revenue", which
    the plan reads as revenue); for other questions, their content words."""
    words = content_words(question, filters, named)
    if not isinstance(plan, QuestionPlan):
        return "text: " + " ".join(words)
    measured = set(content_words(" ".join(m.words for m in plan.measures), filters, named))
    return f"{plan.describe()} | " + " ".join(w for w in words if w not in measured)


@dataclass
class CacheHit:
    question: str  # the question the cached answer was written for
    similarity: float
    answered_at: datetime
    hits: int  # earlier hits on this entry

    def as_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "similarity": round(self.similarity, 4),
            "answered_at": self.answered_at.isoformat(),
            "hits": self.hits,
        }


class AnswerCache:
    def __init__(self, store: Store, settings: Settings, embedder: Embedder) -> None:
        self.store = store
        self.settings = settings
        self.embedder = embedder

    def lookup(
        self, question: str, found: SearchResult, k: int | None
    ) -> tuple[Answer, CacheHit] | None:
        key = cache_key(question, found, self.settings, k)
        vector = self.embedder.embed([question])[0]
        with self.store.connect() as conn:
            entry = rows.nearest(conn, key.digest, rows.store_version(conn), vector)
            if entry is None or entry.similarity < self.settings.answer.cache_similarity:
                conn.rollback()
                return None
            rows.record_hit(conn, entry.id)
            conn.commit()
        hit = CacheHit(entry.question, entry.similarity, entry.created_at, entry.hits)
        answer = answer_from_dict(entry.answer)
        answer.question = question
        return answer, hit

    def put(self, answer: Answer, found: SearchResult, k: int | None) -> None:
        key = cache_key(answer.question, found, self.settings, k)
        vector = self.embedder.embed([answer.question])[0]
        with self.store.connect() as conn:
            rows.put(
                conn,
                question=answer.question,
                vector=vector,
                key=key.digest,
                key_words=key.words,
                version=rows.store_version(conn),
                answer=answer.as_dict(),
            )
            conn.commit()


def answer_from_dict(data: dict[str, Any]) -> Answer:
    """An Answer back from its JSON (``Answer.as_dict``); its excerpts are not kept."""
    fields = dict(data)
    fields.pop("cache", None)
    fields["citations"] = [Citation.from_dict(c) for c in data.get("citations", [])]
    fields["calculations"] = [
        CalculationOutcome(**{k: v for k, v in c.items() if k != "formatted"})
        for c in data.get("calculations", [])
    ]
    fields["facts"] = [CheckedFact(**f) for f in data.get("facts", [])]
    known = Answer.__dataclass_fields__
    return Answer(**{k: v for k, v in fields.items() if k in known})
