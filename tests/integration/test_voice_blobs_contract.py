"""What the services may rely on from the `VoiceNoteStore` for a kept recording, checked on both
implementations: the fake of tests/fakes.py (marked unit too) and the Blob Storage adapter on
Azurite: its size and type, a range streamed, the whole of it, the retention tag (which the
lifecycle policy deletes by), the listing with tags, reading one that is gone, and keeping an
upload apart from the uploads (a server-side copy, tagged, idempotent)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest

from shared.domain.documents import utcnow
from shared.domain.errors import AudioGone
from shared.domain.ports import VoiceNoteStore
from tests.fakes import FakeVoiceNotes

# More than one of the SDK's 4 MiB pieces, so a range crosses a piece boundary.
AUDIO = bytes(range(256)) * (20 * 1024 + 3)


@pytest.fixture(params=[pytest.param("fake", marks=pytest.mark.unit), pytest.param("azurite")])
def storage(request: pytest.FixtureRequest) -> str:
    """Set up here, outside the test's event loop: the emulators for "azurite"."""
    request.getfixturevalue("offline" if request.param == "fake" else "provisioned")
    return str(request.param)


@pytest.fixture
async def voice(storage: str) -> AsyncIterator[VoiceNoteStore]:
    if storage == "fake":
        yield FakeVoiceNotes()
        return
    from shared.bootstrap import adapters, reset

    yield adapters().voice
    await reset()


async def chunks(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


async def stored(voice: VoiceNoteStore, data: bytes = AUDIO) -> str:
    name = f"contract-{uuid.uuid4().hex[:8]}/{uuid.uuid4()}.m4a"
    await voice.upload(name, chunks(data), "audio/mp4", len(data))
    return name


async def test_a_recording_tells_its_size_type_and_age(voice: VoiceNoteStore) -> None:
    name = await stored(voice)
    found = await voice.stat(name)
    assert found is not None
    assert (found.name, found.size, found.content_type) == (name, len(AUDIO), "audio/mp4")
    assert abs(found.created_at - utcnow()) < timedelta(minutes=5)
    assert await voice.stat(name.replace(".m4a", ".ogg")) is None


async def test_a_range_is_streamed_and_the_whole_read(voice: VoiceNoteStore) -> None:
    name = await stored(voice)
    start, length = 4 * 1024 * 1024 - 10, 5000  # across the first piece's end
    pieces = [piece async for piece in voice.read(name, start, length)]
    assert b"".join(pieces) == AUDIO[start : start + length]
    tail = b"".join([p async for p in voice.read(name, len(AUDIO) - 7, 7)])
    assert tail == AUDIO[-7:]
    assert await voice.read_all(name) == AUDIO


async def test_reading_one_that_is_gone(voice: VoiceNoteStore) -> None:
    name = await stored(voice, b"short")
    await voice.delete(name)
    with pytest.raises(AudioGone):
        async for _ in voice.read(name, 0, 5):
            pass
    assert await voice.read_all(name) is None
    await voice.tag_retention(name, "30")  # a blob gone is no error


async def test_the_retention_tag_is_listed(voice: VoiceNoteStore) -> None:
    name = await stored(voice, b"tagged")
    other = await stored(voice, b"untagged")
    await voice.tag_retention(name, "365")
    await voice.tag_retention(name, "forever")  # replaced, not added
    listed = {s.name: s async for s in voice.every() if s.name in (name, other)}
    assert listed[name].retention == "forever" and listed[other].retention is None
    assert (listed[name].size, listed[name].content_type) == (6, "audio/mp4")


async def test_keeping_copies_the_upload_apart_tagged(voice: VoiceNoteStore) -> None:
    name = await stored(voice)
    container = await voice.keep(name, "365")
    assert container == "voice-recordings"
    copy = await voice.stat(name, container)
    assert copy is not None and copy.container == container
    assert (copy.size, copy.content_type) == (len(AUDIO), "audio/mp4")
    assert await voice.read_all(name, container) == AUDIO  # the copy is complete when kept
    start = 4 * 1024 * 1024 - 3
    ranged = b"".join([p async for p in voice.read(name, start, 100, container)])
    assert ranged == AUDIO[start : start + 100]
    assert await voice.exists(name)  # the upload stays until the caller deletes it
    listed = {(s.container, s.name): s async for s in voice.every() if s.name == name}
    assert set(listed) == {(container, name), (None, name)}
    assert listed[container, name].retention == "365" and listed[None, name].retention is None

    await voice.delete(name)  # the upload, once the item names the copy
    assert not await voice.exists(name) and await voice.exists(name, container)
    # Again (a redelivered trigger): the copy stands, only its tag is set again.
    assert await voice.keep(name, "forever") == container
    assert await voice.read_all(name, container) == AUDIO
    await voice.tag_retention(name, "30", container)
    listed = {s.container: s async for s in voice.every() if s.name == name}
    assert set(listed) == {container} and listed[container].retention == "30"

    await voice.delete(name, container)
    assert await voice.stat(name, container) is None
    with pytest.raises(AudioGone):  # neither an upload nor a copy: nothing to keep
        await voice.keep(name, "365")
