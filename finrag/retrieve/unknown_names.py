"""Names in a question that read as a company's and match nothing the store holds.

A question about a company the store does not hold must be refused, not answered from
another company's filing ("What was Microsoft revenue in 2024?" with only Best Buy
stored). Three signals, strongest first:

1. the wording says it is a company: "Tesla's", "Initech Inc.";
2. a well-known issuer's name or ticker ("microsoft", "MSFT"), from the nickname table of
   large companies (finrag/db/company_nicknames.toml: names the store may lack);
3. a run of capitalised words ("Home Depot", "NVDA") that is not finance vocabulary, a
   period, a month or a region, with a word found in no stored chunk, or of two or more
   words no stored chunk holds together ("Best Western": "best" and "western" are in
   many filings, the name in none). Segment, product and counterparty names are in the
   filings that use them, so they pass.

A lone title-case word opening a sentence counts only under 1 or 2: there "Explain"
and "Initech" look alike. Questions typed all in capitals have no case to read. Written
in lower case, a name is still found when the wording says it is a company ("acme-zeta
holdings", "initech's"), and a capitalised hyphenated coinage opening a question
("Acme-Zeta total assets?") counts when none of its parts is in any stored chunk.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import psycopg

from finrag.db.company_names import alias_key, issuers


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Question, instruction and function words: never part of a name, they split runs.
_FUNCTION = _words(
    """
    a about according across after all also an and any are as assume at based be been
    before between both but by calculate can company companies compare compared compute
    corp corporation could describe did do does during each estimate explain express find
    firm for from give had has have how how's i identify if in inc into is it its let
    list ltd me more most much my no not note of on only or our over per please plc
    provide regarding respond round show should since so summarise summarize than that
    the their then there these they this those through to tell under until using versus
    vs was we were what what's when where which who whom whose why will with would you
    your co llc lp group holdings incorporated limited here yes
    """
)
# Finance, period, place and document words: a run made only of these is no name, and
# a name does not end in one ("Microsoft Revenue" -> "Microsoft").
_TERMS = _words(
    """
    accounting accounts adjusted administrative advertising africa ai amer america
    americas amortization analysis annual anz apac api arpu arr asc asia asp assets asu
    audit auditor australia average backlog balance basic basis beginning billion
    billions board bookings bps brazil business buyback buybacks cagr call canada capex
    capital cash ccc ceo cfo change changes china cloud cogs comparable comp compensation
    comprehensive consolidated constant consumer controls coo cost costs covid covid-19
    cpi currency current cy data days dcf debt december decrease depreciation development
    diluted directors disclosures discussion dividend dividends dio division domestic dpo
    dso dta dtl ebit ebitda ebitdar ebt edgar effective emea employees end ended ending
    enterprise equipment equity erp esg espp estimates eu eur europe exhibit expenditure
    expenditures expense expenses factors fasb fcf february fifo filing filings financial
    first fiscal fourth france free full fx fy gaap gbp gdp general germany goods goodwill
    greater gross growth guidance h1 h2 half hq hr ifrs impairment income increase india
    international inventories inventory investing investments ipo ireland irr it item
    january japan jpy july june kpi korea last latam latin lease leases legal leverage
    liabilities lifo liquidity long-term ltip ltm m&a management march margin margins
    market marketing may md&a mexico middle million millions net next nii nim noi nol
    non-gaap north notes november npv nyse nasdaq oci october oem operating operations
    opex organic outlook overall overview pacific part payable payables pension percent
    percentage period plant points policies position pp&e ppe previous prior proceedings
    procedures products profit profitability profits property proxy psu q1 q2 q3 q4
    quarter quarterly quarters quick r&d rate ratio receivable receivables reit release
    report reported research resources rest restructuring results return revenue revenues
    risk roa roe roi roic rsu sales same-store schedule sec second segment segments
    selected selling september services sg&a sga share shareholders shares sheet sheets
    short-term sold south statement statements stock stockholders tax taxes third
    thousand thousands total trailing transcript ttm turnover u.k u.s uk united unit units
    us usa usd wacc working world year years yoy ytd apr aug dec feb jan jul jun mar nov
    oct sep sept flow flows earnings eps loss losses gain gains activities financing
    provided used price prices pricing volume volumes demand supply orders customers
    customer payout yield exposure hedging derivatives fair value intangible intangibles
    acquisition acquisitions divestiture divestitures merger mergers inflation interest
    rates borrowings bonds credit facility covenants right-of-use rou tangible book common
    preferred treasury repurchase repurchases program plan plans sustainability climate
    emissions cybersecurity workforce headcount contracts obligations commitments
    contingencies litigation settlement tariffs regulatory ratios metrics metric kpis
    performance fiscal-year full-year year-over-year yoy quarter-over-quarter qoq ppne p&l
    d&a highest lowest largest biggest smallest top contribution contributor region
    regions geography geographic category categories line lines
    """
)
# Periods and forms: "FY2023", "FY2023Q1", "Q2", "Q2'2023", "2Q24", "10-K", "2023", "3.5%".
_PERIODISH = re.compile(
    r"(?:(?:FY|CY)'?\d{2,4}(?:Q[1-4]|H[12])?|(?:Q[1-4]|H[12]|[1-4][QH])(?:'?\d{2,4})?"
    r"|\d{1,2}-?[KQF](?:/A)?|\d[\d,.]*%?)",
    re.I,
)
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9&.\-'’]*")
_ABBREVIATION = re.compile(r"(?:[A-Za-z]\.){2,}|Inc\.|Corp\.|Co\.|Ltd\.|No\.|vs\.", re.I)

_CORPORATE = re.compile(
    r"\b((?:[A-Z][\w&.'-]*\s+){0,3}[A-Z][\w&.'-]*)\s*,?\s+(?:Inc|Corp|Corporation|Company|Co|"
    r"Ltd|plc|PLC|LLC|Group|Holdings|N\.V|S\.A|AG)\b\.?"
)
_POSSESSIVE = re.compile(r"\b((?:[A-Z][\w&.-]*\s+){0,3}[A-Z][\w&.-]*)['’]s\b")
# "Block (formerly Square)", "Meta (f/k/a Facebook)": only a company is renamed like that.
_RENAMED = re.compile(
    r"\b((?:[A-Z][\w&.'-]*\s+){0,3}[A-Z][\w&.'-]*)\s*\(\s*(?i:formerly|f/k/a|fka)\b"
)

_FORMER_NAME = re.compile(r"\(\s*(?i:formerly|f/k/a|fka)\b[^)]*\)?")


def _well_known_entries() -> list[tuple[str, re.Pattern[str], frozenset[str]]]:
    """(display name, pattern finding it, its keys) for each issuer of the
    nickname table (finrag/db/company_nicknames.toml). Its everyday words (Target, Block,
    COST) are left to the capitalised-run rule, which asks the store; so are tickers under
    3 letters ("MA", "GE": too often words)."""
    entries = []
    for issuer in issuers():
        alternatives = [
            f"{re.escape(name)}|{re.escape(name.upper())}"  # "AmEx", "AMEX"; "hp" is horsepower
            if len(alias_key(name)) <= 4
            else r"(?i:" + r"\s+".join(map(re.escape, name.split())) + r")"
            for name in issuer.names
        ] + [re.escape(t) for t in issuer.tickers if len(t) >= 3]
        pattern = re.compile(r"(?<![\w&'-])(?:" + "|".join(alternatives) + r")(?![\w&-])")
        entries.append((issuer.names[0], pattern, issuer.keys))
    return entries


_WELL_KNOWN_ENTRIES = _well_known_entries()


def unknown_company_names(
    question: str,
    conn: psycopg.Connection,
    *,
    held: set[str],
    named: Sequence[tuple[int, int]] = (),
) -> list[str]:
    """Company-like names in ``question`` that the store does not hold, in the order
    they appear. ``held``: the stored companies' alias keys and tickers (lower case);
    ``named``: where in the question the store's companies were found."""
    # Strongest first: a well-known issuer's own name wins over the words that named it.
    found = _well_known(question, held, named) + _worded_as_company(question, named)
    runs = _capitalised_runs(question, named)
    lower = _lower_case_names(question, named)
    coined = _coinages(question, named)
    words = {w for *_, ws in (*runs, *lower, *coined) for w in ws}
    absent = _absent_from_store(conn, words)
    found += [(start, end, name) for start, end, name, ws in (*runs, *lower) if absent & set(ws)]
    # "Best Western", "American Airlines": every word is in some filing, the name in none.
    phrases = [r for r in runs if len(r[3]) >= 2 and not absent & set(r[3])]
    unseen = _phrases_absent(conn, [name for _, _, name, _ in phrases])
    found += [(start, end, name) for start, end, name, _ in phrases if name in unseen]
    found += [(start, end, name) for start, end, name, ws in coined if set(ws) <= absent]
    # "Block (formerly Square)": the old name is the same company, named once.
    former = [(m.start(), m.end()) for m in _FORMER_NAME.finditer(question)]
    kept: list[tuple[int, int, str]] = []
    for start, end, name in found:
        key = alias_key(name)
        overlaps = any(s < end and start < e for s, e, _ in kept) or _inside(start, former)
        if key and key not in held and not overlaps and key not in {alias_key(n) for *_, n in kept}:
            kept.append((start, end, name))
    return [name for *_, name in sorted(kept)]


