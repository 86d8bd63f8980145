"""The chat graph's nodes. Each takes the turn's state and returns (next node, summary).

    contextualize ─▶ safety ─▶ intent ─┬─▶ reply                  (irrelevant, unclear, general)
                       │               ├─▶ clarify ─▶ END | answer (vague)
                       ▼               ├─▶ answer ─▶ verify ─┬─▶ END
                      END              │                     └─▶ retry ─▶ verify
                                       ├─▶ decompose ─▶ subanswer ─▶ residue ─┬─▶ subanswer
                                       │                                      └─▶ combine ─▶ verify
                                       └─▶ hops ─▶ END | verify   (dependent hops, as `ask`)

Deterministic checks come first wherever they can decide (the database says which
companies and years exist; rules catch greetings, garble and unsafe requests); the model
is asked only what rules cannot tell.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from finrag.agent.graph import END
from finrag.agent.multihop import Renumbering, concatenated, numbered_answers
from finrag.agent.schemas import (
    MAX_SUB_QUESTIONS,
    IntentChoice,
    Missing,
    Rewrite,
    Standalone,
    SubQuestions,
    Support,
)
from finrag.agent.state import Pending, TurnState
from finrag.answer.citations import check_numbers, map_citations
from finrag.answer.hop_plan import plan_for
from finrag.answer.hops import run_chain
from finrag.answer.pipeline import Asker
from finrag.answer.safety import safety_reply
from finrag.db.documents import describe_coverage, store_coverage
from finrag.llm import LLMError
from finrag.llm.prompts import load_prompt
from finrag.personas import active_persona, with_persona
from finrag.retrieve.filters import extract_query_filters
from finrag.retrieve.hybrid import fuse_results
from finrag.text import clip

MAX_DEPTH = 3  # rounds of decomposition: the first split and two for what is still missing
_EXCERPT_CHARS = 1500

_GREETING = re.compile(
    r"^\W*(?:hi|hello|hey|thanks|thank\s+you|cheers|good\s+(?:morning|afternoon|evening)|help)"
    r"\b[\W\s]*$",
    re.I,
)
_ANAPHORA = re.compile(
    r"\b(?:it|its|it's|they|them|their|this|that|these|those|same|also|the\s+"
    r"company|the\s+firm|what\s+about|how\s+about|and\s+in|and\s+for)\b|^\s*(?:and|or|but)\b",
    re.I,
)
# "the company" with no name, asked of a store holding several: which one is not a guess
# to leave to a small model (Qwen 1.5B called "How is the company doing?" a greeting).
_UNNAMED_COMPANY = re.compile(
    r"\b(?:the|this|that|our|your)\s+(?:company|firm|business|issuer|registrant)\b", re.I
)

_COMPARE = re.compile(
    r"\b(?:compare|compared|comparison|versus|vs\.?|each|both|respectively|differ|difference\s+"
    r"between)\b",
    re.I,
)
# A 10-K reports two or three fiscal years: a question about FY2017 is answerable from
# a FY2018 or FY2019 filing.
_YEARS_REPORTED = 3


Emit = Callable[[str], None]


class ChatGraph:
    """The nodes, bound to one session's retriever, model and output callbacks."""

    def __init__(
        self,
        asker: Asker,
        llm,
        *,
        history_turns: int,
        on_token: Emit | None = None,
        on_event: Emit | None = None,
    ) -> None:
        self.asker = asker
        self.llm = llm
        self.history_turns = history_turns
        self.on_token = on_token
        self.on_event = on_event or (lambda _e: None)

    @property
    def nodes(self) -> dict[str, Callable[[TurnState], tuple[str, str]]]:
        return {
            "contextualize": self.contextualize,
            "safety": self.safety,
            "intent": self.intent,
            "reply": self.reply,
            "clarify": self.clarify,
            "decompose": self.decompose,
            "subanswer": self.subanswer,
            "residue": self.residue,
            "combine": self.combine,
            "hops": self.hops,
            "answer": self.answer,
            "verify": self.verify,
            "retry": self.retry,
        }

    # -- understanding the question -------------------------------------------------

    def contextualize(self, s: TurnState) -> tuple[str, str]:
        if s.pending is not None:
            # The user answered a clarifying question: the vague question and the answer
            # together are the question (filters come from both).
            s.standalone = f"{s.pending.question} ({s.question.strip().rstrip('?.')})"
            return "safety", f"clarified: {s.standalone}"
        if not s.history or not _ANAPHORA.search(s.question):
            s.standalone = s.question.strip()
            return "safety", "stands alone"
        history = "\n".join(
            f"User: {e.standalone}\nAssistant: {clip(e.answer, 300)}"
            for e in s.history[-self.history_turns :]
        )
        try:
            reply = self.llm.chat(
                load_prompt("contextualize").messages(history=history, question=s.question),
                output=Standalone,
                max_tokens=160,
            )
            s.standalone = reply.data.standalone.strip() or s.question.strip()
        except LLMError as exc:
            s.standalone = s.question.strip()
            s.flags.append(f"could not rewrite the follow-up ({exc.message}); used as typed")
            return "safety", "rewrite failed: used as typed"
        return "safety", f"rewritten: {s.standalone}"

    def safety(self, s: TurnState) -> tuple[str, str]:
        declined = safety_reply(s.standalone)
        if declined is None:
            return "intent", "ok"
        s.intent, s.intent_reason = "declined", declined[0]
        s.reply = declined[1]
        return END, f"declined: {declined[0]}"

    def intent(self, s: TurnState) -> tuple[str, str]:
        with self.asker.store.connect() as conn:
            s.filters = extract_query_filters(s.standalone, conn)
            unknown = s.filters.unknown_companies
            missing_years = _years_not_held(conn, s.filters)
            companies_held = len(store_coverage(conn))
            conn.rollback()
        if not re.search(r"[A-Za-z]{3,}", s.standalone):
            s.intent, s.intent_reason = "unclear", "no words"
        elif _GREETING.match(s.standalone):
            s.intent, s.intent_reason = "general", "greeting"
        elif unknown and not s.filters.companies:
            s.intent = "irrelevant"
            s.intent_reason = f"{' and '.join(unknown)}: not in the store"
        elif missing_years:
            s.intent = "irrelevant"
            s.intent_reason = f"no filing reports fiscal {', '.join(map(str, missing_years))}"
        elif s.filters.companies:
            s.intent, s.intent_reason = "relevant", "names a company in the store"
            if unknown:
                held = " and ".join(c.name for c in s.filters.companies)
                s.assumptions.append(
                    f"{' and '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} not in "
                    f"your filings: answered for {held} only."
                )
        elif _UNNAMED_COMPANY.search(s.standalone) and companies_held > 1:
            s.intent = "vague"
            s.intent_reason = f"names no company; the store holds {companies_held}"
        else:
            self._classify(s)
        if s.intent == "relevant":
            with self.asker.store.connect() as conn:
                s.hop_plan, note = plan_for(conn, s.standalone, lambda: self.llm)
                conn.rollback()
            if note:
                s.flags.append(note)
            if s.hop_plan is not None:
                hops = len(s.hop_plan.hops)
                return "hops", f"relevant ({s.intent_reason}); {hops} dependent hops"
            multi = len(s.filters.companies) >= 2 or (
                len(s.filters.years) >= 2 and _COMPARE.search(s.standalone)
            )
            return ("decompose" if multi else "answer"), f"relevant ({s.intent_reason})"
        if s.intent == "vague":
            return "clarify", f"vague ({s.intent_reason})"
        return "reply", f"{s.intent} ({s.intent_reason})"

    def _classify(self, s: TurnState) -> None:
        with self.asker.store.connect() as conn:
            holdings = _holdings(conn)
        try:
            reply = self.llm.chat(
                load_prompt("intent").messages(holdings=holdings, question=s.standalone),
                output=IntentChoice,
                max_tokens=80,
            )
            s.intent, s.intent_reason = reply.data.intent, reply.data.reason.strip()
        except LLMError:
            s.intent, s.intent_reason = "relevant", "classifier failed; searched anyway"

    # -- replies without retrieval ---------------------------------------------------

    def reply(self, s: TurnState) -> tuple[str, str]:
        with self.asker.store.connect() as conn:
            holdings = _holdings(conn)
        if s.intent == "irrelevant":
            s.reply = (
                f"That is not in your filings ({s.intent_reason}), so I cannot answer it. "
                f"The store holds: {holdings}."
            )
        elif s.intent == "unclear":
            s.reply = (
                "I could not read that as a question. Ask about a company's filings, for "
                f"example {_example(holdings)}."
            )
        else:
            s.reply = (
                "I answer questions from the filings in your store, citing document and page, "
                f"and do the arithmetic with a calculator. The store holds: {holdings}. Try "
                f"{_example(holdings)}."
            )
        return END, "fixed reply"

    def clarify(self, s: TurnState) -> tuple[str, str]:
        rounds = (s.pending.rounds if s.pending else 0) + 1
        if s.interactive and rounds <= 3:
            with self.asker.store.connect() as conn:
                holdings = _holdings(conn)
            s.reply = (
                f"Which company, period or figure do you mean? Your filings cover: {holdings}."
            )
            base = s.pending.question if s.pending else s.standalone
            s.next_pending = Pending(question=base, rounds=rounds)
            return END, f"asked (round {rounds} of 3)"
        s.assumptions.append(
            "The question names no company or period, so every filing was searched; "
            "ask again with a company and a year for a precise answer."
        )
        return "answer", "assumed: every filing"

    # -- answering -------------------------------------------------------------------

    def answer(self, s: TurnState) -> tuple[str, str]:
        a = self.asker.ask(s.standalone, on_token=self.on_token, on_event=self.on_event)
        self._take(s, a)
        route = f"{a.route} route ({a.retrieval.get('route_reason', 'no reason recorded')})"
        if a.refused:
            if a.refusal == "unverified-facts" and not s.retried:
                s.unsupported = ["no fact read from the excerpts matched their text"]
                return "retry", "no fact checked out against its excerpt"
            return END, f"refused: {a.refusal}; {route}"
        if a.route == "facts":
            # Every number is a stored cell or a calculation on them, traced: verified
            # by construction, nothing for a model to check against excerpts.
            s.supported = True
            s.settle_numbers()
            return END, f"{route}; {len(a.citations)} cited cell(s)"
        return "verify", f"{route}; {len(a.citations)} citation(s), {len(a.flags)} flag(s)"

    def _take(self, s: TurnState, a) -> None:
        s.answer = a
        s.reply, s.citations, s.calculations = a.answer, a.citations, a.calculations
        s.excerpts = a.chunks
        s.flags = [f for f in s.flags if not f.startswith("answer: ")] + [
            f"answer: {f}" for f in a.flags
        ]

    def verify(self, s: TurnState) -> tuple[str, str]:
        chunks = {c.n: c for c in s.excerpts}
        cited = [chunks[c.n] for c in s.citations if c.n in chunks]
        unsupported: list[str] = []
        if not cited:
            unsupported.append("the answer cites no excerpt")
        else:
            excerpts = "\n\n".join(
                f"{c.label}\n{clip(c.hit.content, _EXCERPT_CHARS)}" for c in cited
            )
            calculations = "; ".join(
                f"{c.description} = {c.formatted}" for c in s.calculations if c.result is not None
            )
            try:
                reply = self.llm.chat(
                    load_prompt("verify").messages(
                        excerpts=excerpts, calculations=calculations or "none", answer=s.reply
                    ),
                    output=Support,
                    max_tokens=300,
                )
                if not reply.data.supported:
                    unsupported += [u for u in reply.data.unsupported if u.strip()] or [
                        "the checker found a claim the excerpts do not support"
                    ]
            except LLMError as exc:
                s.flags.append(f"faithfulness check failed to run: {exc.message}")
        numbers = [f for f in s.flags if "unverified number" in f]
        unsupported += [f.split("unverified number ", 1)[1] for f in numbers]
        s.unsupported = list(dict.fromkeys(unsupported))
        s.supported = not s.unsupported
        s.settle_numbers()  # before a caveat is added: its words are no claims
        if s.supported:
            return END, f"supported; numbers: {s.status}"
        if not s.retried and not s.sub_answers:
            return "retry", f"unsupported: {'; '.join(s.unsupported)[:160]}"
        _caveat(s)
        return END, f"still unsupported after a retry: {len(s.unsupported)} claim(s)"

    def retry(self, s: TurnState) -> tuple[str, str]:
        s.retried = True
        self.on_event("retrying")
        try:
            rewrite = self.llm.chat(
                load_prompt("rewrite").messages(question=s.standalone),
                output=Rewrite,
                max_tokens=300,
            ).data
        except LLMError as exc:
            s.flags.append(f"query rewrite failed: {exc.message}")
            return "verify", "no rewrite"
        by_query, coverage = self.asker.search(rewrite.query, filters=s.filters)
        by_passage, _ = self.asker.search(rewrite.passage, filters=s.filters)
        merged = fuse_results(by_query, by_passage, k=self.asker.settings.answer.k)
        a = self.asker.answer_from(
            s.standalone, merged, coverage, on_token=self.on_token, on_event=self.on_event
        )
        if a.refused:  # the wider search found less: keep the first answer, say what failed
            if not s.answer.refused:
                s.settle_numbers()
                _caveat(s)
            return END, f"query: {rewrite.query}; nothing better found"
        self._take(s, a)
        return "verify", f"query: {rewrite.query}"

    # -- several hops ----------------------------------------------------------------

    def hops(self, s: TurnState) -> tuple[str, str]:
        """A question whose later part needs an earlier part's answer: the hops in order,
        as `ask` runs them (finrag.answer.hops); each cites, and a refused hop stops."""

        def ask(question: str, _hop) -> Any:
            self.on_event(f"hop: {question}")
            return self.asker.ask(question, on_event=self.on_event)

        chain = run_chain(self.asker.store, s.hop_plan, s.standalone, ask)
        s.plan = chain.rows
        s.sub_questions = [r.question for r in chain.runs]
        self._take(s, chain.answer)
        # A rewritten search for the whole question would answer one hop, not the chain.
        s.retried = True
        done = [r for r in chain.runs if r.status == "answered"]
        summary = f"{len(done)} of {len(chain.runs)} hops answered"
        if chain.answer.refused:
            return END, f"{summary}; refused: {chain.answer.refusal}"
        if all(r.answer.route == "facts" for r in done):
            s.supported = True  # stored cells and calculations on them, as one facts answer
            s.settle_numbers()
            return END, summary
        return "verify", summary

    def decompose(self, s: TurnState) -> tuple[str, str]:
        questions: list[str] = []
        try:
            reply = self.llm.chat(
                load_prompt("decompose").messages(question=s.standalone),
                output=SubQuestions,
                max_tokens=400,
            )
            questions = [q.strip() for q in reply.data.sub_questions if q.strip()]
        except LLMError as exc:
            s.flags.append(f"decomposition failed ({exc.message}); one question per company")
        if not questions and s.filters and len(s.filters.companies) >= 2:
            questions = [f"{s.standalone} (for {c.name})" for c in s.filters.companies]
        s.depth = 1
        added = self._add_sub_questions(s, questions or [s.standalone])
        return "subanswer", f"{added} sub-question(s)"

    def _add_sub_questions(self, s: TurnState, questions: list[str]) -> int:
        seen = {_norm(q) for q in s.sub_questions}
        added = 0
        for q in questions:
            # A small model sometimes answers with a label ("Q2") instead of a question.
            if len(re.findall(r"[A-Za-z]{2,}", q)) < 3:
                continue
            if _norm(q) not in seen and len(s.sub_questions) < MAX_SUB_QUESTIONS * MAX_DEPTH:
                s.sub_questions.append(q)
                seen.add(_norm(q))
                added += 1
        return added

    def subanswer(self, s: TurnState) -> tuple[str, str]:
        pending = s.sub_questions[len(s.sub_answers) :]
        for i, q in enumerate(pending, len(s.sub_answers) + 1):
            self.on_event(f"sub-question {i}/{len(s.sub_questions)}: {q}")
            overrides = _company_override(q)
            s.sub_answers.append(self.asker.ask(q, overrides=overrides))
        answered = sum(not a.refused for a in s.sub_answers)
        return "residue", f"{answered} of {len(s.sub_answers)} answered"

    def residue(self, s: TurnState) -> tuple[str, str]:
        if s.depth >= MAX_DEPTH:
            return "combine", f"depth limit {MAX_DEPTH} reached"
        numbering = Renumbering()
        try:
            reply = self.llm.chat(
                load_prompt("residue").messages(
                    question=s.standalone,
                    answers=numbered_answers(s.sub_questions, s.sub_answers, numbering),
                ),
                output=Missing,
                max_tokens=240,
            )
            # The question itself is not a missing piece (a small model offers it back).
            missing = [
                q.strip()
                for q in reply.data.missing
                if q.strip() and _norm(q) != _norm(s.standalone)
            ]
        except LLMError:
            missing = []
        added = self._add_sub_questions(s, missing)
        if not added:
            return "combine", "nothing new missing"
        s.depth += 1
        return "subanswer", f"{added} more (depth {s.depth})"

    def combine(self, s: TurnState) -> tuple[str, str]:
        numbering = Renumbering()
        answers = numbered_answers(s.sub_questions, s.sub_answers, numbering)
        s.calculations = [c for a in s.sub_answers for c in a.calculations]
        for i, a in enumerate(s.sub_answers, 1):
            s.flags += [f"sub-answer {i}: {f}" for f in a.flags]
        self.on_event("answering")
        try:
            text = self.llm.chat(
                with_persona(
                    load_prompt("combine").messages(question=s.standalone, answers=answers),
                    active_persona(self.asker.settings),
                ),
                on_token=self.on_token,
            ).text.strip()
        except LLMError as exc:
            s.flags.append(f"combining failed: {exc.message}")
            text = ""
        problems = check_numbers(text, numbering.chunks, [], s.calculations) if text else []
        citations, invalid = map_citations(text, numbering.chunks, [])
        how = "combined"
        if not text or problems or invalid or not citations:
            # Faithful by construction: each sub-answer under its question.
            how = "the combined answer lost its sources: showing the sub-answers"
            if text:
                s.flags.append(how)
                self.on_event("retrying")
            text = concatenated(s.sub_questions, s.sub_answers, numbering)
            citations, _ = map_citations(text, numbering.chunks, [])
        s.reply, s.citations, s.excerpts = text, citations, numbering.chunks
        return "verify", how


