"""shared/services/audio.py on the fakes: a voice note's kept recording read back by its owner
only, deleted alone, transcribed again (a picked and edited capture keeps its bucket and edits;
a job delivered twice transcribes once), and the retention rule."""

from __future__ import annotations

from datetime import timedelta

import pytest

from shared.domain.capture import InboxItem
from shared.domain.classification import Bucket
from shared.domain.documents import utcnow
from shared.domain.errors import Conflict, NotFound
from shared.domain.preferences import Preferences, retention_tag
from shared.domain.transcript import Transcript, TranscriptSegment
from shared.services.audio import (
    delete_audio,
    expire_audio,
    handle_transcribe_job,
    read_recording,
    recording_of,
    request_transcription,
)
from shared.services.bucket_pick import pick_bucket
from shared.services.edit import FiledPatch, edit_filed
from shared.services.transcription import transcribe_voice_note
from tests.fakes import USER, Fakes, FakeVoiceNotes, guess, text_item, voice_item

AUDIO = bytes(range(256)) * 40  # 10,240 bytes


async def transcribed(fakes: Fakes, words: str = "Call Sarah about the budget") -> InboxItem:
    """A voice note uploaded, transcribed (its recording kept) and filed by the classifier."""
    item = fakes.repo.seed(voice_item())
    assert item.audio_blob is not None
    fakes.voice.put(item.audio_blob, AUDIO)
    fakes.transcriber.then(Transcript(text=words, language="en"))
    await transcribe_voice_note(
        item.audio_blob,
        len(AUDIO),
        lambda: AUDIO,
        fakes.adapters,
        fakes.preferences,
        max_bytes=10**6,
        max_seconds=60,
    )
    fakes.classifier.then(guess(Bucket.IDEAS, 0.9, "Budget"))
    from shared.services.worker import handle_classify_job

    await fakes.queues.deliver(lambda job: handle_classify_job(job, fakes.adapters))
    stored = fakes.repo.stored(USER, item.id)
    assert stored is not None and stored.filed_bucket is Bucket.IDEAS
    return stored


def kept(item: InboxItem) -> str:
    """The fake's key of the item's recording, where the item says it is."""
    assert item.audio_blob is not None
    return FakeVoiceNotes.key(item.audio_blob, item.audio_container)


async def body(pieces) -> bytes:
    return b"".join([piece async for piece in pieces])


# -- reading it back ------------------------------------------------------------------------------


async def test_its_owner_reads_the_recording_whole_or_a_range(fakes: Fakes) -> None:
    item = await transcribed(fakes)
    recording = await recording_of(USER, item.id, fakes.adapters)
    assert (recording.size, recording.content_type) == (len(AUDIO), "audio/mp4")
    assert await body(await read_recording(recording, 0, len(AUDIO) - 1, fakes.voice)) == AUDIO
    assert await body(await read_recording(recording, 100, 5000, fakes.voice)) == AUDIO[100:5001]


async def test_no_one_else_reads_it_and_a_text_capture_has_none(fakes: Fakes) -> None:
    item = await transcribed(fakes)
    with pytest.raises(NotFound) as other:
        await recording_of("someone-else", item.id, fakes.adapters)
    assert other.value.code is None or other.value.code == "NOT_FOUND"
    text = fakes.repo.seed(text_item())
    with pytest.raises(NotFound) as none:
        await recording_of(USER, text.id, fakes.adapters)
    assert none.value.code == "NO_AUDIO"


async def test_a_recording_deleted_between_stat_and_read_is_a_404(fakes: Fakes) -> None:
    item = await transcribed(fakes)
    recording = await recording_of(USER, item.id, fakes.adapters)
    fakes.voice.blobs.clear()
    with pytest.raises(NotFound) as gone:
        await read_recording(recording, 0, 10, fakes.voice)
    assert gone.value.code == "AUDIO_DELETED"


# -- deleting it alone ----------------------------------------------------------------------------


async def test_deleting_the_audio_keeps_the_capture_and_its_words(fakes: Fakes) -> None:
    item = await transcribed(fakes)
    await delete_audio(USER, item.id, utcnow(), fakes.adapters)
    after = fakes.repo.stored(USER, item.id)
    assert after is not None and after.text == item.text
    assert after.filed_bucket is Bucket.IDEAS and after.audio_blob is None
    assert after.audio_deleted_at is not None and fakes.voice.blobs == {}
    assert fakes.repo.filed_buckets(USER, item.id) == [Bucket.IDEAS]
    await delete_audio(USER, item.id, utcnow(), fakes.adapters)  # again: already gone
    with pytest.raises(NotFound) as gone:
        await recording_of(USER, item.id, fakes.adapters)
    assert gone.value.code == "AUDIO_DELETED"


