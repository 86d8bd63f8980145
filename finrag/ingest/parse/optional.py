"""Optional PDF parsers that need more than this machine offers offline.

Both check what they need up front and fail within seconds, saying why: marker-pdf
downloads a font and its layout weights on first use (and then polls a dead server
for minutes when offline); LlamaParse is a web service that needs a key and returns
``[]`` silently on a bad one.
"""

from __future__ import annotations

import importlib.util
import os
import socket
from pathlib import Path

from finrag.errors import DocumentParseError, ParserUnavailable
from finrag.ingest.parse import Page, ParsedDocument

_LLAMAPARSE_HOST = ("api.cloud.llamaindex.ai", 443)
_PROBE_TIMEOUT_S = 3.0


def _reachable(address: tuple[str, int]) -> bool:
    try:
        with socket.create_connection(address, timeout=_PROBE_TIMEOUT_S):
            return True
    except OSError:
        return False


class MarkerParser:
    name = "marker"

    def __init__(self) -> None:
        if importlib.util.find_spec("marker") is None:
            raise ParserUnavailable(
                "the marker parser is not installed",
                hint="pip install marker-pdf (GPL-3.0); it downloads its models on first "
                "use, so run it once with network access",
            )
        cache = Path(os.environ.get("HF_HOME", Path.home() / ".cache" / "huggingface"))
        if not any(cache.glob("**/*surya*")) and not any(
            (Path.home() / ".cache" / "datalab").glob("**/*")
        ):
            raise ParserUnavailable(
                "marker's layout models are not on this machine and it would download them",
                hint="run marker once with network access, or use --parser pymupdf",
            )

    def parse(self, path: Path) -> ParsedDocument:  # pragma: no cover - needs marker's models
        from marker.converters.pdf import PdfConverter
        from marker.models import create_model_dict

        rendered = PdfConverter(artifact_dict=create_model_dict())(str(path))
        text = getattr(rendered, "markdown", "")
        if not text.strip():
            raise DocumentParseError("marker returned no text")
        return ParsedDocument(pages=[Page(1, text)], parser=self.name)


class LlamaParseParser:
    name = "llamaparse"

    def __init__(self) -> None:
        if importlib.util.find_spec("llama_parse") is None:
            raise ParserUnavailable(
                "the llamaparse parser is not installed", hint="pip install llama-parse"
            )
        self.api_key = os.environ.get("LLAMA_CLOUD_API_KEY", "")
        if not self.api_key:
            raise ParserUnavailable(
                "LlamaParse needs an API key in LLAMA_CLOUD_API_KEY",
                hint="get one from LlamaIndex, or use --parser pymupdf (local)",
            )
        if not _reachable(_LLAMAPARSE_HOST):
            raise ParserUnavailable(
                f"LlamaParse's service ({_LLAMAPARSE_HOST[0]}) is not reachable from here",
                hint="it is a web service: it needs network access; use --parser pymupdf",
            )

    def parse(self, path: Path) -> ParsedDocument:  # pragma: no cover - needs the service
        from llama_parse import LlamaParse

        documents = LlamaParse(api_key=self.api_key, result_type="markdown").load_data(str(path))
        pages = [Page(i + 1, d.text) for i, d in enumerate(documents) if d.text.strip()]
        if not pages:
            raise DocumentParseError(
                "LlamaParse returned nothing (a rejected API key looks like this)"
            )
        return ParsedDocument(pages=pages, parser=self.name)
