"""Sentence splitting that knows filings: "Inc.", "U.S.", "No. 3" and "$1.5 billion" end nothing."""

from __future__ import annotations

import re
from functools import cache

# Punkt's trained models are a download away; an untrained tokenizer with the
# abbreviations filings use is as good on this prose and works offline.
ABBREVIATIONS = {
    "inc",
    "corp",
    "co",
    "ltd",
    "llc",
    "plc",
    "l.p",
    "n.a",
    "u.s",
    "u.k",
    "e.u",
    "u.s.a",
    "no",
    "nos",
    "mr",
    "mrs",
    "ms",
    "dr",
    "jr",
    "sr",
    "st",
    "vs",
    "v",
    "etc",
    "e.g",
    "i.e",
    "approx",
    "est",
    "fig",
    "sec",
    "art",
    "para",
    "pp",
    "p",
    "vol",
    "dept",
    "govt",
    "assn",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
    "bros",
    "intl",
    "natl",
    "mfg",
    "ave",
    "blvd",
    "avg",
    "max",
    "min",
    "ref",
}


@cache
def _tokenizer():
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

    params = PunktParameters()
    params.abbrev_types = set(ABBREVIATIONS)
    return PunktSentenceTokenizer(params)


# Where Punkt may break a sentence: an end mark followed by punctuation or a space (its
# own period-context pattern). A line with none is one sentence, and importing nltk (a
# second, with scipy behind it) is not needed to say so: a facts answer's one sentence.
_BREAK_CANDIDATE = re.compile(r"[.?!](?:[?!)\";}\]*:@'({\[\u2018\u2019\u201c\u201d\xab\xbb]|\s)")


def split_sentences(text: str) -> list[str]:
    """Sentences in order; list items and line-separated lines stay their own units."""
    out: list[str] = []
    # The look-ahead stays on its own line ([^\S\n]: blanks, not newlines): one that ran on
    # through "\n \n \n ..." from every newline cost the text's length squared.
    for line in re.split(r"\n(?=[^\S\n]*(?:[-*•●]|\d+\.)\s)|\n{2,}", text):
        line = line.strip()
        if line and not _BREAK_CANDIDATE.search(line):
            out.append(line)
        elif line:
            out.extend(s.strip() for s in _tokenizer().tokenize(line) if s.strip())
    return out


def split_clauses(sentence: str) -> list[str]:
    """Last resort for a 'sentence' longer than the model reads (a run-on list)."""
    parts = re.split(r"(?<=[;:])\s+|(?<=,)\s+(?=and\b|or\b|which\b|including\b)", sentence)
    return [p for p in parts if p.strip()]