async def test_a_text_capture_has_no_audio_to_delete_and_one_uploading_keeps_it(
    fakes: Fakes,
) -> None:
    text = fakes.repo.seed(text_item())
    with pytest.raises(Conflict) as none:
        await delete_audio(USER, text.id, utcnow(), fakes.adapters)
    assert none.value.code == "NO_AUDIO"
    waiting = fakes.repo.seed(voice_item())
    with pytest.raises(Conflict) as busy:
        await delete_audio(USER, waiting.id, utcnow(), fakes.adapters)
    assert busy.value.code == "AUDIO_IN_USE"
    # Another user's: nothing deleted, nothing told (as DELETE of a capture).
    await delete_audio("someone-else", waiting.id, utcnow(), fakes.adapters)
    assert fakes.repo.stored(USER, waiting.id) == waiting


# -- transcribing again ---------------------------------------------------------------------------

AGAIN = Transcript(
    text="Call Sara about the budget",
    language="en",
    segments=[
        TranscriptSegment(start=0.0, end=1.1, text="Call Sara"),
        TranscriptSegment(start=1.1, end=2.6, text="about the budget"),
    ],
)


async def test_transcribing_again_keeps_a_users_pick_and_edits(fakes: Fakes) -> None:
    item = await transcribed(fakes)
    await pick_bucket(USER, item.id, Bucket.PROJECTS, fakes.adapters)
    filed = await fakes.repo.get_filed(USER, Bucket.PROJECTS, item.id)
    assert filed is not None and filed.etag is not None
    patch = FiledPatch.model_validate({"title": "Budget with Sara", "nextAction": "Email her"})
    await edit_filed(USER, item.id, patch, filed.etag, fakes.adapters)

    asked = await request_transcription(USER, item.id, utcnow(), fakes.adapters)
    assert asked.transcription_pending
    (job,) = fakes.queues.transcribe_jobs
    fakes.transcriber.then(AGAIN)
    await handle_transcribe_job(job, fakes.adapters, max_seconds=60, now=utcnow())
    await fakes.drain()

    after = fakes.repo.stored(USER, item.id)
    assert after is not None and not after.transcription_pending
    assert after.text == "Call Sara about the budget"
    assert [s.text for s in after.transcript_segments or []] == ["Call Sara", "about the budget"]
    assert (after.filed_bucket, after.chosen_by) == (Bucket.PROJECTS, "user")
    assert (after.title, after.next_action) == ("Budget with Sara", "Email her")
    (kept,) = [
        await fakes.repo.get_filed(USER, b, item.id)
        for b in fakes.repo.filed_buckets(USER, item.id)
    ]
    assert kept is not None and kept.text == "Call Sara about the budget"
    assert kept.title == "Budget with Sara"


async def test_a_job_delivered_twice_transcribes_once_and_asking_twice_is_one_job(
    fakes: Fakes,
) -> None:
    item = await transcribed(fakes)
    first = await request_transcription(USER, item.id, utcnow(), fakes.adapters)
    second = await request_transcription(USER, item.id, utcnow(), fakes.adapters)
    assert second.transcription_requested_at == first.transcription_requested_at
    jobs = fakes.queues.transcribe_jobs
    assert len(jobs) == 2 and jobs[0] == jobs[1]  # the same job again: done once
    fakes.transcriber.then(AGAIN)
    heard_before = len(fakes.transcriber.heard)
    for job in jobs:
        await handle_transcribe_job(job, fakes.adapters, max_seconds=60, now=utcnow())
    assert len(fakes.transcriber.heard) == heard_before + 1


async def test_no_transcription_without_a_recording(fakes: Fakes) -> None:
    text = fakes.repo.seed(text_item())
    with pytest.raises(Conflict) as none:
        await request_transcription(USER, text.id, utcnow(), fakes.adapters)
    assert none.value.code == "NO_AUDIO"
    item = await transcribed(fakes)
    await delete_audio(USER, item.id, utcnow(), fakes.adapters)
    with pytest.raises(Conflict) as deleted:
        await request_transcription(USER, item.id, utcnow(), fakes.adapters)
    assert deleted.value.code == "AUDIO_DELETED"
    waiting = fakes.repo.seed(voice_item())
    with pytest.raises(Conflict) as early:
        await request_transcription(USER, waiting.id, utcnow(), fakes.adapters)
    assert early.value.code == "NOT_TRANSCRIBED"
    with pytest.raises(NotFound):
        await request_transcription("someone-else", item.id, utcnow(), fakes.adapters)


