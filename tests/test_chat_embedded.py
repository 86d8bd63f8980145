"""`chat` end to end on the real embedded llama.cpp backend over the bundled sample 10-Q
(SmolLM2-135M: the wiring is under test, not the wisdom)."""

from __future__ import annotations

from pathlib import Path

import pytest

from finrag.agent.session import ChatSession
from finrag.config import load_settings
from finrag.db import open_store
from finrag.ingest.pipeline import ingest
from finrag.llm.embedded import EmbeddedLLM
from tests.conftest import REPO

SAMPLE = REPO / "examples" / "BESTBUY_2024Q2_10Q.pdf"
NODES = {"contextualize", "safety", "intent", "answer", "verify", "retry", "reply", "clarify"}


@pytest.mark.slow
def test_two_turns_on_the_embedded_model(home: Path) -> None:
    settings = load_settings(
        ingest={"workers": 0},
        answer={"k": 3},
        llm={"backend": "embedded", "context": 4096, "max_tokens": 120},
    )
    store = open_store(settings)
    try:
        assert ingest([SAMPLE], settings, store).results[0].status == "ingested"
        chat = ChatSession(store, settings, name="e2e")
        assert isinstance(chat.llm._llm, EmbeddedLLM)
        first = chat.turn("What was Best Buy's revenue in the second quarter of fiscal 2024?")
        second = chat.turn("And what were its operating expenses?")
        resumed = ChatSession(store, settings, name="e2e")
    finally:
        store.close()
    assert first.intent == "relevant", "Best Buy is in the store: decided without the model"
    assert first.filters["companies"] == ["Best Buy Co., Inc."]
    for result in (first, second):
        assert result.reply.strip()
        assert set(result.trace["path"]) <= NODES
        assert result.trace["path"][:3] == ["contextualize", "safety", "intent"]
        assert result.trace["tokens"]["prompt"] > 0
    # The follow-up went to the model's rewrite (it says "its"); a 135M model may fail
    # the schema, and then the trace and the flags say so.
    rewrite = next(s for s in second.trace["steps"] if s["node"] == "contextualize")
    if rewrite["out"].startswith("rewritten: "):
        assert rewrite["tokens"]["completion"] > 0 and second.standalone
    else:
        assert rewrite["out"] == "rewrite failed: used as typed", rewrite
        assert any(f.startswith("could not rewrite the follow-up") for f in second.flags)
    assert resumed.resumed_turns == 2
