"""A stand-in for SEC EDGAR on 127.0.0.1, replaying tests/fixtures/edgar (see its README):
fetch's tests and demo runs point fetch.sec_url and fetch.data_url at it.

``python -m tests.edgar_server`` serves it until Ctrl-C and prints the two settings.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "edgar"
SHARED = Path(__file__).resolve().parents[1].parent / "shared"


@dataclass
class Recorded:
    """What the stand-in saw and what it is told to refuse."""

    requests: list[tuple[str, str]] = field(default_factory=list)  # (path, User-Agent)
    missing: set[str] = field(default_factory=set)  # paths answered 404
    # Paths whose body stops halfway until ``release`` is set (an interrupted download).
    stall: set[str] = field(default_factory=set)
    release: threading.Event = field(default_factory=threading.Event)

    def paths(self, prefix: str = "") -> list[str]:
        return [p for p, _ in self.requests if p.startswith(prefix)]


def _body(path: str) -> bytes | None:
    if path == "/files/company_tickers.json":
        return (FIXTURES / "company_tickers.json").read_bytes()
    if path.startswith("/submissions/"):
        file = FIXTURES / "submissions" / Path(path).name
        return file.read_bytes() if file.is_file() else None
    documents = json.loads((FIXTURES / "documents.json").read_text())
    if path in documents:
        return (SHARED / documents[path]).read_bytes()
    return None


def _handler(recorded: Recorded) -> type[BaseHTTPRequestHandler]:
    class EdgarStandIn(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            recorded.requests.append((self.path, self.headers.get("User-Agent", "")))
            body = None if self.path in recorded.missing else _body(self.path)
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            kind = "application/json" if self.path.endswith(".json") else "text/html"
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.path in recorded.stall:
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
                recorded.release.wait(30)
                return  # the connection closes short of Content-Length
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    return EdgarStandIn


@contextmanager
def edgar_server() -> Iterator[tuple[str, Recorded]]:
    """(base URL, what it saw) of a stand-in running for the block."""
    recorded = Recorded()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(recorded))
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", recorded
    finally:
        recorded.release.set()
        server.shutdown()
        server.server_close()


if __name__ == "__main__":
    with edgar_server() as (url, _):
        print(f"export FINRAG_FETCH__SEC_URL={url} FINRAG_FETCH__DATA_URL={url}", flush=True)
        with suppress(KeyboardInterrupt):
            threading.Event().wait()
