"""What crosses finrag's edges: telemetry out, bad input and settings in, files left behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests import pdfs
from tests.conftest import REPO, run_finrag

ONNXRUNTIME_EVENTS = "onnxruntime.db"  # where onnxruntime queues usage events for upload


def user_dirs(tmp_path: Path) -> dict[str, str]:
    """HOME and the XDG folders inside the test, so that what libraries write there shows."""
    return {
        "HOME": str(tmp_path / "user"),
        "XDG_CACHE_HOME": str(tmp_path / "user" / ".cache"),
        "XDG_DATA_HOME": str(tmp_path / "user" / ".local" / "share"),
        "XDG_CONFIG_HOME": str(tmp_path / "user" / ".config"),
    }


def test_an_ingest_queues_no_telemetry(tmp_path: Path, database_url: str) -> None:
    # pymupdf's layout analysis runs onnxruntime on every PDF, in the parser worker.
    target = pdfs.good_pdf(tmp_path / "ACME_2023_10K.pdf")
    env = dict(os.environ, **user_dirs(tmp_path), FINRAG_DATABASE_URL=database_url)
    env["FINRAG_HOME"] = str(tmp_path / "home")
    result = run_finrag("ingest", str(target), env=env)
    assert result.returncode == 0, result.stderr
    assert not list(tmp_path.rglob(ONNXRUNTIME_EVENTS))


def test_importing_finrag_turns_library_telemetry_off(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "ORT_"))}
    env.update(user_dirs(tmp_path), HF_HUB_DISABLE_TELEMETRY="0")  # forced off regardless
    probe = (
        "import json, finrag, onnxruntime, huggingface_hub.constants as hub;"
        "print(json.dumps({'hub_telemetry_off': hub.HF_HUB_DISABLE_TELEMETRY,"
        " 'hub_offline': hub.HF_HUB_OFFLINE}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], env=env, cwd=REPO, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"hub_telemetry_off": True, "hub_offline": True}
    assert not list(tmp_path.rglob(ONNXRUNTIME_EVENTS))
