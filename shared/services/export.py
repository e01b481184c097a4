"""The user's data to take away (GET /api/export): a zip written as it is sent, one Markdown file
per filed item (YAML front matter, then the title and the text) in a folder per bucket, with
file names an Obsidian vault takes as they are, and captures.jsonl with every inbox item. With
the recordings (`?audio=true`), a voice note's recording sits beside its note under the same
name, embedded in it as Obsidian embeds a file (`![[People/Call Sarah.m4a]]`).

Memory stays flat whatever the user has: the stores are read a page at a time, and zipfile
writes into a small buffer that is handed on after every file (a zip to a stream that cannot
seek carries each entry's sizes after its data, which every unzip reads)."""

from __future__ import annotations

import json
import re
import struct
import unicodedata
import zipfile
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime

from shared.domain.audio import StoredAudio
from shared.domain.capture import InboxItem
from shared.domain.classification import Bucket
from shared.domain.documents import utc_text
from shared.domain.errors import AudioGone
from shared.domain.filed import FiledItem
from shared.domain.ports import CaptureRepository, FiledItems, VoiceNoteStore
from shared.services.inbox import get_capture

NAME_MAX = 100
# And in UTF-8 bytes: Linux and macOS take 255 a name, with room for " (NN)" and ".md".
NAME_BYTES = 200
# Characters Obsidian (or Windows, or a link) will not take in a file name, and controls.
_UNSAFE = re.compile(r'[/\\:*?"<>|#^\[\]\x00-\x1f\x7f]')
# Names Windows keeps for devices, whatever follows a dot ("con.md", "COM1.md", "nul.tar.md");
# Windows 11 also takes the superscript digits for COM and LPT.
_DEVICES = frozenset(
    {"con", "prn", "aux", "nul", "conin$", "conout$"}
    | {f"{port}{n}" for port in ("com", "lpt") for n in "0123456789\u00b9\u00b2\u00b3"}
)
# Unicode categories a name drops: format characters (bidi overrides and isolates, zero-width
# spaces and joiners, the BOM, the soft hyphen), which make a name read other than it is, and
# the line and paragraph separators, which make it two lines.
_DROPPED = frozenset({"Cf"})
_SPACES = frozenset({"Zl", "Zp", "Cc"})
# The earliest time a zip entry can carry (MS-DOS dates start in 1980).
_ZIP_EPOCH = datetime(1980, 1, 1, tzinfo=UTC)
# captures.jsonl is handed on after this many bytes.
FLUSH_BYTES = 64 * 1024
# Inbox items read at a time: memory is one page, and the local server, which runs the whole
# query again for every page, is asked ten times for 10,000 rather than a hundred.
INBOX_PAGE = 1000


def export_filename(today: date) -> str:
    return f"second-brain-{today.isoformat()}.zip"


class _Buffer:
    """What zipfile writes into: kept until drained. No seek, so zipfile streams."""

    def __init__(self) -> None:
        self._chunks: list[bytes] = []
        self._offset = 0
        self.pending = 0  # bytes written and not yet drained

    def write(self, data: bytes) -> int:
        self._chunks.append(bytes(data))
        self._offset += len(data)
        self.pending += len(data)
        return len(data)

    def tell(self) -> int:
        return self._offset

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass  # asked for by zipfile's type (typeshed); zipfile never closes a file it was given

    def drain(self) -> bytes:
        data, self._chunks, self.pending = b"".join(self._chunks), [], 0
        return data