_LOWER_SUFFIX = re.compile(
    r"\b((?:[a-z0-9][\w&.'-]*\s+){0,2}[a-z0-9][\w&.'-]*)\s*,?\s+(?:inc|corp|corporation|"
    r"ltd|plc|llc|holdings|group)\b\.?"
)
_LOWER_POSSESSIVE = re.compile(r"\b([a-z0-9][\w&.-]*)['’]s\b")
_HYPHENATED = re.compile(r"(?<![\w&.'-])([A-Z][A-Za-z]{2,}(?:-[A-Z][A-Za-z]{2,})+)(?![\w&-])")


def _lower_case_names(
    question: str, named: Sequence[tuple[int, int]]
) -> list[tuple[int, int, str, list[str]]]:
    """'acme-zeta holdings', 'initech's': a lower-case name the wording makes a company's
    (the caller keeps it only when a word of it is in no stored chunk)."""
    out = []
    for pattern in (_LOWER_SUFFIX, _LOWER_POSSESSIVE):
        for m in pattern.finditer(question):
            words = m.group(1).split()
            while words and words[0].lower().rstrip(".") in _FUNCTION:  # "what were acme"
                words = words[1:]
            if not words or _inside(m.end(1) - 1, named) or any(is_vocabulary(w) for w in words):
                continue
            if any(w[:1].isupper() for w in words):
                continue  # capitalised: the rules above read it
            out.append((m.end(1) - len(" ".join(words)), m.end(1), " ".join(words), words))
    return out


