"""What every HTML report must be: one file that fetches nothing, its charts embedded PNGs
(shared by the report tests of `eval retrieval` and `eval answers`)."""

from __future__ import annotations

import base64
import re

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def check_self_contained(html: str) -> list[bytes]:
    """No request leaves the page; return its embedded images, each checked to be a PNG."""
    assert html.startswith("<!DOCTYPE html>")
    assert 'src="http' not in html and "<link" not in html and "<script" not in html
    assert "url(" not in html  # no stylesheet fetch either
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert images, "no embedded chart"
    pngs = [base64.b64decode(data, validate=True) for data in images]
    assert all(p.startswith(PNG_SIGNATURE) for p in pngs)
    assert len(re.findall(r"<img ", html)) == len(images)  # every image is embedded
    return pngs
