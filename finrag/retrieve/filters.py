"""Metadata filters read from a question: company, fiscal year(s), quarter, form.

Deterministic: companies come from the store's own names, aliases and tickers (never
a hard-coded list), years and quarters from how filings talk about periods. Each
filter remembers the words that set it, so a search can say why it filtered. Names of
companies the store does not hold are kept too (finrag.retrieve.unknown_names): a
question about one must not be answered from another company's filing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import psycopg

from finrag.db.companies import alias_owners
from finrag.db.company_names import alias_key, needs_capital
from finrag.retrieve.unknown_names import is_vocabulary, unknown_company_names

_MAX_NGRAM = 5
_YEAR = r"(?:19|20)\d\d"
_FY = re.compile(rf"\b(?:FY|fiscal(?:\s+year)?)\s*'?({_YEAR}|\d\d)\b", re.I)
_RANGE = re.compile(rf"\b({_YEAR})\s*(?:-|–|to|through|until)\s*({_YEAR})\b", re.I)
_BARE_YEAR = re.compile(rf"\b({_YEAR})\b")
# A year followed by one of these names a thing, not a period: "2020 vision", "2026 Notes".
_NOT_A_PERIOD = re.compile(
    r"^\s*(vision|plan|plans|notes?|bonds?|debentures?|strategy|goals?|targets?|program|"
    r"agenda|initiative|convertible|senior|term\s+loan|credit\s+facility|ESPP|LTIP)\b",
    re.I,
)
_QUARTER = re.compile(
    r"\b(?:Q([1-4])|([1-4])Q|(first|second|third|fourth|1st|2nd|3rd|4th)\s+(?:fiscal\s+)?quarter"
    r"|quarter\s+([1-4]))\b",
    re.I,
)
# A quarter and its year written as one word ("Q22023", "Q4FY24" aside): split apart.
_RUN_TOGETHER = re.compile(rf"\b(Q[1-4])({_YEAR})\b", re.I)
_ORDINAL = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "1st": 1,
    "2nd": 2,
    "3rd": 3,
    "4th": 4,
}
_FORMS = [
    (re.compile(r"\b10-?K\b|\bannual\s+report\b|\bform\s+10-?k\b", re.I), "10-K"),
    (re.compile(r"\b10-?Q\b|\bquarterly\s+report\b", re.I), "10-Q"),
    (re.compile(r"\b8-?K\b", re.I), "8-K"),
    (
        re.compile(
            r"\bearnings\s+(?:release|report|call|press\s+release)\b|\bpress\s+release\b", re.I
        ),
        "EARNINGS",
    ),
]
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9&.\-]*")


@dataclass(frozen=True)
class CompanyRef:
    id: int
    name: str
    ticker: str | None


@dataclass
class QueryFilters:
    companies: list[CompanyRef] = field(default_factory=list)
    years: list[int] = field(default_factory=list)
    quarter: int | None = None
    form_types: list[str] = field(default_factory=list)
    matched: dict[str, list[str]] = field(default_factory=dict)  # field -> words that set it
    unknown_companies: list[str] = field(default_factory=list)  # named, but not in the store

    @property
    def empty(self) -> bool:
        return not (self.companies or self.years or self.quarter or self.form_types)

    def company_words(self) -> list[str]:
        """The companies' names and the words that named them ("3M", "MMM"): what a scorer
        of the question's own words leaves out."""
        return [c.name for c in self.companies] + self.matched.get("company", [])

    def as_dict(self) -> dict:
        return {
            "companies": [c.name for c in self.companies],
            "years": self.years,
            "quarter": self.quarter,
            "form_types": self.form_types,
            "matched": self.matched,
            "unknown_companies": self.unknown_companies,
        }


def extract_query_filters(question: str, conn: psycopg.Connection) -> QueryFilters:
    """The filters a question implies, given the companies this store knows."""
    filters = QueryFilters()
    held, named = _find_companies(question, conn, filters)
    filters.unknown_companies = unknown_company_names(question, conn, held=held, named=named)
    read_periods(question, filters)
    for pattern, form in _FORMS:
        if (m := pattern.search(question)) and form not in filters.form_types:
            filters.form_types.append(form)
            filters.matched.setdefault("form_type", []).append(m.group(0))
    return filters


def read_periods(question: str, filters: QueryFilters | None = None) -> QueryFilters:
    """The fiscal years and quarter a question names, with the words that name them."""
    filters = filters if filters is not None else QueryFilters()
    question = _RUN_TOGETHER.sub(r"\1 \2", question)  # "Q22023": Q2 of 2023
    _find_years(question, filters)
    if m := _QUARTER.search(question):
        q = m.group(1) or m.group(2) or m.group(4)
        filters.quarter = int(q) if q else _ORDINAL[m.group(3).lower()]
        filters.matched["quarter"] = [m.group(0)]
    return filters


