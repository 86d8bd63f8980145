"""`finrag fetch` against recorded EDGAR responses (tests/edgar_server.py, or an
httpx.MockTransport over the same fixtures): never the network."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import httpx
import pytest

from finrag.cli.app import main
from finrag.config import FetchSettings, load_settings
from finrag.errors import ConfigError, ExitCode, ServiceUnavailable
from finrag.fetch import edgar
from finrag.fetch.client import EdgarClient, RateLimiter
from finrag.fetch.folder import MANIFEST, Manifest
from finrag.fetch.run import fetch_filings
from finrag.ingest.discover import discover
from finrag.ingest.metadata import from_path
from tests.conftest import DEAD_OLLAMA, SHARED
from tests.edgar_server import FIXTURES, _body, edgar_server

pytestmark = pytest.mark.skipif(
    not (SHARED / "edgar-html").is_dir(), reason=f"EDGAR filings not found at {SHARED}"
)

UA = "Finrag Tests tests@example.com"
AAPL_10K = "/Archives/edgar/data/320193/000032019324000123/aapl-20240928.htm"
AAPL_10Q = "/Archives/edgar/data/320193/000032019325000073/aapl-20250628.htm"
NVDA_10Q = "/Archives/edgar/data/1045810/000104581025000209/nvda-20250727.htm"
LAYOUT = {
    "AAPL/aapl-10-k-2024-11-01.htm": "aapl-10-k-2024-11-01.html",
    "AAPL/aapl-10-q-2025-08-01.htm": "aapl-10-q-2025-08-01.html",
    "NVDA/nvda-10-k-2025-02-26.htm": "nvda-10-k-2025-02-26.html",
    "NVDA/nvda-10-q-2025-08-27.htm": "nvda-10-q-2025-08-27.html",
}


@pytest.fixture
def edgar_standin(monkeypatch: pytest.MonkeyPatch):
    with edgar_server() as (url, recorded):
        monkeypatch.setenv("FINRAG_FETCH__SEC_URL", url)
        monkeypatch.setenv("FINRAG_FETCH__DATA_URL", url)
        monkeypatch.setenv("FINRAG_FETCH__USER_AGENT", UA)
        yield recorded


def fetch(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(["fetch", *argv])
    captured = capsys.readouterr()
    return exit_info.value.code, captured.out, captured.err


def tree(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file below ``folder``, dotfiles too: relative path -> (size, mtime_ns)."""
    if not folder.exists():
        return {}
    return {
        str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_fetch_writes_the_layout_ingest_reads(edgar_standin, tmp_path: Path, capsys) -> None:
    dest = tmp_path / "filings"
    code, out, err = fetch(
        capsys, "AAPL", "nvda", "--since", "2022", "--no-ingest", "--dest", str(dest), "--json"
    )
    assert code == ExitCode.OK, err
    report = json.loads(out)
    assert [(f["ticker"], f["form"], f["status"]) for f in report["filings"]] == [
        ("AAPL", "10-K", "fetched"),
        ("AAPL", "10-Q", "fetched"),
        ("NVDA", "10-K", "fetched"),
        ("NVDA", "10-Q", "fetched"),
    ]
    assert report["ingest"] is None
    assert "4 fetched" in err and "fetched AAPL 10-Q filed 2025-08-01" in err
    # Exactly the primary documents, byte for byte, where ingest's discovery finds them.
    assert set(tree(dest)) == set(LAYOUT) | {MANIFEST}
    found, skipped = discover([dest])
    assert skipped == [] and {str(f.path.relative_to(dest)) for f in found} == set(LAYOUT)
    for relative, original in LAYOUT.items():
        assert (dest / relative).read_bytes() == (SHARED / "edgar-html" / original).read_bytes()
    # ... and read a ticker and form from, as from EDGAR's own file names.
    source = next(f for f in found if f.path.name == "aapl-10-q-2025-08-01.htm")
    assert from_path(source.path, source.root) == {"ticker": "AAPL", "form_type": "10-Q"}
    # Fair access: every request declared who asks; only what was asked for was requested.
    assert {agent for _, agent in edgar_standin.requests} == {UA}
    documents = edgar_standin.paths("/Archives/")
    assert len(documents) == 4 and not any("20250731" in p or "form4" in p for p in documents)
    assert "20210925" not in " ".join(documents)  # filed before --since
    assert edgar_standin.paths("/submissions/CIK0000320193-submissions-001") == []


def test_a_second_run_downloads_nothing_and_a_lost_file_is_fetched_again(
    edgar_standin, tmp_path: Path, capsys
) -> None:
    dest = tmp_path / "filings"
    argv = ("AAPL", "--since", "2022", "--no-ingest", "--dest", str(dest), "--json")
    assert fetch(capsys, *argv)[0] == ExitCode.OK
    before = tree(dest)
    edgar_standin.requests.clear()

    code, out, err = fetch(capsys, *argv)
    assert code == ExitCode.OK, err
    assert [f["status"] for f in json.loads(out)["filings"]] == ["cached", "cached"]
    assert tree(dest) == before  # not even rewritten
    # The submissions only: no document, and no ticker list (the manifest knows AAPL).
    assert edgar_standin.paths() == ["/submissions/CIK0000320193.json"]

    (dest / "AAPL" / "aapl-10-q-2025-08-01.htm").unlink()
    (dest / "AAPL" / "aapl-10-k-2024-11-01.htm").write_bytes(b"<html>cut short</html>")
    edgar_standin.requests.clear()
    code, out, _ = fetch(capsys, *argv)
    assert [f["status"] for f in json.loads(out)["filings"]] == ["fetched", "fetched"]
    assert edgar_standin.paths("/Archives/") == [AAPL_10K, AAPL_10Q]
    assert tree(dest).keys() == before.keys()
    assert (dest / "AAPL" / "aapl-10-k-2024-11-01.htm").stat().st_size == before[
        "AAPL/aapl-10-k-2024-11-01.htm"
    ][0]


def test_ctrl_c_mid_download_exits_130_leaving_no_partial_file(
    edgar_standin, tmp_path: Path
) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.conftest import REPO

    edgar_standin.stall.add(AAPL_10Q)
    dest = tmp_path / "filings"
    argv = ["AAPL", "--since", "2022", "--no-ingest", "--dest", str(dest)]
    child = subprocess.Popen(
        [sys.executable, "-m", "finrag", "fetch", *argv],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # The part file names the process that writes it: no two runs share one.
    part = dest / "AAPL" / f".aapl-10-q-2025-08-01.htm.{child.pid}.part"
    deadline = time.monotonic() + 60
    while not (part.exists() and part.stat().st_size) and child.poll() is None:
        assert time.monotonic() < deadline, "the download never started"
        time.sleep(0.05)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=60)
    assert child.returncode == ExitCode.INTERRUPTED, err
    assert "interrupted" in err and "run the same command again" in err
    assert set(tree(dest)) == {MANIFEST, "AAPL/aapl-10-k-2024-11-01.htm"}

    edgar_standin.stall.clear()
    resumed = subprocess.run(
        [sys.executable, "-m", "finrag", "fetch", *argv, "--json"],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert [f["status"] for f in json.loads(resumed.stdout)["filings"]] == ["cached", "fetched"]
    assert set(tree(dest)) == {MANIFEST, *(p for p in LAYOUT if p.startswith("AAPL/"))}


def replay(
    seen: list[str], *, cut: str | None = None, extra: dict[str, bytes] | None = None
) -> httpx.MockTransport:
    """The fixtures as an httpx transport; the body of ``cut`` stops halfway with Ctrl-C."""

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        assert request.headers["User-Agent"] == UA
        body = (extra or {}).get(request.url.path) or _body(request.url.path)
        if body is None:
            return httpx.Response(404)
        if request.url.path != cut:
            return httpx.Response(200, content=body)

        def halfway() -> Iterator[bytes]:
            yield body[: len(body) // 2]
            raise KeyboardInterrupt

        return httpx.Response(200, content=halfway())

    return httpx.MockTransport(handler)


def settings_for_replay():
    return load_settings(
        fetch={"user_agent": UA, "sec_url": "https://sec.test", "data_url": "https://data.test"}
    )


def test_an_interrupted_download_leaves_no_partial_file_and_the_next_run_resumes(
    tmp_path: Path,
) -> None:
    settings = settings_for_replay()
    dest = tmp_path / "filings"
    seen: list[str] = []
    options = {"forms": {"10-K", "10-Q"}, "since": date(2022, 1, 1), "dest": dest}
    interrupted = EdgarClient(settings.fetch, transport=replay(seen, cut=AAPL_10Q))
    with pytest.raises(KeyboardInterrupt):
        fetch_filings(["AAPL"], settings, client=interrupted, **options)
    assert AAPL_10Q in seen  # it was cut mid-body, not before it started
    # The 10-K, whole, and the manifest that says so; no trace of the cut 10-Q.
    assert set(tree(dest)) == {MANIFEST, "AAPL/aapl-10-k-2024-11-01.htm"}
    assert list(Manifest.load(dest).filings) == ["0000320193-24-000123"]

    seen.clear()
    resumed = fetch_filings(
        ["AAPL"], settings, client=EdgarClient(settings.fetch, transport=replay(seen)), **options
    )
    assert [r.status for r in resumed.results] == ["cached", "fetched"]
    assert [p for p in seen if p.startswith("/Archives/")] == [AAPL_10Q]
    assert (dest / "AAPL" / "aapl-10-q-2025-08-01.htm").read_bytes() == (
        SHARED / "edgar-html" / "aapl-10-q-2025-08-01.html"
    ).read_bytes()
    assert set(tree(dest)) == {MANIFEST, *(p for p in LAYOUT if p.startswith("AAPL/"))}


def test_older_pages_are_read_only_when_since_reaches_them(tmp_path: Path) -> None:
    first = json.loads((FIXTURES / "submissions" / "CIK0000320193.json").read_text())
    assert edgar.older_pages(first, date(2022, 1, 1)) == []
    assert edgar.older_pages(first, date(2010, 1, 1)) == ["CIK0000320193-submissions-001.json"]

    settings = settings_for_replay()
    seen: list[str] = []
    old = "/Archives/edgar/data/320193/000119312510238044/d10k.htm"
    client = EdgarClient(
        settings.fetch, transport=replay(seen, extra={old: b"<html>FY2010</html>"})
    )
    report = fetch_filings(
        ["AAPL"], settings, forms={"10-K"}, since=date(2010, 1, 1), dest=tmp_path, client=client
    )
    assert [(r.filing.filing_date.year, r.status) for r in report.results] == [
        (2010, "fetched"),
        (2021, "failed"),  # the fixtures hold no body for it: a 404, the others go on
        (2024, "fetched"),
    ]
    assert "/submissions/CIK0000320193-submissions-001.json" in seen
    assert (tmp_path / "AAPL" / "aapl-10-k-2010-10-27.htm").read_bytes() == b"<html>FY2010</html>"


class FakeClock:
    """Time that moves only when slept in, or when a request says it took time."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 6))
        self.now += seconds


def answering(clock: FakeClock, replies: list, starts: list[float]) -> httpx.MockTransport:
    """Each request is noted at the clock's time, takes 30 ms, and gets the next reply
    (an httpx.Response, or an exception to raise)."""

    def handler(request: httpx.Request) -> httpx.Response:
        starts.append(clock.now)
        clock.now += 0.03
        reply = replies.pop(0) if len(replies) > 1 else replies[0]
        if isinstance(reply, Exception):
            raise reply
        return reply

    return httpx.MockTransport(handler)


@pytest.mark.parametrize("per_second", [10.0, 4.0])
def test_requests_start_at_most_per_second_apart(per_second: float) -> None:
    clock, starts = FakeClock(), []
    client = EdgarClient(
        FetchSettings(user_agent=UA, requests_per_second=per_second),
        transport=answering(clock, [httpx.Response(200, json={"ok": True})], starts),
        clock=clock,
        sleep=clock.sleep,
    )
    for _ in range(25):
        assert client.get_json("https://data.test/x.json") == {"ok": True}
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert min(gaps) == pytest.approx(1 / per_second)
    # Only what the request itself did not already take was slept.
    assert clock.slept == [pytest.approx(1 / per_second - 0.03)] * 24


def test_the_limiter_does_not_sleep_after_a_long_pause() -> None:
    clock = FakeClock()
    limiter = RateLimiter(10, clock=clock, sleep=clock.sleep)
    limiter.wait()
    clock.now += 5
    limiter.wait()
    limiter.wait()
    assert clock.slept == [pytest.approx(0.1)]


def test_more_than_ten_requests_a_second_is_refused_as_a_setting() -> None:
    with pytest.raises(ConfigError, match="requests_per_second"):
        load_settings(fetch={"requests_per_second": 20})


def test_429_5xx_and_timeouts_are_retried_with_backoff() -> None:
    clock, starts = FakeClock(), []
    replies = [
        httpx.Response(429, headers={"Retry-After": "3"}),
        httpx.Response(503),
        httpx.ReadTimeout("slow"),
        httpx.Response(200, json={"ok": 1}),
    ]
    client = EdgarClient(
        FetchSettings(user_agent=UA),
        transport=answering(clock, replies, starts),
        clock=clock,
        sleep=clock.sleep,
    )
    assert client.get_json("https://data.test/x.json") == {"ok": 1}
    assert clock.slept == [3, 2, 4]  # Retry-After, then 1 s doubled at each try
    assert len(starts) == 4


def test_a_service_that_keeps_failing_stops_after_the_retries() -> None:
    clock, starts = FakeClock(), []
    client = EdgarClient(
        FetchSettings(user_agent=UA, retries=2),
        transport=answering(clock, [httpx.Response(500)], starts),
        clock=clock,
        sleep=clock.sleep,
    )
    with pytest.raises(ServiceUnavailable, match="HTTP 500") as failure:
        client.get_json("https://data.test/x.json")
    assert failure.value.exit_code == ExitCode.NETWORK
    assert len(starts) == 3 and clock.slept == [1, 2]


def test_no_connection_fails_at_once() -> None:
    clock, starts = FakeClock(), []
    client = EdgarClient(
        FetchSettings(user_agent=UA),
        transport=answering(clock, [httpx.ConnectError("Name or service not known")], starts),
        clock=clock,
        sleep=clock.sleep,
    )
    with pytest.raises(ServiceUnavailable, match=r"cannot reach data\.test"):
        client.get_json("https://data.test/x.json")
    assert len(starts) == 1 and clock.slept == []


@pytest.mark.parametrize("fresh", [True, False])
def test_offline_it_fails_fast_with_the_network_code_and_changes_nothing(
    edgar_standin, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch, fresh: bool
) -> None:
    dest = tmp_path / "filings"
    if not fresh:  # a folder from an earlier run: its manifest knows AAPL already
        assert fetch(capsys, "AAPL", "--since", "2025", "--no-ingest", "--dest", str(dest))[0] == 0
    before = tree(dest)
    monkeypatch.setenv("FINRAG_FETCH__SEC_URL", DEAD_OLLAMA)  # port 9: nothing listens
    monkeypatch.setenv("FINRAG_FETCH__DATA_URL", DEAD_OLLAMA)
    code, out, err = fetch(capsys, "AAPL", "NVDA", "--dest", str(dest), "--json")
    assert code == ExitCode.NETWORK == 9, err
    assert "error: cannot reach 127.0.0.1:9" in err and "hint: fetch needs a connection" in err
    assert out == ""
    assert tree(dest) == before
    assert dest.exists() is not fresh


@pytest.mark.parametrize(
    ("agent", "says"),
    [(None, "fetch.user_agent is not set"), ("finrag", "holds no contact e-mail")],
)
def test_without_a_declared_user_agent_fetch_refuses(
    edgar_standin, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch, agent, says
) -> None:
    if agent is None:
        monkeypatch.delenv("FINRAG_FETCH__USER_AGENT")
    else:
        monkeypatch.setenv("FINRAG_FETCH__USER_AGENT", agent)
    code, _, err = fetch(capsys, "AAPL", "--dest", str(tmp_path / "filings"))
    assert code == ExitCode.CONFIG, err
    assert says in err and "FINRAG_FETCH__USER_AGENT" in err
    assert edgar_standin.requests == []  # not one request without it
    assert not (tmp_path / "filings").exists()


def test_an_unknown_ticker_is_refused_before_anything_is_written(
    edgar_standin, tmp_path: Path, capsys
) -> None:
    code, _, err = fetch(capsys, "AAPL", "NOPE", "--dest", str(tmp_path / "filings"))
    assert code == ExitCode.USAGE, err
    assert "no SEC registrant has the ticker NOPE" in err
    assert edgar_standin.paths() == ["/files/company_tickers.json"]
    assert not (tmp_path / "filings").exists()


def test_a_missing_document_fails_that_filing_only(edgar_standin, tmp_path: Path, capsys) -> None:
    edgar_standin.missing.add(NVDA_10Q)
    dest = tmp_path / "filings"
    code, out, err = fetch(
        capsys, "NVDA", "--since", "2025", "--no-ingest", "--dest", str(dest), "--json"
    )
    assert code == ExitCode.PARTIAL, err
    results = {f["form"]: f for f in json.loads(out)["filings"]}
    assert results["10-K"]["status"] == "fetched"
    assert results["10-Q"]["status"] == "failed" and "HTTP 404" in results["10-Q"]["reason"]
    assert set(tree(dest)) == {MANIFEST, "NVDA/nvda-10-k-2025-02-26.htm"}


@pytest.mark.slow
def test_fetched_filings_are_ingested_into_the_store(
    edgar_standin, database_url: str, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.conftest import _PARSED, _share_parsed

    home = tmp_path / "home"
    monkeypatch.setenv("FINRAG_HOME", str(home))
    monkeypatch.setenv("FINRAG_DATABASE_URL", database_url)  # a fresh database, real Postgres
    monkeypatch.setenv("FINRAG_INGEST__WORKERS", "0")
    settings = load_settings()
    _share_parsed(_PARSED, settings.cache_dir / "parsed")  # parsed once per test run
    argv: tuple[str, ...] = ("AAPL", "--forms", "10-q", "--since", "2025", "--json")
    code, out, err = fetch(capsys, *argv)
    _share_parsed(settings.cache_dir / "parsed", _PARSED)
    assert code == ExitCode.OK, err
    report = json.loads(out)
    path = home / "filings" / "AAPL" / "aapl-10-q-2025-08-01.htm"  # the default folder
    assert [f["path"] for f in report["filings"]] == [str(path)]
    (ingested,) = report["ingest"]["files"]
    assert (ingested["path"], ingested["status"]) == (str(path), "ingested")
    meta = ingested["metadata"]
    assert (meta["company"], meta["ticker"], meta["form_type"]) == ("Apple Inc.", "AAPL", "10-Q")
    assert (meta["fiscal_year"], meta["fiscal_quarter"]) == (2025, 3)

    from finrag.db import open_store

    with open_store(settings) as store, store.connect() as conn:
        rows = conn.execute("SELECT path, form_type FROM documents").fetchall()
    assert rows == [(str(path), "10-Q")]

    code, out, _ = fetch(capsys, *argv)  # again: nothing downloaded, nothing re-ingested
    again = json.loads(out)
    assert [f["status"] for f in again["filings"]] == ["cached"]
    assert [f["status"] for f in again["ingest"]["files"]] == ["unchanged"]
