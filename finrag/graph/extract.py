"""Entities and relations of one filing, by small rules on its own structure (no model).

Each rule reads one stored chunk and yields triples about the filer: its auditor (the
signature of the auditor's report or consent, "/s/ Deloitte & Touche LLP"), its reportable
segments ("We have two reportable segments: Domestic and International", an MD&A heading
"Domestic Segment"), what a segment sells (the rows under "Domestic:" in a revenue-by-product
table), its officers (a signature "/s/ CORIE BARRY Corie Barry Chief Executive Officer"),
its subsidiaries and where they are organized (Exhibit 21 rows, "organized under the laws
of"), and where it is incorporated. Every regex is bounded and every rule linear in its
chunk, and at most MAX_CHUNKS chunks are read, so a filing of any length costs little.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

MAX_CHUNKS = 3000  # a 300-page 10-K stores about 1,500; past this the rest is exhibits
MAX_SEGMENTS = 12  # a list longer than this is not a list of segments

# Predicates written by the rules (sql/011 leaves the set open for other extractors).
HAS_SEGMENT = "has_segment"
SELLS = "sells"
AUDITED_BY = "audited_by"
HAS_EXECUTIVE = "has_executive"
HAS_DIRECTOR = "has_director"
HAS_SUBSIDIARY = "has_subsidiary"
LOCATED_IN = "located_in"
INCORPORATED_IN = "incorporated_in"
# Written only by a model's reading (finrag.graph.llm_pass): prose the rules do not parse.
HAS_CUSTOMER = "has_customer"
COMPETES_WITH = "competes_with"
ACQUIRED = "acquired"


@dataclass(frozen=True)
class ChunkText:
    """What the rules read of a stored chunk."""

    id: int
    kind: str  # text | table
    page: int | None
    section_path: tuple[str, ...]
    section_kind: str | None
    content: str


@dataclass(frozen=True)
class Triple:
    """One relation as a rule finds it; ``subject`` None is the filer itself."""

    predicate: str
    object_kind: str
    object_name: str
    chunk_id: int
    page: int | None
    evidence: str
    subject: tuple[str, str] | None = None  # (kind, name) when not the filer
    object_aliases: tuple[str, ...] = ()
    extractor: str = "rules"  # or "llm" (finrag.graph.llm_pass)


@dataclass
class Graph:
    triples: list[Triple] = field(default_factory=list)
    chunks_read: int = 0


def normalize_name(name: str) -> str:
    """Lower case, one space, no punctuation but '&': how names are matched."""
    name = name.lower().replace("’", "'")
    name = re.sub(r"[^a-z0-9&' ]+", " ", name)
    name = re.sub(r"\band\b", "&", name)  # "Deloitte and Touche" is "Deloitte & Touche"
    return re.sub(r"\s+", " ", name).strip()


_ABBREVIATION = re.compile(r"(?:\b[A-Z]\.|Inc\.|Co\.|Ltd\.|Corp\.|Jr\.|Sr\.|[A-Z]\.[A-Z]\.)$")


def _clean(name: str) -> str:
    name = re.sub(r"\s+", " ", name).strip(" ,;:-–—*")
    while name.endswith(".") and not _ABBREVIATION.search(name):  # "Inc." keeps its stop
        name = name[:-1].rstrip(" ,;:")
    return name.removeprefix("the ").removeprefix("The ")


def _evidence(text: str, start: int, end: int, pad: int = 60) -> str:
    return re.sub(r"\s+", " ", text[max(0, start - pad) : end + pad]).strip()


# --- auditor -------------------------------------------------------------------------------

_FIRM = r"[A-Z][A-Za-z&.,' ]{2,50}?(?:LLP|L\.L\.P\.)"
_AUDITOR_SIGNED = re.compile(rf"/s/\s*(?P<firm>{_FIRM})")
_AUDITOR_NAMED = re.compile(
    rf"(?P<firm>{_FIRM}),?\s+(?:\(\w+ \d+\)\s*)?(?:our|the Company's|the|an)?\s*independent "
    r"registered public accounting firm",
    re.IGNORECASE,
)
_AUDITOR_TENURE = re.compile(r"served as the Company.s auditor since (\d{4})", re.IGNORECASE)
_AUDITOR_ALIASES = {
    "deloitte & touche llp": ("deloitte", "deloitte & touche"),
    "ernst & young llp": ("ernst & young", "ey"),
    "pricewaterhousecoopers llp": ("pricewaterhousecoopers", "pwc"),
    "kpmg llp": ("kpmg",),
}


def _firm_name(words: str) -> str:
    """The capitalized run that ends in LLP: "audited by Deloitte & Touche LLP" -> the firm."""
    tokens = _clean(words).split()
    start = len(tokens)
    while start > 0 and re.match(r"^(?:[A-Z][\w.,'&-]*|&|and)$", tokens[start - 1]):
        start -= 1
    while start < len(tokens) and tokens[start] in {"&", "and", "Consent", "Report"}:
        start += 1  # "Consent of ..." stops at "of"; a leading connective is not the name
    return " ".join(tokens[start:]).strip(" ,")


def auditor_rule(chunk: ChunkText) -> Iterator[Triple]:
    """The audit firm: its signature under a report or consent, or named as the company's
    independent registered public accounting firm."""
    text = chunk.content
    if "LLP" not in text and "L.L.P." not in text:
        return
    for pattern in (_AUDITOR_SIGNED, _AUDITOR_NAMED):
        for m in pattern.finditer(text):
            firm = _firm_name(m.group("firm"))
            if len(firm.split()) > 6 or not firm[:1].isupper():
                continue
            tenure = _AUDITOR_TENURE.search(text)
            evidence = _evidence(text, m.start(), m.end())
            if tenure:
                evidence += f" (auditor since {tenure.group(1)})"
            aliases = _AUDITOR_ALIASES.get(normalize_name(firm), ())
            yield Triple(
                AUDITED_BY, "auditor", firm, chunk.id, chunk.page, evidence, object_aliases=aliases
            )


# --- segments ------------------------------------------------------------------------------

_SEGMENT_LIST = re.compile(
    r"(?:two|three|four|five|six|seven|eight|nine|\d{1,2})\s+(?:reportable|operating|business)\s+"
    r"(?:business\s+)?segments?(?:,)?\s*(?:[:—–-]|are|which are|consisting of|comprised of)\s*"
    r"(?:the\s+)?(?P<list>[^.;()]{3,300})",
    re.IGNORECASE,
)
_SEGMENT_HEADING = re.compile(r"^(?:\d+\.\s*)?(?P<name>[A-Z][A-Za-z&,' -]{1,50}?)\s+Segments?$")
_NOT_SEGMENT = {
    "reportable", "operating", "business", "segment", "segments", "total", "other", "our",
    "information", "performance", "results", "reporting", "financial", "consolidated",
    "reportable segment", "operating segment", "business segment",
}  # fmt: skip


def _split_list(words: str) -> list[str]:
    words = re.sub(r"\s+", " ", words)
    parts = re.split(r",\s*(?:and\s+)?|;\s*|\s+and\s+(?=[A-Z])", words)
    names = []
    for part in parts:
        part = _clean(re.sub(r"\s+(?:segments?|businesses)\b.*$", "", part.strip()))
        if not part or not part[0].isupper() or len(part.split()) > 5:
            return []  # prose, not a list of names: read nothing rather than guess
        names.append(part)
    return names if 1 < len(names) <= MAX_SEGMENTS else []


def segment_rule(chunk: ChunkText) -> Iterator[Triple]:
    """Reportable segments: a sentence that lists them, or a heading "Domestic Segment"."""
    text = chunk.content
    if "egment" not in text and not any("egment" in h for h in chunk.section_path):
        return
    for m in _SEGMENT_LIST.finditer(text):
        for name in _split_list(m.group("list")):
            if normalize_name(name) not in _NOT_SEGMENT:
                evidence = _evidence(text, m.start(), m.end(), pad=0)
                yield Triple(HAS_SEGMENT, "segment", name, chunk.id, chunk.page, evidence)
    for heading in chunk.section_path[-1:]:
        h = _SEGMENT_HEADING.match(heading.strip())
        if h and normalize_name(h.group("name")) not in _NOT_SEGMENT:
            name = _clean(h.group("name"))
            yield Triple(HAS_SEGMENT, "segment", name, chunk.id, chunk.page, heading.strip())


# --- products by segment -------------------------------------------------------------------

_ROW = re.compile(r"^\|(?P<label>[^|]{1,80})\|(?P<rest>.*)\|\s*$")
_PRODUCT_TABLE = re.compile(r"by product (?:category|line)|product categor", re.IGNORECASE)


def _caption(chunk: ChunkText) -> str:
    return next((ln for ln in chunk.content.splitlines()[1:] if ln and ln[0] != "|"), "")


def product_rule(chunk: ChunkText, carry: dict | None = None) -> Iterator[Triple]:
    """Rows of a revenue-by-product-category table: under a row "Domestic:" (a segment,
    no values) each labelled row with values is a product category that segment sells.
    ``carry`` holds where the previous chunk left off, for a table split over chunks."""
    carry = carry if carry is not None else {}
    if chunk.kind != "table" or not _PRODUCT_TABLE.search(chunk.content):
        carry.clear()
        return
    continued = carry.get("caption") == _caption(chunk) and carry.get("in_products")
    segment: str | None = carry.get("segment") if continued else None
    in_products = bool(continued)
    lines = chunk.content.splitlines()
    for i, line in enumerate(lines):
        m = _ROW.match(line.strip())
        if not m:
            continue
        label = m.group("label").strip()
        if i + 1 < len(lines) and lines[i + 1].startswith("|---"):  # the header row
            head = re.search(r"categor(?:y|ies)\s+(?P<segment>[A-Z][\w &]{1,40}):$", label)
            if head:  # "Revenue by product category Domestic:"; a split table repeats it
                in_products = True
                segment = segment if continued else _clean(head.group("segment"))
            continue
        has_values = bool(re.search(r"\d", m.group("rest")))
        if _PRODUCT_TABLE.search(label):
            in_products = True
            continue
        if not in_products:
            continue
        if label.endswith(":") and not has_values:
            segment = _clean(label.rstrip(":"))
            continue
        if re.match(r"(?i)total\b", label):
            segment = None
            continue
        if not has_values or re.match(r"(?i)other\b", label):
            continue
        product = _clean(label)
        subject = ("segment", segment) if segment else None
        evidence = f"{segment + ': ' if segment else ''}{product} ({line.strip()[:80]})"
        yield Triple(SELLS, "product", product, chunk.id, chunk.page, evidence, subject=subject)
    carry.update(caption=_caption(chunk), in_products=in_products, segment=segment)


# --- executives and directors ----------------------------------------------------------------

_TITLE = (
    r"(?:Executive Chairman|Chairman|Chair|President|Chief Executive Officer|Chief Financial "
    r"Officer|Chief Accounting Officer|Chief Operating Officer|Controller|Treasurer|"
    r"Senior Vice President|Executive Vice President|Vice President|Director)"
)
# The signer's words (the name, often twice: "CORIE BARRY Corie Barry", maybe over a
# table's rows), then a title.
_SIGNED = re.compile(
    rf"/s/\s*(?P<who>[A-Z][A-Za-z'.\- |\n]{{2,80}}?)\s*\|?\s*"
    rf"(?P<title>(?:Co-)?{_TITLE}[^|\n/]{{0,80}})"
)
# "/ S /" and "/S/" are "/s/" as some filers' signature pages print it.
_SIGNATURE_MARK = re.compile(r"/\s?[sS]\s?/")
# Small capitals come out of some filings' HTML as a capital and the rest of the word
# apart: "T ED S ARANDOS" is "TED SARANDOS".
_SMALL_CAPS = re.compile(r"\b([A-Z]) (?=[A-Z\u00c0-\u00de]{2,}\b)")
_OFFICER = re.compile(r"Chief|President|Chair|Controller|Treasurer|Vice President", re.IGNORECASE)


_NOT_NAME = (
    r"(?!(?:Senior|Executive|Vice|Retired|Former|Chief|Chair|Chairman|President|Director)\b)"
)
_PERSON_WORDS = rf"[A-Z][a-z]+\.?(?:\s+[A-Z]\.)?(?:\s+{_NOT_NAME}[A-Z][A-Za-z'-]+){{1,2}}"
_PERSON = re.compile(rf"^{_PERSON_WORDS}$")
_NAME_AND_TITLE = re.compile(
    rf"^(?P<name>{_PERSON_WORDS})\s+(?P<title>(?:[A-Z][\w&,]*\s+){{0,4}}?{_TITLE}.*)$"
)
_OTHER_EMPLOYER = re.compile(r"\b(?:Retired|Former)\b|\bof [A-Z]|, [A-Z]\w+ (?:Inc|Corp|plc)")


def _without_initials(name: str) -> tuple[str, ...]:
    """ "Corie S. Barry" is also "Corie Barry"."""
    short = re.sub(r"\s+[A-Z]\.(?=\s)", "", name)
    return (short,) if short != name else ()


def _officer(name: str, title: str, chunk: ChunkText, evidence: str) -> Triple:
    title = re.sub(r"\b(Director)(?:\s+Director\b)+", r"\1", title).strip(" ,")
    predicate = HAS_EXECUTIVE if _OFFICER.search(title) else HAS_DIRECTOR
    aliases = _officer_aliases(title) + _without_initials(name)
    return Triple(predicate, "person", name, chunk.id, chunk.page, evidence, object_aliases=aliases)


# "Charles W. Scharf (age 59) Chief Executive Officer and President since ...": a list of
# executive officers in prose, as banks print it.
_NAME_AGE_TITLE = re.compile(
    rf"(?P<name>{_PERSON_WORDS}) \(age \d{{2}}\)\s+(?P<title>(?:[A-Z][\w&,-]*\s+){{0,4}}?"
    rf"{_TITLE}[^.;(]{{0,80}}?)(?= since\b|[.;(])"
)
# "the Company's Chief Financial Officer, Andre Schulten, performed ...": an officer named
# in apposition to the filer's title.
_TITLE_APPOSITION = re.compile(
    rf"(?:[Cc]ompany[’']s|\b[Oo]ur)\s+(?P<title>(?:(?:[A-Z][\w&,]*|of|the|and)\s+){{0,8}}?"
    rf"Chief \w+ Officer),"
    rf"\s+(?P<name>{_PERSON_WORDS}),"
)


def officer_prose_rule(chunk: ChunkText) -> Iterator[Triple]:
    """Officers named in prose: "Name (age 59) Chief Executive Officer and President", or
    "the Company's Chief Financial Officer, Andre Schulten," (a 10-Q's Item 4)."""
    text = chunk.content
    if "Officer" not in text:
        return
    for pattern in (_NAME_AGE_TITLE, _TITLE_APPOSITION):
        for m in pattern.finditer(text):
            name, title = m.group("name"), re.sub(r"\s+", " ", m.group("title")).strip(" ,")
            if _OTHER_EMPLOYER.search(title):
                continue  # a director's own employer, not the filer's title
            yield _officer(name, title, chunk, _evidence(text, m.start(), m.end(), pad=0))


def officer_list_rule(chunk: ChunkText) -> Iterator[Triple]:
    """The list of executive officers (Item 1 or 4): table rows "Corie S. Barry|47|Chief
    Executive Officer", or a sub-heading "Wendell P. Weeks Chairman and Chief Executive
    Officer"."""
    heads = " ".join(chunk.section_path)
    if chunk.kind == "table" and re.search(r"executive officers", heads, re.IGNORECASE):
        for line in chunk.content.splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) >= 2 and _PERSON.match(cells[0]):
                title = next((c for c in cells[1:] if re.search(_TITLE, c)), None)
                if title:
                    yield _officer(cells[0], title, chunk, f"{cells[0]}, {title}")
    for heading in chunk.section_path[-1:]:
        m = _NAME_AND_TITLE.match(heading.strip())
        if m and not _OTHER_EMPLOYER.search(m.group("title")):  # a director's own employer
            name, title = m.group("name"), m.group("title")
            yield _officer(name, title, chunk, f"{name}, {title}")


