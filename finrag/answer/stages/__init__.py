"""`finrag ask` in stages, each its own module, run in order by finrag.answer.pipeline:

1. retrieve (``retrieve``): hybrid search with the question's filters; what the store holds.
2. gate (``gate``): refusals that need no model: a company the store lacks, years no
   filing covers, nothing relevant found.
3. route (``route``): the facts route answers from stored facts (worded by the model when
   one is on); mixed and text go on.
4. evidence (``evidence``): the text route splits the retrieved chunks into numbered
   sentences and table rows and selects the few that answer, by a cheap scorer.
5. compose (``compose``): the model writes the answer around those quotes, one
   schema-constrained call; each claim names the quote it rests on. The mixed route (and
   ``answer.text_mode = "extract"``) instead extracts facts and arithmetic from whole
   excerpts and writes from them (``extract``).
6. check (``check``): every number is in a quote, a fact or a calculation, else removed;
   citations mapped to document and page; each number's status.
"""

from __future__ import annotations

import time

from finrag.answer.result import Answer
from finrag.llm import ChatResult


def since(t0: float) -> float:
    return round(time.perf_counter() - t0, 3)


def count(answer: Answer, result: ChatResult) -> None:
    answer.tokens["prompt"] += result.prompt_tokens
    answer.tokens["completion"] += result.completion_tokens
