"""The voice notes' blob adapter: upload URLs that allow creating one blob, streamed uploads,
the move of a transcribed upload into the recordings' container (a server-side copy), reads
(whole, or a range streamed), retention tags, listing and deletes. Blob Storage and its errors
stay here."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from shared import tracing
from shared.adapters.storage_errors import bounded, unavailable_as
from shared.domain.audio import StoredAudio
from shared.domain.documents import utcnow
from shared.domain.errors import AudioGone, StorageUnavailable, VoiceNoteTooLarge
from shared.settings import RECORDINGS_CONTAINER, STORAGE_TIMEOUT_S, VOICE_CONTAINER

if TYPE_CHECKING:
    from azure.storage.blob import UserDelegationKey
    from azure.storage.blob.aio import BlobClient, BlobServiceClient

# SAS start times are backdated so a phone whose clock runs a little fast can still upload.
_CLOCK_SKEW = timedelta(minutes=5)
# One user delegation key signs many upload URLs; it must outlive each URL it signs, and
# Azure caps its life at 7 days.
_DELEGATION_KEY_LIFETIME = timedelta(hours=2)
_DELEGATION_KEY_MAX = timedelta(days=7)
# A copy within the account is usually done when storage answers; one still pending is
# looked at again this often (bounded, with the whole wait, by the storage timeout).
_COPY_POLL_S = 0.05


def _container(container: str | None) -> str:
    """The container an inbox item's `audio_container` names (None: the uploads)."""
    if container is None:
        return VOICE_CONTAINER
    if container in (VOICE_CONTAINER, RECORDINGS_CONTAINER):
        return container
    raise ValueError(f"not a voice notes' container: {container!r}")