async def export_zip(
    user_id: str,
    now: datetime,
    repo: CaptureRepository,
    filed: FiledItems,
    voice: VoiceNoteStore | None = None,
) -> AsyncIterator[bytes]:
    """The zip's bytes, in pieces of one file or FLUSH_BYTES each. A note is dated by its
    capture's time, captures.jsonl by `now`. `voice`: put each filed voice note's recording
    beside its note, streamed a piece at a time (never a whole recording in memory)."""
    buffer = _Buffer()
    gone: set[str] = set()  # recordings found missing: captures.jsonl names none of them
    kept: set[str] = set()  # recordings written beside their notes
    with zipfile.ZipFile(buffer, mode="w", compression=zipfile.ZIP_DEFLATED) as archive:
        for bucket in Bucket:
            names = VaultNames()
            async for item in filed.every(user_id, bucket):
                base = f"{bucket.value}/{names.name_for(item)}"
                embedded = None
                if voice is not None and item.source == "voice":
                    recording = await _recording(item.user_id, item.id, repo, voice)
                    if recording is not None:
                        embedded = f"{base}.{recording.name.rsplit('.', 1)[-1]}"
                        entry = _entry(embedded, item.created_at, zipfile.ZIP_STORED)
                        try:
                            kept.add(recording.name)
                            with archive.open(entry, mode="w") as out:
                                async for piece in voice.read(
                                    recording.name, 0, recording.size, recording.container
                                ):
                                    out.write(piece)
                                    yield buffer.drain()
                        except AudioGone:
                            gone.add(recording.name)  # deleted since: the entry ends short
                            embedded = None
                archive.writestr(_entry(f"{base}.md", item.created_at), markdown(item, embedded))
                yield buffer.drain()
        with archive.open(_entry("captures.jsonl", now), mode="w") as lines:
            inbox = repo.newest(user_id, at_or_before=None, status=None, page_items=INBOX_PAGE)
            async for capture in inbox:
                if capture.is_deleted:
                    continue
                line = capture.to_json()
                if line.get("audioBlob") in gone or not await _still_there(capture, voice, kept):
                    line["audioBlob"] = line["audioContainer"] = None
                lines.write(json.dumps(line, ensure_ascii=False).encode() + b"\n")
                if buffer.pending >= FLUSH_BYTES:
                    yield buffer.drain()
    yield buffer.drain()  # the end of the last entry and the central directory


async def _still_there(capture: InboxItem, voice: VoiceNoteStore | None, kept: set[str]) -> bool:
    """Whether the recording `capture` names is there to be had (not asked without `voice`):
    a note that never arrived, or one whose recording went, names none in captures.jsonl."""
    if voice is None or capture.audio_blob is None or capture.audio_blob in kept:
        return True
    if capture.awaits_audio:
        return True  # its blob is where the upload will go
    return await voice.stat(capture.audio_blob, capture.audio_container) is not None


async def _recording(
    user_id: str, capture_id: str, repo: CaptureRepository, voice: VoiceNoteStore
) -> StoredAudio | None:
    """A filed voice note's recording, if it is kept (its inbox item names it) and there."""
    capture = await repo.get(user_id, capture_id)
    if capture is None or capture.audio_blob is None:
        return None
    return await voice.stat(capture.audio_blob, capture.audio_container)


def _entry(path: str, when: datetime, compression: int = zipfile.ZIP_DEFLATED) -> zipfile.ZipInfo:
    """An entry dated `when`: in the MS-DOS fields, which have no zone, as UTC to the even
    second, and exactly in the extended timestamp field (Info-ZIP "UT"), which unzip, 7-Zip and
    macOS's Archive Utility read as the instant it is."""
    instant = max(when.astimezone(UTC), _ZIP_EPOCH)
    info = zipfile.ZipInfo(path, date_time=instant.timetuple()[:6])
    # Recordings are stored as they are: compressed audio shrinks no further.
    info.compress_type = compression
    info.external_attr = 0o644 << 16
    seconds = int(instant.timestamp())
    if seconds < 2**32:  # the field's four bytes, unsigned as unzip reads them
        info.extra = struct.pack("<HHBI", 0x5455, 5, 1, seconds)
    return info


