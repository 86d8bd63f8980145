"""The common RAG recipe, as the baseline `eval answers --compare naive` runs beside finrag.

Dense top-5 over the same store (the same retriever's embedder and vectors), the raw
question embedded, no filters, no facts store, no reranking, no checks; the same model
answers from the five chunks in one call. It is scored as finrag's answers are: its
citations are the chunks it cites with [n] (the recipe's sources), its refusal the
recipe's own "I don't know".
"""

from __future__ import annotations

import re
import time

from finrag.answer.citations import map_citations
from finrag.answer.result import Answer
from finrag.config import Settings
from finrag.db import Store
from finrag.llm import LLM, get_llm
from finrag.retrieve import Retriever, Variant
from finrag.retrieve.context import ContextChunk

NAIVE_K = 5
NAME = "naive"
DESCRIPTION = f"dense top-{NAIVE_K}, no filters, no facts, no checks, one model call"

# The widely copied prompt of the recipe (question-answering over retrieved chunks),
# with numbered chunks so its citations can be scored like finrag's.
SYSTEM = (
    "Use the following pieces of context to answer the question at the end. "
    "If you don't know the answer, just say that you don't know, don't try to make up an "
    "answer. Cite the pieces you use as [n]."
)
# What the recipe's model says when it follows the instruction above.
_DONT_KNOW = re.compile(r"\b(?:i|we)\s+(?:do\s+not|don'?t|cannot|can'?t)\s+know\b", re.I)


class NaiveAsker:
    """Asks as ``finrag.answer.pipeline.Asker`` does (``ask``, ``llm``), the naive way."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        *,
        llm: LLM | None = None,
        retriever: Retriever | None = None,
    ) -> None:
        # The question as asked: no query analysis rewrites what is embedded.
        retrieve = settings.retrieve.model_copy(update={"query_analysis": False})
        self.settings = settings.model_copy(update={"retrieve": retrieve})
        self.store = store
        self._llm = llm
        base = retriever or Retriever(store, settings, llm=llm)
        self.retriever = Retriever(
            store, self.settings, embedder=base.embedder, reranker=base.reranker
        )

    @property
    def llm(self) -> LLM:
        if self._llm is None:
            self._llm = get_llm(self.settings)
        return self._llm

    def ask(self, question: str) -> Answer:
        started = time.perf_counter()
        found = self.retriever.retrieve(question, k=NAIVE_K, variant=Variant.parse("dense"))
        context = [ContextChunk(n, hit) for n, hit in enumerate(found.hits, 1)]
        answer = Answer(question=question, answer="", route=NAME, chunks=context)
        answer.retrieval = {"variant": found.variant, "k": NAIVE_K, "timings_ms": found.timings_ms}
        answer.timings["retrieve"] = round(time.perf_counter() - started, 3)
        llm = self.llm
        answer.backend, answer.model = llm.backend, llm.model
        reply = llm.chat(
            [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": prompt(question, context)},
            ]
        )
        answer.tokens = {"prompt": reply.prompt_tokens, "completion": reply.completion_tokens}
        answer.answer = reply.text.strip()
        if not answer.answer or _DONT_KNOW.search(answer.answer):
            answer.refused, answer.refusal = True, "dont-know"
        else:
            answer.citations, answer.invalid_citations = map_citations(answer.answer, context, [])
            for c in answer.citations:
                c.quote = ""  # the recipe prints no quote: only the chunk it names
        answer.timings["total"] = round(time.perf_counter() - started, 3)
        return answer


def prompt(question: str, context: list[ContextChunk]) -> str:
    pieces = "\n\n".join(f"[{c.n}] {c.hit.content}" for c in context)
    return f"{pieces}\n\nQuestion: {question}\nHelpful Answer:"
