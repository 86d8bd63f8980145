"""Nothing leaves the machine: the usage telemetry of the libraries finrag runs, turned off.

The libraries read these variables once, when they are first imported, so they are set
when finrag itself is imported (the CLI and library use alike), and every process finrag
starts inherits them: parser workers, the embedded server.
"""

from __future__ import annotations

import os
import sys

# Forced, whatever the environment says: the README promises that nothing is sent.
TELEMETRY_OFF = {
    # onnxruntime (the ONNX embedder, and pymupdf's layout analysis in every PDF parse)
    # records usage events in ~/.cache/Microsoft/DeveloperTools/.onnxruntime for upload.
    "ORT_DISABLE_TELEMETRY": "1",
    # huggingface_hub, under transformers and sentence-transformers: usage pings.
    "HF_HUB_DISABLE_TELEMETRY": "1",
}
# torch, nltk, pymupdf itself and llama-cpp-python have no usage telemetry to turn off.
# Defaults only: models are loaded from local files, but a user may lift this on purpose.
OFFLINE_DEFAULTS = {"HF_HUB_OFFLINE": "1"}


def turn_off_telemetry() -> None:
    """Set the variables above; tell an onnxruntime that is already loaded, too."""
    os.environ.update(TELEMETRY_OFF)
    for name, value in OFFLINE_DEFAULTS.items():
        os.environ.setdefault(name, value)
    # An application that imported onnxruntime before finrag has read the variable already.
    onnxruntime = sys.modules.get("onnxruntime")
    if onnxruntime is not None:
        onnxruntime.disable_telemetry_events()
