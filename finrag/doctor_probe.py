"""`python -m finrag.doctor_probe embedder SETTINGS_JSON MODELS_DIR`: one real embedding
in a process of its own, for `finrag doctor` (finrag.doctor).

A fault in native code (onnxruntime, torch) kills this process, not doctor, which
reports the signal; a hang is bounded by doctor's timeout. Prints one JSON line: what
was loaded and how long it took, or the error with its hint (exit 1).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def embedder(settings_json: str, models_dir: str) -> dict[str, object]:
    from finrag.config import EmbedSettings
    from finrag.embed import get_embedder

    started = time.perf_counter()
    embedder = get_embedder(EmbedSettings.model_validate_json(settings_json), Path(models_dir))
    vectors = embedder.embed(["Total net revenue was $9.6 billion."])
    return {
        "model_id": embedder.spec.model_id,
        "dimension": int(vectors.shape[1]),
        "seconds": round(time.perf_counter() - started, 3),
    }


def main(argv: list[str]) -> int:
    from finrag.errors import FinragError

    try:
        result = {"embedder": embedder}[argv[1]](*argv[2:])
    except FinragError as exc:
        sys.stdout.write(json.dumps({"error": exc.message, "hint": exc.hint}) + "\n")
        return 1
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
