"""The Ollama embedder against a stand-in Ollama on loopback (the real client, real HTTP)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

from finrag.config import EmbedSettings, load_settings
from finrag.db import open_store
from finrag.embed import get_embedder
from finrag.errors import ModelNotAvailable
from finrag.ingest.pipeline import ingest
from tests import pdfs
from tests.conftest import send_json

DIM = 8


class _FakeOllama(BaseHTTPRequestHandler):
    requests: ClassVar[list[dict]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(body)
        if body["model"] != "nomic-embed-text":
            self._reply(404, {"error": f"model '{body['model']}' not found"})
            return
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        vectors = [[float(len(t) % (i + 2)) + 1.0 for i in range(DIM)] for t in inputs]
        self._reply(200, {"model": body["model"], "embeddings": vectors})

    def _reply(self, status: int, data: dict) -> None:
        send_json(self, status, data)

    def log_message(self, *args: object) -> None:  # keep test output clean
        pass


@pytest.fixture
def ollama_host() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeOllama)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _FakeOllama.requests.clear()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def settings(host: str, **extra) -> EmbedSettings:
    values = {
        "backend": "ollama",
        "model": "nomic-embed-text",
        "dimension": DIM,
        "ollama_host": host,
        "batch_size": 2,
    } | extra
    return EmbedSettings(**values)


def test_embeds_in_batches_without_truncation(ollama_host: str) -> None:
    embedder = get_embedder(settings(ollama_host))
    assert embedder.spec.model_id == "ollama:nomic-embed-text"
    vectors = embedder.embed(["a", "bb", "ccc"])
    assert vectors.shape == (3, DIM)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert [len(r["input"]) for r in _FakeOllama.requests] == [2, 1]
    assert all(r["truncate"] is False for r in _FakeOllama.requests), "never cut silently"


def test_missing_model_names_the_pull(ollama_host: str) -> None:
    embedder = get_embedder(settings(ollama_host, model="mxbai-embed-large"))
    with pytest.raises(ModelNotAvailable) as caught:
        embedder.embed(["x"])
    assert caught.value.hint == "ollama pull mxbai-embed-large"


def test_wrong_dimension_and_no_server_are_clear(ollama_host: str) -> None:
    with pytest.raises(ModelNotAvailable, match="returns 8-d vectors"):
        get_embedder(settings(ollama_host, dimension=768)).embed(["x"])
    with pytest.raises(ModelNotAvailable, match="no Ollama server"):
        get_embedder(settings("http://127.0.0.1:9")).embed(["x"])
    with pytest.raises(ModelNotAvailable, match="vector size"):
        get_embedder(settings(ollama_host, dimension=None))


def test_ingest_with_ollama_embeddings(ollama_host: str, home: Path, tmp_path: Path) -> None:
    config = load_settings(embed=settings(ollama_host).model_dump(), ingest={"workers": 0})
    store = open_store(config)
    try:
        report = ingest([pdfs.good_pdf(tmp_path / "ACME_2023_10K.pdf")], config, store)
        assert report.results[0].status == "ingested", report.results[0].reason
        assert store.embedder.model_id == "ollama:nomic-embed-text"
    finally:
        store.close()
