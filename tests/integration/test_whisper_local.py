"""The offline Whisper transcriber: model assembly and verification, speech, silence, bad audio."""

import asyncio
import shutil
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from shared.adapters.transcriber import whisper_local
from shared.adapters.transcriber.whisper_local import (
    DEFAULT_CACHE_DIR,
    MODEL_BIN_SHA256,
    MODEL_BIN_SIZE,
    LocalWhisperTranscriber,
    ModelAssemblyError,
    _sha256_file,
    assemble_model,
)
from shared.domain.errors import AudioTooLong, AudioUndecodable, TranscriberUnavailable
from shared.domain.ports import Transcriber
from testkit.audio import silent_webm

AUDIO = Path(__file__).parents[1] / "data" / "audio"


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("whisper-cache")
    yield path
    # pytest keeps the last runs' temp folders; 145 MB models each add up.
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def scratch_cache(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path
    shutil.rmtree(tmp_path, ignore_errors=True)


@pytest.fixture(scope="module")
def transcriber(cache_dir: Path) -> LocalWhisperTranscriber:
    # Loaded once for the module: the load dominates the cost of every other test here.
    t = LocalWhisperTranscriber(cache_dir)
    t.warm_up()
    return t


def test_default_cache_is_the_ignored_models_folder_at_the_repo_root() -> None:
    assert Path(__file__).resolve().parents[2] / ".models" == DEFAULT_CACHE_DIR


def test_assembles_verified_model_and_reuses_it(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model_dir = assemble_model(cache_dir)
    model_bin = model_dir / "model.bin"
    assert model_bin.stat().st_size == MODEL_BIN_SIZE
    assert _sha256_file(model_bin) == MODEL_BIN_SHA256
    for name in ("config.json", "tokenizer.json", "vocabulary.txt"):
        assert (model_dir / name).is_file()
    assert not list(model_dir.glob("*.tmp"))
    before = model_bin.stat()

    writes: list[Path] = []
    real_write = whisper_local._write_atomically
    monkeypatch.setattr(
        whisper_local,
        "_write_atomically",
        lambda target, *a: writes.append(target) or real_write(target, *a),
    )
    assert assemble_model(cache_dir) == model_dir
    assert writes == []
    after = model_bin.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_corrupted_files_are_detected_and_rebuilt(scratch_cache: Path) -> None:
    model_dir = assemble_model(scratch_cache)
    model_bin = model_dir / "model.bin"
    # Same size, one byte flipped: only the sha256 can catch it.
    with model_bin.open("r+b") as f:
        f.seek(MODEL_BIN_SIZE // 2)
        byte = f.read(1)
        f.seek(MODEL_BIN_SIZE // 2)
        f.write(bytes([byte[0] ^ 0xFF]))
    (model_dir / "tokenizer.json").write_text("{}")

    assemble_model(scratch_cache)
    assert _sha256_file(model_bin) == MODEL_BIN_SHA256
    assert (model_dir / "tokenizer.json").stat().st_size > 1_000_000


def test_parts_not_matching_the_pin_fail_without_leaving_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(whisper_local, "MODEL_BIN_SHA256", "0" * 64)
    with pytest.raises(ModelAssemblyError) as info:
        assemble_model(tmp_path)
    # Callers treat a broken model install as "transcriber down", not as bad audio.
    assert isinstance(info.value, TranscriberUnavailable)
    assert list((tmp_path / whisper_local.MODEL_DIRNAME).iterdir()) == []


def test_is_a_transcriber(transcriber: LocalWhisperTranscriber) -> None:
    t: Transcriber = transcriber
    assert callable(t.transcribe)


@pytest.mark.parametrize("name", ["call_sarah.wav", "call_sarah.m4a"])
async def test_transcribes_speech(transcriber: LocalWhisperTranscriber, name: str) -> None:
    result = await transcriber.transcribe((AUDIO / name).read_bytes(), name, max_seconds=600)
    assert "sarah" in result.text.lower()
    assert "budget" in result.text.lower()
    assert result.text == result.text.strip()
    assert result.language == "en"
    assert result.duration_s == pytest.approx(3.0, abs=0.2)


async def test_concurrent_calls_share_the_model(transcriber: LocalWhisperTranscriber) -> None:
    names = ["call_sarah.wav", "call_sarah.m4a"]
    results = await asyncio.gather(
        *(transcriber.transcribe((AUDIO / n).read_bytes(), n, max_seconds=600) for n in names)
    )
    assert all("budget" in r.text.lower() for r in results)


async def test_silence_is_empty_text(transcriber: LocalWhisperTranscriber) -> None:
    result = await transcriber.transcribe(
        (AUDIO / "silence.wav").read_bytes(), "silence.wav", max_seconds=600
    )
    assert result.text == ""
    assert result.duration_s == pytest.approx(3.0, abs=0.1)


@pytest.mark.parametrize(
    ("name", "audio"),
    [
        ("not_audio.m4a", (AUDIO / "not_audio.m4a").read_bytes()),
        ("empty.m4a", b""),
        ("truncated.m4a", (AUDIO / "call_sarah.m4a").read_bytes()[:200]),
    ],
)
async def test_undecodable_audio(
    transcriber: LocalWhisperTranscriber, name: str, audio: bytes
) -> None:
    with pytest.raises(AudioUndecodable):
        await transcriber.transcribe(audio, name, max_seconds=600)


async def test_a_webm_is_held_to_the_limit_while_it_is_decoded(
    transcriber: LocalWhisperTranscriber,
) -> None:
    # A live WebM (as MediaRecorder writes it) says nothing of its length: the samples are
    # counted as they are decoded, and decoding stops once they pass the limit, holding no
    # more than the limit's worth (60 s at 16 kHz float32: 3.8 MB; two hours would be 460 MB).
    two_hours = silent_webm(2 * 3600)
    tracemalloc.start()
    try:
        with pytest.raises(AudioTooLong):
            await transcriber.transcribe(two_hours, "note.webm", max_seconds=60)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 3 * 60 * 16_000 * 4, peak

    within = await transcriber.transcribe(silent_webm(8), "note.webm", max_seconds=60)
    assert within.text == "" and within.duration_s == pytest.approx(8.0, abs=0.2)
