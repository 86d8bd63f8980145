"""The words a question ranks rows with: superlatives, growth and decline, the kind of
breakdown (segments, regions), and the words that ask for reasons instead (general
English and finance usage). Shared by the facts route's segments and the printed-table
ranking."""

import re

SEGMENT_WORDS = re.compile(r"\bsegments?\b|\bbusiness(?:es| units?)\b|\blines? of business\b")

REGION_WORDS = re.compile(r"\bregions?\b|\bregional\b|\bgeograph\w*\b|\bcountr(?:y|ies)\b")

# "topline performance", "performed the best", "dragged down growth": growth compared.
GROWTH = re.compile(
    r"\b(?:gr[eo]w\w*|growth|fastest|faster|slowest|slower|increase\w*|perform\w*|"
    r"dragg?\w*)\b"
)

LARGEST = re.compile(r"\b(?:largest|biggest|highest|most|top)\b")

SMALLEST = re.compile(r"\b(?:smallest|lowest|least)\b")

SLOWEST = re.compile(r"\b(?:slowest|slower|least|worst|weakest|poorest|dragg?\w*)\b")

# "fell faster", "declined the most": the race is to the bottom, the lower rate wins.
DECLINE = re.compile(r"\b(?:f[ae]ll\w*|declin\w*|drop\w*|shr[iu]nk\w*|decreas\w*)\b")

NARRATIVE = re.compile(
    r"\b(?:why|drove|drivers?|explain\w*|discuss\w*|describ\w*|comment\w*|say|said|says|"
    r"outlook|guidance|risks?)\b"
)

# Members that are no segment, region or product of their own (a product/service split,
# consolidation lines): they never stand for a name the question gives.
GENERIC_MEMBERS = frozenset(
    {
        *("product", "products", "operating", "segment", "segments"),
        *("corporate", "total", "other", "all", "consolidated", "reportable", "elimination"),
        *("eliminations", "intersegment", "unallocated"),
    }
)
_RECONCILING = frozenset({"corporate", "unallocated", "elimination", "eliminations"})


def generic_member(name: str) -> bool:
    words = set(re.sub(r"[^\w\s]", " ", name.lower()).split()) - {"and", "of", "the"}
    # A printed reconciliation line: "Corporate and Unallocated", "Elimination of Dual
    # Credit", "Corporate & Other" are no segment that could rank.
    return words <= GENERIC_MEMBERS or bool(words & _RECONCILING)