def _caveat(s: TurnState) -> None:
    """What is supported stays; what is not is named."""
    s.reply += "\n\nNot supported by the cited excerpts: " + "; ".join(s.unsupported) + "."


def _years_not_held(conn, filters) -> list[int]:
    """Years asked about that no stored filing reports (for the companies asked about)."""
    if not filters.years:
        return []
    ids = [c.id for c in filters.companies] or None
    held = {
        row[0]
        for row in conn.execute(
            "SELECT DISTINCT fiscal_year FROM documents WHERE fiscal_year IS NOT NULL "
            "AND (%s::bigint[] IS NULL OR company_id = ANY(%s::bigint[]))",
            (ids, ids),
        )
    }
    return [y for y in filters.years if not any(y <= h < y + _YEARS_REPORTED for h in held)]


def _holdings(conn) -> str:
    return describe_coverage(store_coverage(conn))


def _example(holdings: str) -> str:
    m = re.match(r"([^:;(]+?)(?: \([A-Z.]+\))?: FY(\d{4})", holdings)
    if not m:
        return "'What was the company's revenue in its last fiscal year?'"
    return f"'What was {m.group(1).strip()}'s revenue in FY{m.group(2)}?'"


def _company_override(question: str) -> dict[str, Any] | None:
    """A sub-question made by the fallback ('... (for Globex)') searches that company only."""
    m = re.search(r"\(for ([^()]+)\)$", question)
    return {"company": m.group(1)} if m else None


def _norm(question: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", question.lower()))
