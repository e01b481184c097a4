"""Which audio a voice note may be, and where its blob lives:
`voice-notes/{userId}/{captureId}.{ext}`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from shared.domain.ids import USER_ID

# Content types phones and browsers send for m4a/mp4/aac/mpeg/wav/ogg/webm recordings.
_EXTENSION_OF_TYPE = {
    "audio/mp4": "m4a",
    "audio/m4a": "m4a",
    "audio/x-m4a": "m4a",
    "video/mp4": "mp4",
    "audio/aac": "aac",
    "audio/x-aac": "aac",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/vnd.wave": "wav",
    "audio/ogg": "ogg",
    "audio/webm": "webm",
}
_TYPE_OF_EXTENSION = {
    "m4a": "audio/mp4",
    "mp4": "video/mp4",
    "aac": "audio/aac",
    "mp3": "audio/mpeg",
    "mpeg": "audio/mpeg",
    "wav": "audio/wav",
    "ogg": "audio/ogg",
    "oga": "audio/ogg",
    "webm": "audio/webm",
}
# Clients that don't know the type send one of these; then the file name decides.
_GENERIC_TYPES = {"", "application/octet-stream", "binary/octet-stream"}

ACCEPTED_TYPES = sorted(_EXTENSION_OF_TYPE)

_BLOB_NAME = re.compile(
    rf"(?P<user_id>{USER_ID.pattern})/(?P<capture_id>[0-9a-f-]{{36}})\.(?P<extension>[a-z0-9]{{2,5}})"
)


@dataclass(frozen=True)
class AudioType:
    content_type: str
    extension: str


def audio_type(content_type: str | None, filename: str | None = None) -> AudioType | None:
    """The accepted audio type of an upload, or None when it is not one we take."""
    declared = (content_type or "").split(";")[0].strip().lower()
    if declared in _EXTENSION_OF_TYPE:
        return AudioType(declared, _EXTENSION_OF_TYPE[declared])
    if declared in _GENERIC_TYPES and filename and "." in filename:
        extension = filename.rsplit(".", 1)[1].lower()
        if extension in _TYPE_OF_EXTENSION:
            return AudioType(_TYPE_OF_EXTENSION[extension], extension)
    return None


def blob_name(user_id: str, capture_id: str, extension: str) -> str:
    """The blob's name inside the voice-notes container."""
    return f"{user_id}/{capture_id}.{extension}"


@dataclass(frozen=True)
class BlobPath:
    user_id: str
    capture_id: str
    extension: str


def parse_blob_name(name: str) -> BlobPath | None:
    """`{userId}/{captureId}.{ext}` (the container prefix already removed), or None."""
    m = _BLOB_NAME.fullmatch(name)
    return BlobPath(**m.groupdict()) if m else None


@dataclass(frozen=True)
class StoredAudio:
    """A recording as storage holds it. `retention`: its `retention` tag (None: untagged),
    which storage's lifecycle policy deletes by. `container`: where it is, as an inbox item's
    `audio_container` names it (None: the upload container)."""

    name: str
    size: int
    content_type: str
    created_at: datetime
    retention: str | None = None
    container: str | None = None
