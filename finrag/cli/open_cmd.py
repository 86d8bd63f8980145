"""`finrag open`: the page a citation names, printed as stored or shown in the system viewer."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer

from finrag.cli.render import err, print_json, warn
from finrag.cli.state import app_state
from finrag.db import open_store
from finrag.db.page_text import find_document, page_chunks, page_markdown
from finrag.errors import UsageError
from finrag.refs import document_fields, page_ref, parse_ref

# PDF viewers that can be told a page, tried in this order; xdg-open cannot.
_PAGE_VIEWERS = (
    ("evince", ["--page-label={page}", "{path}"]),
    ("okular", ["-p", "{page}", "{path}"]),
    ("zathura", ["-P", "{page}", "{path}"]),
    ("mupdf", ["{path}", "{page}"]),
)


def open_command(
    ctx: typer.Context,
    target: Annotated[
        str,
        typer.Argument(
            metavar="CITATION|DOC",
            help="A citation (NAME.pdf#page=12, NAME:p12, 'NAME p.12'), a file name, "
            "path or document id.",
            show_default=False,
        ),
    ],
    page: Annotated[
        int | None,
        typer.Option("--page", "-p", metavar="N", help="The page (overrides the citation's)."),
    ] = None,
    viewer: Annotated[
        bool,
        typer.Option(
            "--viewer", help="Open the file in the system viewer when there is a display."
        ),
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON: the page and its chunks.")
    ] = False,
) -> None:
    """Print a cited page's text as stored (Markdown, its chunks in order), or open the
    file at that page with --viewer."""
    ref = parse_ref(target)
    number = page if page is not None else ref.page
    store = open_store(app_state(ctx).settings)
    try:
        with store.connect() as conn:
            doc = find_document(conn, ref.document)
            if number is None and not viewer:
                raise UsageError(
                    f"which page of {Path(doc.path).name}? it has {doc.pages or 'no'} pages",
                    hint=f"give --page N, or a citation such as {page_ref(doc.path, 1)}",
                )
            chunks = page_chunks(conn, doc, number) if number is not None else []
    finally:
        store.close()
    if viewer:
        if _open_in_viewer(Path(doc.path), number):
            return
        if number is None:
            raise UsageError("no viewer to open the file with", hint="give --page N to print it")
    text = page_markdown(chunks)
    if as_json:
        print_json(
            {
                **document_fields(doc.path, doc.id),
                "page": number,
                "ref": page_ref(doc.path, number),
                "page_count": doc.pages,
                "text": text,
                "chunks": [chunk.__dict__ for chunk in chunks],
            }
        )
        return
    if not chunks:
        err.print(f"page {number} of {Path(doc.path).name} has no stored text (a cover or image?)")
        return
    sys.stdout.write(text)
    sys.stdout.flush()


def _has_display() -> bool:
    return sys.platform == "darwin" or bool(
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    )


def viewer_command(path: Path, page: int | None) -> tuple[list[str], bool] | None:
    """The command that shows ``path``, and whether it goes to ``page``; None if none."""
    if sys.platform == "darwin":
        return ["open", str(path)], False
    if page is not None and path.suffix.lower() == ".pdf":
        for name, args in _PAGE_VIEWERS:
            program = shutil.which(name)
            if program:
                return [program, *(a.format(page=page, path=path) for a in args)], True
    opener = shutil.which("xdg-open")
    return ([opener, str(path)], False) if opener else None


def _open_in_viewer(path: Path, page: int | None) -> bool:
    """Start the viewer detached (a script never waits on it); False when it cannot be,
    said on stderr, so the caller prints the page instead."""
    if not _has_display():
        warn("no display ($DISPLAY / $WAYLAND_DISPLAY unset): printing the page instead")
        return False
    if not path.is_file():
        warn(f"{path} is no longer there (the store keeps its text): printing the page instead")
        return False
    command = viewer_command(path, page)
    if command is None:
        warn("no viewer found (xdg-open, evince, okular, zathura, mupdf): printing the page")
        return False
    argv, at_page = command
    subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    where = f"at page {page}" if at_page else "at its start (this viewer takes no page)"
    err.print(f"opened {path.name} {where} with {Path(argv[0]).name}")
    return True
