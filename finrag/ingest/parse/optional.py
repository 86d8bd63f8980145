"""Optional PDF parsers that need more than this machine offers offline.

Both check what they need up front and fail within seconds, saying why: marker-pdf
downloads a font and its layout weights on first use (and then polls a dead server
for minutes when offline); LlamaParse is a web service that needs a key and returns
``[]`` silently on a bad one.
"""

from __future__ import annotations

import importlib.util
import os
import re
import socket
from pathlib import Path
from typing import Any

from finrag.errors import DocumentParseError, ParserUnavailable
from finrag.ingest.parse import Page, ParsedDocument, page_ranges
from finrag.ingest.parse.pdf import clean_markdown

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
                hint="pip install 'finrag-cli[marker]' (its weights' licence limits "
                "commercial use); it downloads them on first use, so run it once with network "
                "access",
            )
        if not _marker_weights_present():
            raise ParserUnavailable(
                "marker's layout models are not on this machine and it would download them",
                hint="run marker once with network access, or use --parser auto",
            )

    def parse(self, path: Path) -> ParsedDocument:  # pragma: no cover - needs marker's models
        from marker.converters.pdf import PdfConverter
        from marker.models import create_model_dict

        config = {"paginate_output": True, "disable_image_extraction": True}
        rendered = PdfConverter(artifact_dict=create_model_dict(), config=config)(str(path))
        return marker_document(getattr(rendered, "markdown", ""))


def _marker_weights_present() -> bool:
    """Surya's checkpoints (what marker loads) in its own cache or Hugging Face's."""
    from platformdirs import user_cache_dir

    surya = Path(os.environ.get("MODEL_CACHE_DIR", Path(user_cache_dir("datalab")) / "models"))
    hub = Path(os.environ.get("HF_HOME", Path.home() / ".cache" / "huggingface")) / "hub"
    return any(surya.glob("*/*")) or any(hub.glob("models--datalab-to--*"))


# Marker's paginated Markdown opens each page with "{N}" and 48 dashes, N the PDF page
# index from 0 (renderers/markdown.py: Markdownify.convert_div).
_MARKER_PAGE = re.compile(r"(?:^|\n)\{(\d+)\}-{48}\n")
# It escapes $, _ and * in text and table cells; finrag reads figures as printed.
_MARKER_ESCAPE = re.compile(r"\\([$_*])")


def marker_document(markdown: str) -> ParsedDocument:
    """Marker's paginated Markdown as finrag's pages, numbered as a PDF viewer does."""
    marks = list(_MARKER_PAGE.finditer(markdown))
    if not marks:
        if not markdown.strip():
            raise DocumentParseError("marker returned no text")
        raise DocumentParseError(
            "marker's output has no page markers (was paginate_output off?)",
            hint="citations need pages: use --parser auto for this file",
        )
    pages, empty = [], []
    for mark, following in zip(marks, [*marks[1:], None], strict=True):
        number = int(mark.group(1)) + 1
        body = markdown[mark.end() : following.start() if following else len(markdown)]
        body = clean_markdown(_MARKER_ESCAPE.sub(r"\1", body)).strip()
        pages.append(Page(number, body))
        if not body:
            empty.append(number)
    if not any(p.markdown for p in pages):
        raise DocumentParseError("marker returned no text")
    warnings = [f"marker found no text on page(s) {page_ranges(empty)}"] if empty else []
    return ParsedDocument(pages=pages, parser="marker", warnings=warnings, skipped_pages=empty)


class LlamaParseParser:
    name = "llamaparse"

    def __init__(self) -> None:
        if importlib.util.find_spec("llama_parse") is None:
            raise ParserUnavailable(
                "the llamaparse parser is not installed",
                hint="pip install 'finrag-cli[llamaparse]'",
            )
        self.api_key = os.environ.get("LLAMA_CLOUD_API_KEY", "")
        if not self.api_key:
            raise ParserUnavailable(
                "LlamaParse needs an API key in LLAMA_CLOUD_API_KEY",
                hint="get one from LlamaIndex, or use --parser auto (local)",
            )
        if not _reachable(_LLAMAPARSE_HOST):
            raise ParserUnavailable(
                f"LlamaParse's service ({_LLAMAPARSE_HOST[0]}) is not reachable from here",
                hint="it is a web service: it needs network access; use --parser auto",
            )

    def parse(self, path: Path) -> ParsedDocument:  # pragma: no cover - needs the service
        from llama_parse import LlamaParse

        parser = LlamaParse(api_key=self.api_key, result_type="markdown", verbose=False)
        return llamaparse_document(parser.get_json_result(str(path)))


def llamaparse_document(results: list[dict[str, Any]]) -> ParsedDocument:
    """LlamaParse's JSON job results (``get_json_result``: one per file, each with its
    ``pages``) as finrag's pages, each page's Markdown under the number LlamaParse gives."""
    pages, empty = [], []
    for result in results:
        if result.get("error"):
            raise DocumentParseError(f"LlamaParse failed: {result['error']}")
        for raw in result.get("pages", []):
            number = int(raw["page"])
            body = clean_markdown(raw.get("md") or raw.get("text") or "").strip()
            pages.append(Page(number, body))
            if not body:
                empty.append(number)
    if not any(p.markdown for p in pages):
        raise DocumentParseError("LlamaParse returned nothing (a rejected API key looks like this)")
    pages.sort(key=lambda p: p.number)
    warnings = [f"LlamaParse found no text on page(s) {page_ranges(empty)}"] if empty else []
    return ParsedDocument(
        pages=pages, parser="llamaparse", warnings=warnings, skipped_pages=sorted(empty)
    )
