"""What the CPU and the llama.cpp build mean for the embedded model (issue 27).

ggml's CPU backend offers "extra buffer types" that repack weights for faster kernels:
on x86 the AMX buffer (only in a build compiled with AMX, i.e. a native build on an
Intel Xeon with AMX: ``GGML_NATIVE=ON``, pip's default when it compiles the wheel) and
CPU_REPACK. The AMX buffer takes Q4_0/Q4_1/Q8_0/Q4_K/Q5_K/Q6_K/IQ4_XS weights, so the
bundled Q4_K_M model runs its matrix products in ``ggml_backend_amx_mul_mat``, where
such builds are reported to segfault on the first decode (ggml-org/llama.cpp#20824;
ollama/ollama#17205 and #17249; stanfordnlp/dspy#10079). llama.cpp's model parameter
``use_extra_bufts`` keeps every weight in the plain CPU buffer, off that path; it is
turned off when the CPU has AMX (``llm.cpu_extra_buffers = "auto"``).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

AMX_FLAGS = ("amx_tile", "amx_int8", "amx_bf16")

REINSTALL = (
    'CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install --no-cache-dir --force-reinstall '
    "llama-cpp-python==0.3.36"
)


@cache
def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags (Linux /proc/cpuinfo; empty elsewhere)."""
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        if line.startswith("flags"):
            return frozenset(line.partition(":")[2].split())
    return frozenset()


def amx_flags() -> list[str]:
    return [f for f in AMX_FLAGS if f in cpu_flags()]


def use_extra_buffers(setting: str) -> bool:
    """Whether llama.cpp may repack weights into its extra CPU buffer types."""
    if setting == "auto":
        return not amx_flags()
    return setting == "on"


def build_has_amx(system_info: str) -> bool:
    """llama.cpp's system info lists AMX_INT8 only when the build compiled AMX kernels."""
    return "AMX_INT8 = 1" in system_info


def crash_fix(system_info: str, extra_buffers: bool) -> str:
    """What to do when the model's process died in native code."""
    steps = [f"reinstall a portable llama.cpp build: {REINSTALL}"]
    if extra_buffers:
        steps.append(
            "or keep the weights off llama.cpp's extra CPU buffers: "
            "FINRAG_LLM__CPU_EXTRA_BUFFERS=off (llm.cpu_extra_buffers)"
        )
    steps.append("or use Ollama (llm.backend = 'ollama')")
    why = ""
    if build_has_amx(system_info):
        why = "this llama.cpp was built with AMX kernels (a native build): "
    return why + "; ".join(steps)
