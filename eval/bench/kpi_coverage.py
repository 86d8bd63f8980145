"""How many KPIs compute from the facts store, per company, and how long a full table takes.

    FINRAG_HOME=/tmp/kpi-home FINRAG_EMBED__BACKEND=hash \\
        python eval/bench/kpi_coverage.py [DIR]   (default: ../shared/edgar-html)

Ingests DIR's filings into the configured store (unchanged files are skipped), then for
each company: the fiscal years and quarters the store holds (``available_periods``), how
many of the KPIs in kpis.toml compute for at least one of them, for the latest year and
for the latest quarter, the inputs most often missing, and the time of ``kpi_table`` over
every KPI x every period: the first run (row-to-metric caches cold) and the median of 3,
each with a fresh resolver.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections import Counter
from pathlib import Path

from finrag.config import load_settings
from finrag.db import open_store
from finrag.facts.kpi import KpiGap, KpiValue, available_periods, kpi_table, kpis
from finrag.ingest.pipeline import ingest

REPO = Path(__file__).resolve().parents[2]


def main(folder: Path) -> None:
    settings = load_settings(ingest={"workers": 0})
    every = kpis()
    with open_store(settings) as store:
        report = ingest(sorted(folder.glob("*.htm*")), settings, store)
        print(f"filings: {len(report.results)} ({Counter(r.status for r in report.results)})")
        with store.connect() as conn:
            companies = conn.execute(
                "SELECT DISTINCT c.id, c.name FROM companies c JOIN documents d "
                "ON d.company_id = c.id ORDER BY c.name"
            ).fetchall()
            print(f"KPIs defined: {len(every)}\n")
            print(
                f"{'company':45} {'years':>5} {'qtrs':>4} {'any':>4} {'last FY':>8} "
                f"{'last Q':>7} {'cells':>9} {'ms 1st':>7} {'median':>6}"
            )
            missing: Counter[str] = Counter()
            for company_id, name in companies:
                years = available_periods(conn, company_id)
                quarters = available_periods(conn, company_id, quarterly=True)
                periods = years + [q for q in quarters if q.fiscal_quarter != 4]
                timings = []
                for _ in range(3):
                    start = time.perf_counter()
                    table = kpi_table(conn, company_id, every, periods)
                    timings.append(time.perf_counter() - start)
                values = [row for row in table if isinstance(row, KpiValue)]
                for row in table:
                    if isinstance(row, KpiGap):
                        missing.update({u.metric for u in row.unresolved})
                last_year = years[-1].label if years else None
                last_quarter = next(
                    (q.label for q in reversed(quarters) if q.fiscal_quarter != 4), None
                )
                print(
                    f"{name[:45]:45} {len(years):5} {len(periods) - len(years):4} "
                    f"{len({v.name for v in values}):4} "
                    f"{_count(values, last_year):>8} {_count(values, last_quarter):>7} "
                    f"{len(values):4}/{len(table):<4} {timings[0] * 1000:7.0f} "
                    f"{statistics.median(timings) * 1000:6.0f}"
                )
            print("\ninputs most often unresolved (KPI-period cells):")
            for metric_name, count in missing.most_common(10):
                print(f"  {metric_name:40} {count}")


def _count(values: list[KpiValue], period: str | None) -> str:
    return "-" if period is None else str(sum(v.period == period for v in values))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else REPO.parent / "shared" / "edgar-html")