class VaultNames:
    """File names for one folder: the title made safe, cut to NAME_MAX, each used once as
    macOS and Windows compare names (case aside, and on macOS, "Zoë" written as one character
    or as "e" and an accent are one name)."""

    def __init__(self) -> None:
        self._taken: set[str] = set()

    def name_for(self, item: FiledItem) -> str:
        base = safe_name(item.title) or safe_name(item.id) or "Untitled"
        name, n = base, 1
        while same_name_key(name) in self._taken:
            n += 1
            suffix = f" ({n})"
            name = _cut(base, NAME_MAX - len(suffix)).rstrip() + suffix
        self._taken.add(same_name_key(name))
        return name


def same_name_key(name: str) -> str:
    """What two names have in common when a file system takes them for one."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", name).casefold())


def safe_name(title: str) -> str:
    """A file name (without ".md") that every system creates as written: NFC, no character
    Obsidian, Windows or a link refuses, no bidi control or invisible character, no control,
    no leading dot, no trailing dot or space, no Windows device name, at most NAME_MAX
    characters and NAME_BYTES bytes."""
    name = "".join(_kept(ch) for ch in unicodedata.normalize("NFC", title))
    name = " ".join(_UNSAFE.sub(" ", name).split())
    name = _cut(name.lstrip(". "), NAME_MAX).rstrip(". ")
    if name.split(".", 1)[0].rstrip(" ").casefold() in _DEVICES:
        name = "_" + name
    return name


def _kept(ch: str) -> str:
    category = unicodedata.category(ch)
    if category in _DROPPED:
        return ""
    return " " if category in _SPACES else ch


def _cut(name: str, most: int) -> str:
    """At most `most` characters and NAME_BYTES bytes of UTF-8, never half a character, nor a
    letter without the accents that follow it."""
    end = min(len(name), most)
    while len(name[:end].encode()) > NAME_BYTES:
        end -= 1
    while 0 < end < len(name) and unicodedata.combining(name[end]):
        end -= 1
    return name[:end]


def markdown(item: FiledItem, audio: str | None = None) -> str:
    """YAML front matter (every value JSON-quoted, which YAML reads as it is), then the title as
    a heading and the text; `audio`, the recording's path in the vault, embedded after them."""
    front = {
        "id": item.id,
        "bucket": item.bucket.value,
        "created": utc_text(item.created_at),
        "people": item.people,
        "due": item.due_date.isoformat() if item.due_date else None,
        "done": item.done,
        "source": item.source,
    }
    lines = ["---", *(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in front.items()), "---"]
    extra = {
        "Next action": getattr(item, "next_action", None),
        "One-liner": getattr(item, "one_liner", None),
        "Follow up": getattr(item, "follow_up", None),
    }
    body = [f"# {' '.join(item.title.split())}", "", item.text.strip(), ""]
    body += [f"{label}: {value}" for label, value in extra.items() if value]
    if audio is not None:
        body += ["", f"![[{audio}]]"]
    return "\n".join([*lines, "", *body]).rstrip() + "\n"


async def capture_markdown(user_id: str, capture_id: str, repo: CaptureRepository) -> str:
    """One capture of the user's as Markdown (the MCP resource `capture://{id}`): a filed one
    as the export writes it; one not filed (yet) with its status, its question and its
    answers, from the inbox item. NotFound for no capture of the user's."""
    item = await get_capture(user_id, capture_id, repo)
    filed = (
        await repo.get_filed(user_id, item.filed_bucket, item.id)
        if item.filed_bucket is not None
        else None
    )
    return markdown(filed) if filed is not None else _inbox_markdown(item)


def _inbox_markdown(item: InboxItem) -> str:
    front = {
        "id": item.id,
        "status": item.status.value,
        "created": utc_text(item.created_at),
        "source": item.source,
    }
    lines = ["---", *(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in front.items()), "---"]
    title = " ".join((item.title or "").split()) or "Capture"
    body = [f"# {title}", "", (item.text or "").strip(), ""]
    if item.question_text:
        body.append(f"Question: {item.question_text}")
    body += [f"Answer: {c.text}" for c in item.clarifications]
    return "\n".join([*lines, "", *body]).rstrip() + "\n"
