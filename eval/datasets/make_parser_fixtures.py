"""Write the parser fixtures in tests/fixtures/parsers/ with the parsers' own libraries.

**marker_paginated.md**, with marker-pdf's own Markdown renderer.

Marker's layout and OCR weights cannot be fetched on our machines, so the document is not
*built* by Marker here; what is real is the rendering: Marker's HTML renderer wraps each
page of a document in ``<div class='page' data-page-id='N'>`` (N: the PDF page index,
from 0) when ``paginate_output`` is on, and its ``MarkdownRenderer`` turns that HTML into
the Markdown `MarkerParser` reads back. This script feeds the renderer's converter (the
same Markdownify settings, clean-up and pagination fix-up as ``MarkdownRenderer.__call__``)
HTML in that form, holding pages 3 and 4 of the bundled Best Buy 10-Q, so the fixture has
exactly the page markers, escapes (``\\$``, ``\\_``) and tables Marker 2.0.0 writes.

**llamaparse_job.json**: what ``LlamaParse.get_json_result`` returns for a three-page
PDF, one job result per file, each with its ``job_id`` and ``file_path`` added (as
llama-cloud-services 0.6.94 does): pages numbered from 1 with their ``md``, ``text`` and
``items``; the third page a scan with no text (``noTextContent``). The service cannot be
reached from here, so the JSON is written to the API's shape and checked by parsing it
with the library's own ``JobResult`` model, which rejects a malformed result.

Run it in a venv with the extras: ``pip install 'finrag-cli[marker,llamaparse]'`` then
``python eval/datasets/make_parser_fixtures.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "parsers"

# Pages 3 and 4 of examples/BESTBUY_2024Q2_10Q.pdf (PDF indices 2 and 3), abridged, as
# Marker's HTML renderer lays out a page: headings, paragraphs, tables.
PAGES = {
    2: """
<h1>PART I — FINANCIAL INFORMATION</h1>
<h2>Item 1. Financial Statements</h2>
<p>Condensed Consolidated Balance Sheets</p>
<p>$ in millions, except per share amounts (unaudited)</p>
<table>
<tr><th></th><th>July 29, 2023</th><th>January 28, 2023</th><th>July 30, 2022</th></tr>
<tr><td>Cash and cash equivalents</td><td>$ 1,093</td><td>$ 1,874</td><td>$ 840</td></tr>
<tr><td>Receivables, net</td><td>856</td><td>1,141</td><td>840</td></tr>
<tr><td>Merchandise inventories</td><td>5,651</td><td>5,140</td><td>6,043</td></tr>
<tr><td>Total current assets</td><td>8,304</td><td>8,802</td><td>8,344</td></tr>
<tr><td>Total assets</td><td>$ 15,318</td><td>$ 15,803</td><td>$ 15,419</td></tr>
</table>
<p>NOTE: The Consolidated Balance Sheet as of January 28, 2023, has been condensed from
the audited consolidated financial statements (file BESTBUY_2023_10K).</p>
""",
    3: """
