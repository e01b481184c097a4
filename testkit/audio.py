"""Long recordings made when a test or benchmark needs them, rather than committed: silence,
encoded once for a second and then repeated by timestamp, so an hour costs a few hundred KB
and a fraction of a second to make. WebM as a browser's MediaRecorder writes it (live: no
duration in its headers, no cues), so only decoding can tell how long it plays."""

from __future__ import annotations

import io

# Opus at its lowest rate, 120 ms packets: silence is a few bytes a frame.
_FRAME_MS = 120
_RATE = 48_000


def silent_webm(seconds: float) -> bytes:
    """`seconds` of silent mono Opus in a live WebM (no duration anywhere in its headers)."""
    import av
    import numpy as np

    out = io.BytesIO()
    with av.open(out, "w", format="webm", options={"live": "1"}) as container:
        stream = container.add_stream("libopus", rate=_RATE, layout="mono")
        stream.options = {"frame_duration": str(_FRAME_MS), "application": "voip"}
        stream.bit_rate = 6_000
        frame = av.AudioFrame.from_ndarray(
            np.zeros((1, _RATE), dtype=np.int16), format="s16", layout="mono"
        )
        frame.sample_rate = _RATE
        frame.pts = 0
        encoded = [*stream.encode(frame), *stream.encode(None)]
        # A frame from the middle: the first ones carry the encoder's start-up.
        model = encoded[len(encoded) // 2]
        step = _RATE * _FRAME_MS // 1000
        for i in range(round(seconds * 1000 / _FRAME_MS)):
            packet = av.Packet(bytes(model))
            packet.pts = packet.dts = i * step
            packet.duration = step
            packet.time_base = model.time_base
            packet.stream = stream
            container.mux(packet)
    return out.getvalue()
