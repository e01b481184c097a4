"""Decode a voice note frame by frame, never past the longest one allowed.

A container's headers may not say how long its audio plays (WebM from a browser's
MediaRecorder carries no duration at all) or may lie, so the only length trusted is the one
decoded: samples are counted as frames come out of the decoder, and decoding stops with
`AudioTooLong` as soon as they pass the limit. Time and memory are then bounded by the limit,
whatever the file says: at most the limit's worth of audio is decoded, and only the local
transcriber keeps it (16 kHz mono float32, 3.8 MB a minute). Both transcribers use this: the
local one to get its samples, the OpenAI one to measure before it sends a file to the model.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import TYPE_CHECKING

from shared.domain.errors import AudioTooLong, AudioUndecodable, TranscriberUnavailable

if TYPE_CHECKING:
    import av
    import numpy as np

SAMPLING_RATE = 16_000


def _decoded(audio: bytes, filename: str, max_seconds: float) -> Iterator[av.AudioFrame]:
    """The first audio stream's frames, in order; AudioTooLong once they play longer than
    `max_seconds`, AudioUndecodable when the bytes are not audio PyAV can decode."""
    import av  # the blob trigger's only; keeps it out of every HTTP cold start

    if not audio:
        raise AudioUndecodable(f"{filename}: empty audio")
    seconds = 0.0
    try:
        with av.open(io.BytesIO(audio), mode="r", metadata_errors="ignore") as container:
            if not container.streams.audio:
                raise AudioUndecodable(f"{filename}: no audio stream")
            stream = container.streams.audio[0]
            for packet in container.demux(stream):
                try:
                    frames = packet.decode()
                except av.error.InvalidDataError:
                    continue  # one damaged packet; the rest may play (as ffmpeg does)
                for frame in frames:
                    # Per frame, with its own rate: a stream may change rate midway.
                    seconds += frame.samples / frame.sample_rate
                    if seconds > max_seconds:
                        raise AudioTooLong(f"{filename}: plays longer than {max_seconds:g} s")
                    yield frame
    except (AudioTooLong, AudioUndecodable):
        raise
    except MemoryError as exc:
        raise TranscriberUnavailable(f"{filename}: out of memory while decoding") from exc
    except Exception as exc:  # PyAV raises many unrelated types for bad input
        raise AudioUndecodable(f"{filename}: cannot decode audio: {exc}") from exc


def audio_seconds(audio: bytes, filename: str, max_seconds: float) -> float:
    """How long the recording plays, decoded and counted without keeping any sample:
    AudioTooLong past `max_seconds`, AudioUndecodable when nothing plays."""
    seconds = sum(
        frame.samples / frame.sample_rate for frame in _decoded(audio, filename, max_seconds)
    )
    if seconds == 0:
        raise AudioUndecodable(f"{filename}: no audio samples decoded")
    return seconds


def decode_mono_16k(audio: bytes, filename: str, max_seconds: float) -> np.ndarray:
    """The recording as 16 kHz mono float32 samples, which Whisper takes; AudioTooLong past
    `max_seconds`, before more than that is held."""
    import av
    import numpy as np

    resampler = av.AudioResampler(format="flt", layout="mono", rate=SAMPLING_RATE)
    chunks: list[np.ndarray] = []
    try:
        for frame in _decoded(audio, filename, max_seconds):
            frame.pts = None  # resampled as one run, whatever gaps the timestamps tell
            chunks.extend(out.to_ndarray()[0] for out in resampler.resample(frame))
        chunks.extend(out.to_ndarray()[0] for out in resampler.resample(None))
    except (AudioTooLong, AudioUndecodable, TranscriberUnavailable):
        raise
    except Exception as exc:  # the resampler refuses odd layouts and rates with many types
        raise AudioUndecodable(f"{filename}: cannot resample audio: {exc}") from exc
    samples = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.float32)
    if samples.size == 0:
        raise AudioUndecodable(f"{filename}: no audio samples decoded")
    return samples
