"""A question through the chat graph (finrag.agent), its stages switched, as an evaluation
asks it: one turn, no history, never a clarifying question, nothing stored.

The stages an answer ablation switches (finrag.evaluate.variants): ``verify`` (the
answer checked against its excerpts; off: the answer as written), ``hyde`` (one retry
with a rewritten query and a hypothetical passage when the check fails; off: the failed
check ends in a caveat at once), ``decompose`` (auto: questions over several companies
or years are split, as `finrag chat` does; on: every question; off: none). The turn's
reply, citations and excerpts become an ``Answer``, scored like any other.
"""

from __future__ import annotations

from dataclasses import replace

from finrag.agent.graph import END, TokenMeter, run_graph
from finrag.agent.nodes import ChatGraph
from finrag.agent.state import TurnState
from finrag.answer.pipeline import Answer, Asker
from finrag.config import Settings
from finrag.db import Store
from finrag.llm import LLM
from finrag.retrieve import Retriever


class ChatAsker:
    def __init__(
        self,
        store: Store,
        settings: Settings,
        *,
        llm: LLM,
        retriever: Retriever,
        stages: dict[str, str],
    ) -> None:
        self.meter = TokenMeter()
        self.llm = self.meter.wrap(llm)
        self.asker = Asker(store, settings, llm=self.llm, retriever=retriever)
        self.graph = ChatGraph(self.asker, self.llm, history_turns=0)
        self.stages = stages

    def nodes(self) -> dict:
        nodes = dict(self.graph.nodes)
        if self.stages.get("verify") == "off":
            nodes["verify"] = _unverified
        decompose = self.stages.get("decompose", "auto")
        if decompose != "auto":
            nodes["intent"] = _deciding(nodes["intent"], split=decompose == "on")
        return nodes

    def ask(self, question: str) -> Answer:
        # hyde off: the turn starts as if it had retried, so a failed check ends in a
        # caveat (verify) or a refusal (answer) instead of a second search.
        state = TurnState(
            question=question,
            history=[],
            interactive=False,
            retried=self.stages.get("hyde") == "off",
        )
        before = self.meter.snapshot()
        trace = run_graph(self.nodes(), "contextualize", state, self.meter)
        after = self.meter.snapshot()
        answer = _as_answer(question, state)
        answer.tokens = {"prompt": after[0] - before[0], "completion": after[1] - before[1]}
        answer.backend, answer.model = self.llm.backend, self.llm.model
        answer.retrieval["chat_path"] = trace.path
        return answer


def _unverified(s: TurnState) -> tuple[str, str]:
    s.settle_numbers()
    return END, "verify off"


def _deciding(intent, *, split: bool):
    """The intent node with decomposition forced on (every relevant question) or off."""

    def node(s: TurnState) -> tuple[str, str]:
        following, summary = intent(s)
        if split and following == "answer" and s.intent == "relevant":
            return "decompose", f"{summary}; decompose on"
        if not split and following == "decompose":
            return "answer", f"{summary}; decompose off"
        return following, summary

    return node


def _as_answer(question: str, s: TurnState) -> Answer:
    """The turn as an Answer: the single-hop answer with the turn's final reply, or one
    built from the combined sub-answers, or a refusal (declined, not in the store)."""
    if s.sub_answers:
        return Answer(
            question=question,
            answer=s.reply,
            route="decomposed",
            # Every part refused: the turn gave no answer, however it words that.
            refused=all(a.refused for a in s.sub_answers),
            citations=s.citations,
            calculations=s.calculations,
            flags=s.flags,
            chunks=s.excerpts,
            retrieval={"sub_questions": s.sub_questions},
        )
    if s.answer is None:
        return Answer(
            question=question,
            answer=s.reply,
            refused=True,
            refusal=s.intent or "declined",
            retrieval={"intent_reason": s.intent_reason},
        )
    if s.answer.refused:
        return s.answer
    return replace(
        s.answer, answer=s.reply, citations=s.citations, chunks=s.excerpts, flags=s.flags
    )
