"""The embedded backend on the real llama.cpp path (SmolLM2-135M: structure, not wisdom),
and the bundled model's assembly from its parts."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from pydantic import BaseModel, SecretStr

from finrag.answer.pipeline import Asker
from finrag.config import LLMSettings, load_settings
from finrag.db import open_store
from finrag.embed import get_embedder
from finrag.errors import ModelNotAvailable
from finrag.llm import LLMError, get_llm
from finrag.llm.embedded import EmbeddedLLM
from finrag.llm.model_files import BUNDLED_SIZE, bundled_model, bundled_parts, verify
from tests.conftest import smollm_gguf
from tests.corpus import add_small_filings


class Verdict(BaseModel):
    correct: bool
    reason: str


def small_llm(**changes) -> EmbeddedLLM:
    settings = LLMSettings(
        embedded_model=str(smollm_gguf()), context=2048, max_tokens=48, **changes
    )
    return EmbeddedLLM(settings, Path("/nonexistent-models-dir"))


def test_embedded_streams_text_and_counts_tokens() -> None:
    llm = small_llm()
    pieces: list[str] = []
    result = llm.chat(
        [{"role": "user", "content": "Name one colour."}], on_token=pieces.append, max_tokens=12
    )
    assert result.backend == "embedded" and result.model == "SmolLM2-135M-Instruct.Q4_1"
    assert result.text and "".join(pieces) == result.text
    assert 0 < result.completion_tokens <= 12
    assert result.prompt_tokens > 5 and result.seconds > 0


def test_embedded_structured_output_follows_the_schema() -> None:
    result = small_llm().chat(
        [{"role": "user", "content": "Is 2 + 2 = 4? Reply with JSON: correct, reason."}],
        output=Verdict,
        max_tokens=60,
    )
    assert isinstance(result.data, Verdict), result.text
    assert json.loads(result.text)["correct"] in (True, False)


def test_embedded_timeout_stops_generation() -> None:
    with pytest.raises(LLMError, match="took longer than"):
        small_llm(timeout_s=0.001).chat([{"role": "user", "content": "Count to fifty."}])


def test_missing_gguf_is_a_clear_error(tmp_path: Path) -> None:
    llm = EmbeddedLLM(LLMSettings(embedded_model=str(tmp_path / "nope.gguf")), tmp_path)
    with pytest.raises(ModelNotAvailable, match="no GGUF model at") as caught:
        llm.chat([{"role": "user", "content": "q"}])
    assert "bundled" in caught.value.hint


def test_ask_end_to_end_on_the_real_embedded_path(database_url: str) -> None:
    """Retrieval, the selected quotes, the schema-constrained answer and its checks, all
    on a real model: the reply parses and has the right shape, whatever its wisdom."""
    settings = load_settings(
        database_url=SecretStr(database_url),
        llm={"backend": "embedded", "context": 4096, "max_tokens": 160},
    )
    store = open_store(settings)
    try:
        with store.connect() as conn:
            add_small_filings(conn, get_embedder(settings.embed))
        llm = get_llm(settings)
        assert isinstance(llm, EmbeddedLLM)
        answer = Asker(store, settings, llm=llm).ask(
            "What were ACME's capital expenditures in 2023?"
        )
    finally:
        store.close()
    assert answer.backend == "embedded" and answer.model == "SmolLM2-135M-Instruct.Q4_1"
    assert answer.tokens["prompt"] > 100 and answer.tokens["completion"] > 0
    assert answer.context and all(c["label"].startswith("[") for c in answer.context)
    assert {"evidence", "answer"} <= set(answer.timings), "the model's reply parsed"
    if answer.refused:  # the model read the quotes and found no answer in them
        assert answer.refusal == "no-evidence" and "Closest passages: ACME" in answer.answer
    else:
        assert answer.answer.strip()
        quotes = {c.hit.content for c in answer.chunks}
        assert answer.evidence and all(e["quote"] in quotes for e in answer.evidence)
        # Whatever it wrote, every citation names an excerpt it was shown, and every
        # number is either verified or flagged.
        shown = {c["n"] for c in answer.context}
        assert all(c.n in shown for c in answer.citations)
        assert len(answer.unverified_numbers) == sum(
            f.startswith("removed: unverified number") for f in answer.flags
        )


def test_assembly_records_and_checks_the_checksum(tmp_path: Path) -> None:
    parts = []
    for n, data in enumerate((b"GGUF" + b"a" * 1000, b"b" * 2000, b"c" * 5)):
        part = tmp_path / f"part{n:02d}.bin"
        part.write_bytes(data)
        parts.append(part)
    whole = b"".join(p.read_bytes() for p in parts)
    sha = hashlib.sha256(whole).hexdigest()
    models = tmp_path / "models"
    model = bundled_model(models, name="toy", parts=parts, sha256=sha)
    assert model.assembled_now and model.size == len(whole) and model.sha256 == sha
    assert model.path.read_bytes() == whole and verify(model)
    again = bundled_model(models, name="toy", parts=[], sha256=sha)
    assert not again.assembled_now, "an intact file is used as it is"

    with model.path.open("r+b") as fh:  # truncated, as by a full disk
        fh.truncate(100)
    repaired = bundled_model(models, name="toy", parts=parts, sha256=sha)
    assert repaired.assembled_now and repaired.path.read_bytes() == whole

    repaired.path.write_bytes(b"GGUF" + b"x" * (len(whole) - 4))  # same size, other bytes
    assert not verify(repaired), "the full check sees what the cheap one cannot"

    with pytest.raises(ModelNotAvailable, match="damaged or of another version"):
        bundled_model(tmp_path / "other", name="toy", parts=parts, sha256="0" * 64)
    assert not list((tmp_path / "other").glob("*.gguf*")), "nothing half-written is left"


@pytest.mark.slow
def test_bundled_model_assembles_to_the_known_file(tmp_path: Path) -> None:
    """The 22 installed parts give the exact GGUF we recorded (1.1 GB copied and hashed)."""
    parts = bundled_parts()
    assert len(parts) == 22
    model = bundled_model(tmp_path)
    assert model.size == BUNDLED_SIZE and model.assembled_now
    assert json.loads(model.path.with_name(model.path.name + ".json").read_text())["parts"] == 22
