"""Voice: a 5 s note from upload to outcome with the offline models, and its transcription
alone."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import httpx

from bench.measure import RunTiming, median, timed_run
from testkit.support import KEY

CLIP = Path(__file__).resolve().parent / "data" / "dentist_5s.m4a"


def upload_to_outcome(base_url: str, runs: int) -> dict:
    """As the phone does it: ask for an upload URL, open the events feed, PUT the audio, and
    time from the PUT's first byte to the outcome on the feed. The first run warms up."""
    clip = CLIP.read_bytes()
    seconds, outcomes, segments = [], [], []
    with httpx.Client(base_url=base_url, timeout=60) as client:
        for _ in range(runs + 1):
            upload = client.post(
                "/api/voice-notes", json={"contentType": "audio/mp4"}, headers=KEY
            ).json()
            ended: dict[str, Any] = {}
            feed = threading.Thread(target=_follow, args=(client, upload["eventsUrl"], ended))
            feed.start()
            time.sleep(0.1)  # the feed is open before the upload, as the app does it
            start = time.perf_counter()
            put = httpx.put(upload["uploadUrl"], content=clip, headers=upload["uploadHeaders"])
            put.raise_for_status()
            feed.join(timeout=60)
            run: RunTiming = ended["run"]
            seconds.append(ended["at"] - start)
            outcomes.append(run.result.get("outcome") or run.result.get("code"))
            item = client.get(f"/api/captures/{upload['captureId']}", headers=KEY).json()
            segments.append(len(item.get("transcriptSegments") or []))
    return {
        "runs": runs,
        "median_s": round(median(seconds[1:]), 3),
        "min_s": round(min(seconds[1:]), 3),
        "max_s": round(max(seconds[1:]), 3),
        "outcomes": sorted(set(outcomes[1:])),
        # The transcript's timed segments each note got (none before issue 44).
        "segments": sorted(set(segments[1:])),
    }


def _follow(client: httpx.Client, events_url: str, ended: dict[str, object]) -> None:
    ended["run"] = timed_run(client, "GET", events_url, headers=KEY)
    ended["at"] = time.perf_counter()


def transcription_alone(runs: int) -> dict:
    """The offline Whisper model on the same clip, in this process, after a warm-up."""
    import asyncio

    from shared.adapters.transcriber.whisper_local import LocalWhisperTranscriber

    transcriber = LocalWhisperTranscriber()
    transcriber.warm_up()
    clip = CLIP.read_bytes()
    seconds, text, segments = [], "", 0
    for _ in range(runs):
        start = time.perf_counter()
        heard = asyncio.run(transcriber.transcribe(clip, "note.m4a", max_seconds=600))
        seconds.append(time.perf_counter() - start)
        text, segments = heard.text, len(getattr(heard, "segments", []))
    return {
        "runs": runs,
        "median_s": round(median(seconds), 3),
        "text": text.strip(),
        "segments": segments,
    }