# -- retention ------------------------------------------------------------------------------------


def test_retention_classes_never_delete_early() -> None:
    assert retention_tag(None) == "forever"
    assert retention_tag(1) == "30" and retention_tag(30) == "30" and retention_tag(31) == "90"
    assert retention_tag(365) == "365" and retention_tag(3650) == "3650"


async def test_the_retention_rule_lets_go_past_it_and_tags_the_rest(fakes: Fakes) -> None:
    now = utcnow()
    old = await transcribed(fakes)
    young = await transcribed(fakes)
    assert old.audio_blob and young.audio_blob
    fakes.voice.created[kept(old)] = now - timedelta(days=31)
    await fakes.preferences.replace(
        Preferences.default(USER).model_copy(update={"audio_retention_days": 30})
    )
    orphan = f"{USER}/00000000-0000-4000-8000-000000000000.m4a"
    fakes.voice.put(orphan, b"left by a crash", created_at=now - timedelta(days=40))

    deleted, tagged = await expire_audio(now, fakes.adapters, fakes.preferences)

    assert (deleted, tagged) == (2, 1)
    assert set(fakes.voice.blobs) == {kept(young)}
    assert fakes.voice.tags[kept(young)] == "30"
    gone = fakes.repo.stored(USER, old.id)
    assert gone is not None and gone.audio_blob is None and gone.audio_deleted_at is not None
    assert gone.text == old.text
    # Kept for ever: nothing goes, and the tag says so (the lifecycle policy deletes none).
    await fakes.preferences.replace(
        Preferences.default(USER).model_copy(update={"audio_retention_days": None})
    )
    fakes.voice.created[kept(young)] = now - timedelta(days=5000)
    assert await expire_audio(now, fakes.adapters, fakes.preferences) == (0, 1)
    assert fakes.voice.tags[kept(young)] == "forever"


# -- the export -----------------------------------------------------------------------------------


async def test_the_export_puts_each_recording_beside_its_note_embedded(fakes: Fakes) -> None:
    import io
    import json
    import zipfile

    from shared.services.export import export_zip

    kept_item = await transcribed(fakes)
    deleted = await transcribed(fakes, "Call Sarah about the budget again")
    await delete_audio(USER, deleted.id, utcnow(), fakes.adapters)

    async def zipped(**voice) -> zipfile.ZipFile:
        pieces = export_zip(USER, utcnow(), fakes.repo, fakes.filed, **voice)
        return zipfile.ZipFile(io.BytesIO(b"".join([p async for p in pieces])))

    archive = await zipped(voice=fakes.voice)
    assert archive.testzip() is None
    assert sorted(archive.namelist()) == [
        "Ideas/Budget (2).md",
        "Ideas/Budget.m4a",
        "Ideas/Budget.md",
        "captures.jsonl",
    ] or sorted(archive.namelist()) == [
        "Ideas/Budget (2).m4a",
        "Ideas/Budget (2).md",
        "Ideas/Budget.md",
        "captures.jsonl",
    ]
    (audio,) = [n for n in archive.namelist() if n.endswith(".m4a")]
    assert archive.read(audio) == AUDIO
    assert archive.getinfo(audio).compress_type == zipfile.ZIP_STORED
    note = archive.read(audio.replace(".m4a", ".md")).decode()
    assert note.rstrip().endswith(f"![[{audio}]]")
    other = [n for n in archive.namelist() if n.endswith(".md") and n != audio[:-4] + ".md"]
    assert "![[" not in archive.read(other[0]).decode()
    # captures.jsonl names only recordings that exist.
    lines = [json.loads(line) for line in archive.read("captures.jsonl").splitlines()]
    named = {line["id"]: line["audioBlob"] for line in lines}
    assert named == {kept_item.id: kept_item.audio_blob, deleted.id: None}
    assert kept(kept_item) in fakes.voice.blobs

    without = await zipped()
    assert not [n for n in without.namelist() if n.endswith(".m4a")]


# -- where it is kept -----------------------------------------------------------------------------


def stored_before_the_move(fakes: Fakes, item: InboxItem) -> InboxItem:
    """The item and its recording as stored before recordings were kept apart: the recording
    in the upload container, and the item naming no container."""
    assert item.audio_blob is not None and item.audio_container is not None
    data = fakes.voice.blobs.pop(kept(item))
    fakes.voice.put(item.audio_blob, data)
    return fakes.repo.seed(item.model_copy(update={"audio_container": None}))


