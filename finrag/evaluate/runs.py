"""Evaluation runs recorded in the store: settings, model ids, git commit, metrics."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psycopg

from finrag.config import Settings

_REPO = Path(__file__).resolve().parents[2]


def git_commit() -> str | None:
    """The commit of the finrag checkout running this, when it is one (with '+dirty')."""
    git = shutil.which("git")
    if git is None or not (_REPO / ".git").exists():
        return None
    try:
        head = subprocess.run(
            [git, "-C", str(_REPO), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            [git, "-C", str(_REPO), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("+dirty" if dirty else "")


def start_run(
    conn: psycopg.Connection, kind: str, dataset: Path, settings: Settings, variants: Sequence[Any]
) -> tuple[int, str | None]:
    """Insert an eval_runs row for this run; return its id and the git commit."""
    commit = git_commit()
    recorded = {
        "variants": [getattr(v, "name", str(v)) for v in variants],
        "embed": settings.embed.model_dump(mode="json"),
        "retrieve": settings.retrieve.model_dump(mode="json"),
        "answer": settings.answer.model_dump(mode="json"),  # which route, whether a model
        "llm": settings.llm.model_dump(mode="json"),
    }
    run_id = conn.execute(
        "INSERT INTO eval_runs (kind, dataset, settings, git_commit) VALUES (%s, %s, %s, %s) "
        "RETURNING id",
        (kind, str(dataset), json.dumps(recorded), commit),
    ).fetchone()[0]
    conn.commit()
    return run_id, commit


def finish_run(conn: psycopg.Connection, run_id: int, metrics: dict[str, Any]) -> None:
    conn.execute(
        "UPDATE eval_runs SET metrics = %s, finished_at = now() WHERE id = %s",
        (json.dumps(metrics, default=str), run_id),
    )
    conn.commit()


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile of already sorted values (0 for none)."""
    if not sorted_values:
        return 0.0
    position = (len(sorted_values) - 1) * q / 100
    low, high = math.floor(position), math.ceil(position)
    value = sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)
    return round(value, 2)
