"""KPI definitions: ``kpis.toml`` beside this module, validated once as a whole (every
name a formula uses is a metric or a KPI, no cycles, each name or alias said once, by
one KPI and no metric), and what users type resolved to a KPI."""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from rapidfuzz import fuzz, process

from finrag.errors import UsageError
from finrag.facts.dictionary import metrics, name_key
from finrag.facts.kpi_formula import DAYS, FUNCTIONS, FormulaError, formula_names

Unit = Literal["percent", "ratio", "times", "days", "money"]


class Kpi(BaseModel):
    """One KPI: what it is called, what it means, and how it is computed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$", description="Stable id.")
    display: str = Field(min_length=1, description="How a person reads it.")
    aliases: tuple[str, ...] = Field(default=(), description="What users type.")
    unit: Unit
    definition: str = Field(min_length=1, description="The definition written out.")
    formulas: tuple[str, ...] = Field(min_length=1, description="Alternatives, preferred first.")
    needs: str | None = Field(default=None, description="What a filing must print for it.")
    completes: str | None = Field(
        default=None,
        description="A line item this KPI is the same measure as, computed from its parts "
        "where the filing prints no total (gross_debt completes total_debt).",
    )


class KpiFile(BaseModel):
    """The whole file, checked as one: names known, no cycles, every name said once."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kpi: tuple[Kpi, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> KpiFile:
        faults: list[str] = []
        known_metrics = {item.name for item in metrics()}
        by_name = {item.name: item for item in self.kpi}
        uses: dict[str, set[str]] = {}
        for item in self.kpi:
            uses[item.name] = set()
            if item.completes is not None and item.completes not in known_metrics:
                faults.append(f"{item.name}: completes {item.completes!r}, which is no metric")
            for formula in item.formulas:
                try:
                    names = formula_names(formula)
                except FormulaError as exc:
                    faults.append(f"{item.name}: formula {formula!r}: {exc}")
                    continue
                for name in names:
                    if name in by_name:
                        uses[item.name].add(name)
                    elif name not in known_metrics:
                        faults.append(
                            f"{item.name}: formula {formula!r} uses unknown name {name!r}"
                        )
        faults += _cycles(uses)
        faults += _names_said_twice(self.kpi)
        if faults:
            raise ValueError("; ".join(faults))
        return self


def _cycles(uses: dict[str, set[str]]) -> list[str]:
    faults: list[str] = []
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        if name in path:
            loop = [*path[path.index(name) :], name]
            faults.append(f"{loop[0]}: formulas refer to each other: {' -> '.join(loop)}")
            return
        if name in done:
            return
        for used in sorted(uses.get(name, ())):
            visit(used, [*path, name])
        done.add(name)

    for name in uses:
        visit(name, [])
    return faults


def _names_said_twice(kpis: Sequence[Kpi]) -> list[str]:
    faults: list[str] = []
    seen: dict[str, str] = {}
    for item in metrics():
        for word in (item.name, item.display, *item.aliases):
            seen.setdefault(name_key(word), f"metric {item.name}")
    for word in (DAYS, *FUNCTIONS):
        seen[word] = "the formula language"
    for item in kpis:
        own = {name_key(word) for word in (item.name, item.display, *item.aliases)}
        for key in sorted(own):
            holder = seen.get(key)
            if holder is not None:
                faults.append(f"{item.name}: name or alias {key!r} is already {holder}'s")
            else:
                seen[key] = f"KPI {item.name}"
    return faults


def load_kpis(text: str) -> KpiFile:
    """Parse and validate KPI TOML; raises tomllib or pydantic errors naming the entry."""
    return KpiFile.model_validate(tomllib.loads(text))


@cache
def _definitions() -> tuple[tuple[Kpi, ...], dict[str, Kpi]]:
    text = resources.files("finrag.facts").joinpath("kpis.toml").read_text(encoding="utf-8")
    items = load_kpis(text).kpi
    words = {name_key(w): k for k in items for w in (k.name, k.display, *k.aliases)}
    return items, words


def kpis() -> list[Kpi]:
    """Every KPI, in the file's order."""
    return list(_definitions()[0])


def find_kpi(text_key: str) -> Kpi | None:
    """The KPI whose name, display name or alias this is ("GM%", "dpo"); None if none."""
    return _definitions()[1].get(name_key(text_key))


def kpi(name_or_alias: str) -> Kpi:
    """The KPI a user means, or UsageError naming close matches."""
    found = find_kpi(name_or_alias)
    if found is not None:
        return found
    words = _definitions()[1]
    close = process.extract(
        name_key(name_or_alias), list(words), scorer=fuzz.ratio, limit=8, score_cutoff=70
    )
    names = list(dict.fromkeys(words[choice].name for choice, _, _ in close))[:3]
    raise UsageError(
        f"no KPI {name_or_alias!r}",
        hint=(f"did you mean {', '.join(names)}? " if names else "")
        + "every KPI and its aliases is in finrag/facts/kpis.toml",
    )