async def test_a_recording_kept_before_the_move_still_plays_and_goes(fakes: Fakes) -> None:
    from shared.services.export import export_zip

    item = stored_before_the_move(fakes, await transcribed(fakes))
    recording = await recording_of(USER, item.id, fakes.adapters)
    assert recording.container is None
    assert await body(await read_recording(recording, 10, 99, fakes.voice)) == AUDIO[10:100]
    pieces = export_zip(USER, utcnow(), fakes.repo, fakes.filed, voice=fakes.voice)
    assert AUDIO in b"".join([p async for p in pieces])  # stored, so its bytes are whole

    await request_transcription(USER, item.id, utcnow(), fakes.adapters)
    (job,) = fakes.queues.transcribe_jobs
    fakes.transcriber.then(AGAIN)
    await handle_transcribe_job(job, fakes.adapters, max_seconds=60, now=utcnow())
    assert fakes.transcriber.heard[-1][1] == AUDIO

    await delete_audio(USER, item.id, utcnow(), fakes.adapters)
    assert fakes.voice.blobs == {}
    gone = fakes.repo.stored(USER, item.id)
    assert gone is not None and gone.audio_blob is None and gone.audio_container is None


async def test_the_recordings_container_is_where_every_use_reads(fakes: Fakes) -> None:
    item = await transcribed(fakes)
    assert item.audio_container == "voice-recordings"
    # An upload of the same name would be read by mistake; it is not there, and not read.
    assert set(fakes.voice.blobs) == {kept(item)}
    recording = await recording_of(USER, item.id, fakes.adapters)
    assert recording.container == "voice-recordings"
    assert await body(await read_recording(recording, 0, 9, fakes.voice)) == AUDIO[:10]
    assert (
        await request_transcription(USER, item.id, utcnow(), fakes.adapters)
    ).transcription_pending


async def test_the_retention_timer_finishes_a_move_cut_short_and_takes_old_uploads(
    fakes: Fakes,
) -> None:
    now = utcnow()
    moved = await transcribed(fakes)
    assert moved.audio_blob is not None
    fakes.voice.put(moved.audio_blob, AUDIO)  # its upload, left by a crash before its delete
    legacy = stored_before_the_move(fakes, await transcribed(fakes))
    assert legacy.audio_blob is not None
    fakes.voice.created[legacy.audio_blob] = now - timedelta(days=400)  # past 365 days

    deleted, tagged = await expire_audio(now, fakes.adapters, fakes.preferences)

    assert (deleted, tagged) == (2, 0)
    assert set(fakes.voice.blobs) == {kept(moved)}
    assert fakes.repo.stored(USER, moved.id) == moved  # the capture and its copy stay
    gone = fakes.repo.stored(USER, legacy.id)
    assert gone is not None and gone.audio_blob is None and gone.audio_deleted_at is not None


async def test_deleting_a_capture_deletes_its_copy_and_any_upload_left(fakes: Fakes) -> None:
    from shared.services.inbox import delete_capture

    item = await transcribed(fakes)
    assert item.audio_blob is not None
    fakes.voice.put(item.audio_blob, AUDIO)  # a move cut short before the upload's delete
    await delete_capture(USER, item.id, fakes.adapters)
    assert fakes.voice.blobs == {}


# -- a spoken answer ------------------------------------------------------------------------------


async def test_a_question_is_answered_in_words_heard_and_nothing_is_stored(fakes: Fakes) -> None:
    from shared.domain.capture import Status
    from shared.services.audio import hear_answer

    item = fakes.repo.seed(voice_item(status=Status.TRANSCRIBING))
    silent = await fakes.repo.save(item.transcribed(""))
    from shared.services.filing import file_capture

    asked = await file_capture(
        silent,
        silent.classified(guess(None, 0.0, "Empty voice note", "Say it again?")),
        fakes.repo,
        fakes.outbox,
    )
    assert asked.open_interrupt is not None
    fakes.transcriber.then(AGAIN)
    heard = await hear_answer(USER, asked.id, b"audio", "answer.webm", 60, fakes.adapters)
    assert heard.text == "Call Sara about the budget" and len(heard.segments) == 2
    assert fakes.repo.stored(USER, asked.id) == asked  # nothing stored
    assert fakes.voice.blobs == {}

    filed = await transcribed(fakes)
    with pytest.raises(Conflict) as refused:
        await hear_answer(USER, filed.id, b"audio", "answer.webm", 60, fakes.adapters)
    assert refused.value.code == "NOT_AWAITING_CLARIFICATION"
