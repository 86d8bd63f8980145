"""`finrag facts --metric X --ttm | --quarterly`: derived periods as calculations, each
input cited to its filing and page, and each period that cannot be derived with the
input it lacks."""

from __future__ import annotations

import csv
import sys
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path

from finrag.cli.render import Column, print_json, print_table
from finrag.facts.derived import Derived, DerivedGap
from finrag.facts.dictionary import Metric


def derived_dict(
    company: str, chosen: Metric, found: Sequence[Derived | DerivedGap], *, ttm: bool
) -> dict:
    """What --json prints: each stated period with its inputs, and each gap."""
    return {
        "company": company,
        "metric": chosen.name,
        "display": chosen.display,
        "series": "trailing twelve months" if ttm else "quarters",
        "values": [d.as_dict() for d in found if isinstance(d, Derived)],
        "gaps": [d.as_dict() for d in found if isinstance(d, DerivedGap)],
    }


def show_derived(
    company: str,
    chosen: Metric,
    found: Sequence[Derived | DerivedGap],
    *,
    ttm: bool,
    as_json: bool,
    as_csv: bool = False,
) -> None:
    what = "trailing twelve months" if ttm else "quarters"
    if as_csv:
        _write_csv(company, chosen, found)
        return
    if as_json:
        print_json(derived_dict(company, chosen, found, ttm=ttm))
        return
    if not found:
        return  # the command says "nothing found" (exit 7)
    rows = []
    for d in found:
        if isinstance(d, DerivedGap):
            rows.append([d.period, "", d.formula, f"not stated: {d.detail}"])
            continue
        terms = " ".join(
            f"{'' if n == 0 else ('+ ' if i.sign > 0 else '- ')}{_millions(i.value.value)}"
            for n, i in enumerate(d.inputs)
        )
        sources = "; ".join(
            f"{i.term}: {Path(i.value.fact.document).name} p.{i.value.fact.page} "
            f"({i.value.fact.label or i.value.fact.concept}: {i.value.fact.printed})"
            for i in d.inputs
        )
        shown = d.formula if d.kind == "reported" else f"{d.formula} = {terms}"
        rows.append([d.period, _millions(d.value), shown, sources])
    print_table(
        [
            Column("period", no_wrap=True),
            Column("value", justify="right", no_wrap=True),
            "calculation",
            "inputs from",
        ],
        rows,
        title=f"{company}: {chosen.display}, {what}",
        caption="USD in millions; a period an input is missing for is not stated",
    )


def _millions(value: Decimal) -> str:
    return f"{value / Decimal(1_000_000):,.2f}".rstrip("0").rstrip(".")


def _write_csv(company: str, chosen: Metric, found: Sequence[Derived | DerivedGap]) -> None:
    """One row an input (a stated period's calculation, input by input) or a gap."""
    writer = csv.writer(sys.stdout)
    writer.writerow(
        ["company", "metric", "period", "value", "formula", "term", "sign", "input_value",
         "document", "page", "printed", "not_stated"]
    )  # fmt: skip
    for d in found:
        if isinstance(d, DerivedGap):
            writer.writerow(
                [company, chosen.name, d.period, "", d.formula, "", "", "", "", "", "", d.detail]
            )
            continue
        for i in d.inputs:
            fact = i.value.fact
            writer.writerow(
                [company, chosen.name, d.period, d.value, d.formula, i.term,
                 "+" if i.sign > 0 else "-", i.value.value, Path(fact.document).name,
                 fact.page, fact.printed, ""]
            )  # fmt: skip