<h2>Condensed Consolidated Statements of Earnings</h2>
<p>$ and shares in millions, except per share amounts (unaudited)</p>
<table>
<tr><th></th><th colspan="2">Three Months Ended</th><th colspan="2">Six Months Ended</th></tr>
<tr><th></th><th>July 29, 2023</th><th>July 30, 2022</th>
<th>July 29, 2023</th><th>July 30, 2022</th></tr>
<tr><td>Revenue</td><td>$ 9,583</td><td>$ 10,329</td><td>$ 19,050</td><td>$ 20,976</td></tr>
<tr><td>Cost of sales</td><td>7,363</td><td>8,042</td><td>14,680</td><td>16,336</td></tr>
<tr><td>Gross profit</td><td>2,220</td><td>2,287</td><td>4,370</td><td>4,640</td></tr>
<tr><td>Operating income</td><td>348</td><td>371</td><td>659</td><td>833</td></tr>
<tr><td>Net earnings</td><td>$ 274</td><td>$ 306</td><td>$ 518</td><td>$ 647</td></tr>
</table>
<p>Revenue fell to $9,583 million in the quarter, and <i>comparable sales</i> declined 6.2%.</p>
""",
}


def marker_fixture() -> None:
    from marker.renderers.markdown import MarkdownRenderer, cleanup_text

    renderer = MarkdownRenderer({"paginate_output": True})
    html = "".join(
        f"<div class='page' data-page-id='{page_id}'>{body}</div>"
        for page_id, body in PAGES.items()
    )
    markdown = cleanup_text(renderer.md_cls.convert(html))
    # MarkdownRenderer.__call__'s own fix-up of the pagination markers
    if not markdown.startswith("\n\n"):
        markdown = "\n\n" + markdown
    if markdown.endswith(renderer.page_separator):
        markdown += "\n\n"
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "marker_paginated.md").write_text(markdown, encoding="utf-8")
    print(f"wrote {OUT / 'marker_paginated.md'} ({len(markdown)} characters)")


_EARNINGS_ROWS = [
    ["", "July 29, 2023", "July 30, 2022"],
    ["Revenue", "$ 9,583", "$ 10,329"],
    ["Cost of sales", "7,363", "8,042"],
    ["Gross profit", "2,220", "2,287"],
    ["Net earnings", "$ 274", "$ 306"],
]


def _pipe_table(rows: list[list[str]]) -> str:
    lines = ["|" + "|".join(rows[0]) + "|", "|" + "|".join("---" for _ in rows[0]) + "|"]
    return "\n".join(lines + ["|" + "|".join(r) + "|" for r in rows[1:]])


def llamaparse_fixture() -> None:
    from llama_cloud_services.parse.types import JobResult

    table = _pipe_table(_EARNINGS_ROWS)
    intro = "Condensed Consolidated Statements of Earnings"
    units = "$ in millions, except per share amounts (unaudited)"
    pages = [
        {
            "page": 1,
            "text": "UNITED STATES SECURITIES AND EXCHANGE COMMISSION\nFORM 10-Q\n"
            "BEST BUY CO., INC.\nFor the quarterly period ended July 29, 2023",
            "md": "# UNITED STATES SECURITIES AND EXCHANGE COMMISSION\n\n# FORM 10-Q\n\n"
            "BEST BUY CO., INC.\n\nFor the quarterly period ended July 29, 2023",
            "items": [
                {"type": "heading", "lvl": 1, "value": "FORM 10-Q", "md": "# FORM 10-Q"},
                {"type": "text", "value": "BEST BUY CO., INC.", "md": "BEST BUY CO., INC."},
            ],
            "status": "OK",
            "noTextContent": False,
            "width": 612.0,
            "height": 792.0,
        },
        {
            "page": 2,
            "text": f"{intro}\n{units}\n" + "\n".join("  ".join(r) for r in _EARNINGS_ROWS),
            "md": f"## {intro}\n\n{units}\n\n{table}\n\n"
            "Revenue fell to $9,583 million in the quarter.",
            "items": [
                {"type": "heading", "lvl": 2, "value": intro, "md": f"## {intro}"},
                {"type": "text", "value": units, "md": units},
                {"type": "table", "rows": _EARNINGS_ROWS, "md": table, "isPerfectTable": True},
            ],
            "status": "OK",
            "noTextContent": False,
            "width": 612.0,
            "height": 792.0,
        },
        {
            "page": 3,
            "text": "",
            "md": "",
            "items": [],
            "status": "OK",
            "noTextContent": True,
            "width": 612.0,
            "height": 792.0,
        },
    ]
    raw = {"pages": pages, "job_metadata": {"job_pages": 3, "job_is_cache_hit": False}}
    job_id = "5f1c2a9e-0d4b-4b7e-9a51-3c2d8e7f6a10"
    checked = JobResult(job_id=job_id, file_name="BESTBUY_2024Q2_10Q.pdf", job_result=raw)
    assert [p.page for p in checked.pages] == [1, 2, 3]
    assert checked.pages[1].items[2].rows == _EARNINGS_ROWS
    result = [{**raw, "job_id": job_id, "file_path": "BESTBUY_2024Q2_10Q.pdf"}]
    (OUT / "llamaparse_job.json").write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {OUT / 'llamaparse_job.json'} (checked by llama-cloud-services' JobResult)")


if __name__ == "__main__":
    marker_fixture()
    llamaparse_fixture()
