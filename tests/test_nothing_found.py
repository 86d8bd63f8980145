"""Every data command ends alike when it found nothing to show: exit 7 and one line,
"nothing found: ...", on stderr (finrag.cli.conventions.nothing_found); what --json asked
for is still printed, empty."""

from __future__ import annotations

import json

import pytest

from finrag.cli.app import main
from finrag.errors import ExitCode

# (command line, what it says it did not find), on a store holding two companies' small
# 10-Ks (tests.corpus): text chunks only, no statement facts, no graph.
CASES = [
    (["facts", "ACME"], "no income statement facts for ACME"),
    (["facts", "ACME", "--metric", "capex", "--json"], "no capital expenditure for ACME"),
    (["kpi", "ACME"], "no KPI computed"),
    (["search", "revenue", "--year", "1999", "--strict-filters"], "no filing matches"),
    (["graph", "ACME", "--json"], "no graph for ACME"),
    (["market", "ACME", "--period", "2023Q4", "--offline"], "nothing cached for ACME"),
    (["ask", "What was ACME's revenue in 2015?", "--no-llm"], "no answer in the stored filings"),
]


def test_every_data_command_exits_7_saying_nothing_found(
    store_and_settings, database_url: str, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setenv("FINRAG_DATABASE_URL", database_url)
    seen = []
    for argv, what in CASES:
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        captured = capsys.readouterr()
        lines = [line for line in captured.err.splitlines() if line.startswith("nothing found")]
        seen.append((argv[0], exit_info.value.code, lines))
        assert exit_info.value.code == ExitCode.NO_ANSWER, (argv, captured.err)
        assert len(lines) == 1 and what in lines[0], (argv, captured.err)
        if "--json" in argv:
            json.loads(captured.out)  # printed whole, with nothing in it
    assert sorted({command for command, _, _ in seen}) == [
        "ask",
        "facts",
        "graph",
        "kpi",
        "market",
        "search",
    ]