def is_officer_heading(heading: str) -> bool:
    """ "Information about our Executive Officers", or "Wendell P. Weeks Chairman and Chief
    Executive Officer": a section of officers' biographies."""
    heading = heading.strip()
    return bool(re.search(r"executive officers", heading, re.IGNORECASE)) or bool(
        _NAME_AND_TITLE.match(heading)
    )


def _person_name(raw: str) -> str:
    """ "CORIE BARRY Corie Barry" -> "Corie Barry": the name once, in its mixed-case form."""
    words = raw.replace("|", " ").split()
    half = len(words) // 2
    if len(words) % 2 == 0 and [w.lower() for w in words[:half]] == [
        w.lower() for w in words[half:]
    ]:
        words = words[half:]
    return " ".join(w if any(c.islower() for c in w) else w.capitalize() for w in words)


def _officer_aliases(title: str) -> tuple[str, ...]:
    found = []
    for words, short in (
        ("chief executive officer", "ceo"),
        ("chief financial officer", "cfo"),
        ("chief accounting officer", "cao"),
        ("chief operating officer", "coo"),
    ):
        if words in title.lower():
            found.append(short)
    return tuple(found)


def executive_rule(chunk: ChunkText) -> Iterator[Triple]:
    """A signature with a title: officers (has_executive) and directors (has_director)."""
    if not _SIGNATURE_MARK.search(chunk.content):
        return
    text = _SMALL_CAPS.sub(r"\1", _SIGNATURE_MARK.sub("/s/", chunk.content))
    for m in _SIGNED.finditer(text):
        cells = [c.strip() for c in m.group("who").split("|") if normalize_name(c)]
        if len({normalize_name(c) for c in cells}) > 1:
            continue  # a cell past the name ("Craig|Capacity ..."): a table read by columns
        name = _person_name(" ".join(cells))
        if re.search(r"LLP|L\.L\.P\.", name) or not 2 <= len(name.split()) <= 4:
            continue  # an audit firm's signature, or not a name
        title = re.split(r"\s*(?:\||Date:|/s/|\d)", m.group("title"))[0].strip(" ,")
        title = re.sub(r"\b(Director)(?:\s+Director\b)+", r"\1", title)  # a column read as text
        yield _officer(name, title, chunk, f"{name}, {title}")


