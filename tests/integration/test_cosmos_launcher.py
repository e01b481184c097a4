"""Cosmos round trips through our launcher of the local Cosmos server, with the async SDK."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from azure.core import MatchConditions
from azure.cosmos import PartitionKey
from azure.cosmos.aio import ContainerProxy, CosmosClient
from azure.cosmos.exceptions import CosmosAccessConditionFailedError, CosmosResourceNotFoundError


@pytest.fixture
async def container(app_env: dict[str, str]) -> AsyncIterator[ContainerProxy]:
    async with CosmosClient(app_env["COSMOS_ENDPOINT"], app_env["COSMOS_KEY"]) as client:
        db = await client.create_database_if_not_exists("launcher-tests")
        name = f"c{uuid.uuid4().hex[:8]}"
        yield await db.create_container(name, PartitionKey(path="/userId"))
        await db.delete_container(name)


async def test_create_then_read(container: ContainerProxy) -> None:
    created = await container.create_item({"id": "a", "userId": "u1", "text": "hi"})
    read = await container.read_item("a", partition_key="u1")
    assert read["text"] == "hi"
    assert read["_etag"] == created["_etag"]


async def test_missing_item_is_not_found_like_real_cosmos(container: ContainerProxy) -> None:
    with pytest.raises(CosmosResourceNotFoundError) as err:
        await container.read_item("missing", partition_key="u1")
    assert err.value.status_code == 404


async def test_query_by_user_id_stays_in_the_partition(container: ContainerProxy) -> None:
    for i, user in enumerate(["u1", "u1", "u2"]):
        await container.create_item({"id": f"i{i}", "userId": user})
    rows = [
        r
        async for r in container.query_items(
            "SELECT * FROM c WHERE c.userId = @u",
            parameters=[{"name": "@u", "value": "u1"}],
            partition_key="u1",
        )
    ]
    assert sorted(r["id"] for r in rows) == ["i0", "i1"]


async def test_stale_etag_is_rejected_with_412(container: ContainerProxy) -> None:
    first = await container.create_item({"id": "e", "userId": "u1", "v": 1})
    await container.replace_item(
        "e",
        {"id": "e", "userId": "u1", "v": 2},
        etag=first["_etag"],
        match_condition=MatchConditions.IfNotModified,
    )
    with pytest.raises(CosmosAccessConditionFailedError) as err:
        await container.replace_item(
            "e",
            {"id": "e", "userId": "u1", "v": 3},
            etag=first["_etag"],
            match_condition=MatchConditions.IfNotModified,
        )
    assert err.value.status_code == 412
    assert (await container.read_item("e", partition_key="u1"))["v"] == 2
