"""Upload URLs on the managed-identity path: a user delegation key fetched with a bearer token
signs a create-only SAS, checked against Azurite over HTTPS with basic OAuth."""

from __future__ import annotations

import asyncio
import base64
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import datetime, timedelta
from urllib.parse import parse_qs, parse_qsl, urlencode, urlsplit

import httpx
import pytest
from azure.core.pipeline import PipelineResponse
from azure.storage.blob.aio import BlobServiceClient

from shared.adapters.voice_blobs import BlobVoiceNotes
from shared.domain.documents import utcnow
from shared.settings import VOICE_CONTAINER
from tests.azurite_oauth import STORAGE_SCOPE, AzuriteOAuth, AzuriteTokenCredential, azurite_oauth

PUT_HEADERS = {"x-ms-blob-type": "BlockBlob"}


class Traffic:
    """What the SDK really sent (after the credential policy), seen by its response hook."""

    def __init__(self) -> None:
        self.seen: list[PipelineResponse] = []

    def __call__(self, response: PipelineResponse) -> None:
        self.seen.append(response)

    def delegation_key_requests(self) -> list[PipelineResponse]:
        return [
            r
            for r in self.seen
            if parse_qs(urlsplit(r.http_request.url).query).get("comp") == ["userdelegationkey"]
        ]


@pytest.fixture(scope="module")
def azurite() -> Iterator[AzuriteOAuth]:
    with azurite_oauth() as server:
        yield server


@pytest.fixture
def credential(azurite: AzuriteOAuth) -> AzuriteTokenCredential:
    return azurite.credential()


@pytest.fixture
def traffic() -> Traffic:
    return Traffic()


@pytest.fixture
async def service(
    azurite: AzuriteOAuth, credential: AzuriteTokenCredential, traffic: Traffic
) -> AsyncIterator[BlobServiceClient]:
    # What shared.adapters.clients builds without a connection string: an endpoint and a token
    # credential, so no account key. TLS is verified against the test CA, not switched off.
    async with BlobServiceClient(
        azurite.url,
        credential=credential,
        connection_verify=str(azurite.cert),
        raw_response_hook=traffic,
    ) as client:
        container = client.get_container_client(VOICE_CONTAINER)
        if not await container.exists():
            await container.create_container()
        traffic.seen.clear()
        yield client


@pytest.fixture
async def http(azurite: AzuriteOAuth) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(verify=azurite.ssl_context()) as client:
        yield client


def blob_name() -> str:
    return f"dev/{uuid.uuid4()}.m4a"


def in_five_minutes() -> datetime:
    return utcnow() + timedelta(minutes=5)


def sas(url: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(url).query))


async def test_the_identity_signs_a_create_only_user_delegation_sas(
    service: BlobServiceClient, credential: AzuriteTokenCredential, traffic: Traffic
) -> None:
    name = blob_name()
    expires_at = in_five_minutes()
    url = await BlobVoiceNotes(lambda: service).upload_url(name, expires_at)

    # One Get User Delegation Key, authorised with the identity's bearer token for storage.
    (fetch,) = traffic.delegation_key_requests()
    assert fetch.http_response.status_code == 200
    assert fetch.http_request.headers["Authorization"].startswith("Bearer ")
    assert STORAGE_SCOPE in {scope for scopes in credential.scopes for scope in scopes}

    parts = urlsplit(url)
    assert (parts.scheme, parts.path) == ("https", f"/devstoreaccount1/{VOICE_CONTAINER}/{name}")
    q = sas(url)
    # Signed with the delegation key of this identity: any sk* field makes the service check
    # the signature against that key, never against an account key.
    assert q["skoid"] == credential.object_id and q["sktid"] == credential.tenant_id
    assert q["sks"] == "b" and q["skv"] and q["skt"] and q["ske"]
    assert (q["sp"], q["sr"], q["spr"]) == ("c", "b", "https")
    assert "si" not in q  # no stored access policy: Azure refuses those with delegation keys
    # The key outlives the URL, so the URL works until its own expiry.
    assert parse(q["se"]) == expires_at.replace(microsecond=0)
    assert parse(q["ske"]) >= parse(q["se"])
    assert parse(q["skt"]) <= parse(q["st"]) <= utcnow()


async def test_the_upload_url_creates_exactly_one_blob_once(
    service: BlobServiceClient, http: httpx.AsyncClient
) -> None:
    name = blob_name()
    url = httpx.URL(await BlobVoiceNotes(lambda: service).upload_url(name, in_five_minutes()))
    other = url.copy_with(path=url.path.rsplit("/", 1)[0] + f"/{uuid.uuid4()}.m4a")
    assert (await http.put(other, content=b"x", headers=PUT_HEADERS)).status_code == 403
    sibling = url.copy_with(path=url.path.replace("/dev/", "/other/"))
    assert (await http.put(sibling, content=b"x", headers=PUT_HEADERS)).status_code == 403
    assert (await http.put(url, content=b"audio", headers=PUT_HEADERS)).status_code == 201
    assert (await http.put(url, content=b"overwrite", headers=PUT_HEADERS)).status_code == 403
    assert (await http.get(url)).status_code == 403  # it cannot read, not even its own blob
    assert (await http.delete(url)).status_code == 403
    blob = service.get_blob_client(VOICE_CONTAINER, name)
    assert await (await blob.download_blob()).readall() == b"audio"


async def test_later_upload_urls_reuse_the_delegation_key(
    service: BlobServiceClient, traffic: Traffic, http: httpx.AsyncClient
) -> None:
    notes = BlobVoiceNotes(lambda: service)
    names = [blob_name() for _ in range(4)]
    # Concurrent first requests wait for one fetch rather than each fetching a key.
    urls = list(await asyncio.gather(*(notes.upload_url(n, in_five_minutes()) for n in names[:3])))
    urls.append(await notes.upload_url(names[3], in_five_minutes()))

    assert len(traffic.delegation_key_requests()) == 1
    keys = {tuple(sas(u)[k] for k in ("skoid", "skt", "ske", "skv")) for u in urls}
    assert len(keys) == 1
    for url in urls:  # the cached key still signs URLs that the service accepts
        assert (await http.put(url, content=b"x", headers=PUT_HEADERS)).status_code == 201


@pytest.mark.parametrize(
    ("field", "forged"),
    [
        ("sig", base64.b64encode(bytes(32)).decode()),
        ("sp", "cw"),  # would allow overwriting
        ("se", "2099-01-01T00:00:00Z"),  # would never expire
        ("skoid", str(uuid.uuid4())),  # another identity's key
    ],
)
async def test_azurite_checks_the_delegation_signature(
    service: BlobServiceClient, http: httpx.AsyncClient, field: str, forged: str
) -> None:
    # Without this, the 403s above could come from something other than the signature check.
    url = await BlobVoiceNotes(lambda: service).upload_url(blob_name(), in_five_minutes())
    parts = urlsplit(url)
    tampered = parts._replace(query=urlencode({**sas(url), field: forged})).geturl()
    assert (await http.put(tampered, content=b"x", headers=PUT_HEADERS)).status_code == 403
    assert (await http.put(url, content=b"x", headers=PUT_HEADERS)).status_code == 201


def parse(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))