# --- subsidiaries and places ---------------------------------------------------------------

_ENTITY_SUFFIX = (
    r"(?:Inc\.?|Incorporated|LLC|L\.L\.C\.|Ltd\.?|Limited|Corporation|Corp\.?|Company|Co\.|"
    r"B\.V\.|GmbH|S\.A\.|S\.A\. de C\.V\.|S\.?r\.?l\.|plc|PLC|LP|L\.P\.|AG|N\.V\.|"
    r"Pty\.? Ltd\.?|ULC)"
)
_ORGANIZED = re.compile(
    rf"(?P<name>(?:[A-Z(][\w&.'()-]*,?\s+){{1,8}}?{_ENTITY_SUFFIX}),?\s+"
    r"(?:an?\s+[\w ]{1,40}?\s+)?"
    r"(?:organized|incorporated|formed|existing) under the laws of (?:the\s+)?"
    r"(?:State of\s+|Province of\s+|Republic of\s+)?(?P<place>[A-Z][A-Za-z .]{1,40}?)"
    r"(?=[,.;)]|\s+(?:and|on|in|with)\b)"
)
_INCORPORATED = re.compile(
    r"(?:was|is)\s+incorporated\s+in\s+(?:the\s+)?(?:State of\s+|state of\s+)?"
    r"(?P<place>[A-Z][A-Za-z]+(?: [A-Z][a-z]+)?)"
)
_SUBSIDIARY_TABLE = re.compile(
    r"subsidiaries of (?:the )?(?:registrant|company)|exhibit 21|jurisdiction of "
    r"(?:incorporation|organization)|state or other jurisdiction",
    re.IGNORECASE,
)
_SUBSIDIARY_NAME = re.compile(rf"^[A-Z][A-Za-z0-9&.,' ()-]{{1,100}}{_ENTITY_SUFFIX}$")