def _find_years(question: str, filters: QueryFilters) -> None:
    years: list[int] = []
    words: list[str] = []
    for m in _RANGE.finditer(question):
        start, end = sorted((int(m.group(1)), int(m.group(2))))
        if end - start <= 20:
            years.extend(range(start, end + 1))
            words.append(m.group(0))
    for m in _FY.finditer(question):
        value = m.group(1)
        years.append(int(value) if len(value) == 4 else 2000 + int(value))
        words.append(m.group(0))
    for m in _BARE_YEAR.finditer(question):
        if _NOT_A_PERIOD.match(question[m.end() :]):
            continue
        years.append(int(m.group(1)))
        words.append(m.group(0))
    filters.years = sorted(set(years))
    if filters.years:
        filters.matched["fiscal_year"] = list(dict.fromkeys(words))


def _find_companies(
    question: str, conn: psycopg.Connection, filters: QueryFilters
) -> tuple[set[str], list[tuple[int, int]]]:
    """Sets the companies the question names; returns every alias key the store's
    companies answer to, and where in the question the found ones are named."""
    by_alias = company_keys(conn)
    tokens = [(m.group(0), m.start(), m.end()) for m in _WORD.finditer(question)]
    found: dict[int, CompanyRef] = {}
    named: list[tuple[int, int]] = []
    i = 0
    while i < len(tokens):
        hit = None
        for n in range(min(_MAX_NGRAM, len(tokens) - i), 0, -1):
            if n > 1 and _possessive_s(question, tokens[i + n - 1]):
                continue  # "3M's": the name is "3M"
            text = question[tokens[i][1] : tokens[i + n - 1][2]]
            ref = _named(text, by_alias)
            if ref is None and n == 1 and text.isupper():
                ref = _by_prefix(text, by_alias)
            if ref is not None and not _continues_another_name(question, tokens, i + n, conn, ref):
                hit = (ref, n, text)
                break
        if hit:
            ref, n, text = hit
            named.append((tokens[i][1], tokens[i + n - 1][2]))
            if ref.id not in found:
                found[ref.id] = ref
                filters.matched.setdefault("company", []).append(text)
            i += n
        else:
            i += 1
    filters.companies = list(found.values())
    return set(by_alias), named


def company_keys(conn: psycopg.Connection) -> dict[str, CompanyRef]:
    """Each alias key the store's companies answer to (finrag.db.companies.alias_owners)."""
    return {key: CompanyRef(*owner) for key, owner in alias_owners(conn).items()}


def _possessive_s(question: str, token: tuple[str, int, int]) -> bool:
    return token[0] in ("s", "S") and question[token[1] - 1 : token[1]] in ("'", "’")


def _named(text: str, by_alias: dict[str, CompanyRef]) -> CompanyRef | None:
    """The company these words name: 'J&J's', 'P & G', 'AMEX', '3M's' — written with a
    capital when the alias is short or an everyday word ('ups', 'block' are words)."""
    if re.search(r"[^\w\s&'’.\-]", text):
        return None  # punctuation between the words: "Apple, Alphabet" is two names
    key = alias_key(re.sub(r"['’]s?$", "", text))
    if len(key) < 2:
        return None  # "Series C", "Class A": a one-letter ticker is no name in a sentence
    ref = by_alias.get(key)
    if ref is None or (needs_capital(key) and not re.search(r"[A-Z]", text)):
        return None
    return ref


def _by_prefix(word: str, by_alias: dict[str, CompanyRef]) -> CompanyRef | None:
    """'MGM' for 'MGM Resorts': an upper-case word of 3+ characters that begins the
    aliases of exactly one company (a short name, when no ticker was found)."""
    key = word.lower()
    if len(key) < 3:
        return None
    found = {ref.id: ref for alias, ref in by_alias.items() if alias.startswith(key)}
    return next(iter(found.values())) if len(found) == 1 else None


def _continues_another_name(
    question: str,
    tokens: list[tuple[str, int, int]],
    index: int,
    conn: psycopg.Connection,
    ref: CompanyRef,
) -> bool:
    """'Apple Hospitality REIT': a capitalised word right after the match makes it part
    of a longer proper name, so the shorter alias does not apply — unless punctuation
    stands between them ('... for 3M? If ...'), the word is a metric, period or place
    ('Best Buy Domestic Revenue'), or the company's own filings use it: a product or
    segment ('BMS Eliquis', 'GE Aerospace', 'Pepsi Frito-Lay')."""
    if index >= len(tokens):
        return False
    word, start, _ = tokens[index]
    if question[tokens[index - 1][2] : start].strip():
        return False
    return (
        _looks_like_a_name_word(word)
        and conn.execute(
            "SELECT 1 FROM chunks k JOIN documents d ON d.id = k.document_id "
            "WHERE d.company_id = %s AND k.tsv @@ plainto_tsquery('english', %s) LIMIT 1",
            (ref.id, word),
        ).fetchone()
        is None
    )


def _looks_like_a_name_word(word: str) -> bool:
    return (
        word[:1].isupper()
        and word[1:].islower()
        and word.isalpha()
        and not is_vocabulary(word)
        and word.lower()
        not in {
            "inc",
            "corp",
            "co",
            "company",
            "corporation",
            "ltd",
            "plc",
            "group",
            "holdings",
        }
    )
