"""Small PDFs made in the test, one per kind of bad input (and a good one to compare)."""

from __future__ import annotations

from pathlib import Path

import pymupdf

GOOD_TEXT = (
    "ACME Corp reported total revenue of $1,234 million for fiscal 2023. "
    "Operating income rose 12% to $310 million. The board declared a dividend of $0.50 per share."
)


def good_pdf(path: Path, pages: int = 2, text: str = GOOD_TEXT) -> Path:
    doc = pymupdf.open()
    for number in range(pages):
        page = doc.new_page()
        page.insert_textbox(
            pymupdf.Rect(72, 72, 540, 720), f"Page {number + 1}. {text}", fontsize=11
        )
    doc.save(path)
    return path


def password_pdf(path: Path) -> Path:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), GOOD_TEXT)
    doc.save(path, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="secret", owner_pw="owner")
    return path


def image_only_pdf(path: Path) -> Path:
    """A 'scanned' page: one picture, no text layer."""
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 200, 100), False)
    pix.set_rect(pix.irect, (200, 200, 200))
    doc = pymupdf.open()
    doc.new_page().insert_image(pymupdf.Rect(72, 72, 472, 272), pixmap=pix)
    doc.save(path)
    return path


def corrupt_pdf(path: Path) -> Path:
    path.write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 8)
    return path


def truncated_pdf(path: Path, source: Path) -> Path:
    data = source.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    return path


def scanned_pdf(path: Path, source: Path, pages: list[int], dpi: int = 200) -> Path:
    """``pages`` (1-based) of ``source`` as a scan would hold them: each page a grey image
    of the rendered page, and no text layer."""
    with pymupdf.open(source) as original:
        doc = pymupdf.open()
        for number in pages:
            _add_scan(doc, original[number - 1], dpi)
        doc.save(path, deflate=True)
    return path


def mixed_pdf(path: Path, source: Path, text_page: int, scanned_page: int) -> Path:
    """A text page of ``source`` followed by a scan of another."""
    with pymupdf.open(source) as original:
        doc = pymupdf.open()
        doc.insert_pdf(original, from_page=text_page - 1, to_page=text_page - 1)
        _add_scan(doc, original[scanned_page - 1], 200)
        doc.save(path, deflate=True)
    return path


def _add_scan(doc: pymupdf.Document, page: pymupdf.Page, dpi: int) -> None:
    pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
    scan = doc.new_page(width=page.rect.width, height=page.rect.height)
    scan.insert_image(scan.rect, stream=pix.tobytes("png"))