def subsidiary_rule(chunk: ChunkText) -> Iterator[Triple]:
    """Exhibit 21 rows (name | jurisdiction) and "X Ltd., organized under the laws of Y"."""
    text = chunk.content
    heads = " ".join(chunk.section_path)
    if _SUBSIDIARY_TABLE.search(text) or _SUBSIDIARY_TABLE.search(heads):
        for line in text.splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) < 2 or not _SUBSIDIARY_NAME.match(cells[0]):
                continue
            place = next((c for c in cells[1:] if re.fullmatch(r"[A-Z][A-Za-z .]{1,40}", c)), None)
            name = _clean(cells[0])
            yield Triple(HAS_SUBSIDIARY, "subsidiary", name, chunk.id, chunk.page, line.strip())
            if place:
                yield Triple(
                    LOCATED_IN,
                    "place",
                    _clean(place),
                    chunk.id,
                    chunk.page,
                    line.strip(),
                    subject=("subsidiary", name),
                )
    if "under the laws of" in text:
        for m in _ORGANIZED.finditer(text):
            name, place = _clean(m.group("name")), _clean(m.group("place"))
            evidence = _evidence(text, m.start(), m.end(), pad=0)
            yield Triple(HAS_SUBSIDIARY, "subsidiary", name, chunk.id, chunk.page, evidence)
            yield Triple(
                LOCATED_IN,
                "place",
                place,
                chunk.id,
                chunk.page,
                evidence,
                subject=("subsidiary", name),
            )