class BlobVoiceNotes:
    """Signs with the account key when the connection has one (Azurite, connection strings),
    else with a user delegation key obtained through the managed identity."""

    def __init__(
        self, service: Callable[[], BlobServiceClient], *, timeout_s: float = STORAGE_TIMEOUT_S
    ) -> None:
        # A factory, so that the blob SDK loads only when a voice note needs it.
        self._service_factory = service
        self._timeout_s = timeout_s
        self._delegation: UserDelegationKey | None = None
        self._delegation_lock = asyncio.Lock()

    @property
    def _service(self) -> BlobServiceClient:
        return self._service_factory()

    async def upload_url(self, name: str, expires_at: datetime) -> str:
        from azure.storage.blob import BlobSasPermissions, generate_blob_sas

        signing = await self._signing_key(expires_at)
        # Create only: the holder can make this one blob once, never read it or overwrite it.
        sas = generate_blob_sas(
            account_name=self._service.account_name,  # type: ignore[arg-type]  # set: from the URL
            container_name=VOICE_CONTAINER,
            blob_name=name,
            permission=BlobSasPermissions(create=True),
            expiry=expires_at,
            start=utcnow() - _CLOCK_SKEW,
            protocol="https" if self._service.scheme == "https" else None,
            **signing,
        )
        return f"{self._service.get_blob_client(VOICE_CONTAINER, name).url}?{sas}"

    async def upload(
        self, name: str, chunks: AsyncIterator[bytes], content_type: str, limit: int
    ) -> int:
        from azure.core.exceptions import ResourceExistsError
        from azure.storage.blob import ContentSettings

        counter = _Counter(limit)
        blob = self._service.get_blob_client(VOICE_CONTAINER, name)
        # A retried request finds the first attempt's upload there: that one stands.
        async with unavailable_as("Blob storage"), asyncio.timeout(None) as storage_time:
            # Bounded like every storage call, but by the time storage takes, not the client:
            # the clock runs only while the SDK works (between two chunks, and at the commit).
            chunks = counter.counted(chunks, storage_time, self._timeout_s)
            with contextlib.suppress(ResourceExistsError):
                # Unknown length: the SDK stages 4 MiB blocks as they come, then commits them,
                # so the upload never sits in memory whole. Past the limit nothing is committed.
                await blob.upload_blob(
                    chunks,
                    overwrite=False,
                    content_settings=ContentSettings(content_type=content_type),
                    # The blob trigger continues this trace from the blob's metadata.
                    metadata=tracing.trace_carrier(),
                    max_concurrency=2,
                )
        return counter.size

    async def keep(self, name: str, retention: str) -> str:
        from azure.core.exceptions import ResourceNotFoundError

        upload = self._service.get_blob_client(VOICE_CONTAINER, name)
        kept = self._service.get_blob_client(RECORDINGS_CONTAINER, name)
        async with bounded("Blob storage", self._timeout_s):
            # A copy there (an earlier delivery's) stands, once it is complete.
            status = await _copy_status(kept)
            if status in ("absent", "failed", "aborted"):
                try:
                    # Within the account: the service copies, the bytes never come here.
                    status = str((await kept.start_copy_from_url(upload.url))["copy_status"])
                except ResourceNotFoundError as exc:
                    # The upload goes only once a copy is complete: another delivery's copy,
                    # made since we looked, stands; with none, the recording is gone.
                    status = await _copy_status(kept)
                    if status != "success":
                        raise AudioGone(name) from exc
            while status == "pending":  # the caller deletes the upload next: wait for it
                await asyncio.sleep(_COPY_POLL_S)
                status = await _copy_status(kept)
            if status != "success":
                raise StorageUnavailable(f"copying {name} ended {status}")
            await kept.set_blob_tags({"retention": retention})
        return RECORDINGS_CONTAINER

    async def delete(self, name: str, container: str | None = None) -> None:
        from azure.core.exceptions import ResourceNotFoundError

        blob = self._service.get_blob_client(_container(container), name)
        async with bounded("Blob storage", self._timeout_s):
            with contextlib.suppress(ResourceNotFoundError):
                await blob.delete_blob(delete_snapshots="include")

    async def exists(self, name: str, container: str | None = None) -> bool:
        async with bounded("Blob storage", self._timeout_s):
            return await self._service.get_blob_client(_container(container), name).exists()

    async def stat(self, name: str, container: str | None = None) -> StoredAudio | None:
        from azure.core.exceptions import ResourceNotFoundError

        blob = self._service.get_blob_client(_container(container), name)
        async with bounded("Blob storage", self._timeout_s):
            try:
                props = await blob.get_blob_properties()
            except ResourceNotFoundError:
                return None
        return StoredAudio(
            name=name,
            size=props.size,
            content_type=props.content_settings.content_type or "application/octet-stream",
            created_at=props.creation_time,
            container=container,
        )

    async def read(
        self, name: str, offset: int, length: int, container: str | None = None
    ) -> AsyncIterator[bytes]:
        from azure.core.exceptions import ResourceNotFoundError

        blob = self._service.get_blob_client(_container(container), name)
        async with unavailable_as("Blob storage"):
            try:
                async with asyncio.timeout(self._timeout_s):
                    download = await blob.download_blob(offset=offset, length=length)
                # Storage's pieces (4 MiB at most) as they come: a long recording is never
                # held whole; each piece is bounded like any storage call.
                pieces = aiter(download.chunks())
                while True:
                    async with asyncio.timeout(self._timeout_s):
                        piece = await anext(pieces, None)
                    if piece is None:
                        return
                    yield piece
            except ResourceNotFoundError as exc:
                raise AudioGone(name) from exc

    async def read_all(self, name: str, container: str | None = None) -> bytes | None:
        from azure.core.exceptions import ResourceNotFoundError

        blob = self._service.get_blob_client(_container(container), name)
        async with bounded("Blob storage", self._timeout_s):
            try:
                return await (await blob.download_blob()).readall()
            except ResourceNotFoundError:
                return None

    async def tag_retention(self, name: str, retention: str, container: str | None = None) -> None:
        from azure.core.exceptions import ResourceNotFoundError

        blob = self._service.get_blob_client(_container(container), name)
        async with bounded("Blob storage", self._timeout_s):
            with contextlib.suppress(ResourceNotFoundError):
                await blob.set_blob_tags({"retention": retention})

    async def every(self) -> AsyncIterator[StoredAudio]:
        # Uploads too: recordings kept before they moved apart are still there.
        for name, where in ((RECORDINGS_CONTAINER, RECORDINGS_CONTAINER), (VOICE_CONTAINER, None)):
            container = self._service.get_container_client(name)
            async with unavailable_as("Blob storage"):
                async for props in container.list_blobs(include=["tags"]):
                    yield StoredAudio(
                        name=props.name,
                        size=props.size,
                        content_type=props.content_settings.content_type
                        or "application/octet-stream",
                        created_at=props.creation_time,
                        retention=(props.tags or {}).get("retention"),
                        container=where,
                    )

    async def _signing_key(self, expires_at: datetime) -> dict[str, Any]:
        credential = self._service.credential
        account_key = getattr(credential, "account_key", None)
        if account_key:
            return {"account_key": account_key}
        async with self._delegation_lock:
            key = self._delegation
            if key is None or _parse_time(key.signed_expiry) < expires_at + _CLOCK_SKEW:
                now = utcnow()
                lifetime = max(_DELEGATION_KEY_LIFETIME, expires_at - now + 2 * _CLOCK_SKEW)
                async with bounded("Blob storage", self._timeout_s):
                    key = await self._service.get_user_delegation_key(
                        now - _CLOCK_SKEW, now + min(lifetime, _DELEGATION_KEY_MAX)
                    )
                self._delegation = key
        return {"user_delegation_key": key}


class _Counter:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.size = 0

    async def counted(
        self, chunks: AsyncIterator[bytes], storage_time: asyncio.Timeout, bound_s: float
    ) -> AsyncIterator[bytes]:
        """The chunks, counted against the limit; `storage_time` is stopped while the client
        is waiting on and restarted (from `bound_s`) once storage has the next chunk to take."""
        loop = asyncio.get_running_loop()
        iterator = aiter(chunks)
        while True:
            storage_time.reschedule(None)
            try:
                chunk = await anext(iterator)
            except StopAsyncIteration:
                break
            finally:
                storage_time.reschedule(loop.time() + bound_s)
            self.size += len(chunk)
            if self.size > self.limit:
                raise VoiceNoteTooLarge(f"more than {self.limit} bytes")
            yield chunk


def _parse_time(value: str | None) -> datetime:
    if not value:
        return utcnow()
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


async def _copy_status(blob: BlobClient) -> str:
    """A copy's status at `blob` ("success", "pending", "failed", "aborted"), or "absent"."""
    from azure.core.exceptions import ResourceNotFoundError

    try:
        return str((await blob.get_blob_properties()).copy.status)
    except ResourceNotFoundError:
        return "absent"
