"""Language models behind one protocol: Ollama, llama.cpp in process, or a scripted fake."""

from __future__ import annotations

from finrag.config import Settings
from finrag.errors import ModelNotAvailable
from finrag.llm.base import LLM, ChatResult, LLMError, LLMTimeout, Message, Tool, ToolCall
from finrag.llm.model_process import ModelCrashed, crashed_model

__all__ = [
    "LLM",
    "ChatResult",
    "LLMError",
    "LLMTimeout",
    "Message",
    "ModelCrashed",
    "Tool",
    "ToolCall",
    "crashed_model",
    "get_llm",
]


def get_llm(settings: Settings) -> LLM:
    """The configured backend; 'auto' takes Ollama when it is up with the model, else the
    embedded model. Ollama comes wrapped so that the embedded model answers a call it
    fails (finrag.llm.fallback) unless llm.fallback is off. Cheap: models load on the
    first chat."""
    choice = settings.llm.backend
    if choice == "fake":
        from finrag.llm.fake import FakeLLM

        if settings.llm.fake_script is None:
            raise ModelNotAvailable(
                "llm.backend is 'fake' but llm.fake_script is not set",
                hint="point FINRAG_LLM__FAKE_SCRIPT at a JSON list of replies",
            )
        return FakeLLM.from_file(settings.llm.fake_script, timeout_s=settings.llm.timeout_s)
    if choice == "ollama":
        from finrag.llm.ollama_backend import OllamaLLM

        return _with_fallback(OllamaLLM(settings.llm), settings)
    if choice == "auto":
        from finrag.llm.ollama_backend import OllamaLLM, ollama_ready

        if ollama_ready(settings.llm)[0]:
            return _with_fallback(OllamaLLM(settings.llm), settings)
    return _embedded(settings)


def _embedded(settings: Settings) -> LLM:
    from finrag.llm.embedded import EmbeddedLLM

    return EmbeddedLLM(settings.llm, settings.models_dir)


def _with_fallback(primary: LLM, settings: Settings) -> LLM:
    """Ollama, with the embedded model answering the calls it fails (llm.fallback)."""
    if not settings.llm.fallback:
        return primary
    from finrag.llm.fallback import FallbackBackend

    return FallbackBackend(primary, lambda: _embedded(settings))
