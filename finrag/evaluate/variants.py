"""The configurations `eval answers --compare` runs, parsed from their names.

A variant is one of the fixed names (``text``, ``facts+text``, ``facts+text:no-llm``,
``naive``, ``mode:fast|balanced|precise``), ``base`` (the settings as configured),
``chat`` (the chat graph with its stages as `finrag chat` runs them), or one or more
``key:value`` changes joined by ``/`` (``rerank:llm/graders:on``):

=============  ==========================================  =================================
key            values                                      changes
=============  ==========================================  =================================
rerank         off, on, llm, cross-encoder                 retrieve.reranker (on: the
                                                           cross-encoder when one is
                                                           configured, else the LLM)
retrieval      a retrieval variant: dense, fts, hybrid,    the retrieval stages, fixed
               hybrid+filters+pages, ... (`eval
               retrieval --compare`)
graph          on, off                                     the graph's passages fused in
persona        credit, equity, esg, retail, off            answer.persona
backend        auto, ollama, embedded, fake                llm.backend
graders        on, off                                     answer.graders
facts          on, off                                     answer.facts_route
llm            on, off (also ``no-llm``)                   answer.use_llm
mode           fast, balanced, precise                     the preset (answer.mode)
verify         on, off                                     chat graph: the answer checked
hyde           on, off                                     chat graph: one retry with a
                                                           rewritten query and a
                                                           hypothetical passage
decompose      auto, on, off                               chat graph: multi-company
                                                           questions split (auto), every
                                                           question split (on), none (off)
=============  ==========================================  =================================

A chat-stage key runs the question through the chat graph (finrag.evaluate.chat_asker)
with the other stages as `finrag chat` has them; any other variant through `ask`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from finrag.config import MODES, Settings, with_mode
from finrag.errors import UsageError
from finrag.evaluate.naive import NAME as NAIVE
from finrag.persona_names import persona_name, persona_names
from finrag.retrieve import Retriever, Variant

# The fixed names kept from before keys: each variant's answer settings, over the
# configured ones.
VARIANTS: dict[str, dict[str, bool]] = {
    "text": {"facts_route": False},
    "facts+text": {"facts_route": True},
    "facts+text:no-llm": {"facts_route": True, "use_llm": False},
    NAIVE: {},  # not finrag's pipeline: finrag.evaluate.naive
}
# The presets (answer.mode) as variants; a setting given explicitly (file, environment)
# stays as given in every one of them.
MODE_VARIANTS = {f"mode:{mode}": mode for mode in MODES}
BASE = "base"
CHAT = "chat"
CHAT_STAGES = {"verify": "on", "hyde": "on", "decompose": "auto"}  # as `finrag chat` runs

_ON_OFF = {"on": True, "off": False}
_RERANKERS = {"off": "none", "none": "none", "on": "on", "llm": "llm"}
_RERANKERS["cross-encoder"] = "cross-encoder"
_BACKENDS = ("auto", "ollama", "embedded", "fake")
KEYS = (
    "rerank",
    "retrieval",
    "graph",
    "persona",
    "backend",
    "graders",
    "facts",
    "llm",
    "mode",
    *CHAT_STAGES,
)


@dataclass(frozen=True)
class VariantSpec:
    name: str
    # section -> field -> value, over the configured settings
    changes: dict[str, dict[str, Any]] = field(default_factory=dict)
    mode: str | None = None
    naive: bool = False
    retrieval: str | None = None  # a retrieval variant's name (finrag.retrieve.Variant)
    graph: bool | None = None
    chat: dict[str, str] | None = None  # verify, hyde, decompose: the chat graph answers

    def settings(self, settings: Settings) -> Settings:
        chosen = with_mode(settings, self.mode) if self.mode else settings
        update = {}
        for section, values in self.changes.items():
            values = dict(values)
            if values.get("reranker") == "on":
                values["reranker"] = "cross-encoder" if chosen.retrieve.cross_encoder else "llm"
            update[section] = getattr(chosen, section).model_copy(update=values)
        return chosen.model_copy(update=update) if update else chosen

    @property
    def fixes_retrieval(self) -> bool:
        return self.retrieval is not None or self.graph is not None

    def retrieval_variant(self, default: Variant) -> Variant:
        """The retrieval stages this variant fixes, over ``default`` (the configured)."""
        chosen = Variant.parse(self.retrieval) if self.retrieval else default
        if self.graph is None:
            return chosen
        # Off means off: the question kinds the graph is on for by default go too.
        return replace(
            chosen, graph=self.graph, graph_kinds=chosen.graph_kinds if self.graph else ()
        )

    def describe(self) -> str:
        if self.naive:
            return "naive RAG"
        parts = [f"answer.mode={self.mode}"] if self.mode else []
        parts += [
            f"{section}.{k}={str(v).lower() if isinstance(v, bool) else v}"
            for section, values in self.changes.items()
            for k, v in values.items()
        ]
        if self.retrieval:
            parts.append(f"retrieval {self.retrieval}")
        if self.graph is not None:
            parts.append(f"graph {'on' if self.graph else 'off'}")
        if self.chat is not None:
            parts.append("chat graph: " + ", ".join(f"{k} {v}" for k, v in self.chat.items()))
        return ", ".join(parts) or "the configured settings"


def parse_variants(text: str) -> list[str]:
    """'base,rerank:llm' -> the names, in order; an unknown one is a usage error."""
    names = list(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    if not names:
        raise UsageError(f"--compare {text!r}: no variant given", hint=_HINT)
    for name in names:
        parse_variant(name)
    return names


def parse_variant(name: str) -> VariantSpec:
    if name in VARIANTS:
        if name == NAIVE:
            return VariantSpec(name, naive=True)
        return VariantSpec(name, changes={"answer": dict(VARIANTS[name])})
    if name in MODE_VARIANTS:
        return VariantSpec(name, mode=MODE_VARIANTS[name])
    if name == BASE:
        return VariantSpec(name)
    if name == CHAT:
        return VariantSpec(name, chat=dict(CHAT_STAGES))
    spec = VariantSpec(name)
    for part in name.split("/"):
        spec = _with_part(spec, part.strip())
    return spec


def _with_part(spec: VariantSpec, part: str) -> VariantSpec:
    if part == "no-llm":
        part = "llm:off"
    key, sep, value = part.partition(":")
    key, value = key.strip().lower(), value.strip()
    if not sep or key not in KEYS or not value:
        raise UsageError(f"--compare: unknown variant {spec.name!r} ({part!r})", hint=_HINT)
    low = value.lower()

    def change(section: str, name: str, v: Any) -> VariantSpec:
        changes = {s: dict(vals) for s, vals in spec.changes.items()}
        changes.setdefault(section, {})[name] = v
        return replace(spec, changes=changes)

    def on_off() -> bool:
        if low not in _ON_OFF:
            raise UsageError(f"--compare {spec.name!r}: {key} takes on or off, not {value!r}")
        return _ON_OFF[low]

    if key == "rerank":
        if low not in _RERANKERS:
            raise UsageError(
                f"--compare {spec.name!r}: rerank takes off, on, llm or cross-encoder",
            )
        return change("retrieve", "reranker", _RERANKERS[low])
    if key == "retrieval":
        Variant.parse(low)  # a UsageError naming the parts when it is no variant
        return replace(spec, retrieval=low)
    if key == "graph":
        return replace(spec, graph=on_off())
    if key == "persona":
        try:
            return change("answer", "persona", persona_name(low))
        except UsageError as exc:
            raise UsageError(
                f"--compare {spec.name!r}: {exc.message}",
                hint=f"personas: {', '.join(persona_names())}, off",
            ) from None
    if key == "backend":
        if low not in _BACKENDS:
            raise UsageError(f"--compare {spec.name!r}: backend is one of {', '.join(_BACKENDS)}")
        return change("llm", "backend", low)
    if key in ("graders", "facts", "llm"):
        field_name = {"graders": "graders", "facts": "facts_route", "llm": "use_llm"}[key]
        return change("answer", field_name, on_off())
    if key == "mode":
        if low not in MODES:
            raise UsageError(f"--compare {spec.name!r}: mode is one of {', '.join(MODES)}")
        return replace(spec, mode=low)
    # a chat stage
    allowed = ("auto", "on", "off") if key == "decompose" else ("on", "off")
    if low not in allowed:
        raise UsageError(f"--compare {spec.name!r}: {key} takes {', '.join(allowed)}")
    return replace(spec, chat={**(spec.chat or CHAT_STAGES), key: low})


class FixedRetriever(Retriever):
    """A retriever whose stages are fixed (a variant's ``retrieval`` or ``graph``), sharing
    another's embedder and reranker: `ask` searches with its default variant."""

    def __init__(self, base: Retriever, variant: Variant) -> None:
        super().__init__(base.store, base.settings, embedder=base.embedder, reranker=base.reranker)
        self.variant = variant

    def default_variant(self) -> Variant:
        return self.variant


_HINT = (
    f"a variant is one of {', '.join([BASE, CHAT, *VARIANTS, *MODE_VARIANTS])}, or key:value "
    f"changes joined by '/' with keys {', '.join(KEYS)}; e.g. "
    "base,rerank:llm,retrieval:dense,graph:on,graders:on,verify:off,persona:credit,backend:fake"
)
