"""Questions about segments, regions and products, answered from dimensional facts.

An iXBRL filing tags its segment note and its revenue-by-region table with the same
concepts as the statements, under a dimension: ``us-gaap:StatementBusinessSegmentsAxis``
(Apple's Americas, Europe, Greater China...), ``srt:StatementGeographicalAxis``,
``srt:ProductOrServiceAxis`` (iPhone, Services) or an axis of the filer's own. A member
is named by its own words ("aapl:GreaterChinaSegmentMember" -> Greater China), so a
question naming "Greater China" or asking "which segment grew fastest" is read without a
table of names. Every figure is a stored fact cited by page; every growth rate and share
a calculation on them, shown with its inputs. A question this module cannot read whole
(another measure, no such facts) is left to the other routes.

A printed filing (PDF) has no tags: its segment notes and revenue-by-region tables are
read into the same kind of facts (finrag.facts.member_tables: axis ``segment``,
``geography`` or ``product``, the member as printed), used where no tag is held.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

import psycopg

from finrag.answer.extraction import CalculationOutcome
from finrag.answer.fact_sources import Sources, calculate_outcome, number_text
from finrag.answer.fact_words import short_name
from finrag.answer.facts_route import FLAG, Company, FactsOutcome
from finrag.answer.ranking_words import (
    DECLINE,
    GROWTH,
    LARGEST,
    NARRATIVE,
    REGION_WORDS,
    SEGMENT_WORDS,
    SLOWEST,
    SMALLEST,
    generic_member,
)
from finrag.answer.result import Answer
from finrag.facts.dictionary import Metric
from finrag.facts.dictionary import metric as dictionary_metric
from finrag.facts.lookup import MetricValue, Period, Unresolved, resolve_metric
from finrag.facts.member_tables import GEOGRAPHY, PRODUCT, SEGMENT
from finrag.facts.store import _SELECT, StoredFact

SEGMENT_AXIS = "us-gaap:StatementBusinessSegmentsAxis"
GEOGRAPHY_AXIS = "srt:StatementGeographicalAxis"
PRODUCT_AXIS = "srt:ProductOrServiceAxis"
_STANDARD_AXES = (SEGMENT_AXIS, GEOGRAPHY_AXIS, PRODUCT_AXIS)

_PRODUCT_WORDS = re.compile(
    r"\bproducts?\b|\bcategor(?:y|ies)\b|\bproduct lines?\b|\b(?:end )?markets?\b|\bplatforms?\b"
)
# A figure other than the one reported: the facts hold the reported members only.
_ADJUSTED = re.compile(
    r"\b(?:organic(?:ally)?|adjusted|non ?gaap|core|constant currency|excluding|exclude[sd]?|"
    r"pro forma|like for like|same store|comparable)\b"
)
# The measures a list of members is shown with, in order: the first the breakdown reports.
_LISTED_BY = ("revenue", "operating_income", "pretax_income")
# A question after the members' names: "what are its segments", "which regions does it
# operate in", "list its business units".
_ASKS_NAMES = re.compile(
    r"\b(?:what|which)\s+(?:are|were)\b|\blist\b|\bname\b|\boperat\w*\s+in\b|"
    r"\bin\s+which\b.{0,40}\boperat"
)
_SHARE = re.compile(r"\b(?:share|percent(?:age)? of|proportion|portion|fraction)\b|% of")
_OPERATING = re.compile(r"\boperating (?:income|profit|loss)\b")
_REVENUE = re.compile(
    r"\b(?:revenues?|sales|top ?line|grew|grow\w*|growth|share|largest|biggest)\b"
)


def member_words(member: str) -> str:
    """'aapl:GreaterChinaSegmentMember' -> 'Greater China'; 'srt:AmericasMember' ->
    'Americas'; 'nvda:ComputeAndNetworkingMember' -> 'Compute And Networking'."""
    local = member.split(":", 1)[-1]
    local = re.sub(r"(?:Segments?|ReportableSegment)?Member$", "", local) or local
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z]{2,})", " ", local).split()
    if len(words) > 1 and words[0] == "I":  # "IPhoneMember": iPhone, as Apple writes it
        words = ["i" + words[1], *words[2:]]
    return " ".join(words)


# "services revenue", "product net sales": the product/service split named as a measure.
_SPLIT_NAMED = re.compile(r"\b(product|service)s? (?:net )?(?:revenues?|sales)\b")
# The axes a breakdown is reported on: the standard three and the filer's own.
_OWN_AXIS = re.compile(r"^(?!us-gaap:|srt:|dei:|ifrs-full:)[\w-]+:\w+Axis$")


_OPERATING_SEGMENTS = ("srt:ConsolidationItemsAxis", "us-gaap:OperatingSegmentsMember")
# Countries are tagged by ISO code ("country:US"); a question names them in words.
_COUNTRIES = {
    "US": "United States", "CN": "China", "TW": "Taiwan", "SG": "Singapore", "JP": "Japan",
    "GB": "United Kingdom", "DE": "Germany", "FR": "France", "IN": "India", "KR": "Korea",
    "CA": "Canada", "MX": "Mexico", "IE": "Ireland", "NL": "Netherlands", "CH": "Switzerland",
    "IL": "Israel", "HK": "Hong Kong", "BR": "Brazil", "AU": "Australia", "IT": "Italy",
}  # fmt: skip


def _display(member: str) -> str:
    if member.startswith("country:"):
        return _COUNTRIES.get(member.split(":", 1)[1], member.split(":", 1)[1])
    return member_words(member)


def _breakdown_axis(axis: str) -> bool:
    return axis in _STANDARD_AXES or bool(_OWN_AXIS.match(axis))


def _named_in(words: str, question: str) -> bool:
    """'Greater China' in 'greater china', 'I Phone' in 'iphone', 'Rest Of Asia Pacific'
    in 'rest of asia-pacific'."""
    parts = [re.escape(w) for w in words.lower().split() if w != "and"]
    if not parts:
        return False
    pattern = r"(?:\s*(?:and|&)?\s*)".join(parts)
    return bool(re.search(rf"(?<![a-z0-9]){pattern}(?![a-z0-9])", question))


@dataclass
class _Row:
    axis: str
    member: str
    name: str
    fact: StoredFact


def answer_segments(
    conn: psycopg.Connection, question: str, company: Company, years: list[int], quarter: int | None
) -> FactsOutcome | None:
    """The answer from segment, region or product facts; None when the question is not
    one this module reads (the other routes take it)."""
    key = re.sub(r"[-/]", " ", question.lower())
    if NARRATIVE.search(key):
        return None  # what a filing says about a segment: the text route
    if _ADJUSTED.search(key):
        return None  # "excluding acquisitions", "organic": not the reported figures held
    listing = _measure(key) is None and bool(_ASKS_NAMES.search(key))
    # "What are X's reportable segments?": the members named, with the revenue each
    # reports (the figure that shows which ones the company "primarily" operates in).
    measures = [dictionary_metric(m) for m in _LISTED_BY] if listing else [_measure(key)]
    for measure in measures:
        if measure is not None and (rows := _dimensional(conn, company.id, measure, quarter)):
            break
    else:
        return None
    named = _members_named(rows, key, question)
    cue = bool(SEGMENT_WORDS.search(key) or REGION_WORDS.search(key) or _PRODUCT_WORDS.search(key))
    if (not named and not cue) or (listing and (named or not cue)):
        return None
    axis = _axis(rows, key, named)
    if axis is None:
        return None
    on_axis = [r for r in rows if r.axis == axis]
    held = sorted({r.fact.fiscal_year for r in on_axis if r.fact.fiscal_year})
    if not held:
        return None
    year = max(years) if years else held[-1]
    growth = bool(GROWTH.search(key))
    share = bool(_SHARE.search(key)) and not growth
    first = min(years) if len(years) > 1 else year - 1
    members = named or sorted({r.member for r in on_axis if not generic_member(r.name)})
    members = members or sorted({r.member for r in on_axis})
    now = _by_member(on_axis, members, year, quarter)
    if not now:
        return FactsOutcome(None, f"facts store: no {axis} facts for FY{year}")
    before = _by_member(on_axis, members, first, quarter) if growth else {}
    if growth and set(before) != set(now):
        lacking = sorted(set(now) - set(before))
        names = ", ".join(now[m].name for m in lacking)
        return FactsOutcome(None, f"facts store: no FY{first} figures for {names}")
    total = _total(conn, company, measure, Period(year, quarter)) if share else None
    if share and total is None:
        return FactsOutcome(None, "facts store: no company total to take a share of")
    answer = _compose(
        conn,
        question,
        company,
        measure,
        axis,
        now,
        before,
        total,
        named,
        key,
        Period(year, quarter),
        listing,
    )
    what = "growth" if growth else "share" if share else "names" if listing else "values"
    return FactsOutcome(answer, f"facts store: {measure.name} by {axis} ({what}, FY{year})")


def _measure(key: str) -> Metric | None:
    if _OPERATING.search(key):
        return dictionary_metric("operating_income")
    if _REVENUE.search(key):
        return dictionary_metric("revenue")
    return None


def _dimensional(
    conn: psycopg.Connection, company_id: int, measure: Metric, quarter: int | None
) -> list[_Row]:
    """The measure's one-dimension facts of the company, for full years or the quarter:
    its iXBRL tags', else (a printed filing) its segment and region tables' members."""
    return _rows(conn, company_id, measure, quarter, "ixbrl") or _rows(
        conn, company_id, measure, quarter, "table"
    )


# The breakdowns finrag.facts.member_tables reads off printed tables, as the tags name them.
_TABLE_AXES = {SEGMENT: SEGMENT_AXIS, GEOGRAPHY: GEOGRAPHY_AXIS, PRODUCT: PRODUCT_AXIS}


def _rows(
    conn: psycopg.Connection, company_id: int, measure: Metric, quarter: int | None, source: str
) -> list[_Row]:
    rows = conn.execute(
        _SELECT + " WHERE f.company_id = %s AND f.concept = ANY(%s) AND f.source = %s "
        "AND jsonb_array_length(f.dimensions) BETWEEN 1 AND 2 AND f.value IS NOT NULL "
        "ORDER BY f.fiscal_year DESC, f.verified DESC, f.page, f.id",
        (company_id, list(measure.concepts), source),
    ).fetchall()
    months = 3 if quarter else 12
    out = []
    for row in rows:
        fact = StoredFact(*row)
        if fact.months != months or (quarter and fact.fiscal_quarter != quarter):
            continue
        if source == "table":
            # One member of one breakdown; a column's qualifier or an outer member
            # (Domestic's product categories) makes it another figure.
            pairs = [tuple(p) for p in fact.dimensions]
            if len(pairs) == 1 and pairs[0][0] in _TABLE_AXES:
                axis, member = pairs[0]
                out.append(_Row(_TABLE_AXES[axis], member, member, fact))
            continue
        # NVIDIA tags a segment's figures also as an operating segment's (ConsolidationItems).
        pairs = [tuple(p) for p in fact.dimensions if tuple(p) != _OPERATING_SEGMENTS]
        if len(pairs) != 1:
            continue
        axis, member = pairs[0]
        if _breakdown_axis(axis):
            out.append(_Row(axis, member, _display(member), fact))
    return out


def _members_named(rows: list[_Row], key: str, question: str) -> list[str]:
    """Members the question names, longest names first ('Rest of Asia Pacific' before
    'Asia Pacific'); a word naming only the end of one ('China') names it when no other
    member ends so."""
    names = {r.member: r.name for r in rows if not generic_member(r.name)}
    found: list[str] = []
    taken = key
    for member, words in sorted(names.items(), key=lambda kv: -len(kv[1])):
        if _named_in(words, taken):
            found.append(member)
            taken = re.sub(r"\s+".join(map(re.escape, words.lower().split())), " ", taken)
    if not found and (split := _SPLIT_NAMED.search(key)):
        found += [r.member for r in rows if r.axis == PRODUCT_AXIS and r.name.lower() == split[1]][
            :1
        ]
    if not found:
        # Only a proper noun as the question writes it ("China"): "revenue" ending some
        # member's name ("Other Revenue") names no member.
        for word in (w.lower() for w in re.findall(r"(?<=\s)[A-Z][a-z]{3,}\b", question)):
            ends = [m for m, w in names.items() if w.lower().split()[-1:] == [word]]
            if len({names[m] for m in ends}) == 1:
                found.append(ends[0])
    every = {r.member: r.name for r in rows}
    order = {m: key.find(every[m].lower().split()[-1]) for m in found}
    return sorted(dict.fromkeys(found), key=lambda m: order[m])


def _axis(rows: list[_Row], key: str, named: list[str]) -> str | None:
    axes = {r.axis for r in rows}
    if named:
        owners = {r.axis for r in rows if r.member in named}
        preferred = [a for a in _STANDARD_AXES if a in owners] or sorted(owners)
        return preferred[0] if preferred else None
    if _PRODUCT_WORDS.search(key):
        wanted = (PRODUCT_AXIS,)
    elif SEGMENT_WORDS.search(key) and REGION_WORDS.search(key):
        wanted = (SEGMENT_AXIS, GEOGRAPHY_AXIS)  # "geographic segments": Apple's regions
    elif SEGMENT_WORDS.search(key):
        wanted = (SEGMENT_AXIS,)
    elif REGION_WORDS.search(key):
        wanted = (GEOGRAPHY_AXIS, SEGMENT_AXIS)
    else:
        wanted = (SEGMENT_AXIS,)
    return next((a for a in wanted if a in axes), None)


def _by_member(
    rows: list[_Row], members: list[str], year: int, quarter: int | None
) -> dict[str, _Row]:
    out: dict[str, _Row] = {}
    for r in rows:
        same = quarter is None or r.fact.fiscal_quarter == quarter
        if r.member in members and r.fact.fiscal_year == year and r.member not in out and same:
            out[r.member] = r
    return out


def _total(conn, company: Company, measure: Metric, period: Period) -> MetricValue | None:
    found = resolve_metric(conn, company.id, measure, period)
    return None if isinstance(found, Unresolved) else found


def _value(row: _Row, measure: Metric, period: str) -> MetricValue:
    return MetricValue(measure, period, row.fact.value or Decimal(0), row.fact)


def _millions(value: Decimal) -> str:
    return f"${value / _M:,.0f} million"


def _compose(
    conn, question, company, measure, axis, now, before, total, named, key, period, listing
) -> Answer:
    sources = Sources(conn)
    calculations: list[CalculationOutcome] = []
    label = period.label
    what = {PRODUCT_AXIS: "product", GEOGRAPHY_AXIS: "region"}.get(axis, "segment")
    noun = measure.display[:1].lower() + measure.display[1:]
    owner = short_name(company.name)
    if before:
        old_label = Period(
            next(iter(before.values())).fact.fiscal_year, period.fiscal_quarter
        ).label
        lines: list[tuple[Decimal, str, str]] = []  # (growth, member's name, words)
        for member, row in now.items():
            a = _value(before[member], measure, old_label)
            b = _value(row, measure, label)
            na, nb = sources.cite(a), sources.cite(b)
            x, y = a.value / _M, b.value / _M
            inputs = [_input(x, na, row.name, old_label), _input(y, nb, row.name, label)]
            calc = calculate_outcome(
                f"{row.name} {noun} growth, {old_label} to {label}",
                f"percent_change({number_text(x)}, {number_text(y)})",
                inputs,
            )
            calculations.append(calc)
            rate = Decimal(str(calc.result or 0))
            words = (
                f"{row.name} {_signed(rate)} (from {_millions(a.value)} in {old_label} [{na}] "
                f"to {_millions(b.value)} in {label} [{nb}])"
            )
            lines.append((rate, row.name, words))
        slow = bool(SLOWEST.search(key))
        falling = bool(DECLINE.search(key))
        # Highest rate first, unless the question asks for the slowest grower or the
        # fastest faller (the lowest rate); the slowest faller is the highest again.
        lowest_first = slow != falling
        lines.sort(key=lambda item: item[0] if lowest_first else -item[0])
        if len(named) == 2 and re.search(r"\b(?:faster|slower)\b", key):
            rates = {name: rate for rate, name, _ in lines}
            first, second = (rates[now[m].name] for m in named)
            verdict = first > second if ("faster" in key) != falling else first < second
            opening = f"{'Yes' if verdict else 'No'}. "
        else:
            top = lines[0][0]
            pace = (
                ("fell the most" if top < 0 else "grew slowest")
                if lowest_first
                else ("fell the least" if top < 0 else "grew fastest")
            )
            opening = f"Of {owner}'s {what}s, {lines[0][1]} {pace} in {label}. "
            if len(lines) == 1:
                opening = ""  # one member asked about: no race to win
        listed = "; ".join(words for *_, words in lines)
        text = f"{opening}{owner}'s {noun} growth by {what}: {listed}."
    elif total is not None:
        nt = sources.cite(total)
        t = total.value / _M
        parts = []
        for row in now.values():
            v = _value(row, measure, label)
            nv = sources.cite(v)
            x = v.value / _M
            inputs = [_input(x, nv, row.name, label), _input(t, nt, "total", label)]
            calc = calculate_outcome(
                f"{row.name} share of {noun}, {label}",
                f"100 * {number_text(x)} / {number_text(t)}",
                inputs,
            )
            calculations.append(calc)
            share = Decimal(str(calc.result or 0))
            parts.append(
                (
                    share,
                    f"{row.name} {_millions(v.value)} [{nv}] of {_millions(total.value)} "
                    f"[{nt}], {share:.1f}%",
                )
            )
        parts.sort(key=lambda item: -item[0])
        text = (
            f"{owner}'s {noun} in {label} by {what}, as a share of the total: "
            + "; ".join(p for _, p in parts)
            + "."
        )
    else:
        items = sorted(now.values(), key=lambda r: -(r.fact.value or 0))
        if SMALLEST.search(key):
            items = items[::-1]
        parts = [
            f"{r.name} {_millions(r.fact.value or Decimal(0))} "
            f"[{sources.cite(_value(r, measure, label))}]"
            for r in items
        ]
        opening = ""
        if not named and (LARGEST.search(key) or SMALLEST.search(key)):
            word = "smallest" if SMALLEST.search(key) else "largest"
            opening = f"{items[0].name} was {owner}'s {word} {what} by {noun} in {label}. "
        elif listing:
            names = ", ".join(r.name for r in items)
            opening = f"{owner} reports these {what}s for {label}: {names}. "
        text = opening + f"{owner}'s {noun} in {label} by {what}: " + "; ".join(parts) + "."
    return sources.answer(question, text, calculations, [FLAG, f"from dimensional facts ({axis})"])


_M = Decimal(1_000_000)


def _input(value: Decimal, source: int, name: str, period: str) -> dict:
    return {
        "text": number_text(value),
        "value": float(value),
        "sources": [source],
        "label": name,
        "period": period,
    }


def _signed(rate: Decimal) -> str:
    return f"{'grew' if rate >= 0 else 'fell'} {abs(rate):.1f}%"
