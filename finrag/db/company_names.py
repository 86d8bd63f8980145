"""Company names as people write them: the aliases a registrant name and ticker imply,
the former names a filing states, and the curated nickname table.

Pure (no database), below both ingest and retrieve: ingest stores the aliases these
functions give, retrieval derives them again on the fly for stores ingested before.
Aliases are compared by :func:`alias_key` (lower case, no punctuation, no legal suffix,
no spaces), so "BEST BUY CO., INC.", "Best Buy" and the file-name form "BESTBUY" meet.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache, cached_property, lru_cache
from importlib import resources

_SUFFIXES = re.compile(
    r"\b(the|incorporated|inc|corporation|corp|company|co|ltd|limited|plc|llc|lp|sa|ag|nv|"
    r"holdings?|group)\b"
)
# Legal suffixes closing a registrant name, any number of them: "Best Buy Co., Inc.",
# "JPMorgan Chase & Co.", "Eli Lilly and Company", "UnitedHealth Group Incorporated".
_TRAILING_SUFFIXES = re.compile(
    r"(?:[\s,]+(?:(?:&|and)\s+)?(?:inc|incorporated|corp|corporation|company|co|ltd|limited|"
    r"plc|llc|l\.?p|s\.?a|ag|n\.?v|se|holdings?|group)\b\.?)+\s*$",
    re.I,
)


# A first word that names no one alone: "American Express" is not "American".
def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_GENERIC_FIRST_WORDS = _words(
    """
    american america national international united general first global new great royal
    standard universal advanced applied consolidated federal allied public best home north
    south east west northern southern eastern western pacific atlantic central texas
    california world us u.s
    """
)
# Words that describe a business rather than name it: after a distinctive first word they
# can be dropped ("Costco Wholesale" -> "Costco", "MGM Resorts International" -> "MGM").
_DESCRIPTORS = _words(
    """
    communications wholesale hospitality resorts international technologies technology
    systems platforms entertainment pharmaceuticals pharmaceutical pharma motors airlines
    air lines brands foods energy health healthcare industries services solutions software
    semiconductor semiconductors networks properties realty trust reit bancorp financial
    capital partners media labs laboratories therapeutics biosciences sciences scientific
    worldwide enterprises stores restaurants beverages materials chemical chemicals
    petroleum oil gas mobile wireless digital interactive devices electronics automotive
    aerospace mining metals steel logistics resources utilities power medical insurance
    investments beauty apparel retail
    """
)
# Words an initialism skips: "Bank of America" -> "BA" (too short), "Procter & Gamble" -> "PG".
_LINKING_WORDS = frozenset({"&", "and", "of", "the", "for", "n"})


def alias_key(name: str) -> str:
    """'BEST BUY CO., INC.' -> 'bestbuy'; '3M Company' -> '3m'; 'P & G' -> 'p&g'."""
    text = re.sub(r"[^\w\s&]", " ", name.lower().replace("’", "'").replace("'s", ""))
    stripped = _SUFFIXES.sub(" ", text)
    key = re.sub(r"[\s_]+", "", stripped) or re.sub(r"[\s_]+", "", text)
    return key


def base_name(name: str) -> str:
    """The name without a leading 'The' and its closing legal suffixes:
    'The Procter & Gamble Company' -> 'Procter & Gamble'."""
    text = re.sub(r"\s+", " ", name).strip(" ,;:")
    text = re.sub(r"^the\s+", "", text, flags=re.I)
    return _TRAILING_SUFFIXES.sub("", text).strip(" ,;:") or text


def initialisms(name: str) -> list[str]:
    """What analysts type for a multi-word name: 'International Business Machines' -> IBM;
    'Johnson & Johnson' -> J&J, JnJ (the bare 'JJ' is too short to trust)."""
    words = [w for w in re.split(r"[\s\-]+", base_name(name)) if w]
    significant = [w for w in words if w.lower() not in _LINKING_WORDS]
    if len(significant) < 2 or not all(w[0].isalnum() for w in significant):
        return []
    if any(_SUFFIXES.fullmatch(w.lower().strip(",.")) for w in significant):
        return []  # a legal suffix inside the name: a garbled cover ("NVIDIA CORP ORATION")
    letters = [w[0].upper() for w in significant]
    out = []
    joined = any(w.lower() in ("&", "and") for w in words)
    if joined and len(significant) == 2:
        out += [f"{letters[0]}&{letters[1]}", f"{letters[0]}n{letters[1]}"]
    if len(letters) >= 3 and not leading_words(name):
        out.append("".join(letters))
    return out


def leading_words(name: str) -> list[str]:
    """The distinctive first word of a name whose other words only describe the business:
    'Costco Wholesale Corporation' -> Costco, 'Amazon.com, Inc.' -> Amazon; none for
    'American Express Company' (generic) or 'Best Buy Co., Inc.' (both words name it)."""
    base = base_name(name)
    words = base.split()
    first = words[0] if words else ""
    if len(words) == 1 and re.fullmatch(r"[A-Za-z][\w&'-]*\.com", first, re.I):
        return [first[: -len(".com")]]
    if len(words) < 2 or first.lower().rstrip(",") in _GENERIC_FIRST_WORDS:
        return []
    if all(w.lower().strip(",.") in _DESCRIPTORS for w in words[1:]):
        return [first.rstrip(",")]
    return []


def needs_capital(key: str) -> bool:
    """A short or everyday alias ('ups', 'meta', 'block') names a company only when the
    question writes it with a capital: otherwise it is the plain word."""
    if "&" in key:
        return False  # "j&j", "p&g": nobody writes that by accident
    return (len(key) <= 4 and key.isalpha()) or key in _everyday_keys()


@dataclass(frozen=True)
class Issuer:
    """One entry of the nickname table (finrag/db/company_nicknames.toml)."""

    names: tuple[str, ...]
    tickers: tuple[str, ...] = ()
    everyday: tuple[str, ...] = ()

    @cached_property
    def keys(self) -> frozenset[str]:
        return frozenset(alias_key(n) for n in (*self.names, *self.tickers, *self.everyday))

    @property
    def aliases(self) -> tuple[str, ...]:
        return (*self.names, *self.tickers, *self.everyday)


def parse_issuers(text: str) -> tuple[Issuer, ...]:
    """Read the nickname table; a name claimed by two issuers is an error naming both."""
    issuers = tuple(
        Issuer(
            tuple(item["names"]),
            tuple(item.get("tickers", ())),
            tuple(item.get("everyday", ())),
        )
        for item in tomllib.loads(text)["issuer"]
    )
    owner: dict[str, str] = {}
    for issuer in issuers:
        for key in issuer.keys:
            if owner.setdefault(key, issuer.names[0]) != issuer.names[0]:
                raise ValueError(f"{key!r} is both {owner[key]}'s and {issuer.names[0]}'s")
    return issuers


@cache
def issuers() -> tuple[Issuer, ...]:
    text = resources.files("finrag.db").joinpath("company_nicknames.toml").read_text("utf-8")
    return parse_issuers(text)


@cache
def _everyday_keys() -> frozenset[str]:
    return frozenset(alias_key(w) for issuer in issuers() for w in issuer.everyday)


def issuers_named(keys: Iterable[str]) -> list[Issuer]:
    """The table's entries that these keys (a company's own names and ticker) name."""
    keys = set(keys)
    return [issuer for issuer in issuers() if issuer.keys & keys]


def company_aliases(names: Sequence[str], ticker: str | None) -> list[str]:
    """Every name a company goes by (see :func:`_company_aliases`)."""
    return list(_company_aliases(tuple(names), ticker))


@lru_cache(maxsize=4096)  # asked for every stored company at every question
def _company_aliases(names: tuple[str, ...], ticker: str | None) -> tuple[str, ...]:
    """Every name a company goes by, from its own names (registrant, file name, former
    names) and ticker: those, each without its legal suffixes, its initialisms and
    distinctive first word, and its entry in the nickname table. A derived form that is
    another table issuer's name is left out ('Apple Hospitality REIT' is not 'Apple')."""
    own = [n for n in names if n and n.strip()]
    own_keys = {alias_key(n) for n in own} | {alias_key(base_name(n)) for n in own}
    own_keys |= {ticker.lower()} if ticker else set()
    entries = issuers_named(own_keys)
    taken = {k for issuer in issuers() if issuer not in entries for k in issuer.keys}
    derived = [
        form
        for name in own
        for form in (base_name(name), *leading_words(name), *initialisms(name))
        if alias_key(form) not in taken
    ]
    found = [*own, *([ticker] if ticker else []), *derived]
    found += [alias for issuer in entries for alias in issuer.aliases]
    unique: dict[str, str] = {}
    for alias in found:
        if key := alias_key(alias):
            unique.setdefault(key, alias)
    return tuple(unique.values())


