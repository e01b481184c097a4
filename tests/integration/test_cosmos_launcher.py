"""Cosmos round trips through our launcher of the local Cosmos server, with the async SDK."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from azure.core import MatchConditions
from azure.cosmos import PartitionKey
from azure.cosmos.aio import ContainerProxy, CosmosClient
from azure.cosmos.exceptions import (
    CosmosAccessConditionFailedError,
    CosmosResourceExistsError,
    CosmosResourceNotFoundError,
)


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


async def test_a_write_that_asks_for_no_response_gets_its_etag_and_no_document(
    container: ContainerProxy,
) -> None:
    # `no_response` sends `Prefer: return=minimal`: Cosmos DB then answers a write with its
    # headers (the new ETag) and no body, and so does the launcher.
    doc = {"id": "m", "userId": "u1", "v": [0.5] * 64}
    writes = (
        lambda: container.create_item(doc, no_response=True),
        lambda: container.upsert_item({**doc, "v": [0.25]}, no_response=True),
        lambda: container.replace_item("m", {**doc, "v": [0.125]}, no_response=True),
    )
    for write, value in zip(writes, ([0.5] * 64, [0.25], [0.125]), strict=True):
        answer = await write()
        assert answer == {}
        read = await container.read_item("m", partition_key="u1")
        assert read["v"] == value
        assert read["_etag"] == answer.get_response_headers()["etag"]
    # A write that fails still says why.
    with pytest.raises(CosmosResourceExistsError):
        await container.create_item(doc, no_response=True)


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


async def _rows(container: ContainerProxy, query: str, **kwargs) -> list[dict]:
    return [r async for r in container.query_items(query, **kwargs)]


async def test_a_query_naming_a_partition_reads_only_that_partition(
    container: ContainerProxy,
) -> None:
    # As Cosmos DB: the partition key of the request scopes the query, WHERE or not.
    await container.create_item({"id": "a", "userId": "u1", "n": 1})
    await container.create_item({"id": "a", "userId": "u2", "n": 2})
    await container.create_item({"id": "b", "userId": "u2", "n": 3})
    assert [r["n"] for r in await _rows(container, "SELECT * FROM c", partition_key="u1")] == [1]
    every = await _rows(container, "SELECT * FROM c")  # no partition: all of them
    assert sorted(r["n"] for r in every) == [1, 2, 3]


async def test_the_partition_follows_replaces_upserts_and_deletes(
    container: ContainerProxy,
) -> None:
    await container.create_item({"id": "a", "userId": "u1", "v": 1})
    await container.replace_item("a", {"id": "a", "userId": "u1", "v": 2})
    await container.upsert_item({"id": "b", "userId": "u1", "v": 3})
    await container.upsert_item({"id": "b", "userId": "u1", "v": 4})
    await container.create_item({"id": "c", "userId": "u1", "v": 5})
    await container.delete_item("c", partition_key="u1")
    rows = await _rows(container, "SELECT * FROM c ORDER BY c.v", partition_key="u1")
    assert [(r["id"], r["v"]) for r in rows] == [("a", 2), ("b", 4)]
    await container.create_item({"id": "c", "userId": "u1", "v": 6})  # the id again
    rows = await _rows(container, "SELECT VALUE c.v FROM c ORDER BY c.v", partition_key="u1")
    assert rows == [2, 4, 6]


async def test_large_results_page_and_filter_as_before(container: ContainerProxy) -> None:
    # Thousands of documents, the ORDER BY and TOP the app uses, a subquery and pages: the
    # rewritten (linear) accumulators give the stock results.
    for i in range(1500):
        doc = {"id": f"d{i:04}", "userId": "u1", "k": i % 7, "tags": [{"t": f"x{i % 3}"}]}
        await container.create_item(doc)
    await container.create_item({"id": "other", "userId": "u2", "k": 0, "tags": []})
    query = (
        "SELECT TOP 50 c.id FROM c WHERE c.userId = @u AND c.k = 0 AND "
        "EXISTS(SELECT VALUE t FROM t IN c.tags WHERE t.t = 'x1') ORDER BY c.id DESC"
    )
    rows = await _rows(
        container, query, parameters=[{"name": "@u", "value": "u1"}], partition_key="u1"
    )
    expected = [f"d{i:04}" for i in range(1499, -1, -1) if i % 7 == 0 and i % 3 == 1][:50]
    assert [r["id"] for r in rows] == expected
    pages = container.query_items(
        "SELECT * FROM c ORDER BY c.id", partition_key="u1", max_item_count=400
    ).by_page()
    sizes = []
    async for page in pages:
        sizes.append(len([d async for d in page]))
    assert sizes == [400, 400, 400, 300]
    count = await _rows(container, "SELECT VALUE COUNT(1) FROM c", partition_key="u1")
    assert count == [1500]


async def test_order_by_sorts_mixed_types_as_cosmos_does(container: ContainerProxy) -> None:
    # null, then booleans, numbers, strings; a document without the path is left out.
    for i, v in enumerate([3, "b", None, True, 1, "a", False]):
        await container.create_item({"id": f"m{i}", "userId": "u1", "v": v})
    await container.create_item({"id": "none", "userId": "u1"})
    up = await _rows(container, "SELECT VALUE c.v FROM c ORDER BY c.v", partition_key="u1")
    assert up == [None, False, True, 1, 3, "a", "b"]
    down = await _rows(container, "SELECT VALUE c.id FROM c ORDER BY c.v DESC", partition_key="u1")
    assert down == ["m1", "m5", "m0", "m4", "m3", "m6", "m2"]
