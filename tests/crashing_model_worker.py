"""The real model worker (finrag/llm/worker.py) whose generation dies by a real SIGSEGV,
as a natively built llama.cpp's AMX kernels do on the first decode (issue 27): the
model loads, then the first chat request kills the process with the signal (with
FAULT=hang, it never returns instead). Tests point _FINRAG_TEST_MODEL_WORKER here."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's finrag

from finrag.llm import worker


def crash(llama, request, send):
    if os.environ.get("FAULT") == "hang":  # a decode that never returns
        time.sleep(3600)
    os.kill(os.getpid(), signal.SIGSEGV)


worker.generate = crash
sys.exit(worker.main(sys.argv))
