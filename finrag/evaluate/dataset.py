"""Evaluation datasets: JSONL, one question per line, in our format or FinanceBench's.

Ours::

    {"id": "q1", "question": "...", "answer": "...", "company": "3M", "type": "extraction",
     "evidence": [{"document": "3M_2018_10K.pdf", "page": 60, "text": "..."}]}

``"answerable": false`` marks a question the store cannot answer (a company or period it
does not hold, a fact no filing states): the right outcome is a refusal. Default true.

``page`` is 1-based, as ``finrag`` stores and prints pages (the first page of the PDF
is 1). FinanceBench's ``evidence_page_num`` is zero-indexed, so its page N is our N + 1.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from finrag.errors import UsageError

_EXTENSIONS = re.compile(r"\.(pdf|html?|md|txt)$", re.I)


def document_key(name: str) -> str:
    """'…/3M_2018_10K.pdf', '3M_2018_10K' -> '3m_2018_10k': how gold documents meet stored ones."""
    return _EXTENSIONS.sub("", Path(name).name).lower()


@dataclass(frozen=True)
class Evidence:
    document: str  # document_key of the filing
    page: int | None  # 1-based; None when only the text is known
    text: str = ""


@dataclass
class EvalQuestion:
    id: str
    question: str
    answer: str
    evidence: list[Evidence]
    company: str | None = None
    question_type: str | None = None
    reasoning: str | None = None
    answerable: bool = True  # False: the expected outcome is a refusal
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def documents(self) -> list[str]:
        return list(dict.fromkeys(e.document for e in self.evidence))

    @property
    def gold_pages(self) -> set[tuple[str, int]]:
        return {(e.document, e.page) for e in self.evidence if e.page is not None}


def load_dataset(path: Path, *, limit: int | None = None) -> list[EvalQuestion]:
    """Every question in ``path``; a malformed line is an error naming its line number."""
    if not path.is_file():
        raise UsageError(f"no dataset at {path}", hint="give a JSONL file, one question per line")
    questions: list[EvalQuestion] = []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
                questions.append(_parse(raw, number))
            except (ValueError, KeyError, TypeError) as exc:
                raise UsageError(
                    f"{path}:{number}: not a dataset line ({type(exc).__name__}: {exc})",
                    hint="each line is a JSON object with question, answer and evidence "
                    "(finrag's format or FinanceBench's)",
                ) from None
            if limit and len(questions) >= limit:
                break
    if not questions:
        raise UsageError(f"{path} holds no questions")
    ids = [q.id for q in questions]
    if len(set(ids)) != len(ids):
        raise UsageError(f"{path}: question ids repeat", hint="give every line a unique id")
    return questions


def load_datasets(paths: list[Path], *, limit: int | None = None) -> list[EvalQuestion]:
    """The questions of several files as one set (dev and the negative set in one run:
    refusal recall beside the answerable questions a refusal cost); ``limit`` is per file."""
    questions = [q for path in paths for q in load_dataset(path, limit=limit)]
    ids = [q.id for q in questions]
    if len(set(ids)) != len(ids):
        raise UsageError(
            f"question ids repeat across {', '.join(map(str, paths))}",
            hint="give every line of every file a unique id",
        )
    return questions


def datasets_label(paths: list[Path]) -> Path:
    """How a run over several files names its dataset: 'dev.jsonl + negative.jsonl'."""
    return paths[0] if len(paths) == 1 else Path(" + ".join(str(p) for p in paths))


def _parse(raw: dict[str, Any], number: int) -> EvalQuestion:
    if "financebench_id" in raw:
        return EvalQuestion(
            id=str(raw["financebench_id"]),
            question=raw["question"],
            answer=str(raw.get("answer", "")),
            evidence=[
                Evidence(
                    document_key(e.get("doc_name") or raw["doc_name"]),
                    int(e["evidence_page_num"]) + 1,  # zero-indexed -> our 1-based pages
                    e.get("evidence_text", ""),
                )
                for e in raw.get("evidence", [])
            ],
            company=raw.get("company"),
            question_type=raw.get("question_type"),
            reasoning=raw.get("question_reasoning"),
        )
    evidence = []
    for e in raw.get("evidence", []):
        page = e.get("page")
        if page is not None and int(page) < 1:
            raise ValueError(f"evidence page {page} < 1: pages are 1-based")
        evidence.append(
            Evidence(document_key(e["document"]), int(page) if page else None, e.get("text", ""))
        )
    return EvalQuestion(
        id=str(raw.get("id", f"line-{number}")),
        question=raw["question"],
        answer=str(raw.get("answer", "")),
        evidence=evidence,
        company=raw.get("company"),
        question_type=raw.get("type"),
        reasoning=raw.get("reasoning"),
        answerable=_answerable(raw.get("answerable", True)),
    )


def _answerable(value: Any) -> bool:
    # A JSON boolean only: "false" as a string would read as true.
    if not isinstance(value, bool):
        raise ValueError(f"answerable is {value!r}, not true or false")
    return value
