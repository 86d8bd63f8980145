"""Check a reading set: every gold quote is on the page its line names, as finrag pages it.

    python eval/datasets/check_reading_set.py [eval/datasets/reading_edgar.jsonl]
        [--filings ../shared/edgar-html]

Each filing is parsed with finrag's own EDGAR parser (pages split at the filing's page
breaks, long paragraphs bounded as ingest bounds them), so a page number here is the page
`finrag` stores, cites and `eval retrieval` scores. A quote matches when it is a substring
of that page's text with runs of whitespace collapsed; nothing else is forgiven (no case
folding, no quote-mark folding), so a quote is copied, not paraphrased. Prints the set's
composition by kind and by filing; exits 1 when any quote is not on its page.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

from finrag.evaluate.dataset import document_key, load_dataset
from finrag.ingest.parse import bound_paragraphs
from finrag.ingest.parse.html import EdgarHtmlParser

_WS = re.compile(r"\s+")
HERE = Path(__file__).resolve().parent


def squash(text: str) -> str:
    return _WS.sub(" ", text).strip()


def parsed_pages(path: Path) -> dict[int, str]:
    """Page number -> that page's text, whitespace collapsed."""
    doc = EdgarHtmlParser().parse(path)
    return {p.number: squash(bound_paragraphs(p.markdown)) for p in doc.pages}


def check(dataset: Path, filings: Path) -> list[str]:
    questions = load_dataset(dataset)
    by_key = {document_key(p.name): p for p in filings.glob("*.htm*")}
    pages: dict[str, dict[int, str]] = {}
    problems: list[str] = []
    for q in questions:
        if not q.evidence:
            problems.append(f"{q.id}: no evidence")
        for ev in q.evidence:
            if ev.document not in by_key:
                problems.append(f"{q.id}: no filing {ev.document} in {filings}")
                continue
            if ev.document not in pages:
                pages[ev.document] = parsed_pages(by_key[ev.document])
            doc_pages = pages[ev.document]
            quote = squash(ev.text)
            if not quote or ev.page is None:
                problems.append(f"{q.id}: evidence without a quote or a page")
            elif quote not in doc_pages.get(ev.page, ""):
                elsewhere = [n for n, text in doc_pages.items() if quote in text]
                where = f"found on page(s) {elsewhere}" if elsewhere else "on no page"
                problems.append(f"{q.id}: quote not on {ev.document} p.{ev.page} ({where})")
    kinds = Counter(q.question_type for q in questions)
    filings_used = Counter(q.evidence[0].document for q in questions if q.evidence)
    print(f"{len(questions)} questions in {dataset.name}")
    print("by kind:   " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    print("by filing: " + ", ".join(f"{k} {n}" for k, n in sorted(filings_used.items())))
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", nargs="?", type=Path, default=HERE / "reading_edgar.jsonl")
    parser.add_argument("--filings", type=Path, default=HERE.parents[2] / "shared" / "edgar-html")
    args = parser.parse_args(argv)
    problems = check(args.dataset, args.filings)
    for p in problems:
        print("FAIL", p)
    print("all quotes on their pages" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