def _coinages(
    question: str, named: Sequence[tuple[int, int]]
) -> list[tuple[int, int, str, list[str]]]:
    """'Acme-Zeta' opening a question (where a lone capitalised word proves nothing):
    hyphenated words, each part capitalised, that are no finance term; the caller keeps
    one only when none of its parts is in any stored chunk."""
    out = []
    for m in _HYPHENATED.finditer(question):
        word = m.group(1)
        if _inside(m.start(1), named) or is_vocabulary(word):
            continue
        parts = word.lower().split("-")
        if any(p in _FUNCTION or p in _TERMS for p in parts):
            continue  # "year-end", "one-off"
        out.append((m.start(1), m.end(1), word, parts))
    return out


def _inside(start: int, spans: Iterable[tuple[int, int]]) -> bool:
    return any(s <= start < e for s, e in spans)


def _worded_as_company(
    question: str, named: Sequence[tuple[int, int]]
) -> list[tuple[int, int, str]]:
    """'Tesla's', 'Does Initech Inc.', 'Block (formerly Square)': a possessive, a legal
    suffix or a former name makes it a company."""
    out = []
    for pattern in (_POSSESSIVE, _CORPORATE, _RENAMED):
        for m in pattern.finditer(question):
            words = m.group(1).split()
            while words and words[0].lower().rstrip(".") in _FUNCTION:  # "Does Tesla's"
                words = words[1:]
            if not words or _inside(m.end(1) - 1, named):
                continue
            if all(is_vocabulary(w) for w in words):  # "the Company's", "GAAP's"
                continue
            out.append((m.end(1) - len(" ".join(words)), m.end(1), " ".join(words)))
    return out


def _well_known(
    question: str, held: set[str], named: Sequence[tuple[int, int]]
) -> list[tuple[int, int, str]]:
    out = []
    for name, pattern, keys in _WELL_KNOWN_ENTRIES:
        if keys & held:
            continue
        for m in pattern.finditer(question):
            after = re.match(r"\s+([A-Z][\w&-]*)", question[m.end() :])
            if after and not is_vocabulary(after.group(1)):
                continue  # "Apple Hospitality": a longer name, for the run rule
            if not _inside(m.start(), named):
                out.append((m.start(), m.end(), name))
                break
    return out