# A name as filings print it: capitalised words, with '&', 'of', 'and' between them and
# legal suffixes after a comma ("Square, Inc.", "Bank of New York Mellon").
_NAME = r"[A-Z][\w.&'’-]*(?:,?\s+(?:[A-Z][\w.&'’-]*|&|of|and)){0,6}"
_FORMERLY = re.compile(
    rf"\(?\s*(?:formerly(?:\s+known\s+as)?|f/k/a|fka)\s*,?\s+(?:the\s+)?(?P<former>{_NAME})"
)
_CHANGED_FROM = re.compile(
    r"changed\s+(?:its|our|the\s+Company['’]s)\s+(?:corporate\s+|legal\s+)?name\s+from\s+"
    rf"(?P<former>{_NAME})\s+to\s+(?P<new>{_NAME})"
)
_CHANGED_TO = re.compile(
    r"\s+changed\s+(?:its|our)\s+(?:corporate\s+|legal\s+)?name\s+to\s+"
    rf"(?P<new>{_NAME})"
)
_NAME_AT_END = re.compile(rf"(?:^|[^\w&.'’-])(?P<name>{_NAME})$")
# EDGAR covers: the line above "(Former name, former address and former fiscal year, if
# changed since last report)" holds the former name, or "N/A".
_COVER_FORMER_CAPTION = re.compile(r"\(\s*Former\s+name\b", re.I)
_NOT_A_NAME = re.compile(r"^(?:n/?a|none|not\s+applicable|same|unchanged)\.?$|\d", re.I)
_MIN_FORMER_KEY = 4  # "C-T-R" (IBM until 1924) would claim "CTR", a metric's name