def incorporation_rule(chunk: ChunkText) -> Iterator[Triple]:
    """Where the filer is incorporated: "Best Buy Co., Inc. was incorporated in Minnesota"."""
    text = chunk.content
    if "incorporated in" not in text:
        return
    for m in _INCORPORATED.finditer(text):
        place = _clean(m.group("place"))
        if place.lower() in {"the", "our", "fiscal"}:
            continue
        evidence = _evidence(text, m.start(), m.end())
        yield Triple(INCORPORATED_IN, "place", place, chunk.id, chunk.page, evidence)
        return  # the first statement is the filer's own


RULES = (  # product_rule, which carries a table over chunks, is called on its own
    auditor_rule,
    segment_rule,
    executive_rule,
    officer_list_rule,
    officer_prose_rule,
    subsidiary_rule,
    incorporation_rule,
)


def extract_graph(chunks: Iterable[ChunkText]) -> Graph:
    """Every rule over the first MAX_CHUNKS chunks, in order."""
    graph = Graph()
    seen: set[tuple] = set()  # a heading repeated over a section's chunks: its first chunk
    carry: dict = {}
    for chunk in chunks:
        if graph.chunks_read >= MAX_CHUNKS:
            break
        graph.chunks_read += 1
        found = [t for rule in RULES for t in rule(chunk)]
        found.extend(product_rule(chunk, carry))
        for t in found:
            key = (t.predicate, t.subject, t.object_name, t.evidence, chunk.section_path)
            if key not in seen:
                seen.add(key)
                graph.triples.append(t)
    return graph
