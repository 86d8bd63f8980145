"""Does an eval HTML report render? A headless Chromium screenshot of it, checked not blank.

    python eval/bench/report_screenshot.py OUT_DIR/report.html [--out SHOT.png]
        [--width 1280] [--height 2000] [--timeout 60] [--json]

Runs Debian's ``chromium`` (``--headless --no-sandbox --disable-gpu``, a throwaway
profile, no network needed: the report is one file) on ``file://REPORT``, then checks the
PNG it wrote: the PNG signature, its size, how many colours it holds and the share of
pixels darker than the page (text, tables, charts). Prints one line (or JSON) with the
figures and the seconds Chromium took; exits 1 when the shot is missing or blank, 2 when
no chromium is installed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from PIL import Image

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_DARK = 200  # a pixel with a channel under this is ink (text, rules, bars), not page


@dataclass
class Shot:
    path: str
    width: int
    height: int
    bytes: int
    colours: int  # distinct colours, counted up to 65,536
    non_white_share: float  # pixels with some channel under _DARK
    seconds: float


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def screenshot(
    report: Path, out: Path, *, width: int = 1280, height: int = 2000, timeout: float = 60
) -> Shot:
    """Screenshot ``report`` into ``out`` with headless Chromium and measure the image."""
    browser = chromium()
    if browser is None:
        raise FileNotFoundError("no chromium on PATH (Debian: apt-get install chromium)")
    out.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="finrag-chromium-") as profile:
        started = time.perf_counter()
        subprocess.run(
            [
                browser,
                "--headless",
                "--no-sandbox",  # as root, and in containers, the sandbox cannot start
                "--disable-gpu",
                "--hide-scrollbars",
                "--no-first-run",
                f"--user-data-dir={profile}",
                f"--screenshot={out.resolve()}",
                f"--window-size={width},{height}",
                report.resolve().as_uri(),
            ],
            capture_output=True,
            timeout=timeout,
            check=False,  # Chromium's exit status says little; the file says what happened
        )
        seconds = time.perf_counter() - started
    if not out.is_file() or not out.read_bytes().startswith(PNG_SIGNATURE):
        raise RuntimeError(f"chromium wrote no PNG at {out}")
    with Image.open(out) as image:
        rgb = image.convert("RGB")
        colours = rgb.getcolors(maxcolors=65_536)
        grey = rgb.convert("L").point(lambda v: 255 if v < _DARK else 0)
        histogram = grey.histogram()
        dark = histogram[255] / (rgb.width * rgb.height)
        return Shot(
            path=str(out),
            width=rgb.width,
            height=rgb.height,
            bytes=out.stat().st_size,
            colours=len(colours) if colours is not None else 65_536,
            non_white_share=round(dark, 4),
            seconds=round(seconds, 2),
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("report", type=Path, help="an eval report.html")
    parser.add_argument("--out", type=Path, help="the screenshot (default: beside the report)")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=2000)
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if chromium() is None:
        print("no chromium on PATH: install it (Debian: apt-get install chromium)", file=sys.stderr)
        return 2
    out = args.out or args.report.with_name("report.png")
    try:
        shot = screenshot(
            args.report, out, width=args.width, height=args.height, timeout=args.timeout
        )
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        print(f"no screenshot: {exc}", file=sys.stderr)
        return 1
    blank = shot.colours <= 1 or shot.non_white_share < 0.005
    if args.json:
        print(json.dumps(asdict(shot) | {"blank": blank}))
    else:
        print(
            f"{shot.path}: {shot.width}x{shot.height}, {shot.bytes:,} bytes, {shot.colours:,} "
            f"colours, {shot.non_white_share:.1%} ink, chromium {shot.seconds:.1f} s"
            + (" — BLANK" if blank else "")
        )
    return 1 if blank else 0


if __name__ == "__main__":
    sys.exit(main())
