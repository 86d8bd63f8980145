"""Company, ticker, form, fiscal year and quarter: from the path, the content, or the user.

Each field records where it came from. Precedence: an explicit override, then what
the filing declares in machine-readable form (EDGAR's dei: facts), then the folder
layout and file name, then what the cover page text says.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

from finrag.db.company_names import former_names
from finrag.facts.calendar import Placement, from_dei
from finrag.facts.calendar import from_content as calendar_from_content
from finrag.facts.periods import FiscalCalendar
from finrag.ingest.parse import ParsedDocument
from finrag.ingest.parse.pdf import cover_text

FIELDS = ("company", "ticker", "form_type", "fiscal_year", "fiscal_quarter", "period_end")

_FORMS = {
    "10K": "10-K",
    "10-K": "10-K",
    "10Q": "10-Q",
    "10-Q": "10-Q",
    "8K": "8-K",
    "8-K": "8-K",
    "20F": "20-F",
    "20-F": "20-F",
    "40F": "40-F",
    "40-F": "40-F",
    "6K": "6-K",
    "6-K": "6-K",
    "EARNINGS": "EARNINGS",
    "ANNUAL": "ANNUAL REPORT",
    "ANNUALREPORT": "ANNUAL REPORT",
    "10-K405": "10-K",
    "10-KT": "10-K",
    "10-K/A": "10-K",
    "10-Q/A": "10-Q",
}
_FORM_TOKEN = r"(10-?K|10-?Q|8-?K|20-?F|40-?F|6-?K|EARNINGS|ANNUAL(?:REPORT)?)"  # noqa: S105  (a regex, not a password)
# COMPANY_2023Q2_10Q.pdf, COMPANY_2022_10K.pdf, COMPANY_2023_8K_dated-2023-05-30.pdf
_FINANCEBENCH = re.compile(
    rf"^(?P<company>.+?)_(?P<year>(?:19|20)\d\d)(?:Q(?P<quarter>[1-4]))?_(?P<form>{_FORM_TOKEN})"
    r"(?:_dated-(?P<dated>\d{4}-\d\d-\d\d))?$",
    re.I,
)
# aapl-10-k-2024-11-01.html (EDGAR's own names: ticker, form, filing date)
_EDGAR = re.compile(
    rf"^(?P<ticker>[a-z]{{1,5}})-(?P<form>{_FORM_TOKEN})-(?P<dated>\d{{4}}-\d\d-\d\d)$", re.I
)
# 10Q-Q2-2023.pdf, 10K_2022.pdf
_FORM_FILE = re.compile(
    rf"^(?P<form>{_FORM_TOKEN})(?:[-_ ]?Q(?P<quarter>[1-4]))?[-_ ]?(?P<year>(?:19|20)\d\d)$", re.I
)
_YEAR_ONLY = re.compile(r"^(?:FY)?(?P<year>(?:19|20)\d\d)(?:[-_ ]?Q(?P<quarter>[1-4]))?$", re.I)
_TICKER_DIR = re.compile(r"^[A-Z]{1,5}$")
_FORMISH_DIR = re.compile(rf"^{_FORM_TOKEN}(?:[-_ ]{_FORM_TOKEN})*$", re.I)

_COVER_FORM = re.compile(r"\bFORM\s+(10-K|10-Q|8-K|20-F|40-F)\b", re.I)
_COVER_PERIOD = re.compile(
    r"for the (fiscal year|quarterly period|year) ended:?\s+([A-Z][a-z]+\.?\s+\d{1,2}\s*,\s*\d{4})",
    re.I,
)
# The cover is read from the first two pages, and from no more than this many characters
# of them: the longest cover seen (IBM's 10-K) runs 7,500 and every field sits in its first
# 1,500. A page without breaks (a one-line text file) would otherwise be read whole.
_COVER_MAX_CHARS = 16_000
_COVER_REGISTRANT_CAPTION = re.compile(
    r"\(\s*Exact name of registrant as specified in its charter", re.I
)
# The name, then up to 40 characters, on the caption's line or the one above. Tried only on
# the characters just before the caption: searched over a whole cover it backtracks
# 120 x 40 ways at every position (5 s on a 400 KB line without the caption).
_COVER_REGISTRANT = re.compile(r"([^\n]{2,120}?)\s*\n?[^\n]{0,40}\Z")
_REGISTRANT_LOOKBACK = 1_000


_COVER_TICKER = re.compile(r"Trading\s+Symbol(?:\(s\))?\s+([A-Z]{1,5}(?:\.[A-Z])?)\b(?![a-z])")
# The securities table of a PDF cover: "Trading Symbol(s)" heads a column whose first row
# holds the common stock's symbol (3M, PepsiCo, AmEx, Costco); read as plain text
# (Corning), the symbol stands right before the exchange's name.
_SYMBOL_HEADER = re.compile(r"Trading\s+Symbols?(?:\(s\))?", re.I)
_SYMBOL = re.compile(r"[A-Z]{1,5}(?:\.[A-Z])?")
_SYMBOL_BEFORE_EXCHANGE = re.compile(
    r"(?i:Trading\s+Symbols?(?:\(s\))?\s+Name\s+of\s+each\s+exchange\s+on\s+which\s+registered)\s+"
    r"[^\n]{0,200}?\b([A-Z]{1,5}(?:\.[A-Z])?)\s+(?:The\s+)?(?:New\s+York\s+Stock\s+Exchange|"
    r"Nasdaq|NASDAQ|NYSE)"
)
_COVER_NAME_LINE = re.compile(r"^[A-Z0-9][A-Z0-9&.,'’\- ]{1,80}$")
_LEGAL_SUFFIX = re.compile(
    r"\b(COMPANY|INC|INCORPORATED|CORP|CORPORATION|CO|LTD|LIMITED|PLC|GROUP|HOLDINGS|N\.V|"
    r"S\.A|AG|SE|LLC|L\.P)\b\.?"
)


@dataclass
class DocumentMetadata:
    company: str | None = None
    ticker: str | None = None
    form_type: str | None = None
    fiscal_year: int | None = None
    fiscal_quarter: int | None = None
    period_end: date | None = None
    sources: dict[str, str] = field(default_factory=dict)  # field -> path|declared|content|override
    company_aliases: list[str] = field(default_factory=list)  # every name seen for the company
    former_names: list[str] = field(default_factory=list)  # names the filing says it had
    calendar: FiscalCalendar | None = None  # the fiscal calendar the filing states
    conflicts: list[str] = field(default_factory=list)  # the file name against the content


def _form(token: str | None) -> str | None:
    if not token:
        return None
    return _FORMS.get(token.upper().replace(" ", ""), token.upper())


def from_path(path: Path, root: Path) -> dict[str, object]:
    """What the file name and the folders between ``root`` and it say."""
    out: dict[str, object] = {}
    stem = path.stem
    if m := _FINANCEBENCH.match(stem):
        out["company"] = m["company"].replace("_", " ")
        out["fiscal_year"] = int(m["year"])
        if m["quarter"]:
            out["fiscal_quarter"] = int(m["quarter"])
        out["form_type"] = _form(m["form"])
    elif m := _EDGAR.match(stem):
        out["ticker"] = m["ticker"].upper()
        out["form_type"] = _form(m["form"])
    elif m := _FORM_FILE.match(stem):
        out["form_type"] = _form(m["form"])
        out["fiscal_year"] = int(m["year"])
        if m["quarter"]:
            out["fiscal_quarter"] = int(m["quarter"])
    elif m := _YEAR_ONLY.match(stem):
        out["fiscal_year"] = int(m["year"])
        if m["quarter"]:
            out["fiscal_quarter"] = int(m["quarter"])
    try:
        folders = list(path.parent.relative_to(root).parts)
    except ValueError:
        folders = []
    names_no_company = _FORM_FILE.match(stem) or _YEAR_ONLY.match(stem)
    if not folders and names_no_company:
        folders = [root.name]  # `finrag ingest AAPL/2023.pdf`: the folder names the company
    for folder in reversed(folders):
        if (m := _YEAR_ONLY.match(folder)) and "fiscal_year" not in out:
            out["fiscal_year"] = int(m["year"])
        elif _FORMISH_DIR.match(folder) or _YEAR_ONLY.match(folder):
            continue
        elif "company" not in out and "ticker" not in out:
            if _TICKER_DIR.match(folder):
                out["ticker"] = folder
            else:
                out["company"] = folder.replace("_", " ")
    return out


def _parse_date(text: str) -> date | None:
    cleaned = re.sub(r"\s*,\s*", ", ", re.sub(r"\s+", " ", text.replace(".", ""))).strip()
    for fmt in ("%B %d, %Y", "%b %d, %Y"):
        try:
            return datetime.strptime(cleaned, fmt).date()
        except ValueError:
            continue
    return None


def from_declared(declared: dict[str, str]) -> dict[str, object]:
    """EDGAR dei: facts (inline XBRL cover page)."""
    out: dict[str, object] = {}
    if name := declared.get("EntityRegistrantName"):
        out["company"] = name
    symbol = declared.get("TradingSymbol", "")
    if re.fullmatch(r"[A-Za-z.]{1,6}", symbol):
        out["ticker"] = symbol.upper()
    if form := declared.get("DocumentType"):
        out["form_type"] = _form(form)
    if (year := declared.get("DocumentFiscalYearFocus", "")).isdigit():
        out["fiscal_year"] = int(year)
    period = declared.get("DocumentFiscalPeriodFocus", "").upper()
    if period in ("Q1", "Q2", "Q3", "Q4"):
        out["fiscal_quarter"] = int(period[1])
    if parsed := _parse_date(declared.get("DocumentPeriodEndDate", "")):
        out["period_end"] = parsed
    return out


def from_content(parsed: ParsedDocument) -> dict[str, object]:
    """What the cover page says, in words (PDFs have no machine-readable facts)."""
    raw = "\n".join(p.markdown for p in parsed.pages[:2])[:_COVER_MAX_CHARS]
    cover = re.sub(r"[#*|]", " ", raw)
    out: dict[str, object] = {}
    if m := _COVER_FORM.search(cover):
        out["form_type"] = _form(m[1])
    if (m := _COVER_PERIOD.search(cover)) and (end := _parse_date(m[2])):
        out["period_end"] = end
    if (caption := _COVER_REGISTRANT_CAPTION.search(cover)) and (
        m := _COVER_REGISTRANT.search(
            cover[max(0, caption.start() - _REGISTRANT_LOOKBACK) : caption.start()]
        )
    ):
        name = re.sub(r"\s+", " ", m[1]).strip(" ,:")
        if 1 < len(name) < 100 and not re.search(r"commission file|\d{3}-\d{5}", name, re.I):
            out["company"] = name
    if ticker := _cover_ticker(raw, cover):
        out["ticker"] = ticker
    if "company" not in out:
        # Covers without the "(Exact name of registrant...)" caption: the first line in
        # capitals that carries a legal suffix, e.g. "3M COMPANY", "PFIZER INC."
        for line in cover.splitlines():
            candidate = line.strip(" \t")
            if _COVER_NAME_LINE.match(candidate) and _LEGAL_SUFFIX.search(candidate):
                out["company"] = re.sub(r"\s+", " ", candidate).strip(" ,:")
                break
    return out


def _cover_ticker(raw: str, cover: str) -> str | None:
    """The common stock's trading symbol on the cover (``raw``: its Markdown, ``cover``:
    the same without table and heading marks)."""
    if m := _COVER_TICKER.search(cover):
        return m[1]
    lines = raw.splitlines()
    for i, line in enumerate(lines):
        if not (line.lstrip().startswith("|") and _SYMBOL_HEADER.search(line)):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        column = next(j for j, c in enumerate(cells) if _SYMBOL_HEADER.search(c))
        for row in lines[i + 1 : i + 6]:
            values = [c.strip() for c in row.strip().strip("|").split("|")]
            if column < len(values) and _SYMBOL.fullmatch(values[column]):
                return values[column]
        break
    if m := _SYMBOL_BEFORE_EXCHANGE.search(cover):
        return m[1]
    return None


_NAME_ORDER = ("override", "declared", "filing", "content", "path")
_PERIOD_FIELDS = ("form_type", "fiscal_year", "fiscal_quarter", "period_end")


def _placement(
    parsed: ParsedDocument, layers: list[tuple[str, dict[str, object]]], path: Path
) -> Placement | None:
    """The filing's fiscal calendar and its own period on it: declared (inline XBRL), or
    read from its cover and statements; the file name or an override only as a hint."""
    if parsed.declared.get("DocumentType") or parsed.declared.get("DocumentFiscalYearFocus"):
        return from_dei(parsed.declared)
    given = dict(layers)
    hints = {**given["path"], **given["override"]}
    cover = "\n".join(p.markdown for p in parsed.pages[:2])[:_COVER_MAX_CHARS]
    if path.suffix.lower() == ".pdf" and not _COVER_PERIOD.search(" ".join(cover.split())):
        # The layout reader dropped the cover's period line: the text layer has it.
        cover = (cover + "\n" + cover_text(path))[: 2 * _COVER_MAX_CHARS]
    text = "\n".join(p.markdown for p in parsed.pages)
    year, quarter = hints.get("fiscal_year"), hints.get("fiscal_quarter")
    return calendar_from_content(
        re.sub(r"[#*|]", " ", cover),
        re.sub(r"[#*|]", " ", text),
        form=str(given["content"].get("form_type") or hints.get("form_type") or ""),
        hint_year=year if isinstance(year, int) else None,
        hint_quarter=quarter if isinstance(quarter, int) else None,
    )


def _period_fields(
    placement: Placement, layers: list[tuple[str, dict[str, object]]]
) -> dict[str, object]:
    out: dict[str, object] = {"fiscal_year": placement.fiscal_year}
    if placement.period_end:
        out["period_end"] = placement.period_end
    quarter = placement.fiscal_quarter
    out["fiscal_quarter"] = quarter if quarter and quarter < 4 else None
    form = dict(layers)["content"].get("form_type")
    if form:
        out["form_type"] = form
    return out


def _conflicts(layers: list[tuple[str, dict[str, object]]]) -> list[str]:
    """Where the file name says one period or form and the filing another."""
    given = dict(layers)
    path = given["path"]
    said = given.get("declared") or {}
    filing = {**given.get("filing", {}), **{k: v for k, v in said.items() if k in _PERIOD_FIELDS}}
    found = []
    for name in ("form_type", "fiscal_year", "fiscal_quarter"):
        if name in path and filing.get(name) is not None and path[name] != filing[name]:
            found.append(
                f"{name.replace('_', ' ')}: the file name says {_shown(name, path[name])}, "
                f"the filing {_shown(name, filing[name])}"
            )
    annual = filing.get("fiscal_year") and filing.get("fiscal_quarter") is None
    if "fiscal_quarter" in path and annual and "fiscal_quarter" in filing:
        found.append(
            f"fiscal quarter: the file name says Q{path['fiscal_quarter']}, "
            "the filing is an annual report"
        )
    return found


def _shown(name: str, value: object) -> str:
    return {"fiscal_year": f"FY{value}", "fiscal_quarter": f"Q{value}"}.get(name, str(value))


def _reorder(layers: list[tuple[str, dict[str, object]]]) -> list[tuple[str, dict[str, object]]]:
    rank = {source: i for i, source in enumerate(_NAME_ORDER)}
    return sorted(layers, key=lambda layer: rank[layer[0]])


def resolve_metadata(
    path: Path, root: Path, parsed: ParsedDocument, overrides: dict[str, object] | None = None
) -> DocumentMetadata:
    layers = [
        ("override", {k: v for k, v in (overrides or {}).items() if v is not None}),
        ("declared", from_declared(parsed.declared)),
        ("path", from_path(path, root)),
        ("content", from_content(parsed)),
    ]
    placement = _placement(parsed, layers, path)
    if placement is not None and placement.placed and placement.calendar.source != "path":
        # What the filing itself says of its period (its dei facts, or its cover and
        # statements read on its own calendar) beats the file name, which is a hint.
        periods = _period_fields(placement, layers)
        layers.insert(1, ("filing", periods))
    meta = DocumentMetadata()
    meta.calendar = placement.calendar if placement else None
    meta.conflicts = _conflicts(layers)
    for name in FIELDS:
        # A registrant name read from the cover beats a file name ("BESTBUY") for display;
        # for periods the file name the user chose beats our reading of the text.
        for source, values in _reorder(layers) if name == "company" else layers:
            if name in values:
                setattr(meta, name, values[name])
                meta.sources[name] = source
                break
    meta.company_aliases = list(
        dict.fromkeys(
            v["company"] for _, v in _reorder(layers) if isinstance(v.get("company"), str)
        )
    )
    if meta.company is not None:
        # Former names join the aliases: a filing under the old name is the same company.
        text = "\n".join(p.markdown for p in parsed.pages)
        meta.former_names = former_names(text, meta.company)
        meta.company_aliases += [n for n in meta.former_names if n not in meta.company_aliases]
    if meta.company is None and meta.ticker is not None:
        meta.company, meta.sources["company"] = meta.ticker, meta.sources["ticker"]
    return meta