def former_names(text: str, registrant: str) -> list[str]:
    """Names ``registrant`` went by before, as the filing states them: 'Block, Inc.
    (formerly known as Square, Inc.)', 'we changed our name from Facebook, Inc. to Meta
    Platforms, Inc.', the cover's former-name line. 'formerly known as' about anyone else
    (a trustee, a subsidiary, a plan) is not the registrant's and is left alone."""
    own = alias_key(registrant)
    if not own:
        return []
    found: list[str] = []
    for m in _FORMERLY.finditer(text):
        if _ends_with_name(text[max(0, m.start() - 160) : m.start()], own):
            found.append(m["former"])
    for m in _CHANGED_FROM.finditer(text):
        if alias_key(_clean(m["new"])) == own:
            found.append(m["former"])
    for m in _CHANGED_TO.finditer(text):  # "... when C-T-R changed its name to IBM"
        before = _NAME_AT_END.search(text[max(0, m.start() - 160) : m.start()])
        if before and alias_key(_clean(m["new"])) == own:
            found.append(before["name"])
    for m in _COVER_FORMER_CAPTION.finditer(text):
        lines = [
            _clean(re.sub(r"[#*|]", " ", line))
            for line in text[max(0, m.start() - 400) : m.start()].splitlines()
        ]
        candidate = next((line for line in reversed(lines[-4:]) if line), "")
        if candidate[:1].isupper() and not _NOT_A_NAME.search(candidate):
            found.append(candidate)
    unique: dict[str, str] = {}
    for name in map(_clean, found):
        key = alias_key(name)
        if len(key) >= _MIN_FORMER_KEY and key != own:
            unique.setdefault(key, name)
    return list(unique.values())


def _clean(name: str) -> str:
    name = re.sub(r"\s+", " ", name).strip(" ,;:()“”\"'")
    return re.sub(r"(?:[\s,]+(?:&|and|of))+$", "", name)  # "Allied-Signal Inc. and/or"


def _ends_with_name(before: str, key: str) -> bool:
    """Whether the text right before a 'formerly' ends with the company's name."""
    words = before.rstrip(" ,(").split()
    return any(alias_key(" ".join(words[-n:])) == key for n in range(1, min(8, len(words)) + 1))
