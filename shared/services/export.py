"""The user's data to take away (GET /api/export): a zip written as it is sent, one Markdown file
per filed item (YAML front matter, then the title and the text) in a folder per bucket, with
file names an Obsidian vault takes as they are, and captures.jsonl with every inbox item.

Memory stays flat whatever the user has: the stores are read a page at a time, and zipfile
writes into a small buffer that is handed on after every file (a zip to a stream that cannot
seek carries each entry's sizes after its data, which every unzip reads)."""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import AsyncIterator
from datetime import date

from shared.domain.classification import Bucket
from shared.domain.documents import utc_text
from shared.domain.filed import FiledItem
from shared.domain.ports import CaptureRepository, FiledItems

NAME_MAX = 100
# Characters Obsidian (or Windows, or a link) will not take in a file name, and controls.
_UNSAFE = re.compile(r'[/\\:*?"<>|#^\[\]\x00-\x1f\x7f]')
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

    def drain(self) -> bytes:
        data, self._chunks, self.pending = b"".join(self._chunks), [], 0
        return data


async def export_zip(
    user_id: str, repo: CaptureRepository, filed: FiledItems
) -> AsyncIterator[bytes]:
    """The zip's bytes, in pieces of one file or FLUSH_BYTES each."""
    buffer = _Buffer()
    with zipfile.ZipFile(buffer, mode="w", compression=zipfile.ZIP_DEFLATED) as archive:  # type: ignore[arg-type]
        for bucket in Bucket:
            names = VaultNames()
            async for item in filed.every(user_id, bucket):
                path = f"{bucket.value}/{names.name_for(item)}.md"
                archive.writestr(_entry(path), markdown(item))
                yield buffer.drain()
        with archive.open(_entry("captures.jsonl"), mode="w") as lines:
            inbox = repo.newest(user_id, at_or_before=None, status=None, page_items=INBOX_PAGE)
            async for capture in inbox:
                if capture.is_deleted:
                    continue
                lines.write(json.dumps(capture.to_json(), ensure_ascii=False).encode() + b"\n")
                if buffer.pending >= FLUSH_BYTES:
                    yield buffer.drain()
    yield buffer.drain()  # the end of the last entry and the central directory


def _entry(path: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(path, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    return info


class VaultNames:
    """File names for one folder: the title made safe, cut to NAME_MAX, each used once (case
    aside, as macOS and Windows compare them)."""

    def __init__(self) -> None:
        self._taken: set[str] = set()

    def name_for(self, item: FiledItem) -> str:
        base = safe_name(item.title) or safe_name(item.id) or "Untitled"
        name, n = base, 1
        while name.casefold() in self._taken:
            n += 1
            suffix = f" ({n})"
            name = base[: NAME_MAX - len(suffix)].rstrip() + suffix
        self._taken.add(name.casefold())
        return name


def safe_name(title: str) -> str:
    name = " ".join(_UNSAFE.sub(" ", title).split())
    name = name.lstrip(". ")[:NAME_MAX].rstrip(". ")
    return name


def markdown(item: FiledItem) -> str:
    """YAML front matter (every value JSON-quoted, which YAML reads as it is), then the title as
    a heading and the text."""
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
    return "\n".join([*lines, "", *body]).rstrip() + "\n"
