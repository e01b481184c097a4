"""The tool catalogue: each read tool runs its use case for one user, its schema is what a model
is shown, and wrong arguments are a clear refusal."""

import pytest

from shared.domain.errors import Invalid, NotFound
from shared.services.tools import READ_TOOLS, SEARCH_TOOL, Tool
from tests.fakes import Fakes, text_item


def test_each_read_tool_has_a_unique_name_and_an_object_schema() -> None:
    names = [t.name for t in READ_TOOLS]
    assert len(set(names)) == len(names) == 4
    for tool in READ_TOOLS:
        schema = tool.input_schema()
        assert schema["type"] == "object"
        assert tool.description and not tool.writes


def test_the_schema_speaks_camel_case() -> None:
    tool: Tool = next(t for t in READ_TOOLS if t.name == "list_bucket")
    assert "dueBefore" in tool.input_schema()["properties"]


async def test_wrong_arguments_are_refused_with_a_code(fakes: Fakes) -> None:
    with pytest.raises(Invalid) as refused:
        await SEARCH_TOOL.call("u1", {"query": "", "colour": "red"}, fakes.adapters)
    assert refused.value.code == "INVALID_ARGUMENTS"
    assert "query" in refused.value.message and "colour" in refused.value.message


async def test_a_tool_reads_only_the_callers_captures(fakes: Fakes) -> None:
    theirs, _ = await fakes.repo.add(text_item("Kuba is tiling the kitchen", user_id="u2"))
    get_capture = next(t for t in READ_TOOLS if t.name == "get_capture")
    with pytest.raises(NotFound):
        await get_capture.call("u1", {"captureId": theirs.id}, fakes.adapters)
    assert (await get_capture.call("u2", {"captureId": theirs.id}, fakes.adapters)).id == theirs.id
    found = await SEARCH_TOOL.call("u1", {"query": "kitchen"}, fakes.adapters)
    assert found.items == []
