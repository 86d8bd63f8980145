"""The HTML report of `eval retrieval|answers --out`: one self-contained file with the run's
tables and PNG charts, every string from the data escaped; and, where Debian's chromium
is installed, a headless screenshot of it that is not blank."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import clean_env, run_finrag
from tests.html_checks import PNG_SIGNATURE, check_self_contained
from tests.test_eval_answers import ROUTED, facts_db  # noqa: F401 (fixture)
from tests.test_eval_retrieval import small_store  # noqa: F401 (fixture)

SCREENSHOT = Path(__file__).resolve().parents[1] / "eval" / "bench" / "report_screenshot.py"
HOSTILE = "What did <script>alert('x')</script> & ACME spend in 2023?"


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_retrieval_report_html(small_store, tmp_path: Path) -> None:  # noqa: F811
    settings, _, dataset = small_store
    rows = [json.loads(line) for line in dataset.read_text().splitlines()]
    rows[0]["question"] = HOSTILE
    rows[1]["type"] = "<b>bold</b>"
    dataset = write_jsonl(tmp_path / "hostile.jsonl", rows)
    env = dict(os.environ, FINRAG_DATABASE_URL=settings.database_url.get_secret_value())
    out = tmp_path / "report"
    result = run_finrag(
        "eval",
        "retrieval",
        str(dataset),
        "--k",
        "1,3",
        "--compare",
        "fts,hybrid+filters",
        "--out",
        str(out),
        "--json",
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert f"wrote {out / 'report.html'}" in result.stderr
    data = json.loads(result.stdout)
    html = (out / "report.html").read_text(encoding="utf-8")
    pngs = check_self_contained(html)
    assert len(pngs) == 2  # hit@k curves, latency
    for variant in data["variants"]:
        assert f"<td>{variant['variant']}</td>" in html
    hit = data["variants"][1]["scores"]["1"]["hit"]
    assert f'<td class="n">{hit:.3f}</td>' in html  # the figure the JSON gives
    assert "<script>alert" not in html and "&lt;script&gt;alert(" in html
    assert "<b>bold</b>" not in html and "&lt;b&gt;bold&lt;/b&gt;" in html
    assert "By company" in html and "By question type" in html
    assert "initech_2023_10k" in html  # the note on a gold document not in the store

    if shutil.which("chromium") is None:
        pytest.skip("chromium is not installed (Debian: apt-get install chromium)")
    shot = tmp_path / "shot.png"
    run = subprocess.run(
        [sys.executable, str(SCREENSHOT), str(out / "report.html"), "--out", str(shot), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    figures = json.loads(run.stdout)
    assert figures["blank"] is False and figures["colours"] > 1
    assert shot.read_bytes().startswith(PNG_SIGNATURE)


def test_answers_report_html(facts_db: str, tmp_path: Path) -> None:  # noqa: F811
    env = clean_env(FINRAG_DATABASE_URL=facts_db, FINRAG_EMBED__BACKEND="hash")
    rows = [*ROUTED, {**ROUTED[1], "id": "hostile", "question": HOSTILE}]
    dataset = write_jsonl(tmp_path / "qs.jsonl", rows)
    out = tmp_path / "out"
    args = ["eval", "answers", str(dataset), "--no-llm", "--out", str(out), "--json"]
    result = run_finrag(*args, env=env)
    assert result.returncode == 0, result.stderr
    assert f"wrote {out / 'report.html'}" in result.stderr
    data = json.loads(result.stdout)
    html = (out / "report.html").read_text(encoding="utf-8")
    assert len(check_self_contained(html)) == 3  # by type, by route, latency
    assert "By question type" in html and "By route" in html
    facts = data["summary"]["by_route"]["facts"]
    assert f'<td>facts</td><td class="n">{facts["n"]}</td>' in html
    assert f'<td class="n">{facts["auto_correct"]["value"]:.3f}</td>' in html
    assert "apple-sales-2023" in html and "Who is Apple" in html
    assert "<script>alert" not in html and "&lt;script&gt;alert(" in html


def test_charts_draw_labels_as_written() -> None:
    from finrag.evaluate import html_charts

    # '$1 to $2' would be maths to matplotlib (and some such labels fail to draw).
    bars = html_charts.group_bars_png(
        ["$1 to $2", "other"],
        {"a": {"$1 to $2": (0.5, 2)}, "b": {"other": (None, 0)}},
        title="correct",
        ylabel="share",
    )
    curves = html_charts.hit_curves_png([1, 3], {"$x$": [None, 1.0]})
    spread = html_charts.latency_png({"a": [0.1, 2.0], "b": []}, unit="s")
    assert all(png.startswith(PNG_SIGNATURE) for png in (bars, curves, spread))
