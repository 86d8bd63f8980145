"""`finrag serve` and `finrag mcp`: the local API over a real socket and the real embedded
Postgres, on a store holding Best Buy's 10-Q (examples/). Answers use --no-llm (the facts
route): the JSON must be the CLI's own for the same question on the same store."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import uvicorn

from finrag.cli.ask_cmd import ask_command
from finrag.cli.kpi_cmd import kpi_command
from finrag.config import Settings, load_settings
from finrag.db import Store, open_store
from finrag.db.embedded import EmbeddedServer
from finrag.errors import UsageError
from finrag.serve.app import create_app, parse_events
from finrag.serve.fields import command_fields
from finrag.serve.run import check_bind, is_loopback
from tests.conftest import REPO, clean_env, ingested_home, run_finrag

BESTBUY = REPO / "examples" / "BESTBUY_2024Q2_10Q.pdf"
QUESTION = "What was Best Buy's revenue in Q2 FY2024?"


@dataclass
class Served:
    home: Path
    settings: Settings
    store: Store
    url: str

    def env(self) -> dict[str, str]:
        return clean_env(FINRAG_HOME=str(self.home), FINRAG_EMBED__BACKEND="hash")


@contextlib.contextmanager
def running(app) -> Iterator[tuple[uvicorn.Server, str]]:
    """``app`` served by uvicorn on a free localhost port, in a thread."""
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield server, f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("serve") / "home"
    with ingested_home(home, [BESTBUY]), pytest.MonkeyPatch.context() as mp:
        for key, value in clean_env(FINRAG_HOME=str(home), FINRAG_EMBED__BACKEND="hash").items():
            if key.startswith("FINRAG_") or key == "OLLAMA_HOST":
                mp.setenv(key, value)
        settings = load_settings()
        with open_store(settings) as store, running(create_app(settings, store)) as (_, url):
            yield Served(home, settings, store, url)


def _without_timings(data):
    """The JSON without what differs from run to run: how long each step took (timings,
    seconds in *_s, milliseconds in *_ms)."""
    if isinstance(data, dict):
        return {
            k: _without_timings(v)
            for k, v in data.items()
            if "timings" not in k and not k.endswith(("_s", "_ms"))
        }
    if isinstance(data, list):
        return [_without_timings(v) for v in data]
    return data


def test_fields_are_the_commands_options() -> None:
    ask = {f.name: f for f in command_fields(ask_command)}
    assert ask["question"].required
    assert ask["no_llm"].param == "no_llm" and ask["no_llm"].default is False
    assert (ask["k"].low, ask["k"].high) == (1, 40)  # the option's range, not a copy
    assert not {"json", "format"} & set(ask), "how the CLI prints is no field"
    kpi = {f.name: f for f in command_fields(kpi_command)}
    assert kpi["kpi"].param == "kpi_names"  # named like the flag, --kpi
    assert kpi["companies"].required
    assert not {"csv", "chart", "png"} & set(kpi)


def test_ask_over_http_is_the_cli_json(served: Served) -> None:
    reply = httpx.post(
        f"{served.url}/ask", json={"question": QUESTION, "no_llm": True, "no_cache": True}
    )
    assert reply.status_code == 200, reply.text
    assert reply.headers["x-finrag-exit-code"] == "0"
    answer = reply.json()
    assert answer["route"] == "facts" and "9,583" in answer["answer"]
    cli = run_finrag("ask", QUESTION, "--no-llm", "--no-cache", "--json", env=served.env())
    assert cli.returncode == 0, cli.stderr
    assert _without_timings(answer) == _without_timings(json.loads(cli.stdout))


def test_facts_over_http_is_the_cli_json(served: Served) -> None:
    reply = httpx.post(f"{served.url}/facts", json={"company": "BBY", "metric": "revenue"})
    assert reply.status_code == 200, reply.text
    cli = run_finrag("facts", "BBY", "--metric", "revenue", "--json", env=served.env())
    assert cli.returncode == 0, cli.stderr
    assert reply.json() == json.loads(cli.stdout)
    assert any(v["value"] == "9583000000" for v in reply.json()["values"])


def test_the_other_routes(served: Served) -> None:
    health = httpx.get(f"{served.url}/health").json()
    assert health["status"] == "ok" and health["documents"] == 1
    docs = httpx.get(f"{served.url}/docs").json()
    assert [d["ticker"] for d in docs] == ["BBY"]
    shown = httpx.get(f"{served.url}/docs/{docs[0]['id']}").json()
    assert shown["company_aliases"] and shown["id"] == docs[0]["id"]
    # Odd references are a 4xx saying none is held, never a 500: a digit int() refuses,
    # LIKE's own escape character.
    for odd in ("²", "10-K\\", "%25_"):
        reply = httpx.get(f"{served.url}/docs/{odd}")
        assert reply.status_code // 100 == 4 and reply.json()["exit_code"] != 1, (odd, reply.text)
    hits = httpx.post(f"{served.url}/search", json={"question": "revenue", "k": 3}).json()
    assert len(hits["hits"]) == 3 and hits["question"] == "revenue"
    kpis = httpx.post(f"{served.url}/kpi", json={"companies": ["BBY"], "quarterly": True})
    assert kpis.status_code == 200
    assert kpis.json()["companies"] == ["Best Buy Co., Inc."] and kpis.json()["kpis"]
    schema = httpx.get(f"{served.url}/openapi.json").json()
    assert "no_llm" in schema["components"]["schemas"]["AskRequest"]["properties"]
    assert httpx.get(f"{served.url}/api/docs").status_code == 200


def test_bad_input_is_a_4xx_with_the_error_json(served: Served) -> None:
    reply = httpx.post(f"{served.url}/ask", json={"question": QUESTION, "k": 0, "colour": 1})
    assert reply.status_code == 422
    error = reply.json()
    assert error["exit_code"] == 2 and error["error"] == "error"
    assert "k:" in error["message"] and "colour" in error["message"]
    reply = httpx.post(f"{served.url}/facts", json={"company": "No Such Company"})
    assert reply.status_code == 400
    assert reply.json() == {
        "error": "error",
        "message": "no company 'No Such Company' in the store",
        "hint": "the store holds: Best Buy Co., Inc.",
        "exit_code": 2,
    }
    reply = httpx.post(f"{served.url}/ask", json={"question": "   "})
    assert reply.status_code == 400 and reply.json()["message"] == "the question is empty"


def test_answers_stream_as_server_sent_events_in_order(served: Served) -> None:
    body = {"question": QUESTION, "no_llm": True, "no_cache": True}
    with httpx.stream("POST", f"{served.url}/ask/stream", json=body) as reply:
        assert reply.headers["content-type"].startswith("text/event-stream")
        events = list(parse_events(reply.iter_lines()))
    names = [name for name, _ in events]
    assert names[0] == "stage" and events[0][1]["stage"] == "retrieving"
    assert names[-2:] == ["answer", "done"] and set(names[:-2]) == {"stage"}
    assert events[-1][1] == {"exit_code": 0}
    plain = httpx.post(f"{served.url}/ask", json=body).json()
    assert _without_timings(events[-2][1]) == _without_timings(plain)
    # "stream": true on /ask is the same stream
    with httpx.stream("POST", f"{served.url}/ask", json={**body, "stream": True}) as reply:
        assert [n for n, _ in parse_events(reply.iter_lines())][-2:] == ["answer", "done"]


def test_a_token_is_needed_beyond_loopback_and_checked_when_set(served: Served) -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("10.1.2.3")
    assert not is_loopback("finrag.example")  # a name may resolve anywhere
    with pytest.raises(UsageError, match="without a token"):
        check_bind("0.0.0.0", None)
    check_bind("0.0.0.0", "s3cret")
    refused = run_finrag("serve", "--host", "0.0.0.0", env=served.env(), timeout=60)
    assert refused.returncode == 2
    assert "refusing to listen on 0.0.0.0 without a token" in refused.stderr
    with running(create_app(served.settings, served.store, token="s3cret")) as (_, url):
        reply = httpx.get(f"{url}/health")
        assert reply.status_code == 401 and reply.json()["exit_code"] == 2
        assert reply.headers["www-authenticate"] == "Bearer"
        wrong = httpx.get(f"{url}/health", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        right = httpx.get(f"{url}/health", headers={"Authorization": "Bearer s3cret"})
        assert right.status_code == 200 and right.json()["status"] == "ok"
        assert httpx.get(f"{url}/openapi.json").status_code == 200  # its own docs stay open


def test_a_server_without_a_token_answers_loopback_names_only(served: Served) -> None:
    """DNS rebinding: a page whose name resolves to 127.0.0.1 sends its own name as Host."""
    with running(create_app(served.settings, served.store)) as (_, url):
        assert httpx.get(f"{url}/health").status_code == 200
        port = url.rsplit(":", 1)[1]
        local = httpx.get(f"{url}/health", headers={"Host": f"localhost:{port}"})
        assert local.status_code == 200
        rebound = httpx.get(f"{url}/docs", headers={"Host": f"attacker.example:{port}"})
        assert rebound.status_code == 400
    with running(create_app(served.settings, served.store, token="s3cret")) as (_, url):
        named = httpx.get(
            f"{url}/health",
            headers={"Host": "finrag.internal", "Authorization": "Bearer s3cret"},
        )
        assert named.status_code == 200  # with a token, any name the network gives it


def test_a_request_in_flight_finishes_before_the_server_stops(served: Served) -> None:
    app = create_app(served.settings, served.store)
    with running(app) as (server, url), ThreadPoolExecutor(1) as pool:
        app.state.answering.acquire()  # the request waits for it: in flight
        try:
            body = {"question": QUESTION, "no_llm": True, "no_cache": True}
            pending = pool.submit(httpx.post, f"{url}/ask", json=body, timeout=60)
            deadline = time.monotonic() + 60  # against a hang, not a measure
            while not server.server_state.tasks:  # its request cycle has begun
                assert time.monotonic() < deadline, "the request never reached the server"
                time.sleep(0.02)
            server.should_exit = True  # what uvicorn's SIGTERM and SIGINT handler does
            with contextlib.suppress(httpx.HTTPError):  # until it takes no new request
                while True:
                    httpx.get(f"{url}/health", timeout=5)
                    assert time.monotonic() < deadline, "the server kept taking requests"
                    time.sleep(0.02)
            assert not pending.done(), "the request finished before the stop: nothing tested"
        finally:
            app.state.answering.release()
        reply = pending.result()
    assert reply.status_code == 200 and "9,583" in reply.json()["answer"]


def test_sigterm_stops_the_real_server_and_lets_the_database_go(served: Served) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "finrag", "serve", "--port", str(port)],
        env=served.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None and time.monotonic() < deadline, process.stderr
            with contextlib.suppress(httpx.HTTPError):
                health = httpx.get(f"http://127.0.0.1:{port}/health", timeout=5)
                break
            time.sleep(0.2)
        assert health.json()["documents"] == 1
        assert process.pid in EmbeddedServer(served.home).status().clients
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 128 + signal.SIGTERM, stderr
    assert "Shutting down" in stderr
    assert process.pid not in EmbeddedServer(served.home).status().clients


def test_mcp_lists_its_tools_and_answers(served: Served) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def session_run() -> tuple[list, str, object]:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "finrag", "mcp"], env=served.env(), cwd=os.getcwd()
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = (await session.list_tools()).tools
            asked = await session.call_tool("ask", {"question": QUESTION, "no_llm": True})
            failed = await session.call_tool("facts", {"company": "No Such Company"})
            return tools, asked, failed

    tools, asked, failed = asyncio.run(session_run())
    by_name = {t.name: t for t in tools}
    assert sorted(by_name) == ["ask", "facts", "search"]
    schema = by_name["ask"].input_schema
    assert schema["required"] == ["question"] and "no_llm" in schema["properties"]
    assert not asked.is_error
    assert "9,583" in json.loads(asked.content[0].text)["answer"]
    assert failed.is_error and "no company 'No Such Company'" in failed.content[0].text


def test_mcp_without_its_package_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from finrag.errors import ConfigError
    from finrag.serve.mcp_tools import require_mcp

    monkeypatch.setitem(sys.modules, "mcp.server.mcpserver", None)  # import fails
    with pytest.raises(ConfigError, match="needs the mcp package") as raised:
        require_mcp()
    assert raised.value.hint == "pip install 'finrag-cli[mcp]'"