def is_vocabulary(word: str) -> bool:
    """A question, finance, period or place word ("What", "Revenue", "Q2", "Americas")."""
    lower = word.lower().rstrip(".")
    return lower in _FUNCTION or lower in _TERMS or bool(_PERIODISH.fullmatch(word))


def _capitalised_runs(
    question: str, named: Sequence[tuple[int, int]]
) -> list[tuple[int, int, str, list[str]]]:
    """(start, end, name, its words to look up) for each run of capitalised words that could
    be a name: split at vocabulary, punctuation and the store's own company names."""
    if not re.search(r"[a-z]", question):
        return []  # all capitals: no case to read names by
    runs: list[list[tuple[int, str, bool]]] = []  # (start, word, opens a sentence)
    current: list[tuple[int, str, bool]] = []
    opens_sentence = True
    previous_end = 0
    for m in _TOKEN.finditer(question):
        raw = m.group(0)
        gap = question[previous_end : m.start()]
        previous_end = m.end()
        if gap.strip() not in ("", "&"):  # "Procter & Gamble" stays one run
            opens_sentence = opens_sentence or bool(re.search(r"[.?!:;\"“(]", gap))
            current = _close(current, runs)
        possessive = bool(re.search(r"['’]s?$", raw))
        word = re.sub(r"['’]s?$", "", raw)
        full_stop = word.endswith(".") and not _ABBREVIATION.fullmatch(word)
        word = word.rstrip(".") if full_stop else word
        if word == "of" and current:  # "Bank of America"
            current.append((m.start(), word, False))
        elif (
            _capitalised(word)
            and not _inside(m.start(), named)
            and word.lower().rstrip(".") not in _FUNCTION
        ):
            current.append((m.start(), word, opens_sentence))
        else:
            current = _close(current, runs)
        if possessive or full_stop:
            current = _close(current, runs)
        opens_sentence = full_stop
    _close(current, runs)
    out = []
    for run in runs:
        while run and (run[-1][1] == "of" or is_vocabulary(run[-1][1])):
            run.pop()  # "Microsoft Revenue" -> "Microsoft"
        while "of" in (words := [w for _, w, _ in run]) and all(
            is_vocabulary(w) for w in words[: words.index("of")]
        ):
            del run[: words.index("of") + 1]  # "Revenue of Hooli" -> "Hooli"
        if not run or all(is_vocabulary(w) for _, w, _ in run):
            continue
        if len(run) == 1 and run[0][2] and not run[0][1].isupper():
            continue  # a lone capitalised word opening a sentence: "Explain", "Initech"
        start, end = run[0][0], run[-1][0] + len(run[-1][1])
        words = [w.lower() for _, w, _ in run if not is_vocabulary(w)]
        out.append((start, end, question[start:end], words))
    return out


def _close(current: list, runs: list) -> list:
    if current:
        runs.append(current)
    return []


def _capitalised(word: str) -> bool:
    """'Microsoft', 'NVDA', '3M' — not 'iPhone', 'revenue', 'FY2023' or '2024'."""
    if _PERIODISH.fullmatch(word):
        return False
    return word[:1].isupper() or (
        word[:1].isdigit() and any(c.isupper() for c in word) and any(c.isalpha() for c in word)
    )


def _phrases_absent(conn: psycopg.Connection, phrases: Sequence[str]) -> set[str]:
    """The names of two or more words that no stored chunk holds as a phrase."""
    if not phrases:
        return set()
    rows = conn.execute(
        """
        SELECT p FROM unnest(%s::text[]) AS p
        WHERE NOT EXISTS (SELECT 1 FROM chunks WHERE tsv @@ phraseto_tsquery('english', p))
        """,
        (list(phrases),),
    ).fetchall()
    return {r[0] for r in rows}


def _absent_from_store(conn: psycopg.Connection, words: set[str]) -> set[str]:
    """The words that no stored chunk holds (as full-text lexemes)."""
    if not words:
        return set()
    rows = conn.execute(
        """
        SELECT w FROM unnest(%s::text[]) AS w
        WHERE NOT EXISTS (
            SELECT 1 FROM unnest(to_tsvector('english', w)) AS u
            JOIN lexeme_stats s ON s.lexeme = u.lexeme
            WHERE s.chunks > 0
        )
        """,
        (sorted(words),),
    ).fetchall()
    return {r[0] for r in rows}
